package aider

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord feeds arbitrary files to a parser, line by line as internal/ingest does: it never
// panics, every event validates, token figures are not negative, a second read gives the same
// events, and a parser resumed from the state halfway gives the same events as one read.
func FuzzRecord(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "repo", ChatHistoryFile)); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"\n# aider chat started at 2026-01-05 10:00:00\n\n#### hi  \n#### there  \n\nreply\n#### heading\n> Tokens: 1.2M sent, 9,999 cache write, 3k cache hit, 7 received. Cost: $1,000.50 message, $2 session.  \n",
		"\r\n# aider chat started at 2026-01-05 10:00:00\r\n\r\n#### !ls\r\n> Running rm -rf /tmp/x\r\n> Applied edit to \r\n> Main model: x with y\r\n",
		"# aider chat started at 0000-00-00 00:00:00\n#### /test go vet\n#### <blank>\n",
		"> Model: gpt-4 using udiff edit format\n\xff\n",
	} {
		f.Add([]byte(s))
	}
	a := New(nil)
	src := transcript.Source{Client: Client, Path: "/nonexistent-observer/fuzz/" + ChatHistoryFile}
	f.Fuzz(func(t *testing.T, data []byte) {
		ls := lines(data)
		read := func(ls []line, state []byte) ([]event.Event, *Parser) {
			p := newParser(a, src, state)
			var out []event.Event
			for _, l := range ls {
				evs, _ := p.Record(l.off, l.body)
				out = append(out, evs...)
			}
			return out, p
		}
		all, p := read(ls, nil)
		transcripttest.CheckFuzzed(t, all, func(u *event.TokenUsage) bool {
			return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
		})
		if again, _ := read(ls, nil); !reflect.DeepEqual(again, all) {
			t.Fatal("not deterministic")
		}
		half := len(ls) / 2
		first, q := read(ls[:half], nil)
		rest, _ := read(ls[half:], q.State())
		if got := append(first, rest...); !reflect.DeepEqual(got, all) {
			t.Fatalf("resumed at line %d: %d events, want %d", half, len(got), len(all))
		}
		if st := p.Stats(); st.Malformed > st.Lines {
			t.Fatalf("stats %+v", st)
		}
	})
}
