// Package compress shrinks the tool outputs inside model API requests before the proxy sends
// them upstream. Detect names the kind of one tool result and Content compresses it in a form
// that suits that kind: JSON keeps its structure and drops repeated array items, code keeps its
// declarations and drops function bodies, logs collapse repeats and keep their errors and tail,
// diffs keep every change, HTML loses its scripts and styles, text keeps its head and tail.
//
// Detect and Content are pure and deterministic: the same input gives the same bytes every time,
// so a conversation that is sent again and again compresses the same way each turn and the
// upstream's prompt cache still matches.
package compress

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the content type of one tool result.
type Kind string

// The kinds Detect names and Content compresses.
const (
	KindJSON Kind = "json"
	KindCode Kind = "code"
	KindLogs Kind = "logs"
	KindText Kind = "text"
	KindDiff Kind = "diff"
	KindHTML Kind = "html"
)

// Kinds lists every kind, in this order: json, code, logs, text, diff, html.
var Kinds = []Kind{KindJSON, KindCode, KindLogs, KindText, KindDiff, KindHTML}

// minBytes is the size below which Content leaves a result alone: the markers it writes would
// save too little to be worth the lost detail.
const minBytes = 512

// Content returns the compressed form of s, of kind k. It returns s itself (ok=false) when no form
// shorter by at least 10% exists or s is shorter than minBytes (512). Deterministic.
//
// Two wrappers that clients put around a tool's output are seen through. A shell header such as
// Codex's "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n" is kept verbatim and only what
// follows it is compressed. Line-number prefixes such as Claude Code's Read tool writes
// ("     1\t" or "     1→") are stripped from JSON, which is then compressed as JSON; every
// other kind is compressed line by line on the text after the prefix, and the lines it keeps
// keep their prefixes, so their numbers still point into the file.
func Content(k Kind, s string) (out string, ok bool) {
	if len(s) < minBytes {
		return s, false
	}
	out, ok = compress(k, s)
	// At least 10% shorter, or it is not worth the lost detail.
	if !ok || len(out)*10 > len(s)*9 {
		return s, false
	}
	return out, true
}

// compress is Content without its size checks: the compressed form of s, which may be longer,
// or ok=false for a kind it does not know and for JSON that does not parse.
func compress(k Kind, s string) (string, bool) {
	header, body := splitShellHeader(s)
	d := parseDoc(body)
	var res string
	switch k {
	case KindJSON:
		var ok bool
		if res, ok = contentJSON(d); !ok {
			return "", false
		}
	case KindCode:
		res = d.with(compressCode(d.lines))
	case KindLogs:
		res = d.with(compressLogs(d.lines))
	case KindText:
		res = compressText(body)
	case KindDiff:
		res = d.with(compressDiff(d.lines))
	case KindHTML:
		res = d.with(compressHTML(d.lines))
		if len(res) > htmlMaxBytes {
			res = compressText(res)
		}
	default:
		return "", false
	}
	return header + res, true
}

// contentJSON compresses a JSON document. Under line-number prefixes the JSON is the leading run
// of prefixed lines, which loses its prefixes; whatever follows that run (a client's reminder
// appended to the file) is kept verbatim.
func contentJSON(d doc) (string, bool) {
	if !d.prefixed {
		return compressJSON(d.raw)
	}
	n := 0
	for n < len(d.lines) && d.lines[n].prefix != "" {
		n++
	}
	texts := make([]string, n)
	for i := range n {
		texts[i] = d.lines[i].text
	}
	res, ok := compressJSON(strings.Join(texts, "\n"))
	if !ok {
		return "", false
	}
	if n < len(d.lines) {
		rest := make([]string, 0, len(d.lines)-n)
		for _, l := range d.lines[n:] {
			rest = append(rest, l.prefix+l.text)
		}
		res += "\n" + strings.Join(rest, "\n")
	}
	if d.trailingNL {
		res += "\n"
	}
	return res, true
}

// line is one line of a tool result: the line-number prefix a client put in front of it, if
// any, and the text after it, without its newline. Lines a compressor writes itself (the
// "… 42 lines" markers) have no prefix.
type line struct {
	prefix, text string
}

// doc is a tool result split into lines.
type doc struct {
	raw        string
	lines      []line
	prefixed   bool // the lines carry line-number prefixes
	trailingNL bool // raw ended with a newline
}

// parseDoc splits s into lines, and the lines into prefix and text when s carries line-number
// prefixes (see prefixLen).
func parseDoc(s string) doc {
	d := doc{raw: s, trailingNL: strings.HasSuffix(s, "\n")}
	body := strings.TrimSuffix(s, "\n")
	raws := strings.Split(body, "\n")
	d.prefixed = hasPrefixes(raws)
	d.lines = make([]line, len(raws))
	for i, r := range raws {
		if d.prefixed {
			if n := prefixLen(r); n > 0 {
				d.lines[i] = line{prefix: r[:n], text: r[n:]}
				continue
			}
		}
		d.lines[i] = line{text: r}
	}
	return d
}

// with joins lines the way d's own lines were joined.
func (d doc) with(lines []line) string {
	var b strings.Builder
	n := 0
	for _, l := range lines {
		n += len(l.prefix) + len(l.text) + 1
	}
	b.Grow(n)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.prefix)
		b.WriteString(l.text)
	}
	if d.trailingNL {
		b.WriteByte('\n')
	}
	return b.String()
}

// prefixLen returns the length of the line-number prefix r starts with, or 0: optional spaces,
// a decimal number, then a tab or "→" (U+2192), as Claude Code's Read tool writes them.
func prefixLen(r string) int {
	i := 0
	for i < len(r) && r[i] == ' ' {
		i++
	}
	j := i
	for j < len(r) && r[j] >= '0' && r[j] <= '9' {
		j++
	}
	if j == i || j-i > 9 {
		return 0
	}
	if j < len(r) && r[j] == '\t' {
		return j + 1
	}
	if strings.HasPrefix(r[j:], "→") {
		return j + len("→")
	}
	return 0
}

// hasPrefixes reports whether lines carry line-number prefixes: the first three lines (fewer if
// there are fewer) all have one, numbered consecutively. A tab-separated table whose first
// column happens to count up passes too, and loses nothing by it.
func hasPrefixes(raws []string) bool {
	n := min(3, len(raws))
	prev := -1
	for i := range n {
		p := prefixLen(raws[i])
		if p == 0 {
			return false
		}
		num, err := strconv.Atoi(strings.TrimRight(strings.TrimLeft(raws[i][:p], " "), "\t→"))
		if err != nil || (prev >= 0 && num != prev+1) {
			return false
		}
		prev = num
	}
	return n > 0
}

// shellHeaderKeys start the lines Codex writes above a command's output, "Output:" last.
var shellHeaderKeys = []string{
	"Exit code:", "Wall time:", "Chunk ID:", "Process exited with code", "Process running with session ID",
	"Original token count:", "Total output lines:",
}

// splitShellHeader splits a Codex-style header ("Exit code: 0\nWall time: 0.1 seconds\nOutput:\n")
// from the output that follows it. Without such a header, header is "".
func splitShellHeader(s string) (header, body string) {
	rest := s
	for i := 0; i < 10; i++ {
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return "", s
		}
		l := strings.TrimSuffix(rest[:nl], "\r")
		rest = rest[nl+1:]
		if l == "Output:" {
			if i == 0 {
				return "", s
			}
			return s[:len(s)-len(rest)], rest
		}
		known := false
		for _, k := range shellHeaderKeys {
			if strings.HasPrefix(l, k) {
				known = true
				break
			}
		}
		if !known || len(l) > 200 {
			return "", s
		}
	}
	return "", s
}

// cutUTF8 returns the longest prefix of s no longer than n bytes that ends on a rune boundary.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// indentOf returns the leading spaces and tabs of s.
func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// isBlank reports whether s holds only white space.
func isBlank(s string) bool {
	return strings.TrimSpace(s) == ""
}
