package claudecode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func sourcesByPath(tb testing.TB, root string, srcs []transcript.Source) map[string]transcript.Source {
	tb.Helper()
	out := map[string]transcript.Source{}
	for _, s := range srcs {
		if s.Client != Client || !filepath.IsAbs(s.Path) {
			tb.Errorf("source %+v", s)
		}
		rel, err := filepath.Rel(root, s.Path)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.ToSlash(rel)] = s
	}
	return out
}

const codemieSession = "4c2ddfdc-b619-4525-8d03-1950fb1b0257"

// checkLayouts checks that the three subagent layouts are attributed to their parent session, in
// Discover's sources and in every event parsed from them.
func checkLayouts(t *testing.T, root string) {
	t.Helper()
	srcs, err := New([]string{root}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	by := sourcesByPath(t, root, srcs)
	want := map[string][2]string{ // path -> session, agent
		"-corpus/" + codemieSession + ".jsonl":                                {codemieSession, ""},
		"-corpus/agent-36541525.jsonl":                                        {codemieSession, "36541525"},
		"-corpus/agent-50243ee8.jsonl":                                        {codemieSession, "50243ee8"},
		"-corpus/incremental-subagents__turn-2.jsonl":                         {"incremental-subagents__turn-2", ""},
		"-corpus/incremental-subagents__turn-2/subagents/agent-a485154.jsonl": {"incremental-subagents__turn-2", "a485154"},
		"-corpus/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl":                  {"fe5e1c67-53e7-4862-81ae-d0e013e3270b", ""},
		"-corpus/ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl":                  {"ff71dbed-a4f2-4284-a4fc-fe2fb90de929", ""},
	}
	for path, w := range want {
		s, ok := by[path]
		if !ok {
			t.Errorf("%s not discovered (have %d sources)", path, len(by))
			continue
		}
		if s.SessionID != w[0] || s.AgentID != w[1] {
			t.Errorf("%s: session %q agent %q, want %q %q", path, s.SessionID, s.AgentID, w[0], w[1])
		}
	}
	if n := len(corpusNames(t)); len(srcs) != n {
		t.Errorf("%d sources for %d corpus files", len(srcs), n)
	}

	// Every event of a subagent file carries the parent session, the agent and the sidechain flag;
	// inline sidechain lines (Claude Code 1.x) stay in their session with the flag set.
	inline := 0
	for path, s := range by {
		evs, _ := parseFile(t, s)
		for _, e := range evs {
			if e.SessionID != s.SessionID {
				t.Fatalf("%s: event session %q, want %q", path, e.SessionID, s.SessionID)
			}
			if s.AgentID != "" {
				if e.Action != nil && (e.Action.AgentID != s.AgentID || !e.Action.Sidechain) {
					t.Fatalf("%s: action %+v", path, e.Action)
				}
				if e.TokenUsage != nil && e.TokenUsage.AgentID != s.AgentID {
					t.Fatalf("%s: usage %+v", path, e.TokenUsage)
				}
			}
			if strings.HasPrefix(path, "-corpus/fe5e1c67") && e.Action != nil && e.Action.Sidechain {
				inline++
			}
		}
	}
	if inline == 0 {
		t.Errorf("no inline sidechain action in fe5e1c67")
	}
}

func TestDiscover_Layouts(t *testing.T) {
	t.Run("Go", func(t *testing.T) { checkLayouts(t, layout(t)) })
	t.Run("GenHistory", func(t *testing.T) {
		script := filepath.Join(corpusDir, "..", "..", "scripts", "gen_history.py")
		if _, err := os.Stat(script); err != nil {
			t.Skip("gen_history.py absent")
		}
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("no python3")
		}
		home := filepath.Join(t.TempDir(), "home")
		if out, err := exec.Command(py, script, "small", home).CombinedOutput(); err != nil {
			t.Fatalf("gen_history.py small: %v\n%s", err, out)
		}
		checkLayouts(t, filepath.Join(home, ".claude", "projects"))
	})
}

func TestDiscover_Edges(t *testing.T) {
	root := filepath.Join(t.TempDir(), "projects")
	proj := filepath.Join(root, "-home-u-app")
	transcripttest.WriteFile(t, filepath.Join(proj, "s1.jsonl"), `{"type":"summary"}`+"\n")
	// An agent file whose first lines carry no session yet, then one that does.
	transcripttest.WriteFile(t, filepath.Join(proj, "agent-b2.jsonl"), `{"type":"summary"}`+"\n"+`{"type":"user","sessionId":"s1","agentId":"b2"}`+"\n")
	transcripttest.WriteFile(t, filepath.Join(proj, "agent-empty.jsonl"), "")
	// 2.1 layout with a meta file naming the agent, and one whose meta is damaged.
	transcripttest.WriteFile(t, filepath.Join(proj, "s1", "subagents", "agent-c3.jsonl"), "")
	transcripttest.WriteFile(t, filepath.Join(proj, "s1", "subagents", "agent-c3.meta.json"), `{"agentType":"Explore","agentId":"c3-full"}`)
	transcripttest.WriteFile(t, filepath.Join(proj, "s1", "subagents", "agent-d4.jsonl"), "")
	transcripttest.WriteFile(t, filepath.Join(proj, "s1", "subagents", "agent-d4.meta.json"), `{not json`)
	// Not transcripts: other files, a session's tool-results directory, a file at the root.
	transcripttest.WriteFile(t, filepath.Join(proj, "s1", "tool-results", "x.txt"), "x")
	transcripttest.WriteFile(t, filepath.Join(proj, "notes.md"), "x")
	transcripttest.WriteFile(t, filepath.Join(root, "stray.jsonl"), "{}")

	a := New([]string{root, filepath.Join(t.TempDir(), "missing"), root})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	by := sourcesByPath(t, root, srcs)
	want := map[string][2]string{
		"-home-u-app/s1.jsonl":                    {"s1", ""},
		"-home-u-app/agent-b2.jsonl":              {"s1", "b2"},
		"-home-u-app/agent-empty.jsonl":           {"", "empty"},
		"-home-u-app/s1/subagents/agent-c3.jsonl": {"s1", "c3-full"},
		"-home-u-app/s1/subagents/agent-d4.jsonl": {"s1", "d4"},
	}
	if len(by) != len(want) {
		t.Errorf("sources %v", by)
	}
	for path, w := range want {
		if s := by[path]; s.SessionID != w[0] || s.AgentID != w[1] {
			t.Errorf("%s: %+v, want %v", path, s, w)
		}
	}
	for i := 1; i < len(srcs); i++ {
		if srcs[i-1].Path >= srcs[i].Path {
			t.Errorf("not sorted: %s, %s", srcs[i-1].Path, srcs[i].Path)
		}
	}
}

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	got := DefaultRoots()
	want := []string{filepath.Join(home, ".claude", "projects"), filepath.Join(home, ".config", "claude", "projects")}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("default %v", got)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "/a/work, ~/personal ,,/a/work")
	got = DefaultRoots()
	want = []string{"/a/work/projects", filepath.Join(home, "personal", "projects")}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("CLAUDE_CONFIG_DIR list: %v", got)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "/only")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/only/projects" {
		t.Errorf("one dir: %v", got)
	}
}
