package openclaw

import "github.com/observerhq/observer/pkg/jsonscan"

// A record is walked once, with jsonscan.WalkObject and jsonscan.WalkArray (see there).

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
