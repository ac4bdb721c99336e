package gemini

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// Gemini CLI's layout: short-name project directories with .project_root, a legacy hash
// directory named in projects.json, .json and .jsonl sessions, a subagent directory, and files
// that are not sessions.
func TestAdapter_DiscoverGemini(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".gemini")
	header := `{"sessionId":"s1","projectHash":"x","startTime":"2026-03-01T10:00:00Z","kind":"main"}` + "\n"
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", "app", ".project_root"), "/src/app\n")
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", "app", "chats", "session-2026-03-01T10-00-s1.jsonl"), header)
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", "app", "chats", "session-2026-02-01T10-00-s0.json"), `{"sessionId":"s0","messages":[]}`)
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", "app", "chats", "s1", "sub-1.jsonl"), `{"sessionId":"sub-1","kind":"subagent"}`+"\n")
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", "app", "chats", "session-x.jsonl.tmp-42"), "")
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", "app", "chats", "notes.txt"), "")
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", "app", "logs.json"), "[]")
	hash := hashOf("/src/old")
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", hash, "chats", "session-2025-10-01T10-00-s9.json"), `{"sessionId":"s9","messages":[]}`)
	transcripttest.WriteFile(t, filepath.Join(home, "projects.json"), `{"projects":{"/src/old":"old"}}`)

	srcs, err := New([]string{home, filepath.Join(t.TempDir(), "missing")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		rel, _ := filepath.Rel(home, s.Path)
		got = append(got, strings.Join([]string{rel, s.SessionID, s.AgentID, map[bool]string{true: "doc"}[s.Document]}, "|"))
	}
	want := []string{
		"tmp/" + hash + "/chats/session-2025-10-01T10-00-s9.json|||doc",
		"tmp/app/chats/s1/sub-1.jsonl|s1|sub-1|",
		"tmp/app/chats/session-2026-02-01T10-00-s0.json|||doc",
		"tmp/app/chats/session-2026-03-01T10-00-s1.jsonl|||",
	}
	if !slices.Equal(got, want) {
		t.Errorf("discovered:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for path, root := range map[string]string{
		srcs[0].Path: "/src/old", // the hash directory's path, from projects.json
		srcs[1].Path: "/src/app", // a subagent's project, two levels up
		srcs[3].Path: "/src/app",
	} {
		if r, _ := locate(path); r != root {
			t.Errorf("locate(%s) = %q, want %q", path, r, root)
		}
	}
	// The subagent file's events belong to the parent session, keyed by its own.
	p, err := New(nil).newParser(srcs[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Record(0, []byte(`{"sessionId":"sub-1","projectHash":"x","startTime":"2026-03-01T10:00:00Z","kind":"subagent"}`))
	evs, err := p.Record(1, []byte(`{"id":"m","timestamp":"2026-03-01T10:00:01Z","type":"gemini","model":"gemini-3-flash","tokens":{"input":5,"output":1,"total":6}}`))
	if err != nil || len(evs) != 1 || evs[0].SessionID != "s1" || evs[0].TokenUsage.AgentID != "sub-1" ||
		evs[0].ID != UsageID(Client, "sub-1", "m") || evs[0].Project != "/src/app" {
		t.Errorf("subagent events %+v %v", evs, err)
	}
}

// Qwen Code's layout: projects/<cwd>/chats (and archive) sessions named by uuid, subagent files,
// and Gemini CLI's legacy tmp layout under the same home.
func TestAdapter_DiscoverQwen(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".qwen")
	id := "d64be3cc-0429-4e8f-9ddd-cb9bced7c1c1"
	transcripttest.WriteFile(t, filepath.Join(home, "projects", "-work-q", "chats", id+".jsonl"), "")
	transcripttest.WriteFile(t, filepath.Join(home, "projects", "-work-q", "chats", id+".ledger.jsonl"), "")
	transcripttest.WriteFile(t, filepath.Join(home, "projects", "-work-q", "chats", "archive", "0b3e7d8a-0000-4000-8000-000000000001.jsonl"), "")
	transcripttest.WriteFile(t, filepath.Join(home, "projects", "-work-q", "subagents", id, "agent-a1.jsonl"), "")
	transcripttest.WriteFile(t, filepath.Join(home, "projects", "-work-q", "subagents", id, "agent-a1.meta.json"), "{}")
	transcripttest.WriteFile(t, filepath.Join(home, "tmp", hashOf("/work/q"), "chats", "session-2025-09-01T10-00-abcd.json"), "{}")
	srcs, err := NewQwen([]string{home}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		rel, _ := filepath.Rel(home, s.Path)
		got = append(got, rel+"|"+s.SessionID+"|"+s.AgentID+"|"+s.Client)
	}
	want := []string{
		"projects/-work-q/chats/archive/0b3e7d8a-0000-4000-8000-000000000001.jsonl|0b3e7d8a-0000-4000-8000-000000000001||qwen-code",
		"projects/-work-q/chats/" + id + ".jsonl|" + id + "||qwen-code",
		"projects/-work-q/subagents/" + id + "/agent-a1.jsonl|" + id + "|a1|qwen-code",
		"tmp/" + hashOf("/work/q") + "/chats/session-2025-09-01T10-00-abcd.json|||qwen-code",
	}
	if !slices.Equal(got, want) {
		t.Errorf("discovered:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The default roots on Linux and macOS, and the clients' own overrides.
func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("QWEN_HOME", "")
	t.Setenv("QWEN_RUNTIME_DIR", "")
	if got := DefaultRoots(); !slices.Equal(got, []string{filepath.Join(home, ".gemini"), filepath.Join(home, ".cache", ".gemini")}) {
		t.Errorf("gemini roots = %v", got)
	}
	if got := DefaultQwenRoots(); !slices.Equal(got, []string{filepath.Join(home, ".qwen")}) {
		t.Errorf("qwen roots = %v", got)
	}
	t.Setenv("GEMINI_CLI_HOME", "/alt")
	t.Setenv("QWEN_HOME", "/q/home")
	t.Setenv("QWEN_RUNTIME_DIR", "/q/run")
	if got := DefaultRoots(); !slices.Equal(got, []string{"/alt/.gemini"}) {
		t.Errorf("gemini roots with GEMINI_CLI_HOME = %v", got)
	}
	if got := DefaultQwenRoots(); !slices.Equal(got, []string{"/q/run", "/q/home"}) {
		t.Errorf("qwen roots = %v", got)
	}
}

// The project root found from the paths a file names, verified by the projectHash; a guess from
// the <session_context> only when nothing verifies.
func TestParser_ProjectFromHash(t *testing.T) {
	raw := []byte(`{"output":"Successfully overwrote file: /home/u/repo/app/src/x.go. Here","p":"x\n/opt/other"}`)
	var got []string
	absPaths(raw, func(p string) bool { got = append(got, p); return true })
	if !slices.Equal(got, []string{"/home/u/repo/app/src/x.go.", "/opt/other"}) {
		t.Errorf("paths = %q", got)
	}
	p, _ := New(nil).newParser(transcript.Source{Client: Client, Path: "/nowhere/x.jsonl"}, nil)
	p.st.ProjectHash = hashOf("/home/u/repo/app")
	p.verify(raw)
	if p.st.Root != "/home/u/repo/app" || !p.st.Sure {
		t.Errorf("root %q sure %v", p.st.Root, p.st.Sure)
	}
	if d := contextRoot("<session_context>\n- **Workspace Directories:**\n  - /w/one\n  - /w/two\n- **Directory Structure:**"); d != "/w/one" {
		t.Errorf("workspace = %q", d)
	}
	if d := contextRoot("I'm currently working in the directory: /w/old\nHere is"); d != "/w/old" {
		t.Errorf("old context = %q", d)
	}
}
