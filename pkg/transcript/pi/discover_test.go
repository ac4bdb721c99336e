package pi

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// SessionDirName is pi's getDefaultSessionDir encoding; the fixtures' directory is the one pi made
// for /tmp/piwork/proj.
func TestSessionDirName(t *testing.T) {
	cases := map[string]string{
		"/tmp/piwork/proj":                   "--tmp-piwork-proj--",
		"/Users/badlogic/workspaces/pi-mono": "--Users-badlogic-workspaces-pi-mono--",
		`C:\Users\ann\app`:                   "--C--Users-ann-app--",
		`\\server\share`:                     "---server-share--",
		"/":                                  "----",
	}
	for cwd, want := range cases {
		if got := SessionDirName(cwd); got != want {
			t.Errorf("SessionDirName(%q) = %q, want %q", cwd, got, want)
		}
	}
	if filepath.Base(fixtureDir) != SessionDirName("/tmp/piwork/proj") {
		t.Errorf("fixture directory %s", fixtureDir)
	}
}

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvAgentDir, "")
	t.Setenv(EnvSessionDir, "")
	if got := DefaultRoots(); !slices.Equal(got, []string{filepath.Join(home, ".pi", "agent", "sessions")}) {
		t.Errorf("default roots %q", got)
	}
	t.Setenv(EnvAgentDir, "~/custom-agent")
	agent := filepath.Join(home, "custom-agent")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"theme":"dark","sessionDir":"~/pi-sessions"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvSessionDir, "/srv/pi")
	want := []string{"/srv/pi", filepath.Join(home, "pi-sessions"), filepath.Join(agent, "sessions")}
	if got := DefaultRoots(); !slices.Equal(got, want) {
		t.Errorf("roots %q, want %q", got, want)
	}
	// A relative sessionDir depends on where pi runs: not read.
	os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"sessionDir":"sessions-here"}`), 0o644)
	t.Setenv(EnvSessionDir, "")
	if got := DefaultRoots(); !slices.Equal(got, []string{filepath.Join(agent, "sessions")}) {
		t.Errorf("roots %q", got)
	}
}

func TestAdapter_Discover(t *testing.T) {
	dir := t.TempDir()
	// A file pi did not name (pi --session some/path.jsonl): the id comes from its header.
	odd := filepath.Join(dir, "mine.jsonl")
	os.WriteFile(odd, []byte(`{"type":"session","version":3,"id":"odd-session","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "--empty--"), 0o755)
	a := New([]string{"testdata/agent/sessions", "testdata/flat", dir, filepath.Join(dir, "missing")})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		if s.Client != Client || !filepath.IsAbs(s.Path) {
			t.Errorf("source %+v", s)
		}
		got = append(got, filepath.Base(s.Path)+" "+s.SessionID)
	}
	want := []string{
		"2025-11-02T09-00-00-000Z_0b1c2d3e-0000-4000-8000-000000000001.jsonl 0b1c2d3e-0000-4000-8000-000000000001",
		"2026-12-01T17-29-18-302Z_01a232a7-5add-7470-9c04-d55218cae550.jsonl 01a232a7-5add-7470-9c04-d55218cae550",
		"2026-12-01T17-29-20-001Z_01a232a7-6180-71a5-8b0c-822dc5e6ac93.jsonl 01a232a7-6180-71a5-8b0c-822dc5e6ac93",
		"2026-12-01T17-29-21-970Z_01a232a7-6931-7399-acfa-f9d59ad28296.jsonl 01a232a7-6931-7399-acfa-f9d59ad28296",
		"2026-12-01T17-29-29-235Z_01a232a7-8593-7623-94d9-fa00e7e2150c.jsonl 01a232a7-8593-7623-94d9-fa00e7e2150c",
		"2026-12-01T17-29-48-570Z_01a232a7-d119-7620-9895-7eee5b81d6de.jsonl 01a232a7-d119-7620-9895-7eee5b81d6de",
		"mine.jsonl odd-session",
	}
	if !slices.Equal(got, want) {
		t.Errorf("discovered\n%q\nwant\n%q", got, want)
	}
	if srcs, err := New([]string{filepath.Join(dir, "missing")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("missing root: %v %v", srcs, err)
	}
}
