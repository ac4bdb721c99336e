package crush

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/internal/ingest/ingesttest"
	"github.com/observerhq/observer/pkg/event"
)

func writeJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

func touch(tb testing.TB, path string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Crush's global data directory is decided as Crush decides it, and OBSERVER_CRUSH_DIRS replaces
// it.
func TestDefaultDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{EnvDirs, "CRUSH_GLOBAL_DATA", "XDG_DATA_HOME"} {
		t.Setenv(k, "")
	}
	if got := DefaultDirs(); !slices.Equal(got, []string{filepath.Join(home, ".local", "share", "crush")}) {
		t.Errorf("default %v", got)
	}
	t.Setenv("XDG_DATA_HOME", "/xdg")
	if got := DefaultDirs(); !slices.Equal(got, []string{filepath.Join("/xdg", "crush")}) {
		t.Errorf("XDG_DATA_HOME: %v", got)
	}
	t.Setenv("CRUSH_GLOBAL_DATA", "/global")
	if got := DefaultDirs(); !slices.Equal(got, []string{"/global"}) {
		t.Errorf("CRUSH_GLOBAL_DATA: %v", got)
	}
	t.Setenv(EnvDirs, "/a"+string(os.PathListSeparator)+" ~/b ")
	if got := DefaultDirs(); !slices.Equal(got, []string{"/a", filepath.Join(home, "b")}) {
		t.Errorf("%s: %v", EnvDirs, got)
	}
}

// Discover lists the database of every project projects.json names (with its project directory),
// a database in the directory itself or in its .crush, and passes over what is missing.
func TestDiscover(t *testing.T) {
	root := t.TempDir()
	global := filepath.Join(root, "share", "crush")
	projA := filepath.Join(root, "a")
	custom := filepath.Join(root, "elsewhere", "data")
	writeJSON(t, filepath.Join(global, "projects.json"), map[string]any{"projects": []map[string]any{
		{"path": projA, "data_dir": filepath.Join(projA, ".crush"), "last_accessed": "2026-01-01T00:00:00Z"},
		{"path": filepath.Join(root, "b"), "data_dir": custom, "last_accessed": "2026-01-01T00:00:00Z"},
		{"path": filepath.Join(root, "gone"), "data_dir": filepath.Join(root, "gone", ".crush")},
		{"path": filepath.Join(root, "c"), "data_dir": "rel-data"},
		{"path": "", "data_dir": ""},
	}})
	touch(t, filepath.Join(projA, ".crush", "crush.db"))
	touch(t, filepath.Join(custom, "crush.db"))
	touch(t, filepath.Join(root, "c", "rel-data", "crush.db"))
	touch(t, filepath.Join(global, ".crush", "crush.db"))
	touch(t, filepath.Join(global, ".crush", "crush.db-wal"))
	flat := filepath.Join(root, "flat")
	touch(t, filepath.Join(flat, "crush.db"))
	a := New([]string{global, flat, filepath.Join(root, "missing")})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		if !s.Database || s.Client != Client {
			t.Errorf("source %+v", s)
		}
		got = append(got, s.Path)
	}
	want := []string{filepath.Join(projA, ".crush", "crush.db"), filepath.Join(root, "c", "rel-data", "crush.db"),
		filepath.Join(custom, "crush.db"), filepath.Join(flat, "crush.db"), filepath.Join(global, ".crush", "crush.db")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("sources\n got %v\nwant %v", got, want)
	}
	for db, proj := range map[string]string{
		filepath.Join(projA, ".crush", "crush.db"): projA, filepath.Join(custom, "crush.db"): filepath.Join(root, "b"),
		filepath.Join(flat, "crush.db"): "", filepath.Join(global, ".crush", "crush.db"): global,
	} {
		if got := a.projectDir(db); got != proj {
			t.Errorf("project of %s: %q, want %q", db, got, proj)
		}
	}
	// A fresh adapter (no Discover yet) finds the project from projects.json too.
	if got := New([]string{global}).projectDir(filepath.Join(custom, "crush.db")); got != filepath.Join(root, "b") {
		t.Errorf("project before Discover: %q", got)
	}
	watch := a.WatchDirs()
	for _, d := range []string{global, flat, filepath.Join(projA, ".crush"), custom} {
		if !slices.Contains(watch, d) {
			t.Errorf("watch dirs %v lack %s", watch, d)
		}
	}
}

func TestToolType(t *testing.T) {
	for name, want := range map[string]event.ActionType{
		"view": event.ActionReadFile, "write": event.ActionWriteFile, "edit": event.ActionEditFile,
		"multiedit": event.ActionEditFile, "bash": event.ActionRunCommand, "grep": event.ActionSearchText,
		"glob": event.ActionSearchFiles, "ls": event.ActionSearchFiles, "fetch": event.ActionWebFetch,
		"agentic_fetch": event.ActionWebFetch, "download": event.ActionWebFetch, "sourcegraph": event.ActionWebSearch,
		"web_search": event.ActionWebSearch, "agent": event.ActionSpawnSubagent, "todos": event.ActionTodoUpdate,
		"mcp_github_create_issue": event.ActionMCPCall, "mcp_": event.ActionUnknown, "diagnostics": event.ActionUnknown,
		"lsp_diagnostics": event.ActionUnknown, "job_output": event.ActionUnknown, "": event.ActionUnknown,
	} {
		if got := ToolType(name); got != want {
			t.Errorf("ToolType(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestTarget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := &Parser{dir: dir, root: dir}
	for _, c := range []struct{ tool, in, want string }{
		{"view", `{"file_path":"` + filepath.Join(dir, "cmd", "main.go") + `","offset":0}`, filepath.Join("cmd", "main.go")},
		{"write", `{"file_path":"/etc/hosts","content":"x"}`, "/etc/hosts"},
		{"multiedit", `{"file_path":"a/b.go","edits":[]}`, filepath.Join("a", "b.go")},
		{"bash", `{"command":"  go build ./...  "}`, "go build ./..."},
		{"grep", `{"pattern":"func main","path":"` + dir + `","include":"*.go"}`, "func main in ."},
		{"glob", `{"pattern":"**/*.md"}`, "**/*.md"},
		{"ls", `{}`, "."},
		{"fetch", `{"url":"https://example.com","format":"text"}`, "https://example.com"},
		{"download", `{"url":"https://example.com/x.tgz","file_path":"x.tgz"}`, "https://example.com/x.tgz"},
		{"sourcegraph", `{"query":"repo:x lang:go"}`, "repo:x lang:go"},
		{"agent", `{"prompt":"find the tests"}`, "find the tests"},
		{"todos", `{"todos":[{"content":"a"}]}`, "1 item"},
		{"diagnostics", `{"file_path":"x.go"}`, "x.go"},
		{"mcp_fs_read", `{"path":"` + filepath.Join(dir, "r.txt") + `"}`, "r.txt"},
		{"bash", `{"command":"echo`, ""},
		{"bash", ``, ""},
	} {
		if got := p.target(c.tool, []byte(c.in)); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.tool, c.in, got, c.want)
		}
	}
}

// TestIngest_Scan drives a project's database through internal/ingest as `observerctl scan` and
// observer-watch do: a scan reads it, a scan with no change reads nothing, and rows Crush adds
// are read at the next scan, once.
func TestIngest_Scan(t *testing.T) {
	dir, path := newProject(t)
	global := filepath.Join(filepath.Dir(dir), "global")
	writeJSON(t, filepath.Join(global, "projects.json"), map[string]any{"projects": []map[string]any{
		{"path": dir, "data_dir": filepath.Dir(path)}}})
	db := newDB(t, path, false)
	execT(t, db, insSession, rootID, nil, "t", t0, t0)
	execT(t, db, insMessage, "m1", rootID, "user", parts(t, pText{Text: "hello"}, pFinish{Reason: "stop"}), nil, nil, t0, t0)
	scan := ingesttest.NewScan(t, New([]string{global}))
	if sum := scan.Run(); sum.Events != 3 || len(scan.Published) != 3 {
		t.Fatalf("first scan: %+v, published %d; want a session, a prompt and its message", sum, len(scan.Published))
	}
	if scan.Published[0].Session == nil || scan.Published[0].Session.Cwd != dir || scan.Published[1].Project != dir {
		t.Errorf("session %+v project %q, want cwd and project %s", scan.Published[0].Session, scan.Published[1].Project, dir)
	}
	if sum := scan.Run(); sum.Read != 0 || sum.Events != 0 {
		t.Fatalf("second scan with no change: %+v", sum)
	}
	execT(t, db, insMessage, "m2", rootID, "user", parts(t, pText{Text: "again"}, pFinish{Reason: "stop"}), nil, nil, t0+5, t0+5)
	execT(t, db, insMessage, "m-bad", rootID, "user", "[", nil, nil, t0+6, t0+6)
	sum := scan.Run()
	if sum.Events != 2 || sum.Malformed != 1 { // the prompt and its message
		t.Fatalf("scan after new rows: %+v", sum)
	}
	if got := scan.Last(); got.ID != event.ID(Client, "prompt", "m2") {
		t.Errorf("last event %s, want m2's prompt", got.ID)
	}
	if sum := scan.Run(); sum.Events != 0 {
		t.Fatalf("scan after that: %+v", sum)
	}
}
