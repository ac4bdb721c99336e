package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// lineHandler writes a record as one line a person reads at a terminal:
//
//	19:31:40 component started  component=writer pid=14015
//	19:31:41 WARN config.toml not applied  err="..."
//
// the local time of day, the level unless it is INFO, the message, then key=value pairs (values
// with spaces or quotes quoted). Service managers and log files get JSON lines instead (New).
type lineHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	level slog.Leveler
	attrs string // preformatted " key=value" pairs of WithAttrs
	group string // "a.b." prefix of WithGroup
}

func newLineHandler(w io.Writer, level slog.Leveler) *lineHandler {
	return &lineHandler{w: w, mu: &sync.Mutex{}, level: level}
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if !r.Time.IsZero() {
		b.WriteString(r.Time.Local().Format("15:04:05"))
		b.WriteByte(' ')
	}
	if r.Level != slog.LevelInfo {
		b.WriteString(r.Level.String())
		b.WriteByte(' ')
	}
	b.WriteString(r.Message)
	if h.attrs != "" || r.NumAttrs() > 0 {
		b.WriteString(" ")
	}
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.group, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	for _, a := range as {
		writeAttr(&b, h.group, a)
	}
	c := *h
	c.attrs += b.String()
	return &c
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group += name + "."
	return &c
}

// writeAttr writes " key=value", groups flattened to "group.key".
func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a = replace(nil, a)
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			writeAttr(b, prefix+a.Key+".", g)
		}
		return
	}
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	fmt.Fprintf(b, " %s%s=%s", prefix, a.Key, v)
}
