package transcript

import (
	"strconv"
	"strings"
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

// ClipTarget trims s, scrubs it and keeps at most max runes: the target of an action (a path, a
// command). Like Clip it scrubs a margin beyond the cut, bounded so a huge input costs no more
// than its first few kilobytes.
func ClipTarget(s string, max int) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 4*(max+256) {
		s = CutRunes(s, max+256)
	}
	return CutRunes(scrub.String(s), max)
}

// Count reads a token count as the clients write it: a JSON number (integral or not) or a
// numeric string. Anything else, and a negative or absurd value, reads as 0, so one odd field
// does not lose a record.
func Count(v []byte) int64 {
	s := strings.TrimSpace(strings.Trim(string(v), `"`))
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		if i > 0 && i < 1e15 {
			return i
		}
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f < 0 || f > 1e15 {
		return 0
	}
	return int64(f)
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
