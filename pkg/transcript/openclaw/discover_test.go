package openclaw

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvHome, "")
	t.Setenv(EnvStateDir, "")
	t.Setenv(EnvAgentDir, "")
	if got := DefaultRoots(); !slices.Equal(got, []string{filepath.Join(home, ".openclaw")}) {
		t.Errorf("default roots %q", got)
	}
	// Only the legacy directory exists: OpenClaw uses it.
	os.Mkdir(filepath.Join(home, ".clawdbot"), 0o755)
	if got := StateDir(); got != filepath.Join(home, ".clawdbot") {
		t.Errorf("state dir %q", got)
	}
	// Profiles beside the state directory are read too.
	for _, d := range []string{".openclaw", ".openclaw-work", ".openclaw-dev"} {
		os.Mkdir(filepath.Join(home, d), 0o755)
	}
	os.WriteFile(filepath.Join(home, ".openclaw-notes"), nil, 0o644) // a file, not a profile
	want := []string{filepath.Join(home, ".openclaw"), filepath.Join(home, ".clawdbot"),
		filepath.Join(home, ".openclaw-dev"), filepath.Join(home, ".openclaw-work")}
	if got := DefaultRoots(); !slices.Equal(got, want) {
		t.Errorf("roots %q, want %q", got, want)
	}
	// OPENCLAW_HOME moves the home; OPENCLAW_STATE_DIR the state directory (~ is the user's home).
	other := t.TempDir()
	t.Setenv(EnvHome, other)
	if got := DefaultRoots(); !slices.Equal(got, []string{filepath.Join(other, ".openclaw")}) {
		t.Errorf("roots with OPENCLAW_HOME %q", got)
	}
	t.Setenv(EnvHome, "~/oc-home")
	if got := Home(); got != filepath.Join(home, "oc-home") {
		t.Errorf("home %q", got)
	}
	t.Setenv(EnvStateDir, "/srv/openclaw-state")
	if got := StateDir(); got != "/srv/openclaw-state" {
		t.Errorf("state dir %q", got)
	}
	t.Setenv(EnvAgentDir, "~/agent-x")
	if got := DefaultAgentDirs(); !slices.Equal(got, []string{filepath.Join(home, "agent-x")}) {
		t.Errorf("agent dirs %q", got)
	}
}

func TestAdapter_Discover(t *testing.T) {
	root := t.TempDir()
	writeAbs := func(p, data string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, data string) { writeAbs(filepath.Join(root, rel), data) }
	db, err := os.ReadFile(fixDB)
	if err != nil {
		t.Fatal(err)
	}
	write("agents/main/agent/"+DatabaseName, string(db))
	write("agents/main/agent/"+DatabaseName+"-wal", "")
	write("agents/ops/sessions/0b1c2d3e-0000-4000-8000-000000000001.jsonl", "")
	write("agents/ops/sessions/0b1c2d3e-0000-4000-8000-000000000001.trajectory.jsonl", "")
	write("agents/ops/sessions/0b1c2d3e-0000-4000-8000-000000000002-topic-42.jsonl", "")
	write("agents/ops/sessions/sessions.json", "{}")
	write("agents/ops/sessions/mine.jsonl", `{"type":"session","version":3,"id":"odd-session","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n")
	write("agents/ops/session-sqlite-import-archive/agent_ops_main.x.jsonl.imported-1", "")
	write("sessions/0b1c2d3e-0000-4000-8000-000000000003.jsonl", "")
	// The shared database lists an agent whose directory is elsewhere.
	custom := t.TempDir()
	writeAbs(filepath.Join(custom, DatabaseName), "")
	if err := os.MkdirAll(filepath.Join(root, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	sdb, err := sql.Open("sqlite3", "file:"+filepath.Join(root, "state", "openclaw.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	execT(t, sdb, "CREATE TABLE agent_databases (agent_id TEXT NOT NULL, path TEXT NOT NULL, schema_version INTEGER NOT NULL, last_seen_at INTEGER NOT NULL, size_bytes INTEGER, PRIMARY KEY (agent_id, path)) STRICT")
	execT(t, sdb, "INSERT INTO agent_databases VALUES ('main', 'agents/main/agent/openclaw-agent.sqlite', 23, 1, 1), ('far', ?, 23, 1, 1), ('gone', 'agents/gone/agent/openclaw-agent.sqlite', 23, 1, 1)",
		filepath.Join(custom, DatabaseName))
	sdb.Close()
	extra := t.TempDir()
	writeAbs(filepath.Join(extra, DatabaseName), "")

	a := &Adapter{Roots: []string{root, filepath.Join(root, "missing")}, AgentDirs: []string{extra}}
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		if s.Client != Client || !filepath.IsAbs(s.Path) {
			t.Errorf("source %+v", s)
		}
		rel := strings.TrimPrefix(s.Path, root+string(filepath.Separator))
		switch {
		case strings.HasPrefix(s.Path, custom):
			rel = "custom/" + filepath.Base(s.Path)
		case strings.HasPrefix(s.Path, extra):
			rel = "extra/" + filepath.Base(s.Path)
		}
		kind := "file"
		if s.Database {
			kind = "db"
		}
		got = append(got, kind+" "+rel+" "+s.SessionID)
	}
	slices.Sort(got)
	want := []string{
		"db agents/main/agent/openclaw-agent.sqlite ",
		"db custom/openclaw-agent.sqlite ",
		"db extra/openclaw-agent.sqlite ",
		"file agents/ops/sessions/0b1c2d3e-0000-4000-8000-000000000001.jsonl 0b1c2d3e-0000-4000-8000-000000000001",
		"file agents/ops/sessions/0b1c2d3e-0000-4000-8000-000000000002-topic-42.jsonl 0b1c2d3e-0000-4000-8000-000000000002",
		"file agents/ops/sessions/mine.jsonl odd-session",
		"file sessions/0b1c2d3e-0000-4000-8000-000000000003.jsonl 0b1c2d3e-0000-4000-8000-000000000003",
	}
	if !slices.Equal(got, want) {
		t.Errorf("discovered\n%q\nwant\n%q", got, want)
	}
	for i := 1; i < len(srcs); i++ {
		if srcs[i-1].Database && !srcs[i].Database {
			t.Errorf("a session file after a database: %+v", srcs[i])
		}
	}
	if srcs, err := New([]string{filepath.Join(root, "missing")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("missing root: %v %v", srcs, err)
	}
	dirs := a.WatchDirs()
	for _, d := range []string{filepath.Join(root, "agents"), filepath.Join(root, "agents", "main", "agent"),
		filepath.Join(root, "agents", "ops", "sessions"), filepath.Join(root, "sessions"), extra} {
		if !slices.Contains(dirs, d) {
			t.Errorf("watch dirs %q lack %s", dirs, d)
		}
	}
}

func TestSessionIDFromPath(t *testing.T) {
	cases := map[string]string{
		"/a/92614F30-4fb9-4803-9aad-8d86b7ea54c4.jsonl":          "92614f30-4fb9-4803-9aad-8d86b7ea54c4",
		"92614f30-4fb9-4803-9aad-8d86b7ea54c4-topic-7.jsonl":     "92614f30-4fb9-4803-9aad-8d86b7ea54c4",
		"92614f30-4fb9-4803-9aad-8d86b7ea54c4.trajectory.jsonl":  "",
		"x92614f30-4fb9-4803-9aad-8d86b7ea54c4.jsonl":            "",
		"/a/92614f30-4fb9-4803-9aad-8d86b7ea54c4.jsonl.imported": "",
	}
	for path, want := range cases {
		if got := SessionIDFromPath(path); got != want {
			t.Errorf("SessionIDFromPath(%q) = %q, want %q", path, got, want)
		}
	}
}
