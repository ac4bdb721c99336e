package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/lifecycle"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/scrub"
)

// hookPayload holds the fields observer keeps from a Claude Code, Codex or Cursor hook call.
// Everything else in the payload (tool inputs and outputs, prompts) is read past and never stored:
// the transcripts are the source for those, scrubbed.
type hookPayload struct {
	SessionID        string `json:"session_id"`
	TranscriptPath   string `json:"transcript_path"`
	Cwd              string `json:"cwd"`
	HookEventName    string `json:"hook_event_name"`
	ToolName         string `json:"tool_name"`
	ToolUseID        string `json:"tool_use_id"`
	Source           string `json:"source"`            // SessionStart: startup, resume, clear, compact
	Trigger          string `json:"trigger"`           // PreCompact: manual, auto
	NotificationType string `json:"notification_type"` // Notification
	Reason           string `json:"reason"`            // SessionEnd

	// Cursor: the session is conversation_id; the cwd, for most events, the first workspace root.
	ConversationID string   `json:"conversation_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
}

func hookCommand() *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "record a Claude Code, Codex or Cursor hook call (reads the hook's JSON on stdin)",
		Description: `Point a client's hooks at this command. It reads the hook payload on stdin, publishes a hook
event (session id, cwd, transcript path, event name, tool name) and returns at once. It never prints
anything on stdout and never exits 2, so it can never approve, deny or change a tool call. When the
bus is down the event is spooled to disk and published when observer runs again.

SessionStart, Stop and SessionEnd also publish the session's new state beside the hook event:
started (SessionStart, except after a compaction), finalized (Stop, SessionEnd). The session shows in
the store at once, with its cwd and transcript path; its next transcript record makes it active.
Claude Code calls Stop at the end of every turn, so a session is finalized between turns.

It waits at most [hook] stdin_timeout (5s) for stdin to end: a client that keeps it open after
writing a whole JSON object is served then. With config.toml broken it runs on the configuration
that last loaded (or the defaults) and says so on stderr: a hook is never lost to a typo.

Exit codes: 0 published or spooled; 65 the payload is not JSON, has no hook_event_name, is larger
than [hook] max_payload_bytes, or stdin stayed open without a whole payload; 1 the event could be
neither published nor spooled.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "client", Usage: "client that calls the hook: claude-code, codex or cursor (default: guessed from the transcript path)"},
			&cli.Int64Flag{Name: "max-bytes", Usage: "largest payload accepted (default: [hook] max_payload_bytes)"},
		},
		Action: runHook,
	}
}

func runHook(c *cli.Context) error {
	e, err := loadOrLastGood(c)
	if err != nil {
		return err
	}
	limit := e.cfg.Hook.MaxPayloadBytes
	if c.IsSet("max-bytes") {
		limit = c.Int64("max-bytes")
	}
	data, err := readPayload(c.App.Reader, limit, e.cfg.Hook.StdinTimeout.D())
	if err != nil {
		return withCode(ExitBadInput, fmt.Errorf("hook: %w; event dropped", err))
	}
	evs, err := hookEvents(data, c.String("client"))
	if err != nil {
		return withCode(ExitBadInput, fmt.Errorf("hook: %w; event dropped", err))
	}
	res, err := publishEvents(c.Context, e, e.cfg.Hook.Timeout.D(), evs...)
	if err != nil {
		return fmt.Errorf("hook: %w", err)
	}
	if res == bus.Spooled {
		e.logger.Debug("bus unreachable; hook event spooled", "dir", e.cfg.SpoolDir())
	}
	return nil
}

// hookEvents builds the events one hook payload publishes: the hook event, and for a lifecycle
// hook the session's new state. client is the --client flag ("" guesses it).
func hookEvents(data []byte, client string) ([]event.Event, error) {
	var p hookPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("payload is not a JSON object (%v)", err)
	}
	if p.HookEventName == "" {
		return nil, errors.New("payload has no hook_event_name")
	}
	if p.SessionID == "" {
		p.SessionID = p.ConversationID
	}
	if p.Cwd == "" && len(p.WorkspaceRoots) > 0 {
		p.Cwd = p.WorkspaceRoots[0]
	}
	if client == "" {
		client = guessClient(p.TranscriptPath)
	}
	ev := event.New(event.KindHook, "observerctl")
	ev.ID = event.RandomID()
	ev.Client = client
	ev.SessionID = p.SessionID
	ev.Project = project.Root(p.Cwd)
	ev.Host, _ = os.Hostname()
	ev.User = os.Getenv("USER")
	// The names kept are scrubbed like any text from a client (a no-op on the names clients send);
	// the cwd and transcript path are kept as they are: the sessions join on them.
	ev.Hook = &event.Hook{
		Event:          scrub.String(p.HookEventName),
		Cwd:            p.Cwd,
		TranscriptPath: p.TranscriptPath,
		ToolName:       scrub.String(p.ToolName),
		ToolUseID:      scrub.String(p.ToolUseID),
		Matcher:        scrub.String(firstNonEmpty(p.Source, p.Trigger, p.NotificationType, p.Reason)),
		PayloadBytes:   int64(len(data)),
	}
	evs := []event.Event{ev}
	if s, ok := hookSession(&ev); ok {
		evs = append(evs, s)
	}
	return evs, nil
}

// readPayload reads a hook payload from r until EOF, at most limit bytes, waiting at most wait. A
// client that writes its payload and keeps stdin open does not hold the hook: once wait has
// passed, what was read is used if it is a whole JSON object, and refused otherwise. A payload
// over limit is read to its end (within wait) so that the client's write does not fail, then
// refused. Stdin redirected from a regular file has an end and a size: it is refused by its size
// before anything is read, or read whole without the wait (a long read of a big file is not a
// stdin left open).
func readPayload(r io.Reader, limit int64, wait time.Duration) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return readPayloadFile(f, fi.Size(), limit)
		}
	}
	var (
		mu    sync.Mutex
		buf   []byte
		total int64 // bytes read, over the limit included
		over  bool
		rerr  error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		chunk := make([]byte, 32<<10)
		for {
			n, err := r.Read(chunk)
			mu.Lock()
			total += int64(n)
			if int64(len(buf)+n) > limit {
				over = true
			} else {
				buf = append(buf, chunk[:n]...)
			}
			mu.Unlock()
			if err == io.EOF {
				return
			}
			if err != nil {
				mu.Lock()
				rerr = err
				mu.Unlock()
				return
			}
		}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	timedOut := false
	select {
	case <-done:
	case <-timer.C:
		timedOut = true
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case over && timedOut:
		return nil, fmt.Errorf("payload larger than %d bytes ([hook] max_payload_bytes): %d bytes read, stdin still open after %s ([hook] stdin_timeout)", limit, total, wait)
	case over:
		return nil, fmt.Errorf("payload of %d bytes is larger than %d bytes ([hook] max_payload_bytes)", total, limit)
	case rerr != nil:
		return nil, fmt.Errorf("read stdin: %w", rerr)
	case timedOut:
		data := bytes.TrimSpace(buf)
		if len(data) > 0 && data[0] == '{' && json.Valid(data) {
			return append([]byte(nil), data...), nil
		}
		return nil, fmt.Errorf("stdin still open after %s ([hook] stdin_timeout) with %d bytes that are not a whole JSON object", wait, len(buf))
	}
	return buf, nil
}

// readPayloadFile reads a payload from stdin redirected from a regular file of size bytes, from
// where stdin stands in it.
func readPayloadFile(f *os.File, size, limit int64) ([]byte, error) {
	if pos, err := f.Seek(0, io.SeekCurrent); err == nil && pos <= size {
		size -= pos
	}
	if size > limit {
		return nil, fmt.Errorf("payload of %d bytes (stdin is a file) is larger than %d bytes ([hook] max_payload_bytes)", size, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if int64(len(data)) > limit { // the file grew while read
		return nil, fmt.Errorf("payload larger than %d bytes ([hook] max_payload_bytes): stdin is a file that grew while read", limit)
	}
	return data, nil
}

// hookSession returns the session event a lifecycle hook publishes beside its hook event: the
// writer takes the session's state from session events only. Its id derives from the hook's, and
// it carries the hook's time, so the writer orders it against the watcher's session events.
func hookSession(h *event.Event) (event.Event, bool) {
	state := lifecycle.HookState(h.Hook)
	if state == "" || h.SessionID == "" {
		return event.Event{}, false
	}
	s := *h
	s.ID = event.ID("observerctl", string(event.KindSession), h.ID)
	s.Kind = event.KindSession
	s.Hook = nil
	s.Session = &event.Session{State: state, Cwd: h.Hook.Cwd, TranscriptPath: h.Hook.TranscriptPath}
	if state == event.SessionStarted {
		s.Session.StartedAt = h.Time
	}
	return s, true
}

func guessClient(transcript string) string {
	switch {
	case strings.Contains(transcript, "/.codex/"):
		return client.Codex
	default:
		return client.ClaudeCode
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// publishOne publishes one event with a short-lived client, spooling it when the bus is down or
// has never been started here (no token yet).
func publishOne(ctx context.Context, e *env, ev *event.Event, timeout time.Duration) (bus.Result, error) {
	return publishEvents(ctx, e, timeout, *ev)
}

// publishEvents publishes events in order with a short-lived client, spooling them when the bus is
// down or has never been started here (no token yet). The result is Spooled when any was spooled.
func publishEvents(ctx context.Context, e *env, timeout time.Duration, evs ...event.Event) (bus.Result, error) {
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			return 0, withCode(ExitBadInput, err)
		}
	}
	token, err := bus.ReadToken(e.cfg.TokenPath())
	if err != nil {
		sp, serr := bus.OpenSpool(e.cfg.SpoolDir(), e.logger)
		if serr != nil {
			return 0, serr
		}
		defer sp.Close()
		for i := range evs {
			data, merr := event.Marshal(&evs[i])
			if merr != nil {
				return 0, withCode(ExitBadInput, merr)
			}
			if err := sp.Append(data); err != nil {
				return 0, err
			}
		}
		return bus.Spooled, nil
	}
	cl, err := bus.Connect(ctx, bus.Options{
		URL: e.cfg.BusURL(), Token: token, Name: "observerctl", SpoolDir: e.cfg.SpoolDir(),
		Timeout: timeout, Logger: e.logger, OneShot: true,
	})
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	res := bus.Published
	for i := range evs {
		r, err := cl.Publish(ctx, &evs[i])
		if err != nil {
			return 0, err
		}
		if r == bus.Spooled {
			res = bus.Spooled
		}
	}
	return res, nil
}
