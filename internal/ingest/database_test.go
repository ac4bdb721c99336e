package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// dbAdapter finds the *.db files of dir as Database sources; its parser yields n events per
// poll, through PollEach, or fails with the file's content when that starts with "fail:".
type dbAdapter struct {
	dir   string
	n     int
	polls *int // Poll calls: a streaming parser is read through PollEach only
}

func (a dbAdapter) Client() string { return "testdb" }
func (a dbAdapter) Discover() ([]transcript.Source, error) {
	paths, _ := filepath.Glob(filepath.Join(a.dir, "*.db"))
	var out []transcript.Source
	for _, p := range paths {
		out = append(out, transcript.Source{Client: "testdb", Path: p, Database: true})
	}
	return out, nil
}
func (a dbAdapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return &dbParser{a: a, src: src}, nil
}

type dbParser struct {
	a     dbAdapter
	src   transcript.Source
	state []byte
}

func (p *dbParser) Record(int64, []byte) ([]event.Event, error) { return nil, transcript.ErrMalformed }
func (p *dbParser) State() []byte                               { return p.state }
func (p *dbParser) Stats() transcript.Stats                     { return transcript.Stats{} }
func (p *dbParser) Poll(ctx context.Context) ([]event.Event, error) {
	*p.a.polls++
	var out []event.Event
	err := p.PollEach(ctx, 1<<30, func(evs []event.Event) error { out = append(out, evs...); return nil })
	return out, err
}
func (p *dbParser) PollEach(ctx context.Context, max int, emit func([]event.Event) error) error {
	data, err := os.ReadFile(p.src.Path)
	if err != nil {
		return err
	}
	if msg, ok := strings.CutPrefix(string(data), "fail:"); ok {
		return errors.New("read " + p.src.Path + ": " + msg)
	}
	var batch []event.Event
	for i := range p.a.n {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Client, ev.SessionID = event.ID("testdb", strconv.Itoa(i)), "testdb", "s"
		ev.Action = &event.Action{Type: event.ActionRunCommand, Target: strconv.Itoa(i)}
		if batch = append(batch, ev); len(batch) == max {
			if err := emit(batch); err != nil {
				return err
			}
			batch = nil
		}
	}
	if len(batch) > 0 {
		if err := emit(batch); err != nil {
			return err
		}
	}
	p.state = []byte(`"done"`)
	return nil
}

// batchSizes records the size of each batch published.
type batchSizes struct{ sizes []int }

func (b *batchSizes) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	b.sizes = append(b.sizes, len(evs))
	return 0, nil
}

// A streaming database parser is read through PollEach: its events are published in batches of
// BatchSize as it reads, and the cursor moves after the last one.
func TestScan_DatabaseStreams(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.db"), "ok", false)
	polls := 0
	cur, err := OpenCursors(filepath.Join(dir, "state", "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	pub := &batchSizes{}
	s := &Scanner{Adapters: []transcript.Adapter{dbAdapter{dir: dir, n: 7, polls: &polls}}, Cursors: cur, Publisher: pub, BatchSize: 3}
	sum, err := s.Scan(context.Background())
	if err != nil || sum.Events != 7 || len(sum.Errors) != 0 {
		t.Fatalf("scan: %v, %+v", err, sum)
	}
	if polls != 0 || len(pub.sizes) != 3 || pub.sizes[0] != 3 || pub.sizes[1] != 3 || pub.sizes[2] != 1 {
		t.Errorf("%d Poll calls, batches %v; want PollEach only, batches [3 3 1]", polls, pub.sizes)
	}
	if c := cur.get(filepath.Join(dir, "a.db")); c == nil || string(c.State) != `"done"` {
		t.Errorf("cursor %+v; want the parser's state", c)
	}
}

// A database the reader cannot read is Unreadable, with the client, the path and the error,
// until a poll of it succeeds or it is gone.
func TestScan_DatabaseUnreadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	write(t, path, "fail:file is not a database", false)
	polls := 0
	cur, err := OpenCursors(filepath.Join(dir, "state", "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	s := &Scanner{Adapters: []transcript.Adapter{dbAdapter{dir: dir, n: 1, polls: &polls}}, Cursors: cur, Publisher: &batchSizes{}}
	scanOnce := func() []Unreadable {
		t.Helper()
		if _, err := s.Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s.Unreadable()
	}
	u := scanOnce()
	want := "testdb: cannot read " + path + ": file is not a database"
	if len(u) != 1 || u[0].String() != want {
		t.Fatalf("unreadable %v; want [%s]", u, want)
	}
	if u := scanOnce(); len(u) != 1 {
		t.Fatalf("still unreadable at the next scan: %v", u)
	}
	write(t, path, "ok now", false)
	if u := scanOnce(); len(u) != 0 {
		t.Errorf("read again: unreadable %v; want none", u)
	}
	write(t, path, "fail:locked", false)
	if u := scanOnce(); len(u) != 1 {
		t.Fatalf("unreadable %v; want one", u)
	}
	os.Remove(path)
	if u := scanOnce(); len(u) != 0 {
		t.Errorf("gone: unreadable %v; want none", u)
	}
}
