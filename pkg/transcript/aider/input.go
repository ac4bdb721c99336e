package aider

import (
	"bytes"
	"hash/fnv"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// maxInputRead bounds how much of an input history is read: the tail beyond it (old prompts) is
// not.
const maxInputRead = 64 << 20

// maxInputScan bounds the entries a prompt's lookup looks at after its session's start.
const maxInputScan = 10000

// inputEntry is one entry of an input history: its time (Unix microseconds) and text hash.
type inputEntry struct {
	us   int64
	hash uint64
}

// inputFile is what was read of one input history.
type inputFile struct {
	size, mtime int64
	entries     []inputEntry // complete entries, in file order (time order but for a clock change)
	next        int64        // where the next read starts: the header of the last, maybe partial, entry
	base        int          // entries before next
}

// inputCache keeps the input histories read, by path, and reads only what was appended since.
type inputCache struct {
	mu    sync.Mutex
	files map[string]*inputFile
}

// maxInputFiles bounds the input histories kept; beyond it the cache starts over.
const maxInputFiles = 256

// lookup returns the time of the first entry of the input history at path whose time is at or
// after from and after after (Unix microseconds), and whose text is text; ok is false when there
// is none.
func (c *inputCache) lookup(path string, from, after int64, text string) (int64, bool) {
	f := c.load(path)
	if f == nil {
		return 0, false
	}
	lo := max(from, after+1)
	i := sort.Search(len(f.entries), func(i int) bool { return f.entries[i].us >= lo })
	h := textHash(text)
	for n := 0; i < len(f.entries) && n < maxInputScan; i, n = i+1, n+1 {
		if e := f.entries[i]; e.hash == h && e.us >= lo {
			return e.us, true
		}
	}
	return 0, false
}

// load returns the entries of the input history at path, reading what was appended since the
// last load; nil when there is no such file.
func (c *inputCache) load(path string) *inputFile {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil || len(c.files) > maxInputFiles {
		c.files = map[string]*inputFile{}
	}
	f := c.files[path]
	size, mtime := fi.Size(), fi.ModTime().UnixNano()
	if f != nil && f.size == size && f.mtime == mtime {
		return f
	}
	if f == nil || size < f.size {
		f = &inputFile{}
		if size > maxInputRead {
			f.next = size - maxInputRead
		}
	}
	if err := f.read(path, size); err != nil {
		return nil
	}
	f.size, f.mtime = size, mtime
	c.files[path] = f
	return f
}

// read parses the file from f.next to size.
func (f *inputFile) read(path string, size int64) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	data := make([]byte, size-f.next)
	if _, err := io.ReadFull(io.NewSectionReader(fh, f.next, size-f.next), data); err != nil {
		return err
	}
	f.entries = f.entries[:f.base]
	off := f.next
	var cur *inputEntry
	var curOff int64
	var lines []string
	finish := func() {
		if cur != nil {
			cur.hash = textHash(strings.Join(lines, "\n"))
			f.entries = append(f.entries, *cur)
		}
	}
	for len(data) > 0 {
		line := data
		n := bytes.IndexByte(data, '\n')
		if n >= 0 {
			line, data = data[:n], data[n+1:]
		} else {
			data = nil
		}
		lineOff := off
		off += int64(len(line)) + 1
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case bytes.HasPrefix(line, []byte("# ")):
			finish()
			cur, lines = nil, nil
			if us, ok := parseInputTime(string(line[2:])); ok {
				cur, curOff = &inputEntry{us: us}, lineOff
			}
		case bytes.HasPrefix(line, []byte("+")) && cur != nil:
			lines = append(lines, string(line[1:]))
		}
	}
	// The last entry may still be growing: it is parsed again at the next read.
	if cur != nil {
		f.base, f.next = len(f.entries), curOff
		finish()
	} else {
		f.base, f.next = len(f.entries), size
	}
	return nil
}

// parseInputTime reads prompt_toolkit's entry time, Python's str(datetime.now()) in local time:
// "2025-01-02 10:00:00.123456", without the fraction when it is 0.
func parseInputTime(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	for _, l := range []string{"2006-01-02 15:04:05.999999", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil && t.Year() > 1970 && t.Year() < 2262 {
			return t.UnixMicro(), true
		}
	}
	return 0, false
}

// textHash hashes a prompt's text the same way from both files: lines without trailing blanks,
// joined, trimmed.
func textHash(text string) uint64 {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	h := fnv.New64a()
	h.Write([]byte(strings.TrimSpace(strings.Join(lines, "\n"))))
	return h.Sum64()
}
