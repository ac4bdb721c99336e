package compress

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzContent: for every kind, no input panics, Content never lengthens its input, returns the
// input itself when it declines, and gives the same bytes twice. Below Content's size floor the
// compressors run directly (compress), so that short inputs exercise them too: there valid JSON
// stays valid JSON, and code and diffs are made of their input's lines and markers.
func FuzzContent(f *testing.F) {
	for _, s := range samples() {
		if len(s.in) < 20000 { // larger seeds slow the fuzzer down more than they teach it
			f.Add(s.in)
		}
	}
	f.Add(`{"items": [` + strings.Repeat(`{"id": 1, "name": "a name longer than sixteen bytes", "tags": ["x", "y"]}, `, 12) + `null], "next": null}`)
	for _, s := range []string{
		"", "\n", "{", "[1,2,3,4]", `{"a":"` + strings.Repeat("é", 9) + `"}`, "func f() {\n\tx()\n\ty()\n}\n",
		"}\n}\n{{{\n", "def f(\n", "def f():\n    '''\n    x\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n", "@@ -1,x +1 @@\n",
		"<script", "<svg/><!--", "</script", "     1→x\n     2→y\n", "Exit code: 0\nOutput:\n", "`\n`{\n",
		"/* {\n} */\n", "'\"\\", "\xff\xfe", "x [×2]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range Kinds {
			out, ok := Content(k, s)
			again, ok2 := Content(k, s)
			if out != again || ok != ok2 {
				t.Fatalf("%s: not deterministic", k)
			}
			if len(out) > len(s) || !ok && out != s {
				t.Fatalf("%s: %d → %d bytes, ok=%v", k, len(s), len(out), ok)
			}

			raw, ok := compress(k, s)
			if again, _ := compress(k, s); raw != again {
				t.Fatalf("%s: compress not deterministic", k)
			}
			if !ok {
				continue
			}
			switch k {
			case KindJSON:
				if json.Valid([]byte(s)) && !json.Valid([]byte(raw)) {
					t.Fatalf("valid JSON %q became %q", s, raw)
				}
			case KindCode, KindDiff:
				madeOfLines(t, s, raw)
			}
		}
		if k := Detect("Bash", "", s); !isKind(k) {
			t.Fatalf("Detect = %q", k)
		}
	})
}

func isKind(k Kind) bool {
	for _, kk := range Kinds {
		if k == kk {
			return true
		}
	}
	return false
}

// madeOfLines fails unless every line of out is a line of in, in order, or a marker.
func madeOfLines(tb testing.TB, in, out string) {
	tb.Helper()
	inLines := strings.Split(in, "\n")
	j := 0
	for _, l := range strings.Split(out, "\n") {
		if codeMarker.MatchString(l) || diffMarker.MatchString(l) {
			continue
		}
		for j < len(inLines) && inLines[j] != l {
			j++
		}
		if j == len(inLines) {
			tb.Fatalf("output line %q is not an input line in order\nin:  %q\nout: %q", l, in, out)
		}
		j++
	}
}
