package compress

import (
	"strconv"
	"strings"
)

// Log compression first folds repetition: a run of identical lines becomes the line and " [×N]",
// a run of lines that differ only in their digits (timestamps, counters, durations) becomes the
// first of them and " [×N similar]". A log still over logsMaxBytes then keeps its head and its
// tail, where errors and summaries are, and from the middle only the lines that name an error,
// a failure, a panic, an exception or a warning, each marked with its line number.
const (
	logsMaxBytes  = 8 << 10
	logsHeadLines = 40
	logsTailLines = 60
	logsMaxKept   = 40 // lines of the middle kept for naming an error
)

// logsAlarms are the words, lower case, that keep a line of the middle. They are matched as
// substrings, so "fail" finds "FAILED" and "failures" too.
var logsAlarms = []string{"error", "fail", "panic", "exception", "warn", "fatal", "traceback"}

// logEntry is one line of the folded log, standing for n lines from line num (1-based) on.
type logEntry struct {
	l       line
	num, n  int
	similar bool // the n lines differ in their digits
}

func (e logEntry) render() line {
	switch {
	case e.n == 1 || isBlank(e.l.text): // a run of blank lines becomes one, unmarked
		return e.l
	case e.similar:
		return line{prefix: e.l.prefix, text: e.l.text + " [×" + strconv.Itoa(e.n) + " similar]"}
	default:
		return line{prefix: e.l.prefix, text: e.l.text + " [×" + strconv.Itoa(e.n) + "]"}
	}
}

// compressLogs folds repeated lines, then cuts the middle out of a log still too long.
func compressLogs(lines []line) []line {
	entries := foldLogs(lines)
	out := make([]line, len(entries))
	size := 0
	for i, e := range entries {
		out[i] = e.render()
		size += len(out[i].prefix) + len(out[i].text) + 1
	}
	if size <= logsMaxBytes || len(entries) <= logsHeadLines+logsTailLines+1 {
		return out
	}

	mid := entries[logsHeadLines : len(entries)-logsTailLines]
	var kept []line
	omitted, extra := 0, 0
	for _, e := range mid {
		if !isAlarm(e.l.text) {
			omitted += e.n
			continue
		}
		if len(kept) == logsMaxKept {
			extra += e.n
			continue
		}
		r := e.render()
		if r.prefix == "" { // a prefix already says which line this is
			r.text = "[line " + strconv.Itoa(e.num) + "] " + r.text
		}
		kept = append(kept, r)
	}
	res := make([]line, 0, logsHeadLines+logsTailLines+len(kept)+2)
	res = append(res, out[:logsHeadLines]...)
	res = append(res, line{text: "… " + strconv.Itoa(omitted) + " lines omitted …"})
	res = append(res, kept...)
	if extra > 0 {
		res = append(res, line{text: "… " + strconv.Itoa(extra) + " more error and warning lines omitted …"})
	}
	return append(res, out[len(out)-logsTailLines:]...)
}

// foldLogs folds runs of lines equal after maskDigits into one entry each.
func foldLogs(lines []line) []logEntry {
	var entries []logEntry
	prevKey := ""
	for i, l := range lines {
		key := maskDigits(l.text)
		if len(entries) > 0 && key == prevKey {
			e := &entries[len(entries)-1]
			e.n++
			if l.text != e.l.text {
				e.similar = true
			}
			continue
		}
		entries = append(entries, logEntry{l: l, num: i + 1, n: 1})
		prevKey = key
	}
	return entries
}

// maskDigits replaces every run of ASCII digits in s by one '#'. It returns s itself when s has
// no digits.
func maskDigits(s string) string {
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < '0' || c > '9' {
			b.WriteByte(c)
			i++
			continue
		}
		b.WriteByte('#')
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return b.String()
}

// isAlarm reports whether s holds one of logsAlarms, in any case.
func isAlarm(s string) bool {
	l := strings.ToLower(s)
	for _, w := range logsAlarms {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
