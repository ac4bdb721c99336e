package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/gemini"
)

// events keeps whole published events.
type events struct {
	mu  sync.Mutex
	evs []event.Event
}

func (c *events) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, evs...)
	return 0, nil
}

func (c *events) all() []event.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event.Event(nil), c.evs...)
}

// geminiDoc renders a Gemini CLI session-*.json with n messages: a prompt, then model messages
// with tokens, each calling read_file; out is the first model message's output count.
func geminiDoc(n int, out int) []byte {
	var msgs []string
	for i := range n {
		ts := time.Date(2026, 3, 1, 10, 0, i, 0, time.UTC).Format(time.RFC3339)
		if i == 0 {
			msgs = append(msgs, fmt.Sprintf(`{"id":"u0","timestamp":%q,"type":"user","content":[{"text":"go"}]}`, ts))
			continue
		}
		o := 10
		if i == 1 {
			o = out
		}
		msgs = append(msgs, fmt.Sprintf(`{"id":"m%d","timestamp":%q,"type":"gemini","content":"","model":"gemini-3-flash",`+
			`"tokens":{"input":100,"output":%d,"cached":0,"thoughts":0,"tool":0,"total":%d},`+
			`"toolCalls":[{"id":"c%d","name":"read_file","args":{"file_path":"f%d.go"},"status":"success",`+
			`"result":[{"functionResponse":{"id":"c%d","name":"read_file","response":{"output":"x"}}}],"timestamp":%q}]}`,
			i, ts, o, 100+o, i, i, i, ts))
	}
	doc := `{"sessionId":"s-doc","projectHash":"h","startTime":"2026-03-01T10:00:00Z","lastUpdated":"x","messages":[` +
		strings.Join(msgs, ",") + `]}`
	var b bytes.Buffer
	json.Indent(&b, []byte(doc), "", "  ") // pretty-printed, as Gemini CLI writes it
	return b.Bytes()
}

// rewrite writes data in place (same inode), as fs.writeFileSync does.
func rewrite(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(data)
	f.Close()
}

func docScan(t *testing.T, dir, home string, pub Publisher) Summary {
	t.Helper()
	cur, err := OpenCursors(filepath.Join(dir, "state", "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	s := &Scanner{Adapters: []transcript.Adapter{gemini.New([]string{home})}, Cursors: cur, Publisher: pub, BatchSize: 3}
	sum, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// oneRead parses a document once, as a fresh scan would.
func oneRead(t *testing.T, path string, data []byte) []event.Event {
	t.Helper()
	p, err := gemini.New(nil).NewParser(transcript.Source{Client: gemini.Client, Path: path, Document: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := p.Record(0, data)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// ids returns the distinct ids of events, and how many times each content was published.
func distinct(evs []event.Event) (ids map[string]bool, dup int) {
	ids = map[string]bool{}
	seen := map[string]bool{}
	for _, e := range evs {
		ids[e.ID] = true
		b, _ := json.Marshal(e)
		if seen[string(b)] {
			dup++
		}
		seen[string(b)] = true
	}
	return ids, dup
}

// A Gemini CLI session-*.json rewritten in place: each change is read whole and only what changed
// is published; a rewrite of the same size is seen by its modification time; a half-written
// document is reported, publishes nothing and is read when complete.
func TestScan_Document(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, ".gemini")
	path := filepath.Join(home, "tmp", "demo", "chats", "session-2026-03-01T10-00-s-doc.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(filepath.Join(home, "tmp", "demo", ".project_root"), []byte("/work/demo"), 0o600)
	os.WriteFile(path, geminiDoc(2, 10), 0o600)
	pub := &events{}

	sum := docScan(t, dir, home, pub)
	first := len(pub.all()) // session, model, prompt, usage, call, and the prompt's and call's messages
	if sum.Files != 1 || sum.Lines != 1 || sum.Malformed != 0 || first != 7 {
		t.Fatalf("first scan: %+v, %d events", sum, first)
	}
	if sum := docScan(t, dir, home, pub); sum.Read != 0 || len(pub.all()) != first {
		t.Fatalf("unchanged document read again: %+v", sum)
	}

	// Gemini CLI writes the whole file again with one more message.
	rewrite(t, path, geminiDoc(3, 10))
	docScan(t, dir, home, pub)
	if n := len(pub.all()) - first; n != 3 {
		t.Fatalf("one new message published %d events, want its usage, call and the call's message", n)
	}

	// Caught half-written: malformed, nothing published; complete, the rest is read.
	full := geminiDoc(5, 10)
	before := len(pub.all())
	rewrite(t, path, full[:len(full)/2])
	if sum := docScan(t, dir, home, pub); sum.Malformed != 1 || len(pub.all()) != before ||
		sum.MalformedFiles[path] != (MalformedFile{Lines: 1, Total: 1}) {
		t.Fatalf("half-written: %+v, %d events", sum, len(pub.all())-before)
	}
	rewrite(t, path, full)
	if sum := docScan(t, dir, home, pub); sum.Malformed != 0 || len(pub.all())-before != 6 {
		t.Fatalf("completed: %+v, %d events", sum, len(pub.all())-before)
	}

	// The same size, a different modification time: m1's output grows from 10 to 99.
	grown := geminiDoc(5, 99)
	if len(grown) != len(full) {
		t.Fatalf("test document sizes differ: %d %d", len(grown), len(full))
	}
	rewrite(t, path, grown)
	os.Chtimes(path, time.Now(), time.Now().Add(time.Hour))
	before = len(pub.all())
	docScan(t, dir, home, pub)
	evs := pub.all()
	if n := len(evs) - before; n != 1 || evs[len(evs)-1].TokenUsage == nil || evs[len(evs)-1].TokenUsage.Output != 99 {
		t.Fatalf("same-size rewrite: %d events %+v", n, evs[before:])
	}

	// Everything published adds up to one read of the final document, nothing twice.
	ids, dup := distinct(evs)
	want, _ := distinct(oneRead(t, path, grown))
	if len(ids) != len(want) || dup != 0 {
		t.Errorf("%d ids (%d published twice), want %d", len(ids), dup, len(want))
	}
	for _, e := range evs {
		if e.Project != "/work/demo" || e.Client != gemini.Client || e.SessionID != "s-doc" {
			t.Errorf("event %s: project %q client %q session %q", e.ID, e.Project, e.Client, e.SessionID)
		}
	}
}

// A document rewritten in place (truncated, then written in two steps) while scans run: no scan
// fails, every fact of the final document is published, none twice.
func TestScan_DocumentRewrittenWhileRead(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, ".gemini")
	path := filepath.Join(home, "tmp", "demo", "chats", "session-2026-03-01T10-00-s-doc.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, geminiDoc(1, 10), 0o600)
	pub := &events{}
	done := make(chan struct{})
	const versions = 40
	go func() {
		defer close(done)
		for n := 2; n <= versions; n++ {
			data := geminiDoc(n, 10)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				panic(err)
			}
			f.Write(data[:len(data)/2])
			time.Sleep(time.Millisecond)
			f.Write(data[len(data)/2:])
			f.Close()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var malformed int64
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		malformed += docScan(t, dir, home, pub).Malformed
	}
	malformed += docScan(t, dir, home, pub).Malformed
	evs := pub.all()
	ids, dup := distinct(evs)
	want, _ := distinct(oneRead(t, path, geminiDoc(versions, 10)))
	if len(ids) != len(want) || dup != 0 {
		t.Errorf("%d ids (%d published twice), want %d", len(ids), dup, len(want))
	}
	for id := range want {
		if !ids[id] {
			t.Errorf("event %s lost", id)
		}
	}
	t.Logf("%d events, %d half-written reads", len(evs), malformed)
}
