package gptme

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/logs) are two conversations written here to gptme's format (see the
// package doc): a markdown-format one on Claude (a thinking block, shell, patch, a test run
// failing by its return code, save; usage with cache writes and reads; a named conversation) and
// a tool-format one on GPT-5 (reasoning tokens, a save whose result is an error, and usage in the
// flat metadata of older releases).
const (
	mdConv   = "2026-02-14-sneaky-purple-otter"
	toolConv = "2026-02-15-quiet-green-heron"
)

func init() {
	// The fixtures' naive timestamps are read in a zone five hours west of UTC.
	localZone = time.FixedZone("UTC-5", -5*3600)
}

func src(tb testing.TB, conv string) transcript.Source {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "logs", conv, LogName))
	if err != nil {
		tb.Fatal(err)
	}
	return transcript.Source{Client: Client, Path: p, SessionID: conv}
}

func parse(tb testing.TB, s transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, func(s transcript.Source, st []byte) (*Parser, error) {
		return newParser(s, st, nil)
	}, s, transcripttest.Envelope(Client, Component))
}

func byKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// actions folds an action's call and result (one id) as the store does, in call order.
func actions(evs []event.Event) []*event.Action {
	byID := map[string]*event.Action{}
	var out []*event.Action
	for _, e := range byKind(evs, event.KindAction) {
		a, ok := byID[e.ID]
		if !ok {
			c := *e.Action
			byID[e.ID] = &c
			out = append(out, &c)
			continue
		}
		if a.Type == event.ActionUnknown {
			a.Type = e.Action.Type
		}
		if e.Action.Success != nil {
			a.Success, a.Error, a.Output = e.Action.Success, e.Action.Error, e.Action.Output
		}
	}
	return out
}

func describe(acts []*event.Action) string {
	var lines []string
	for _, a := range acts {
		s := string(a.Type) + " " + a.Target
		switch {
		case a.Success == nil:
			if a.Type != event.ActionUserPrompt {
				s += " (no result)"
			}
		case !*a.Success:
			s += " FAILED: " + strings.SplitN(a.Error, "\n", 2)[0]
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

// at is a fixture timestamp read five hours west of UTC.
func at(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05.999999", s, time.FixedZone("UTC-5", -5*3600))
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestDiscover(t *testing.T) {
	root := filepath.Join("testdata", "logs")
	srcs, err := New([]string{root, filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].SessionID != mdConv || srcs[1].SessionID != toolConv || srcs[0].Document || srcs[0].Database ||
		filepath.Base(srcs[0].Path) != LogName || !filepath.IsAbs(srcs[0].Path) {
		t.Fatalf("Discover: %+v, want the two conversation.jsonl as line files", srcs)
	}
	if srcs, err := New([]string{filepath.Join("testdata", "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestParse_MarkdownFormat(t *testing.T) {
	evs, p := parse(t, src(t, mdConv))
	if st := p.Stats(); st.Lines != 10 || st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, e := range evs {
		if e.SessionID != mdConv || e.Project != "/nonexistent-observer/shop" {
			t.Fatalf("event %+v: want the conversation and its workspace as project", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 2 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/nonexistent-observer/shop" ||
		sess[0].Session.Model != "anthropic/claude-sonnet-4-5-20250929" || !sess[0].Time.Equal(at("2026-02-14T16:20:00.004512")) ||
		sess[1].Session.Title != "fix-csv-export" {
		t.Fatalf("session events %+v: want started (config.toml's workspace and model, the first line's time read in the local zone), then the name", sess)
	}
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 4 {
		t.Fatalf("%d usage events, want one per assistant message", len(usage))
	}
	if u := usage[0]; u.TokenUsage.Tokens != (event.Tokens{Input: 3, Output: 142, CacheCreation: 9120}) ||
		u.TokenUsage.Model != "claude-sonnet-4-5-20250929" || u.TokenUsage.CostUSD <= 0 || u.TokenUsage.Reliability != event.ReliabilityApproximate ||
		!u.Time.Equal(at("2026-02-14T16:20:04.650021")) {
		t.Errorf("first usage %+v at %v: want gptme's buckets as they are (input net of cache)", u.TokenUsage, u.Time)
	}
	if u := usage[1].TokenUsage; u.Tokens != (event.Tokens{Input: 5, Output: 120, CacheRead: 9120, CacheCreation: 310}) {
		t.Errorf("second usage %+v", u.Tokens)
	}
	want := strings.Join([]string{
		"user_prompt The CSV export drops the last row. Fix it.",
		"run_command cat shop/export.py",
		"edit_file shop/export.py",
		"run_command pytest -q tests/test_export.py FAILED: Ran command: `pytest -q tests/test_export.py`",
		"write_file tests/fixtures/rows.csv",
	}, "\n")
	if got := describe(actions(evs)); got != want {
		t.Errorf("actions:\n%s\nwant:\n%s", got, want)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
		if e.Message.Role == event.RoleAssistant && strings.Contains(e.Message.Text, "<think>") {
			t.Errorf("a thinking block left in the reply: %q", e.Message.Text)
		}
	}
	if got := strings.Join(roles, ","); got != "user,thinking,assistant,tool_call,assistant,tool_call,assistant,tool_call,assistant,tool_call" {
		t.Errorf("message roles %s", got)
	}
}

func TestParse_ToolFormat(t *testing.T) {
	evs, _ := parse(t, src(t, toolConv))
	want := strings.Join([]string{
		"user_prompt List the TODOs and write them to TODO.md",
		"run_command grep -rn TODO src",
		"write_file TODO.md FAILED: Error: could not write TODO.md: Permission denied",
	}, "\n")
	acts := actions(evs)
	if got := describe(acts); got != want {
		t.Errorf("actions:\n%s\nwant:\n%s", got, want)
	}
	if acts[1].ToolUseID != "call_9f2kQ7" || !strings.Contains(acts[1].Output, "handle empty input") {
		t.Errorf("shell %+v: want the call id and the command's output", acts[1])
	}
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 3 || usage[0].TokenUsage.Tokens != (event.Tokens{Input: 1200, Output: 310, CacheRead: 2048, Reasoning: 192}) ||
		usage[0].TokenUsage.Model != "openai/gpt-5" || usage[0].TokenUsage.CostUSD <= 0 {
		t.Fatalf("usage %+v: want reasoning inside output, cache reads apart", usage)
	}
	if u := usage[2].TokenUsage; u.Tokens != (event.Tokens{Input: 1500, Output: 40}) {
		t.Errorf("flat metadata of older releases: %+v", u.Tokens)
	}
	if n := len(byKind(evs, event.KindSession)); n != 1 {
		t.Errorf("%d session events, want the start only (no name)", n)
	}
}

func TestParse_ResumedAndReread(t *testing.T) {
	for _, conv := range []string{mdConv, toolConv} {
		s := src(t, conv)
		one, _ := parse(t, s)
		resumed, err := transcripttest.Resumed(t, New(nil), s)
		if err != nil {
			t.Fatal(err)
		}
		transcripttest.SameEvents(t, one, resumed)
		again, _ := parse(t, s)
		transcripttest.SameEvents(t, one, again)
	}
}

// gptme rewrites the file whole at each message: an undone last message and a new one make the
// caller read it again from its start, and the messages that stayed keep their ids.
func TestParse_RewrittenLog(t *testing.T) {
	s := src(t, mdConv)
	data, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	first, _ := transcripttest.ParseLines(t, func(s transcript.Source, st []byte) (*Parser, error) { return newParser(s, st, nil) }, s,
		transcripttest.Envelope(Client, Component), lines...)
	edited := append(append([]string(nil), lines[:8]...),
		`{"role": "user", "content": "skip the fixture, just report", "timestamp": "2026-02-14T16:21:00.000001"}`)
	second, _ := transcripttest.ParseLines(t, func(s transcript.Source, st []byte) (*Parser, error) { return newParser(s, st, nil) }, s,
		transcripttest.Envelope(Client, Component), edited...)
	ids := map[string]bool{}
	for _, e := range first {
		ids[e.ID] = true
	}
	var fresh []string
	for _, e := range second {
		if !ids[e.ID] {
			fresh = append(fresh, string(e.Kind))
		}
	}
	if got := strings.Join(fresh, ","); got != "action,message" {
		t.Errorf("new ids after the rewrite: %s, want the new prompt's action and message only", got)
	}
}

func TestParse_Malformed(t *testing.T) {
	s := src(t, toolConv)
	p, _ := newParser(s, nil, nil)
	for _, bad := range []string{`{"role": "user", "content": `, "\xff\xfe", `["role"]`} {
		if evs, err := p.Record(0, []byte(bad)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, %v; want ErrMalformed", bad, len(evs), err)
		}
	}
	data, _ := os.ReadFile(s.Path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	withBad := append(append(append([]string(nil), lines[:3]...), `{"role": "assistant", "content": "cut`), lines[3:]...)
	evs, q := transcripttest.ParseLines(t, func(s transcript.Source, st []byte) (*Parser, error) { return newParser(s, st, nil) }, s,
		transcripttest.Envelope(Client, Component), withBad...)
	if st := q.Stats(); st.Malformed != 1 || st.Lines != 8 {
		t.Errorf("stats %+v, want the cut line malformed", st)
	}
	if got := describe(actions(evs)); !strings.Contains(got, "run_command grep -rn TODO src") || strings.Contains(got, "no result") {
		t.Errorf("a malformed line lost the rest:\n%s", got)
	}
}

func TestStart_WorkspaceLink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "2026-03-01-tiny-red-fox")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/nonexistent-observer/linked", filepath.Join(dir, "workspace")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, LogName)
	line := `{"role": "user", "content": "hi", "timestamp": "2026-03-01T08:00:00+01:00"}`
	if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: path}, nil)
	evs, err := p.Record(0, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].Session == nil || evs[0].Session.Cwd != "/nonexistent-observer/linked" || evs[0].SessionID != "2026-03-01-tiny-red-fox" ||
		!evs[0].Time.Equal(time.Date(2026, 3, 1, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("events %+v: want the workspace link's target as cwd, the directory as session, a zoned timestamp as it is", evs)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv("GPTME_LOGS_HOME", "/tmp/gptme-logs")
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	if got := defaultRoots("linux"); len(got) != 1 || got[0] != "/tmp/gptme-logs" {
		t.Errorf("with GPTME_LOGS_HOME: %v", got)
	}
	t.Setenv("GPTME_LOGS_HOME", "")
	if got := defaultRoots("linux"); len(got) != 1 || got[0] != "/tmp/xdg/gptme/logs" {
		t.Errorf("with XDG_DATA_HOME: %v", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	if got := defaultRoots("linux"); len(got) != 1 || got[0] != filepath.Join(home, ".local", "share", "gptme", "logs") {
		t.Errorf("linux: %v", got)
	}
	if got := defaultRoots("darwin"); len(got) != 2 || got[1] != filepath.Join(home, "Library", "Application Support", "gptme", "logs") {
		t.Errorf("macOS: %v", got)
	}
}

// An assistant message whose text the user changed with /edit keeps its timestamp and metadata:
// its usage keeps its id (the request was made once), its text is a message of its own.
func TestParse_EditedMessageUsage(t *testing.T) {
	s := src(t, toolConv)
	line := func(text string) string {
		return `{"role": "assistant", "content": "` + text + `", "timestamp": "2026-02-15T09:00:05.123456",
			"metadata": {"model": "openai/gpt-5", "usage": {"input_tokens": 1200, "output_tokens": 310}}}`
	}
	usageID := func(text string) string {
		p, _ := newParser(s, nil, nil)
		evs, err := p.Record(0, []byte(line(text)))
		if err != nil {
			t.Fatal(err)
		}
		u := byKind(evs, event.KindTokenUsage)
		if len(u) != 1 {
			t.Fatalf("%d usage events, want 1", len(u))
		}
		return u[0].ID
	}
	if a, b := usageID("The tests pass."), usageID("The tests pass (edited)."); a != b {
		t.Errorf("an edited message's usage has id %s, before the edit %s: counted twice", b, a)
	}
	p, _ := newParser(s, nil, nil)
	other := strings.Replace(line("x"), "09:00:05.123456", "09:00:06.000001", 1)
	evs, _ := p.Record(0, []byte(other))
	if u := byKind(evs, event.KindTokenUsage); len(u) != 1 || u[0].ID == usageID("x") {
		t.Errorf("another message's usage %+v: want an id of its own", u)
	}
}
