package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// lineAdapter reads files of {"id": "..."} lines, one action event per line.
type lineAdapter struct{ dir string }

func (a lineAdapter) Client() string { return "test" }
func (a lineAdapter) Discover() ([]transcript.Source, error) {
	paths, _ := filepath.Glob(filepath.Join(a.dir, "*.jsonl"))
	var out []transcript.Source
	for _, p := range paths {
		out = append(out, transcript.Source{Client: "test", Path: p, SessionID: "s"})
	}
	return out, nil
}
func (a lineAdapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	p := &lineParser{}
	if state != nil {
		json.Unmarshal(state, &p.seen)
	}
	return p, nil
}

type lineParser struct{ seen int }

func (p *lineParser) Record(off int64, line []byte) ([]event.Event, error) {
	var r struct{ ID string }
	if err := json.Unmarshal(line, &r); err != nil || r.ID == "" {
		return nil, fmt.Errorf("%w: %v", transcript.ErrMalformed, err)
	}
	p.seen++
	ev := event.New(event.KindAction, "test")
	ev.ID, ev.Client, ev.SessionID = event.ID("test", r.ID), "test", "s"
	ev.Action = &event.Action{Type: event.ActionRunCommand, Target: r.ID}
	return []event.Event{ev}, nil
}
func (p *lineParser) State() []byte           { b, _ := json.Marshal(p.seen); return b }
func (p *lineParser) Stats() transcript.Stats { return transcript.Stats{} }

type collect struct {
	mu  sync.Mutex
	ids []string
}

func (c *collect) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range evs {
		c.ids = append(c.ids, e.Action.Target)
	}
	return 0, nil
}

func scan(t *testing.T, dir string, pub *collect, mod func(*Scanner)) Summary {
	t.Helper()
	cur, err := OpenCursors(filepath.Join(dir, "state", "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	s := &Scanner{Adapters: []transcript.Adapter{lineAdapter{dir}}, Cursors: cur, Publisher: pub, BatchSize: 2}
	if mod != nil {
		mod(s)
	}
	sum, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func write(t *testing.T, path, data string, appendTo bool) {
	t.Helper()
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(data)
	f.Close()
}

func TestScan_ResumesGrowsTruncatesAndSkipsBadLines(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	write(t, a, `{"id":"a1"}`+"\n"+`not json`+"\n"+`{"id":"a2"}`+"\n"+`{"id":"a3`, false) // last line not complete yet
	pub := &collect{}

	sum := scan(t, dir, pub, nil)
	if strings.Join(pub.ids, ",") != "a1,a2" || sum.Malformed != 1 || sum.Lines != 3 || sum.Events != 2 {
		t.Fatalf("first scan: ids %v, %+v", pub.ids, sum)
	}
	// Nothing new: nothing published.
	if sum := scan(t, dir, pub, nil); len(pub.ids) != 2 || sum.Read != 0 {
		t.Fatalf("re-scan published %v (%+v)", pub.ids, sum)
	}
	// The cut line completes and a new one follows: only they are read.
	write(t, a, `"}`+"\n"+`{"id":"a4"}`+"\n", true)
	scan(t, dir, pub, nil)
	if strings.Join(pub.ids, ",") != "a1,a2,a3,a4" {
		t.Fatalf("after growth: %v", pub.ids)
	}
	// A dry run reads but publishes nothing and moves no cursor.
	write(t, a, `{"id":"a5"}`+"\n", true)
	if sum := scan(t, dir, pub, func(s *Scanner) { s.DryRun = true; s.Publisher = nil }); sum.Events != 1 || len(pub.ids) != 4 {
		t.Fatalf("dry run: %+v, published %v", sum, pub.ids)
	}
	scan(t, dir, pub, nil)
	if strings.Join(pub.ids, ",") != "a1,a2,a3,a4,a5" {
		t.Fatalf("after the dry run: %v", pub.ids)
	}
	// Truncated and rewritten: read again from the start.
	write(t, a, `{"id":"b1"}`+"\n", false)
	scan(t, dir, pub, nil)
	if pub.ids[len(pub.ids)-1] != "b1" || len(pub.ids) != 6 {
		t.Fatalf("after truncation: %v", pub.ids)
	}
}

func TestScan_LongLineSkippedWhole(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 3<<20) // longer than the read buffer and than MaxLine below
	write(t, filepath.Join(dir, "a.jsonl"), `{"id":"before"}`+"\n"+`{"id":"`+big+`"}`+"\n"+`{"id":"after"}`+"\n", false)
	pub := &collect{}
	sum := scan(t, dir, pub, func(s *Scanner) { s.MaxLine = 2 << 20 })
	if strings.Join(pub.ids, ",") != "before,after" || sum.Malformed != 1 || sum.Lines != 3 {
		t.Fatalf("ids %v, %+v", pub.ids, sum)
	}
	// The scan says which line passed the limit, its size and the limit.
	long := LongLine{File: filepath.Join(dir, "a.jsonl"), Offset: 16, Bytes: int64(len(big)) + 10, Limit: 2 << 20}
	if len(sum.LongLines) != 1 || sum.LongLines[0] != long {
		t.Fatalf("long lines %+v, want %+v", sum.LongLines, long)
	}
	if got, want := long.String(), "line of 3145738 bytes at offset 16 passes the 2 MiB line limit, skipped"; got != want {
		t.Errorf("long line says %q, want %q", got, want)
	}
	// A long line under the limit is read whole.
	dir2 := t.TempDir()
	write(t, filepath.Join(dir2, "b.jsonl"), `{"id":"`+big+`"}`+"\n", false)
	pub2 := &collect{}
	scan(t, dir2, pub2, func(s *Scanner) { s.MaxLine = 4 << 20 })
	if len(pub2.ids) != 1 || len(pub2.ids[0]) != len(big) {
		t.Fatalf("long line read as %d ids", len(pub2.ids))
	}
}

func TestCursors_OneOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cursors.json")
	a, err := OpenCursors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := OpenCursors(path); err == nil {
		t.Fatal("a second owner opened the cursors")
	}
}

// The cursors file reads back exactly as it was saved, parser states included, and a damaged one
// reads as empty (a re-read, never lost data).
func TestCursors_RoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cursors.json")
	c, err := OpenCursors(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*Cursor{
		`/a/"quoted"\path.jsonl`: {Offset: 10, Size: 20, Inode: 1<<63 + 5, State: json.RawMessage(`{"sid":"x","pending":[{"id":"t1"}]}`), Lines: 3, Malformed: 1},
		"/b.jsonl":               {Offset: 0, Size: 0, Inode: 7},
		"/c.jsonl":               {Offset: 9, Size: 9, Inode: 8, MTime: 1772359200123456789, Head: "0a1b2c", Edge: "3d4e5f"},
	}
	for k, v := range want {
		c.set(k, v)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = OpenCursors(path)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.m) == "" || len(c.m) != len(want) {
		t.Fatalf("read %d cursors, want %d", len(c.m), len(want))
	}
	for k, w := range want {
		g := c.m[k]
		if g == nil || g.Offset != w.Offset || g.Size != w.Size || g.Inode != w.Inode || string(g.State) != string(w.State) ||
			g.Lines != w.Lines || g.Malformed != w.Malformed || g.MTime != w.MTime || g.Head != w.Head || g.Edge != w.Edge {
			t.Errorf("%s: read %+v, want %+v", k, g, w)
		}
	}
	c.Close()
	os.WriteFile(path, []byte(`{"/a.jsonl":{"offset":"x"}}`), 0o600)
	if c, err = OpenCursors(path); err != nil || len(c.m) != 0 {
		t.Fatalf("damaged file: %v, %d cursors", err, len(c.m))
	}
	c.Close()
}

// backlogCollect is a BacklogPublisher: it records how each batch came, and can fail one.
type backlogCollect struct {
	collect
	calls []string // "batch", "part" or "end", one per call
	fail  int      // the call (1-based) that fails; 0: none
}

func (c *backlogCollect) PublishBatch(ctx context.Context, evs []event.Event) (int, error) {
	c.calls = append(c.calls, "batch")
	return c.collect.PublishBatch(ctx, evs)
}

func (c *backlogCollect) PublishBacklog(ctx context.Context, evs []event.Event, last bool) (int, error) {
	c.calls = append(c.calls, map[bool]string{false: "part", true: "end"}[last])
	if len(c.calls) == c.fail {
		return 0, errors.New("the bus went away")
	}
	return c.collect.PublishBatch(ctx, evs)
}

// A pass with at least BacklogBytes of new lines to read publishes them as a backlog: every batch
// with PublishBacklog, the last one (and only it) as the end, in order; the next pass, a few new
// lines, publishes them as live ones. A backlog's batch that fails moves no cursor past it: the
// next pass reads it again.
func TestScan_ABacklogIsPublishedAsOneWithItsEnd(t *testing.T) {
	dir := t.TempDir()
	var lines strings.Builder
	for i := range 7 {
		fmt.Fprintf(&lines, `{"id":"a%d"}`+"\n", i)
	}
	write(t, filepath.Join(dir, "a.jsonl"), lines.String(), false)
	write(t, filepath.Join(dir, "b.jsonl"), `{"id":"b0"}`+"\n", false)
	pub := &backlogCollect{}
	backlog := func(s *Scanner) { s.Publisher = pub; s.BacklogBytes = 50 }
	sum := scan(t, dir, nil, backlog)
	if sum.Events != 8 || len(pub.ids) != 8 {
		t.Fatalf("the backlog published %v (%+v)", pub.ids, sum)
	}
	if n := len(pub.calls); n < 2 || pub.calls[n-1] != "end" || slices.ContainsFunc(pub.calls[:n-1], func(c string) bool { return c != "part" }) {
		t.Fatalf("a backlog's batches went as %v; want parts, then one end", pub.calls)
	}
	want := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "b0"}
	if !slices.Equal(pub.ids, want) {
		t.Errorf("the backlog's events came as %v, want %v", pub.ids, want)
	}
	write(t, filepath.Join(dir, "b.jsonl"), `{"id":"b1"}`+"\n", true)
	pub.calls = nil
	scan(t, dir, nil, backlog)
	if !slices.Equal(pub.calls, []string{"batch"}) {
		t.Errorf("a pass over one new line published %v; want one batch, not a backlog", pub.calls)
	}

	// A failure in the middle of a backlog: the next pass reads from the last batch acknowledged,
	// and nothing is lost or sent twice.
	dir = t.TempDir()
	write(t, filepath.Join(dir, "a.jsonl"), lines.String(), false)
	pub = &backlogCollect{fail: 2}
	if sum := scan(t, dir, nil, backlog); len(sum.Errors) == 0 {
		t.Errorf("a pass whose backlog batch failed reported no error: %+v", sum)
	}
	acked := slices.Clone(pub.ids)
	pub.fail = 0
	scan(t, dir, nil, backlog)
	if all := want[:7]; !slices.Equal(pub.ids, all) {
		t.Errorf("a backlog whose second batch failed, then read again: %v (acknowledged the first time %v), want %v", pub.ids, acked, all)
	}
}

// gatedCollect publishes only once what may wait for it is waiting (the pipe's room for Gather
// events is full) or the reading is over, and records each publication's size: as a writer that
// stores each in one transaction, slower than the reading.
type gatedCollect struct {
	collect
	s     *Scanner
	read  atomic.Bool // every file read
	sizes []int
}

func (g *gatedCollect) PublishBatch(ctx context.Context, evs []event.Event) (int, error) {
	room := g.s.pipe.room
	for !g.read.Load() && room.TryAcquire(1) {
		room.Release(1)
		time.Sleep(time.Millisecond)
	}
	g.sizes = append(g.sizes, len(evs))
	return g.collect.PublishBatch(ctx, evs)
}

// A history of many small files, published to a writer slower than the reading: with Gather
// set, what waits is bounded in events, and each publication gathers Gather of them (one
// transaction of a scan's own writer), not a few files' worth. Nothing is lost or reordered, and
// every cursor moves.
func TestScan_GatherMakesPublicationsOfThatManyEvents(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 40 {
		id := fmt.Sprintf("f%02d", i)
		write(t, filepath.Join(dir, id+".jsonl"), `{"id":"`+id+`"}`+"\n", false)
		want = append(want, id)
	}
	pub := &gatedCollect{}
	sum := scan(t, dir, nil, func(s *Scanner) {
		pub.s, s.Publisher, s.Gather = s, pub, 10
		s.Progress = func(p Progress) { pub.read.Store(p.FilesDone == p.Files) }
	})
	if !slices.Equal(pub.ids, want) || sum.Events != 40 {
		t.Fatalf("published %v (%+v), want %v", pub.ids, sum, want)
	}
	// The first publication takes what waits when it starts (the first file); after it, each
	// takes the ten that filled the room, and the last what is left.
	if n := len(pub.sizes); n < 4 || n > 6 || slices.ContainsFunc(pub.sizes[1:n-1], func(k int) bool { return k != 10 }) {
		t.Errorf("publications of %v events; want ten at a time", pub.sizes)
	}
	// Every cursor moved: a second scan publishes nothing.
	pub.ids, pub.sizes = nil, nil
	if sum := scan(t, dir, nil, func(s *Scanner) { pub.s, s.Publisher, s.Gather = s, pub, 10 }); sum.Events != 0 || len(pub.ids) != 0 {
		t.Errorf("a second scan published %v (%+v)", pub.ids, sum)
	}
}
