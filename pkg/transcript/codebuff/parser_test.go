package codebuff

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/manicode, a channel directory) are written here to the format Codebuff's
// source describes (see the package doc): a chat of the CLI as its source writes it (times of day,
// credits and no usage, the directory in run-state.json beside it: reasoning, a read, a search, an
// edit, a test run failing by its exit code, a subagent with its own read, a lint run, an
// answered question, an error message), a chat whose messages carry the usage objects published
// readers look for (an Anthropic-style and an OpenAI-style one, the directory in a message's
// runState, a write that failed), and a chat caught half-written.
const (
	webapp  = "2026-02-03T09-15-00.000Z"
	clitool = "2026-02-04T14-00-00.000Z"
	partial = "2026-02-05T08-00-00.000Z"
)

var chatPaths = map[string]string{
	webapp:  filepath.Join("testdata", "manicode", "projects", "webapp", "chats", webapp, MessagesFile),
	clitool: filepath.Join("testdata", "manicode", "projects", "cli-tool", "chats", clitool, MessagesFile),
	partial: filepath.Join("testdata", "manicode", "projects", "cli-tool", "chats", partial, MessagesFile),
}

func init() { local = time.UTC } // the fixtures' times of day were written in UTC

func source(t *testing.T, id string) transcript.Source {
	t.Helper()
	path, err := filepath.Abs(chatPaths[id])
	if err != nil {
		t.Fatal(err)
	}
	return transcript.Source{Client: Client, Path: path, SessionID: id, Document: true}
}

// read parses a chat whole, from state, and returns its events and the new state.
func read(t *testing.T, id string, state []byte) ([]event.Event, []byte) {
	t.Helper()
	src := source(t, id)
	data, err := os.ReadFile(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	return readDoc(t, src, data, state)
}

func readDoc(t *testing.T, src transcript.Source, doc []byte, state []byte) ([]event.Event, []byte) {
	t.Helper()
	p, err := New(nil).NewParser(src, state)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := p.Record(0, doc)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckEvents(t, evs)
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

func actions(evs []event.Event) map[string]*event.Action {
	out := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		out[transcript.FirstNonEmpty(e.Action.ToolUseID, e.Action.MessageID)+"|"+string(e.Action.Type)] = e.Action
	}
	return out
}

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "manicode"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range srcs {
		if !s.Document || s.Client != Client || !filepath.IsAbs(s.Path) || filepath.Base(s.Path) != MessagesFile {
			t.Errorf("source %+v: want an absolute chat-messages.json, a document of %s", s, Client)
		}
		ids = append(ids, s.SessionID)
	}
	if got := strings.Join(ids, ","); got != clitool+","+partial+","+webapp {
		t.Errorf("Discover sessions %s, want the three chats (not settings.json, not run-state.json)", got)
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "none")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestWatchDirs(t *testing.T) {
	root := filepath.Join("testdata", "manicode")
	got := strings.Join(New([]string{root}).WatchDirs(), "\n")
	for _, want := range []string{root, filepath.Join(root, "projects"), filepath.Join(root, "projects", "webapp", "chats"),
		filepath.Join(root, "projects", "cli-tool", "chats")} {
		if !strings.Contains(got+"\n", want+"\n") {
			t.Errorf("WatchDirs %q lacks %s", got, want)
		}
	}
}

// The CLI's own chat: no token counts, so no token_usage; the directory from run-state.json.
func TestChat_CLI(t *testing.T) {
	evs, _ := read(t, webapp, nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != webapp || e.Project != "/home/dev/webapp" || e.Source != Component {
			t.Fatalf("event %+v: want client codebuff, the chat's session and the project of run-state.json's cwd", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 1 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/webapp" ||
		!sess[0].Time.Equal(time.Date(2026, 2, 3, 9, 15, 0, 0, time.UTC)) {
		t.Fatalf("session events %+v: want one started at the chat id's time in /home/dev/webapp", sess)
	}
	if u := byKind(evs, event.KindTokenUsage); len(u) != 0 {
		t.Errorf("%d token_usage events from a chat that keeps only credits, want none", len(u))
	}
	acts := actions(evs)
	counts := map[event.ActionType]int{}
	for _, a := range acts {
		counts[a.Type]++
	}
	want := map[event.ActionType]int{event.ActionUserPrompt: 2, event.ActionReadFile: 2, event.ActionSearchText: 1,
		event.ActionEditFile: 1, event.ActionRunCommand: 2, event.ActionSpawnSubagent: 1, event.ActionAskUser: 1, event.ActionAPIError: 1}
	for typ, n := range want {
		if counts[typ] != n {
			t.Errorf("%d %s actions, want %d (all: %v)", counts[typ], typ, n, counts)
		}
	}
	if len(counts) != len(want) {
		t.Errorf("action types %v, want %v (the spawn_agents call its agent block stands for is not counted twice)", counts, want)
	}
	check := func(key string, typ event.ActionType, target string, ok bool, errPart string) {
		t.Helper()
		a := acts[key+"|"+string(typ)]
		switch {
		case a == nil:
			t.Errorf("no %s action %s", typ, key)
		case a.Target != target || a.Success == nil || *a.Success != ok || !strings.Contains(a.Error, errPart):
			t.Errorf("%s %s: %+v, want target %q, success %v, error with %q", typ, key, a, target, ok, errPart)
		}
	}
	check("toolu_01HXq9", event.ActionReadFile, "src/components/SignupForm.tsx", true, "")
	check("toolu_02Lm4c", event.ActionSearchText, "validateEmail in src", true, "")
	check("toolu_03Pz7e", event.ActionEditFile, "src/components/SignupForm.tsx", true, "")
	check("toolu_04Rt2a", event.ActionRunCommand, "npm test -- SignupForm", false, "1 failing test")
	check("toolu_07Lt0q", event.ActionRunCommand, "npm run lint", true, "")
	check("agent-6d1e90", event.ActionSpawnSubagent, "Review the email validation change in SignupForm", true, "")
	check("toolu_08As5u", event.ActionAskUser, "Commit the change now?", true, "")
	if a := acts["toolu_04Rt2a|run_command"]; a == nil || !strings.Contains(a.Output, "rejects an empty email") || a.Tool != "run_terminal_command" {
		t.Errorf("failed test run %+v: want its stdout as output and the raw tool name", a)
	}
	if a := acts["toolu_06Vw3k|read_file"]; a == nil || a.AgentID != "agent-6d1e90" || !a.Sidechain || a.Target != "src/lib/validate.ts" {
		t.Errorf("the subagent's read %+v: want its agent id, sidechain", a)
	}
	if a := acts["toolu_01HXq9|read_file"]; a == nil || a.AgentID != "" || !strings.Contains(a.Output, "no validation yet") {
		t.Errorf("the main agent's read %+v: want no agent id, the file as output", a)
	}
	var prompts []string
	for _, a := range acts {
		if a.Type == event.ActionUserPrompt {
			prompts = append(prompts, a.Target)
		}
	}
	if got := strings.Join(prompts, "|"); !strings.Contains(got, "accepts empty emails") || !strings.Contains(got, "also run the linter") {
		t.Errorf("prompts %q", got)
	}
	if a := byKind(evs, event.KindAction); len(a) > 0 {
		var errEv *event.Event
		for i := range a {
			if a[i].Action.Type == event.ActionAPIError {
				errEv = &a[i]
			}
		}
		if errEv == nil || !strings.Contains(errEv.Action.Error, "Out of credits") || !errEv.Time.Equal(time.Date(2026, 2, 3, 9, 25, 0, 0, time.UTC)) {
			t.Errorf("api error %+v: want the error message at 9:25 on the chat's day", errEv)
		}
	}
	transcripttest.CheckConversation(t, evs,
		"user\t\tThe signup form accepts empty emails; add validation and a t",
		"thinking\t\tThe form probably skips validation when the field is blank. ",
		"assistant\t\tLet me look at the form and its tests.",
		"tool_call\tread_files\tsrc/components/SignupForm.tsx",
		"tool_call\tcode_search\tvalidateEmail in src",
		"tool_call\tstr_replace\tsrc/components/SignupForm.tsx",
		"tool_call\trun_terminal_command\tnpm test -- SignupForm",
		"tool_call\tcode-reviewer\tReview the email validation change in SignupForm",
		"[agent-6d1e90] tool_call\tread_files\tsrc/lib/validate.ts",
		"[agent-6d1e90] assistant\t\tOne nit: trim the value before validating it.",
		"assistant\t\tI added the validation; the test fails on a whitespace-only ",
		"user\t\talso run the linter",
		"tool_call\trun_terminal_command\tnpm run lint",
		"tool_call\task_user\tCommit the change now?",
		"assistant\t\tLint is clean. Leaving the commit to you.",
	)
}

// A chat whose messages carry usage objects: each counted once, the cache figures in their
// buckets, priced.
func TestChat_Usage(t *testing.T) {
	evs, _ := read(t, clitool, nil)
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 2 {
		t.Fatalf("%d usage events, want one per message with usage (2)", len(usage))
	}
	u := usage[0].TokenUsage
	if u.Tokens != (event.Tokens{Input: 1200, Output: 450, CacheCreation: 5210, CacheRead: 18044}) || u.Model != "anthropic/claude-sonnet-4.5" ||
		u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate || u.MessageID != "1770213620500-ai01" ||
		!usage[0].Time.Equal(time.Date(2026, 2, 4, 14, 0, 20, 500e6, time.UTC)) {
		t.Errorf("Anthropic-style usage %+v at %v: want the buckets as they are (input net of the cache), priced", u, usage[0].Time)
	}
	if u := usage[1].TokenUsage; u.Tokens != (event.Tokens{Input: 3000, Output: 800, CacheRead: 9000}) || u.Model != "openai/gpt-5" || u.CostUSD <= 0 {
		t.Errorf("OpenAI-style usage %+v: want the cached tokens taken out of the prompt", u)
	}
	var models []string
	for _, e := range byKind(evs, event.KindSession) {
		if e.Session.State == event.SessionActive {
			models = append(models, e.Session.Model)
		}
		if e.Session.Cwd != "" && e.Session.Cwd != "/home/dev/cli-tool" {
			t.Errorf("session %+v: want the cwd of the message's runState", e.Session)
		}
	}
	if strings.Join(models, ",") != "anthropic/claude-sonnet-4.5,openai/gpt-5" {
		t.Errorf("models reported %v", models)
	}
	acts := actions(evs)
	if a := acts["call_9bX1|read_file"]; a == nil || a.Target != "cmd/version.go" || a.Success == nil || !*a.Success {
		t.Errorf("read %+v: want the absolute path made relative to the project", a)
	}
	if a := acts["call_9bX2|write_file"]; a == nil || a.Success == nil || *a.Success || a.Error != "Permission denied: cmd/version.go" {
		t.Errorf("write %+v: want failed with the tool's errorMessage", a)
	}
	if a := acts["call_9bX3|web_search"]; a == nil || a.Target != "go build ldflags -X main.version" || a.Success == nil || !*a.Success {
		t.Errorf("web search %+v", a)
	}
	for _, e := range evs {
		if e.Project != "/home/dev/cli-tool" {
			t.Fatalf("event %+v: want the project of the runState's cwd", e)
		}
	}
}

func TestReread(t *testing.T) {
	for _, id := range []string{webapp, clitool} {
		first, state := read(t, id, nil)
		if again, _ := read(t, id, state); len(again) != 0 {
			t.Errorf("%s: a re-read emitted %d events", id, len(again))
		}
		fresh, _ := read(t, id, nil)
		if len(fresh) != len(first) {
			t.Fatalf("%s: a read without state emitted %d events, the first %d", id, len(fresh), len(first))
		}
		for i := range fresh {
			if fresh[i].ID != first[i].ID {
				t.Errorf("%s: event %d has id %s, the first read %s", id, i, fresh[i].ID, first[i].ID)
			}
		}
	}
}

// A chat the CLI rewrote with one more turn emits only that turn; a call whose result arrived
// is emitted again under its id with the outcome.
func TestChanged(t *testing.T) {
	src := source(t, clitool)
	data, err := os.ReadFile(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	// The last turn while it ran: the search had no output yet.
	running := strings.Replace(doc, `"output": "Use -ldflags`, `"pending": "Use -ldflags`, 1)
	evs, state := readDoc(t, src, []byte(running), nil)
	if a := actions(evs)["call_9bX3|web_search"]; a == nil || a.Success != nil {
		t.Fatalf("running search %+v: want no outcome yet", a)
	}
	evs, state = readDoc(t, src, data, state)
	if len(evs) != 1 || evs[0].Action == nil || evs[0].Action.ToolUseID != "call_9bX3" || evs[0].Action.Success == nil {
		t.Fatalf("after the result: %d events %+v, want the search again with its outcome", len(evs), evs)
	}
	more := strings.TrimSuffix(strings.TrimSpace(doc), "]") + `,
  {"id": "1770213700000-uq02", "variant": "user", "content": "ship it", "timestamp": "2026-02-04T14:01:40Z"},
  {"id": "1770213705000-ai03", "variant": "ai", "content": "Done.", "timestamp": "2026-02-04T14:01:45Z", "credits": 1,
   "metadata": {"model": "openai/gpt-5", "usage": {"prompt_tokens": 13000, "completion_tokens": 20}}}
]`
	evs, _ = readDoc(t, src, []byte(more), state)
	kinds := map[event.Kind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	if kinds[event.KindAction] != 1 || kinds[event.KindMessage] != 2 || kinds[event.KindTokenUsage] != 1 || len(evs) != 4 {
		t.Errorf("appended turn: %v (%d events), want its prompt, two messages and its usage only", kinds, len(evs))
	}
}

func TestMalformed(t *testing.T) {
	src := source(t, partial)
	data, err := os.ReadFile(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := New(nil).NewParser(src, nil)
	before := p.State()
	for _, bad := range [][]byte{data, nil, []byte(`{"id":"x"}`), []byte("[\"\xff\"]"), []byte(`[{"id":`)} {
		if evs, err := p.Record(0, bad); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%.30q: %d events, err %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	if string(p.State()) != string(before) {
		t.Errorf("state moved on malformed input: %s", p.State())
	}
	if st := p.Stats(); st.Malformed != 5 || st.Lines != 5 {
		t.Errorf("stats %+v", st)
	}
	// The same chat once written whole is read, from the same parser.
	whole := strings.TrimSuffix(string(data), "\n") + ` session"}]`
	evs, err := p.Record(0, []byte(whole))
	if err != nil || len(byKind(evs, event.KindAction)) != 1 {
		t.Errorf("whole chat: %v, %d events", err, len(evs))
	}
	// An odd message or block is passed over, the rest read.
	odd := `[7, {"id":"m","variant":"ai","blocks":[null,{"type":"tool","toolCallId":"c","toolName":"glob","input":{"pattern":"*.go"},"output":"a.go"},{"type":"novel"}],"timestamp":"2026-02-05T08:00:01Z"}]`
	q, _ := New(nil).NewParser(src, nil)
	evs, err = q.Record(0, []byte(odd))
	if err != nil || actions(evs)["c|search_files"] == nil {
		t.Errorf("odd chat: %v, %+v", err, evs)
	}
	if st := q.Stats(); st.Unknown["message not an object"] != 1 || st.Unknown["block novel"] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A time of day is placed on the chat's day and moves to the next day past midnight.
func TestTimeOfDay(t *testing.T) {
	src := transcript.Source{Client: Client, Path: "/x/chats/2026-03-01T23-40-00.000Z/chat-messages.json", SessionID: "2026-03-01T23-40-00.000Z", Document: true}
	doc := `[{"id":"a","variant":"user","content":"late","timestamp":"11:50 PM"},{"id":"b","variant":"user","content":"later","timestamp":"12:05 AM"},{"id":"c","variant":"user","content":"no time"}]`
	evs, _ := readDoc(t, src, []byte(doc), nil)
	var times []string
	for _, e := range byKind(evs, event.KindAction) {
		times = append(times, e.Time.Format(time.RFC3339))
	}
	if got := strings.Join(times, ","); got != "2026-03-01T23:50:00Z,2026-03-02T00:05:00Z,2026-03-02T00:05:00Z" {
		t.Errorf("times %s", got)
	}
}

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvDataDir, "")
	t.Setenv(EnvEnvironment, "")
	want := []string{filepath.Join(home, ".config", "manicode"), filepath.Join(home, ".config", "manicode-dev"), filepath.Join(home, ".config", "manicode-staging")}
	if got := DefaultRoots(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("DefaultRoots %v, want %v (the same on macOS: Codebuff joins the home directory and .config)", got, want)
	}
	t.Setenv(EnvEnvironment, "test")
	if got := DefaultRoots(); len(got) != 4 || got[3] != filepath.Join(home, ".config", "manicode-test") {
		t.Errorf("DefaultRoots with %s=test: %v", EnvEnvironment, got)
	}
	t.Setenv(EnvDataDir, "/data/manicode")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/data/manicode" {
		t.Errorf("DefaultRoots with %s: %v", EnvDataDir, got)
	}
}

// longChat is a chat of n user prompts, the i-th saying text(i).
func longChat(n int, text func(i int) string) string {
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `  {"id": "m%04d", "variant": "user", "content": %q, "timestamp": "2026-02-05T08:%02d:%02dZ"}`, i, text(i), i/60%60, i%60)
	}
	b.WriteString("\n]")
	return b.String()
}

// A chat with more events than any bounded list of fingerprints would hold: a re-read emits
// nothing, a save with one more turn emits that turn alone, an edited message is emitted again,
// and the State stays small.
func TestLongChat(t *testing.T) {
	src := transcript.Source{Client: Client, Path: "/x/chats/2026-02-05T08-00-00.000Z/chat-messages.json", SessionID: "2026-02-05T08-00-00.000Z", Document: true}
	const n = 1500 // 3,000 events and more
	prompt := func(i int) string { return fmt.Sprintf("step %d", i) }
	doc := longChat(n, prompt)
	first, state := readDoc(t, src, []byte(doc), nil)
	if len(first) != 2*n+1 {
		t.Fatalf("first read: %d events, want a start and %d prompts with their messages", len(first), n)
	}
	again, state := readDoc(t, src, []byte(doc), state)
	if len(again) != 0 {
		t.Fatalf("a re-read of a %d-message chat emitted %d events, want none", n, len(again))
	}
	if len(state) > 2048 {
		t.Errorf("state of %d bytes for a %d-message chat, want it small whatever the length", len(state), n)
	}
	grown := longChat(n+1, prompt)
	evs, state := readDoc(t, src, []byte(grown), state)
	if len(evs) != 2 || evs[0].Action == nil || evs[0].Action.Target != prompt(n) {
		t.Fatalf("a save with one more prompt: %d events %+v, want that prompt and its message only", len(evs), evs)
	}
	// The message before the last one edited: emitted again, and little else.
	edited := longChat(n+1, func(i int) string {
		if i == n-1 {
			return "step edited"
		}
		return prompt(i)
	})
	evs, state = readDoc(t, src, []byte(edited), state)
	var targets []string
	for _, e := range evs {
		if e.Action != nil {
			targets = append(targets, e.Action.Target)
		}
	}
	if !slices.Contains(targets, "step edited") || len(evs) > 6 {
		t.Errorf("an edited message: %d events, prompts %q; want the edited one again and few others", len(evs), targets)
	}
	// A message at the chat's start edited: everything is read again, the edit emitted.
	early := longChat(n+1, func(i int) string {
		if i == 3 {
			return "step three"
		}
		if i == n-1 {
			return "step edited"
		}
		return prompt(i)
	})
	evs, _ = readDoc(t, src, []byte(early), state)
	targets = targets[:0]
	for _, e := range evs {
		if e.Action != nil {
			targets = append(targets, e.Action.Target)
		}
	}
	if !slices.Contains(targets, "step three") {
		t.Errorf("an early message edited: prompts %q, want the edited one", targets)
	}
}
