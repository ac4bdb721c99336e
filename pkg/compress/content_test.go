package compress

import (
	"slices"
	"strings"
	"testing"
)

// samples are every realistic input of the tests, with the kind Detect should name.
func samples() []struct {
	name string
	kind Kind
	in   string
} {
	return []struct {
		name string
		kind Kind
		in   string
	}{
		{"JSONListing", KindJSON, sampleJSON()},
		{"GoFile", KindCode, sampleGo},
		{"PythonFile", KindCode, samplePython},
		{"TSFile", KindCode, sampleTS},
		{"GoTestLog", KindLogs, sampleGoTestLog()},
		{"NpmLog", KindLogs, sampleNpmLog()},
		{"PytestLog", KindLogs, samplePytestLog()},
		{"README", KindText, sampleText()},
		{"GitDiff", KindDiff, sampleDiff},
		{"ApplyPatch", KindDiff, sampleApplyPatch},
		{"HTMLPage", KindHTML, sampleHTML()},
	}
}

func TestKinds(t *testing.T) {
	want := []Kind{"json", "code", "logs", "text", "diff", "html"}
	if !slices.Equal(Kinds, want) {
		t.Errorf("Kinds = %q, want %q", Kinds, want)
	}
}

// Every kind on every sample: the same bytes twice, never longer, at least 10% shorter when ok,
// the input itself when not.
func TestContent_Properties(t *testing.T) {
	for _, s := range samples() {
		for _, in := range []string{s.in, withReadPrefixes(s.in, "→"), "Exit code: 0\nWall time: 0.2 seconds\nOutput:\n" + s.in} {
			for _, k := range Kinds {
				out, ok := Content(k, in)
				again, ok2 := Content(k, in)
				if out != again || ok != ok2 {
					t.Fatalf("%s as %s: not deterministic", s.name, k)
				}
				switch {
				case !ok && out != in:
					t.Errorf("%s as %s: ok=false but the output is not the input", s.name, k)
				case ok && len(out)*10 > len(in)*9:
					t.Errorf("%s as %s: %d → %d bytes is less than 10%% off", s.name, k, len(in), len(out))
				}
			}
		}
	}
}

// The compression each kind gets on its samples, for the record (go test -v -run Ratios).
func TestContent_Ratios(t *testing.T) {
	for _, s := range samples() {
		out, ok := Content(s.kind, s.in)
		if !ok {
			t.Errorf("%s: not compressed as %s", s.name, s.kind)
			continue
		}
		t.Logf("%-12s %-5s %6d → %6d bytes (%4.1f%% of the input)", s.name, s.kind, len(s.in), len(out), 100*float64(len(out))/float64(len(s.in)))
	}
}

func TestContent_SmallOrUnknown(t *testing.T) {
	small := strings.Repeat("x\n", minBytes/2-1) // 510 bytes of a log that would fold
	for _, k := range Kinds {
		if out, ok := Content(k, small); ok || out != small {
			t.Errorf("%s: compressed %d bytes", k, len(small))
		}
	}
	if out, ok := Content(KindLogs, small+"x\n"); !ok || out != "x [×256]\n" {
		t.Errorf("512 bytes: %q, %v", out, ok)
	}
	if out, ok := Content("yaml", sampleGoTestLog()); ok || out != sampleGoTestLog() {
		t.Error("an unknown kind was compressed")
	}
	in := strings.Repeat("one line of text\n", 100)
	if out, ok := Content(KindText, in); ok || out != in {
		t.Error("text under 4 KB was compressed")
	}
}

// Codex's shell header is kept as it is, and what follows it compressed as if alone.
func TestContent_ShellHeader(t *testing.T) {
	log := sampleGoTestLog()
	bare, ok := Content(KindLogs, log)
	if !ok {
		t.Fatal("log not compressed")
	}
	for _, header := range []string{
		"Exit code: 1\nWall time: 2.3 seconds\nOutput:\n",
		"Chunk ID: 4f2a\nWall time: 0.5012 seconds\nProcess exited with code 1\nOriginal token count: 5123\nOutput:\n",
		"Exit code: 1\r\nWall time: 2.3 seconds\r\nOutput:\r\n",
	} {
		out, ok := Content(KindLogs, header+log)
		if !ok || out != header+bare {
			t.Errorf("header %q: got %.200q", header, out)
		}
	}
	for _, in := range []string{"Output:\n" + log, "Note: x\nOutput:\n" + log} {
		header, _ := splitShellHeader(in)
		if header != "" {
			t.Errorf("%.20q: header %q, want none", in, header)
		}
	}
	// A JSON body under the header is compressed as JSON.
	out, ok := Content(KindJSON, "Exit code: 0\nWall time: 0.4 seconds\nOutput:\n"+sampleJSON())
	if !ok || !strings.HasPrefix(out, "Exit code: 0\nWall time: 0.4 seconds\nOutput:\n{\"incomplete_results\":false,") {
		t.Errorf("got %.120q", out)
	}
}

func TestContent_ReadPrefixDetection(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"     1\tpackage x\n     2\t\n     3\tfunc f() {}\n", true},
		{"     1→a\n     2→b\n", true},
		{"     9→a\n    10→b\n    11→c\n  <system-reminder>\n", true},
		{"1\ta\n3\tb\n4\tc\n", false}, // not consecutive
		{"id\tname\n1\tx\n2\ty\n", false},
		{"package x\n", false},
		{"", false},
	} {
		d := parseDoc(tc.in)
		if d.prefixed != tc.want {
			t.Errorf("%q: prefixed %v, want %v", tc.in, d.prefixed, tc.want)
		}
		if got := d.with(d.lines); got != tc.in {
			t.Errorf("%q: joined back as %q", tc.in, got)
		}
	}
}

// BenchmarkContent compresses each sample as the kind Detect names for it.
func BenchmarkContent(b *testing.B) {
	for _, s := range samples() {
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(s.in)))
			for b.Loop() {
				Content(Detect("", "", s.in), s.in)
			}
		})
	}
}
