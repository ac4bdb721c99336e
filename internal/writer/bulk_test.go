package writer_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// historyEvents are n tool calls with outputs spread over many hours and sessions, as a scan of
// history publishes them.
func historyEvents(n int) []event.Event {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ok := true
	evs := make([]event.Event, n)
	for i := range evs {
		ev := event.New(event.KindAction, "test")
		ev.ID = event.ID("bulk-test", fmt.Sprint(i))
		ev.Time = base.Add(time.Duration(i) * 7 * time.Minute)
		ev.Client = "claude-code"
		ev.SessionID = fmt.Sprintf("s%d", i/50)
		ev.Project = "/work/p"
		ev.Action = &event.Action{Type: event.ActionReadFile, Tool: "Read", Target: fmt.Sprintf("f%d.go", i%40),
			Success: &ok, Output: fmt.Sprintf("needle%d haystack", i)}
		evs[i] = ev
	}
	return evs
}

// caughtUp waits until the rollups, the full-text index and the analysis cover every stored action.
func caughtUp(t *testing.T, st *store.Store, n int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var pending, rolled, indexed, marked int64
	for time.Now().Before(deadline) {
		st.DB.QueryRow("SELECT count(*) FROM rollup_pending").Scan(&pending)
		st.DB.QueryRow("SELECT coalesce(sum(actions), 0) FROM actions_hourly").Scan(&rolled)
		st.DB.QueryRow("SELECT count(*) FROM tool_output_fts WHERE tool_output_fts MATCH 'haystack'").Scan(&indexed)
		st.DB.QueryRow("SELECT count(*) FROM analysis_dirty").Scan(&marked)
		if pending == 0 && rolled == n && indexed == n && marked == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not caught up after %s: %d hours pending, %d of %d actions in the rollup, %d indexed, %d sessions marked",
		within, pending, rolled, n, indexed, marked)
}

// A backlog on the bus (history published before the writer runs) is stored on the bulk path:
// larger batches, the rollups of their hours recorded for later; once the backlog is stored the
// writer catches up the rollups, the full-text index and the analysis by itself, and its health
// said what it was catching up meanwhile.
func TestWriter_BacklogTakesTheBulkPathThenCatchesUp(t *testing.T) {
	ctx, cancel, srv, st, pub := rig(t)
	defer cancel()
	const n = 3000
	if _, err := pub.PublishBatch(ctx, historyEvents(n)); err != nil {
		t.Fatal(err)
	}
	wc, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	w := &writer.Writer{Store: st, Bus: wc, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	wdone := make(chan struct{})
	go func() { w.Run(ctx); close(wdone) }()
	sawBulk := false
	deadline := time.Now().Add(30 * time.Second)
	for w.Stats().Stored < n && time.Now().Before(deadline) {
		if strings.Contains(w.Health().Detail, "catching up") {
			sawBulk = true
		}
		time.Sleep(time.Millisecond)
	}
	if got := w.Stats().Stored; got != n {
		t.Fatalf("stored %d of %d", got, n)
	}
	var pending int64
	st.DB.QueryRow("SELECT count(*) FROM rollup_pending").Scan(&pending)
	if !sawBulk && pending == 0 {
		t.Fatalf("a backlog of %d events was stored without the bulk path", n)
	}
	caughtUp(t, st, n, 15*time.Second)
	// The health follows once the loops have counted what is left (after their step).
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(w.Health().Detail, "catching up"); {
		if time.Now().After(deadline) {
			t.Fatalf("caught up, yet the health says %q", w.Health().Detail)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-wdone
}

// The writer `observerctl scan` hosts (Bulk) leaves nothing to catch up when it stops: the
// rollups, the index, the analysis and the session memory (every ended session summarized, more
// than one step's worth, and the project observed) are done before Run returns.
func TestWriter_BulkCatchesUpAtStop(t *testing.T) {
	ctx, cancel, _, st, c := rig(t)
	defer cancel()
	w := &writer.Writer{Store: st, Bus: c, Bulk: true, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	wctx, stop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() { w.Run(wctx); close(wdone) }()
	const n = 4000 // 80 sessions of 50 actions: a memory step summarizes 50
	evs := historyEvents(n)
	for s := range n / 50 {
		// Each session edits a file, then runs the tests: what the project's observations say.
		evs[s*50+48].Action.Type, evs[s*50+48].Action.Target = event.ActionEditFile, "pkg/a.go"
		evs[s*50+49].Action.Type, evs[s*50+49].Action.Target = event.ActionRunCommand, "go test ./..."
		evs = append(evs, sessionEnd(s, evs[s*50+49].Time))
	}
	if _, err := c.PublishBatch(ctx, evs); err != nil {
		t.Fatal(err)
	}
	waitCount(t, st, "actions", n)
	waitCount(t, st, "sessions WHERE state = 'finalized'", n/50)
	var pending int64
	st.DB.QueryRow("SELECT count(*) FROM rollup_pending").Scan(&pending)
	if pending == 0 {
		t.Fatal("a Bulk writer recomputed the rollups batch by batch")
	}
	stop()
	<-wdone
	caughtUp(t, st, n, time.Second)
	var summaries, observations int64
	st.DB.QueryRow(`SELECT count(*) FROM session_summaries`).Scan(&summaries)
	st.DB.QueryRow(`SELECT count(*) FROM observations WHERE project = '/work/p'`).Scan(&observations)
	if summaries != n/50 || observations == 0 {
		t.Errorf("stopped with %d of %d ended sessions summarized and %d observations of the project; want all, and some", summaries, n/50, observations)
	}
}

// sessionEnd is the event that finalizes session s of historyEvents.
func sessionEnd(s int, at time.Time) event.Event {
	ev := event.New(event.KindSession, "test")
	ev.ID = event.ID("bulk-test", "end", fmt.Sprint(s))
	ev.Time = at
	ev.Client, ev.SessionID, ev.Project = "claude-code", fmt.Sprintf("s%d", s), "/work/p"
	ev.Session = &event.Session{State: event.SessionFinalized}
	return ev
}

// A history handed to the writer directly (writer.Direct, as `observerctl scan` does with nothing
// running) is acknowledged batch by batch only once committed; once it is stored and caught up
// the writer settles the store by itself: the write-ahead log, tens of megabytes during bulk
// work, is checkpointed and truncated.
func TestWriter_DirectBulkThenSettles(t *testing.T) {
	st, dir := tempStore(t)
	direct := writer.NewDirect()
	w := &writer.Writer{Store: st, Direct: direct, Bulk: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	const n = 20000
	evs := historyEvents(n)
	for i := 0; i < n; i += 2000 {
		if _, err := direct.PublishBatch(ctx, evs[i:i+2000]); err != nil {
			t.Fatal(err)
		}
		var stored int
		st.DB.QueryRow("SELECT count(*) FROM actions").Scan(&stored)
		if stored != i+2000 {
			t.Fatalf("PublishBatch returned with %d actions stored, want %d: acknowledged before committed", stored, i+2000)
		}
	}
	walSize := func() int64 { return walBytes(dir) }
	during := walSize()
	// The catch-ups start once no bulk batch has come for a while (writer.bulkStale).
	caughtUp(t, st, n, time.Minute)
	deadline := time.Now().Add(time.Minute)
	for walSize() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if after := walSize(); after > 0 || during < 1<<20 {
		t.Fatalf("write-ahead log %d bytes after the bulk work, %d during it; want it truncated once settled", after, during)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := direct.PublishBatch(context.Background(), evs[:1]); !errors.Is(err, writer.ErrWriterStopped) {
		t.Fatalf("PublishBatch after the writer stopped: %v, want ErrWriterStopped", err)
	}
}

// tempStore opens a store in a directory of the test's, closed when the test ends.
func tempStore(t *testing.T) (*store.Store, string) {
	dir := t.TempDir()
	st, err := store.OpenWriter(context.Background(), dir+"/observer.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dir
}

// walBytes is the size of the write-ahead log of the store in dir (0 when there is none).
func walBytes(dir string) int64 {
	fi, err := os.Stat(dir + "/observer.db-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Live work settles too: after live batches (no bulk path), a writer quiet for IdleSettle
// checkpoints and truncates the write-ahead log they left (and gives back SQLite's caches).
func TestWriter_QuietWriterSettlesLiveWork(t *testing.T) {
	st, dir := tempStore(t)
	direct := writer.NewDirect()
	ctx := context.Background()
	defer startWriter(t, ctx, &writer.Writer{Store: st, Direct: direct, IdleSettle: 3 * time.Second})()
	evs := historyEvents(400)
	for i := 0; i < len(evs); i += 20 {
		if _, err := direct.PublishBatch(ctx, evs[i:i+20]); err != nil {
			t.Fatal(err)
		}
	}
	during := walBytes(dir)
	if during == 0 {
		t.Fatal("live batches left nothing in the write-ahead log: the test shows nothing")
	}
	const patientWait = 2 * time.Minute // bounds a hang; the settle comes about 3 s after the last step
	deadline := time.Now().Add(patientWait)
	for walBytes(dir) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if after := walBytes(dir); after > 0 {
		t.Fatalf("write-ahead log %d bytes %v after live work (%d during it); want it truncated once the writer is quiet", after, patientWait, during)
	}
}

// startWriter runs w until the returned stop is called, which fails the test if Run failed.
func startWriter(t *testing.T, ctx context.Context, w *writer.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// A backlog is drained: once it is stored, the rollups, the index, the analysis and the session
// memory catch up at once and to the end, although live batches keep coming (outside a drain
// they pace the analysis to every 30 s and the memory to every 10 s), and the health says
// caught up only when they have: every ended session summarized, the project's patterns
// computed, no backlog session left marked.
func TestWriter_BacklogIsDrained(t *testing.T) {
	ctx, cancel, srv, st, pub := rig(t)
	defer cancel()
	const n = 3000 // 60 sessions of 50 actions
	evs := historyEvents(n)
	for s := range n / 50 {
		evs = append(evs, sessionEnd(s, evs[s*50+49].Time))
	}
	if _, err := pub.PublishBatch(ctx, evs); err != nil {
		t.Fatal(err)
	}
	// A live session beside it: a model call every 400 ms, each batch a kick to every loop (and
	// nothing for the analysis or the memory to do, so that the health can say caught up).
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			ev := event.New(event.KindTokenUsage, "test")
			ev.ID = event.ID("bulk-test", "live", fmt.Sprint(i))
			ev.Time = time.Now()
			ev.Client, ev.SessionID, ev.Project = "claude-code", "live", "/work/live"
			ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 10, Output: 1}, Model: "claude-sonnet-4-5", MessageID: fmt.Sprint(i)}
			pub.Publish(ctx, &ev)
			time.Sleep(400 * time.Millisecond)
		}
	}()
	wc, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	w := &writer.Writer{Store: st, Bus: wc, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	wdone := make(chan struct{})
	go func() { w.Run(ctx); close(wdone) }()
	deadline := time.Now().Add(60 * time.Second)
	for w.Stats().Stored < n || strings.Contains(w.Health().Detail, "catching up") {
		if time.Now().After(deadline) {
			t.Fatalf("not caught up after 60 s: stored %d, health %q", w.Stats().Stored, w.Health().Detail)
		}
		time.Sleep(5 * time.Millisecond)
	}
	detail := w.Health().Detail
	var summaries, marked, dirty int64
	st.DB.QueryRow(`SELECT count(*) FROM session_summaries WHERE session_id != 'live'`).Scan(&summaries)
	st.DB.QueryRow(`SELECT count(*) FROM analysis_dirty WHERE session_id != 'live'`).Scan(&marked)
	st.DB.QueryRow(`SELECT count(*) FROM pattern_state WHERE project = '/work/p' AND dirty`).Scan(&dirty)
	if summaries != n/50 || marked != 0 || dirty != 0 {
		t.Errorf("the health says %q, yet %d of %d sessions are summarized, %d still marked for the analysis, the project's patterns dirty: %v",
			detail, summaries, n/50, marked, dirty != 0)
	}
	cancel()
	<-wdone
}
