package droid

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/home/.factory) are written here to the format Droid 0.225.2 wrote when
// run against observer's fake API (see the package doc): a session on an Anthropic model (a Read,
// an Execute that failed, an Edit and an MCP call, four model calls in the log), and one on a
// custom (BYOK) OpenAI-compatible model.
const (
	fixHome = "testdata/home/.factory"
	sessA   = "7d0c2a51-3e4f-4a8b-9c1d-2e3f4a5b6c7d"
	sessG   = "5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a5b"
)

func home(t *testing.T) string {
	t.Helper()
	h, err := filepath.Abs(fixHome)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func sources(t *testing.T, a *Adapter) (sessions map[string]transcript.Source, logs []transcript.Source) {
	t.Helper()
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	sessions = map[string]transcript.Source{}
	for _, s := range srcs {
		if s.SessionID != "" {
			sessions[s.SessionID] = s
		} else {
			logs = append(logs, s)
		}
	}
	return sessions, logs
}

func parse(t *testing.T, a *Adapter, src transcript.Source) []event.Event {
	t.Helper()
	evs, _ := transcripttest.ParseFile(t, a.NewParser, src, transcripttest.Envelope(Client, Component))
	return evs
}

func usages(evs []event.Event) map[string][]*event.TokenUsage {
	out := map[string][]*event.TokenUsage{}
	for i := range evs {
		if u := evs[i].TokenUsage; u != nil {
			out[evs[i].SessionID] = append(out[evs[i].SessionID], u)
		}
	}
	return out
}

func TestDiscover(t *testing.T) {
	a := New([]string{home(t), filepath.Join(t.TempDir(), "absent")})
	sessions, logs := sources(t, a)
	if len(sessions) != 2 || sessions[sessA].Path == "" || sessions[sessG].Path == "" {
		t.Fatalf("sessions %+v, want the two .jsonl files by session id", sessions)
	}
	if len(logs) != 1 || filepath.Base(logs[0].Path) != "droid-log-single.log" {
		t.Fatalf("logs %+v, want droid-log-single.log (and not settings.json)", logs)
	}
	dirs := a.WatchDirs()
	want := filepath.Join(home(t), "sessions", "-home-ann-shop")
	if !strings.Contains(strings.Join(dirs, "\n"), want) {
		t.Fatalf("WatchDirs %v: want the project directory %s", dirs, want)
	}
}

func TestDefaultHomes(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	t.Setenv("FACTORY_HOME_OVERRIDE", "")
	if got := DefaultHomes(); len(got) != 1 || got[0] != "/home/ann/.factory" {
		t.Fatalf("DefaultHomes %v, want ~/.factory (the same on macOS)", got)
	}
	t.Setenv("FACTORY_HOME_OVERRIDE", "/srv/droid")
	if got := DefaultHomes(); got[0] != "/srv/droid/.factory" {
		t.Fatalf("DefaultHomes with FACTORY_HOME_OVERRIDE %v", got)
	}
	t.Setenv("FACTORY_LOG_FILE", "/var/log/droid.log")
	if a := NewDefault(); len(a.Logs) != 1 || a.Logs[0] != "/var/log/droid.log" {
		t.Fatalf("NewDefault logs %v, want $FACTORY_LOG_FILE", a.Logs)
	}
}

// Each model call of the log is one usage, under its session and its session's project, with
// Droid's figures in observer's buckets, priced; the lines between are skipped.
func TestLogUsage(t *testing.T) {
	a := New([]string{home(t)})
	_, logs := sources(t, a)
	evs := parse(t, a, logs[0])
	us := usages(evs)
	if len(us[sessA]) != 4 || len(us[sessG]) != 1 || len(evs) != 5 {
		t.Fatalf("usages %d + %d of %d events, want 4 calls of %s and 1 of %s, nothing else", len(us[sessA]), len(us[sessG]), len(evs), sessA, sessG)
	}
	var sum event.Tokens
	for _, u := range us[sessA] {
		sum.Input += u.Input
		sum.Output += u.Output
		sum.CacheRead += u.CacheRead
		sum.CacheCreation += u.CacheCreation
		if u.Model != "claude-sonnet-4-5-20250929" || u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate || u.Origin != "transcript" {
			t.Fatalf("usage %+v: want the model priced, approximate, from the transcript", u)
		}
	}
	if want := (event.Tokens{Input: 2080, Output: 309, CacheRead: 30440, CacheCreation: 9800}); sum != want {
		t.Fatalf("session totals %+v, want %+v (input net of cache, cache writes apart)", sum, want)
	}
	g := us[sessG][0]
	if g.Model != "gpt-5.2" || g.Input != 23 || g.CacheRead != 1024 || g.Output != 30 || g.Reasoning != 12 || g.CostUSD <= 0 {
		t.Fatalf("custom model's usage %+v: want gpt-5.2 (its sendMessage's model), 23 + 1024 cached in, 30 out of which 12 reasoning, priced", g)
	}
	for _, e := range evs {
		if e.TokenUsage.MessageID != e.ID {
			t.Fatalf("usage %s: message id %q, want its own id (the writer's join of a proxy turn records it)", e.ID, e.TokenUsage.MessageID)
		}
		if e.Project != "/home/ann/shop" {
			t.Fatalf("usage %s: project %q, want its session file's cwd", e.ID, e.Project)
		}
	}
}

// A custom model with no sendMessage before its call (a log fragment cut there) is named from
// settings.json's custom models.
func TestLogCustomModelFromSettings(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, ".factory", "logs")
	transcripttest.WriteFile(t, filepath.Join(dir, ".factory", "settings.json"),
		`{"customModels":[{"id":"custom:mine","model":"gpt-5.2","provider":"generic-chat-completion-api"}]}`)
	transcripttest.WriteFile(t, filepath.Join(logs, "droid-log-single.2.log"),
		`[2026-11-22T10:00:00.000Z] INFO: [Agent] Streaming result | Context: {"inputTokens":10,"outputTokens":5,"tags":{"sessionId":"s1","modelId":"custom:mine"}}`+"\n")
	a := New([]string{filepath.Join(dir, ".factory")})
	_, srcs := sources(t, a)
	evs := parse(t, a, srcs[0])
	if len(evs) != 1 || evs[0].TokenUsage.Model != "gpt-5.2" || evs[0].SessionID != "s1" {
		t.Fatalf("events %+v, want one usage of gpt-5.2 under s1", evs)
	}
}

// A log line read again (a resumed parser, a rotated fragment under another name) yields the
// same ids; a broken result line is malformed and the lines after it still count.
func TestLogIDsAndMalformed(t *testing.T) {
	a := New([]string{home(t)})
	_, logs := sources(t, a)
	first := parse(t, a, logs[0])
	resumed, err := transcripttest.Resumed(t, a, logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if ids(first) != ids(resumed) {
		t.Fatalf("resumed read ids differ:\n%s\n%s", ids(first), ids(resumed))
	}
	data, err := os.ReadFile(logs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	rotated := filepath.Join(t.TempDir(), ".factory", "logs", "droid-log-single.1.log")
	transcripttest.WriteFile(t, rotated, string(data))
	again := parse(t, a, transcript.Source{Client: Client, Path: rotated})
	if ids(first) != ids(again) {
		t.Fatal("a rotated copy of the log gives other ids: its calls would count twice")
	}
	p, err := a.NewParser(logs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Record(0, []byte(`[2026-11-20T09:15:05.390Z] INFO: [Agent] Streaming result | Context: {"inputTokens":12`))
	if !errors.Is(err, transcript.ErrMalformed) {
		t.Fatalf("a truncated result line: %v, want ErrMalformed", err)
	}
	evs, err := p.Record(100, []byte(`[2026-11-20T09:15:09.790Z] INFO: [Agent] Streaming result | Context: {"inputTokens":7,"outputTokens":3,"tags":{"sessionId":"x","modelId":"claude-sonnet-4-5-20250929"}}`))
	if err != nil || len(evs) != 1 {
		t.Fatalf("the line after a broken one: %v %v", evs, err)
	}
}

func ids(evs []event.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return strings.Join(out, "\n")
}

// A session file: the prompt (not Droid's reminders), the tool calls with their outcome, the
// conversation, the session's start, title, directory and model.
func TestSession(t *testing.T) {
	a := New([]string{home(t)})
	sessions, _ := sources(t, a)
	evs := parse(t, a, sessions[sessA])
	var prompts []string
	var started, title bool
	for _, e := range evs {
		if e.SessionID != sessA || e.Project != "/home/ann/shop" {
			t.Fatalf("event %s: session %q project %q", e.ID, e.SessionID, e.Project)
		}
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			prompts = append(prompts, e.Action.Target)
		}
		if s := e.Session; s != nil {
			started = started || s.State == event.SessionStarted && s.Cwd == "/home/ann/shop"
			title = title || s.Title == "fix the failing cart test"
		}
		if e.TokenUsage != nil {
			t.Fatalf("a session file gave usage %+v: its figures are in the log", e.TokenUsage)
		}
	}
	if len(prompts) != 1 || prompts[0] != "fix the failing cart test" || !started || !title {
		t.Fatalf("prompts %q, started %v, title %v", prompts, started, title)
	}
	acts := transcripttest.ActionsOf(evs)
	type want struct {
		ty     event.ActionType
		target string
		ok     bool
	}
	wants := []want{
		{event.ActionReadFile, "cart/cart_test.go", true},
		{event.ActionRunCommand, "go test ./cart/", false},
		{event.ActionEditFile, "cart/cart.go", true},
		{event.ActionMCPCall, "linear/get_issue", true},
	}
	if len(acts) != len(wants) {
		t.Fatalf("%d tool calls, want %d", len(acts), len(wants))
	}
	for i, w := range wants {
		a := acts[i]
		if a.Type != w.ty || a.Target != w.target || a.Success == nil || *a.Success != w.ok {
			t.Fatalf("call %d: %s %q success %v, want %s %q %v", i, a.Type, a.Target, a.Success, w.ty, w.target, w.ok)
		}
	}
	if !strings.Contains(acts[1].Error, "FAIL: TestTotal") || acts[1].DurationMs != 3100 {
		t.Fatalf("the failed command: error %q, duration %d ms", acts[1].Error, acts[1].DurationMs)
	}
	lines := transcripttest.ConversationText(evs)
	for _, w := range []string{"fix the failing cart test", "Look at the test first.", "Reading the test.", "Fixed: the total added"} {
		if !strings.Contains(lines, w) {
			t.Fatalf("conversation lacks %q:\n%s", w, lines)
		}
	}
	if strings.Contains(lines, "system-reminder") || strings.Contains(lines, "Current date") {
		t.Fatalf("Droid's reminders are in the conversation:\n%s", lines)
	}
}

// A session read a line at a time, each with a parser resumed from the last one's state, gives
// what one pass gives; a line cut short is malformed and the rest still counts.
func TestSessionResumedAndMalformed(t *testing.T) {
	a := New([]string{home(t)})
	sessions, _ := sources(t, a)
	one := parse(t, a, sessions[sessA])
	resumed, err := transcripttest.Resumed(t, a, sessions[sessA])
	if err != nil {
		t.Fatal(err)
	}
	if ids(one) != ids(resumed) {
		t.Fatalf("resumed ids differ")
	}
	data, err := os.ReadFile(sessions[sessA].Path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	lines[4] = lines[4][:40] // the Read's result, cut
	evs, p := transcripttest.ParseLines(t, newSessionParser, sessions[sessA], transcripttest.Envelope(Client, Component), lines...)
	if st := p.Stats(); st.Malformed != 1 {
		t.Fatalf("stats %+v, want one malformed line", st)
	}
	if n := len(transcripttest.ActionsOf(evs)); n != 4 {
		t.Fatalf("%d tool calls after a broken line, want all 4 still", n)
	}
}

// A parser's State goes into the cursors file: it keeps no command, path or title of the session,
// only references (transcript.Memo), even while a call waits for its result.
func TestSessionStateKeepsNoText(t *testing.T) {
	a := New([]string{home(t)})
	sessions, _ := sources(t, a)
	lines := transcripttest.ReadLines(t, sessions[sessA].Path)
	p, err := newSessionParser(sessions[sessA], nil)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.Feed(t, p, lines[:1], transcripttest.Envelope(Client, Component)) // the title waits for a time
	if st := string(p.State()); strings.Contains(st, "failing cart") {
		t.Fatalf("state holds the title: %s", st)
	}
	transcripttest.Feed(t, p, lines[1:6], transcripttest.Envelope(Client, Component)) // the Execute waits for its result
	if st := string(p.State()); strings.Contains(st, "go test") || strings.Contains(st, "cart_test.go") {
		t.Fatalf("state holds a command or a path: %s", st)
	}
}

// $FACTORY_LOG_FILE may name a file of any name: it is read as a log.
func TestLogFileAnyName(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "droid.txt")
	transcripttest.WriteFile(t, f, `[2026-11-22T10:00:00.000Z] INFO: [Agent] Streaming result | Context: {"inputTokens":10,"outputTokens":5,"tags":{"sessionId":"s1","modelId":"claude-sonnet-4-5-20250929"}}`+"\n")
	a := New(nil)
	a.Logs = []string{f}
	srcs, err := a.Discover()
	if err != nil || len(srcs) != 1 {
		t.Fatalf("Discover %v %v", srcs, err)
	}
	evs := parse(t, a, srcs[0])
	if len(evs) != 1 || evs[0].TokenUsage == nil {
		t.Fatalf("events %+v, want the log's usage", evs)
	}
}
