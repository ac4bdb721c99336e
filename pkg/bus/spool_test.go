package bus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// recorder is a Drain publish function that records ids, and fails when fail says so.
type recorder struct {
	ids  []string
	fail func(id string) error
}

func (r *recorder) publish(_ context.Context, ev *event.Event, raw []byte) error {
	if r.fail != nil {
		if err := r.fail(ev.ID); err != nil {
			return err
		}
	}
	got, err := event.Decode(raw)
	if err != nil || got.ID != ev.ID {
		return fmt.Errorf("raw bytes do not match the event %s: %v", ev.ID, err)
	}
	r.ids = append(r.ids, ev.ID)
	return nil
}

func openSpool(tb testing.TB, dir string) *bus.Spool {
	tb.Helper()
	sp, err := bus.OpenSpool(dir, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sp.Close() })
	return sp
}

func appendEvents(tb testing.TB, sp *bus.Spool, names ...string) []string {
	tb.Helper()
	var ids []string
	for _, n := range names {
		ev := hookEvent(n, "c")
		if err := sp.Append(mustEncode(tb, ev)); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	return ids
}

func files(tb testing.TB, sp *bus.Spool) []string {
	tb.Helper()
	fs, err := sp.Files()
	if err != nil {
		tb.Fatal(err)
	}
	return fs
}

func TestSpool_DrainInOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "spool")
	sp := openSpool(t, dir)
	var want []string
	want = append(want, appendEvents(t, sp, "e0", "e1", "e2")...)
	must(t, sp.Rotate())
	want = append(want, appendEvents(t, sp, "e3")...)
	must(t, sp.Rotate())
	// A second spool on the same dir, as another process would have.
	other := openSpool(t, dir)
	want = append(want, appendEvents(t, other, "e4", "e5")...)
	must(t, other.Close())
	want = append(want, appendEvents(t, sp, "e6")...) // still open: Drain rotates its own file

	fs := files(t, sp)
	if len(fs) != 4 {
		t.Fatalf("Files = %v, want 4 files", fs)
	}
	for _, f := range fs {
		if !strings.HasSuffix(f, ".jsonl") || filepath.Dir(f) != dir {
			t.Errorf("file %s is not a .jsonl in %s", f, dir)
		}
		if p := perm(t, f); p != 0o600 {
			t.Errorf("%s mode = %v, want 0600", f, p)
		}
	}
	if p := perm(t, dir); p != 0o700 {
		t.Errorf("spool dir mode = %v, want 0700", p)
	}

	var r recorder
	rep, err := sp.Drain(context.Background(), r.publish)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.ids, want) {
		t.Errorf("published %v\nwant %v", r.ids, want)
	}
	if want := (bus.DrainReport{Files: 4, Events: 7}); rep != want {
		t.Errorf("report = %+v, want %+v", rep, want)
	}
	if fs := files(t, sp); len(fs) != 0 {
		t.Errorf("files left after drain: %v", fs)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("dir not empty after drain: %v", ents)
	}

	// The spool keeps working after a drain.
	want = appendEvents(t, sp, "e7")
	r = recorder{}
	if _, err := sp.Drain(context.Background(), r.publish); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.ids, want) {
		t.Errorf("second drain published %v, want %v", r.ids, want)
	}
}

func TestSpool_DrainSkipsBusyFile(t *testing.T) {
	dir := t.TempDir()
	writer := openSpool(t, dir) // still appending: holds the flock on its file
	busy := appendEvents(t, writer, "busy0", "busy1")
	busyFiles := files(t, writer)

	drainer := openSpool(t, dir)
	free := appendEvents(t, drainer, "free0")

	var r recorder
	rep, err := drainer.Drain(context.Background(), r.publish)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.ids, free) {
		t.Errorf("published %v, want only %v", r.ids, free)
	}
	if want := (bus.DrainReport{Files: 1, Events: 1, Busy: 1}); rep != want {
		t.Errorf("report = %+v, want %+v", rep, want)
	}
	if fs := files(t, drainer); !reflect.DeepEqual(fs, busyFiles) {
		t.Errorf("files after drain = %v, want the busy %v kept", fs, busyFiles)
	}

	// The writer can still append to its file, and once it lets go the file drains.
	busy = append(busy, appendEvents(t, writer, "busy2")...)
	must(t, writer.Rotate())
	r = recorder{}
	rep, err = drainer.Drain(context.Background(), r.publish)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.ids, busy) || rep.Busy != 0 || rep.Files != 1 {
		t.Errorf("after rotate: published %v (report %+v), want %v", r.ids, rep, busy)
	}
}

func TestSpool_DrainQuarantinesCorruptLines(t *testing.T) {
	dir := t.TempDir()
	sp := openSpool(t, dir)
	good := []event.Event{hookEvent("g0", "c"), hookEvent("g1", "c"), hookEvent("g2", "c")}
	unknown := strings.Replace(string(mustEncode(t, hookEvent("u", "c"))), `"kind":"hook"`, `"kind":"telemetry"`, 1)
	cut := string(mustEncode(t, hookEvent("cut", "c"))) // valid JSON, but the writer died before the newline
	lines := []string{
		string(mustEncode(t, good[0])), // 1
		`{"id": "x", not json`,         // 2
		string(mustEncode(t, good[1])), // 3
		unknown,                        // 4
		"",                             // 5: blank lines are skipped, not corrupt
		string(mustEncode(t, good[2])), // 6
		cut,                            // 7, no newline
	}
	name := "00000000000000000001-1-1.jsonl"
	must(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")), 0o600))

	var r recorder
	rep, err := sp.Drain(context.Background(), r.publish)
	if !errors.Is(err, bus.ErrCorruptSpool) {
		t.Fatalf("Drain error = %v, want ErrCorruptSpool", err)
	}
	if want := []string{good[0].ID, good[1].ID, good[2].ID}; !reflect.DeepEqual(r.ids, want) {
		t.Errorf("published %v, want the valid lines %v", r.ids, want)
	}
	if want := (bus.DrainReport{Files: 1, Events: 3, Corrupt: 3}); rep != want {
		t.Errorf("report = %+v, want %+v", rep, want)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("drained file still there: %v", err)
	}

	corrupt := filepath.Join(dir, "corrupt")
	kept, err := os.ReadFile(filepath.Join(corrupt, name))
	if err != nil {
		t.Fatal(err)
	}
	if want := lines[1] + "\n" + lines[3] + "\n" + lines[6] + "\n"; string(kept) != want {
		t.Errorf("corrupt/%s =\n%s\nwant\n%s", name, kept, want)
	}
	why, err := os.ReadFile(filepath.Join(corrupt, name+".why"))
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Split(strings.TrimSuffix(string(why), "\n"), "\n")
	if len(notes) != 3 {
		t.Fatalf("corrupt/%s.why has %d notes, want 3:\n%s", name, len(notes), why)
	}
	for i, want := range []struct{ prefix, reason string }{
		{name + ":2: ", "malformed"},
		{name + ":4: ", "unknown event kind"},
		{name + ":7: ", "truncated"},
	} {
		if !strings.HasPrefix(notes[i], want.prefix) || !strings.Contains(notes[i], want.reason) {
			t.Errorf("note %d = %q, want %q... %q", i, notes[i], want.prefix, want.reason)
		}
	}
	for _, p := range []string{filepath.Join(corrupt, name), filepath.Join(corrupt, name+".why")} {
		if m := perm(t, p); m != 0o600 {
			t.Errorf("%s mode = %v, want 0600", p, m)
		}
	}
	if m := perm(t, corrupt); m != 0o700 {
		t.Errorf("corrupt dir mode = %v, want 0700", m)
	}
	// Quarantined files are not spool files: the next drain finds nothing.
	r = recorder{}
	rep, err = sp.Drain(context.Background(), r.publish)
	if err != nil || rep != (bus.DrainReport{}) || len(r.ids) != 0 {
		t.Errorf("second drain = %+v, %v, published %v; want nothing", rep, err, r.ids)
	}
}

func TestSpool_DrainStopsAtPublishError(t *testing.T) {
	dir := t.TempDir()
	sp := openSpool(t, dir)
	first := appendEvents(t, sp, "a0", "a1", "a2")
	must(t, sp.Rotate())
	second := appendEvents(t, sp, "b0")
	must(t, sp.Rotate())
	before := files(t, sp)

	errDown := errors.New("bus down")
	r := recorder{fail: func(id string) error {
		if id == first[1] {
			return errDown
		}
		return nil
	}}
	rep, err := sp.Drain(context.Background(), r.publish)
	if !errors.Is(err, errDown) {
		t.Fatalf("Drain error = %v, want the publish error", err)
	}
	if errors.Is(err, bus.ErrCorruptSpool) {
		t.Errorf("Drain error %v claims corruption", err)
	}
	if !reflect.DeepEqual(r.ids, first[:1]) {
		t.Errorf("published %v before the error, want %v", r.ids, first[:1])
	}
	if want := (bus.DrainReport{Events: 1, Remaining: 2}); rep != want {
		t.Errorf("report = %+v, want %+v", rep, want)
	}
	if fs := files(t, sp); !reflect.DeepEqual(fs, before) {
		t.Errorf("files after a failed drain = %v, want all kept %v", fs, before)
	}

	// The next drain starts the file over: its first line is published again (the bus de-duplicates).
	r = recorder{}
	rep, err = sp.Drain(context.Background(), r.publish)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]string{}, first...), second...); !reflect.DeepEqual(r.ids, want) {
		t.Errorf("second drain published %v, want %v", r.ids, want)
	}
	if rep.Files != 2 || rep.Remaining != 0 || len(files(t, sp)) != 0 {
		t.Errorf("second drain report %+v, files %v", rep, files(t, sp))
	}
}

func TestSpool_DrainCanceled(t *testing.T) {
	sp := openSpool(t, t.TempDir())
	appendEvents(t, sp, "x")
	must(t, sp.Rotate())
	appendEvents(t, sp, "y")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var r recorder
	rep, err := sp.Drain(ctx, r.publish)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Drain error = %v, want context.Canceled", err)
	}
	if len(r.ids) != 0 || rep.Remaining != 2 || len(files(t, sp)) != 2 {
		t.Errorf("canceled drain published %v, report %+v, files %v", r.ids, rep, files(t, sp))
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func perm(tb testing.TB, path string) os.FileMode {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Mode().Perm()
}
