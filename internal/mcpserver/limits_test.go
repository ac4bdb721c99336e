package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The file tools answer for files inside the project only, decided on the path with `..` and
// symbolic links resolved, and never for a file in observer's home, even one inside the project.
func TestFileTools_Confined(t *testing.T) {
	lp := newLiveProject(t)
	home := filepath.Join(lp.dir, ".observer") // the worst case: observer's home inside the project
	outside := t.TempDir()
	for _, f := range []string{filepath.Join(home, "bus.token"), filepath.Join(outside, "secret.txt")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(name, target string) {
		if err := os.Symlink(target, filepath.Join(lp.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("to-secret", filepath.Join(outside, "secret.txt"))
	link("to-outside", outside)
	link("to-token", filepath.Join(home, "bus.token"))
	link("to-home", "./.observer")
	link("dangling-out", filepath.Join(outside, "not-yet"))
	link("to-a", "a.go")
	s := New(Options{StorePath: lp.path, Project: lp.dir, Home: home, Now: func() time.Time { return lp.now }})
	cs := connect(t, s)

	rel, err := filepath.Rel(lp.dir, filepath.Join(outside, "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string // in the tool error
	}{
		{"Absolute", map[string]any{"path": filepath.Join(outside, "secret.txt")}, "outside the project"},
		{"EtcShadow", map[string]any{"path": "/etc/shadow"}, "outside the project"},
		{"DotDot", map[string]any{"path": rel}, "outside the project"},
		{"DotDotInside", map[string]any{"path": "sub/../../" + filepath.Base(lp.dir) + "/../" + rel}, "outside the project"},
		{"SymlinkToFile", map[string]any{"path": "to-secret"}, "outside the project"},
		{"SymlinkToDir", map[string]any{"path": "to-outside/secret.txt"}, "outside the project"},
		{"DanglingSymlink", map[string]any{"path": "dangling-out"}, "outside the project"},
		{"Home", map[string]any{"path": ".observer/bus.token"}, "observer's home"},
		{"HomeAbsolute", map[string]any{"path": filepath.Join(home, "bus.token")}, "observer's home"},
		{"HomeSymlink", map[string]any{"path": "to-token"}, "observer's home"},
		{"HomeDirSymlink", map[string]any{"path": "to-home/bus.token"}, "observer's home"},
		{"UnrecordedProject", map[string]any{"project": outside, "path": "secret.txt"}, "not recorded"},
		{"UnrecordedProjectAbsolute", map[string]any{"project": outside, "path": filepath.Join(outside, "secret.txt")}, "not recorded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tool := range []string{toolFileFreshness, toolFileHistory} {
				text, isErr := call(t, cs, tool, tc.args)
				if !isErr || !strings.Contains(text, tc.want) {
					t.Errorf("%s(%v) = %q (error %v), want a tool error saying %q", tool, tc.args, text, isErr, tc.want)
				}
			}
		})
	}

	// A client that spawns its servers in / has no project whose files could be asked about.
	_, rootCS := newServer(t, lp.path, "/", lp.now)
	for _, tool := range []string{toolFileFreshness, toolFileHistory} {
		if text, isErr := call(t, rootCS, tool, map[string]any{"path": "etc/passwd"}); !isErr || !strings.Contains(text, "root") {
			t.Errorf("%s with the project /: %q (error %v), want a tool error", tool, text, isErr)
		}
	}

	// Inside the project, through a link or not, the file tools answer.
	for _, tc := range []struct{ path, state string }{
		{"a.go", "fresh"},
		{"sub/../a.go", "fresh"},
		{"to-a", "unseen"}, // the link's own name was never recorded
		{"new.go", "missing"},
		{filepath.Join(lp.dir, "a.go"), "fresh"},
	} {
		var got freshAnswer
		callJSON(t, cs, toolFileFreshness, map[string]any{"path": tc.path}, &got)
		if got.State != tc.state {
			t.Errorf("%s: %s, want %s", tc.path, got.State, tc.state)
		}
		var hist historyAnswer
		callJSON(t, cs, toolFileHistory, map[string]any{"path": tc.path}, &hist)
	}
}

// Every string argument of every tool has a bound, and a longer value gets a tool error that
// names it, before any query runs.
func TestTools_StringArgumentLimits(t *testing.T) {
	lp := newLiveProject(t)
	s, cs := newServer(t, lp.path, lp.dir, lp.now)
	queries := 0
	s.trace = func(string, []any) { queries++ }
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, tl := range tools.Tools {
		props, _ := tl.InputSchema.(map[string]any)["properties"].(map[string]any)
		for name, p := range props {
			if p.(map[string]any)["type"] != "string" {
				continue
			}
			max, ok := argLimits[name]
			if !ok {
				t.Errorf("%s: string argument %s has no limit in argLimits", tl.Name, name)
				continue
			}
			args := map[string]any{"path": "a.go", "query": "package", "command": "ls", "id": 1}
			for k := range args {
				if _, ok := props[k]; !ok {
					delete(args, k)
				}
			}
			args[name] = strings.Repeat("x", max+1)
			queries = 0
			text, isErr := call(t, cs, tl.Name, args)
			if !isErr || !strings.Contains(text, fmt.Sprintf("%d bytes", max)) {
				t.Errorf("%s with a %d-byte %s: %q (error %v), want a tool error naming the %d-byte limit",
					tl.Name, max+1, name, clip(text, 200), isErr, max)
			}
			if queries != 0 {
				t.Errorf("%s with a %d-byte %s ran %d queries before refusing it", tl.Name, max+1, name, queries)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d string arguments checked", checked)
	}
}

// A days argument is capped, as limits are, and the answer says the days it covers.
func TestTools_DaysCapped(t *testing.T) {
	lp := newLiveProject(t)
	_, cs := newServer(t, lp.path, lp.dir, lp.now)
	for _, tool := range []string{toolPatterns, toolCost} {
		text, _ := call(t, cs, tool, map[string]any{"days": 1 << 40})
		if !strings.Contains(text, `"days":366`) && !strings.Contains(text, "last 366 days") {
			t.Errorf("%s with days 2^40: %q, want it capped to 366 days", tool, clip(text, 200))
		}
	}
}

// A search query is bounded in bytes and distinct terms, with an error naming both bounds; a word
// repeated counts once.
func TestSearch_QueryLimits(t *testing.T) {
	_, cs := newServer(t, outputStore(t, "a needle in the output", "another needle"), "/p", time.Now())
	var words []string
	for i := range maxQueryTerms + 1 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	for _, tc := range []struct {
		name, query string
	}{
		{"Bytes", strings.Repeat("a", maxQueryBytes+1)},
		{"Terms", strings.Join(words, " ")},
		{"20KB", strings.Repeat("needle ", 20<<10/7)},
	} {
		text, isErr := call(t, cs, toolSearch, map[string]any{"query": tc.query})
		if !isErr || !strings.Contains(text, queryLimits) {
			t.Errorf("%s: %q (error %v), want a tool error naming the limits (%s)", tc.name, clip(text, 200), isErr, queryLimits)
		}
	}
	// The longest query allowed, one word repeated, is one term.
	var got searchAnswer
	callJSON(t, cs, toolSearch, map[string]any{"query": strings.Repeat("needle ", maxQueryBytes/7)}, &got)
	if len(got.Hits) != 2 {
		t.Errorf("a repeated word: %d hits, want 2", len(got.Hits))
	}
}

// The worst query allowed (maxQueryTerms words, every one on every line of the outputs found)
// over maxLimit outputs of maxSnipScan bytes answers within the test's time: FTS5's snippet() took
// 151 s on it, quadratic in the matches, where marking them in Go is linear.
func TestSearch_MaxQuery(t *testing.T) {
	var words []string
	for i := range maxQueryTerms {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	line := strings.Join(words, " ") + "\n"
	out := strings.Repeat(line, maxSnipScan/len(line))
	outputs := make([]string, maxLimit)
	for i := range outputs {
		outputs[i] = out
	}
	_, cs := newServer(t, outputStore(t, outputs...), "/p", time.Now())
	start := time.Now()
	var got searchAnswer
	callJSON(t, cs, toolSearch, map[string]any{"query": strings.Join(words, " "), "limit": maxLimit}, &got)
	t.Logf("%d terms over %d outputs of %d bytes: %v", len(words), len(outputs), len(out), time.Since(start))
	if len(got.Hits) != maxLimit {
		t.Fatalf("%d hits, want %d", len(got.Hits), maxLimit)
	}
	if snip := got.Hits[0].Snip; !strings.HasPrefix(snip, "«w00» «w01» «w02»") ||
		len(strings.NewReplacer("«", "", "»", "", "…", "").Replace(snip)) > snipBytes {
		t.Errorf("snippet %q", snip)
	}
}

// Marking the terms in an output costs at most one comparison per token of the output and per
// token of the query: linear in both, whatever the number of matches.
func TestMarkTerms_Linear(t *testing.T) {
	var words []string
	for i := range maxQueryTerms {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	out := strings.Repeat(strings.Join(words, " ")+"\n", 500)
	tokens := 0
	eachToken(out, func(int, int, string) { tokens++ })
	var phrases, prefixes []string
	for i := range maxQueryTerms {
		phrases = append(phrases, `"`+strings.Join(words[i:min(i+4, len(words))], " ")+`"`)
		prefixes = append(prefixes, words[i][:2]+strings.Repeat("0", i%2)+"*")
	}
	for _, q := range []string{
		"w00",
		strings.Join(words[:2], " "),
		strings.Join(words[:8], " "),
		strings.Join(words, " "),
		strings.Join(phrases, " "),
		strings.Join(prefixes, " "),
	} {
		_, terms, err := parseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		qtoks := 0
		for _, term := range terms {
			qtoks += len(term.toks)
		}
		marks, work := markTerms(out, terms)
		if limit := tokens * (1 + qtoks); work > limit {
			t.Errorf("query %q: %d comparisons for %d marks, over %d (the output's %d tokens times 1 + the query's %d)",
				clip(q, 40), work, len(marks), limit, tokens, qtoks)
		}
		if len(marks) == 0 {
			t.Errorf("query %q: no mark", clip(q, 40))
		}
	}
}

func TestSnippet(t *testing.T) {
	_, terms, _ := parseQuery(`needle "big haystack" pre*`)
	for _, tc := range []struct{ out, want string }{
		{"a needle", "a «needle»"},
		{"NEEDLE in a Big  Haystack, prefix", "«NEEDLE» in a «Big  Haystack», «prefix»"},
		{strings.Repeat("x ", 100) + "needle" + strings.Repeat(" y", 100),
			"…" + strings.Repeat("x ", 28) + "«needle»" + strings.Repeat(" y", 28) + "…"},
		{"no match here", "no match here"},
		{"needles and needle", "needles and «needle»"},
		{"héllo needle ünïcode", "héllo «needle» ünïcode"},
	} {
		marks, _ := markTerms(tc.out, terms)
		if got := snippet(tc.out, marks, 120); got != tc.want {
			t.Errorf("snippet(%q)\n got %q\nwant %q", tc.out, got, tc.want)
		}
	}
}
