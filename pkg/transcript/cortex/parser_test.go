package cortex

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

// The fixtures (testdata/conversations) are written here to the format the published readers
// describe (see the package doc): a session whose document holds its history (a read, a command
// that failed, Snowflake SQL, an MCP call the user denied, injected context) and, one directory
// deeper, a split session (metadata document with Cortex's placeholder title, history in the
// companion .history.jsonl), beside a backup that is not read.
const (
	docID   = "3f2b8c1e-9d4a-4b6f-a1c2-7e8d9f0a1b2c"
	splitID = "8c7d6e5f-1a2b-4c3d-9e8f-0a1b2c3d4e5f"
	subdir  = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
)

func docPath(t testing.TB) string {
	p, _ := filepath.Abs(filepath.Join("testdata", "conversations", docID+".json"))
	return p
}

func companionPath(t testing.TB) string {
	p, _ := filepath.Abs(filepath.Join("testdata", "conversations", subdir, splitID+historySuffix))
	return p
}

func readDoc(t *testing.T, data []byte, state []byte) ([]event.Event, []byte, error) {
	t.Helper()
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: docPath(t), SessionID: docID, Document: true}, state)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := p.Record(0, data)
	return evs, p.State(), err
}

func fixture(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
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

func actions(evs []event.Event) map[string]*event.Action {
	out := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		out[transcript.FirstNonEmpty(e.Action.Tool, string(e.Action.Type))] = e.Action
	}
	return out
}

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "conversations"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, filepath.Base(s.Path)+" "+s.SessionID+map[bool]string{true: " doc", false: " lines"}[s.Document])
	}
	want := []string{splitID + historySuffix + " " + splitID + " lines", splitID + ".json " + splitID + " doc", docID + ".json " + docID + " doc"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Discover:\n%s\nwant (not the backup, the companion as lines, one directory deep):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "none")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestDocument(t *testing.T) {
	evs, _, err := readDoc(t, fixture(t, docPath(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckEvents(t, evs)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != docID || e.Time.IsZero() || e.Project != "/home/dev/analytics" {
			t.Fatalf("event %+v: want client cortex-code, the session, a time and the project", e)
		}
	}
	if n := len(byKind(evs, event.KindTokenUsage)); n != 0 {
		t.Errorf("%d token_usage events: Cortex Code logs no usage, none may be made up", n)
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 2 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/analytics" ||
		sess[0].Session.GitBranch != "fix/orders-model" || !sess[0].Time.Equal(time.Date(2026, 3, 10, 14, 2, 5, 118e6, time.UTC)) ||
		sess[1].Session.Title != "dbt orders model fails to compile" {
		t.Fatalf("session events %+v: want started at created_at in the working directory, then the title", sess)
	}
	acts := actions(evs)
	if a := acts[string(event.ActionUserPrompt)]; a == nil || a.Target != "The orders model fails to compile, find out why and list the tables in ANALYTICS.PUBLIC" {
		t.Errorf("prompt %+v: the typed text, without the injected system reminder", a)
	}
	if a := acts["read"]; a == nil || a.Type != event.ActionReadFile || a.Target != "models/orders.sql" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "stg_orders") {
		t.Errorf("read %+v: want read_file of the path in the project, succeeded, its content as output", a)
	}
	if a := acts["bash"]; a == nil || a.Type != event.ActionRunCommand || a.Target != "dbt compile --select orders" || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "Compilation Error") {
		t.Errorf("bash %+v: want run_command, failed, the result text as error", a)
	}
	if a := acts["snowflake_sql_execute"]; a == nil || a.Type != event.ActionUnknown || a.Target != "SHOW TABLES IN SCHEMA ANALYTICS.PUBLIC" || a.Success == nil || !*a.Success {
		t.Errorf("sql %+v: want unknown with the query's first line", a)
	}
	if a := acts["mcp__github__search_issues"]; a == nil || a.Type != event.ActionMCPCall || a.Target != "github/search_issues" || a.Success == nil || *a.Success ||
		a.Error != "Permission denied by user" {
		t.Errorf("mcp %+v: want github/search_issues, denied", a)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
		if e.Message.Role == event.RoleAssistant && strings.Contains(e.Message.Text, "system-reminder") {
			t.Errorf("an injected block became a message: %q", e.Message.Text)
		}
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool_call,tool_call,assistant,tool_call,tool_call,assistant" {
		t.Errorf("message roles %s", got)
	}
	if m := byKind(evs, event.KindMessage)[1]; !m.Time.Equal(time.Date(2026, 3, 10, 14, 2, 11, 250e6, time.UTC)) || m.Message.Seq != 64 {
		t.Errorf("assistant message at %v seq %d: want the user message's time before it, seq 1×64", m.Time, m.Message.Seq)
	}
}

// A document read again emits nothing; read without state, the same ids; a message appended to
// it, only what is new.
func TestDocument_Reread(t *testing.T) {
	data := fixture(t, docPath(t))
	first, state, err := readDoc(t, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, _ := readDoc(t, data, state); len(again) != 0 {
		t.Errorf("a re-read emitted %d events", len(again))
	}
	fresh, _, _ := readDoc(t, data, nil)
	transcripttest.SameEvents(t, first, fresh)
	grown := strings.Replace(string(data), "\n  ]\n}", `,
    {"role": "user", "id": "msg_07", "user_sent_time": "2026-03-10T14:05:00Z", "content": [{"type": "text", "text": "Point it at ORDERS_RAW"}]}
  ]
}`, 1)
	evs, _, err := readDoc(t, []byte(grown), state)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Action == nil || evs[0].Action.Target != "Point it at ORDERS_RAW" || evs[1].Message == nil {
		t.Errorf("grown document emitted %+v, want only the new prompt and its message", evs)
	}
}

func TestDocument_Malformed(t *testing.T) {
	data := fixture(t, docPath(t))
	_, state, _ := readDoc(t, data, nil)
	for _, bad := range [][]byte{data[:len(data)/2], nil, []byte(`[]`), []byte("{\"title\":\"\xff\"}")} {
		evs, after, err := readDoc(t, bad, state)
		if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 || string(after) != string(state) {
			t.Errorf("%.20q: %d events, err %v; want ErrMalformed, nothing, the state kept", bad, len(evs), err)
		}
	}
}

// A companion file is read line by line; the session's metadata comes from its document, a result
// on a later line carries its call's id.
func TestCompanion(t *testing.T) {
	src := transcript.Source{Client: Client, Path: companionPath(t), SessionID: splitID}
	lines := transcripttest.ReadLines(t, src.Path)
	p, err := New(nil).NewParser(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	var state []byte
	for i, l := range lines {
		if i == 2 { // resume from the state after two lines, as the watcher does after a restart
			state = p.State()
			if p, err = New(nil).NewParser(src, state); err != nil {
				t.Fatal(err)
			}
		}
		got, err := p.Record(int64(i), l)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, got...)
	}
	transcripttest.CheckEvents(t, evs)
	if n := len(byKind(evs, event.KindTokenUsage)); n != 0 {
		t.Errorf("%d token_usage events", n)
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 1 || sess[0].Session.Cwd != "/home/dev/pipelines" || sess[0].SessionID != splitID ||
		!sess[0].Time.Equal(time.Date(2026, 3, 11, 9, 15, 0, 0, time.UTC)) {
		t.Fatalf("session events %+v: want one start from the document (no placeholder title)", sess)
	}
	var call, result *event.Event
	for i := range evs {
		if a := evs[i].Action; a != nil && a.Type == event.ActionEditFile {
			if a.Success == nil {
				call = &evs[i]
			} else {
				result = &evs[i]
			}
		}
	}
	if call == nil || result == nil || call.ID != result.ID || call.Action.Target != "dags/load.py" || !*result.Action.Success ||
		result.Action.Output != "Edited dags/load.py (1 line)" {
		t.Fatalf("edit call %+v and result %+v: want one id, the path in the project, then success", call, result)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
		if e.Project != "/home/dev/pipelines" || e.Time.Before(time.Date(2026, 3, 11, 9, 15, 4, 0, time.UTC)) {
			t.Errorf("message %+v: want the project and the prompt's time", e)
		}
	}
	if got := strings.Join(roles, ","); got != "user,thinking,tool_call,assistant" {
		t.Errorf("message roles %s", got)
	}

	// A bad line is malformed and loses nothing else.
	p, _ = New(nil).NewParser(src, state)
	if evs, err := p.Record(0, []byte(`{"role":"assistant","content":[{"type":`)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
		t.Errorf("truncated line: %d events, %v", len(evs), err)
	}
	if evs, err := p.Record(1, lines[3]); err != nil || len(evs) != 1 || evs[0].Message.Text != "Done: the DAG is now load_daily." {
		t.Errorf("the next line: %+v, %v", evs, err)
	}
	if st := p.Stats(); st.Lines != 2 || st.Malformed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvHome, "/tmp/sf")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/sf/cortex/conversations" {
		t.Errorf("DefaultRoots with SNOWFLAKE_HOME: %v", got)
	}
	t.Setenv(EnvHome, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".snowflake", "cortex", "conversations") {
		t.Errorf("DefaultRoots (Linux and macOS alike): %v", got)
	}
}
