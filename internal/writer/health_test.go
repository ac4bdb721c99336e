package writer_test

import (
	"context"
	"database/sql"
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
	if h := w.Health(); !h.OK {
		t.Errorf("health after the lock went: %+v", h)
	}
}
