package dash

import (
	"math"
	"testing"

	"github.com/observerhq/observer/internal/query"
)

type patternsJSON struct {
	Store    bool            `json:"store"`
	Source   string          `json:"source"`
	Patterns []query.Pattern `json:"patterns"`
}

// TestAPI_Patterns: the patterns the analysis keeps, with exact support and ratio on a crafted
// store, a confidence decayed from the ratio, the kind filter and the window.
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
	if p.Source != "analysis" {
		t.Fatalf("source %q", p.Source)
	}
	type want struct {
		support int64
		ratio   float64
	}
	wants := map[string]want{
		"command_pair go test → git status": {3, 1},
		"co_edit a.go + b.go":               {2, 1},
		"edit_then_test edit → test":        {2, 2.0 / 3},
		"hot_file a.go":                     {3, 1},
		"hot_file b.go":                     {2, 2.0 / 3},
	}
	got := map[string]query.Pattern{}
	for _, x := range p.Patterns {
		got[x.Kind+" "+x.Key] = x
	}
	if len(got) != len(wants) {
		t.Errorf("patterns %+v, want exactly %v", p.Patterns, wants)
	}
	for k, w := range wants {
		x, ok := got[k]
		// Seen an hour ago: the confidence has barely decayed from the ratio.
		if !ok || x.Support != w.support || math.Abs(x.Ratio-w.ratio) > 1e-9 || x.Project != "/p" ||
			x.Confidence > x.Ratio || x.Confidence < 0.99*x.Ratio {
			t.Errorf("%s: %+v, want support %d ratio %.3f", k, x, w.support, w.ratio)
		}
	}
	var only patternsJSON
	mustGet(t, srv.URL, "/api/patterns?window=all&kind=hot_file", &only)
	if len(only.Patterns) != 2 {
		t.Errorf("kind=hot_file: %+v", only.Patterns)
	}
	var recent patternsJSON
	mustGet(t, srv.URL, "/api/patterns?window=30m", &recent)
	if len(recent.Patterns) != 0 {
		t.Errorf("window=30m lists patterns last seen an hour ago: %+v", recent.Patterns)
	}
	if code := get(t, srv.URL, "/api/patterns?kind=Not%20A%20Kind", nil); code != 400 {
		t.Errorf("bad kind: %d", code)
	}
	if code := get(t, srv.URL, "/api/patterns?kind=failing_command", nil); code != 400 {
		t.Errorf("unknown kind: %d", code)
	}
}

// TestAPI_PatternsCorpus: the corpus store has patterns; each has support ≥ 2, a ratio in (0, 1]
// and a confidence no higher.
func TestAPI_PatternsCorpus(t *testing.T) {
	srv := startServer(t, Options{StorePath: corpusStore(t)})
	var p patternsJSON
	mustGet(t, srv.URL, "/api/patterns?window=all", &p)
	if len(p.Patterns) == 0 {
		t.Fatalf("no corpus patterns")
	}
	kinds := map[string]int{}
	for _, x := range p.Patterns {
		kinds[x.Kind]++
		if x.Support < 2 || x.Ratio <= 0 || x.Ratio > 1 || x.Confidence <= 0 || x.Confidence > x.Ratio {
			t.Errorf("pattern out of range: %+v", x)
		}
	}
	t.Logf("corpus patterns by kind: %v", kinds)
}
