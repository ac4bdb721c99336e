package trae

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever a trajectory document holds, and whatever line a TRAE CLI rollout holds,
// the parsers do not panic, every event they emit validates with an id, client trae and a time,
// and the State they leave loads again.
func FuzzRecord(f *testing.F) {
	for _, name := range []string{anthropicRun, openaiRun} {
		data, err := os.ReadFile(filepath.Join("testdata", "trajectories", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, true)
	}
	f.Add([]byte(`{"start_time":"2026-06-09T10:00:00","provider":7,"llm_interactions":[{"response":{"usage":{"input_tokens":"5","cache_read_input_tokens":9,"reasoning_tokens":99},"tool_calls":[{"name":"str_replace_based_edit_tool","arguments":[1]}]}}],"agent_steps":[{"step_number":{"a":1},"tool_results":[{"call_id":"","success":null}],"error":{"x":1}}]}`), true)
	f.Add([]byte(`{"timestamp":"2026-06-09T11:00:04.500Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"c","arguments":"{\"cmd\":\"ls\"}"}}`), false)
	f.Fuzz(func(t *testing.T, data []byte, doc bool) {
		src := transcript.Source{Client: Client, Path: "/t/trajectories/trajectory_x.json", Document: true}
		if !doc {
			src = transcript.Source{Client: Client, Path: "/t/sessions/rollout-2026-06-09T11-00-00-0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"}
		}
		p, err := New([]string{"/t"}).NewParser(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, data)
		for _, e := range evs {
			if err := e.Validate(); err != nil {
				t.Fatalf("event %s does not validate: %v", e.ID, err)
			}
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
		}
		if _, err := New(nil).NewParser(src, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
