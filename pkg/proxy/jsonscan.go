package proxy

import (
	"encoding/json"
	"errors"
)

// A small allocation-free JSON scanner for the hot path: the proxy needs a handful of top-level
// fields of each request and response, and decoding whole bodies with encoding/json cost more than
// the rest of the proxy together. Values it keeps are decoded with encoding/json; everything else
// is only skipped. FuzzScanMatchesEncodingJSON checks it against encoding/json.

var errSyntax = errors.New("json syntax")

// eachMember calls fn with the key (still quoted, escapes and all) and the raw value of every
// member of the object that data holds, until fn returns false.
func eachMember(data []byte, fn func(key, val []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errSyntax
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return errSyntax
		}
		kend, err := skipString(data, i)
		if err != nil {
			return err
		}
		key := data[i:kend]
		i = skipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return errSyntax
		}
		i = skipSpace(data, i+1)
		vend, err := skipValue(data, i)
		if err != nil {
			return err
		}
		if !fn(key, data[i:vend]) {
			return nil
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return errSyntax
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return nil
		default:
			return errSyntax
		}
	}
}

// countArray returns the number of elements of the array val holds, or -1 if it is not one.
func countArray(val []byte) int {
	i := skipSpace(val, 0)
	if i >= len(val) || val[i] != '[' {
		return -1
	}
	i = skipSpace(val, i+1)
	if i < len(val) && val[i] == ']' {
		return 0
	}
	n := 0
	for {
		end, err := skipValue(val, i)
		if err != nil {
			return -1
		}
		n++
		i = skipSpace(val, end)
		if i >= len(val) {
			return -1
		}
		switch val[i] {
		case ',':
			i = skipSpace(val, i+1)
		case ']':
			return n
		default:
			return -1
		}
	}
}

// str returns the string val holds, or "" when it is not a string.
func str(val []byte) string {
	if len(val) < 2 || val[0] != '"' {
		return ""
	}
	plain := true
	for _, c := range val[1 : len(val)-1] {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(val[1 : len(val)-1])
	}
	var s string
	if json.Unmarshal(val, &s) != nil {
		return ""
	}
	return s
}

// keyIs reports whether a quoted key equals name (keys with escapes never match).
func keyIs(key []byte, name string) bool {
	return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at d[i] == '"'.
func skipString(d []byte, i int) (int, error) {
	for j := i + 1; j < len(d); j++ {
		switch c := d[j]; {
		case c == '\\':
			j++
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return 0, errSyntax
		}
	}
	return 0, errSyntax
}

// skipValue returns the index just past the value that starts at d[i].
func skipValue(d []byte, i int) (int, error) {
	if i >= len(d) {
		return 0, errSyntax
	}
	switch c := d[i]; {
	case c == '"':
		return skipString(d, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				end, err := skipString(d, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSyntax
	case c == 't' || c == 'f' || c == 'n' || c == '-' || (c >= '0' && c <= '9'):
		j := i
		for j < len(d) && (d[j] >= 'a' && d[j] <= 'z' || d[j] >= '0' && d[j] <= '9' || d[j] == '-' || d[j] == '+' || d[j] == '.' || d[j] == 'E') {
			j++
		}
		return j, nil
	}
	return 0, errSyntax
}
