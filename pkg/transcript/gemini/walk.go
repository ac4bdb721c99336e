package gemini

import (
	"github.com/observerhq/observer/pkg/jsonscan"
)

// The readers walk a record once, with jsonscan.WalkObject and jsonscan.WalkArray (see there).

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
