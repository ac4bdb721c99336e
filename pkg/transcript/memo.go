package transcript

import (
	"container/list"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"sync"
)

// Memo is text a parser's state needs and no file may keep: a call's target waiting for its
// result, a title waiting for a time, a prompt read in part. A parser's state goes into the
// cursors file, which would otherwise hold a copy of what agents ran and read, outside the store
// and its scrubbing guarantees; it holds only offsets, ids and hashes.
//
// A Memo's JSON form is a reference: a hash of the text keyed with a secret drawn when the process
// starts, which tells nothing of the text, not even whether two processes saw the same. The text
// stays in the process's memory, the most recently used up to memoBytes. A state read back in the
// same process (the watcher's next pass over a growing file) has its memos whole; one read in
// another process (after a restart, or by the next one-shot scan) has them empty, and a parser
// must do without: a result event without its call's target (the store keeps the call's), a title
// waiting for a time read again from its line (Claude Code, and Gemini CLI's and Qwen Code's
// .jsonl: the state keeps the line's offset and length, and the title is kept only if that line
// still gives it), aider's prompt read again from its offset. A state written before memos holds
// the text itself, which is read as such.
type Memo string

// memoBytes bounds the text the process keeps for memos.
const memoBytes = 16 << 20

var memos = struct {
	sync.Mutex
	key   []byte
	byRef map[string]*list.Element // of memoEntry
	lru   list.List                // most recently used first
	bytes int
}{byRef: map[string]*list.Element{}}

type memoEntry struct{ ref, text string }

func init() {
	memos.key = make([]byte, 32)
	rand.Read(memos.key)
}

// memoRef is the reference of a text in this process.
func memoRef(text string) string {
	h := hmac.New(sha256.New, memos.key)
	h.Write([]byte(text))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// keep stores text under its reference and returns the reference.
func (m Memo) keep() string {
	ref := memoRef(string(m))
	memos.Lock()
	defer memos.Unlock()
	if e, ok := memos.byRef[ref]; ok {
		memos.lru.MoveToFront(e)
		return ref
	}
	memos.byRef[ref] = memos.lru.PushFront(memoEntry{ref, string(m)})
	memos.bytes += len(m)
	for memos.bytes > memoBytes && memos.lru.Len() > 1 {
		old := memos.lru.Back()
		e := memos.lru.Remove(old).(memoEntry)
		delete(memos.byRef, e.ref)
		memos.bytes -= len(e.text)
	}
	return ref
}

// recall returns the text of a reference this process made, or "".
func recall(ref string) Memo {
	memos.Lock()
	defer memos.Unlock()
	if e, ok := memos.byRef[ref]; ok {
		memos.lru.MoveToFront(e)
		return Memo(e.Value.(memoEntry).text)
	}
	return ""
}

type memoJSON struct {
	Ref string `json:"memo"`
}

// MarshalJSON writes the memo's reference, never its text.
func (m Memo) MarshalJSON() ([]byte, error) {
	if m == "" {
		return []byte(`""`), nil
	}
	return json.Marshal(memoJSON{m.keep()})
}

// UnmarshalJSON reads a reference (the text, when this process made it, else "") or, from a state
// written before memos, the text itself.
func (m *Memo) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*m = Memo(s)
		return nil
	}
	var r memoJSON
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*m = recall(r.Ref)
	return nil
}

// TextHash returns a short hash of s: what a state keeps of a text it needs only to recognize
// (a title reported already).
func TextHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}
