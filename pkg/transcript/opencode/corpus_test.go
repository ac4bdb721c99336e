package opencode

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/pkg/event"

	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// TestCorpus rebuilds each kilo.db dump of the corpus into a database with the client's schema
// and checks the figures read from it. The numbers were checked by hand against the dumps: input,
// output, reasoning and cache reads are the sums of the assistant messages' data.tokens (output
// plus reasoning as observer's output; reasoning is 0 throughout), one usage per assistant
// message, one action per tool part and per user prompt; the title is the session row's, which
// Kilo generated.
func TestCorpus(t *testing.T) {
	cases := []struct {
		file string
		want figures
	}{
		{"observer___capture-windows.json", figures{Sessions: 1, Usages: 12, Actions: 12, Titles: []string{"Greeting"},
			Tokens: event.Tokens{Input: 206769, Output: 1578, CacheRead: 294784},
			Types:  map[event.ActionType]int{event.ActionUserPrompt: 6, event.ActionReadFile: 2, event.ActionWriteFile: 1, event.ActionRunCommand: 3}}},
		{"observer___capture-wsl.json", figures{Sessions: 1, Usages: 12, Actions: 12, Titles: []string{"Greeting"},
			Tokens: event.Tokens{Input: 52182, Output: 1463, CacheRead: 130688},
			Types:  map[event.ActionType]int{event.ActionUserPrompt: 7, event.ActionWriteFile: 1, event.ActionRunCommand: 3, event.ActionWebSearch: 1}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(transcripttest.CorpusRoot(), "opencode", c.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("SKIPPED: corpus file %s absent (set OBSERVER_CORPUS): %v", path, err)
			}
			dbPath := filepath.Join(t.TempDir(), "kilo.db")
			db := newDB(t, dbPath)
			loadDump(t, db, path)
			a := NewKilo(nil)
			evs, state, st := poll(t, a, dbPath, nil)
			got := sumUp(evs)
			if st.Malformed != 0 {
				t.Errorf("malformed rows: %d", st.Malformed)
			}
			if got.Sessions != c.want.Sessions || got.Usages != c.want.Usages || got.Actions != c.want.Actions ||
				got.Tokens != c.want.Tokens || !slices.Equal(got.Titles, c.want.Titles) || math.Abs(got.Cost-c.want.Cost) > 1e-9 {
				t.Errorf("figures\n got %+v\nwant %+v", got, c.want)
			}
			for _, e := range evs {
				if e.SessionID == "" || e.Client != KiloClient {
					t.Errorf("event %s: session %q client %q", e.ID, e.SessionID, e.Client)
				}
				if e.Kind == event.KindAction && e.Action.Type != event.ActionUserPrompt && e.Action.Success == nil {
					t.Errorf("tool action %s has no result", e.ID)
				}
			}
			for typ, n := range c.want.Types {
				if got.Types[typ] != n {
					t.Errorf("%s actions: got %d, want %d", typ, got.Types[typ], n)
				}
			}
			again, _, _ := poll(t, a, dbPath, state)
			if len(again) != 0 {
				t.Errorf("a second pass read %d events, want none", len(again))
			}
		})
	}
}
