package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// outputStore returns a store holding one command per output, in project /p, indexed for search.
func outputStore(tb testing.TB, outputs ...string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	ok := true
	t0 := time.Now().Add(-time.Hour)
	var evs []event.Event
	for i, out := range outputs {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Time, ev.Client, ev.SessionID = event.ID("out", strconv.Itoa(i)), t0.Add(time.Duration(i)*time.Second), "claude-code", "s"
		ev.Project, ev.Action = "/p", &event.Action{Type: event.ActionRunCommand, Target: "make", Success: &ok, Output: out}
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		tb.Fatal(err)
	}
	for {
		n, err := st.IndexOutputs(context.Background(), 10000)
		if err != nil {
			tb.Fatal(err)
		}
		if n == 0 {
			return path
		}
	}
}

// A line over maxLine (a 10 MB search query) is refused at once with -32600 and its id, wherever
// the id stands in the line, without the line being held in memory; the session goes on.
func TestGuard_LongLine(t *testing.T) {
	c := serveRaw(t, New(Options{StorePath: outputStore(t, "a needle in the output"), Project: "/p"}))
	c.initialize()
	// The query holds what could be mistaken for an id: an escaped "id" member in the string.
	query := strings.Repeat(`needle \"id\":7, `, 10<<20/18)
	for _, tc := range []struct{ name, line, id string }{
		{"IDFirst", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"search_past_outputs","arguments":{"query":"` +
			query + `"}}}`, "21"},
		// TypeScript clients write the id last; a nested "id" is not the message's.
		{"IDLast", `{"method":"tools/call","params":{"name":"search_past_outputs","arguments":{"query":"` + query +
			`"},"_meta":{"id":5}},"jsonrpc":"2.0","id":"req-22"}`, `"req-22"`},
		{"NoID", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + query + `"}}`, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(tc.line + "\n")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			if _, err := c.in.Write(line); err != nil {
				t.Fatal(err)
			}
			r := decodeReply(t, c.recv())
			runtime.ReadMemStats(&after)
			if string(r.ID) != tc.id || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, strconv.Itoa(maxLine)) {
				t.Errorf("reply id %s error %+v, want id %s, -32600 naming the %d-byte limit", r.ID, r.Error, tc.id, maxLine)
			}
			// The guard holds at most maxLine bytes of a line; the SDK never sees this one.
			alloc := after.TotalAlloc - before.TotalAlloc
			if alloc > 4*maxLine {
				t.Errorf("refusing a %d-byte line allocated %d bytes, over %d", len(line), alloc, 4*maxLine)
			}
			t.Logf("a %d-byte line refused in %v, %d bytes allocated", len(line), time.Since(start), alloc)
		})
	}
	c.send(`{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"search_past_outputs","arguments":{"query":"needle"}}}`)
	if r := decodeReply(t, c.recv()); string(r.ID) != "23" || !strings.Contains(string(r.Result), "«needle»") {
		t.Errorf("after the long lines: %s %s", r.ID, r.Result)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in different goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Requests read before stdin ends are all answered before Serve returns: a client that writes
// its requests and closes its end gets every answer.
func TestServe_AnswersWhatWasReadAtEOF(t *testing.T) {
	var outputs []string
	for i := range 200 {
		outputs = append(outputs, fmt.Sprintf("needle number %d of the haystack", i))
	}
	s := New(Options{StorePath: outputStore(t, outputs...), Project: "/p"})
	defer s.Close()
	const calls = 60
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_past_outputs","arguments":{"query":"needle haystack","limit":20}}}`+"\n", i)
	}
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), &in, &out) }() // a bytes.Buffer ends at once
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its input ended")
	}
	answered := map[string]bool{}
	for line := range strings.Lines(out.String()) {
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		if r.Error != nil {
			t.Errorf("reply %s: error %+v", r.ID, r.Error)
		}
		answered[string(r.ID)] = true
	}
	for i := 0; i <= calls; i++ {
		if !answered[strconv.Itoa(i)] {
			t.Errorf("request %d was read and not answered (%d of %d answered)", i, len(answered), calls+1)
			break
		}
	}
}
