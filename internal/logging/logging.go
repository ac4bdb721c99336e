// Package logging is the one logger setup of observer's processes: short lines on a terminal, JSON lines
// elsewhere (a component's log file, a service manager), at the level [log] level names.
// Durations are written as text ("1.5s"), not as nanosecond counts.
package logging

import (
	"io"
	"log/slog"
	"os"
	"time"

	"golang.org/x/term"
)

// New returns a logger writing to w at level ("debug", "info", "warn" or "error"; anything else
// is info).
func New(w io.Writer, level string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: replace}
	if f, ok := w.(*os.File); ok && IsTerminal(f) {
		return slog.New(newLineHandler(w, lv))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// replace writes a duration as its text, rounded to a millisecond above a second.
func replace(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		d := a.Value.Duration()
		if d >= time.Second {
			d = d.Round(time.Millisecond)
		}
		a.Value = slog.StringValue(d.String())
	}
	return a
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	// A character device is not enough: /dev/null is one (a status line run with stdin from
	// /dev/null, a unit whose output goes there). term asks the terminal driver.
	return term.IsTerminal(int(f.Fd()))
}
