package claudecode

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// A custom-title record (/rename) and an ai-title record become session events carrying the title;
// one read before any timestamp waits for the first, and survives a restart of the parser in its
// state. Summary records (which describe other conversations: their leafUuid is never in the file)
// and a subagent file's titles are not the session's.
func TestParser_Titles(t *testing.T) {
	src := transcript.Source{Client: Client, Path: "/p/s1.jsonl", SessionID: "s1"}
	p := newTestParser(t, src, nil)
	evs := run(t, p, [][]byte{
		[]byte(`{"type":"summary","summary":"Another conversation","leafUuid":"x"}`),
		[]byte(`{"type":"custom-title","customTitle":"  auth   refactor ","sessionId":"s1"}`),
	})
	if len(evs) != 0 {
		t.Fatalf("before any time: %+v", evs)
	}
	p = newTestParser(t, src, p.State()) // a restart between the two lines
	evs = run(t, p, [][]byte{
		[]byte(`{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"fix the login"}}`),
		[]byte(`{"type":"ai-title","aiTitle":"Login fix","sessionId":"s1"}`),
	})
	var titles []event.Session
	for _, e := range evs {
		if e.Session != nil {
			if e.Time.IsZero() || e.SessionID != "s1" {
				t.Errorf("title event %+v", e)
			}
			titles = append(titles, *e.Session)
		}
	}
	if len(titles) != 2 || titles[0].Title != "auth refactor" || !titles[0].TitleByUser || titles[1].Title != "Login fix" || titles[1].TitleByUser {
		t.Errorf("titles %+v", titles)
	}
	agent := newTestParser(t, transcript.Source{Client: Client, Path: "/p/s1/subagents/agent-a.jsonl", SessionID: "s1", AgentID: "a"}, nil)
	if evs := run(t, agent, [][]byte{
		[]byte(`{"type":"user","uuid":"u2","sessionId":"s1","isSidechain":true,"timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"x"}}`),
		[]byte(`{"type":"ai-title","aiTitle":"Subagent","sessionId":"s1"}`),
	}); len(transcripttest.WithoutMessages(evs)) != 0 {
		t.Errorf("a subagent's title: %+v", evs)
	}
}

// A title read before any timestamp is kept in the state as a memo, whose text only the process
// that read it has. Another process resuming the file reads the title line again at its offset
// and still reports it; a file whose line there changed reports none.
func TestParser_TitleResumedElsewhere(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"type":"summary","summary":"Another conversation","leafUuid":"x"}`),
		[]byte(`{"type":"custom-title","customTitle":"  auth   refactor ","sessionId":"s1"}`),
	}
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	if err := os.WriteFile(path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	src := transcript.Source{Client: Client, Path: path, SessionID: "s1"}
	p := newTestParser(t, src, nil)
	if evs := run(t, p, lines); len(evs) != 0 {
		t.Fatalf("before any time: %+v", evs)
	}
	state := withoutMemos(t, p.State())
	if bytes.Contains(state, []byte("auth")) {
		t.Fatalf("the state holds the title's text: %s", state)
	}
	next := []byte(`{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"fix the login"}}`)
	titles := func(evs []event.Event) (out []string) {
		for _, e := range evs {
			if e.Session != nil {
				out = append(out, e.Session.Title)
			}
		}
		return out
	}

	p = newTestParser(t, src, state) // another process: no memo
	evs := transcripttest.Feed(t, p, [][]byte{next}, transcripttest.CheckValid)
	if got := titles(evs); len(got) != 1 || got[0] != "auth refactor" {
		t.Errorf("titles after a resume without the memo: %q, want [auth refactor]", got)
	}

	// The file rewritten meanwhile: the line at the offset is another; no title is made up.
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	p = newTestParser(t, src, state)
	if got := titles(transcripttest.Feed(t, p, [][]byte{next}, transcripttest.CheckValid)); len(got) != 0 {
		t.Errorf("titles from a changed file: %q, want none", got)
	}
}

// withoutMemos makes a state as another process reads it: its memo references name nothing.
func withoutMemos(tb testing.TB, state []byte) []byte {
	tb.Helper()
	re := regexp.MustCompile(`\{"memo":"[^"]*"\}`)
	if !re.Match(state) {
		tb.Fatalf("no memo in the state %s", state)
	}
	return re.ReplaceAll(state, []byte(`{"memo":"gone"}`))
}
