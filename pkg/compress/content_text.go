package compress

import (
	"strconv"
	"strings"
)

// Text compression keeps the head and the tail: where a document starts says what it is, where
// it ends says how it came out, and the middle is what a reader skims.
const (
	textMaxBytes  = 4 << 10  // text up to this size is left alone
	textHeadBytes = 1536     // bytes of head kept
	textTailBytes = 1536     // bytes of tail kept
	textMinCut    = 1536 / 2 // a cut on a line boundary may give up at most this much of head or tail
)

// compressText keeps the first and last textHeadBytes and textTailBytes of s with one line
// "… N bytes omitted …" between them, cut on line boundaries when a boundary lies in the second
// half of the head (the first half of the tail), else on rune boundaries. Lines cut whole keep
// their line-number prefixes.
func compressText(s string) string {
	if len(s) <= textMaxBytes {
		return s
	}
	head := cutUTF8(s, textHeadBytes)
	if nl := strings.LastIndexByte(head, '\n'); nl >= textHeadBytes-textMinCut {
		head = head[:nl+1]
	}
	start := len(s) - textTailBytes
	if nl := strings.IndexByte(s[start:], '\n'); nl >= 0 && nl < textMinCut && start+nl+1 < len(s) {
		start += nl + 1
	} else {
		for start < len(s) && !isRuneStart(s[start]) {
			start++
		}
	}
	tail := s[start:]
	var b strings.Builder
	b.Grow(len(head) + len(tail) + 40)
	b.WriteString(head)
	if !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("… " + strconv.Itoa(len(s)-len(head)-len(tail)) + " bytes omitted …\n")
	b.WriteString(tail)
	return b.String()
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }
