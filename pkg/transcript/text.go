package transcript

import (
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/scrub"
)

// Clip scrubs s and keeps at most max bytes. It scrubs a margin beyond the cut, so a secret that
// straddles the cut is still recognized.
func Clip(s string, max int) string {
	if s == "" {
		return ""
	}
	if len(s) > max+1024 {
		s = CutBytes(s, max+1024)
	}
	return CutBytes(scrub.String(s), max)
}

// CutRunes keeps at most n runes of s.
func CutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// CutBytes keeps at most n bytes of s, not splitting a UTF-8 sequence.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ParseTime reads a transcript timestamp (RFC 3339). Times outside 1971..2261 are refused: they do
// not fit the nanosecond clocks that cursors and durations use.
func ParseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1970 || t.Year() >= 2262 {
		return time.Time{}, false
	}
	return t.UTC(), true
}
