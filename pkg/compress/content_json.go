package compress

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON compression keeps the document's shape and the values a model reasons with, and drops
// bulk: every object keeps every key, in order; an array keeps its first jsonKeepItems items and
// says how many it dropped; numbers, booleans, null and short strings (ids, enums, counts) stay
// as written; a long string keeps its head and says its size. The output is compact JSON.
const (
	jsonKeepItems  = 2  // items an array longer than jsonMaxItems keeps
	jsonMaxItems   = 3  // arrays up to this long are kept whole
	jsonShortStr   = 16 // strings up to this many bytes (decoded) stay as they are
	jsonStrHead    = 12 // bytes of a long string its marker keeps
	jsonMaxDepth   = 32 // containers nested deeper become "<object>" or "<array N>"
	jsonMarkerHead = "…"
)

// compressJSON compresses the JSON document s (white space around it allowed). ok is false when s
// is not valid JSON.
func compressJSON(s string) (string, bool) {
	if !json.Valid([]byte(s)) {
		return "", false
	}
	w := jsonWriter{src: s}
	w.out.Grow(len(s) / 4)
	w.value(w.skipSpace(0), 1)
	return w.out.String(), true
}

// jsonWriter walks a document that json.Valid accepted, so it checks nothing: every position it
// reads is known to hold what the grammar says.
type jsonWriter struct {
	src string
	out bytes.Buffer
}

func (w *jsonWriter) skipSpace(i int) int {
	for i < len(w.src) {
		switch w.src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value writes the compressed form of the value at i, at nesting depth depth (the top level is
// 1), and returns the position after it.
func (w *jsonWriter) value(i, depth int) int {
	switch w.src[i] {
	case '{':
		if depth > jsonMaxDepth {
			w.out.WriteString(`"<object>"`)
			return w.skipValue(i)
		}
		return w.object(i, depth)
	case '[':
		if depth > jsonMaxDepth {
			n, end := w.countItems(i)
			w.out.WriteString(`"<array ` + strconv.Itoa(n) + `>"`)
			return end
		}
		return w.array(i, depth)
	case '"':
		end := w.skipString(i)
		w.str(w.src[i:end])
		return end
	default: // number, true, false, null: kept as written
		end := w.skipScalar(i)
		w.out.WriteString(w.src[i:end])
		return end
	}
}

func (w *jsonWriter) object(i, depth int) int {
	w.out.WriteByte('{')
	i = w.skipSpace(i + 1)
	first := true
	for w.src[i] != '}' {
		if !first {
			w.out.WriteByte(',')
		}
		first = false
		end := w.skipString(i)
		w.out.WriteString(w.src[i:end]) // keys are kept exactly
		w.out.WriteByte(':')
		i = w.skipSpace(end)
		i = w.skipSpace(i + 1) // ':'
		i = w.skipSpace(w.value(i, depth+1))
		if w.src[i] == ',' {
			i = w.skipSpace(i + 1)
		}
	}
	w.out.WriteByte('}')
	return i + 1
}

// array keeps the first jsonKeepItems items of an array longer than jsonMaxItems and replaces the
// rest by one string, "… N more items". Item jsonMaxItems is written, then taken back when the
// array turns out to be longer.
func (w *jsonWriter) array(i, depth int) int {
	w.out.WriteByte('[')
	i = w.skipSpace(i + 1)
	n := 0
	cut := 0 // where the output stood before the item that may be taken back
	for w.src[i] != ']' {
		if n < jsonMaxItems {
			if n > 0 {
				w.out.WriteByte(',')
			}
			if n == jsonKeepItems {
				cut = w.out.Len() - 1
			}
			i = w.value(i, depth+1)
		} else {
			i = w.skipValue(i)
		}
		n++
		i = w.skipSpace(i)
		if w.src[i] == ',' {
			i = w.skipSpace(i + 1)
		}
	}
	if n > jsonMaxItems {
		w.out.Truncate(cut)
		w.out.WriteString(`,"` + jsonMarkerHead + " " + strconv.Itoa(n-jsonKeepItems) + ` more items"`)
	}
	w.out.WriteByte(']')
	return i + 1
}

// str writes the string literal lit (quotes included) as it is when it is short, else as a
// marker holding its first bytes and its size: "head…<string 1234B>". A marker that would not be
// shorter than the literal is not used.
func (w *jsonWriter) str(lit string) {
	if len(lit) <= jsonShortStr+2 {
		w.out.WriteString(lit)
		return
	}
	var s string
	if json.Unmarshal([]byte(lit), &s) != nil || len(s) <= jsonShortStr {
		w.out.WriteString(lit)
		return
	}
	m := quoteJSON(cutUTF8(s, jsonStrHead) + jsonMarkerHead + "<string " + strconv.Itoa(len(s)) + "B>")
	if len(m) >= len(lit) {
		w.out.WriteString(lit)
		return
	}
	w.out.WriteString(m)
}

// skipString returns the position after the string literal at i.
func (w *jsonWriter) skipString(i int) int {
	for i++; i < len(w.src); i++ {
		switch w.src[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipScalar returns the position after the number or literal at i.
func (w *jsonWriter) skipScalar(i int) int {
	for i < len(w.src) {
		switch w.src[i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipValue returns the position after the value at i, without recursion: it counts brackets
// outside strings.
func (w *jsonWriter) skipValue(i int) int {
	switch w.src[i] {
	case '"':
		return w.skipString(i)
	case '{', '[':
	default:
		return w.skipScalar(i)
	}
	depth := 0
	for i < len(w.src) {
		switch w.src[i] {
		case '"':
			i = w.skipString(i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}

// countItems returns the number of items of the array at i and the position after it.
func (w *jsonWriter) countItems(i int) (n, end int) {
	i = w.skipSpace(i + 1)
	for w.src[i] != ']' {
		i = w.skipSpace(w.skipValue(i))
		n++
		if w.src[i] == ',' {
			i = w.skipSpace(i + 1)
		}
	}
	return n, i + 1
}

// quoteJSON returns s as a JSON string literal. Unlike json.Marshal it leaves <, > and & alone.
func quoteJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString(`\ufffd`)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[c>>4])
				b.WriteByte("0123456789abcdef"[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}
