package pi

import "github.com/observerhq/observer/pkg/jsonscan"

// A line is walked once: jsonscan.Members checks a member's whole value before it hands it out,
// so reading a tool output three levels down with nested Members calls walks it three times more.
// walkObject and walkArray hand out where each value starts instead; the callback walks the value
// itself (reading what it needs) or lets it be skipped, and each byte is checked once, plus once
// more for the strings that are decoded.

func space(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// walkObject walks the object starting at d[i]. fn gets each key (quoted) and the index of its
// value, and returns the index just past the value, or -1 to have it skipped. walkObject returns
// the index just past the object.
func walkObject(d []byte, i int, fn func(key []byte, at int) (int, error)) (int, error) {
	i = space(d, i)
	if i >= len(d) || d[i] != '{' {
		return 0, jsonscan.ErrSyntax
	}
	if i = space(d, i+1); i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return 0, jsonscan.ErrSyntax
		}
		kend, err := jsonscan.Skip(d, i)
		if err != nil {
			return 0, err
		}
		key := d[i:kend]
		if i = space(d, kend); i >= len(d) || d[i] != ':' {
			return 0, jsonscan.ErrSyntax
		}
		if i = space(d, i+1); i >= len(d) {
			return 0, jsonscan.ErrSyntax
		}
		end, err := fn(key, i)
		if err == nil && end < 0 {
			end, err = jsonscan.Skip(d, i)
		}
		if err != nil {
			return 0, err
		}
		if i = space(d, end); i >= len(d) {
			return 0, jsonscan.ErrSyntax
		}
		switch d[i] {
		case ',':
			i = space(d, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, jsonscan.ErrSyntax
		}
	}
}

// walkArray walks the array starting at d[i] the way walkObject walks an object.
func walkArray(d []byte, i int, fn func(at int) (int, error)) (int, error) {
	i = space(d, i)
	if i >= len(d) || d[i] != '[' {
		return 0, jsonscan.ErrSyntax
	}
	if i = space(d, i+1); i < len(d) && d[i] == ']' {
		return i + 1, nil
	}
	for {
		if i >= len(d) {
			return 0, jsonscan.ErrSyntax
		}
		end, err := fn(i)
		if err == nil && end < 0 {
			end, err = jsonscan.Skip(d, i)
		}
		if err != nil {
			return 0, err
		}
		if i = space(d, end); i >= len(d) {
			return 0, jsonscan.ErrSyntax
		}
		switch d[i] {
		case ',':
			i = space(d, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, jsonscan.ErrSyntax
		}
	}
}

// raw skips the value at d[at] into *dst and returns its end.
func raw(d []byte, at int, dst *[]byte) (int, error) {
	end, err := jsonscan.Skip(d, at)
	if err != nil {
		return 0, err
	}
	*dst = d[at:end]
	return end, nil
}

// str skips the string (or any value) at d[at] and decodes it into *dst when it is a string.
func str(d []byte, at int, dst *string) (int, error) {
	var v []byte
	end, err := raw(d, at, &v)
	if err == nil {
		*dst = jsonscan.Str(v)
	}
	return end, err
}

// boolean skips the value at d[at] and reads it into *dst when it is a boolean.
func boolean(d []byte, at int, dst *bool) (int, error) {
	var v []byte
	end, err := raw(d, at, &v)
	if err == nil {
		*dst, _ = jsonscan.Bool(v)
	}
	return end, err
}
