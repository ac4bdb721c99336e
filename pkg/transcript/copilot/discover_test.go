package copilot

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/observerhq/observer/internal/ingest/ingesttest"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvCopilotHome, "")
	t.Setenv(EnvXDGState, "")
	if got := DefaultRoots(); !slices.Equal(got, []string{filepath.Join(home, ".copilot", "session-state")}) {
		t.Errorf("default roots %q", got)
	}
	t.Setenv(EnvCopilotHome, "~/cp")
	t.Setenv(EnvXDGState, "/srv/state")
	want := []string{filepath.Join(home, "cp", "session-state"), filepath.Join(home, ".copilot", "session-state"),
		"/srv/state/.copilot/session-state"}
	if got := DefaultRoots(); !slices.Equal(got, want) {
		t.Errorf("roots %q, want %q", got, want)
	}
}

// The CLI's layouts: <id>/events.jsonl and the legacy <id>.jsonl; a root reached twice (the XDG
// directory the CLI leaves as a link to ~/.copilot) is read once.
func TestAdapter_Discover(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".copilot", "session-state")
	const (
		idNew    = "11111111-2222-4333-8444-555555555555"
		idLegacy = "66666666-7777-4888-9999-aaaaaaaaaaaa"
	)
	transcripttest.WriteFile(t, filepath.Join(root, idNew, "events.jsonl"), "{}\n")
	transcripttest.WriteFile(t, filepath.Join(root, idNew, "workspace.yaml"), "id: x\n")
	transcripttest.WriteFile(t, filepath.Join(root, idLegacy+".jsonl"), "{}\n")
	transcripttest.WriteFile(t, filepath.Join(root, "mine.jsonl"), "{}\n")
	transcripttest.WriteFile(t, filepath.Join(root, ".hidden.jsonl"), "{}\n")
	transcripttest.WriteFile(t, filepath.Join(root, "notes.txt"), "x")
	transcripttest.WriteFile(t, filepath.Join(root, "empty-session", "plan.md"), "x")
	xdg := filepath.Join(home, "xdg-state", ".copilot")
	if err := os.MkdirAll(xdg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(xdg, "session-state")); err != nil {
		t.Fatal(err)
	}
	a := New([]string{root, filepath.Join(xdg, "session-state"), filepath.Join(home, "missing")})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		if s.Client != ClientCLI || !filepath.IsAbs(s.Path) || s.Document || s.Database {
			t.Errorf("source %+v", s)
		}
		rel, _ := filepath.Rel(root, s.Path)
		got = append(got, rel+" "+s.SessionID)
	}
	want := []string{
		idNew + "/events.jsonl " + idNew,
		idLegacy + ".jsonl " + idLegacy,
		"mine.jsonl ", // not named by a session id: the parser takes session.start's
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("discovered\n%q\nwant\n%q", got, want)
	}
	if srcs, err := New([]string{filepath.Join(home, "missing")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("missing root: %v %v", srcs, err)
	}
}

func TestDefaultVSCodeUserDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvVSCodeUserDirs, "")
	t.Setenv("XDG_CONFIG_HOME", "")
	got := DefaultVSCodeUserDirs()
	var base string
	switch runtime.GOOS {
	case "darwin":
		base = filepath.Join(home, "Library", "Application Support")
	case "windows":
		t.Skip("APPDATA")
	default:
		base = filepath.Join(home, ".config")
	}
	want := []string{filepath.Join(base, "Code", "User"), filepath.Join(base, "Code - Insiders", "User"),
		filepath.Join(base, "VSCodium", "User")}
	if !slices.Equal(got, want) {
		t.Errorf("user dirs %q, want %q", got, want)
	}
	if runtime.GOOS == "linux" {
		t.Setenv("XDG_CONFIG_HOME", "/srv/cfg")
		if got := DefaultVSCodeUserDirs(); got[0] != "/srv/cfg/Code/User" {
			t.Errorf("XDG_CONFIG_HOME ignored: %q", got)
		}
	}
	t.Setenv(EnvVSCodeUserDirs, "/a/User"+string(filepath.ListSeparator)+" ~/b/User ")
	if got := DefaultVSCodeUserDirs(); !slices.Equal(got, []string{"/a/User", filepath.Join(home, "b", "User")}) {
		t.Errorf("%s: %q", EnvVSCodeUserDirs, got)
	}
}

// VS Code's layout: workspaceStorage/<hash>/chatSessions/<id>.json|.jsonl (the .json skipped when
// its .jsonl is beside it) and globalStorage/emptyWindowChatSessions; every file a Document.
func TestVSCodeAdapter_Discover(t *testing.T) {
	user := filepath.Join(t.TempDir(), "Code", "User")
	ws := filepath.Join(user, "workspaceStorage")
	transcripttest.WriteFile(t, filepath.Join(ws, "aaa111", "workspace.json"), `{"folder":"file:///w/one"}`)
	transcripttest.WriteFile(t, filepath.Join(ws, "aaa111", "chatSessions", "s-flat.json"), "{}")
	transcripttest.WriteFile(t, filepath.Join(ws, "aaa111", "chatSessions", "s-both.json"), "{}")
	transcripttest.WriteFile(t, filepath.Join(ws, "aaa111", "chatSessions", "s-both.jsonl"), "{}\n")
	transcripttest.WriteFile(t, filepath.Join(ws, "aaa111", "chatSessions", ".tmp.json"), "{}")
	transcripttest.WriteFile(t, filepath.Join(ws, "aaa111", "chatSessions", "notes.txt"), "x")
	transcripttest.WriteFile(t, filepath.Join(ws, "aaa111", "state.vscdb"), "x")
	transcripttest.WriteFile(t, filepath.Join(ws, "bbb222", "workspace.json"), `{"folder":"file:///w/two"}`)
	transcripttest.WriteFile(t, filepath.Join(ws, "no-workspace", "chatSessions", "s-old-empty.json"), "{}")
	transcripttest.WriteFile(t, filepath.Join(user, "globalStorage", "emptyWindowChatSessions", "s-empty.jsonl"), "{}\n")
	transcripttest.WriteFile(t, filepath.Join(user, "globalStorage", "github.copilot-chat", "x.json"), "{}")
	a := NewVSCode([]string{user, user, filepath.Join(t.TempDir(), "missing", "User")})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		if s.Client != ClientVSCode || !s.Document || !filepath.IsAbs(s.Path) {
			t.Errorf("source %+v", s)
		}
		rel, _ := filepath.Rel(user, s.Path)
		got = append(got, filepath.ToSlash(rel)+" "+s.SessionID)
	}
	want := []string{
		"globalStorage/emptyWindowChatSessions/s-empty.jsonl s-empty",
		"workspaceStorage/aaa111/chatSessions/s-both.jsonl s-both",
		"workspaceStorage/aaa111/chatSessions/s-flat.json s-flat",
		"workspaceStorage/no-workspace/chatSessions/s-old-empty.json s-old-empty",
	}
	if !slices.Equal(got, want) {
		t.Errorf("discovered\n%q\nwant\n%q", got, want)
	}
	if w := a.WatchDirs(); !slices.Contains(w, ws) {
		t.Errorf("watch dirs %q", w)
	}
}

// Both adapters driven through internal/ingest as observer-watch drives them: a second pass over
// unchanged files publishes nothing; what the clients add later is published once.
func TestScan_NothingTwice(t *testing.T) {
	home := t.TempDir()
	cliRoot := filepath.Join(home, ".copilot", "session-state")
	cliLog := filepath.Join(cliRoot, fixCLIID, "events.jsonl")
	lines := transcripttest.ReadLines(t, fixCLI)
	transcripttest.WriteFile(t, cliLog, string(append(bytes.Join(lines[:20], []byte("\n")), '\n')))

	user := filepath.Join(home, "Code", "User")
	ws := filepath.Join(user, "workspaceStorage", "5b2c9e0d7a61f3e4")
	transcripttest.WriteFile(t, filepath.Join(ws, "workspace.json"), `{"folder":"file:///nonexistent-copilot-test/web"}`)
	vsLog := filepath.Join(ws, "chatSessions", fixVSCodeID+".jsonl")
	vsLines := transcripttest.ReadLines(t, fixVSCode)
	transcripttest.WriteFile(t, vsLog, string(version(vsLines, 4)))

	scan := ingesttest.NewScan(t, New([]string{cliRoot}), NewVSCode([]string{user}))
	scan.Run()
	first := len(scan.Published)
	if first == 0 {
		t.Fatal("nothing published")
	}
	scan.Run()
	if len(scan.Published) != first {
		t.Fatalf("a second pass published %d events", len(scan.Published)-first)
	}
	// The CLI appends, VS Code appends to its log: only the new facts.
	transcripttest.WriteFile(t, cliLog, string(append(bytes.Join(lines, []byte("\n")), '\n')))
	transcripttest.WriteFile(t, vsLog, string(version(vsLines, len(vsLines))))
	scan.Run()
	scan.Run()
	all := scan.Published
	seen := map[string]bool{}
	for i := range all {
		f := fingerprint(&all[i])
		if seen[f] {
			t.Errorf("published twice: %s", transcripttest.MustJSON(t, all[i]))
		}
		seen[f] = true
	}
	cliOnce, _ := parseCLIFile(t, New(nil), cliSrc(cliLog))
	vsOnce, _, _ := readDoc(t, vsSrc(vsLog), nil, version(vsLines, len(vsLines)))
	gotIDs, _ := transcripttest.Merge(all)
	wantIDs, _ := transcripttest.Merge(append(cliOnce, vsOnce...))
	slices.Sort(gotIDs)
	slices.Sort(wantIDs)
	if !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("%d ids published, %d in one read of the final files", len(gotIDs), len(wantIDs))
	}
}
