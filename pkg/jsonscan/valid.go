package jsonscan

import "bytes"

// MembersValid and ElementsValid are Members and Elements for a value taken from a text that a
// checking walk (Members, Elements, Skip, Valid, or encoding/json) accepted whole: the message a
// line's walk handed out, that message's content, a block of it. They do not check its syntax
// again, and they find the end of a string by searching for its closing quote (bytes.IndexByte,
// many bytes at a time) instead of reading each byte: a tool's output, nested three values deep
// in a line, was read once by the line's walk and again by every nested walk. Given a text that
// is not valid JSON they hand out values that mean nothing, or report ErrSyntax; they never
// panic and always end.

// MembersValid calls fn with the key (still quoted) and the raw value of each member of the valid
// object data holds, in order, until fn returns false.
func MembersValid(data []byte, fn func(key, val []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return ErrSyntax
	}
	for i = skipSpace(data, i+1); i < len(data) && data[i] == '"'; {
		kend := strValid(data, i)
		if kend-i < 2 {
			return ErrSyntax
		}
		key := data[i:kend]
		if i = skipSpace(data, kend); i >= len(data) || data[i] != ':' {
			return ErrSyntax
		}
		i = skipSpace(data, i+1)
		vend := skipValid(data, i)
		if vend <= i {
			return ErrSyntax
		}
		if !fn(key, data[i:vend]) {
			return nil
		}
		if i = skipSpace(data, vend); i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return nil
}

// ElementsValid calls fn with the raw bytes of each element of the valid array data holds, until
// fn returns false.
func ElementsValid(data []byte, fn func(val []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return ErrSyntax
	}
	for i = skipSpace(data, i+1); i < len(data) && data[i] != ']'; {
		end := skipValid(data, i)
		if end <= i {
			return ErrSyntax
		}
		if !fn(data[i:end]) {
			return nil
		}
		if i = skipSpace(data, end); i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return nil
}

// skipValid returns the index just past the value that starts at d[i] in valid JSON (i itself
// when no value starts there).
func skipValid(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return strValid(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = strValid(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(d)
	case ',', ':', '}', ']', ' ', '\t', '\n', '\r':
		return i
	}
	for i < len(d) { // a number, true, false or null
		switch d[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// strValid returns the index just past the string at d[i] == '"' in valid JSON: past the first
// quote after it that is not escaped (not after an odd run of backslashes). Each run is counted
// back at most to the quote before it, so a string costs its length once.
func strValid(d []byte, i int) int {
	for j := i + 1; j < len(d); {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return len(d)
		}
		q := j + k
		odd := false
		for p := q - 1; p > i && d[p] == '\\'; p-- {
			odd = !odd
		}
		if !odd {
			return q + 1
		}
		j = q + 1
	}
	return len(d)
}
