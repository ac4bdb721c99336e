package writer_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// While another connection holds the store's write lock the writer stores nothing, and its health
// says so (not ok, waiting on the store, since when); once the lock goes, the events are stored
// and the health is ok again.
func TestWriter_HealthWhileStoreLocked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := startBus(t)
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
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
	go w.Run(ctx)
	if h := w.Health(); !h.OK {
		t.Fatalf("idle writer unhealthy: %+v", h)
	}

	locker, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=100")
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	evs := make([]event.Event, 10)
	for i := range evs {
		evs[i] = hookEvent(5000 + i)
	}
	if _, err := c.PublishBatch(ctx, evs); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var h bus.Health
	for h = w.Health(); h.OK && time.Now().Before(deadline); h = w.Health() {
		time.Sleep(100 * time.Millisecond)
	}
	if h.OK || !strings.Contains(h.Detail, "since ") || !(strings.Contains(h.Detail, "waiting on the store") || strings.Contains(h.Detail, "locked")) {
		t.Fatalf("health with the store locked: %+v", h)
	}
	t.Logf("locked: %s", h.Detail)
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	waitCount(t, st, "hook_events", 10)
	// The commit is visible to readers a moment before the writer marks itself done with it.
	deadline = time.Now().Add(5 * time.Second)
	for h = w.Health(); !h.OK && time.Now().Before(deadline); h = w.Health() {
		time.Sleep(20 * time.Millisecond)
	}
	if !h.OK {
		t.Errorf("health after the lock went: %+v", h)
	}
}

// A store file deleted under the writer (its home removed) takes no acknowledged batch: the writer
// stops with store.ErrFileGone, and a writer on a new store at the same path gets every event.
func TestWriter_StoreFileRemoved(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := startBus(t)
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	first := make([]event.Event, 20)
	for i := range first {
		first[i] = hookEvent(7000 + i)
	}
	if _, err := c.PublishBatch(ctx, first); err != nil {
		t.Fatal(err)
	}
	waitCount(t, st, "hook_events", 20)
	for _, suffix := range []string{"", "-wal", "-shm", ".lock"} {
		os.Remove(path + suffix)
	}
	later := make([]event.Event, 30)
	for i := range later {
		later[i] = hookEvent(8000 + i)
	}
	if _, err := c.PublishBatch(ctx, later); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrFileGone) {
			t.Fatalf("Run = %v, want ErrFileGone", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the writer went on writing into a deleted store")
	}
	st.Close()
	st2, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	w2 := &writer.Writer{Store: st2, Bus: c, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	go w2.Run(ctx)
	waitCount(t, st2, "hook_events", 30)
}
