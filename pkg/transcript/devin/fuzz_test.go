package devin

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord feeds arbitrary chat_message values (a database's rows are the records of this
// reader) through the node decoder, as a main-conversation node and as a subagent's: it never
// panics, every event it emits validates, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	// Seed with the fixtures' chat messages.
	re := regexp.MustCompile(`'(\{"role".*?\})', \d+, NULL\)`)
	for _, name := range []string{"first.sql", "second.sql"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(data, -1) {
			f.Add(m[1], int64(3))
		}
	}
	f.Add([]byte(`{"role":"assistant","content":[{"type":"text","text":"x"},1],"tool_calls":[{"id":"","function":{"name":"mcp_","arguments":"[1"}}],"metadata":{"metrics":{"input_tokens":"7","output_tokens":-3,"cache_read_tokens":1e30}}}`), int64(0))
	f.Add([]byte(`{"role":"tool","tool_call_id":"c","content":{"a":1}}`), int64(-5))
	f.Add([]byte(`{"role":"user","content":null}`), int64(9e18))
	f.Fuzz(func(t *testing.T, msg []byte, node int64) {
		p := newParser(New(nil), transcript.Source{Client: Client, Path: "/d/cli/sessions.db", Database: true}, nil)
		r := &pass{sessions: map[string]sessionRow{"s": {id: "s", cwd: "/nonexistent-observer/w", model: "gpt-5", created: 1781000000}},
			links: map[nodeKey]nodeLink{{"s", 1}: {}, {"s", node}: {parent: 1, hasParent: true}, {"s", 2}: {parent: 2, hasParent: true}},
			roots: map[nodeKey]rootKind{{"s", 1}: kindOf(msg)}, touched: []string{"s"}}
		r.nodes = []nodeRow{{row: 1, node: node, parent: 1, hasParent: true, created: 1781000001, session: "s", msg: msg},
			{row: 2, node: 2, parent: 2, hasParent: true, created: node, session: "s", msg: msg}}
		for _, e := range p.events(r) {
			if err := e.Validate(); err != nil {
				t.Fatalf("event %s does not validate: %v", e.ID, err)
			}
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
			if e.Action != nil && !e.Action.Type.Valid() {
				t.Fatalf("event %s: action type %q", e.ID, e.Action.Type)
			}
		}
		if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "x", Database: true}, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
