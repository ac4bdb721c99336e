package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/corpusstore"
	"github.com/observerhq/observer/internal/ingest/ingesttest"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// A session begun with a slash command and nothing typed since (/init, whose expanded instructions
// are not a prompt) is titled by the command, as the client's own session list names it; a
// prompt typed later, or earlier, still wins, and commands that only steer the client are no
// title.
func TestStore_SessionTitleFromCommand(t *testing.T) {
	s := newWriter(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	prompt := func(key string, m int, text string) event.Event {
		return actionEv(key, at(m), event.Action{Type: event.ActionUserPrompt, Target: text})
	}
	get := func() (title, source string) {
		t.Helper()
		s.DB.QueryRow(`SELECT title, title_source FROM sessions WHERE session_id = ?`, testSession).Scan(&title, &source)
		return
	}
	steps := []struct {
		evs           []event.Event
		title, source string
	}{
		{[]event.Event{prompt("c1", 1, "/clear")}, "", ""},
		{[]event.Event{prompt("c3", 3, "/review")}, "/review", "command"},
		{[]event.Event{prompt("c2", 2, "/init")}, "/init", "command"}, // the earliest command
		{[]event.Event{prompt("c0", 0, "/model")}, "/init", "command"},
		{[]event.Event{prompt("p9", 9, "now write the README")}, "now write the README", "prompt"},
		{[]event.Event{prompt("c-1", -1, "/setup")}, "now write the README", "prompt"},
	}
	for i, st := range steps {
		write(t, s, st.evs, nil)
		if title, source := get(); title != st.title || source != st.source {
			t.Fatalf("step %d: %q (%s); want %q (%s)", i, title, source, st.title, st.source)
		}
	}
}

func TestCommandTitle(t *testing.T) {
	for in, want := range map[string]string{
		"/init": "/init", " /bmad:bmm:workflows:create-tech-spec ": "/bmad:bmm:workflows:create-tech-spec",
		"<command-name>/init</command-name>": "/init", "/clear": "", "/Compact": "", "/review PR 12": "",
		"fix the bug": "", "/": "", "": "",
	} {
		if got, ok := event.CommandTitle(in); got != want || ok != (want != "") {
			t.Errorf("CommandTitle(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// TestStore_SessionTitleFromCommand_Corpus reads real Claude Code sessions of the corpus that
// begin with a slash command: one with /init and its expanded instructions only (titled /init),
// one with /init then a prompt (titled by the prompt), one with a command and its arguments.
func TestStore_SessionTitleFromCommand_Corpus(t *testing.T) {
	if why := corpusstore.Available(); why != "" {
		t.Skip("SKIPPED: " + why)
	}
	files := map[string]string{ // corpus file → the title its session gets
		"claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": "/init",
		"sniffly__ba79134d-b6e9-4867-af0c-6941038c9e4b.jsonl":            "ok, now write the program using the instruction in README.md",
		"claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": "/orchestrator create TODO app by Next.js",
	}
	// Laid out as Claude Code does: <projects>/<project>/<session id>.jsonl, the id being the file's.
	id := func(name string) string {
		_, rest, _ := strings.Cut(name, "__")
		return strings.TrimSuffix(rest, ".jsonl")
	}
	root := filepath.Join(t.TempDir(), "projects")
	for name := range files {
		src := transcripttest.CorpusFile(t, filepath.Join(corpusstore.Dir(), "claude-code"), name)
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		transcripttest.WriteFile(t, filepath.Join(root, "-corpus", id(name)+".jsonl"), string(data))
	}
	scan := ingesttest.NewScan(t, claudecode.New([]string{root}))
	scan.Run()
	s := newWriter(t)
	write(t, s, scan.Published, nil)
	for name, want := range files {
		var title string
		if err := s.DB.QueryRow(`SELECT title FROM sessions WHERE session_id = ?`, id(name)).Scan(&title); err != nil {
			t.Fatalf("%s: session %s: %v", name, id(name), err)
		}
		if title != want {
			t.Errorf("%s: title %q, want %q", name, title, want)
		}
	}
}

// A store from before titles titles a session of slash commands only by its first command, and one
// with a prompt after its command by the prompt.
func TestStore_MigrationFillsCommandTitles(t *testing.T) {
	path := t.TempDir() + "/observer.db"
	s := openWriter(t, path)
	only := actionEv("c1", t0, event.Action{Type: event.ActionUserPrompt, Target: "/init"})
	clear := actionEv("c0", t0.Add(-time.Second), event.Action{Type: event.ActionUserPrompt, Target: "/clear"})
	cmd := actionEv("c2", t0, event.Action{Type: event.ActionUserPrompt, Target: "/init"})
	typed := actionEv("p2", t0.Add(time.Second), event.Action{Type: event.ActionUserPrompt, Target: "add a --json flag"})
	cmd.SessionID, typed.SessionID = "sess-2", "sess-2"
	write(t, s, []event.Event{only, clear, cmd, typed}, nil)
	for _, q := range []string{`DROP INDEX actions_prompts`, `ALTER TABLE sessions DROP COLUMN title`,
		`ALTER TABLE sessions DROP COLUMN title_source`, `ALTER TABLE sessions DROP COLUMN title_at`,
		`DELETE FROM schema_migrations WHERE version = 11`} {
		if _, err := s.DB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s = openWriter(t, path)
	defer s.Close()
	for id, want := range map[string]string{testSession: "/init command", "sess-2": "add a --json flag prompt"} {
		var title, source string
		if err := s.DB.QueryRow(`SELECT title, title_source FROM sessions WHERE session_id = ?`, id).Scan(&title, &source); err != nil {
			t.Fatal(err)
		}
		if title+" "+source != want {
			t.Errorf("%s after the migration: %q (%s), want %s", id, title, source, want)
		}
	}
}
