package writer_test

import (
	"context"
	"testing"

	"github.com/observerhq/observer/internal/writer"
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
