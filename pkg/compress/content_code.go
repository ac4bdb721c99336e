package compress

import (
	"regexp"
	"strconv"
	"strings"
)

// Code compression keeps a file's outline: package, import and use lines, declarations, type
// bodies and method signatures, and drops the bodies of functions. Each dropped body becomes one
// line "… N lines" at the body's indentation. A comment block outside the bodies keeps only its
// first line that has words (the summary of a doc comment) and the bare lines that open and
// close it ("/**", " */"); runs of blank lines become one.
//
// It is a line scanner, not a parser. Brace languages (Go, C, C++, Java, JS/TS, Rust, C#, Kotlin,
// Swift, PHP, shell) are read by counting braces outside strings and comments, best effort;
// indentation languages (Python, Ruby) by indentation. Whatever it misreads it keeps or drops
// whole lines of, so its output is always made of the input's own lines and its markers.
func compressCode(lines []line) []line {
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.text
	}
	var keep []codeOut
	if indentStyle(texts) {
		keep = outlineIndent(texts)
	} else {
		keep = outlineBraces(texts)
	}
	return renderCode(lines, keep)
}

// codeOut is one line of the outline: line i of the input, or, when elided > 0, a marker for
// that many dropped lines, indented by indent.
type codeOut struct {
	i      int
	elided int
	indent string
}

// minElided is the smallest body worth a marker: a marker in place of one line saves nothing.
const minElided = 2

// renderCode writes the outline: the kept lines with their prefixes, the markers, and one blank
// line for each run of them.
func renderCode(lines []line, keep []codeOut) []line {
	out := make([]line, 0, len(keep))
	prevBlank := false
	for _, k := range keep {
		if k.elided > 0 {
			out = append(out, line{text: k.indent + "… " + strconv.Itoa(k.elided) + " lines"})
			prevBlank = false
			continue
		}
		l := lines[k.i]
		if isBlank(l.text) {
			if prevBlank {
				continue
			}
			prevBlank = true
		} else {
			prevBlank = false
		}
		out = append(out, l)
	}
	return out
}

// indentStyle reports whether texts read as Python or Ruby: more lines start a def (or are a
// Ruby "end") than end by opening a brace.
func indentStyle(texts []string) bool {
	defs, braces := 0, 0
	for _, t := range texts {
		s := strings.TrimSpace(t)
		switch {
		case strings.HasPrefix(s, "def ") || strings.HasPrefix(s, "async def ") || s == "end":
			defs++
		case strings.HasSuffix(s, "{"):
			braces++
		}
	}
	return defs > braces
}

// commentBlocks marks the lines to drop from comment blocks. A block keeps its first line with a
// letter or digit in it (its first line if none has one), and the lines without words that open
// and close it ("/**", " */"), so that what is kept is still a comment. isComment says which
// lines are comments.
func commentBlocks(texts []string, isComment []bool) []bool {
	drop := make([]bool, len(texts))
	for i := 0; i < len(texts); {
		if !isComment[i] {
			i++
			continue
		}
		j := i
		for j < len(texts) && isComment[j] {
			j++
		}
		keep := i
		for k := i; k < j; k++ {
			if hasWord(texts[k]) {
				keep = k
				break
			}
		}
		// Line i is kept: it is either line keep or a line without words before it.
		for k := i + 1; k < j; k++ {
			drop[k] = k != keep && !(k == j-1 && !hasWord(texts[k]))
		}
		i = j
	}
	return drop
}

func hasWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if 'a' <= c && c <= 'z' || '0' <= s[i] && s[i] <= '9' || s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// braceScan tracks, across lines, whether the scanner stands inside a block comment or a
// multi-line (backquoted) string.
type braceScan struct {
	inBlock bool // inside /* ... */
	inRaw   bool // inside `...`: a Go raw string or a JS template literal
}

// line returns the lowest brace depth line s reaches and its depth at the end, starting from
// depth d. Braces in strings, character literals and comments do not count. A '#' starts a
// comment (shell, Ruby, PHP) when it follows white space or starts the line and is followed by
// white space or '!': "#include" and Rust's "#[" are not comments.
func (sc *braceScan) line(s string, d int) (low, end int) {
	low = d
	for i := 0; i < len(s); i++ {
		if sc.inBlock {
			j := strings.Index(s[i:], "*/")
			if j < 0 {
				return low, d
			}
			sc.inBlock = false
			i += j + 1
			continue
		}
		if sc.inRaw {
			j := strings.IndexByte(s[i:], '`')
			if j < 0 {
				return low, d
			}
			sc.inRaw = false
			i += j
			continue
		}
		switch c := s[i]; c {
		case '/':
			if i+1 < len(s) && s[i+1] == '/' {
				return low, d
			}
			if i+1 < len(s) && s[i+1] == '*' {
				sc.inBlock = true
				i++
			}
		case '#':
			if (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '!') {
				return low, d
			}
		case '"', '\'':
			j := closingQuote(s, i)
			if j < 0 {
				if c == '"' {
					return low, d // an unclosed string runs to the end of the line
				}
				continue // a lone ' is a Rust lifetime or an apostrophe
			}
			i = j
		case '`':
			sc.inRaw = true
		case '{':
			d++
		case '}':
			d--
			low = min(low, d)
		}
	}
	return low, d
}

// closingQuote returns the index of the quote that closes the one at i on the same line, or -1.
func closingQuote(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return -1
}

// isBraceComment reports whether the trimmed line s is a comment line of a brace language. A
// "#!" line is a script's interpreter, not a comment.
func isBraceComment(s string) bool {
	return strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/*") || s == "*" ||
		strings.HasPrefix(s, "* ") || strings.HasPrefix(s, "*/") || s == "#" ||
		strings.HasPrefix(s, "# ")
}

// outlineBraces outlines a brace language. A line that leaves a block open whose header reads
// as a function's (see isFuncHeader) has its body, the lines up to the one that closes that
// block, replaced by a marker; the closing line is kept. Other blocks (types, namespaces,
// classes, object literals) are kept and their functions outlined in turn.
func outlineBraces(texts []string) []codeOut {
	n := len(texts)
	low, end := make([]int, n), make([]int, n)
	isComment := make([]bool, n)
	var sc braceScan
	d := 0
	for i, t := range texts {
		isComment[i] = sc.inBlock || isBraceComment(strings.TrimSpace(t))
		low[i], end[i] = sc.line(t, d)
		d = end[i]
	}
	drop := commentBlocks(texts, isComment)

	keep := make([]codeOut, 0, n)
	for i := 0; i < n; {
		if !drop[i] {
			keep = append(keep, codeOut{i: i})
		}
		if end[i] > low[i] && !isComment[i] && isFuncHeader(texts, i) {
			// The block opened on line i starts at depth low[i]; it ends on the first line
			// that goes back down to that depth.
			j := i + 1
			for j < n && low[j] > low[i] {
				j++
			}
			if body := j - i - 1; body >= minElided {
				keep = append(keep, codeOut{elided: body, indent: bodyIndent(texts[i+1:j], texts[i])})
				i = j
				continue
			}
		}
		i++
	}
	return keep
}

// bodyIndent returns the indentation of the first non-blank line of body, or that of header
// plus a tab when there is none.
func bodyIndent(body []string, header string) string {
	for _, t := range body {
		if !isBlank(t) {
			return indentOf(t)
		}
	}
	return indentOf(header) + "\t"
}

// funcKeywords name a function wherever they appear in a header.
var funcKeywords = map[string]bool{"func": true, "fn": true, "function": true, "fun": true}

// cFuncReturningType matches the header of a C function that returns a struct, union or enum,
// "static struct node *node_new(int v)", which its type keyword would otherwise make a type.
var cFuncReturningType = regexp.MustCompile(`\b(?:struct|union|enum)\s+\w+[\s*]+\w+\s*\(`)

// typeKeywords open blocks whose content is declarations, kept.
var typeKeywords = map[string]bool{
	"class": true, "struct": true, "interface": true, "enum": true, "union": true, "namespace": true,
	"impl": true, "trait": true, "mod": true, "module": true, "object": true, "extension": true,
	"protocol": true, "record": true, "extern": true, "type": true,
}

// isFuncHeader reports whether the block opened on line i is a function's body. The header is
// line i with the lines before it that continue it (a signature over several lines, a brace on a
// line of its own): back to the last line that ends a statement or a block, is blank, a comment
// or an annotation. It is a function's when, outside parentheses, it says func/fn/function/fun,
// or it says no type keyword (class, struct, impl, ...) and has a parameter list or an arrow:
// "public void run() {", "render() {", "const f = async (x) => {". A header with neither, such as
// "var table = map[string]int{" or "methods: {", opens data or a type and is kept.
func isFuncHeader(texts []string, i int) bool {
	start := i
	for k := i - 1; k >= 0 && k >= i-10; k-- {
		s := strings.TrimSpace(texts[k])
		if s == "" || isBraceComment(s) || strings.HasPrefix(s, "@") || strings.HasPrefix(s, "[") ||
			strings.HasPrefix(s, "#[") || strings.HasSuffix(s, ";") || strings.HasSuffix(s, "{") ||
			strings.HasSuffix(s, "}") {
			break
		}
		start = k
	}
	var h strings.Builder
	for k := start; k <= i; k++ {
		t := texts[k]
		if k == i {
			// Up to the last brace that line i leaves open is enough.
			if b := strings.LastIndexByte(t, '{'); b >= 0 {
				t = t[:b]
			}
		}
		h.WriteString(t)
		h.WriteByte(' ')
	}
	header := h.String()
	hasParams := strings.Contains(header, ")") || strings.Contains(header, "=>")

	// The words outside parentheses, so that a parameter called "type" is not a keyword.
	depth := 0
	var outside strings.Builder
	for j := 0; j < len(header); j++ {
		switch c := header[j]; c {
		case '(':
			depth++
			outside.WriteByte(' ')
		case ')':
			depth = max(depth-1, 0)
			outside.WriteByte(' ')
		default:
			if depth == 0 && (c == '_' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z') {
				outside.WriteByte(c)
			} else {
				outside.WriteByte(' ')
			}
		}
	}
	words := strings.Fields(outside.String())
	for _, w := range words {
		if funcKeywords[w] {
			return true
		}
	}
	if cFuncReturningType.MatchString(header) {
		return true
	}
	for _, w := range words {
		if typeKeywords[w] {
			return false
		}
	}
	return hasParams
}

// outlineIndent outlines an indentation language. A def line (with the lines that continue its
// parameter list) is kept; of its body, the lines indented deeper than the def, it keeps the
// first line of a docstring and replaces the rest by a marker. Class bodies and module-level
// statements are kept. Lines inside a triple-quoted string are never read as a def.
func outlineIndent(texts []string) []codeOut {
	n := len(texts)
	inString := tripleQuoted(texts)
	isComment := make([]bool, n)
	for i, t := range texts {
		s := strings.TrimSpace(t)
		isComment[i] = !inString[i] && strings.HasPrefix(s, "#") && !strings.HasPrefix(s, "#!")
	}
	drop := commentBlocks(texts, isComment)

	keep := make([]codeOut, 0, n)
	for i := 0; i < n; {
		s := strings.TrimSpace(texts[i])
		if inString[i] || !(strings.HasPrefix(s, "def ") || strings.HasPrefix(s, "async def ")) {
			if !drop[i] {
				keep = append(keep, codeOut{i: i})
			}
			i++
			continue
		}
		// The signature runs until its parentheses close.
		indent := len(indentOf(texts[i]))
		j, parens := i, 0
		for j < n && j < i+50 {
			parens += parenDelta(texts[j])
			keep = append(keep, codeOut{i: j})
			j++
			if parens <= 0 {
				break
			}
		}
		// The body: lines indented deeper than the def, blank lines, and lines inside a
		// multi-line string; trailing blank lines belong to what follows.
		k := j
		for k < n && (inString[k] || isBlank(texts[k]) || len(indentOf(texts[k])) > indent) {
			k++
		}
		for k > j && isBlank(texts[k-1]) {
			k--
		}
		first := j
		for first < k && isBlank(texts[first]) {
			first++
		}
		if first < k && isDocstring(texts[first]) {
			// Its first line, and the next when the first holds only the quotes.
			keep = append(keep, codeOut{i: first})
			first++
			if first < k && !hasWord(texts[first-1]) {
				keep = append(keep, codeOut{i: first})
				first++
			}
		}
		switch body := k - first; {
		case body >= minElided:
			keep = append(keep, codeOut{elided: body, indent: bodyIndent(texts[first:k], texts[i])})
		default:
			for m := first; m < k; m++ {
				keep = append(keep, codeOut{i: m})
			}
		}
		i = k
	}
	return keep
}

// isDocstring reports whether t starts a Python docstring.
func isDocstring(t string) bool {
	s := strings.TrimLeft(strings.TrimSpace(t), "rRuUbB")
	return strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, "'''") || strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "'")
}

// parenDelta returns the parentheses and brackets t opens minus those it closes, outside
// strings and comments (best effort: strings are taken to close on their line).
func parenDelta(t string) int {
	d := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '#':
			return d
		case '"', '\'':
			if j := closingQuote(t, i); j >= 0 {
				i = j
			} else {
				return d
			}
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		}
	}
	return d
}

// tripleQuoted reports for each line whether it starts inside a triple-quoted string.
func tripleQuoted(texts []string) []bool {
	in := make([]bool, len(texts))
	open := "" // the delimiter of the string the scanner is in
	for i, t := range texts {
		in[i] = open != ""
		for j := 0; j+3 <= len(t); j++ {
			switch {
			case open == "" && t[j] == '#':
				j = len(t)
			case open == "" && (t[j:j+3] == `"""` || t[j:j+3] == "'''"):
				open = t[j : j+3]
				j += 2
			case open != "" && t[j] == '\\':
				j++
			case open != "" && t[j:j+3] == open:
				open = ""
				j += 2
			}
		}
	}
	return in
}
