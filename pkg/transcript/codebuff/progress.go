package codebuff

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash"
	"slices"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// How far a chat was reported (see the package doc, "Times, sessions and re-reads").
const (
	maxMarks = 8 // marks kept, the newest
	tailKeep = 2 // messages at the chat's end whose events are checked again at every read
)

// mark says that the first N messages of the chat, which hashed to Hash, had all their events
// reported.
type mark struct {
	N    int    `json:"n"`
	Hash string `json:"h"`
}

func hashMessage(h hash.Hash, raw []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(raw)))
	h.Write(n[:])
	h.Write(raw)
}

func digest(h hash.Hash) string {
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// resume checks marks (oldest first) against the chat's messages: it returns how many of them
// still hold (the chat still begins with the messages they hashed) and how many messages the
// newest of those covers.
func resume(marks []mark, msgs []json.RawMessage) (kept, done int) {
	h := sha256.New()
	i := 0
	for k, m := range marks {
		if m.N <= i || m.N > len(msgs) {
			return k, done
		}
		for ; i < m.N; i++ {
			hashMessage(h, msgs[i])
		}
		if digest(h) != m.Hash {
			return k, done
		}
		done = m.N
	}
	return len(marks), done
}

// advance returns marks with one for the first n messages of msgs added (the newest maxMarks).
func advance(marks []mark, msgs []json.RawMessage, n int) []mark {
	if n <= 0 || (len(marks) > 0 && marks[len(marks)-1].N >= n) {
		return marks
	}
	h := sha256.New()
	for _, raw := range msgs[:n] {
		hashMessage(h, raw)
	}
	marks = append(marks, mark{N: n, Hash: digest(h)})
	if len(marks) > maxMarks {
		marks = slices.Clone(marks[len(marks)-maxMarks:])
	}
	return marks
}

// keep drops from evs those emitted before exactly as they are (their fingerprints in Seen) and
// makes Seen the fingerprints of evs[tail:], the events of the messages still checked at the next
// read; the events before tail are those of messages a mark now covers, not checked again.
func (p *Parser) keep(evs []event.Event, tail int) []event.Event {
	old := make(map[string]bool, len(p.st.Seen))
	for _, f := range p.st.Seen {
		old[f] = true
	}
	var seen []string
	out := evs[:0]
	for i := range evs {
		f := transcript.Fingerprint(&evs[i])
		if f != "" && i >= tail {
			seen = append(seen, f)
		}
		if f != "" && old[f] {
			continue
		}
		out = append(out, evs[i])
	}
	p.st.Seen = seen
	return out
}
