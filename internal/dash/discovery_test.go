package dash

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// craftedActions writes actions given as (client, session, agent, type, target, freshness), one
// second apart in that order, and returns the store's path.
func craftedActions(t *testing.T, acts [][6]string) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	var evs []event.Event
	for i, a := range acts {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = fmt.Sprintf("a%03d", i), a[0], a[1], "/p", start.Add(time.Duration(i)*time.Second)
		ok := true
		ev.Action = &event.Action{Type: event.ActionType(a[3]), Target: a[4], AgentID: a[2], Sidechain: a[2] != "", Freshness: a[5],
			Tool: "T", ToolUseID: fmt.Sprintf("tu%03d", i), Success: &ok}
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := (&analysis.Analyzer{DB: st.DB}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return path
}

type discoveryJSON struct {
	Store   bool                `json:"store"`
	Rereads []query.Reread      `json:"rereads"`
	Repeats []query.Repeat      `json:"repeats"`
	Shared  []query.SharedFile  `json:"shared_files"`
	Totals  query.DiscoveryTots `json:"totals"`
}

// TestAPI_Discovery: exact counts of stale re-reads, unclassified re-reads (across a parent and
// its subagent), repeated commands and shared files on a crafted store.
func TestAPI_Discovery(t *testing.T) {
	const cc, cx = "claude-code", "codex"
	path := craftedActions(t, [][6]string{
		{cc, "s1", "", "read_file", "a.go", ""},
		{cc, "s1", "", "read_file", "a.go", ""},      // history re-read
		{cc, "s1", "sub1", "read_file", "a.go", ""},  // re-read by the subagent
		{cc, "s1", "", "read_file", "b.go", "fresh"}, // first read
		{cc, "s1", "", "read_file", "b.go", "stale"}, // changed since: stale
		{cc, "s1", "", "read_file", "c.go", "fresh"}, // read twice, unchanged: not listed
		{cc, "s1", "", "read_file", "c.go", "fresh"},
		{cc, "s1", "", "run_command", "go test ./...", ""},
		{cc, "s1", "", "run_command", "go test ./...", ""}, // repeat 1
		{cc, "s1", "", "edit_file", "a.go", ""},
		{cc, "s1", "", "run_command", "go test ./...", ""}, // after an edit: not a repeat
		{cc, "s1", "", "run_command", "ls", ""},
		{cc, "s1", "", "run_command", "go test ./...", ""}, // repeat 2: ls changed nothing
		{cc, "s1", "", "run_command", "ls", ""},            // repeat 1
		{cc, "s1", "sub1", "write_file", "d.go", ""},       // a subagent's write counts as a change
		{cc, "s1", "", "run_command", "ls", ""},            // not a repeat
		{cx, "s2", "", "run_command", "go test ./...", ""}, // another session: its first run
		{cx, "s2", "", "read_file", "a.go", ""},
		{cx, "s2", "", "write_file", "b.go", ""},
	})
	srv := startServer(t, Options{StorePath: path})
	var d discoveryJSON
	mustGet(t, srv.URL, "/api/discovery?window=all", &d)
	want := query.DiscoveryTots{Sessions: 2, StaleRereads: 1, UnclassifiedRereads: 2, CrossAgentFiles: 1, RepeatedCommands: 3, SharedFiles: 2}
	if d.Totals != want {
		t.Errorf("totals %+v, want %+v", d.Totals, want)
	}
	got := map[string]query.Reread{}
	for _, r := range d.Rereads {
		got[r.Target] = r
	}
	if r := got["a.go"]; r.Reads != 3 || r.Unclassified != 2 || r.Agents != 2 || r.Label != "re-read (unclassified), across agents" {
		t.Errorf("a.go: %+v", r)
	}
	if r := got["b.go"]; r.Stale != 1 || r.Label != "stale" {
		t.Errorf("b.go: %+v", r)
	}
	if _, ok := got["c.go"]; ok || len(d.Rereads) != 2 {
		t.Errorf("re-reads %+v: c.go was re-read unchanged and is no finding", d.Rereads)
	}
	reps := map[string]query.Repeat{}
	for _, r := range d.Repeats {
		reps[r.Client+" "+r.Command] = r
	}
	if r := reps[cc+" go test ./..."]; r.Runs != 4 || r.Repeats != 2 {
		t.Errorf("go test: %+v", r)
	}
	if r := reps[cc+" ls"]; r.Runs != 3 || r.Repeats != 1 {
		t.Errorf("ls: %+v", r)
	}
	if len(d.Repeats) != 2 {
		t.Errorf("repeats %+v", d.Repeats)
	}
	for _, sf := range d.Shared {
		if fmt.Sprint(sf.Clients) != "[claude-code codex]" {
			t.Errorf("shared %+v", sf)
		}
	}

	// The client filter: codex alone repeats nothing, and shares the two files claude-code touched.
	var cxOnly discoveryJSON
	mustGet(t, srv.URL, "/api/discovery?window=all&client=codex", &cxOnly)
	if cxOnly.Totals != (query.DiscoveryTots{Sessions: 1, SharedFiles: 2}) {
		t.Errorf("codex alone: %+v", cxOnly.Totals)
	}
	for _, bad := range []string{"?window=0d", "?sort=x", "?project=" + strings.Repeat("x", 2000)} {
		if code := get(t, srv.URL, "/api/discovery"+bad, nil); code != 400 {
			t.Errorf("GET /api/discovery%q: %d, want 400", bad[:min(len(bad), 20)], code)
		}
	}
}

// TestAPI_DiscoveryCorpus: on the corpus store the totals agree with SQL over the actions table.
func TestAPI_DiscoveryCorpus(t *testing.T) {
	path := corpusStore(t)
	st := openReader(t, path)
	srv := startServer(t, Options{StorePath: path})
	var d discoveryJSON
	mustGet(t, srv.URL, "/api/discovery?window=all", &d)
	// Unclassified re-reads: reads of a (client, session, target) beyond the first, none classified in history.
	want := count(t, st, `SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM actions WHERE type = 'read_file' AND target != '' AND freshness = ''
		GROUP BY client, session_id, target)`)
	if d.Totals.UnclassifiedRereads != want {
		t.Errorf("unclassified re-reads %d, SQL says %d", d.Totals.UnclassifiedRereads, want)
	}
	shared := count(t, st, `SELECT count(*) FROM (SELECT 1 FROM actions WHERE type IN ('read_file', 'edit_file', 'write_file') AND target != ''
		GROUP BY project, target HAVING count(DISTINCT client) > 1)`)
	if d.Totals.SharedFiles != shared {
		t.Errorf("shared files %d, SQL says %d", d.Totals.SharedFiles, shared)
	}
	t.Logf("corpus: %+v", d.Totals)
}
