package vscopilot

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

// The fixtures (testdata/VSGitHubCopilotLogs/traces) are written here to the OTLP/JSON format the
// published readers describe (see the package doc): one Visual Studio instance's file with a turn
// of conversation A (an invoke_agent summary, three chat spans with usage and cache reads, a file
// read, a failed terminal command, reasoning), and another instance's file with conversation B, a
// span without a conversation id, and A's last chat span flushed again.
const (
	convA  = "4a8f63f6-7626-4416-a874-fc7bd2c3f005"
	convB  = "c0aca2e3-d1f2-4d28-bd5e-5dab29e2be28"
	trace1 = "20260612T194439_257709a3_VSGitHubCopilot_traces.jsonl"
	trace2 = "20260612T201502_9c41e0b7_VSGitHubCopilot_traces.jsonl"
)

func tracePath(name string) string {
	p, _ := filepath.Abs(filepath.Join("testdata", logsDir, tracesDir, name))
	return p
}

// read parses a fixture's lines with one parser and returns the events and the parser.
func read(t *testing.T, name string) ([]event.Event, transcript.Parser) {
	t.Helper()
	src := transcript.Source{Client: Client, Path: tracePath(name)}
	p, err := New(nil).NewParser(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i, l := range transcripttest.ReadLines(t, src.Path) {
		got, err := p.Record(int64(i), l)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, got...)
	}
	transcripttest.CheckEvents(t, evs)
	return evs, p
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

func TestDiscover(t *testing.T) {
	for _, root := range []string{"testdata", filepath.Join("testdata", logsDir), filepath.Join("testdata", logsDir, tracesDir)} {
		srcs, err := New([]string{root, filepath.Join("testdata", "absent")}).Discover()
		if err != nil {
			t.Fatal(err)
		}
		if len(srcs) != 2 || srcs[0].Path != tracePath(trace1) || srcs[1].Path != tracePath(trace2) || srcs[0].Client != Client || srcs[0].Document {
			t.Errorf("Discover(%s): %+v, want the two trace files (not the chat log)", root, srcs)
		}
	}
	// Visual Studio 2026's per-solution layout: a sessions directory of conversation files.
	dir := filepath.Join(t.TempDir(), ".vs", "Shop", "copilot-chat", "thread", "sessions")
	transcripttest.WriteFile(t, filepath.Join(dir, strings.ToUpper(convB)), "{}\n")
	transcripttest.WriteFile(t, filepath.Join(dir, "notes.txt"), "x")
	srcs, err := New([]string{dir}).Discover()
	if err != nil || len(srcs) != 1 || srcs[0].SessionID != convB {
		t.Errorf("sessions directory: %+v, %v", srcs, err)
	}
}

func TestTrace(t *testing.T) {
	evs, _ := read(t, trace1)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != convA || e.Time.IsZero() {
			t.Fatalf("event %+v: want client copilot-vs, conversation A, a time", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 2 || sess[0].Session.State != event.SessionStarted || !sess[0].Time.Equal(time.Date(2026, 6, 12, 19, 44, 39, 900e6, time.UTC)) ||
		sess[1].Session.Model != "gpt-5.5" {
		t.Fatalf("session events %+v: want the start at the first span, then the model once", sess)
	}
	usage := byKind(evs, event.KindTokenUsage)
	want := []event.Tokens{
		{Input: 3060, Output: 212, CacheRead: 15360},
		{Input: 1034, Output: 96, CacheRead: 18176},
		{Input: 910, Output: 340, CacheRead: 19200, Reasoning: 128},
	}
	if len(usage) != len(want) {
		t.Fatalf("%d usage events, want one per chat span (the invoke_agent summary not counted)", len(usage))
	}
	for i, u := range usage {
		if u.TokenUsage.Tokens != want[i] || u.TokenUsage.Model != "gpt-5.5" || u.TokenUsage.CostUSD <= 0 ||
			u.TokenUsage.Reliability != event.ReliabilityApproximate {
			t.Errorf("usage %d: %+v, want %+v (input net of the cache read), priced", i, u.TokenUsage, want[i])
		}
	}
	if !usage[0].Time.Equal(time.Date(2026, 6, 12, 19, 44, 46, 250e6, time.UTC)) || usage[0].TokenUsage.MessageID != "chatcmpl-BxA1" {
		t.Errorf("usage at %v, %q: want the span's end and the response id", usage[0].Time, usage[0].TokenUsage.MessageID)
	}
	ids, byID := transcripttest.Merge(evs)
	var prompts, calls []*event.Action
	for _, id := range ids {
		if a := byID[id].Action; a != nil {
			if a.Type == event.ActionUserPrompt {
				prompts = append(prompts, a)
			} else {
				calls = append(calls, a)
			}
		}
	}
	if len(prompts) != 1 || prompts[0].Target != "Make the login form validate the e-mail field" {
		t.Errorf("prompts %+v: want the turn's prompt once, though three chat spans repeat it", prompts)
	}
	if len(calls) != 2 {
		t.Fatalf("calls %+v: want the read and the command, each call's span and chat part merged", calls)
	}
	if a := calls[0]; a.Type != event.ActionReadFile || a.Tool != "get_file" || a.Target != `Views\LoginForm.xaml` || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "<UserControl") {
		t.Errorf("get_file %+v: want read_file, succeeded, the result's content as output", a)
	}
	if a := calls[1]; a.Type != event.ActionRunCommand || a.Target != "dotnet test Shop.Tests" || a.Success == nil || *a.Success ||
		a.Error != "Command exited with code 1" || !strings.Contains(a.Output, "Failed:     2") || a.DurationMs != 11500 {
		t.Errorf("terminal %+v: want run_command, failed by the span's status, its output, 11.5 s", a)
	}
	var roles []string
	for _, id := range ids {
		if m := byID[id].Message; m != nil {
			roles = append(roles, m.Role)
		}
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool_call,tool_call,thinking,assistant" {
		t.Errorf("message roles %s", got)
	}
}

// Another file: its own conversation, a span without one skipped, and a span flushed there too
// under the ids of its first copy.
func TestSecondFile(t *testing.T) {
	first, _ := read(t, trace1)
	evs, p := read(t, trace2)
	for _, e := range evs {
		if e.SessionID != convA && e.SessionID != convB {
			t.Fatalf("event %+v of no conversation", e)
		}
	}
	var b *event.TokenUsage
	for _, e := range byKind(evs, event.KindTokenUsage) {
		if e.SessionID == convB {
			b = e.TokenUsage
		}
	}
	if b == nil || b.Tokens != (event.Tokens{Input: 5210, Output: 88}) || b.Model != "gpt-4.1" || b.CostUSD <= 0 {
		t.Errorf("conversation B's usage %+v", b)
	}
	have := map[string]bool{}
	for _, e := range first {
		have[e.ID] = true
	}
	for _, e := range evs {
		if e.SessionID == convA && e.Kind != event.KindSession && !have[e.ID] {
			t.Errorf("the span flushed again made a new event %+v", e)
		}
	}
	if st := p.Stats(); st.Lines != 2 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A parser resumed from State does not start a conversation again; a bad line is malformed and
// loses nothing else; a re-read gives the same events.
func TestResume_Malformed_Reread(t *testing.T) {
	src := transcript.Source{Client: Client, Path: tracePath(trace1)}
	lines := transcripttest.ReadLines(t, src.Path)
	p, _ := New(nil).NewParser(src, nil)
	if _, err := p.Record(0, lines[0]); err != nil {
		t.Fatal(err)
	}
	q, err := New(nil).NewParser(src, p.State())
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := q.Record(1, []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":`)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
		t.Errorf("truncated line: %d events, %v", len(evs), err)
	}
	evs, err := q.Record(int64(len(lines[0])+1), lines[1])
	if err != nil || len(evs) == 0 || len(byKind(evs, event.KindSession)) != 0 {
		t.Errorf("resumed line: %d events (%d session), %v; want the line's events and no second start", len(evs), len(byKind(evs, event.KindSession)), err)
	}
	if st := q.Stats(); st.Lines != 2 || st.Malformed != 1 {
		t.Errorf("stats %+v", st)
	}
	a, _ := read(t, trace1)
	b, _ := read(t, trace1)
	transcripttest.SameEvents(t, a, b)
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvDirs, "/mnt/win/Temp"+string(os.PathListSeparator)+"/tmp/vs/traces")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/mnt/win/Temp" || got[1] != "/tmp/vs/traces" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
	t.Setenv(EnvDirs, "")
	if got := defaultRoots("linux"); len(got) != 0 {
		t.Errorf("Linux defaults %v, want none", got)
	}
	if got := defaultRoots("darwin"); len(got) != 0 {
		t.Errorf("macOS defaults %v, want none", got)
	}
	t.Setenv("TMP", "/w/tmp")
	t.Setenv("TEMP", "/w/tmp")
	t.Setenv("LOCALAPPDATA", "/w/local")
	want := []string{filepath.Join("/w/tmp", logsDir, tracesDir), filepath.Join("/w/local", "Temp", logsDir, tracesDir)}
	if got := defaultRoots("windows"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Windows defaults %v, want %v", got, want)
	}
}
