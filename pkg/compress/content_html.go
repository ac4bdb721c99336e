package compress

import (
	"regexp"
	"strings"
)

// HTML compression drops what a model reads past: scripts, style sheets, comments, inline SVG
// and inline style attributes, then the indentation and blank lines. A page still over
// htmlMaxBytes then keeps its head and tail as text does.
const htmlMaxBytes = 16 << 10

// htmlDropped are the elements removed with their content. Their closing tags are looked for
// case-insensitively, without parsing what is between.
var htmlDropped = []string{"script", "style", "svg"}

// styleAttr matches an inline style attribute with its leading white space.
var styleAttr = regexp.MustCompile(`(?i)\s+style\s*=\s*(?:"[^"]*"|'[^']*')`)

// htmlState is where the scanner stands between lines: outside anything dropped, inside a
// comment, inside the opening tag of a dropped element, or inside its content.
type htmlState struct {
	comment bool
	inTag   string // the dropped element whose opening tag is not closed yet
	inElem  string // the dropped element whose content this is
	closing bool   // inside the closing tag of a dropped element
}

// compressHTML drops from each line what lies inside dropped elements and comments (which may
// span lines), removes style attributes, collapses white space and drops the lines left empty.
// Lines keep their prefixes.
func compressHTML(lines []line) []line {
	var st htmlState
	out := make([]line, 0, len(lines))
	var b strings.Builder
	for _, l := range lines {
		b.Reset()
		st.strip(l.text, &b)
		t := b.String()
		if indexFold(t, "style") >= 0 {
			t = styleAttr.ReplaceAllString(t, "")
		}
		t = strings.Join(strings.Fields(t), " ")
		if t == "" {
			continue
		}
		out = append(out, line{prefix: l.prefix, text: t})
	}
	return out
}

// strip writes to b what of s lies outside dropped elements and comments, and updates st.
func (st *htmlState) strip(s string, b *strings.Builder) {
	for s != "" {
		switch {
		case st.comment:
			end := strings.Index(s, "-->")
			if end < 0 {
				return
			}
			st.comment = false
			s = s[end+3:]
		case st.closing:
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return
			}
			st.closing = false
			s = s[end+1:]
		case st.inTag != "":
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return
			}
			if end == 0 || s[end-1] != '/' { // <svg .../> has no content
				st.inElem = st.inTag
			}
			st.inTag = ""
			s = s[end+1:]
		case st.inElem != "":
			end := indexFold(s, "</"+st.inElem)
			if end < 0 {
				return
			}
			st.inElem, st.closing = "", true
			s = s[end:]
		default:
			lt := strings.IndexByte(s, '<')
			if lt < 0 {
				b.WriteString(s)
				return
			}
			b.WriteString(s[:lt])
			s = s[lt:]
			if strings.HasPrefix(s, "<!--") {
				st.comment = true
				s = s[4:]
				continue
			}
			if tag := droppedTag(s); tag != "" {
				st.inTag = tag
				s = s[1+len(tag):]
				continue
			}
			b.WriteByte('<')
			s = s[1:]
		}
	}
}

// droppedTag returns the name of the dropped element whose opening tag s starts with, or "".
func droppedTag(s string) string {
	for _, tag := range htmlDropped {
		if len(s) < len(tag)+1 || !equalFoldASCII(s[1:1+len(tag)], tag) {
			continue
		}
		if len(s) == len(tag)+1 {
			return tag
		}
		switch s[1+len(tag)] {
		case ' ', '\t', '\r', '>', '/':
			return tag
		}
	}
	return ""
}

// indexFold returns the index of the first instance of the lower-case ASCII string sub in s,
// ignoring ASCII case, or -1.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalFoldASCII(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// equalFoldASCII reports whether s equals the lower-case ASCII string lower, ignoring ASCII case
// only (strings.EqualFold would also match "ſcript" to "script").
func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
