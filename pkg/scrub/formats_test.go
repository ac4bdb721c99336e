package scrub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/scrubtest"
)

// TestString_Formats: every credential format is redacted, by the rule meant for it, wherever it
// stands: alone on its line, among all the others, and inside a JSON string (as a transcript or an
// error body holds it).
func TestString_Formats(t *testing.T) {
	formats := scrubtest.Formats()
	if len(formats) < 40 {
		t.Fatalf("%d formats, want at least 40", len(formats))
	}
	names := map[string]bool{}
	var all []string
	for _, f := range formats {
		if names[f.Name] {
			t.Errorf("format %q listed twice", f.Name)
		}
		names[f.Name] = true
		all = append(all, f.Line)
		t.Run(f.Name, func(t *testing.T) {
			out := String(f.Line)
			for _, secret := range f.Secrets {
				if strings.Contains(out, secret) {
					t.Errorf("secret %q left in\n%s", secret, out)
				}
			}
			if mark := "[REDACTED:" + f.Kind + "]"; !strings.Contains(out, mark) {
				t.Errorf("no %s in\n%s", mark, out)
			}
			if again := String(out); again != out {
				t.Errorf("scrubbing twice changes the text:\n%s\n%s", out, again)
			}
		})
	}
	blob := strings.Join(all, "\n")
	quoted, _ := json.Marshal(blob)
	for what, text := range map[string]string{"together": blob, "as a JSON string": string(quoted)} {
		out := String(text)
		for _, f := range formats {
			for _, secret := range f.Secrets {
				if strings.Contains(out, secret) {
					t.Errorf("%s: %s: secret %q left in", what, f.Name, secret)
				}
			}
		}
	}
}

// TestString_OrdinaryLines: code, commands and prose that look like the formats (a prefix, a key
// name, a URL with a placeholder password) come through unchanged, alone and all together.
func TestString_OrdinaryLines(t *testing.T) {
	lines := scrubtest.Ordinary()
	for _, s := range lines {
		if got := String(s); got != s {
			t.Errorf("String(%q)\n = %q, want it unchanged", s, got)
		}
	}
	blob := strings.Join(lines, "\n")
	if got := String(blob); got != blob {
		t.Errorf("the ordinary lines together changed:\n%s", got)
	}
}

// BenchmarkString_Formats scrubs a tool output that holds every format once.
func BenchmarkString_Formats(b *testing.B) {
	var lines []string
	for _, f := range scrubtest.Formats() {
		lines = append(lines, f.Line)
	}
	text := strings.Join(lines, "\n")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		String(text)
	}
}

// addFormatSeeds adds every format and ordinary line to a fuzz test's seeds.
func addFormatSeeds(f *testing.F) {
	for _, fm := range scrubtest.Formats() {
		f.Add(fm.Line)
	}
	for _, s := range scrubtest.Ordinary() {
		f.Add(s)
	}
}

// FuzzString checks that String reads escapes without moving a span: the plain view of any text
// has its length, and scrubbing any text works.
func FuzzString(f *testing.F) {
	for _, s := range []string{`a\nb\"c\\n\u0026d`, `\`, `\u002`, `x\u0026`} {
		f.Add(s)
	}
	addFormatSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		if v, _ := plainEscapes(s); len(v) != len(s) {
			t.Fatalf("plainEscapes(%q) = %q: the length changed", s, v)
		}
		String(s)
	})
}

// stringByExpressions is String without its shortcuts: every rule's expression, in order, over the
// whole text (read with its escapes made plain).
func stringByExpressions(s string) string {
	v, escaped := plainEscapes(s)
	for i := range rules {
		var r redaction
		rules[i].match(v, &r)
		s = r.apply(s, marks[i])
		if escaped {
			v = r.apply(v, marks[i])
		} else {
			v = s
		}
	}
	return s
}

// FuzzStringMatchesExpressions checks String, with its gates, prefilters and hand-written matchers,
// against its rules' expressions run one after the other.
func FuzzStringMatchesExpressions(f *testing.F) {
	for _, s := range []string{"password: abc sk-ant-0123456789abcdefghijkl", `{\"password\": \"abcdefgh\"}`} {
		f.Add(s)
	}
	addFormatSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(s), stringByExpressions(s); got != want {
			t.Fatalf("String(%q)\n = %q\nexpressions give\n   %q", s, got, want)
		}
	})
}

// TestRules_LiteralsHaveNoBrackets: String keeps a text's gate bits up to date after a rule
// replaces something by adding its mark's bits only, which is right as long as no literal can
// span the edge of a mark, "[" or "]".
func TestRules_LiteralsHaveNoBrackets(t *testing.T) {
	for _, r := range rules {
		for _, l := range r.lits {
			if strings.ContainsAny(l, "[]") {
				t.Errorf("rule %s: literal %q has a bracket", r.kind, l)
			}
		}
	}
}
