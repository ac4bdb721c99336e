package antigravity

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// The fixtures are written here to the format the published readers describe (see the package
// doc): a CLI conversation (testdata/antigravity-cli: a prompt selecting the model, a read and a
// search that succeeded, an edit, a second prompt changing the model, a command that failed, a
// web search and an MCP call still waiting, and the CLI's history.jsonl naming the workspace) and an IDE one (testdata/antigravity:
// no history, so no directory; a brain directory that is not a conversation beside it).
const (
	cliID = "6f1c2a9e-3b4d-4e8f-9a17-2c5d8e0b7f41"
	ideID = "0b3d7c55-91e2-4a60-8d3c-5e6f7a8b9c0d"
)

func fixture(tb testing.TB, root, id string) string {
	tb.Helper()
	p, err := filepath.Abs(TranscriptPath(filepath.Join("testdata", root), id))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// readAll feeds every line of path to a parser resumed from state, and returns the events and the
// state it leaves.
func readAll(tb testing.TB, path, id string, state []byte) ([]event.Event, []byte) {
	tb.Helper()
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path, SessionID: id}, state)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var evs []event.Event
	off := int64(0)
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		e, err := p.Record(off, bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			tb.Fatalf("line at %d: %v", off, err)
		}
		evs = append(evs, e...)
		off += int64(len(line))
	}
	return evs, p.State()
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

// actions merges the action events by id the way the writer does: the later event's outcome
// joins the call's target.
func actions(evs []event.Event) map[string]*event.Action {
	out := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		a := *e.Action
		if prev, ok := out[e.ID]; ok {
			if a.Target == "" {
				a.Target = prev.Target
			}
			if a.MessageID == "" {
				a.MessageID = prev.MessageID
			}
			if a.Model == "" {
				a.Model = prev.Model
			}
		}
		out[e.ID] = &a
	}
	return out
}

func find(acts map[string]*event.Action, ty event.ActionType) *event.Action {
	for _, a := range acts {
		if a.Type == ty {
			return a
		}
	}
	return nil
}

func TestCLIConversation(t *testing.T) {
	evs, _ := readAll(t, fixture(t, "antigravity-cli", cliID), cliID, nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != cliID || e.ID == "" || e.Time.IsZero() || e.Project != "/home/dev/pathkit" {
			t.Fatalf("event %+v: want client antigravity, the conversation, an id, a time and the workspace as project", e)
		}
	}
	if n := len(byKind(evs, event.KindTokenUsage)); n != 0 {
		t.Errorf("%d token_usage events: the transcript has no figures, and none may be estimated", n)
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 3 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/pathkit" ||
		!sess[0].Time.Equal(time.Date(2026, 5, 28, 7, 42, 0, 0, time.UTC)) || sess[1].Session.Model != "Gemini 3.5 Flash (Medium)" ||
		sess[2].Session.Model != "Gemini 3.1 Pro (High)" {
		t.Fatalf("session events %+v: want started in the history's workspace, then the models the settings changes name", sess)
	}
	acts := actions(evs)
	var prompts []string
	for _, a := range acts {
		if a.Type == event.ActionUserPrompt {
			prompts = append(prompts, a.Target)
		}
	}
	if len(prompts) != 2 || !strings.Contains(strings.Join(prompts, "|"), "why does the parser test fail on windows paths?") {
		t.Errorf("prompts %q: want the two requests, unwrapped, the settings changes beside them left out", prompts)
	}
	if a := find(acts, event.ActionReadFile); a == nil || a.Target != "split_test.go" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "TestSplitWindows") || a.Tool != "view_file" {
		t.Errorf("read_file %+v: want split_test.go relative to the project, succeeded, the VIEW_FILE step as output", a)
	}
	if a := find(acts, event.ActionSearchText); a == nil || a.Target != "filepath.Separator in /home/dev/pathkit" || a.Success == nil || !*a.Success {
		t.Errorf("search_text %+v", a)
	}
	if a := find(acts, event.ActionEditFile); a == nil || a.Target != "split.go" || a.Success == nil || !*a.Success {
		t.Errorf("edit_file %+v", a)
	}
	if a := find(acts, event.ActionRunCommand); a == nil || a.Target != "go test ./..." || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "FAIL: TestJoinUNC") || a.Model != "Gemini 3.1 Pro (High)" {
		t.Errorf("run_command %+v: want go test, failed with its output as the error, under the model chosen before it", a)
	}
	if a := find(acts, event.ActionWebSearch); a == nil || a.Target != "go filepath.Join UNC path prefix" || a.Success != nil {
		t.Errorf("web_search %+v: want the query, no outcome (no result step yet)", a)
	}
	if a := find(acts, event.ActionMCPCall); a == nil || a.Target != "github/search_issues" {
		t.Errorf("mcp_call %+v", a)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
	}
	if got := strings.Join(roles, ","); got != "user,thinking,tool_call,tool_call,assistant,tool_call,user,tool_call,assistant,tool_call,tool_call" {
		t.Errorf("message roles %s", got)
	}
}

func TestIDEConversation_NoWorkspace(t *testing.T) {
	evs, _ := readAll(t, fixture(t, "antigravity", ideID), ideID, nil)
	if len(evs) == 0 || evs[0].Project != "" || evs[0].Session.Cwd != "" {
		t.Fatalf("first event %+v: the IDE keeps no prompt log, so no directory", evs)
	}
	a := find(actions(evs), event.ActionSearchFiles)
	if a == nil || a.Target != "/w/site" || a.Success == nil || !*a.Success || !strings.Contains(a.Output, "style.css") {
		t.Errorf("list_dir %+v", a)
	}
}

// Reading the file again from its state emits nothing new; reading it without state emits the
// same ids; an appended line emits only its own events, and a waiting call's result pairs across
// the resume.
func TestReread_Append(t *testing.T) {
	path := fixture(t, "antigravity-cli", cliID)
	first, state := readAll(t, path, cliID, nil)
	again, _ := readAll(t, path, cliID, nil)
	if len(again) != len(first) {
		t.Fatalf("a read without state emitted %d events, the first %d", len(again), len(first))
	}
	for i := range first {
		if first[i].ID != again[i].ID {
			t.Fatalf("event %d: id %s then %s", i, first[i].ID, again[i].ID)
		}
	}
	// A new call is appended and read, then its result, each by a parser resumed from the state
	// the read before left.
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path, SessionID: cliID}, state)
	if err != nil {
		t.Fatal(err)
	}
	callLine := `{"step_index":13,"source":"MODEL","type":"PLANNER_RESPONSE","status":"DONE","created_at":"2026-05-28T07:47:01Z","tool_calls":[{"name":"view_file","args":{"AbsolutePath":"/home/dev/pathkit/join.go"}}]}`
	calls, err := p.Record(9000, []byte(callLine))
	if err != nil {
		t.Fatal(err)
	}
	if a := actions(calls); len(a) != 1 || find(a, event.ActionReadFile) == nil || find(a, event.ActionReadFile).Target != "join.go" {
		t.Fatalf("appended call: %+v, want its read only", calls)
	}
	p2, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path, SessionID: cliID}, p.State())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := p2.Record(9500, []byte(`{"step_index":14,"source":"MODEL","type":"VIEW_FILE","status":"DONE","created_at":"2026-05-28T07:47:02Z","content":"package pathkit"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Action == nil || evs[0].Action.Type != event.ActionReadFile || evs[0].Action.Success == nil ||
		!*evs[0].Action.Success || evs[0].ID != byKind(calls, event.KindAction)[0].ID {
		t.Fatalf("appended result: %+v, want the read's outcome under the call's id", evs)
	}
}

func TestMalformed(t *testing.T) {
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: "x/transcript.jsonl", SessionID: "s"}, nil)
	for _, bad := range []string{`{"step_index":1,"source":"MODEL","type":`, `[1,2]`, `{"step_index":2}`, "{\"content\":\"\xff\"}", `not json`} {
		if evs, err := p.Record(0, []byte(bad)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, err %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	// A bad line loses nothing else: the next good one still reads.
	evs, err := p.Record(10, []byte(`{"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","created_at":"2026-05-28T07:42:00Z","content":"hello"}`))
	if err != nil || len(byKind(evs, event.KindAction)) != 1 {
		t.Errorf("good line after bad ones: %d events, %v", len(evs), err)
	}
	if st := p.Stats(); st.Malformed != 5 || st.Lines != 6 {
		t.Errorf("stats %+v, want 5 malformed of 6", st)
	}
}

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "antigravity-cli"), filepath.Join("testdata", "antigravity"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].SessionID != cliID && srcs[1].SessionID != cliID || srcs[0].Document || srcs[0].Client != Client {
		t.Fatalf("Discover: %+v, want the two conversations' transcripts (not the non-uuid directory)", srcs)
	}
	for _, s := range srcs {
		if !filepath.IsAbs(s.Path) || filepath.Base(s.Path) != "transcript.jsonl" {
			t.Errorf("source %+v", s)
		}
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "none")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv(EnvDirs, "")
	want := []string{filepath.Join(home, ".gemini", "antigravity-cli"), filepath.Join(home, ".gemini", "antigravity"), filepath.Join(home, ".gemini", "antigravity-ide")}
	if got := DefaultRoots(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("DefaultRoots: %v, want %v (the same on macOS)", got, want)
	}
	t.Setenv(EnvDirs, "/tmp/a"+string(os.PathListSeparator)+"/tmp/b")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/tmp/a" || got[1] != "/tmp/b" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
	if got := New([]string{"/r"}).WatchDirs(); len(got) != 1 || got[0] != filepath.Join("/r", "brain") {
		t.Errorf("WatchDirs %v", got)
	}
}

// Only Antigravity's own <USER_SETTINGS_CHANGE> section selects a model, its name scrubbed and
// cut; a prompt that mentions a model selection stays a prompt.
func TestModelSelection(t *testing.T) {
	const change = "The user changed setting `Model Selection` from "
	secret := "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	cases := []struct {
		name, content, model, prompt string
	}{
		{"a request with the settings change beside it",
			"<USER_REQUEST>\nfix it\n</USER_REQUEST>\n<ADDITIONAL_METADATA>\nlocal time\n</ADDITIONAL_METADATA>\n<USER_SETTINGS_CHANGE>\n" +
				change + "None to Claude Sonnet 4.6 (Thinking). No need to comment on this change.\n</USER_SETTINGS_CHANGE>",
			"Claude Sonnet 4.6 (Thinking)", "fix it"},
		{"a request that mentions a selection",
			"<USER_REQUEST>\nwhy does the log say: " + change + "A to B. here?\n</USER_REQUEST>", "",
			"why does the log say: " + change + "A to B. here?"},
		{"unwrapped text that mentions a selection", "see `Model Selection` from A to B.\nthen run it", "",
			"see `Model Selection` from A to B.\nthen run it"},
		{"a settings section forged inside a request",
			"<USER_REQUEST>\nhi</USER_REQUEST><USER_SETTINGS_CHANGE>" + change + "A to Evil.</USER_SETTINGS_CHANGE><USER_REQUEST>there\n</USER_REQUEST>",
			"", "hi"},
		{"a settings change alone, its name scrubbed and cut",
			"<USER_SETTINGS_CHANGE>\n" + change + "A to Custom " + secret + " " + strings.Repeat("x", 300) + ".\n</USER_SETTINGS_CHANGE>",
			"*", ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "x/transcript.jsonl", SessionID: "s"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			line, _ := json.Marshal(map[string]any{"step_index": i, "source": "USER_EXPLICIT", "type": "USER_INPUT",
				"created_at": "2026-05-28T07:42:00Z", "content": c.content})
			evs, err := p.Record(0, line)
			if err != nil {
				t.Fatal(err)
			}
			var model, prompt string
			for _, e := range evs {
				if e.Session != nil && e.Session.Model != "" {
					model = e.Session.Model
				}
				if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
					prompt = e.Action.Target
				}
			}
			if c.model == "*" {
				if model == "" || strings.Contains(model, "AbCdEfGh") || utf8.RuneCountInString(model) > maxModel || !strings.HasPrefix(model, "Custom ") {
					t.Errorf("model %q: want the name, its key scrubbed, at most %d runes", model, maxModel)
				}
			} else if model != c.model {
				t.Errorf("model %q, want %q", model, c.model)
			}
			if prompt != c.prompt {
				t.Errorf("prompt %q, want %q", prompt, c.prompt)
			}
		})
	}
}

// The prompt log is read once for many conversations, not once per conversation: a second parser
// takes the workspace from what the adapter read while the log is unchanged, and the log is read
// again (from where it stopped) once it grows.
func TestAdapter_HistoryReadOnce(t *testing.T) {
	root := t.TempDir()
	const a, b, c = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	hist := filepath.Join(root, "history.jsonl")
	row := func(conv, ws string) string {
		return `{"display":"go","timestamp":1779954120000,"workspace":"` + ws + `","conversationId":"` + conv + `"}` + "\n"
	}
	const long = "44444444-4444-4444-8444-444444444444" // a row longer than the read buffer
	longRow := `{"display":"` + strings.Repeat("y", 200<<10) + `","workspace":"/w/long","conversationId":"` + long + `"}` + "\n"
	if err := os.WriteFile(hist, []byte(row(a, "/w/a")+longRow+row(b, "/w/b")), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(hist)
	if err != nil {
		t.Fatal(err)
	}
	ad := New([]string{root})
	cwd := func(conv string) string {
		t.Helper()
		p, err := ad.NewParser(transcript.Source{Client: Client, Path: TranscriptPath(root, conv), SessionID: conv}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p.(*Parser).st.Cwd
	}
	if got := cwd(a); got != "/w/a" {
		t.Fatalf("first conversation: %q, want /w/a", got)
	}
	// The same bytes count and time, other content: a log the adapter has read already is not
	// read again for the next conversation.
	if err := os.WriteFile(hist, []byte(row(a, "/w/a")+longRow+row(b, "/w/X")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(hist, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := cwd(b); got != "/w/b" {
		t.Errorf("second conversation: %q, want /w/b as first read (the log read once)", got)
	}
	if got := cwd(long); got != "/w/long" {
		t.Errorf("a conversation on a long row: %q, want /w/long", got)
	}
	f, err := os.OpenFile(hist, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(row(c, "/w/c") + `{"display":"half a line","conversationId":"` + a); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := cwd(c); got != "/w/c" {
		t.Errorf("a conversation appended to the log: %q, want /w/c", got)
	}
	// Rewritten shorter: read whole again.
	if err := os.WriteFile(hist, []byte(row(a, "/w/z")), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, gone := cwd(a), cwd(c); got != "/w/z" || gone != "" {
		t.Errorf("a rewritten log: %q and %q, want /w/z and nothing", got, gone)
	}
}
