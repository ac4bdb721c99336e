package compress

import (
	"fmt"
	"strings"
	"testing"
)

// checkNoClutter fails when out holds anything the HTML compressor removes.
func checkNoClutter(tb testing.TB, out string) {
	tb.Helper()
	lower := strings.ToLower(out)
	for _, bad := range []string{"<script", "</script", "<style", "</style", "<svg", "</svg", "<!--", "-->", " style=", "gtm.js", "font-family"} {
		if strings.Contains(lower, bad) {
			tb.Errorf("output holds %q:\n%s", bad, out)
		}
	}
}

func TestContent_HTMLPage(t *testing.T) {
	in := sampleHTML()
	out, ok := Content(KindHTML, in)
	if !ok {
		t.Fatal("not compressed")
	}
	checkNoClutter(t, out)
	for _, want := range []string{
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Release notes - Observer 2.4</title>\n</head>\n",
		"<header>\n<h1>Observer 2.4</h1>\n</header>\n",
		"<section class=\"note\" id=\"change-12\">\n<h2>Change 12</h2>\n<p>\nThe proxy now compresses tool output of kind 12 before it goes upstream,\nwhich saves tokens on long sessions.\n</p>\n</section>\n",
		"<footer><p>&copy; 2025 Observer</p></footer>\n</body>\n</html>\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" || l != strings.TrimSpace(l) || strings.Contains(l, "  ") {
			t.Errorf("white space not collapsed in %q", l)
		}
	}
	t.Logf("page: %d → %d bytes", len(in), len(out))
}

// A page still over 16 KB without its clutter keeps its head and tail.
func TestContent_HTMLLargePage(t *testing.T) {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html><head><title>Changelog</title><script>var x = 1;</script></head><body>\n")
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/releases/v%d\">Release %d</a>: bug fixes and performance work.</li>\n", i, i)
	}
	b.WriteString("</body></html>\n")
	in := b.String()
	out, ok := Content(KindHTML, in)
	if !ok {
		t.Fatal("not compressed")
	}
	checkNoClutter(t, out)
	if !strings.HasPrefix(out, "<!doctype html>\n<html><head><title>Changelog</title></head><body>\n<li>") ||
		!strings.HasSuffix(out, "<li><a href=\"/releases/v400\">Release 400</a>: bug fixes and performance work.</li>\n</body></html>\n") ||
		!strings.Contains(out, " bytes omitted …\n") {
		t.Errorf("head or tail lost:\n%s", out)
	}
	if len(out) > textHeadBytes+textTailBytes+100 {
		t.Errorf("%d bytes left", len(out))
	}
	t.Logf("large page: %d → %d bytes", len(in), len(out))
}

func TestContent_HTMLRules(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"InlineScript", "<p>a<script>if (a < b) { x() }</script>b</p>", "<p>ab</p>"},
		{"ScriptWithAttributesAnyCase", "<p>a</p><ScRiPt type=\"module\" src=\"x.js\"></sCrIpT><p>b</p>", "<p>a</p><p>b</p>"},
		{"NotAScript", "<scripture>Genesis</scripture> <svgs/>", "<scripture>Genesis</scripture> <svgs/>"},
		{"CommentAcrossLines", "<p>a</p>\n<!-- one\n two -->\n<p>b</p><!---->c", "<p>a</p>\n<p>b</p>c"},
		{"OpeningTagAcrossLines", "<p>a</p>\n<script\n  type=\"text/javascript\">\nvar x = 1;\n</script\n>\n<p>b</p>", "<p>a</p>\n<p>b</p>"},
		{"SelfClosingSVG", "<i><svg viewBox=\"0 0 1 1\"/></i> ok", "<i></i> ok"},
		{"StyleElement", "<style media=\"print\">\np { color: red }\n</style>\n<p>x</p>", "<p>x</p>"},
		{"StyleAttributes", "<div class=\"a\" style=\"color: red\" data-style=\"kept\"><span STYLE = 'x'>t</span></div>",
			"<div class=\"a\" data-style=\"kept\"><span>t</span></div>"},
		{"WhiteSpace", "  <ul>\n\n\n    <li>one   two</li>\t\n  </ul>  ", "<ul>\n<li>one two</li>\n</ul>"},
		{"UnclosedScript", "<p>a</p><script>var x = 1;\nvar y = 2;", "<p>a</p>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := parseDoc(tc.in)
			if got := d.with(compressHTML(d.lines)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// An HTML file read with Claude Code's Read tool keeps the numbers of the lines it keeps.
func TestContent_HTMLReadPrefixes(t *testing.T) {
	out, ok := Content(KindHTML, withReadPrefixes(sampleHTML(), "→"))
	if !ok {
		t.Fatal("not compressed")
	}
	if !strings.HasPrefix(out, "     1→<!DOCTYPE html>\n     2→<html lang=\"en\">\n     3→<head>\n     4→<meta charset=\"utf-8\">\n") {
		t.Errorf("prefixes lost:\n%.300s", out)
	}
	checkNoClutter(t, out)
}
