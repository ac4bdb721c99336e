package sqliteread

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// closedDB creates a database with one row and closes its writer, so that a pass reads it as
// immutable.
func closedDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	if err := newDB(t, path, "DELETE").Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func evs(ids ...string) []event.Event {
	out := make([]event.Event, len(ids))
	for i, id := range ids {
		out[i] = event.Event{ID: id}
	}
	return out
}

func ids(batches [][]event.Event) [][]string {
	var out [][]string
	for _, b := range batches {
		var s []string
		for _, e := range b {
			s = append(s, e.ID)
		}
		out = append(out, s)
	}
	return out
}

func cloneList(s []string) []string { return slices.Clone(s) }

// PassEach hands the events over at most max at a time, each batch a copy emit may keep, commits
// the state and counts the events and what read counted.
func TestPassEach_Batches(t *testing.T) {
	path := closedDB(t)
	st := []string{"old"}
	stats := transcript.Stats{Lines: 10, Events: 20}
	var got [][]event.Event
	emit := func(b []event.Event) error {
		got = append(got, b)
		return nil
	}
	err := PassEach(context.Background(), path, &st, cloneList, &stats, 3, emit, func(ctx context.Context, db *sql.DB, st *[]string, b *Batcher) error {
		if _, err := values(ctx, db); err != nil {
			return err
		}
		for _, id := range []string{"1", "2", "3", "4", "5", "6", "7"} {
			stats.Lines++
			*st = append(*st, id)
			if err := b.Add(evs(id)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1", "2", "3"}, {"4", "5", "6"}, {"7"}}
	if !reflect.DeepEqual(ids(got), want) {
		t.Errorf("batches %v, want %v", ids(got), want)
	}
	if !slices.Equal(st, []string{"old", "1", "2", "3", "4", "5", "6", "7"}) {
		t.Errorf("state %v", st)
	}
	if stats.Lines != 17 || stats.Events != 27 {
		t.Errorf("stats %+v, want 17 lines and 27 events", stats)
	}

	// A max below one is one; Add with several events at once still hands over one at a time.
	got = nil
	err = PassEach(context.Background(), path, &st, cloneList, &stats, 0, emit, func(ctx context.Context, db *sql.DB, st *[]string, b *Batcher) error {
		return b.Add(evs("a", "b")...)
	})
	if err != nil || !reflect.DeepEqual(ids(got), [][]string{{"a"}, {"b"}}) {
		t.Errorf("max 0: %v, %v", ids(got), err)
	}
}

// A batch is not handed over once the database changed under an immutable read: the attempt is
// thrown away, counts nothing, and the next one reads from the committed state again.
func TestPassEach_Changed(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int // 2: the change is caught by Add's full batch; 10: by the final flush
	}{{"full batch", 2}, {"flush", 10}} {
		t.Run(tc.name, func(t *testing.T) {
			path := closedDB(t)
			st := []string{"old"}
			stats := transcript.Stats{Lines: 1}
			var got [][]event.Event
			attempts := 0
			err := PassEach(context.Background(), path, &st, cloneList, &stats, tc.max, func(b []event.Event) error {
				got = append(got, b)
				return nil
			}, func(ctx context.Context, db *sql.DB, st *[]string, b *Batcher) error {
				attempts++
				for i, id := range []string{"x", "y"} {
					if attempts == 1 && i == 1 { // the client writes meanwhile
						at := time.Unix(1_000_000, 0)
						if err := os.Chtimes(path, at, at); err != nil {
							return err
						}
					}
					stats.Lines++
					*st = append(*st, id)
					if err := b.Add(evs(id)...); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil || attempts != 2 {
				t.Fatalf("%d attempts, %v; want 2 and no error", attempts, err)
			}
			if !reflect.DeepEqual(ids(got), [][]string{{"x", "y"}}) {
				t.Errorf("batches %v, want the second attempt's only", ids(got))
			}
			if !slices.Equal(st, []string{"old", "x", "y"}) || stats.Lines != 3 || stats.Events != 2 {
				t.Errorf("state %v, stats %+v", st, stats)
			}
		})
	}
}

// A failed pass leaves the state and the stats as they were, whatever read counted; an error of
// emit fails the pass too.
func TestPassEach_Failed(t *testing.T) {
	path := closedDB(t)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name             string
		readErr, emitErr error
	}{{"read", boom, nil}, {"emit", nil, boom}} {
		t.Run(tc.name, func(t *testing.T) {
			st := []string{"old"}
			stats := transcript.Stats{Lines: 5, Unknown: map[string]int64{"k": 1}}
			before := stats.Clone()
			emitted := 0
			err := PassEach(context.Background(), path, &st, cloneList, &stats, 1, func([]event.Event) error {
				emitted++
				return tc.emitErr
			}, func(ctx context.Context, db *sql.DB, st *[]string, b *Batcher) error {
				stats.Lines++
				stats.Malformed++
				stats.CountUnknown("k")
				stats.CountUnknown("new")
				*st = append(*st, "read")
				if err := b.Add(evs("e")...); err != nil {
					return err
				}
				return tc.readErr
			})
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want boom naming the file", err)
			}
			if emitted != 1 {
				t.Errorf("emit called %d times, want 1 (a batch may go before the pass fails)", emitted)
			}
			if !slices.Equal(st, []string{"old"}) {
				t.Errorf("state %v, want it untouched", st)
			}
			if !reflect.DeepEqual(stats, before) {
				t.Errorf("stats %+v, want %+v", stats, before)
			}
		})
	}
}

// Collect gathers what PollEach hands over, in order, and nothing on an error.
func TestCollect(t *testing.T) {
	each := func(fail error) func(context.Context, int, func([]event.Event) error) error {
		return func(ctx context.Context, max int, emit func([]event.Event) error) error {
			if max < 1<<20 {
				t.Errorf("max %d: Collect bounds the batches", max)
			}
			if err := emit(evs("a", "b")); err != nil {
				return err
			}
			if err := emit(evs("c")); err != nil {
				return err
			}
			return fail
		}
	}
	got, err := Collect(context.Background(), each(nil))
	if err != nil || !reflect.DeepEqual(ids([][]event.Event{got}), [][]string{{"a", "b", "c"}}) {
		t.Errorf("Collect: %v, %v", got, err)
	}
	boom := errors.New("boom")
	if got, err := Collect(context.Background(), each(boom)); got != nil || !errors.Is(err, boom) {
		t.Errorf("Collect on an error: %v, %v", got, err)
	}
}

func TestColOpt(t *testing.T) {
	cols := map[string]bool{"a": true}
	if got := Col(cols, "a", "INTEGER", "0"); got != "CAST(COALESCE(a, 0) AS INTEGER)" {
		t.Errorf("Col present: %s", got)
	}
	if got := Col(cols, "b", "TEXT", "''"); got != "''" {
		t.Errorf("Col absent: %s", got)
	}
	if got := Opt(cols, "a", "COALESCE(a, '')", "''"); got != "COALESCE(a, '')" {
		t.Errorf("Opt present: %s", got)
	}
	if got := Opt(cols, "b", "COALESCE(b, '')", "''"); got != "''" {
		t.Errorf("Opt absent: %s", got)
	}
}
