package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a fake wall clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }
func newTracker(c *clock) *Tracker       { return New(Config{Now: c.Now}) }
func at(d time.Duration) time.Time       { return t0.Add(d) }
func statesOf(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%s:%s@%d", e.SessionID, e.Session.State, e.Session.Epoch))
	}
	return out
}

// record is a transcript record of session sid: an action, as a reader emits it.
func record(sid, key string, when time.Time, a event.Action) event.Event {
	return event.Event{ID: event.ID("test", sid, key), Kind: event.KindAction, Time: when, Source: Component,
		Client: "claude-code", SessionID: sid, Project: "/p", V: event.SchemaVersion, Action: &a}
}

func prompt(sid, key string, when time.Time) event.Event {
	return record(sid, key, when, event.Action{Type: event.ActionUserPrompt, Target: "go", Transcript: "/t/" + sid + ".jsonl"})
}

func hook(sid, name, matcher string, when time.Time) event.Event {
	return event.Event{ID: event.RandomID(), Kind: event.KindHook, Time: when, Source: "observerctl", Client: "claude-code",
		SessionID: sid, V: event.SchemaVersion, Hook: &event.Hook{Event: name, Matcher: matcher, Cwd: "/p/sub",
			TranscriptPath: "/t/" + sid + ".jsonl"}}
}

// observe feeds records and commits, returning the events Observe asked for.
func observe(tb testing.TB, tr *Tracker, evs ...event.Event) []event.Event {
	tb.Helper()
	out, commit := tr.Observe(evs)
	commit()
	return out
}

// tick runs Tick and commits.
func tick(tb testing.TB, tr *Tracker) []event.Event {
	tb.Helper()
	out, commit := tr.Tick()
	commit()
	for i := range out {
		if err := out[i].Validate(); err != nil {
			tb.Fatalf("Tick event %d is invalid: %v", i, err)
		}
	}
	return out
}

func wantStates(tb testing.TB, what string, got []event.Event, want ...string) {
	tb.Helper()
	if g := statesOf(got); fmt.Sprint(g) != fmt.Sprint(want) {
		tb.Fatalf("%s: events %v, want %v", what, g, want)
	}
}

func TestTracker_ActiveIdleFinalizedActive(t *testing.T) {
	c := &clock{now: t0}
	tr := newTracker(c)
	observe(t, tr, prompt("s1", "r1", at(0)))
	evs := tick(t, tr)
	wantStates(t, "first record", evs, "s1:active@0")
	if e := evs[0]; !e.Time.Equal(at(0)) || e.Session.TranscriptPath != "/t/s1.jsonl" || e.Project != "/p" ||
		e.Source != Component {
		t.Errorf("active event %+v %+v: want the record's time, transcript and project", e, e.Session)
	}
	wantStates(t, "same pass again", tick(t, tr))

	c.advance(DefaultIdleAfter - time.Second)
	wantStates(t, "before idle_after", tick(t, tr))
	c.advance(time.Second)
	evs = tick(t, tr)
	wantStates(t, "at idle_after", evs, "s1:idle@0")
	if !evs[0].Time.Equal(at(0)) {
		t.Errorf("idle event at %v, want the last record's time %v", evs[0].Time, at(0))
	}
	wantStates(t, "idle again", tick(t, tr))

	c.advance(DefaultFinalizeAfter - DefaultIdleAfter)
	wantStates(t, "at finalize_after", tick(t, tr), "s1:finalized@0")
	c.advance(time.Hour)
	wantStates(t, "an hour later", tick(t, tr))

	// A new record makes it active again, as of that record.
	observe(t, tr, prompt("s1", "r2", c.now.Add(-time.Second)))
	evs = tick(t, tr)
	wantStates(t, "record after finalized", evs, "s1:active@0")
	if !evs[0].Time.Equal(c.now.Add(-time.Second)) {
		t.Errorf("active event at %v, want the new record's time", evs[0].Time)
	}
	if st, _ := tr.State("claude-code", "s1"); st != event.SessionActive {
		t.Errorf("State = %q, want active", st)
	}
}

func TestTracker_ConfiguredTimings(t *testing.T) {
	c := &clock{now: t0}
	tr := New(Config{IdleAfter: 2 * time.Second, FinalizeAfter: 5 * time.Second, Now: c.Now})
	observe(t, tr, prompt("s1", "r1", at(0)))
	wantStates(t, "first", tick(t, tr), "s1:active@0")
	c.advance(2 * time.Second)
	wantStates(t, "2s", tick(t, tr), "s1:idle@0")
	c.advance(3 * time.Second)
	wantStates(t, "5s", tick(t, tr), "s1:finalized@0")
}

// History read at a cold start: each old session is finalized once, directly, at the time of its
// last record, and nothing more is published on later passes.
func TestTracker_ColdHistoryFinalizedOnce(t *testing.T) {
	c := &clock{now: t0}
	tr := newTracker(c)
	const n = 3000
	var evs []event.Event
	for i := range n {
		sid := fmt.Sprintf("old-%04d", i)
		evs = append(evs, prompt(sid, "a", at(-48*time.Hour)), prompt(sid, "b", at(-47*time.Hour)))
	}
	evs = append(evs, prompt("recent", "a", at(-10*time.Minute)))
	observe(t, tr, evs...)
	out := tick(t, tr)
	if len(out) != n+1 {
		t.Fatalf("first tick published %d events, want %d (one per session)", len(out), n+1)
	}
	for _, e := range out {
		want := at(-47 * time.Hour)
		if e.SessionID == "recent" {
			want = at(-10 * time.Minute)
		}
		if e.Session.State != event.SessionFinalized || !e.Time.Equal(want) {
			t.Fatalf("%s: %s at %v, want finalized at its last record %v", e.SessionID, e.Session.State, e.Time, want)
		}
	}
	for range 5 {
		c.advance(500 * time.Millisecond)
		if out := tick(t, tr); len(out) != 0 {
			t.Fatalf("a later pass published %d events: %v", len(out), statesOf(out[:min(3, len(out))]))
		}
	}
	// Sessions older than PruneAfter leave the state; the recent one stays.
	if tr.Len() != 1 {
		t.Errorf("tracker holds %d sessions, want 1 (the old ones pruned)", tr.Len())
	}
}

func TestTracker_StopHookFinalizesUntilALaterRecord(t *testing.T) {
	c := &clock{now: t0}
	tr := newTracker(c)
	observe(t, tr, prompt("s1", "r1", at(0)))
	wantStates(t, "first", tick(t, tr), "s1:active@0")

	// The Stop hook arrives before the turn's last line is read.
	c.advance(2 * time.Second)
	tr.Hook(hook("s1", "Stop", "", at(2*time.Second)))
	if st, _ := tr.State("claude-code", "s1"); st != event.SessionFinalized {
		t.Fatalf("after Stop: state %q, want finalized", st)
	}
	wantStates(t, "after Stop (the hook published it)", tick(t, tr))
	observe(t, tr, prompt("s1", "r2", at(1500*time.Millisecond)))
	wantStates(t, "a record logged before the Stop", tick(t, tr))
	c.advance(10 * time.Minute)
	wantStates(t, "10 minutes later", tick(t, tr))

	// The next prompt is after the hook: active again.
	observe(t, tr, prompt("s1", "r3", c.now))
	wantStates(t, "record after Stop", tick(t, tr), "s1:active@0")

	// SessionEnd finalizes too.
	c.advance(time.Second)
	tr.Hook(hook("s1", "SessionEnd", "exit", c.now))
	if st, _ := tr.State("claude-code", "s1"); st != event.SessionFinalized {
		t.Fatalf("after SessionEnd: state %q, want finalized", st)
	}
	wantStates(t, "after SessionEnd", tick(t, tr))
}

func TestTracker_SessionStartHook(t *testing.T) {
	c := &clock{now: t0}
	tr := newTracker(c)
	tr.Hook(hook("s1", "SessionStart", "startup", c.now))
	if st, _ := tr.State("claude-code", "s1"); st != event.SessionStarted {
		t.Fatalf("after SessionStart: state %q, want started", st)
	}
	wantStates(t, "started (the hook published it)", tick(t, tr))
	c.advance(time.Second)
	observe(t, tr, prompt("s1", "r1", c.now))
	evs := tick(t, tr)
	wantStates(t, "first record", evs, "s1:active@0")
	if evs[0].Session.Cwd != "/p/sub" {
		t.Errorf("cwd %q, want the hook's", evs[0].Session.Cwd)
	}
	// A session started and never used goes idle, then finalized, from the hook's time.
	tr.Hook(hook("s2", "SessionStart", "startup", c.now))
	c.advance(DefaultIdleAfter)
	wantStates(t, "idle", tick(t, tr), "s1:idle@0", "s2:idle@0")
	// After a compaction Claude Code calls SessionStart with source compact: nothing changes.
	tr.Hook(hook("s1", "SessionStart", "compact", c.now))
	if st, _ := tr.State("claude-code", "s1"); st != event.SessionIdle {
		t.Errorf("after SessionStart(compact): state %q, want idle still", st)
	}
}

func TestTracker_CompactionStartsAnEpoch(t *testing.T) {
	c := &clock{now: t0}
	tr := newTracker(c)
	compact := record("s1", "c1", at(0), event.Action{Type: event.ActionContextCompacted, Tool: "compact_boundary", Target: "auto"})
	micro := record("s1", "m1", at(time.Second), event.Action{Type: event.ActionContextCompacted, Tool: "microcompact_boundary"})
	out := observe(t, tr, prompt("s1", "p", at(-time.Second)), compact, micro)
	wantStates(t, "compaction", out, "s1:active@1")
	if !out[0].Time.Equal(at(0)) {
		t.Errorf("epoch event at %v, want the compaction's time", out[0].Time)
	}
	// The same record read again counts once.
	wantStates(t, "the compaction again", observe(t, tr, compact))
	wantStates(t, "tick after the epoch event", tick(t, tr))

	// Codex's reader reports its own epochs; the tracker follows the largest.
	codex := event.Event{ID: "cx", Kind: event.KindSession, Time: at(2 * time.Second), Source: Component, Client: "claude-code",
		SessionID: "s1", V: event.SchemaVersion, Session: &event.Session{State: event.SessionActive, Epoch: 3}}
	observe(t, tr, codex)
	out = observe(t, tr, record("s1", "c2", at(3*time.Second), event.Action{Type: event.ActionContextCompacted, Tool: "compact_boundary"}))
	wantStates(t, "second compaction", out, "s1:active@4")
	if _, ep := tr.State("claude-code", "s1"); ep != 4 {
		t.Errorf("epoch %d, want 4", ep)
	}
	// Later transitions carry the epoch.
	c.advance(DefaultIdleAfter + 3*time.Second)
	wantStates(t, "idle", tick(t, tr), "s1:idle@4")
}

// Records and transitions count only once committed: what a failed publication carried is
// published again next time.
func TestTracker_UncommittedChangesNothing(t *testing.T) {
	c := &clock{now: t0}
	tr := newTracker(c)
	compact := record("s1", "c1", at(0), event.Action{Type: event.ActionContextCompacted, Tool: "compact_boundary"})
	out, _ := tr.Observe([]event.Event{compact})
	wantStates(t, "first try", out, "s1:active@1")
	if tr.Len() != 0 {
		t.Fatalf("uncommitted Observe left %d sessions", tr.Len())
	}
	first := out[0].ID
	out = observe(t, tr, compact)
	if len(out) != 1 || out[0].ID != first {
		t.Fatalf("retry: %v, want the same epoch event %s", statesOf(out), first)
	}
	c.advance(DefaultIdleAfter)
	evs, _ := tr.Tick()
	wantStates(t, "uncommitted tick", evs, "s1:idle@1")
	again := tick(t, tr)
	if len(again) != 1 || again[0].ID != evs[0].ID {
		t.Fatalf("tick after an uncommitted one: %v, want the same idle event", statesOf(again))
	}
}

// A restarted watcher (state saved and loaded) publishes nothing it published before, and a
// tracker that lost its state publishes the same ids for the same records.
func TestTracker_SaveLoadAndDeterministicIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "watch", "lifecycle.json")
	c := &clock{now: t0}
	records := []event.Event{prompt("s1", "r1", at(-2*time.Minute)), prompt("s2", "r1", at(0))}

	tr := newTracker(c)
	observe(t, tr, records...)
	first := tick(t, tr)
	wantStates(t, "first", first, "s1:idle@0", "s2:active@0")
	if !tr.Dirty() {
		t.Fatal("not dirty after changes")
	}
	if err := tr.Save(path); err != nil {
		t.Fatal(err)
	}

	re := newTracker(c)
	if err := re.Load(path); err != nil {
		t.Fatal(err)
	}
	if re.Len() != 2 || re.Dirty() {
		t.Fatalf("loaded %d sessions (dirty %v), want 2", re.Len(), re.Dirty())
	}
	wantStates(t, "after reload", tick(t, re))
	observe(t, re, records...) // a re-scan of the same lines
	wantStates(t, "re-scan after reload", tick(t, re))

	fresh := newTracker(c)
	observe(t, fresh, records...)
	again := tick(t, fresh)
	for i := range first {
		if again[i].ID != first[i].ID {
			t.Errorf("event %d: id %s, want %s (deterministic)", i, again[i].ID, first[i].ID)
		}
	}
	// Records in another order (a subagent file read first) give the same ids.
	other := newTracker(c)
	observe(t, other, prompt("s2", "r0", at(0)), records[1], records[0])
	observe(t, fresh, prompt("s2", "r0", at(0)))
	c.advance(DefaultIdleAfter)
	// other also reports s1 (its first tick); compare s2's idle event, the last of each.
	a, b := tick(t, other), tick(t, fresh)
	wantStates(t, "other order", a, "s1:idle@0", "s2:idle@0")
	wantStates(t, "first order", b, "s2:idle@0")
	if a[1].ID != b[0].ID {
		t.Errorf("ids depend on the reading order: %s vs %s", a[1].ID, b[0].ID)
	}

	// A damaged file is an error, not a crash.
	if err := writeFile(path, "{"); err != nil {
		t.Fatal(err)
	}
	if err := newTracker(c).Load(path); err == nil {
		t.Error("Load of a damaged file succeeded")
	}
	if err := newTracker(c).Load(filepath.Join(t.TempDir(), "none.json")); err != nil {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }

// NextDue names when time alone changes a session's state: its idle time, then its finalize
// time, then nothing; a later record moves it, a Stop hook ends it. A watcher that sleeps until
// then misses no transition.
func TestTracker_NextDue(t *testing.T) {
	c := &clock{now: t0}
	tr := New(Config{IdleAfter: 2 * time.Second, FinalizeAfter: 5 * time.Second, Now: c.Now})
	if due := tr.NextDue(); !due.IsZero() {
		t.Fatalf("no session: due %v", due)
	}
	observe(t, tr, prompt("a", "1", t0))
	tick(t, tr)
	if due := tr.NextDue(); !due.Equal(at(2 * time.Second)) {
		t.Fatalf("active since t0: due %v, want its idle time t0+2s", due)
	}
	c.advance(2 * time.Second)
	if got := statesOf(tick(t, tr)); len(got) != 1 || got[0] != "a:idle@0" {
		t.Fatalf("at the due time: %v, want a:idle@0", got)
	}
	if due := tr.NextDue(); !due.Equal(at(5 * time.Second)) {
		t.Fatalf("idle: due %v, want its finalize time t0+5s", due)
	}
	observe(t, tr, prompt("a", "2", at(3*time.Second)))
	if due := tr.NextDue(); !due.Equal(at(5 * time.Second)) {
		t.Fatalf("a record at t0+3s: due %v, want its idle time t0+5s", due)
	}
	c.advance(6 * time.Second) // t0+8s
	tick(t, tr)
	if due := tr.NextDue(); !due.IsZero() {
		t.Fatalf("finalized: due %v, want none", due)
	}
	observe(t, tr, prompt("b", "1", at(8*time.Second)))
	tr.Hook(hook("b", "Stop", "", at(8*time.Second)))
	if due := tr.NextDue(); !due.IsZero() {
		t.Fatalf("stopped by its hook: due %v, want none", due)
	}
}

// ObserveAndTick is Observe then Tick as if the batch were committed: the transitions of the
// sessions the batch brings or moves on, and of the others, the same events (ids included) as the
// two in turn, and nothing kept until its commit.
func TestTracker_ObserveAndTickIsObserveThenTick(t *testing.T) {
	batch := func() []event.Event {
		return []event.Event{
			prompt("known", "b", at(-47*time.Hour)), // an old session, moved on by the batch
			prompt("new", "a", at(-10*time.Minute)), // a session first seen in it
			record("new", "c", at(-9*time.Minute), event.Action{Type: event.ActionContextCompacted, Tool: "compact_boundary"}),
		}
	}
	setup := func() (*clock, *Tracker) {
		c := &clock{now: t0}
		tr := newTracker(c)
		observe(t, tr, prompt("known", "a", at(-48*time.Hour)), prompt("other", "a", at(-30*time.Hour)))
		return c, tr
	}
	_, two := setup()
	wantEpochs := observe(t, two, batch()...)
	wantTicked := tick(t, two)
	_, one := setup()
	epochs, ticked, commit := one.ObserveAndTick(batch())
	if !slices.Equal(ids(epochs), ids(wantEpochs)) || !slices.Equal(ids(ticked), ids(wantTicked)) {
		t.Fatalf("ObserveAndTick: epochs %v, transitions %v; Observe then Tick: %v, %v",
			statesOf(epochs), statesOf(ticked), statesOf(wantEpochs), statesOf(wantTicked))
	}
	if len(ticked) != 3 {
		t.Errorf("transitions %v, want one for each of the three sessions", statesOf(ticked))
	}
	if one.Len() != 2 {
		t.Fatalf("before its commit the tracker holds %d sessions, want the 2 it had", one.Len())
	}
	commit()
	if again := tick(t, one); len(again) != 0 || one.Len() != two.Len() {
		t.Errorf("after the commit a tick published %v and the tracker holds %d sessions, want nothing and %d", statesOf(again), one.Len(), two.Len())
	}
}

func ids(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}
