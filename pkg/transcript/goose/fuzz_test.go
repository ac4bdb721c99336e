package goose

import (
	"reflect"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// badUsage is a usage a fuzzed parser must never return: a negative figure or a cost that is not
// a number.
func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzMessage feeds arbitrary message rows (content, metadata, role, time) and session figures to
// the database parser's event builder: it never panics, what it emits validates, and the same
// rows give the same events.
func FuzzMessage(f *testing.F) {
	for _, m := range demoMessages {
		f.Add(m[2].(string), m[4].(string), m[1].(string), int64(m[3].(int)), int64(12000), "2026-01-05 10:00:00")
	}
	f.Add(`[{"type":"toolResponse","id":"x","toolResult":{"status":"success","value":{"content":[{"type":"image","data":"A"},{"type":"resource","resource":{"text":"r"}}],"isError":true}}}]`, ``, "user", int64(0), int64(-5), "garbage")
	f.Add(`[{"type":"toolRequest","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":"notanobject"}}},7,null]`, `{"userVisible":"x"}`, "assistant", int64(1e18), int64(1e15), "2026-01-05T10:00:00.123456789+00:00")
	f.Add(`{"type":`, `[]`, "system", int64(1), int64(0), "")
	f.Fuzz(func(t *testing.T, content, meta, role string, created, tokens int64, createdAt string) {
		run := func() []event.Event {
			p := newDBParser(New(nil), srcDB("/x/sessions.db"), nil)
			r := &rows{
				sessions: []sessionRow{{id: "s1", cwd: "/nonexistent-observer/w", name: content, created: createdAt, updated: createdAt,
					modelConfig: meta, fig: figures{accIn: tokens, accOut: tokens / 3, cost: float64(tokens) / 1e6}}},
				messages: []msgRow{{rowID: 1, messageID: "m", session: "s1", role: role, content: content, created: created, meta: meta},
					{rowID: 2, messageID: "n", session: "other", role: role, content: content, created: created, meta: meta}},
			}
			st := dbState{}
			return p.events(r, &st)
		}
		a, b := run(), run()
		transcripttest.CheckFuzzed(t, a, badUsage)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("not deterministic:\n%+v\n%+v", a, b)
		}
	})
}

// FuzzFile feeds arbitrary JSONL documents to the file parser: it never panics, what it emits
// validates, its state loads again, a re-read from that state emits nothing, and a fresh parser
// gives the same events.
func FuzzFile(f *testing.F) {
	f.Add(strings.Join(legacyLines, "\n"))
	f.Add(strings.Join(legacyLines[1:], "\n"))
	f.Add(legacyLines[0] + "\n{\"role\":\"user\",\"created\":5,\"content\":[]}")
	f.Add("{}\n[]\n")
	f.Add("\xff")
	a := New(nil)
	src := transcript.Source{Client: Client, Path: "/x/20260105_1.jsonl", Document: true}
	f.Fuzz(func(t *testing.T, doc string) {
		p := newFileParser(a, src, nil)
		evs, err := p.Record(0, []byte(doc))
		transcripttest.CheckFuzzed(t, evs, badUsage)
		q := newFileParser(a, src, nil)
		evs2, err2 := q.Record(0, []byte(doc))
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(evs, evs2) {
			t.Fatalf("not deterministic")
		}
		state := p.State()
		r, err := a.NewParser(src, state)
		if err != nil {
			t.Fatalf("state %s: %v", state, err)
		}
		if again, _ := r.Record(0, []byte(doc)); len(again) != 0 {
			t.Fatalf("re-read from state %s emitted %d events", state, len(again))
		}
		if st := p.Stats(); st.Malformed > st.Lines {
			t.Fatalf("stats %+v", st)
		}
	})
}
