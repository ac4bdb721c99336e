package dash

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// The projects of memoryStore.
const (
	memShop = "/home/u/shop"
	memBlog = "/home/u/blog"
)

// memActiveMarker is the prompt of m-active's current epoch, still going: no summary may hold it.
const memActiveMarker = "still working on the cart refactor"

// memoryStore holds four sessions, written as the watcher and the hooks publish them, then
// summarized and learned from by internal/memory exactly as the writer does (Memory.Step):
//   - m-done (claude-code, shop): epoch 0 adds the cart endpoint (a failing then passing go test,
//     a failing lint), compacts; epoch 1 adds the checkout, then the session ends (finalized).
//   - m-idle (codex, shop): one epoch fixing the cart, lint failing again; the session goes idle.
//   - m-active (claude-code, shop): epoch 0 refactors the cart and compacts; epoch 1 is still
//     active (memActiveMarker).
//   - m-blog (claude-code, blog): one epoch, pytest passing, finalized.
func memoryStore(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	at := time.Now().Add(-3 * time.Hour).Truncate(time.Millisecond)
	var evs []event.Event
	n := 0
	mk := func(kind event.Kind, source, client, session, project string) *event.Event {
		n++
		at = at.Add(time.Minute)
		e := event.New(kind, source)
		e.ID = event.ID("dash-memory-test", session, fmt.Sprint(n))
		e.Time, e.Client, e.SessionID, e.Project = at, client, session, project
		evs = append(evs, e)
		return &evs[len(evs)-1]
	}
	state := func(client, session, project, st string, epoch int) {
		mk(event.KindSession, "observerctl", client, session, project).Session = &event.Session{State: st, Epoch: epoch, Cwd: project}
	}
	act := func(client, session, project string, typ event.ActionType, tool, target string, ok *bool, errText string) {
		mk(event.KindAction, "observer-watch", client, session, project).Action = &event.Action{Type: typ, Tool: tool, Target: target, Success: ok, Error: errText}
	}
	prompt := func(client, session, project, text string) {
		act(client, session, project, event.ActionUserPrompt, "", text, nil, "")
	}
	edit := func(client, session, project, file string) {
		act(client, session, project, event.ActionEditFile, "Edit", file, new(true), "")
	}
	run := func(client, session, project, cmd string, ok bool) {
		errText := ""
		if !ok {
			errText = "exit status 1"
		}
		act(client, session, project, event.ActionRunCommand, "Bash", cmd, &ok, errText)
	}
	usage := func(client, session, project string, cost float64) {
		e := mk(event.KindTokenUsage, "observer-watch", client, session, project)
		e.TokenUsage = &event.TokenUsage{MessageID: "msg_" + e.ID[:12], Model: "claude-sonnet-4-5", Tokens: event.Tokens{Input: 1000, Output: 200},
			CostUSD: cost, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	}

	const cc, cx = "claude-code", "codex"
	state(cc, "m-done", memShop, event.SessionStarted, 0)
	prompt(cc, "m-done", memShop, "add the cart endpoint")
	act(cc, "m-done", memShop, event.ActionReadFile, "Read", "services/api/cart.go", new(true), "")
	edit(cc, "m-done", memShop, "services/api/cart.go")
	edit(cc, "m-done", memShop, "services/api/cart_test.go")
	run(cc, "m-done", memShop, "go test ./...", false)
	run(cc, "m-done", memShop, "go test ./...", true)
	run(cc, "m-done", memShop, "npm run lint", false)
	usage(cc, "m-done", memShop, 0.25)
	state(cc, "m-done", memShop, event.SessionActive, 1) // compacted
	prompt(cc, "m-done", memShop, "now the checkout")
	edit(cc, "m-done", memShop, "services/api/checkout.go")
	run(cc, "m-done", memShop, "go build ./...", true)
	run(cc, "m-done", memShop, "go test ./...", true)
	usage(cc, "m-done", memShop, 0.5)
	state(cc, "m-done", memShop, event.SessionFinalized, 1)

	state(cx, "m-idle", memShop, event.SessionStarted, 0)
	prompt(cx, "m-idle", memShop, "fix the cart total")
	edit(cx, "m-idle", memShop, "services/api/cart.go")
	edit(cx, "m-idle", memShop, "services/api/cart_test.go")
	run(cx, "m-idle", memShop, "go test ./...", true)
	run(cx, "m-idle", memShop, "npm run lint", false)
	usage(cx, "m-idle", memShop, 0.125)
	state(cx, "m-idle", memShop, event.SessionIdle, 0)

	state(cc, "m-active", memShop, event.SessionStarted, 0)
	prompt(cc, "m-active", memShop, "refactor the cart")
	edit(cc, "m-active", memShop, "services/api/cart.go")
	edit(cc, "m-active", memShop, "services/api/cart_test.go")
	run(cc, "m-active", memShop, "go test ./...", true)
	state(cc, "m-active", memShop, event.SessionActive, 1) // compacted
	prompt(cc, "m-active", memShop, memActiveMarker)
	edit(cc, "m-active", memShop, "services/api/cart.go")

	state(cc, "m-blog", memBlog, event.SessionStarted, 0)
	prompt(cc, "m-blog", memBlog, "write a post about caching")
	edit(cc, "m-blog", memBlog, "posts/caching.md")
	run(cc, "m-blog", memBlog, "pytest -x", true)
	state(cc, "m-blog", memBlog, event.SessionFinalized, 0)

	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			tb.Fatalf("event %d: %v", i, err)
		}
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		tb.Fatal(err)
	}
	p, err := (&memory.Memory{DB: st.DB}).Step(ctx, 100)
	if err != nil {
		tb.Fatal(err)
	}
	// m-done's two epochs, m-idle's, m-active's first, m-blog's.
	if p.Summaries != 5 || p.Projects != 2 {
		tb.Fatalf("memory step: %+v, want 5 summaries of 2 projects", p)
	}
	return path
}

type summariesJSON struct {
	Session   Session          `json:"session"`
	Total     Totals           `json:"total"`
	Summaries []SessionSummary `json:"summaries"`
}

// TestAPI_SessionSummaries: a session's detail lists the summary of each ended epoch, newest epoch
// first, with what ended it, its time range and its cost; an active session's current epoch has
// none, and nothing of it shows in the summary of the epoch before.
func TestAPI_SessionSummaries(t *testing.T) {
	path := memoryStore(t)
	srv := startServer(t, Options{StorePath: path})
	st := openReader(t, path)

	var done summariesJSON
	mustGet(t, srv.URL, "/api/sessions/m-done?client=claude-code", &done)
	if got := epochsOf(done.Summaries); !slices.Equal(got, []string{"1 extractive finalized", "0 extractive compaction"}) {
		t.Fatalf("m-done summaries %q, want epoch 1 (finalized) then epoch 0 (compaction)", got)
	}
	e1, e0 := done.Summaries[0], done.Summaries[1]
	for _, want := range []string{"Goal: now the checkout", "services/api/checkout.go", "`go build ./...`", "Outcome: ended after `go test ./...` succeeded"} {
		if !strings.Contains(e1.Text, want) {
			t.Errorf("epoch 1 summary lacks %q:\n%s", want, e1.Text)
		}
	}
	for _, want := range []string{"Goal: add the cart endpoint", "services/api/cart.go", "`go test ./...` 2× (1 failed, last passed)", "`npm run lint` failed, not resolved by the end"} {
		if !strings.Contains(e0.Text, want) {
			t.Errorf("epoch 0 summary lacks %q:\n%s", want, e0.Text)
		}
	}
	if strings.Contains(e0.Text, "checkout") {
		t.Errorf("epoch 0 summary tells of epoch 1's work:\n%s", e0.Text)
	}
	// The time ranges: epoch 0 from its first action, epoch 1 from its first action after the
	// compaction; the session's first and last actions bound them.
	first := count(t, st, `SELECT min(ts) FROM actions WHERE session_id = 'm-done'`)
	compacted := count(t, st, `SELECT min(ts) FROM session_events WHERE session_id = 'm-done' AND epoch = 1`)
	if e0.FirstTS != first || e0.LastTS > compacted || e1.FirstTS <= compacted || e1.LastTS < e1.FirstTS {
		t.Errorf("time ranges: epoch 0 %d..%d, epoch 1 %d..%d; first action %d, compaction %d", e0.FirstTS, e0.LastTS, e1.FirstTS, e1.LastTS, first, compacted)
	}
	// Each epoch's dollars are its turns': together, the session's.
	if e0.EpochCostUSD != 0.25 || e1.EpochCostUSD != 0.5 || e0.EpochTurns != 1 || e1.EpochTurns != 1 {
		t.Errorf("epoch costs %v (%d turns) and %v (%d turns), want 0.25 and 0.5, one turn each", e0.EpochCostUSD, e0.EpochTurns, e1.EpochCostUSD, e1.EpochTurns)
	}
	if math.Abs(e0.EpochCostUSD+e1.EpochCostUSD-done.Total.CostUSD) > 1e-9 {
		t.Errorf("epochs cost %v in all, the session %v", e0.EpochCostUSD+e1.EpochCostUSD, done.Total.CostUSD)
	}
	if e0.CostUSD != 0 || e0.Model != "" || e0.Actions != 7 || e1.Actions != 4 {
		t.Errorf("epoch 0: summary cost %v, model %q, %d actions; epoch 1: %d actions", e0.CostUSD, e0.Model, e0.Actions, e1.Actions)
	}

	t.Run("ActiveEpochHasNone", func(t *testing.T) {
		var d summariesJSON
		mustGet(t, srv.URL, "/api/sessions/m-active?client=claude-code", &d)
		if d.Session.State != event.SessionActive || d.Session.Epoch != 1 {
			t.Fatalf("m-active is %s at epoch %d", d.Session.State, d.Session.Epoch)
		}
		if got := epochsOf(d.Summaries); !slices.Equal(got, []string{"0 extractive compaction"}) {
			t.Fatalf("m-active summaries %q, want only the compacted epoch 0", got)
		}
		if s := d.Summaries[0]; !strings.Contains(s.Text, "Goal: refactor the cart") || strings.Contains(s.Text, memActiveMarker) {
			t.Errorf("m-active epoch 0:\n%s", s.Text)
		}
	})

	t.Run("Idle", func(t *testing.T) {
		var d summariesJSON
		mustGet(t, srv.URL, "/api/sessions/m-idle", &d) // no client: the only session of that id
		if got := epochsOf(d.Summaries); !slices.Equal(got, []string{"0 extractive idle"}) {
			t.Fatalf("m-idle summaries %q", got)
		}
		if s := d.Summaries[0]; s.Client != "codex" || !strings.Contains(s.Text, "Outcome: went idle after `npm run lint` failed") {
			t.Errorf("m-idle summary of %s:\n%s", s.Client, s.Text)
		}
	})

	t.Run("NoneYet", func(t *testing.T) {
		// A session never summarized, and one on a store from before session memory: none.
		for _, path := range []string{pathsStore(t), preMemoryStore(t)} {
			srv := startServer(t, Options{StorePath: path})
			var d summariesJSON
			mustGet(t, srv.URL, "/api/sessions/s-all?client=claude-code", &d)
			if d.Summaries == nil || len(d.Summaries) != 0 {
				t.Errorf("summaries %v, want []", d.Summaries)
			}
		}
	})
}

// preMemoryStore is pathsStore as a writer from before session memory left it: without the
// tables of migration 0016.
func preMemoryStore(tb testing.TB) string {
	tb.Helper()
	path := pathsStore(tb)
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	if _, err := st.DB.Exec(`DROP TABLE session_summaries; DROP TABLE observations`); err != nil {
		tb.Fatal(err)
	}
	return path
}

func epochsOf(list []SessionSummary) []string {
	out := []string{}
	for _, s := range list {
		out = append(out, fmt.Sprintf("%d %s %s", s.Epoch, s.Source, s.EndedBy))
	}
	return out
}

// TestAPI_MemoryObservations: /api/memory lists a project's observations, strongest first, each
// with evidence that resolves to the actions of the store it names, and its last sessions'
// summaries; without a project, every project's.
func TestAPI_MemoryObservations(t *testing.T) {
	path := memoryStore(t)
	srv := startServer(t, Options{StorePath: path})
	st := openReader(t, path)

	var m Memory
	mustGet(t, srv.URL, "/api/memory?project="+url.QueryEscape(memShop), &m)
	if !m.Store || !m.Memory {
		t.Fatalf("store %v, memory %v", m.Store, m.Memory)
	}
	if len(m.Projects) != 2 || m.Projects[0].Project != memBlog || m.Projects[1].Project != memShop || m.Projects[1].Observations != int64(m.Total) {
		t.Errorf("projects %+v (shop total %d)", m.Projects, m.Total)
	}
	byText := map[string]MemoryObservation{}
	for i, o := range m.Observations {
		byText[o.Text] = o
		if o.Project != memShop {
			t.Errorf("observation %q of %s", o.Text, o.Project)
		}
		if i > 0 && o.Confidence > m.Observations[i-1].Confidence {
			t.Errorf("observation %d (%v) is stronger than the one before (%v)", i, o.Confidence, m.Observations[i-1].Confidence)
		}
		if want := query.Confidence(o.Support, o.Contradictions, o.LastSeen, time.Now()); math.Abs(o.Confidence-want) > 1e-6 {
			t.Errorf("%q: confidence %v, want %v", o.Text, o.Confidence, want)
		}
		if len(o.Evidence) == 0 {
			t.Errorf("%q has no evidence", o.Text)
		}
		// Every piece of evidence is an action of the store, as the store has it.
		for _, e := range o.Evidence {
			var typ, target, client, session string
			var ts int64
			var success sql.NullBool
			err := st.DB.QueryRow(`SELECT type, target, ts, success, client, session_id FROM actions WHERE event_id = ?`, e.EventID).Scan(&typ, &target, &ts, &success, &client, &session)
			if err != nil {
				t.Errorf("%q: evidence %s: %v", o.Text, e.EventID, err)
				continue
			}
			if !e.Found || e.Type != typ || e.Target != target || e.TS != ts || e.Client != client || e.SessionID != session ||
				e.Success == nil || !success.Valid || *e.Success != success.Bool {
				t.Errorf("%q: evidence %+v, the store has %s %q at %d (success %v) of %s %s", o.Text, e, typ, target, ts, success, client, session)
			}
		}
	}
	for text, want := range map[string]struct {
		support, contradictions int
		typ                     string
		success                 bool
		sessions                []string
	}{
		"tests run with `go test ./...`":                                     {3, 0, "run_command", true, []string{"m-active", "m-idle", "m-done"}},
		"`npm run lint` fails (in 2 sessions)":                               {2, 0, "run_command", false, []string{"m-idle", "m-done"}},
		"builds with `go build ./...`":                                       {1, 0, "run_command", true, []string{"m-done"}},
		"services/api/cart.go and services/api/cart_test.go change together": {3, 0, "edit_file", true, []string{"m-active", "m-idle", "m-done"}},
	} {
		o, ok := byText[text]
		if !ok {
			t.Errorf("no observation %q among %d", text, len(m.Observations))
			continue
		}
		var sessions []string
		for _, e := range o.Evidence {
			sessions = append(sessions, e.SessionID)
			if e.Type != want.typ || *e.Success != want.success {
				t.Errorf("%q: evidence %s %v, want %s %v", text, e.Type, *e.Success, want.typ, want.success)
			}
		}
		if o.Support != want.support || o.Contradictions != want.contradictions || !slices.Equal(sessions, want.sessions) {
			t.Errorf("%q: support %d, contradictions %d, evidence of %q (newest first); want %d, %d, %q", text, o.Support, o.Contradictions, sessions, want.support, want.contradictions, want.sessions)
		}
	}
	// The last sessions: each one's newest summarized epoch, newest first; the active epoch is not
	// among them.
	if got := recentOf(m.Summaries); !slices.Equal(got, []string{"m-active 0", "m-idle 0", "m-done 1"}) {
		t.Errorf("last sessions' summaries %q", got)
	}
	for _, s := range m.Summaries {
		if s.Text == "" || s.Title == "" || strings.Contains(s.Text, memActiveMarker) {
			t.Errorf("summary of %s %d: title %q:\n%s", s.SessionID, s.Epoch, s.Title, s.Text)
		}
	}

	t.Run("AllProjects", func(t *testing.T) {
		var all Memory
		mustGet(t, srv.URL, "/api/memory", &all)
		projects := map[string]int{}
		for i, o := range all.Observations {
			projects[o.Project]++
			if i > 0 && o.Confidence > all.Observations[i-1].Confidence {
				t.Errorf("observation %d is stronger than the one before", i)
			}
		}
		if projects[memBlog] == 0 || projects[memShop] != len(m.Observations) || all.Total != len(all.Observations) {
			t.Errorf("observations per project %v (total %d)", projects, all.Total)
		}
		if got := recentOf(all.Summaries); !slices.Equal(got, []string{"m-blog 0", "m-active 0", "m-idle 0", "m-done 1"}) {
			t.Errorf("last sessions' summaries %q", got)
		}
		var top Memory
		mustGet(t, srv.URL, "/api/memory?limit=2", &top)
		if len(top.Observations) != 2 || top.Total != all.Total || top.Observations[1].ID != all.Observations[1].ID {
			t.Errorf("limit=2: %d observations of %d", len(top.Observations), top.Total)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		var k Memory
		mustGet(t, srv.URL, "/api/memory?kind=test_command", &k)
		if len(k.Observations) != 2 {
			t.Errorf("kind=test_command: %d observations, want go test and pytest", len(k.Observations))
		}
		var c Memory
		mustGet(t, srv.URL, "/api/memory?client=codex&project="+url.QueryEscape(memShop), &c)
		if got := recentOf(c.Summaries); !slices.Equal(got, []string{"m-idle 0"}) || len(c.Observations) != len(m.Observations) {
			t.Errorf("client=codex: summaries %q, %d observations (the client filter is not an observation's)", got, len(c.Observations))
		}
		for _, bad := range []string{"kind=nope", "limit=0", "window=3x", "member=alice"} {
			if code := get(t, srv.URL, "/api/memory?"+bad, nil); code != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", bad, code)
			}
		}
	})

	t.Run("NoMemoryYet", func(t *testing.T) {
		var none Memory
		srv := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "absent.db")})
		mustGet(t, srv.URL, "/api/memory", &none)
		if none.Store || none.Observations == nil || none.Summaries == nil || none.Projects == nil {
			t.Errorf("no store: %+v", none)
		}
		for _, c := range []struct {
			path   string
			memory bool
		}{{pathsStore(t), true}, {preMemoryStore(t), false}} {
			none = Memory{}
			srv = startServer(t, Options{StorePath: c.path})
			mustGet(t, srv.URL, "/api/memory", &none)
			if !none.Store || none.Memory != c.memory || len(none.Observations) != 0 || len(none.Summaries) != 0 || len(none.Projects) != 0 {
				t.Errorf("a store nothing was learned from (memory tables: %v): %+v", c.memory, none)
			}
		}
	})
}

func recentOf(list []SessionSummary) []string {
	out := []string{}
	for _, s := range list {
		out = append(out, fmt.Sprintf("%s %d", s.SessionID, s.Epoch))
	}
	return out
}
