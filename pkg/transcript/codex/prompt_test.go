package codex

import (
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// Lines as Codex 0.171.0 writes a prompt (trimmed from a run against the fake API): a response_item
// message with role user, then event_msg item_completed with a UserMessage item; no user_message.
const (
	v171Meta    = `{"timestamp":"2026-12-01T17:09:44.063Z","ordinal":0,"type":"session_meta","payload":{"session_id":"01a23295-6f7e-79f0-9a97-e24c12abe953","id":"01a23295-6f7e-79f0-9a97-e24c12abe953","timestamp":"2026-12-01T17:09:43.945Z","cwd":"/tmp/cx/repo","originator":"codex_exec","cli_version":"0.171.0"}}`
	v171Env     = `{"timestamp":"2026-12-01T17:09:44.093Z","ordinal":3,"type":"response_item","payload":{"type":"message","id":"msg_env","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/tmp/cx/repo</cwd>\n</environment_context>"}]}}`
	v171Context = `{"timestamp":"2026-12-01T17:09:44.094Z","ordinal":5,"type":"turn_context","payload":{"turn_id":"01a23295-6fa7-7063-9507-7becf299097c","cwd":"/tmp/cx/repo","model":"gpt-5.2-codex"}}`
	v171Message = `{"timestamp":"2026-12-01T17:09:44.099Z","ordinal":7,"type":"response_item","payload":{"type":"message","id":"msg_01a23295-7023-75d1-b18e-e9962890ca7c","role":"user","content":[{"type":"input_text","text":"list the files here"}]}}`
	v171Item    = `{"timestamp":"2026-12-01T17:09:44.099Z","ordinal":8,"type":"event_msg","payload":{"type":"item_completed","thread_id":"01a23295-6f7e-79f0-9a97-e24c12abe953","turn_id":"01a23295-6fa7-7063-9507-7becf299097c","item":{"type":"UserMessage","id":"01a23295-7023-75d1-b18e-e986f6a77933","content":[{"type":"text","text":"list the files here","text_elements":[]}]},"started_at_ms":1796144984099,"completed_at_ms":1796144984099}}`
	v171Agent   = `{"timestamp":"2026-12-01T17:09:44.196Z","ordinal":14,"type":"event_msg","payload":{"type":"item_completed","turn_id":"01a23295-6fa7-7063-9507-7becf299097c","item":{"type":"AgentMessage","id":"msg_fake_6","content":[{"type":"Text","text":"Done"}]}}}`
	oldPrompt   = `{"timestamp":"2026-12-01T17:09:44.100Z","type":"event_msg","payload":{"type":"user_message","message":"list the files here","images":[]}}`
)

func prompts(t *testing.T, lines ...string) []string {
	t.Helper()
	p, _ := New("").newParser(transcript.Source{Path: "/x/rollout-2026-12-01T17-09-43-01a23295-6f7e-79f0-9a97-e24c12abe953.jsonl"}, nil)
	var raw [][]byte
	for _, l := range lines {
		raw = append(raw, []byte(l))
	}
	ids, byID := transcripttest.Merge(run(t, p, raw))
	var out []string
	for _, id := range ids {
		if a := byID[id].Action; a != nil && a.Type == event.ActionUserPrompt {
			out = append(out, a.Target)
		}
	}
	if n := len(p.Stats().Unknown); n != 0 {
		t.Errorf("unknown records: %v", p.Stats().Unknown)
	}
	return out
}

// Codex 0.171's prompt (item_completed UserMessage) is one user_prompt; a session that also wrote
// the older user_message for the same prompt, in either order, still has one.
func TestParser_PromptForms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"v0.171", []string{v171Meta, v171Env, v171Context, v171Message, v171Item, v171Agent}, "list the files here"},
		{"UserMessageOnly", []string{v171Meta, v171Context, oldPrompt}, "list the files here"},
		{"BothItemFirst", []string{v171Meta, v171Context, v171Message, v171Item, oldPrompt}, "list the files here"},
		{"BothUserMessageFirst", []string{v171Meta, v171Context, oldPrompt, v171Message, v171Item}, "list the files here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := prompts(t, tc.lines...); strings.Join(got, "|") != tc.want {
				t.Errorf("prompts = %q, want one %q", got, tc.want)
			}
		})
	}
}

// The form a session's prompts come from survives a cursor save and restore: a second prompt read
// by a restarted watcher is counted once too.
func TestParser_PromptFormAcrossRestart(t *testing.T) {
	src := transcript.Source{Path: "/x/rollout-2026-12-01T17-09-43-01a23295-6f7e-79f0-9a97-e24c12abe953.jsonl"}
	p, _ := New("").newParser(src, nil)
	run(t, p, [][]byte{[]byte(v171Meta), []byte(v171Context), []byte(v171Item)})
	p2, err := New("").newParser(src, p.State())
	if err != nil {
		t.Fatal(err)
	}
	second := strings.ReplaceAll(strings.ReplaceAll(v171Item, "list the files here", "now run the tests"), "e986f6a77933", "e986f6a77934")
	old := strings.ReplaceAll(oldPrompt, "list the files here", "now run the tests")
	ids, byID := transcripttest.Merge(run(t, p2, [][]byte{[]byte(second), []byte(old)}))
	n := 0
	for _, id := range ids {
		if a := byID[id].Action; a != nil && a.Type == event.ActionUserPrompt {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d prompts after a restart, want 1", n)
	}
}
