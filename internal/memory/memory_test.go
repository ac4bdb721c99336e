package memory_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/corpusstore"
	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus_summaries.golden")

// corpusMemory fills a store from the corpus (gen_history.py's layout, "small" by default) and
// runs the memory loop over it to the end.
func corpusMemory(t *testing.T, layout ...string) *store.Store {
	t.Helper()
	if why := corpusstore.Available(); why != "" {
		t.Skip(why)
	}
	path, err := corpusstore.Build(t.TempDir(), layout...)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The clock: a day after the newest record, so that confidences decay the same every run.
	var newest int64
	st.DB.QueryRow(`SELECT max(ts) FROM actions`).Scan(&newest)
	m := &memory.Memory{DB: st.DB, ObserveEvery: time.Nanosecond, Now: func() time.Time { return time.UnixMilli(newest).Add(24 * time.Hour) }}
	for range 100 {
		p, err := m.Step(context.Background(), 50)
		if err != nil {
			t.Fatal(err)
		}
		if p.Pending == 0 {
			break
		}
	}
	return st
}

// allSummaries renders every stored summary, in a stable order.
func allSummaries(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT client, session_id, epoch, ended_by, actions, text FROM session_summaries ORDER BY client, session_id, epoch`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var client, session, endedBy, text string
		var epoch, actions int
		rows.Scan(&client, &session, &epoch, &endedBy, &actions, &text)
		fmt.Fprintf(&b, "== %s %s epoch %d (%d actions, ended by %s)\n%s\n", client, session, epoch, actions, endedBy, text)
	}
	return b.String()
}

// The extractive summaries of the corpus's sessions are the same on every run (the golden file,
// read and checked by hand against the transcripts when it was written), and each says what the
// store says happened: the files changed, the commands run and how often, the failures.
func TestSummaries_Corpus(t *testing.T) {
	st := corpusMemory(t)
	got := allSummaries(t, st.DB)
	golden := filepath.Join("testdata", "corpus_summaries.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("the corpus summaries differ from %s (go test -run TestSummaries_Corpus -update, then read the diff)", golden)
	}
	// A second store built from the same records gives the same bytes.
	if again := allSummaries(t, corpusMemory(t).DB); again != got {
		t.Error("two runs over the same records gave different summaries")
	}

	// Each summary against the store, by another route: its window's actions, counted in SQL.
	rows, err := st.DB.Query(`SELECT client, session_id, epoch, facts FROM session_summaries WHERE source = 'extractive'`)
	if err != nil {
		t.Fatal(err)
	}
	type sum struct {
		client, session string
		epoch           int
	}
	var all []sum
	for rows.Next() {
		var s sum
		var facts string
		rows.Scan(&s.client, &s.session, &s.epoch, &facts)
		all = append(all, s)
	}
	rows.Close()
	if len(all) < 10 {
		t.Fatalf("only %d summaries from the corpus", len(all))
	}
	checked := 0
	for _, s := range all {
		ss, err := query.SessionSummaries(context.Background(), st.DB, s.client, s.session, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ss {
			if x.Epoch != s.epoch || x.Facts == nil {
				continue
			}
			f := x.Facts
			var lo, hi int64
			st.DB.QueryRow(`SELECT coalesce(min(ts), 0), coalesce(max(ts), 0) FROM actions WHERE client = ? AND session_id = ? AND ts >= ? AND ts <= ?`,
				s.client, s.session, f.FirstTS, f.LastTS).Scan(&lo, &hi)
			var n, changed, fails, runs int
			q := `FROM actions WHERE client = ? AND session_id = ? AND ts >= ? AND ts <= ?`
			args := []any{s.client, s.session, f.FirstTS, f.LastTS}
			st.DB.QueryRow(`SELECT count(*) `+q, args...).Scan(&n)
			st.DB.QueryRow(`SELECT count(DISTINCT target) `+q+` AND type IN ('edit_file', 'write_file') AND target != ''`, args...).Scan(&changed)
			st.DB.QueryRow(`SELECT count(*) `+q+` AND success = 0 AND target != ''`, args...).Scan(&fails)
			st.DB.QueryRow(`SELECT count(*) `+q+` AND type = 'run_command'`, args...).Scan(&runs)
			if n != f.Actions {
				t.Errorf("%s epoch %d: %d actions, the store has %d in its window", s.session, s.epoch, f.Actions, n)
			}
			if got := len(f.Changed); got != min(changed, 12) {
				t.Errorf("%s epoch %d: %d files changed, the store has %d", s.session, s.epoch, got, changed)
			}
			failed := 0
			for _, fl := range f.Failures {
				failed += fl.Count
			}
			if len(f.Failures) < 10 && failed != fails {
				t.Errorf("%s epoch %d: %d failures, the store has %d", s.session, s.epoch, failed, fails)
			}
			cmdRuns := 0
			for _, c := range f.Commands {
				cmdRuns += c.Runs
			}
			if len(f.Commands) < 10 && cmdRuns != runs {
				t.Errorf("%s epoch %d: %d command runs, the store has %d", s.session, s.epoch, cmdRuns, runs)
			}
			checked++
		}
	}
	t.Logf("%d summaries checked against the store", checked)
	var sessions, ended, withActions int
	st.DB.QueryRow(`SELECT count(*), sum(state IN ('idle', 'finalized')) FROM sessions`).Scan(&sessions, &ended)
	st.DB.QueryRow(`SELECT count(DISTINCT client || session_id) FROM actions`).Scan(&withActions)
	t.Logf("the corpus store: %d sessions (%d ended, %d with actions)", sessions, ended, withActions)
}

// Every observation learned from a scaled history (the corpus three times over, every id unique
// per copy) names real actions as its evidence, of the kind the observation is about.
func TestObservations_EvidenceResolves(t *testing.T) {
	st := corpusMemory(t, "scaled", "3")
	obs, err := query.Observations(context.Background(), st.DB, "", 0, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) == 0 {
		t.Fatal("no observation learned from the corpus")
	}
	kinds := map[string]int{}
	for _, o := range obs {
		kinds[o.Kind]++
		if len(o.Evidence) == 0 || len(o.Evidence) > 5 {
			t.Errorf("%s %q: %d pieces of evidence", o.Kind, o.Key, len(o.Evidence))
		}
		for _, ev := range o.Evidence {
			var typ, target, session, project string
			err := st.DB.QueryRow(`SELECT type, target, session_id, project FROM actions WHERE event_id = ?`, ev.EventID).Scan(&typ, &target, &session, &project)
			if err != nil {
				t.Errorf("%s %q: evidence %s does not resolve: %v", o.Kind, o.Key, ev.EventID, err)
				continue
			}
			if session != ev.SessionID || project != o.Project {
				t.Errorf("%s %q: evidence %s is in session %s of %s", o.Kind, o.Key, ev.EventID, session, project)
			}
			switch o.Kind {
			case memory.KindTestCommand, memory.KindBuildCommand, memory.KindFailingCommand:
				cmd := strings.Join(strings.Fields(target), " ")
				if o.Kind == memory.KindTestCommand {
					cmd = memory.TestCommand(cmd) // a narrower run counts for the project's command
				}
				if typ != "run_command" || cmd[:min(len(cmd), len(o.Key), 40)] != o.Key[:min(len(o.Key), 40)] {
					t.Errorf("%s %q: evidence is %s %q", o.Kind, o.Key, typ, target)
				}
			case memory.KindCoChange, memory.KindChangeArea:
				if typ != "edit_file" && typ != "write_file" {
					t.Errorf("%s %q: evidence is a %s", o.Kind, o.Key, typ)
				}
			}
		}
	}
	t.Logf("observations by kind: %v", kinds)
	for _, o := range obs[:min(len(obs), 8)] {
		t.Logf("  %.2f %s: %s (%d sessions, %d against)", o.Confidence, o.Kind, o.Text, o.Support, o.Contradictions)
	}
}

// A test command that works gains confidence with each session; a session where it only fails
// contradicts it and takes confidence away, and so does time without it.
func TestObservations_ContradictionLowersConfidence(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	now := base.Add(10 * 24 * time.Hour)
	m := &memory.Memory{DB: st.DB, Now: func() time.Time { return now }, ObserveEvery: time.Nanosecond}
	session := func(i int, ok bool) {
		sess := fmt.Sprintf("s%d", i)
		at := base.Add(time.Duration(i) * 24 * time.Hour)
		var evs []event.Event
		for j, cmd := range []string{"go test ./...", "go test ./..."} {
			success := ok || j == 0 && false
			ev := event.New(event.KindAction, "test")
			ev.ID, ev.Time, ev.Client, ev.SessionID, ev.Project = fmt.Sprintf("%s-%d", sess, j), at.Add(time.Duration(j)*time.Minute), "claude-code", sess, "/p"
			ev.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: cmd, Success: &success}
			evs = append(evs, ev)
		}
		fin := event.New(event.KindSession, "test")
		fin.ID, fin.Time, fin.Client, fin.SessionID, fin.Project = sess+"-end", at.Add(time.Hour), "claude-code", sess, "/p"
		fin.Session = &event.Session{State: "finalized"}
		evs = append(evs, fin)
		if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Step(ctx, 50); err != nil {
			t.Fatal(err)
		}
	}
	conf := func() (float64, int, int) {
		obs, err := query.Observations(ctx, st.DB, "/p", 0, 0, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range obs {
			if o.Kind == memory.KindTestCommand && o.Key == "go test ./..." {
				return o.Confidence, o.Support, o.Contradictions
			}
		}
		t.Fatalf("no test_command observation: %+v", obs)
		return 0, 0, 0
	}
	session(1, true)
	c1, _, _ := conf()
	session(2, true)
	session(3, true)
	c3, s3, x3 := conf()
	if !(c3 > c1) || s3 != 3 || x3 != 0 {
		t.Fatalf("three sessions that pass: confidence %.3f (one: %.3f), support %d, against %d", c3, c1, s3, x3)
	}
	session(4, false)
	c4, s4, x4 := conf()
	if !(c4 < c3) || s4 != 3 || x4 != 1 {
		t.Fatalf("after a session where it only failed: confidence %.3f (was %.3f), support %d, against %d", c4, c3, s4, x4)
	}
	// Time without it: a month later it counts for less.
	now = now.Add(30 * 24 * time.Hour)
	if c5, _, _ := conf(); !(c5 < c4/2) {
		t.Errorf("a month unseen: confidence %.3f, was %.3f", c5, c4)
	}
	// Forgotten, it is not shown again, nor brought back by the next sessions.
	obs, _ := query.Observations(ctx, st.DB, "/p", 0, 0, now)
	var id int64
	for _, o := range obs {
		if o.Kind == memory.KindTestCommand {
			id = o.ID
		}
	}
	if ok, err := memory.Forget(ctx, st.DB, id); !ok || err != nil {
		t.Fatalf("forget: %v %v", ok, err)
	}
	session(5, true)
	obs, _ = query.Observations(ctx, st.DB, "/p", 0, 0, now)
	for _, o := range obs {
		if o.Kind == memory.KindTestCommand {
			t.Errorf("a forgotten observation came back: %+v", o)
		}
	}
	// The brief an agent gets says what the project taught and what its sessions did.
	brief, err := query.MemoryBrief(ctx, st.DB, "/p", now)
	if err != nil || !strings.Contains(brief, "Last sessions:") {
		t.Errorf("brief: %v\n%s", err, brief)
	}
}
