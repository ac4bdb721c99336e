package compress

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var textMarker = regexp.MustCompile(`(?m)^… (\d+) bytes omitted …\n`)

// splitText returns the head, the omitted count and the tail of compressed text.
func splitText(tb testing.TB, out string) (head string, omitted int, tail string) {
	tb.Helper()
	loc := textMarker.FindStringSubmatchIndex(out)
	if loc == nil {
		tb.Fatalf("no marker in %q", out)
	}
	n, _ := strconv.Atoi(out[loc[2]:loc[3]])
	return out[:loc[0]], n, out[loc[1]:]
}

func TestContent_TextHeadTail(t *testing.T) {
	in := sampleText()
	out, ok := Content(KindText, in)
	if !ok {
		t.Fatal("not compressed")
	}
	head, omitted, tail := splitText(t, out)
	if !strings.HasPrefix(in, head) || !strings.HasSuffix(in, tail) {
		t.Fatalf("head or tail is not the input's:\n%s", out)
	}
	if len(head)+omitted+len(tail) != len(in) {
		t.Errorf("head %d + omitted %d + tail %d != %d", len(head), omitted, len(tail), len(in))
	}
	if !strings.HasSuffix(head, "\n") || !strings.HasSuffix(in[:len(in)-len(tail)], "\n") {
		t.Error("not cut on line boundaries")
	}
	if len(head) > textHeadBytes || len(head) < textHeadBytes-textMinCut || len(tail) > textTailBytes || len(tail) < textTailBytes-textMinCut {
		t.Errorf("head %d, tail %d bytes", len(head), len(tail))
	}
	for _, want := range []string{"# Observer\n", "## License\n\nMIT. See LICENSE for the full text.\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost %q", want)
		}
	}
	t.Logf("README: %d → %d bytes", len(in), len(out))
}

func TestContent_TextRules(t *testing.T) {
	t.Run("ShortLeftAlone", func(t *testing.T) {
		in := strings.Repeat("a line of prose\n", 250) // 4000 bytes
		if out, ok := Content(KindText, in); ok || out != in {
			t.Errorf("compressed %d bytes of text", len(in))
		}
	})
	t.Run("OneLongLineCutOnRunes", func(t *testing.T) {
		in := strings.Repeat("日本語のテキスト", 400) // no newline, 3-byte runes
		out, ok := Content(KindText, in)
		if !ok || !utf8.ValidString(out) {
			t.Fatalf("ok %v, valid UTF-8 %v", ok, utf8.ValidString(out))
		}
		head, omitted, tail := splitText(t, out)
		head = strings.TrimSuffix(head, "\n") // added to put the marker on a line of its own
		if len(head)+omitted+len(tail) != len(in) || !strings.HasPrefix(in, head) || !strings.HasSuffix(in, tail) {
			t.Errorf("head %d + omitted %d + tail %d != %d", len(head), omitted, len(tail), len(in))
		}
	})
	t.Run("ReadPrefixesKept", func(t *testing.T) {
		in := withReadPrefixes(sampleText(), "→")
		out, ok := Content(KindText, in)
		if !ok {
			t.Fatal("not compressed")
		}
		_, _, tail := splitText(t, out)
		if !strings.HasPrefix(tail, "   ") || !strings.Contains(strings.SplitN(tail, "\n", 2)[0], "→") {
			t.Errorf("tail does not start with a numbered line: %.40q", tail)
		}
	})
}
