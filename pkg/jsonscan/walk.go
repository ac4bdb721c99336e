package jsonscan

// WalkObject and WalkArray read a value in one pass. Members checks a member's whole value before
// it hands it out, so reading a string three objects down with nested Members calls walks it
// three times more; the walkers hand out where each value starts instead, and the callback walks
// the value itself (reading what it needs on the way) or lets the walker skip it. Every byte is
// then checked once, plus once more for the strings that are decoded.
//
// Nesting is bounded by MaxDepth in each value a walker skips, not across the callbacks' own
// walks: a caller walks a fixed shape, so its recursion is bounded by its code.

// WalkObject walks the object at d[i] (white space before it allowed). fn gets each member's key
// (still quoted) and the index where its value starts (always inside d), and returns the index
// just past the value, having walked it, or -1 to have WalkObject skip it. WalkObject returns the
// index just past the object; what follows it is not looked at.
func WalkObject(d []byte, i int, fn func(key []byte, at int) (int, error)) (int, error) {
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != '{' {
		return 0, ErrSyntax
	}
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
		if i = skipSpace(d, kend); i >= len(d) || d[i] != ':' {
			return 0, ErrSyntax
		}
		if i = skipSpace(d, i+1); i >= len(d) {
			return 0, ErrSyntax
		}
		end, err := fn(key, i)
		if err == nil && end < 0 {
			end, err = Skip(d, i)
		}
		if err != nil {
			return 0, err
		}
		if i = skipSpace(d, end); i >= len(d) {
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

// WalkArray walks the array at d[i] the way WalkObject walks an object: fn gets the index where
// each element starts.
func WalkArray(d []byte, i int, fn func(at int) (int, error)) (int, error) {
	i = skipSpace(d, i)
	if i >= len(d) || d[i] != '[' {
		return 0, ErrSyntax
	}
	if i = skipSpace(d, i+1); i < len(d) && d[i] == ']' {
		return i + 1, nil
	}
	for {
		if i >= len(d) {
			return 0, ErrSyntax
		}
		end, err := fn(i)
		if err == nil && end < 0 {
			end, err = Skip(d, i)
		}
		if err != nil {
			return 0, err
		}
		if i = skipSpace(d, end); i >= len(d) {
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

// AtEnd reports whether only white space follows d[end:]: a walker's caller checks it to accept
// exactly one value.
func AtEnd(d []byte, end int) bool { return skipSpace(d, end) == len(d) }
