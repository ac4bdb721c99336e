package cli

import (
	"testing"

	"github.com/observerhq/observer/pkg/event"
)

// FuzzHookEvents: any payload a client could send either is refused with an error (and exit 65)
// or gives events that validate and survive the wire; never a panic, and never an event the
// writer would quarantine.
func FuzzHookEvents(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","transcript_path":"/h/.claude/projects/p/s.jsonl","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"ls"}}`,
		`{"session_id":"s","hook_event_name":"SessionStart","source":"startup","cwd":"/tmp"}`,
		`{"session_id":"s","hook_event_name":"Stop"}`, `{"hook_event_name":"SessionEnd","reason":"exit"}`,
		`{"conversation_id":"c","hook_event_name":"afterFileEdit","workspace_roots":["/w"]}`,
		`{"session_id":"\u0000","hook_event_name":"\xff\xfe","cwd":"relative/dir"}`,
		`{"hook_event_name":7}`, `[]`, `null`, `{"hook_event_name":""}`, `{"session_id":["x"],"hook_event_name":"Stop"}`,
	} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "codex")
	}
	f.Fuzz(func(t *testing.T, data []byte, client string) {
		evs, err := hookEvents(data, client)
		if err != nil {
			return
		}
		for i := range evs {
			if err := evs[i].Validate(); err != nil {
				t.Fatalf("payload %q: event %d does not validate: %v", data, i, err)
			}
			wire, err := event.Marshal(&evs[i])
			if err != nil {
				t.Fatalf("payload %q: marshal: %v", data, err)
			}
			if _, err := event.Decode(wire); err != nil {
				t.Fatalf("payload %q: the writer would quarantine it: %v", data, err)
			}
		}
	})
}
