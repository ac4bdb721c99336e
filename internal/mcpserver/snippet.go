package mcpserver

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of search_past_outputs. FTS5 evaluates every term of a query over its matches, and
// a pasted paragraph finds nothing a few distinctive words would not, so a query is refused past
// maxQueryBytes bytes or maxQueryTerms distinct terms (a word repeated counts once). The snippet
// is cut from the first maxSnipScan bytes of each output found.
const (
	maxQueryBytes = 1024
	maxQueryTerms = 32
	maxSnipScan   = 64 << 10
	snipBytes     = 120 // a snippet's width: about a dozen words, as FTS5's snippet() takes
)

// queryLimits names the bounds in the errors that refuse a query.
var queryLimits = fmt.Sprintf("%d bytes and %d distinct words or phrases", maxQueryBytes, maxQueryTerms)

// A queryTerm is a word or a "quoted phrase" of a query: its tokens as the index folds them, the
// last a prefix when the word ended in *.
type queryTerm struct {
	toks   []string
	prefix bool
}

// parseQuery turns what an agent typed into an FTS5 query that cannot be a syntax error: every
// word, and every "quoted phrase", becomes a quoted FTS5 string, all of which must match; a word
// ending in * stays a prefix query. A term given twice (in any case) counts once. It also
// returns the terms, for marking them in snippets. It takes time linear in the query, and refuses
// one over maxQueryBytes bytes or maxQueryTerms distinct terms.
func parseQuery(q string) (string, []queryTerm, error) {
	if len(q) > maxQueryBytes {
		return "", nil, fmt.Errorf("query is %d bytes; a query takes at most %s: search for the few words that matter",
			len(q), queryLimits)
	}
	var fts []string
	var terms []queryTerm
	seen := map[string]bool{}
	add := func(t string, prefix bool) {
		if t = strings.TrimSpace(t); t == "" {
			return
		}
		f := `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
		if prefix {
			f += "*"
		}
		var qt queryTerm
		eachToken(t, func(_, _ int, tok string) { qt.toks = append(qt.toks, tok) })
		qt.prefix = prefix
		key := f
		if len(qt.toks) > 0 {
			key = fmt.Sprint(prefix, qt.toks)
		}
		if !seen[key] {
			seen[key] = true
			fts, terms = append(fts, f), append(terms, qt)
		}
	}
	for q = strings.TrimSpace(q); q != ""; q = strings.TrimSpace(q) {
		if q[0] == '"' {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				add(q[1:], false)
				break
			}
			add(q[1:1+end], false)
			q = q[end+2:]
			continue
		}
		end := strings.IndexAny(q, " \t\n\"")
		if end < 0 {
			end = len(q)
		}
		word := q[:end]
		add(strings.TrimRight(word, "*"), strings.HasSuffix(word, "*"))
		q = q[end:]
	}
	if len(terms) > maxQueryTerms {
		return "", nil, fmt.Errorf("query has %d distinct words or phrases; a query takes at most %s: search for the few words that matter",
			len(terms), queryLimits)
	}
	return strings.Join(fts, " "), terms, nil
}

// eachToken calls each with every token of s, its byte span and its text folded to lower case,
// splitting s as the index's tokenizer (FTS5's unicode61) does: a token is a run of letters,
// numbers and private-use characters. unicode61 also strips diacritics, which this does not: a
// match through them is found by the index and left unmarked in its snippet.
func eachToken(s string, each func(start, end int, tok string)) {
	start := -1
	for i, r := range s {
		if r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			each(start, i, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		each(start, len(s), strings.ToLower(s[start:]))
	}
}

// A mark is one instance of a query term in an output: out[start:end] is term terms[term].
type mark struct{ start, end, term int }

// markTerms finds the instances of the terms in the first maxSnipScan bytes of out, ordered by
// their start. It tokenizes the output once and looks every token up among the terms' first
// tokens, so the work (the token comparisons, which it returns) is at most the output's tokens
// times one plus the query's tokens: linear in the output and in the query. (FTS5's snippet()
// weighs every instance against every other instead: 28 s for ten 64 KB outputs holding the 32
// words of the query on every line.)
func markTerms(out string, terms []queryTerm) (marks []mark, work int) {
	if len(out) > maxSnipScan {
		n := maxSnipScan
		for n > 0 && !utf8.RuneStart(out[n]) {
			n--
		}
		out = out[:n]
	}
	type token struct {
		start, end int
		text       string
	}
	var toks []token
	eachToken(out, func(start, end int, text string) { toks = append(toks, token{start, end, text}) })
	byFirst := map[string][]int{} // terms by their first token, compared in full
	var prefixed []int            // one-word prefix terms, compared with every token
	for i, t := range terms {
		switch {
		case len(t.toks) == 0:
		case t.prefix && len(t.toks) == 1:
			prefixed = append(prefixed, i)
		default:
			byFirst[t.toks[0]] = append(byFirst[t.toks[0]], i)
		}
	}
	try := func(at, ti int) {
		t := terms[ti]
		if at+len(t.toks) > len(toks) {
			return
		}
		for k, want := range t.toks {
			work++
			got := toks[at+k].text
			if k == len(t.toks)-1 && t.prefix {
				if !strings.HasPrefix(got, want) {
					return
				}
			} else if got != want {
				return
			}
		}
		marks = append(marks, mark{toks[at].start, toks[at+len(t.toks)-1].end, ti})
	}
	for i := range toks {
		work++
		for _, ti := range byFirst[toks[i].text] {
			try(i, ti)
		}
		for _, ti := range prefixed {
			try(i, ti)
		}
	}
	return marks, work
}

// snippet cuts out to about width bytes around its marks: the first window of marks spanning at
// most width bytes with the most distinct terms, widened to width with the text around it and cut
// at spaces; every mark wholly inside is put between « and », and … shows where text was cut. It
// takes time linear in the marks and the width.
func snippet(out string, marks []mark, width int) string {
	from, to := 0, 0 // the marks' window, out[from:to]
	if len(marks) > 0 {
		best, bi, bj := 0, 0, 0
		count := map[int]int{} // the terms in the window marks[i..j]
		for i, j := 0, 0; j < len(marks); j++ {
			count[marks[j].term]++
			for i < j && marks[j].end-marks[i].start > width {
				if count[marks[i].term]--; count[marks[i].term] == 0 {
					delete(count, marks[i].term)
				}
				i++
			}
			if len(count) > best {
				best, bi, bj = len(count), i, j
			}
		}
		from = marks[bi].start
		for _, m := range marks[bi : bj+1] {
			to = max(to, m.end)
		}
	}
	// Widen to width, half on each side (what one side cannot take goes to the other), then cut
	// at spaces.
	pad := max(width-(to-from), 0) / 2
	lo := max(from-pad, 0)
	hi := min(to+pad+(pad-(from-lo)), len(out))
	if lo > 0 {
		if sp := strings.IndexAny(out[lo:from], " \t\n"); sp >= 0 {
			lo += sp + 1
		}
		for lo < from && !utf8.RuneStart(out[lo]) {
			lo++
		}
	}
	if hi < len(out) {
		if sp := strings.LastIndexAny(out[to:hi], " \t\n"); sp >= 0 {
			hi = to + sp
		}
		for hi > to && !utf8.RuneStart(out[hi]) {
			hi--
		}
	}
	var b strings.Builder
	if lo > 0 {
		b.WriteString("…")
	}
	at := lo
	for k := sort.Search(len(marks), func(k int) bool { return marks[k].start >= lo }); k < len(marks) && marks[k].start < hi; k++ {
		if m := marks[k]; m.start >= at && m.end <= hi {
			b.WriteString(out[at:m.start])
			b.WriteString("«" + out[m.start:m.end] + "»")
			at = m.end
		}
	}
	b.WriteString(out[at:hi])
	if hi < len(out) {
		b.WriteString("…")
	}
	return b.String()
}
