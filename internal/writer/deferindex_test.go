package writer_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// indexSQL is every index of the store and its definition.
func indexSQL(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	rows, err := st.DB.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		out[name] = sql
	}
	return out
}

// A bulk load into an empty store builds the indexes of actions and messages once, at its end
// (store.BulkIndexes): while it runs they are gone, and when the writer has caught up every index
// is there again, as the schema defines it, with none left deferred.
func TestWriter_BulkLoadDefersIndexesIntoAnEmptyStore(t *testing.T) {
	st, _ := tempStore(t)
	want := indexSQL(t, st)
	for _, name := range store.BulkIndexes {
		if want[name] == "" {
			t.Fatalf("the schema has no index %s: BulkIndexes is out of date", name)
		}
	}
	direct := writer.NewDirect()
	w := &writer.Writer{Store: st, Direct: direct, Bulk: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	const n = 6000
	evs := historyEvents(n)
	for i := 0; i < n; i += 2000 {
		if _, err := direct.PublishBatch(ctx, evs[i:i+2000]); err != nil {
			t.Fatal(err)
		}
		if got := indexSQL(t, st); got["actions_session"] != "" || got["messages_ts"] != "" {
			t.Fatalf("after a bulk batch into an empty store the indexes are still there: %v", got)
		}
	}
	cancel() // the catch-ups at stop make them first
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := indexSQL(t, st)
	for name, sql := range want {
		if got[name] != sql {
			t.Errorf("index %s after the load: %q, want %q", name, got[name], sql)
		}
	}
	var left int
	st.DB.QueryRow(`SELECT count(*) FROM deferred_indexes`).Scan(&left)
	if left != 0 || len(got) != len(want) {
		t.Fatalf("%d indexes still deferred, %d of %d indexes", left, len(got), len(want))
	}
}

// A store that already holds a history (more than store.DeferSmallStore actions and messages)
// keeps its indexes through a bulk load (dropping them would rebuild them over everything stored);
// a small one, whose first batches came on the live path, defers them.
func TestWriter_BulkLoadKeepsIndexesOfAStoreInUse(t *testing.T) {
	for _, c := range []struct {
		stored   int
		deferred bool
	}{{100, true}, {store.DeferSmallStore + 1000, false}} {
		st, _ := tempStore(t)
		want := indexSQL(t, st)
		direct := writer.NewDirect()
		ctx := context.Background()
		evs := historyEvents(c.stored + 4000)
		stop := startWriter(t, ctx, &writer.Writer{Store: st, Direct: direct})
		for i := 0; i < c.stored; i += 2000 {
			if _, err := direct.PublishBatch(ctx, evs[i:min(i+2000, c.stored)]); err != nil {
				t.Fatal(err)
			}
		}
		stop()
		direct = writer.NewDirect()
		stop = startWriter(t, ctx, &writer.Writer{Store: st, Direct: direct, Bulk: true})
		if _, err := direct.PublishBatch(ctx, evs[c.stored:]); err != nil {
			t.Fatal(err)
		}
		if got := indexSQL(t, st); (len(got) < len(want)) != c.deferred {
			t.Errorf("a bulk load into a store of %d events: %d of %d indexes left, want them deferred: %v", c.stored, len(got), len(want), c.deferred)
		}
		stop()
		if got := indexSQL(t, st); len(got) != len(want) {
			t.Errorf("after the load into a store of %d events: %d of %d indexes", c.stored, len(got), len(want))
		}
	}
}

// A writer killed during a bulk load leaves its indexes deferred: the next OpenWriter makes them.
func TestStore_OpenWriterRestoresDeferredIndexes(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenWriter(context.Background(), dir+"/observer.db")
	if err != nil {
		t.Fatal(err)
	}
	want := indexSQL(t, st)
	ok, err := st.DeferIndexes(context.Background())
	if err != nil || !ok {
		t.Fatalf("DeferIndexes on an empty store: %v %v", ok, err)
	}
	if got := indexSQL(t, st); len(got) != len(want)-len(store.BulkIndexes) {
		t.Fatalf("%d indexes after DeferIndexes, want %d", len(got), len(want)-len(store.BulkIndexes))
	}
	st.Close() // as a kill leaves it: nothing restored
	st, err = store.OpenWriter(context.Background(), dir+"/observer.db")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := indexSQL(t, st)
	for name, sql := range want {
		if got[name] != sql {
			t.Errorf("index %s after reopening: %q, want %q", name, got[name], sql)
		}
	}
}

// On the bus, the suite's first start over a history defers the indexes too (store.DeferIndexes:
// the store is empty), although the backlog alternates bulk batches with live ones (the last events
// of a file, a watcher slower than the writer): a live batch that comes right after a bulk one is
// stored as one (its hours left to the rollups' catch-up) and keeps them deferred, and the health
// says the indexes are being caught up; a live batch once the backlog has gone quiet
// (deferHold, 2 s) makes them again first, as the schema defines them, and takes the live path.
func TestWriter_BusBacklogKeepsIndexesDeferredAcrossLiveBatches(t *testing.T) {
	st, _ := tempStore(t)
	want := indexSQL(t, st)
	ctx := context.Background()
	w := &writer.Writer{Store: st, Logger: slog.New(slog.DiscardHandler)}
	evs := historyEvents(3000)
	msgs := func(evs []event.Event, pending uint64) []bus.Message { return busMessages(t, evs, pending, "") }
	deferred := func() bool { return indexSQL(t, st)["actions_session"] == "" }
	pendingHours := func() (n int) {
		st.DB.QueryRow(`SELECT count(*) FROM rollup_pending`).Scan(&n)
		return n
	}
	// A bulk batch (a backlog of 2,000 messages behind it), then a live one (none behind).
	if err := w.Handle(ctx, msgs(evs[:1000], 2000)); err != nil {
		t.Fatal(err)
	}
	if !deferred() {
		t.Fatal("a backlog on the bus into an empty store kept its indexes")
	}
	before := pendingHours()
	if err := w.Handle(ctx, msgs(evs[1000:1010], 0)); err != nil {
		t.Fatal(err)
	}
	if !deferred() {
		t.Fatal("a live batch right after a bulk one made the indexes again in the middle of the backlog")
	}
	if pendingHours() == before {
		t.Error("a live batch stored while the indexes are deferred computed its rollups without them; want its hours left to the catch-up")
	}
	if d := w.Health().Detail; !strings.Contains(d, "indexes") {
		t.Errorf("health %q while the indexes are deferred; want it to say they are caught up", d)
	}
	time.Sleep(2100 * time.Millisecond) // the backlog has gone quiet: deferHold
	before = pendingHours()
	if err := w.Handle(ctx, msgs(evs[1010:1020], 0)); err != nil {
		t.Fatal(err)
	}
	got := indexSQL(t, st)
	for name, sql := range want {
		if got[name] != sql {
			t.Errorf("index %s after the backlog: %q, want %q", name, got[name], sql)
		}
	}
	if pendingHours() != before {
		t.Error("a live batch after the backlog left its rollups to the catch-up")
	}
	if d := w.Health().Detail; strings.Contains(d, "indexes") {
		t.Errorf("health %q after the indexes were made", d)
	}
}

// A backlog its publisher marks (bus.BacklogHeader: a watcher's pass over a history) takes the bulk
// path from its first batch, though nothing waits on the bus behind it (the watcher reads no
// faster than the writer stores), and its indexes are deferred; the batch its last message is in
// ends it: the writer no longer says it stores a backlog, and the catch-ups need not wait for the
// next batch, or for bulkStale, to learn it.
func TestWriter_MarkedBacklogTakesTheBulkPathUntilItsEnd(t *testing.T) {
	st, _ := tempStore(t)
	ctx := context.Background()
	w := &writer.Writer{Store: st, Logger: slog.New(slog.DiscardHandler)}
	evs := historyEvents(2000)
	msgs := func(evs []event.Event, mark string) []bus.Message { return busMessages(t, evs, 0, mark) }
	pendingHours := func() (n int) {
		st.DB.QueryRow(`SELECT count(*) FROM rollup_pending`).Scan(&n)
		return n
	}
	if err := w.Handle(ctx, msgs(evs[:1000], bus.BacklogPart)); err != nil {
		t.Fatal(err)
	}
	if indexSQL(t, st)["actions_session"] != "" {
		t.Error("a marked backlog into an empty store kept its indexes")
	}
	if pendingHours() == 0 {
		t.Error("a batch of a marked backlog, nothing behind it, computed its rollups on the live path; want them left to the catch-up")
	}
	if d := w.Health().Detail; !strings.Contains(d, "storing a backlog") {
		t.Errorf("health %q in the middle of a marked backlog; want it to say a backlog is being stored", d)
	}
	if err := w.Handle(ctx, msgs(evs[1000:], bus.BacklogEnd)); err != nil {
		t.Fatal(err)
	}
	if d := w.Health().Detail; strings.Contains(d, "storing a backlog") {
		t.Errorf("health %q after the backlog's last batch; want the backlog over", d)
	}
}

// busMessages is evs as the writer's consumer delivers them, one a message, pending waiting behind
// each; with mark, a backlog's (bus.BacklogHeader): each BacklogPart, the last mark.
func busMessages(t *testing.T, evs []event.Event, pending uint64, mark string) []bus.Message {
	t.Helper()
	out := make([]bus.Message, len(evs))
	for i := range evs {
		data, err := event.Marshal(&evs[i])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = bus.Message{Subject: evs[i].Subject(), Data: data, Pending: pending}
		if mark != "" {
			out[i].Header = nats.Header{bus.BacklogHeader: {bus.BacklogPart}}
		}
	}
	if mark != "" {
		out[len(out)-1].Header.Set(bus.BacklogHeader, mark)
	}
	return out
}
