// Package jsonscan reads JSON without decoding what it does not need: it walks an object's members
// or an array's elements, hands out each value's raw bytes, and decodes only the strings, numbers
// and booleans a caller asks for. The proxy and the transcript readers use it on their hot paths,
// where encoding/json's byte-at-a-time state machine, run once to validate and again to decode,
// cost more than everything else together (tool outputs are long strings).
//
// Guarantees: Members, Elements, Skip and Valid accept exactly the texts encoding/json accepts as
// one value (FuzzValidMatchesEncodingJSON checks it) except that they do not check UTF-8 (callers
// check it once per line, or do not need it); String decodes as encoding/json does, invalid
// surrogates becoming U+FFFD. Keys are compared byte for byte: unlike encoding/json, "Type" is not
// "type", and a key written with escapes matches nothing. Nesting deeper than MaxDepth is an error.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// ErrSyntax reports text that is not JSON.
var ErrSyntax = errors.New("invalid JSON")

// MaxDepth bounds nesting, as encoding/json does, so that hostile input cannot exhaust the stack.
const MaxDepth = 10000

// Members calls fn with the key (still quoted) and the raw value of each member of the object
// that data holds, in order, until fn returns false. It reports ErrSyntax for anything that is not
// one object (trailing white space allowed) — checked up to where fn stopped it.
func Members(data []byte, fn func(key, val []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return ErrSyntax
	}
	end, err := object(data, i, 1, fn)
	if err != nil || end < 0 {
		return err
	}
	if skipSpace(data, end) != len(data) {
		return ErrSyntax
	}
	return nil
}

// Elements calls fn with the raw bytes of each element of the array that data holds, until fn
// returns false.
func Elements(data []byte, fn func(val []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return ErrSyntax
	}
	end, err := array(data, i, 1, fn)
	if err != nil || end < 0 {
		return err
	}
	if skipSpace(data, end) != len(data) {
		return ErrSyntax
	}
	return nil
}

// Count returns the number of elements of the array val holds, or -1 if it holds no valid array.
func Count(val []byte) int {
	n := 0
	if Elements(val, func([]byte) bool { n++; return true }) != nil {
		return -1
	}
	return n
}

// Valid reports whether data is one JSON value, with white space around it allowed.
func Valid(data []byte) bool {
	end, err := Skip(data, skipSpace(data, 0))
	return err == nil && skipSpace(data, end) == len(data)
}

// Skip returns the index just past the value that starts at d[i], checking its syntax.
func Skip(d []byte, i int) (int, error) { return value(d, i, 0) }

// Key reports whether a quoted key is exactly name.
func Key(key []byte, name string) bool {
	return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name
}

// Null reports whether val is null or empty (a missing value).
func Null(val []byte) bool { return len(val) == 0 || string(val) == "null" }

// Str returns the string val holds, or "" when it holds none.
func Str(val []byte) string {
	s, _ := String(val)
	return s
}

// String decodes the string val holds; ok is false when val is not a valid JSON string.
func String(val []byte) (s string, ok bool) {
	s, _, ok = StringPrefix(val, -1)
	return s, ok
}

// StringPrefix decodes at most max bytes of the string val holds (all of it when max < 0, never
// splitting a character) and returns them with the length in bytes of the whole decoded string,
// which it counts without building it: a 50 MB tool output costs one quick pass.
func StringPrefix(val []byte, max int) (prefix string, size int64, ok bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", 0, false
	}
	body := val[1 : len(val)-1]
	if plain(body, 0) == len(body) {
		if max < 0 || len(body) <= max {
			return string(body), int64(len(body)), true
		}
		return string(cut(body, max)), int64(len(body)), true
	}
	full := max < 0
	// The decoded text is never longer than its JSON: one allocation, which the result keeps.
	out := make([]byte, 0, len(body))
	if !full {
		out = make([]byte, 0, min(len(body), max+2*utf8.UTFMax))
	}
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			if c == '"' || c < 0x20 {
				return "", 0, false
			}
			j := plain(body, i+1)
			if full {
				out = append(out, body[i:j]...)
			} else if len(out) < max {
				out = append(out, body[i:min(j, i+max-len(out)+utf8.UTFMax)]...)
			}
			size += int64(j - i)
			i = j
			continue
		}
		if i+1 >= len(body) {
			return "", 0, false
		}
		var r rune
		switch body[i+1] {
		case '"', '\\', '/':
			r = rune(body[i+1])
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			u, ok := hex4(body, i+2)
			if !ok {
				return "", 0, false
			}
			i += 6
			r = rune(u)
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
				if u2, ok := hex4(body, i+2); ok && i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if dec := utf16.DecodeRune(rune(u), rune(u2)); dec != utf8.RuneError {
						r = dec
						i += 6
					}
				}
			}
			size += int64(utf8.RuneLen(r))
			if full || len(out) < max {
				out = utf8.AppendRune(out, r)
			}
			continue
		default:
			return "", 0, false
		}
		i += 2
		size++
		if full || len(out) < max {
			out = append(out, byte(r))
		}
	}
	if !full && len(out) > max {
		out = cut(out, max)
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), size, true // out is not kept: no copy
}

// cut keeps at most n bytes of b, not splitting a UTF-8 sequence.
func cut(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

func hex4(b []byte, i int) (uint16, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v uint16
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(c)
	}
	return v, true
}

// Bool returns the boolean val holds; ok is false for anything else.
func Bool(val []byte) (v, ok bool) {
	switch string(val) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Int returns the integer val holds (a number without fraction or exponent that fits int64).
func Int(val []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(val), 10, 64)
	return n, err == nil
}

// Float returns the number val holds.
func Float(val []byte) (float64, bool) {
	if len(val) == 0 || !(val[0] == '-' || val[0] >= '0' && val[0] <= '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(val), 64)
	return f, err == nil
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t') {
		i++
	}
	return i
}

// value returns the index just past the value at d[i].
func value(d []byte, i, depth int) (int, error) {
	if i >= len(d) {
		return 0, ErrSyntax
	}
	switch c := d[i]; {
	case c == '"':
		return str(d, i)
	case c == '{':
		if depth >= MaxDepth {
			return 0, ErrSyntax
		}
		return object(d, i, depth+1, nil)
	case c == '[':
		if depth >= MaxDepth {
			return 0, ErrSyntax
		}
		return array(d, i, depth+1, nil)
	case c == 't':
		return literal(d, i, "true")
	case c == 'f':
		return literal(d, i, "false")
	case c == 'n':
		return literal(d, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return number(d, i)
	}
	return 0, ErrSyntax
}

// object returns the index just past the object at d[i] == '{', calling fn (when not nil) on each
// member; it returns -1 when fn stopped it.
func object(d []byte, i, depth int, fn func(key, val []byte) bool) (int, error) {
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return 0, ErrSyntax
		}
		kend, err := str(d, i)
		if err != nil {
			return 0, err
		}
		key := d[i:kend]
		i = skipSpace(d, kend)
		if i >= len(d) || d[i] != ':' {
			return 0, ErrSyntax
		}
		i = skipSpace(d, i+1)
		vend, err := value(d, i, depth)
		if err != nil {
			return 0, err
		}
		if fn != nil && !fn(key, d[i:vend]) {
			return -1, nil
		}
		i = skipSpace(d, vend)
		if i >= len(d) {
			return 0, ErrSyntax
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, ErrSyntax
		}
	}
}

// array returns the index just past the array at d[i] == '[', calling fn (when not nil) on each
// element; it returns -1 when fn stopped it.
func array(d []byte, i, depth int, fn func(val []byte) bool) (int, error) {
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := value(d, i, depth)
		if err != nil {
			return 0, err
		}
		if fn != nil && !fn(d[i:end]) {
			return -1, nil
		}
		i = skipSpace(d, end)
		if i >= len(d) {
			return 0, ErrSyntax
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, ErrSyntax
		}
	}
}

// str returns the index just past the string at d[i] == '"'.
func str(d []byte, i int) (int, error) {
	for j := i + 1; ; j++ {
		j = plain(d, j)
		if j >= len(d) {
			return 0, ErrSyntax
		}
		switch d[j] {
		case '"':
			return j + 1, nil
		case '\\':
			if j+1 >= len(d) {
				return 0, ErrSyntax
			}
			switch d[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := hex4(d, j+2); !ok {
					return 0, ErrSyntax
				}
				j += 5
			default:
				return 0, ErrSyntax
			}
		default: // a control character
			return 0, ErrSyntax
		}
	}
}

// plain returns the index of the first byte at or after j that ends a run of plain string bytes:
// a quote, a backslash or a control character (len(d) if none). It tests eight bytes at a time.
func plain(d []byte, j int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; j+8 <= len(d); j += 8 {
		w := binary.LittleEndian.Uint64(d[j:])
		q, b := w^(ones*'"'), w^(ones*'\\')
		// A byte of w below 0x20, or a zero byte of q or b, sets its high bit here. A borrow can
		// set the bits of the bytes after such a byte too, never of one before it: the lowest bit
		// set is the first such byte (w holds d[j] in its low byte).
		if m := ((w-ones*0x20)&^w | (q-ones)&^q | (b-ones)&^b) & highs; m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
	}
	for ; j < len(d); j++ {
		if c := d[j]; c < 0x20 || c == '"' || c == '\\' {
			return j
		}
	}
	return j
}

func literal(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return 0, ErrSyntax
	}
	return i + len(lit), nil
}

// number returns the index just past the number at d[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(d []byte, i int) (int, error) {
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		return 0, ErrSyntax
	}
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			return 0, ErrSyntax
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			return 0, ErrSyntax
		}
		i = j
	}
	return i, nil
}

func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}
