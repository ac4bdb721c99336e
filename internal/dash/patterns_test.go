package dash

import (
	"context"
	"math"
	"testing"

	"github.com/observerhq/observer/pkg/store"
)

type patternsJSON struct {
	Store    bool      `json:"store"`
	Source   string    `json:"source"`
	Patterns []Pattern `json:"patterns"`
}

// TestAPI_Patterns: derived patterns with exact support and confidence on a crafted store, then
// the stored patterns table taking over once it has rows.
func TestAPI_Patterns(t *testing.T) {
	const cc, cx = "claude-code", "codex"
	path := craftedActions(t, [][6]string{
		{cc, "s1", "", "edit_file", "a.go", ""},
		{cc, "s1", "", "edit_file", "b.go", ""},
		{cc, "s1", "", "run_command", "go test ./...", ""},
		{cc, "s1", "", "run_command", "git status", ""},
		{cc, "s1", "", "edit_file", "a.go", ""},
		{cc, "s1", "", "run_command", "go test ./pkg", ""},
		{cc, "s1", "", "run_command", "git status --short", ""},
		{cc, "s2", "", "write_file", "a.go", ""},
		{cc, "s2", "", "edit_file", "b.go", ""},
		{cc, "s2", "", "run_command", "npm run build", ""},
		{cc, "s2", "", "run_command", "go test -v", ""},
		{cc, "s2", "", "run_command", "git status", ""},
		{cx, "s3", "", "read_file", "a.go", ""},
	})
	srv := startServer(t, Options{StorePath: path})
	var p patternsJSON
	mustGet(t, srv.URL, "/api/patterns?window=all", &p)
	if p.Source != "derived" {
		t.Fatalf("source %q with an empty patterns table", p.Source)
	}
	type want struct {
		support int64
		conf    float64
	}
	wants := map[string]want{
		"command_pair go test → git status": {3, 1},
		"co_edit a.go + b.go":               {2, 1},
		"edit_then_test edit → test":        {2, 2.0 / 3},
		"hot_file a.go":                     {3, 1},
		"hot_file b.go":                     {2, 2.0 / 3},
	}
	got := map[string]Pattern{}
	for _, x := range p.Patterns {
		got[x.Kind+" "+x.Key] = x
	}
	if len(got) != len(wants) {
		t.Errorf("patterns %+v, want exactly %v", p.Patterns, wants)
	}
	for k, w := range wants {
		x, ok := got[k]
		if !ok || x.Support != w.support || math.Abs(x.Confidence-w.conf) > 1e-9 || x.Project != "/p" {
			t.Errorf("%s: %+v, want support %d confidence %.3f", k, x, w.support, w.conf)
		}
	}
	var only patternsJSON
	mustGet(t, srv.URL, "/api/patterns?window=all&kind=hot_file", &only)
	if len(only.Patterns) != 2 {
		t.Errorf("kind=hot_file: %+v", only.Patterns)
	}
	if code := get(t, srv.URL, "/api/patterns?kind=Not%20A%20Kind", nil); code != 400 {
		t.Errorf("bad kind: %d", code)
	}

	// Stored patterns win once the table has rows.
	srv.Close()
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.Exec(`INSERT INTO patterns (project, kind, key, detail, confidence, occurrences, last_seen) VALUES ('/p', 'failing_command', 'make lint', 'fails then passes', 0.75, 4, 1)`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	srv2 := startServer(t, Options{StorePath: path})
	var stored patternsJSON
	mustGet(t, srv2.URL, "/api/patterns?window=all", &stored)
	if stored.Source != "stored" || len(stored.Patterns) != 1 || stored.Patterns[0].Key != "make lint" || stored.Patterns[0].Support != 4 || stored.Patterns[0].Confidence != 0.75 {
		t.Errorf("stored: %+v", stored)
	}
}

// TestAPI_PatternsCorpus: the corpus store derives patterns; each has support ≥ 2 and a
// confidence in (0, 1].
func TestAPI_PatternsCorpus(t *testing.T) {
	srv := startServer(t, Options{StorePath: corpusStore(t)})
	var p patternsJSON
	mustGet(t, srv.URL, "/api/patterns?window=all", &p)
	if p.Source != "derived" || len(p.Patterns) == 0 {
		t.Fatalf("corpus patterns: %s, %d", p.Source, len(p.Patterns))
	}
	kinds := map[string]int{}
	for _, x := range p.Patterns {
		kinds[x.Kind]++
		if x.Support < minPatternSupport || x.Confidence <= 0 || x.Confidence > 1 {
			t.Errorf("pattern out of range: %+v", x)
		}
	}
	t.Logf("corpus patterns by kind: %v", kinds)
}
