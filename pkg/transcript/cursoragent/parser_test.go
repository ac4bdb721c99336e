package cursoragent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/cursor, a ~/.cursor laid out as Cursor keeps it) are written here to the
// format the public readers describe (see the package doc): a cursor-agent conversation with its
// chat directory's meta.json (timestamp tags, Shell, Read, Grep, StrReplace, Glob, TodoWrite, an
// MCP call, a WebFetch, a turn that ended in an error and one the user aborted), an editor
// conversation without a chat directory (no timestamp tags, a Task with its subagent's file)
// and an older plain-text transcript, which is not read.
const (
	cliID = "3f6c1a52-9a0e-4c1b-8d2e-5b7a9c0d1e2f"
	ideID = "7b1e2d3c-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
	subID = "9c2d4e6f-1a3b-4c5d-8e9f-0a1b2c3d4e5f"
)

var (
	projects = filepath.Join("testdata", "cursor", "projects")
	cliFile  = filepath.Join(projects, "home-dev-api-server", "agent-transcripts", cliID, cliID+".jsonl")
	ideFile  = filepath.Join(projects, "home-dev-webapp", "agent-transcripts", ideID, ideID+".jsonl")
	subFile  = filepath.Join(projects, "home-dev-webapp", "agent-transcripts", ideID, "subagents", subID+".jsonl")
)

var check = transcripttest.Envelope(Client, Component)

// parse reads path in one pass with a's parser for src.
func parse(t *testing.T, a *Adapter, src transcript.Source) ([]event.Event, transcript.Parser) {
	t.Helper()
	if src.Client == "" {
		src.Client = Client
	}
	return transcripttest.ParseFile(t, a.NewParser, src, check)
}

func abs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
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

func actionsOf(evs []event.Event, ty event.ActionType) []*event.Action {
	var out []*event.Action
	for _, e := range evs {
		if e.Action != nil && e.Action.Type == ty {
			out = append(out, e.Action)
		}
	}
	return out
}

func TestAdapter_Discover(t *testing.T) {
	root := abs(t, projects)
	srcs, err := New([]string{projects, filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Path != abs(t, cliFile) || srcs[0].SessionID != cliID || srcs[0].AgentID != "" || srcs[0].Client != Client {
		t.Fatalf("Discover: %+v, want the CLI conversation only (the one with a chat directory beside the projects)", srcs)
	}

	a := New([]string{root})
	a.IDE = true
	srcs, err = a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	want := []transcript.Source{
		{Client: Client, Path: abs(t, cliFile), SessionID: cliID},
		{Client: Client, Path: abs(t, ideFile), SessionID: ideID},
		{Client: Client, Path: abs(t, subFile), SessionID: ideID, AgentID: subID},
	}
	if !slices.Equal(srcs, want) {
		t.Fatalf("Discover with IDE:\n%+v\nwant\n%+v (the .txt transcript not listed)", srcs, want)
	}

	// ChatsDirs set elsewhere: the CLI conversation is no longer recognized.
	a = New([]string{root})
	a.ChatsDirs = []string{t.TempDir()}
	if srcs, err := a.Discover(); err != nil || len(srcs) != 0 {
		t.Fatalf("Discover with empty chats: %+v, %v", srcs, err)
	}

	srcs, err = New([]string{filepath.Join(t.TempDir(), "absent")}).Discover()
	if err != nil || len(srcs) != 0 {
		t.Fatalf("Discover on an absent root: %+v, %v; want nothing, no error", srcs, err)
	}
}

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvDataDir, "")
	t.Setenv(EnvConfigDir, "")
	t.Setenv("XDG_CONFIG_HOME", "")
	if got, want := DefaultRoots(), []string{filepath.Join(home, ".cursor", "projects")}; !slices.Equal(got, want) {
		t.Fatalf("DefaultRoots = %v, want %v (the same path on Linux and macOS)", got, want)
	}
	if got, want := DefaultChatsDirs(), []string{filepath.Join(home, ".cursor", "chats")}; !slices.Equal(got, want) {
		t.Fatalf("DefaultChatsDirs = %v, want %v", got, want)
	}
	data, conf, xdg := filepath.Join(home, "data"), filepath.Join(home, "conf"), filepath.Join(home, "xdg")
	t.Setenv(EnvDataDir, data)
	t.Setenv(EnvConfigDir, conf)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if got, want := DefaultRoots(), []string{filepath.Join(data, "projects"), filepath.Join(home, ".cursor", "projects")}; !slices.Equal(got, want) {
		t.Fatalf("DefaultRoots with %s = %v, want %v", EnvDataDir, got, want)
	}
	got := DefaultChatsDirs()
	if got[0] != filepath.Join(conf, "chats") || !slices.Contains(got, filepath.Join(data, "chats")) || got[len(got)-1] != filepath.Join(home, ".cursor", "chats") {
		t.Fatalf("DefaultChatsDirs with %s = %v", EnvConfigDir, got)
	}
	if d := Default(); !slices.Equal(d.Roots, DefaultRoots()) || !slices.Equal(d.ChatsDirs, got) {
		t.Fatalf("Default() = %+v", d)
	}
}

func TestParser_CLIConversation(t *testing.T) {
	a := New([]string{abs(t, projects)})
	path := abs(t, cliFile)
	evs, p := parse(t, a, transcript.Source{Path: path, SessionID: cliID})
	for _, e := range evs {
		if e.SessionID != cliID || e.Project != "/home/dev/api-server" {
			t.Fatalf("event %+v: want the conversation's session and the project of meta.json's cwd", e)
		}
	}
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 || st.Lines != 11 {
		t.Fatalf("stats %+v: want 11 lines, none malformed or unknown", st)
	}
	if u := byKind(evs, event.KindTokenUsage); len(u) != 0 {
		t.Fatalf("%d token_usage events: the transcripts hold no token counts, want none", len(u))
	}

	sess := byKind(evs, event.KindSession)
	created := time.Date(2026, 2, 16, 8, 13, 52, 0, time.UTC)
	if len(sess) != 2 || sess[0].Session.State != event.SessionStarted || !sess[0].Time.Equal(created) ||
		!sess[0].Session.StartedAt.Equal(created) || sess[0].Session.Cwd != "/home/dev/api-server" || sess[0].Session.TranscriptPath != path {
		t.Fatalf("session events %+v: want started at meta.json's createdAtMs in its cwd", sess)
	}
	if s := sess[1]; s.Session.Title != "Fix flaky healthz test" || s.Session.TitleByUser || !s.Time.Equal(time.Date(2026, 2, 16, 8, 40, 0, 0, time.UTC)) {
		t.Fatalf("title event %+v: want meta.json's title at its updatedAtMs", s)
	}

	prompts := actionsOf(evs, event.ActionUserPrompt)
	wantPrompts := []string{"The /healthz test is flaky, find out why and fix it",
		"Check the incident in Linear and the status page, then open a PR", "never mind, stop"}
	if len(prompts) != len(wantPrompts) {
		t.Fatalf("%d prompts, want %d", len(prompts), len(wantPrompts))
	}
	for i, pr := range prompts {
		if pr.Target != wantPrompts[i] || pr.Transcript != path {
			t.Errorf("prompt %d %+v, want %q without its <timestamp> and <user_query> wrapper", i, pr, wantPrompts[i])
		}
	}

	type call struct {
		ty     event.ActionType
		tool   string
		target string
		at     time.Time
	}
	turn1, turn2 := time.Date(2026, 2, 16, 8, 14, 0, 0, time.UTC), time.Date(2026, 2, 16, 8, 31, 0, 0, time.UTC)
	want := []call{
		{event.ActionRunCommand, "Shell", "go test -count=20 ./internal/health/...", turn1},
		{event.ActionReadFile, "Read", "internal/health/handler.go", turn1},
		{event.ActionSearchText, "Grep", "time.Now in internal", turn1},
		{event.ActionEditFile, "StrReplace", "internal/health/handler.go", turn1},
		{event.ActionSearchFiles, "Glob", "**/*_test.go in internal/health", turn1},
		{event.ActionTodoUpdate, "TodoWrite", "", turn1},
		{event.ActionMCPCall, "CallMcpTool", "user-linear/get_issue", turn2},
		{event.ActionWebFetch, "WebFetch", "https://status.example.com/incidents/412", turn2},
	}
	var got []call
	ids := map[string]bool{}
	for _, e := range evs {
		if a := e.Action; a != nil && a.Tool != "" {
			got = append(got, call{a.Type, a.Tool, a.Target, e.Time})
			if a.Success != nil || a.Output != "" || a.InputHash == "" || a.AgentID != "" || a.Sidechain {
				t.Errorf("action %+v: want no outcome (Cursor keeps no tool results), an input hash, the main agent", a)
			}
			ids[e.ID] = true
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tool actions\n%v\nwant\n%v", got, want)
	}
	if len(ids) != len(want) {
		t.Fatalf("%d distinct action ids for %d calls", len(ids), len(want))
	}

	errs := actionsOf(evs, event.ActionAPIError)
	if len(errs) != 1 || errs[0].Error != "Connection to the model provider failed (502)" || errs[0].Success == nil || *errs[0].Success {
		t.Fatalf("api errors %+v: want the turn that ended in an error, failed, with its text", errs)
	}
	if ab := actionsOf(evs, event.ActionTurnAborted); len(ab) != 1 {
		t.Fatalf("aborted turns %+v: want one", ab)
	}

	transcripttest.CheckConversation(t, evs,
		"user\t\tThe /healthz test is flaky, find out why and fix it",
		"assistant\t\tI'll run the health check tests a few times first.",
		"tool_call\tShell\tgo test -count=20 ./internal/health/...",
		"assistant\t\tOne run in twenty fails on a stale timestamp. Let me look at",
		"tool_call\tRead\tinternal/health/handler.go",
		"tool_call\tGrep\ttime.Now in internal",
		"tool_call\tStrReplace\tinternal/health/handler.go",
		"tool_call\tGlob\t**/*_test.go in internal/health",
		"tool_call\tTodoWrite\t",
		"assistant\t\tFixed: the handler now reads the injected clock, and the tes",
		"user\t\tCheck the incident in Linear and the status page, then open ",
		"assistant\t\tLooking up the incident.",
		"tool_call\tCallMcpTool\tuser-linear/get_issue",
		"tool_call\tWebFetch\thttps://status.example.com/incidents/412",
		"user\t\tnever mind, stop",
	)
	transcripttest.UniqueMessageIDs(t, evs)
}

// ideCopy copies the editor conversation (and its subagent's file) under a fresh projects
// directory, dated mtime, and returns the projects directory.
func ideCopy(t *testing.T, slug string, mtime time.Time) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".cursor", "projects")
	for _, f := range []string{ideFile, subFile} {
		rel, _ := filepath.Rel(filepath.Join(projects, "home-dev-webapp"), f)
		dst := filepath.Join(root, slug, rel)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		transcripttest.WriteFile(t, dst, string(data))
		if err := os.Chtimes(dst, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestParser_EditorConversationAndSubagent(t *testing.T) {
	mtime := time.Date(2026, 1, 20, 15, 4, 5, 0, time.UTC)
	root := ideCopy(t, "home-dev-webapp", mtime)
	a := New([]string{root})
	a.IDE = true
	srcs, err := a.Discover()
	if err != nil || len(srcs) != 2 {
		t.Fatalf("Discover: %+v, %v", srcs, err)
	}
	main, _ := parse(t, a, srcs[0])
	sub, _ := parse(t, a, srcs[1])
	for _, e := range append(slices.Clone(main), sub...) {
		if !e.Time.Equal(mtime) || e.SessionID != ideID {
			t.Fatalf("event %+v: want the file's modification time (no <timestamp> tags) and the parent's session", e)
		}
	}
	// The cwd comes from the first tool input under the slug's folder (Shell's working_directory):
	// the events before it have no project.
	var projects []string
	for _, e := range main {
		if len(projects) == 0 || projects[len(projects)-1] != e.Project {
			projects = append(projects, e.Project)
		}
	}
	if !slices.Equal(projects, []string{"", "/home/dev/webapp"}) {
		t.Fatalf("projects along the file %q, want none until the Shell call's working_directory names /home/dev/webapp", projects)
	}
	if s := byKind(main, event.KindSession); len(s) != 1 || s[0].Session.State != event.SessionStarted || s[0].Session.Title != "" {
		t.Fatalf("session events %+v: want the start only (an editor conversation has no meta.json)", s)
	}
	if sp := actionsOf(main, event.ActionSpawnSubagent); len(sp) != 1 || sp[0].Tool != "Task" || sp[0].Target != "Find settings components" {
		t.Fatalf("spawns %+v", sp)
	}
	if w := actionsOf(main, event.ActionWriteFile); len(w) != 1 || w[0].Target != "src/settings/DarkModeToggle.tsx" {
		t.Fatalf("writes %+v: want the path relative to the project", w)
	}

	if s := byKind(sub, event.KindSession); len(s) != 0 {
		t.Fatalf("subagent session events %+v: its parent's file reports the session", s)
	}
	if p := actionsOf(sub, event.ActionUserPrompt); len(p) != 0 {
		t.Fatalf("subagent prompts %+v: a subagent's task is no prompt of the user's", p)
	}
	for _, e := range sub {
		if a := e.Action; a != nil && (a.AgentID != subID || !a.Sidechain) {
			t.Fatalf("subagent action %+v: want its AgentID and Sidechain", a)
		}
		if m := e.Message; m != nil && (m.AgentID != subID || !m.Sidechain) {
			t.Fatalf("subagent message %+v: want its AgentID and Sidechain", m)
		}
	}
	if r := actionsOf(sub, event.ActionReadFile); len(r) != 1 || r[0].Target != "src/settings/SettingsPage.tsx" {
		t.Fatalf("subagent reads %+v", r)
	}
	transcripttest.CheckConversation(t, sub,
		"["+subID+"] user\t\tList the components under src/settings and how the theme is ",
		"["+subID+"] tool_call\tGlob\tsrc/settings/**/*.tsx",
		"["+subID+"] tool_call\tRead\tsrc/settings/SettingsPage.tsx",
		"["+subID+"] assistant\t\tSettingsPage renders ThemeSection; the theme comes from Them",
	)
	// The same offsets in the parent's and the subagent's files are different events.
	ids := map[string]bool{}
	for _, e := range append(slices.Clone(main), sub...) {
		if ids[e.ID] {
			t.Fatalf("id %s twice", e.ID)
		}
		ids[e.ID] = true
	}
}

func TestParser_ProjectFromSlug(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "home", "ann", "my_app.v2")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	slug := strings.Join(tokens(ws), "-")
	root := ideCopy(t, slug, time.Date(2026, 1, 20, 15, 4, 5, 0, time.UTC))
	a := New([]string{root})
	a.IDE = true
	src := transcript.Source{Path: filepath.Join(root, slug, "agent-transcripts", ideID, ideID+".jsonl"), SessionID: ideID}
	evs, _ := parse(t, a, src)
	for _, e := range evs {
		if e.Project != ws {
			t.Fatalf("event %+v: want the project %s, the one folder the slug %s names", e, ws, slug)
		}
	}
	if s := byKind(evs, event.KindSession); s[0].Session.Cwd != ws {
		t.Fatalf("start %+v: want cwd %s", s[0].Session, ws)
	}

	// Two folders encode to the same slug: neither is taken.
	amb := filepath.Join(t.TempDir(), "srv", "a-b")
	for _, d := range []string{amb, filepath.Join(filepath.Dir(amb), "a_b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := resolveSlug(strings.Join(tokens(amb), "-")); got != "" {
		t.Fatalf("resolveSlug of an ambiguous slug = %q, want none", got)
	}
	if got := hintDir("/home/ann/my-app/src/main.go", "home-ann-my-app"); got != "/home/ann/my-app" {
		t.Fatalf("hintDir = %q", got)
	}
}

func TestParser_ReRead(t *testing.T) {
	a := New([]string{abs(t, projects)})
	src := transcript.Source{Client: Client, Path: abs(t, cliFile), SessionID: cliID}
	first, p := parse(t, a, src)
	second, _ := parse(t, a, src)
	transcripttest.SameEvents(t, first, second)

	// Resumed line by line from State: the same events as one pass.
	resumed, err := transcripttest.Resumed(t, a, src)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.SameEvents(t, first, resumed)

	// A parser resumed after the last line, given nothing new, emits nothing.
	p2, err := a.NewParser(src, p.State())
	if err != nil {
		t.Fatal(err)
	}
	if st := p2.State(); string(st) != string(p.State()) {
		t.Fatalf("state changed on load: %s, was %s", st, p.State())
	}
	if strings.Contains(string(p.State()), "healthz") || strings.Contains(string(p.State()), "Fix flaky") {
		t.Fatalf("state %s holds text of the transcript", p.State())
	}

	// An appended file: a parser resumed at the old end emits only the new lines' events.
	lines := transcripttest.ReadLines(t, src.Path)
	dir := t.TempDir()
	path := filepath.Join(dir, "projects", "home-dev-api-server", "agent-transcripts", cliID, cliID+".jsonl")
	var head strings.Builder
	for _, l := range lines[:6] {
		head.Write(l)
		head.WriteByte('\n')
	}
	transcripttest.WriteFile(t, path, head.String())
	b := New([]string{filepath.Join(dir, "projects")})
	copySrc := transcript.Source{Client: Client, Path: path, SessionID: cliID}
	before, pb := parse(t, b, copySrc)
	var tail strings.Builder
	for _, l := range lines[6:] {
		tail.Write(l)
		tail.WriteByte('\n')
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(tail.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pc, err := b.NewParser(copySrc, pb.State())
	if err != nil {
		t.Fatal(err)
	}
	var after []event.Event
	off := int64(len(head.String()))
	for _, l := range lines[6:] {
		evs, err := pc.Record(off, l)
		if err != nil {
			t.Fatal(err)
		}
		after = append(after, evs...)
		off += int64(len(l)) + 1
	}
	all := append(slices.Clone(before), after...)
	// No meta.json beside the copy: compare what does not depend on it.
	if got, want := idsOf2(all), idsOf2(first); !slices.Equal(got, want) {
		t.Fatalf("ids read in two passes differ from one pass:\n%v\n%v", got, want)
	}
	for _, e := range after {
		if e.Kind == event.KindSession {
			t.Fatalf("session event %+v in the appended part: the start was reported before", e)
		}
	}
}

// idsOf2 lists the ids of the events but the session events (which depend on meta.json).
func idsOf2(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind != event.KindSession {
			out = append(out, e.ID)
		}
	}
	return out
}

func TestParser_Malformed(t *testing.T) {
	a := New(nil)
	src := transcript.Source{Client: Client, Path: abs(t, cliFile), SessionID: cliID}
	good := transcripttest.ReadLines(t, cliFile)
	recs := [][]byte{
		good[0],
		[]byte(`{"role":"assistant","message":{"content":[{"type":"text","te`), // cut short
		[]byte("\xff\xfe{}"),
		[]byte(`[{"role":"user"}]`),
		[]byte(`{"role":"user","message":{"content":7}}`),
		good[1],
		[]byte(`{"type":"metadata","x":1}`),
		[]byte(`{"type":"summary"}`),
		[]byte(`{"role":"system","message":{"content":"sys"}}`),
	}
	p, err := a.NewParser(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var off int64
	var errs []error
	var evs []event.Event
	for _, r := range recs {
		e, err := p.Record(off, r)
		if err != nil {
			errs = append(errs, err)
		}
		evs = append(evs, e...)
		off += int64(len(r)) + 1
	}
	if len(errs) != 4 {
		t.Fatalf("errors %v: want 4 malformed lines", errs)
	}
	for _, err := range errs {
		if !errors.Is(err, transcript.ErrMalformed) || !strings.Contains(err.Error(), "line at ") {
			t.Fatalf("error %v: want ErrMalformed naming the line's offset", err)
		}
	}
	st := p.Stats()
	if st.Malformed != 4 || st.Lines != int64(len(recs)) || st.Unknown["type summary"] != 1 || st.Unknown["role system"] != 1 || len(st.Unknown) != 2 {
		t.Fatalf("stats %+v", st)
	}
	if n := len(actionsOf(evs, event.ActionUserPrompt)); n != 1 {
		t.Fatalf("%d prompts: the good lines around the bad ones must still be read", n)
	}
	if n := len(actionsOf(evs, event.ActionRunCommand)); n != 1 {
		t.Fatalf("%d commands: the good lines around the bad ones must still be read", n)
	}
}

func TestParser_NoTime(t *testing.T) {
	src := transcript.Source{Client: Client, Path: "/nowhere/projects/x/agent-transcripts/s/s.jsonl", SessionID: "s"}
	evs, p := transcripttest.ParseLines(t, New(nil).NewParser, src, check,
		`{"role":"user","message":{"content":"<user_query>\nhi\n</user_query>"}}`,
		`{"role":"user","message":{"content":"<timestamp>Friday, Aug 14, 2026, 1:23 PM (UTC-5)</timestamp>\n<user_query>\nnow\n</user_query>"}}`,
		`{"role":"assistant","message":{"content":"ok"}}`,
	)
	if p.Stats().Unknown["line without a time"] != 1 {
		t.Fatalf("stats %+v: want the untimed line counted", p.Stats())
	}
	at := time.Date(2026, 8, 14, 18, 23, 0, 0, time.UTC)
	if len(evs) != 4 || !evs[0].Time.Equal(at) || evs[1].Action.Target != "now" || evs[3].Message.Text != "ok" {
		t.Fatalf("events %+v: want the start, the prompt, its message and the reply at the tag's time", evs)
	}
}

func TestParseTag(t *testing.T) {
	for in, want := range map[string]time.Time{
		"Friday, Aug 14, 2026, 1:23 PM (UTC-5)":        time.Date(2026, 8, 14, 18, 23, 0, 0, time.UTC),
		"Monday, Jul 6, 2026, 7:54 PM (UTC-3)":         time.Date(2026, 7, 6, 22, 54, 0, 0, time.UTC),
		"\nTuesday, Mar 3, 2026, 9:05 AM (UTC+5:30)\n": time.Date(2026, 3, 3, 3, 35, 0, 0, time.UTC),
		"Sunday, Feb 1, 2026, 12:00 AM (UTC)":          time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
		"2026-07-17T07:08:09.123456-06:00":             time.Date(2026, 7, 17, 13, 8, 9, 123456000, time.UTC),
	} {
		if got, ok := parseTag(in); !ok || !got.Equal(want) {
			t.Errorf("parseTag(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "x", "Friday, Aug 14, 2026, 1:23 PM", "Friday, Aug 14, 2026, 1:23 PM (UTC+99)"} {
		if got, ok := parseTag(in); ok {
			t.Errorf("parseTag(%q) = %v, want none", in, got)
		}
	}
	q, at, ok := userText("<timestamp>Friday, Aug 14, 2026, 1:23 PM (UTC-5)</timestamp>\n<user_query>\nfix\n</user_query>\n<user_query>\nand test\n</user_query>")
	if q != "fix\nand test" || !ok || at.Hour() != 18 {
		t.Fatalf("userText = %q, %v, %v", q, at, ok)
	}
	if q, _, ok := userText("plain words"); q != "plain words" || ok {
		t.Fatalf("userText(plain) = %q, %v", q, ok)
	}
}

func TestToolType(t *testing.T) {
	for name, want := range map[string]event.ActionType{
		"Read": event.ActionReadFile, "Write": event.ActionWriteFile, "StrReplace": event.ActionEditFile,
		"ApplyPatch": event.ActionEditFile, "EditNotebook": event.ActionEditFile, "Delete": event.ActionEditFile,
		"Shell": event.ActionRunCommand, "run_terminal_cmd": event.ActionRunCommand, "Grep": event.ActionSearchText,
		"SemanticSearch": event.ActionSearchText, "Glob": event.ActionSearchFiles, "LS": event.ActionSearchFiles,
		"WebSearch": event.ActionWebSearch, "WebFetch": event.ActionWebFetch, "Task": event.ActionSpawnSubagent,
		"Subagent": event.ActionSpawnSubagent, "TodoWrite": event.ActionTodoUpdate, "AskQuestion": event.ActionAskUser,
		"CallMcpTool": event.ActionMCPCall, "CallDynamicTool": event.ActionMCPCall, "FetchMcpResource": event.ActionMCPCall,
		"mcp__github__list_prs": event.ActionMCPCall, "ReadLints": event.ActionUnknown, "SwitchMode": event.ActionUnknown,
	} {
		if got := ToolType(name); got != want {
			t.Errorf("ToolType(%q) = %s, want %s", name, got, want)
		}
	}
	p := &Parser{st: state{Cwd: "/w", Project: "/w"}}
	for _, c := range []struct {
		name string
		in   map[string]any
		want string
	}{
		{"CallDynamicTool", map[string]any{"namespace": "playwright", "toolName": "browser_navigate"}, "playwright/browser_navigate"},
		{"mcp__github__list_prs", map[string]any{}, "github/list_prs"},
		{"ApplyPatch", map[string]any{"patch": "*** Begin Patch\n*** Update File: /w/src/a.ts\n@@\n-a\n+b\n*** End Patch"}, "src/a.ts"},
		{"WebSearch", map[string]any{"search_term": "go 1.26 release notes"}, "go 1.26 release notes"},
		{"ReadLints", map[string]any{"paths": []any{"/w/a.go"}}, ""},
	} {
		if got := p.target(c.name, ToolType(c.name), c.in); got != c.want {
			t.Errorf("target(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestAdapter_WatchDirs(t *testing.T) {
	got := New([]string{projects}).WatchDirs()
	want := []string{projects,
		filepath.Join(projects, "home-dev-api-server", "agent-transcripts"),
		filepath.Join(projects, "home-dev-webapp", "agent-transcripts")}
	if !slices.Equal(got, want) {
		t.Fatalf("WatchDirs = %v, want %v (where a new conversation's directory appears)", got, want)
	}
}

// NewParser finds a conversation's CLI chat directory in an index of the chats directories kept
// on the adapter, not by listing them for every transcript; a chat directory made after the index
// was built is found once its directory's modification time changed.
func TestAdapter_ChatIndex(t *testing.T) {
	base := t.TempDir()
	root, chats := filepath.Join(base, "projects"), filepath.Join(base, "chats")
	const folders, files = 6, 40
	for i := range folders {
		if err := os.MkdirAll(filepath.Join(chats, "folder"+strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	chat := func(id, title string) {
		t.Helper()
		dir := filepath.Join(chats, "folder3", id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := `{"title": "` + title + `", "cwd": "/home/dev/app", "createdAtMs": 1771229632000}`
		if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chat(cliID, "Fix flaky healthz test")
	lists := 0
	defer func(orig func(string) ([]os.DirEntry, error)) { readDir = orig }(readDir)
	readDir = func(dir string) ([]os.DirEntry, error) {
		lists++
		return transcript.ReadDir(dir)
	}
	defer func(orig time.Duration) { chatCheckEvery = orig }(chatCheckEvery)
	chatCheckEvery = time.Hour
	a := New([]string{root})
	a.ChatsDirs = []string{chats}
	parser := func(id string) *Parser {
		t.Helper()
		p, err := a.NewParser(transcript.Source{Client: Client, Path: filepath.Join(root, "home-dev-app", "agent-transcripts", id+".jsonl"), SessionID: id}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p.(*Parser)
	}
	if p := parser(cliID); p.meta.Title != "Fix flaky healthz test" || p.st.Cwd != "/home/dev/app" {
		t.Fatalf("the CLI conversation's parser: meta %+v, cwd %q; want its chat's meta.json", p.meta, p.st.Cwd)
	}
	for i := range files {
		if p := parser(fmt.Sprintf("7b1e2d3c-4a5b-4c6d-8e7f-%012d", i)); p.meta.Title != "" {
			t.Fatalf("an editor conversation's parser found meta %+v", p.meta)
		}
		parser(cliID)
	}
	if lists > 1+folders {
		t.Errorf("%d parsers listed the chats directories %d times, want them listed once (%d directories)", 2*files+1, lists, 1+folders)
	}
	// A chat made since: found at the first miss after chatCheckEvery.
	chatCheckEvery = 0
	newID := "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
	chat(newID, "Add a readiness probe")
	if p := parser(newID); p.meta.Title != "Add a readiness probe" {
		t.Errorf("a chat made after the index: meta %+v, want its meta.json", p.meta)
	}
}
