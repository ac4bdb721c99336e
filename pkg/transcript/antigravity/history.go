package antigravity

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// history is what the adapter knows of one data directory's history.jsonl (the CLI's prompt
// log): the workspace of each conversation it names, read once and then as the log grows, so a
// cold read of many conversations reads the log once, not once per conversation.
type history struct {
	size int64     // the log's size when last read
	mod  time.Time // its modification time then
	off  int64     // the bytes read: the offset after the last whole line
	ws   map[string]string
}

// workspace returns the workspace history.jsonl under root gives conversation (its last row
// that names one), or "" when the log is absent or does not name it. The log is read again only
// when its size or modification time changed: from where the last read stopped when it grew,
// whole (its last maxHistory bytes) when it shrank or was rewritten in place.
func (a *Adapter) workspace(root, conversation string) string {
	path := filepath.Join(root, "history.jsonl")
	a.mu.Lock()
	defer a.mu.Unlock()
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		delete(a.hist, path)
		return ""
	}
	h := a.hist[path]
	changed := h == nil || fi.Size() != h.size || !fi.ModTime().Equal(h.mod)
	if h == nil || fi.Size() < h.size || fi.Size() == h.size && changed {
		h = &history{ws: map[string]string{}}
		if a.hist == nil {
			a.hist = map[string]*history{}
		}
		a.hist[path] = h
	}
	if changed {
		h.read(path, fi)
	}
	return h.ws[strings.ToLower(conversation)]
}

// read reads the log from h.off up to the size fi gives (at most its last maxHistory bytes),
// line by line; a line longer than maxHistLine is skipped, a last line without its newline is
// left for the next read.
func (h *history) read(path string, fi os.FileInfo) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	start, skip := h.off, false
	if fi.Size()-start > maxHistory {
		start, skip = fi.Size()-maxHistory, true // begin at the first whole line after start
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(io.LimitReader(f, fi.Size()-start), 64<<10)
	var line []byte
	long := false
	read := int64(0)
	for {
		chunk, err := r.ReadSlice('\n')
		read += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			if long = long || len(line)+len(chunk) > maxHistLine; !long {
				line = append(line, chunk...)
			}
			continue
		}
		if err != nil { // EOF: a last line without its newline stays unread
			break
		}
		if !skip && !long {
			h.row(append(line, chunk...))
		}
		line, long, skip = line[:0], false, false
		h.off = start + read
	}
	h.size, h.mod = fi.Size(), fi.ModTime()
}

// row reads one history row {conversationId, display, timestamp, workspace}.
func (h *history) row(line []byte) {
	if !bytes.Contains(line, []byte(`"conversationId"`)) {
		return
	}
	var r struct {
		ConversationID string `json:"conversationId"`
		Workspace      string `json:"workspace"`
	}
	if json.Unmarshal(line, &r) != nil || strings.TrimSpace(r.ConversationID) == "" || strings.TrimSpace(r.Workspace) == "" {
		return
	}
	h.ws[strings.ToLower(strings.TrimSpace(r.ConversationID))] = r.Workspace
}
