package gemini

import (
	"github.com/observerhq/observer/pkg/jsonscan"
)

// The readers below walk a record once. jsonscan.Members walks (and checks) a member's value
// before it hands it out, so reading a tool output nested eight objects deep with Members costs
// eight walks of it; obj and arr hand out where a value starts, and the caller walks it (reading
// what it needs on the way) or lets them skip it: every byte is walked once, and the strings kept
// once more to decode them.

// skipSpace returns the index of the first byte at or after i that is not JSON white space.
func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t') {
		i++
	}
	return i
}

// obj walks the object at d[i] (white space before it allowed): fn gets each member's key (still
// quoted) and where its value starts (always inside d), and returns the index just past the value, having walked it,
// or -1 to have obj skip it. It returns the index just past the object.
func obj(d []byte, i int, fn func(key []byte, at int) (int, error)) (int, error) {
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != '{' {
		return 0, jsonscan.ErrSyntax
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
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
		i = skipSpace(d, kend)
		if i >= len(d) || d[i] != ':' {
			return 0, jsonscan.ErrSyntax
		}
		i = skipSpace(d, i+1)
		if i >= len(d) {
			return 0, jsonscan.ErrSyntax
		}
		end, err := fn(key, i)
		if err == nil && end < 0 {
			end, err = jsonscan.Skip(d, i)
		}
		if err != nil {
			return 0, err
		}
		i = skipSpace(d, end)
		if i >= len(d) {
			return 0, jsonscan.ErrSyntax
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, jsonscan.ErrSyntax
		}
	}
}

// arr walks the array at d[i] the way obj walks an object.
func arr(d []byte, i int, fn func(at int) (int, error)) (int, error) {
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != '[' {
		return 0, jsonscan.ErrSyntax
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
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
		i = skipSpace(d, end)
		if i >= len(d) {
			return 0, jsonscan.ErrSyntax
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, jsonscan.ErrSyntax
		}
	}
}

// keyIs reports whether a quoted key is name.
func keyIs(key []byte, name string) bool { return jsonscan.Key(key, name) }

// value skips the value at d[at] and returns it with its end.
func value(d []byte, at int) ([]byte, int, error) {
	end, err := jsonscan.Skip(d, at)
	if err != nil {
		return nil, 0, err
	}
	return d[at:end], end, nil
}

// only walks the value at d[at] with walk when it starts with open ('{' or '['), and skips it
// otherwise: a field of an unexpected type is passed over.
func only(d []byte, at int, open byte, walk func() (int, error)) (int, error) {
	if at < len(d) && d[at] == open {
		return walk()
	}
	return -1, nil
}
