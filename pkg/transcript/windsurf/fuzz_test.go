package windsurf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord: whatever the transcript holds, the parser does not panic, every event it emits is
// valid (an id, this client, a time), and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	for _, id := range []string{traj, other} {
		data, err := os.ReadFile(filepath.Join("testdata", "transcripts", id+".jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"type":"x","x":[1,2]} {"type":"mcp_tool","mcp_tool":{"mcp_server_name":7},"status":"cancelled"}`))
	f.Add([]byte(`{"type":"code_action","code_action":{"path":"/"}}` + "\n" + `{}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		src := transcript.Source{Client: Client, Path: filepath.Join("x", traj+".jsonl"), SessionID: traj, Document: true}
		p, err := New(nil).NewParser(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, doc)
		transcripttest.CheckFuzzed(t, evs, nil)
		for _, e := range evs {
			if e.Client != Client || e.SessionID != traj {
				t.Fatalf("event %+v", e)
			}
		}
		if _, err := New(nil).NewParser(src, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
		if u := p.Stats(); u.Malformed > u.Lines {
			t.Fatalf("stats %+v", u)
		}
	})
}
