// Package lifecycle follows the sessions observer-watch reads and reports each change of their
// state as an event.Session event.
//
// # States
//
// A session is active from its first transcript record, idle once no new record came for
// IdleAfter (default DefaultIdleAfter, 1 minute), and finalized once none came for FinalizeAfter
// (default DefaultFinalizeAfter, 5 minutes). A record newer than the state makes it active again.
// A session's activity time is the time of its newest record as the client logged it (subagent
// files count for their parent session); the wall clock (Config.Now) only says how old that is.
//
// Hooks (see Tracker.Hook) move the state too. `observerctl hook` publishes the hook's own session
// event (started for SessionStart, finalized for Stop and SessionEnd), so the tracker only
// mirrors it, publishing nothing: a SessionStart makes the session started until its first record
// after the hook; a Stop or SessionEnd finalizes it, and only a record logged after the hook makes
// it active again (the last lines of the turn, often read after the hook arrived, do not). A
// SessionStart whose source is "compact" changes no state: the session goes on.
//
// Compaction: a Claude Code compact_boundary record (a context_compacted action whose Tool is
// "compact_boundary") starts a new epoch of the same session: the tracker publishes a session
// event (state active, Epoch+1) at the record's time. A microcompact_boundary only trims old tool
// results and starts no epoch. Codex's reader publishes its own epoch events; the tracker takes the
// largest epoch it sees from them. The count starts from what this tracker has seen: a session
// whose earlier compactions were read by `observerctl scan`, or before the state file was lost,
// gets too low an epoch (the writer keeps the largest epoch a session ever had).
//
// # Events
//
// Each transition is published once: Tick compares each session's state with the last state
// reported and publishes only a change, so thousands of old sessions cost one finalized event
// each, once. A session first seen with records older than FinalizeAfter (history read by a cold
// start) gets finalized directly, with no active or idle before it. Every event carries the time of
// the session's newest record (the hook's time for a session with no record since its
// SessionStart), so that the writer's last_seen stays the last thing the agent did, and the writer
// orders states by that time (and active < idle < finalized at the same time).
//
// Event ids are deterministic: event.ID over the component, client, session, state, epoch, the
// newest record's event id and its time (for an epoch, the compaction record's id). A restarted
// watcher, or a second read of the same records, publishes the same ids, which the bus and the
// writer de-duplicate.
//
// # State
//
// The tracker keeps, per session, its newest record, hook times, epoch and last reported state, in
// a JSON file (0600) that Save writes and Load reads back, so a restart neither repeats nor misses
// a transition. A finalized session whose activity is older than PruneAfter is dropped from it:
// should it get a record again, it starts over as a new session. A Tracker is not safe for
// concurrent use: observer-watch drives it from its scan loop.
package lifecycle

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/pkg/event"
)

// Component is the source of the events the tracker publishes.
const Component = "observer-watch"

// Default timings, overridden by [watch] idle_after and finalize_after.
const (
	// DefaultIdleAfter is how long a session goes without a new record before it is idle.
	DefaultIdleAfter = time.Minute
	// DefaultFinalizeAfter is how long a session goes without a new record before it is finalized.
	DefaultFinalizeAfter = 5 * time.Minute
)

// PruneAfter is how long a finalized session stays in the tracker's state after its last activity.
const PruneAfter = 24 * time.Hour

// maxCompactions bounds the compaction ids remembered per session (to count each one once).
const maxCompactions = 32

// Config holds the tracker's timings and clock.
type Config struct {
	IdleAfter     time.Duration    // default DefaultIdleAfter
	FinalizeAfter time.Duration    // default DefaultFinalizeAfter; at least IdleAfter
	Now           func() time.Time // default time.Now
}

// Tracker follows sessions' states. The zero value is not usable; call New.
type Tracker struct {
	cfg      Config
	sessions map[key]*entry
	dirty    bool
}

type key struct{ client, id string }

// entry is one session's state, as saved.
type entry struct {
	Client      string   `json:"client"`
	ID          string   `json:"id"`
	Project     string   `json:"project,omitempty"`
	Cwd         string   `json:"cwd,omitempty"`
	Transcript  string   `json:"transcript,omitempty"`
	Last        int64    `json:"last,omitempty"`     // time of the newest record (Unix ns)
	LastKey     string   `json:"last_key,omitempty"` // that record's event id
	StartAt     int64    `json:"start_at,omitempty"` // time of the last SessionStart hook (Unix ns)
	StopAt      int64    `json:"stop_at,omitempty"`  // time of the last Stop or SessionEnd hook (Unix ns)
	State       string   `json:"state,omitempty"`    // the last state reported, by the tracker or a hook
	Epoch       int      `json:"epoch,omitempty"`
	Compactions []string `json:"compactions,omitempty"` // ids of the compactions counted, newest last
}

// New returns a tracker with no sessions. Zero timings take their defaults.
func New(cfg Config) *Tracker {
	cfg.IdleAfter = cmp.Or(cfg.IdleAfter, DefaultIdleAfter)
	cfg.FinalizeAfter = max(cmp.Or(cfg.FinalizeAfter, DefaultFinalizeAfter), cfg.IdleAfter)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Tracker{cfg: cfg, sessions: map[key]*entry{}}
}

// Len returns how many sessions the tracker holds.
func (t *Tracker) Len() int { return len(t.sessions) }

// State returns the last state reported for a session, and its epoch; "" for an unknown session.
func (t *Tracker) State(client, session string) (string, int) {
	if e := t.sessions[key{client, session}]; e != nil {
		return e.State, e.Epoch
	}
	return "", 0
}

// Observe takes records a transcript reader produced, in file order, and returns the events they
// call for now (a new epoch at a compaction) with a commit function. The records change the
// tracker only when commit is called: call it once the records and the returned events are
// published, so that records read again after a failed publication count again.
func (t *Tracker) Observe(evs []event.Event) ([]event.Event, func()) {
	pending, out := t.observe(evs)
	return out, func() { t.apply(pending) }
}

// ObserveAndTick is Observe, then Tick as if the records were committed, with one commit for both:
// the transitions due once a batch is published, in the same publication (a backlog's last batch
// carries them, for the writer to have the whole history when the backlog ends).
func (t *Tracker) ObserveAndTick(evs []event.Event) (epochs, transitions []event.Event, commit func()) {
	pending, epochs := t.observe(evs)
	transitions, commitTick := t.tick(pending)
	return epochs, transitions, func() {
		t.apply(pending)
		commitTick()
	}
}

// apply keeps the entries observe made.
func (t *Tracker) apply(pending map[key]*entry) {
	for k, e := range pending {
		t.sessions[k] = e
	}
	if len(pending) > 0 {
		t.dirty = true
	}
}

// observe is Observe's work: the sessions' entries as the records leave them, copies not yet
// kept, and the events the records call for.
func (t *Tracker) observe(evs []event.Event) (map[key]*entry, []event.Event) {
	pending := map[key]*entry{}
	var out []event.Event
	for i := range evs {
		ev := &evs[i]
		if ev.SessionID == "" || ev.Time.IsZero() {
			continue
		}
		k := key{ev.Client, ev.SessionID}
		e := pending[k]
		if e == nil {
			e = t.copyOf(k)
			pending[k] = e
		}
		if out1, ok := e.record(ev); ok {
			out = append(out, out1)
		}
	}
	return pending, out
}

// copyOf returns a copy of a session's entry, or a new one.
func (t *Tracker) copyOf(k key) *entry {
	if e := t.sessions[k]; e != nil {
		c := *e
		c.Compactions = slices.Clone(e.Compactions)
		return &c
	}
	return &entry{Client: k.client, ID: k.id}
}

// record takes one record of the session; it returns an epoch event for a compaction.
func (e *entry) record(ev *event.Event) (event.Event, bool) {
	e.Project = cmp.Or(ev.Project, e.Project)
	at := ev.Time.UnixNano()
	if at > e.Last || at == e.Last && ev.ID > e.LastKey {
		// The greater id breaks a tie, so the newest record is the same whatever order the
		// session's files are read in.
		e.Last, e.LastKey = at, ev.ID
	}
	switch {
	case ev.Session != nil:
		e.Epoch = max(e.Epoch, ev.Session.Epoch)
		e.Transcript = cmp.Or(e.Transcript, ev.Session.TranscriptPath)
		e.Cwd = cmp.Or(ev.Session.Cwd, e.Cwd)
	case ev.Action != nil:
		a := ev.Action
		if a.AgentID == "" && !a.Sidechain && a.Transcript != "" {
			e.Transcript = a.Transcript
		}
		if a.Type == event.ActionContextCompacted && a.Tool == "compact_boundary" && !slices.Contains(e.Compactions, ev.ID) {
			return e.newEpoch(ev), true
		}
	}
	return event.Event{}, false
}

// newEpoch counts a compaction and returns its session event.
func (e *entry) newEpoch(ev *event.Event) event.Event {
	e.Epoch++
	e.Compactions = append(e.Compactions, ev.ID)
	if len(e.Compactions) > maxCompactions {
		e.Compactions = slices.Delete(e.Compactions, 0, len(e.Compactions)-maxCompactions)
	}
	at := ev.Time.UnixNano()
	if at > e.StopAt && at >= e.StartAt {
		e.State = event.SessionActive
	}
	out := e.event(event.SessionActive, ev.Time, event.ID(Component, string(event.KindSession), e.Client, e.ID, "epoch",
		ev.ID))
	return out
}

// event builds a session event of the entry.
func (e *entry) event(state string, at time.Time, id string) event.Event {
	return event.Event{
		ID: id, Kind: event.KindSession, Time: at.UTC(), Source: Component, Client: e.Client, SessionID: e.ID,
		Project: e.Project, V: event.SchemaVersion,
		Session: &event.Session{State: state, Epoch: e.Epoch, Cwd: e.Cwd, TranscriptPath: e.Transcript},
	}
}

// Hook takes a hook event. It publishes nothing (`observerctl hook` published the hook's session
// event) but keeps the tracker in step: SessionStart starts the session, Stop and SessionEnd
// finalize it, each as of the hook's time; the cwd and transcript path are kept.
func (t *Tracker) Hook(ev event.Event) {
	if ev.Hook == nil || ev.SessionID == "" || ev.Time.IsZero() {
		return
	}
	k := key{ev.Client, ev.SessionID}
	e := t.sessions[k]
	if e == nil {
		e = &entry{Client: k.client, ID: k.id}
		t.sessions[k] = e
	}
	t.dirty = true
	e.Project = cmp.Or(e.Project, ev.Project)
	e.Cwd = cmp.Or(ev.Hook.Cwd, e.Cwd)
	e.Transcript = cmp.Or(ev.Hook.TranscriptPath, e.Transcript)
	at := ev.Time.UnixNano()
	switch HookState(ev.Hook) {
	case event.SessionStarted:
		if at > e.StartAt {
			e.StartAt = at
			if at >= e.Last && at >= e.StopAt {
				e.State = event.SessionStarted
			}
		}
	case event.SessionFinalized:
		if at > e.StopAt {
			e.StopAt = at
			if at >= e.Last && at >= e.StartAt {
				e.State = event.SessionFinalized
			}
		}
	}
}

// HookState returns the session state a hook call sets: started for SessionStart (except after a
// compaction, source "compact", when the session goes on), finalized for Stop and SessionEnd, ""
// for the others. `observerctl hook` publishes it; the tracker mirrors it.
func HookState(h *event.Hook) string {
	switch h.Event {
	case "SessionStart":
		if h.Matcher == "compact" {
			return ""
		}
		return event.SessionStarted
	case "Stop", "SessionEnd":
		return event.SessionFinalized
	}
	return ""
}

// desired returns the state a session is in at now and the time its events carry.
func (t *Tracker) desired(e *entry, now time.Time) (string, time.Time) {
	activity := max(e.Last, e.StartAt)
	at := time.Unix(0, activity)
	if e.StopAt > 0 && e.StopAt >= activity {
		return event.SessionFinalized, time.Unix(0, e.StopAt)
	}
	if activity == 0 {
		return e.State, at
	}
	switch age := now.Sub(at); {
	case age >= t.cfg.FinalizeAfter:
		return event.SessionFinalized, at
	case age >= t.cfg.IdleAfter:
		return event.SessionIdle, at
	case e.StartAt > e.Last:
		return event.SessionStarted, at
	default:
		return event.SessionActive, at
	}
}

// NextDue returns the earliest time after now at which a session's state changes with the
// passing of time alone (it goes idle, or is finalized), or the zero time when none will: a
// watcher that waits for changes need not tick before it.
func (t *Tracker) NextDue() time.Time {
	now := t.cfg.Now()
	var next time.Time
	for _, e := range t.sessions {
		activity := max(e.Last, e.StartAt)
		if activity == 0 || e.StopAt > 0 && e.StopAt >= activity {
			continue
		}
		at := time.Unix(0, activity)
		for _, d := range []time.Duration{t.cfg.IdleAfter, t.cfg.FinalizeAfter} {
			if due := at.Add(d); due.After(now) && (next.IsZero() || due.Before(next)) {
				next = due
			}
		}
	}
	return next
}

// Tick returns the transitions due at the clock's time, one event per session whose state changed
// since it was last reported, with a commit function: call it once the events are published. The
// events are ordered by session.
func (t *Tracker) Tick() ([]event.Event, func()) { return t.tick(nil) }

// tick is Tick over the tracker's sessions with pending (observe's entries, not yet kept) in
// place of theirs; its commit, after apply(pending), records the states reported.
func (t *Tracker) tick(pending map[key]*entry) ([]event.Event, func()) {
	now := t.cfg.Now()
	type change struct {
		k     key
		state string
		drop  bool
	}
	var changes []change
	var out []event.Event
	sessions := t.sessions
	if len(pending) > 0 {
		sessions = maps.Clone(t.sessions)
		maps.Copy(sessions, pending)
	}
	for k, e := range sessions {
		state, at := t.desired(e, now)
		drop := state == event.SessionFinalized && now.Sub(time.Unix(0, max(e.Last, e.StartAt, e.StopAt))) > PruneAfter
		if state == e.State || state == event.SessionStarted {
			// Started is reported by the SessionStart hook, never by the tracker.
			if drop {
				changes = append(changes, change{k: k, state: state, drop: true})
			}
			continue
		}
		id := event.ID(Component, string(event.KindSession), e.Client, e.ID, state, strconv.Itoa(e.Epoch), e.LastKey,
			strconv.FormatInt(at.UnixNano(), 10))
		out = append(out, e.event(state, at, id))
		changes = append(changes, change{k: k, state: state, drop: drop})
	}
	slices.SortFunc(out, func(a, b event.Event) int {
		return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(a.SessionID, b.SessionID))
	})
	return out, func() {
		for _, c := range changes {
			if c.drop {
				delete(t.sessions, c.k)
			} else if e := t.sessions[c.k]; e != nil {
				e.State = c.state
			}
			t.dirty = true
		}
	}
}

// Dirty reports whether the state changed since the last Save or Load.
func (t *Tracker) Dirty() bool { return t.dirty }

// stateFile is the saved state.
type stateFile struct {
	V        int      `json:"v"`
	Sessions []*entry `json:"sessions"`
}

// Save writes the state to path atomically (0600).
func (t *Tracker) Save(path string) error {
	sf := stateFile{V: 1, Sessions: make([]*entry, 0, len(t.sessions))}
	for _, e := range t.sessions {
		sf.Sessions = append(sf.Sessions, e)
	}
	slices.SortFunc(sf.Sessions, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(a.ID, b.ID))
	})
	data, err := json.Marshal(sf)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("save session states: %w", err)
	}
	t.dirty = false
	return nil
}

// Load reads the state Save wrote. A missing file is an empty state; a damaged one is reported and
// leaves the tracker empty (the sessions it held are then seen as new: their next transitions are
// published again, with the same ids where nothing else changed).
func (t *Tracker) Load(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load session states: %w", err)
	}
	var sf stateFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return fmt.Errorf("load session states %s: %w", path, err)
	}
	t.sessions = make(map[key]*entry, len(sf.Sessions))
	for _, e := range sf.Sessions {
		if e != nil && e.ID != "" {
			t.sessions[key{e.Client, e.ID}] = e
		}
	}
	t.dirty = false
	return nil
}
