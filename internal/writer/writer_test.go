package writer_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func startBus(tb testing.TB) *busserver.Server {
	tb.Helper()
	srv, err := busserver.Start(context.Background(), busserver.Config{
		Dir: filepath.Join(tb.TempDir(), "bus"), Port: -1, Token: "secret", AckWait: 2 * time.Second,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv
}

func hookEvent(i int) event.Event {
	ev := event.New(event.KindHook, "test")
	ev.ID = event.ID("writer-test", fmt.Sprint(i))
	ev.Client = "claude-code"
	ev.SessionID = fmt.Sprintf("s%d", i%7)
	ev.Project = "/work/p"
	ev.Hook = &event.Hook{Event: "PreToolUse", ToolName: "Bash", Cwd: "/work/p"}
	return ev
}

// rig starts a bus, opens a fresh store and connects a client to the bus, each closed when the test
// ends; cancel ends ctx (the tests' writers run on it).
func rig(t *testing.T) (ctx context.Context, cancel context.CancelFunc, srv *busserver.Server, st *store.Store, c *bus.Client) {
	t.Helper()
	ctx, cancel = context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv = startBus(t)
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err = bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return ctx, cancel, srv, st, c
}

func waitCount(tb testing.TB, st *store.Store, table string, want int64) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var n int64
	for time.Now().Before(deadline) {
		st.DB.QueryRow("SELECT count(*) FROM " + table).Scan(&n)
		if n == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("%s has %d rows, want %d", table, n, want)
}

func TestWriter_StoresEachEventOnceAndQuarantinesGarbage(t *testing.T) {
	ctx, cancel, srv, st, c := rig(t)
	defer cancel()
	w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	evs := make([]event.Event, 2000)
	for i := range evs {
		evs[i] = hookEvent(i)
	}
	if n, err := c.PublishBatch(ctx, evs); err != nil || n != 0 {
		t.Fatalf("PublishBatch: spooled %d, err %v", n, err)
	}
	// The same ids again: the stream's de-duplication drops them.
	if _, err := c.PublishBatch(ctx, evs[:500]); err != nil {
		t.Fatal(err)
	}
	// Garbage and an unknown kind straight onto the subject space.
	nc, err := nats.Connect(srv.ClientURL(), nats.Token("secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := nc.JetStream()
	if _, err := js.Publish("observer.v1.hook.claude-code", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish("observer.v1.bogus.x", []byte(`{"id":"x1","kind":"bogus","v":1,"time":"2026-01-01T00:00:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	waitCount(t, st, "hook_events", 2000)
	waitCount(t, st, "quarantine", 2)
	waitCount(t, st, "sessions", 7)

	// A direct second write of the same events (a redelivery after a crash) stores nothing new.
	res, err := st.WriteBatch(ctx, evs[:100], nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 0 || res.Duplicates != 100 {
		t.Fatalf("rewrite: %+v, want 0 inserted, 100 duplicates", res)
	}
	var reason string
	st.DB.QueryRow("SELECT reason FROM quarantine WHERE CAST(data AS TEXT) = '{not json'").Scan(&reason)
	if reason == "" {
		t.Fatal("malformed message has no quarantine reason")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestStore_SecondWriterIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.db")
	a, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := store.OpenWriter(context.Background(), path); err == nil {
		t.Fatal("second writer opened the store")
	}
}

// A writer stopped soon after storing tool outputs (as the one `observerctl scan` hosts is) leaves
// them searchable: its index loop catches up before Run returns.
func TestWriter_IndexesOutputsBeforeItStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := startBus(t)
	st, err := store.OpenWriter(context.Background(), filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	evs := make([]event.Event, 300)
	ok := true
	for i := range evs {
		ev := event.New(event.KindAction, "test")
		ev.ID = event.ID("writer-test-output", fmt.Sprint(i))
		ev.Client, ev.SessionID, ev.Project = "claude-code", "s1", "/work/p"
		ev.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "go test", Success: &ok,
			Output: fmt.Sprintf("line %d: needle%d found", i, i)}
		evs[i] = ev
	}
	if _, err := c.PublishBatch(ctx, evs); err != nil {
		t.Fatal(err)
	}
	waitCount(t, st, "action_outputs", int64(len(evs)))
	cancel() // well before the 2 s indexing tick
	<-done
	var n int
	if err := st.DB.QueryRow(`SELECT count(*) FROM tool_output_fts WHERE tool_output_fts MATCH 'needle299'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("search for the last output: %d hits, err %v", n, err)
	}
	if err := st.DB.QueryRow(`SELECT count(*) FROM tool_output_fts WHERE tool_output_fts MATCH 'found'`).Scan(&n); err != nil || n != len(evs) {
		t.Fatalf("indexed %d outputs, want %d (err %v)", n, len(evs), err)
	}
}
