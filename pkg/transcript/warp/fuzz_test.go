package warp

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord feeds arbitrary conversation_data and exchange input values (a database's rows are
// this reader's records) through the decoder: it never panics, every event it emits validates,
// and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	re := regexp.MustCompile(`'(\[\{"(?:Query|ActionResult)".*?\])'|'(\{"server_conversation_token".*?\})'`)
	data, err := os.ReadFile(filepath.Join("testdata", "first.sql"))
	if err != nil {
		f.Fatal(err)
	}
	var inputs, convs [][]byte
	for _, m := range re.FindAllSubmatch(data, -1) {
		if len(m[1]) > 0 {
			inputs = append(inputs, m[1])
		} else {
			convs = append(convs, m[2])
		}
	}
	for i := range max(len(inputs), len(convs)) {
		f.Add(inputs[i%len(inputs)], convs[i%len(convs)], "2026-06-09 10:00:02")
	}
	f.Add([]byte(`[{"Query":{"text":7}},{"Query":null}]`), []byte(`{"conversation_usage_metadata":{"total_charged_usage":{"input_tokens":"9","output_cost_in_cents":1e300},"token_usage":[{"model_id":"a"},{"model_id":"b"}]}}`), "2026-06-09T10:00:02Z")
	f.Add([]byte(`[]`), []byte(`[]`), "")
	f.Fuzz(func(t *testing.T, input, data []byte, start string) {
		p := newParser(New(nil), transcript.Source{Client: Client, Path: "/w/warp.sqlite", Database: true}, nil)
		r := &pass{convs: map[string]*convRow{"c": {id: "c", modified: start, data: data}}, changed: []string{"c"},
			first: map[string]firstInfo{"c": {start: start, cwd: "/nonexistent-observer/w"}}, order: []string{"c"},
			exchanges: []exchangeRow{{id: 1, exchange: "x", conv: "c", start: start, input: string(input), model: "gpt-5"},
				{id: 2, exchange: "y", conv: "d", start: start, input: string(input)}}}
		for _, e := range p.events(r) {
			if err := e.Validate(); err != nil {
				t.Fatalf("event %s does not validate: %v", e.ID, err)
			}
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
		}
		if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "x", Database: true}, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
