package claudecode

import (
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
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
	}); len(evs) != 0 {
		t.Errorf("a subagent's title: %+v", evs)
	}
}
