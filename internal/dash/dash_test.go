package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/observerhq/observer/internal/analysis"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/corpusstore"
	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

// The corpus store is built once per test binary: the shared corpus laid out as the clients keep
// it (gen_history.py small), read by the real adapters and written by the real store.
var (
	corpusOnce sync.Once
	corpusPath string
	corpusErr  error
	corpusSkip string
	corpusDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if corpusDir != "" {
		os.RemoveAll(corpusDir)
	}
	os.Exit(code)
}

type storePublisher struct{ st *store.Store }

func (p storePublisher) PublishBatch(ctx context.Context, evs []event.Event) (int, error) {
	_, err := p.st.WriteBatch(ctx, evs, nil)
	return 0, err
}

// corpusStore returns the path of a store filled from the corpus (corpusstore.Dir), or skips.
func corpusStore(tb testing.TB) string {
	tb.Helper()
	corpusOnce.Do(func() {
		if why := corpusstore.Available(); why != "" {
			corpusSkip = why
			return
		}
		shared := filepath.Dir(corpusstore.Dir())
		corpusDir, corpusErr = os.MkdirTemp("", "observer-dash-corpus-")
		if corpusErr != nil {
			return
		}
		home := filepath.Join(corpusDir, "clienthome")
		if out, err := exec.Command("python3", filepath.Join(shared, "scripts", "gen_history.py"), "small", home).CombinedOutput(); err != nil {
			corpusErr = fmt.Errorf("gen_history.py small: %v\n%s", err, out)
			return
		}
		ctx := context.Background()
		path := filepath.Join(corpusDir, "observer.db")
		st, err := store.OpenWriter(ctx, path)
		if err != nil {
			corpusErr = err
			return
		}
		defer st.Close()
		cur, err := ingest.OpenCursors(filepath.Join(corpusDir, "cursors.json"))
		if err != nil {
			corpusErr = err
			return
		}
		defer cur.Close()
		sc := &ingest.Scanner{
			Adapters: []transcript.Adapter{
				claudecode.New([]string{filepath.Join(home, ".claude", "projects")}),
				codex.New(filepath.Join(home, ".codex")),
			},
			Cursors: cur, Publisher: storePublisher{st},
		}
		sum, err := sc.Scan(ctx)
		if err != nil {
			corpusErr = err
			return
		}
		if sum.Events == 0 {
			corpusErr = fmt.Errorf("the corpus gave no events: %+v", sum)
			return
		}
		if _, corpusErr = (&analysis.Analyzer{DB: st.DB}).Run(ctx); corpusErr != nil {
			return
		}
		corpusPath = path
	})
	if corpusSkip != "" {
		tb.Skip(corpusSkip)
	}
	if corpusErr != nil {
		tb.Fatal(corpusErr)
	}
	return corpusPath
}

// testServer is a dashboard serving on a loopback port.
type testServer struct {
	*Server
	URL string
}

func startServer(tb testing.TB, opts Options) *testServer {
	tb.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	tb.Cleanup(func() { cancel(); <-done; s.Close() })
	return &testServer{Server: s, URL: "http://" + ln.Addr().String()}
}

// get fetches path and decodes the JSON answer into v (when not nil); it returns the status.
func get(tb testing.TB, base, path string, v any) int {
	tb.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, v); err != nil {
			tb.Fatalf("GET %s: %v\n%s", path, err, body)
		}
	}
	return resp.StatusCode
}

func mustGet(tb testing.TB, base, path string, v any) {
	tb.Helper()
	if code := get(tb, base, path, v); code != http.StatusOK {
		tb.Fatalf("GET %s: status %d", path, code)
	}
}

func openReader(tb testing.TB, path string) *store.Store {
	tb.Helper()
	st, err := store.OpenReader(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

func count(tb testing.TB, st *store.Store, q string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := st.DB.QueryRow(q, args...).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// sameTotals compares API totals with a query.Cost row: tokens exactly, dollars to the micro-dollar
// (the sums run in another order).
func sameTotals(tb testing.TB, what string, got Totals, want query.CostRow) {
	tb.Helper()
	w := totalsOf(want)
	if math.Abs(got.CostUSD-w.CostUSD) > 1e-6 {
		tb.Errorf("%s: cost %.9f, query.Cost says %.9f", what, got.CostUSD, w.CostUSD)
	}
	got.CostUSD, w.CostUSD = 0, 0
	if got != w {
		tb.Errorf("%s: totals %+v, query.Cost says %+v", what, got, w)
	}
}

type overviewJSON struct {
	Store        bool    `json:"store"`
	Counts       Counts  `json:"counts"`
	Total        Totals  `json:"total"`
	Buckets      Buckets `json:"buckets"`
	CostOverTime []struct {
		Day     string  `json:"day"`
		CostUSD float64 `json:"cost_usd"`
		Buckets
	} `json:"cost_over_time"`
	Activity []activityPoint `json:"activity"`
	Clients  []struct {
		Client  string  `json:"client"`
		Actions int64   `json:"actions"`
		CostUSD float64 `json:"cost_usd"`
	} `json:"clients"`
}

type costJSON struct {
	Store    bool        `json:"store"`
	Total    Totals      `json:"total"`
	Buckets  Buckets     `json:"buckets"`
	Models   []ModelCost `json:"models"`
	Projects []struct {
		Key string `json:"key"`
		Totals
	} `json:"projects"`
}

func bucketSum(b Buckets) float64 { return b.Input + b.Output + b.CacheRead + b.CacheWrite }

// TestAPI_TotalsEqualCostRun: the Overview and Cost figures for a window are query.Cost's, the
// computation of `observerctl cost --json`, with and without project and client filters; the
// billing-bucket split adds up to the cost; the counts are the store's.
func TestAPI_TotalsEqualCostRun(t *testing.T) {
	path := corpusStore(t)
	srv := startServer(t, Options{StorePath: path})
	st := openReader(t, path)
	ctx := context.Background()

	for _, window := range []string{"all", "3650d", "24h"} {
		since, err := parseWindow(window, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		want, err := query.Cost(ctx, st.DB, query.CostQuery{Filter: query.Filter{Since: since}})
		if err != nil {
			t.Fatal(err)
		}
		var ov overviewJSON
		mustGet(t, srv.URL, "/api/overview?window="+window, &ov)
		var co costJSON
		mustGet(t, srv.URL, "/api/cost?window="+window, &co)
		sameTotals(t, "overview "+window, ov.Total, want.Total)
		sameTotals(t, "cost "+window, co.Total, want.Total)
		if !ov.Store || !co.Store {
			t.Fatalf("%s: store not seen", window)
		}
		for _, b := range []Buckets{ov.Buckets, co.Buckets} {
			if math.Abs(bucketSum(b)-want.Total.CostUSD) > 1e-6 {
				t.Errorf("%s: buckets %+v add up to %.6f, not the cost %.6f", window, b, bucketSum(b), want.Total.CostUSD)
			}
		}
		var perDay float64
		for _, d := range ov.CostOverTime {
			perDay += d.CostUSD
			if math.Abs(bucketSum(d.Buckets)-d.CostUSD) > 1e-6 {
				t.Errorf("%s: day %s buckets %.6f, cost %.6f", window, d.Day, bucketSum(d.Buckets), d.CostUSD)
			}
		}
		if math.Abs(perDay-want.Total.CostUSD) > 1e-6 {
			t.Errorf("%s: cost over time adds up to %.6f, not %.6f", window, perDay, want.Total.CostUSD)
		}
		var perModel float64
		for _, m := range co.Models {
			perModel += m.CostUSD
		}
		if math.Abs(perModel-want.Total.CostUSD) > 1e-6 {
			t.Errorf("%s: models add up to %.6f, not %.6f", window, perModel, want.Total.CostUSD)
		}
		sinceMs := int64(0)
		if !since.IsZero() {
			sinceMs = since.UnixMilli()
		}
		wantCounts := Counts{
			Sessions:  count(t, st, "SELECT count(*) FROM sessions WHERE last_seen >= ?", sinceMs),
			APITurns:  count(t, st, "SELECT count(*) FROM api_turns WHERE ts >= ?", sinceMs),
			TokenRows: count(t, st, "SELECT count(*) FROM token_usage WHERE ts >= ?", sinceMs),
			Actions:   count(t, st, "SELECT count(*) FROM actions WHERE ts >= ?", sinceMs),
			Failures:  count(t, st, "SELECT count(*) FROM actions WHERE success = 0 AND ts >= ?", sinceMs),
		}
		if ov.Counts != wantCounts {
			t.Errorf("%s: counts %+v, the store has %+v", window, ov.Counts, wantCounts)
		}
		var acts int64
		for _, p := range ov.Activity {
			acts += p.Actions
		}
		if acts != wantCounts.Actions {
			t.Errorf("%s: actions over time add up to %d, not %d", window, acts, wantCounts.Actions)
		}
		if window == "all" && (want.Total.Turns == 0 || wantCounts.Actions == 0) {
			t.Fatalf("the corpus store is empty: %+v %+v", want.Total, wantCounts)
		}
	}

	// Filters: a project's and a client's figures are query.Cost's rows for them.
	byProject, err := query.Cost(ctx, st.DB, query.CostQuery{GroupBy: []string{"project"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range byProject.Rows[:min(3, len(byProject.Rows))] {
		var co costJSON
		mustGet(t, srv.URL, "/api/cost?window=all&project="+url.QueryEscape(r.Project), &co)
		sameTotals(t, "project "+r.Project, co.Total, r)
		var ov overviewJSON
		mustGet(t, srv.URL, "/api/overview?window=all&project="+url.QueryEscape(r.Project), &ov)
		sameTotals(t, "overview project "+r.Project, ov.Total, r)
		if want := count(t, st, "SELECT count(*) FROM actions WHERE project = ?", r.Project); ov.Counts.Actions != want {
			t.Errorf("project %s: %d actions, the store has %d", r.Project, ov.Counts.Actions, want)
		}
	}
	byClient, err := query.Cost(ctx, st.DB, query.CostQuery{GroupBy: []string{"client"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(byClient.Rows) < 2 {
		t.Fatalf("the corpus should hold two clients: %+v", byClient.Rows)
	}
	for _, r := range byClient.Rows {
		var co costJSON
		mustGet(t, srv.URL, "/api/cost?window=all&client="+r.Client, &co)
		sameTotals(t, "client "+r.Client, co.Total, r)
	}
}

// TestAPI_Sessions: the sessions table covers every session once across its pages, and its
// costs add up to the window's; a session's detail and its timeline hold every one of its rows.
func TestAPI_Sessions(t *testing.T) {
	path := corpusStore(t)
	srv := startServer(t, Options{StorePath: path})
	st := openReader(t, path)
	total, err := query.Cost(context.Background(), st.DB, query.CostQuery{})
	if err != nil {
		t.Fatal(err)
	}
	type sessionsJSON struct {
		Total    int64     `json:"total"`
		Sessions []Session `json:"sessions"`
	}
	for _, sort := range []string{"last_seen", "cost"} {
		seen := map[string]bool{}
		var sum float64
		var all []Session
		for page := 1; ; page++ {
			var sj sessionsJSON
			mustGet(t, srv.URL, fmt.Sprintf("/api/sessions?window=all&limit=5&sort=%s&page=%d", sort, page), &sj)
			if len(sj.Sessions) == 0 {
				break
			}
			for _, s := range sj.Sessions {
				k := sessionKey(s.Client, s.SessionID)
				if seen[k] {
					t.Fatalf("sort %s: session %s listed twice", sort, k)
				}
				seen[k] = true
				sum += s.CostUSD
				all = append(all, s)
			}
		}
		if n := count(t, st, "SELECT count(*) FROM sessions"); int64(len(seen)) != n {
			t.Errorf("sort %s: %d sessions listed, the store has %d", sort, len(seen), n)
		}
		// Turns without a session row (none in the corpus) would make the sessions' sum smaller.
		if math.Abs(sum-total.Total.CostUSD) > 1e-6 {
			t.Errorf("sort %s: sessions' costs add up to %.6f, not %.6f", sort, sum, total.Total.CostUSD)
		}
		for i := 1; i < len(all); i++ {
			if sort == "cost" && all[i].CostUSD > all[i-1].CostUSD || sort == "last_seen" && all[i].LastSeen > all[i-1].LastSeen {
				t.Fatalf("sort %s: row %d out of order", sort, i)
			}
		}
	}

	var sj sessionsJSON
	mustGet(t, srv.URL, "/api/sessions?window=all&limit=500", &sj)
	for _, s := range sj.Sessions {
		base := "/api/sessions/" + url.PathEscape(s.SessionID)
		var d struct {
			Session  Session           `json:"session"`
			Tools    []countRow        `json:"tools"`
			Types    []countRow        `json:"action_types"`
			Models   []ModelCost       `json:"models"`
			Total    Totals            `json:"total"`
			Analysis *analysis.Session `json:"analysis"`
		}
		mustGet(t, srv.URL, base+"?client="+s.Client, &d)
		// Every corpus session with actions is analysed, with the same action count.
		if acts := count(t, st, "SELECT count(*) FROM actions WHERE session_id = ? AND client = ?", s.SessionID, s.Client); acts > 0 &&
			(d.Analysis == nil || d.Analysis.Actions != acts || d.Analysis.Score < 0 || d.Analysis.Score > 100) {
			t.Errorf("session %s: analysis %+v, %d actions", s.SessionID, d.Analysis, acts)
		}
		// Recognisable: a title wherever the session has a prompt, the same in the list and the
		// detail; a model wherever it has usage; no lifecycle record among its tools.
		prompts := count(t, st, "SELECT count(*) FROM actions WHERE session_id = ? AND client = ? AND type = 'user_prompt' AND target NOT LIKE '/%' AND target != '[image]'", s.SessionID, s.Client)
		if (prompts > 0 && s.Title == "") || d.Session.Title != s.Title {
			t.Errorf("session %s: title %q (detail %q) with %d prompts", s.SessionID, s.Title, d.Session.Title, prompts)
		}
		if u := count(t, st, "SELECT count(*) FROM token_usage WHERE session_id = ? AND client = ? AND model != ''", s.SessionID, s.Client); u > 0 && s.Model == "" {
			t.Errorf("session %s: no model with %d usage rows", s.SessionID, u)
		}
		for _, tr := range d.Tools {
			if tr.Name == "compact_boundary" || tr.Name == "" {
				t.Errorf("session %s: %q listed as a tool", s.SessionID, tr.Name)
			}
		}
		acts := count(t, st, "SELECT count(*) FROM actions WHERE session_id = ? AND client = ?", s.SessionID, s.Client)
		usage := count(t, st, "SELECT count(*) FROM token_usage WHERE session_id = ? AND client = ?", s.SessionID, s.Client)
		if d.Session.Actions != acts || d.Session.Actions != s.Actions {
			t.Errorf("session %s: detail %d actions, table %d, store %d", s.SessionID, d.Session.Actions, s.Actions, acts)
		}
		if math.Abs(d.Total.CostUSD-s.CostUSD) > 1e-9 || d.Total.Turns != s.Turns {
			t.Errorf("session %s: detail %+v, table cost %.6f turns %d", s.SessionID, d.Total, s.CostUSD, s.Turns)
		}
		// The timeline, 7 at a time, holds each action and usage row once, in time order.
		got, pages, cursor, last := 0, 0, "", int64(-1)
		ids := map[string]bool{}
		for {
			var tl struct {
				Items      []TimelineItem `json:"items"`
				NextCursor string         `json:"next_cursor"`
			}
			mustGet(t, srv.URL, base+"/timeline?limit=7&client="+s.Client+"&cursor="+url.QueryEscape(cursor), &tl)
			pages++
			for _, it := range tl.Items {
				if it.T < last {
					t.Fatalf("session %s: timeline goes back in time at %s", s.SessionID, it.Cursor)
				}
				last = it.T
				if ids[it.Cursor] {
					t.Fatalf("session %s: %s twice", s.SessionID, it.Cursor)
				}
				ids[it.Cursor] = true
			}
			got += len(tl.Items)
			if tl.NextCursor == "" {
				break
			}
			if len(tl.Items) != 7 {
				t.Fatalf("session %s: a page of %d items before the end", s.SessionID, len(tl.Items))
			}
			cursor = tl.NextCursor
		}
		if int64(got) != acts+usage {
			t.Errorf("session %s: timeline has %d items over %d pages, the store %d actions + %d usage rows", s.SessionID, got, pages, acts, usage)
		}
	}
}

// TestAPI_Actions: the firehose pages through every action once, newest first, and its filters
// select what the store holds.
func TestAPI_Actions(t *testing.T) {
	path := corpusStore(t)
	srv := startServer(t, Options{StorePath: path})
	st := openReader(t, path)
	type actionsJSON struct {
		Items      []Action `json:"items"`
		NextCursor string   `json:"next_cursor"`
	}
	walk := func(q string) []Action {
		var all []Action
		cursor := ""
		for {
			var a actionsJSON
			mustGet(t, srv.URL, "/api/actions?window=all&limit=100"+q+"&cursor="+url.QueryEscape(cursor), &a)
			all = append(all, a.Items...)
			if a.NextCursor == "" {
				return all
			}
			cursor = a.NextCursor
		}
	}
	all := walk("")
	if n := count(t, st, "SELECT count(*) FROM actions"); int64(len(all)) != n {
		t.Fatalf("%d actions paged, the store has %d", len(all), n)
	}
	seen := map[int64]bool{}
	for i, a := range all {
		if seen[a.ID] {
			t.Fatalf("action %d twice", a.ID)
		}
		seen[a.ID] = true
		if i > 0 && a.T > all[i-1].T {
			t.Fatalf("action %d newer than the one before it", a.ID)
		}
	}
	failed := walk("&failed=1")
	if n := count(t, st, "SELECT count(*) FROM actions WHERE success = 0"); int64(len(failed)) != n || n == 0 {
		t.Errorf("failed=1: %d, the store has %d failures", len(failed), n)
	}
	for _, a := range failed {
		if a.Success == nil || *a.Success {
			t.Fatalf("failed=1 returned action %d that did not fail", a.ID)
		}
	}
	edits := walk("&type=edit_file&client=claude-code")
	if n := count(t, st, "SELECT count(*) FROM actions WHERE type = 'edit_file' AND client = 'claude-code'"); int64(len(edits)) != n || n == 0 {
		t.Errorf("type=edit_file client=claude-code: %d, the store has %d", len(edits), n)
	}
	sid := all[0].SessionID
	if got, n := walk("&session="+url.QueryEscape(sid)), count(t, st, "SELECT count(*) FROM actions WHERE session_id = ?", sid); int64(len(got)) != n {
		t.Errorf("session filter: %d, the store has %d", len(got), n)
	}
}

// TestAPI_BadInput: malformed, unknown or huge parameters and unknown ids are a clear 4xx with a
// JSON error, never a 500.
func TestAPI_BadInput(t *testing.T) {
	srv := startServer(t, Options{StorePath: corpusStore(t)})
	huge := strings.Repeat("x", 5000)
	cases := []struct {
		path  string
		code  int
		param string
	}{
		{"/api/overview?window=abc", 400, "window"},
		{"/api/overview?window=0h", 400, "window"},
		{"/api/overview?window=99999999d", 400, "window"},
		{"/api/overview?window=-7d", 400, "window"},
		{"/api/overview?window=24h&window=7d", 400, "window"},
		{"/api/overview?bogus=1", 400, "bogus"},
		{"/api/overview?client=Claude%20Code", 400, "client"},
		{"/api/overview?project=" + url.QueryEscape(strings.Repeat("p", 2000)), 400, "project"},
		{"/api/overview?project=%00", 400, "project"},
		{"/api/overview?project=%ff%fe", 400, "project"},
		{"/api/overview?%zz", 400, ""},
		{"/api/overview?window=" + huge, 400, ""},
		{"/api/cost?window=1y", 400, "window"},
		{"/api/sessions?page=0", 400, "page"},
		{"/api/sessions?page=abc", 400, "page"},
		{"/api/sessions?limit=100000", 400, "limit"},
		{"/api/sessions?page=999999&limit=500", 400, "page"},
		{"/api/sessions?sort=name", 400, "sort"},
		{"/api/sessions/no-such-session", 404, ""},
		{"/api/sessions/no-such-session/timeline", 404, ""},
		{"/api/sessions/no-such-session?client=BAD", 400, "client"},
		{"/api/sessions/x/timeline?cursor=abc", 400, "cursor"},
		{"/api/sessions/x/timeline?cursor=1.2.3", 400, "cursor"},
		{"/api/sessions/x/timeline?limit=-1", 400, "limit"},
		{"/api/sessions/" + url.PathEscape(strings.Repeat("s", 3000)), 400, "id"},
		{"/api/actions?type=delete_everything", 400, "type"},
		{"/api/actions?failed=maybe", 400, "failed"},
		{"/api/actions?cursor=1.2.3", 400, "cursor"},
		{"/api/actions?cursor=99999999999999999999.1", 400, "cursor"},
		{"/api/tools?window=forever", 400, "window"},
		{"/api/compression?client=A", 400, "client"},
		{"/api/live?kind=nope", 400, "kind"},
		{"/api/live?x=1", 400, "x"},
		{"/api/status?x=1", 400, "x"},
		{"/api/nothing-here", 404, ""},
	}
	for _, c := range cases {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error, Param string }
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		short := c.path[:min(len(c.path), 80)]
		if resp.StatusCode != c.code || err != nil || body.Error == "" || body.Param != c.param {
			t.Errorf("GET %s: %d %+v (decode %v), want %d with a JSON error on %q", short, resp.StatusCode, body, err, c.code, c.param)
		}
	}
}

// TestAPI_NoStore: before the writer has made the store every page answers, empty, and says so.
func TestAPI_NoStore(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, Options{StorePath: filepath.Join(dir, "observer.db")})
	for _, p := range []string{"/api/overview", "/api/cost?window=all", "/api/sessions", "/api/actions", "/api/tools", "/api/compression", "/api/filters", "/api/status"} {
		var v struct {
			Store *bool `json:"store"`
		}
		mustGet(t, srv.URL, p, &v)
		if v.Store == nil || *v.Store {
			t.Errorf("%s: store = %v, want false", p, v.Store)
		}
	}
	if code := get(t, srv.URL, "/api/sessions/abc", nil); code != 404 {
		t.Errorf("session detail without a store: %d, want 404", code)
	}
	if code := get(t, srv.URL, "/", nil); code != 200 {
		t.Errorf("page without a store: %d", code)
	}
	// An empty file (the writer about to migrate) is not a store yet either.
	os.WriteFile(filepath.Join(dir, "observer.db"), nil, 0o600)
	var v struct{ Store bool }
	mustGet(t, srv.URL, "/api/overview", &v)
	if v.Store {
		t.Error("an empty database file counted as a store")
	}
	// Once the writer has made it, the next request sees it.
	st, err := store.OpenWriter(context.Background(), filepath.Join(dir, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	mustGet(t, srv.URL, "/api/overview", &v)
	if !v.Store {
		t.Error("the store made after start was not picked up")
	}
}

func request(tb testing.TB, method, u string, hdr map[string]string) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestSecurity_Host: only a loopback Host with the listening port is served (DNS rebinding).
func TestSecurity_Host(t *testing.T) {
	srv := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for host, want := range map[string]int{
		"127.0.0.1:" + port:        200,
		"localhost:" + port:        200,
		"LOCALHOST:" + port:        200,
		"[::1]:" + port:            200,
		"127.0.0.2:" + port:        200,
		"evil.example:" + port:     403,
		"evil.example":             403,
		"127.0.0.1.nip.io:" + port: 403,
		"192.168.1.10:" + port:     403,
		"127.0.0.1:1":              403,
		"localhost":                403,
	} {
		paths := []string{"/", "/api/status", "/assets/app.js"}
		if want != 200 {
			paths = append(paths, "/api/live") // a stream when served: the live test reads it
		}
		for _, p := range paths {
			if resp := request(t, "GET", srv.URL+p, map[string]string{"Host": host}); resp.StatusCode != want {
				t.Errorf("Host %q %s: %d, want %d", host, p, resp.StatusCode, want)
			}
		}
	}
}

// TestSecurity_Token: beyond loopback the dashboard refuses to start without a token, and then
// serves only requests that carry it.
func TestSecurity_Token(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:8081", ":8081"} {
		if _, err := New(Options{Addr: addr}); err != ErrNeedToken {
			t.Errorf("New(%s) without a token: %v, want ErrNeedToken", addr, err)
		}
	}
	for _, weak := range []string{"short", "                ", "aaaaaaaaaaaaaaaaaaaaaaaa", "abababababababababab", "correct horse battery staple"} {
		if _, err := New(Options{Addr: "0.0.0.0:0", Token: weak}); err == nil {
			t.Errorf("the weak token %q was accepted", weak)
		}
	}
	token := "0123456789abcdef0123"
	srv := startServer(t, Options{Addr: "0.0.0.0:0", Token: token, StorePath: filepath.Join(t.TempDir(), "none.db")})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	u := "http://127.0.0.1:" + port
	lan := map[string]string{"Host": "my-laptop.lan:" + port}
	if r := request(t, "GET", u+"/api/status", lan); r.StatusCode != 401 {
		t.Errorf("no token: %d, want 401", r.StatusCode)
	}
	if r := request(t, "GET", u+"/", lan); r.StatusCode != 401 {
		t.Errorf("page without a token: %d, want 401", r.StatusCode)
	}
	if r := request(t, "GET", u+"/api/status", map[string]string{"Authorization": "Bearer wrong-token-wrong-token"}); r.StatusCode != 401 {
		t.Errorf("wrong bearer: %d, want 401", r.StatusCode)
	}
	if r := request(t, "GET", u+"/api/status", map[string]string{"Authorization": "Bearer " + token, "Host": "my-laptop.lan:" + port}); r.StatusCode != 200 {
		t.Errorf("bearer token: %d, want 200", r.StatusCode)
	}
	if r := request(t, "GET", u+"/?token=nope", nil); r.StatusCode != 401 {
		t.Errorf("wrong ?token=: %d, want 401", r.StatusCode)
	}
	r := request(t, "GET", u+"/?tab=cost&token="+token, nil)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/?tab=cost" {
		t.Fatalf("?token=: %d to %q, want 303 to /?tab=cost", r.StatusCode, r.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range r.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("?token= set no HttpOnly SameSite=Strict cookie: %+v", r.Cookies())
	}
	if r := request(t, "GET", u+"/api/status", map[string]string{"Cookie": cookie.String()}); r.StatusCode != 200 {
		t.Errorf("with the cookie: %d, want 200", r.StatusCode)
	}
}

// TestSecurity_CSRF: a write without the page's CSRF token, or from another origin, is refused
// before it reaches any handler.
func TestSecurity_CSRF(t *testing.T) {
	srv := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		if r := request(t, m, srv.URL+"/api/status", nil); r.StatusCode != 403 {
			t.Errorf("%s without CSRF: %d, want 403", m, r.StatusCode)
		}
		if r := request(t, m, srv.URL+"/api/status", map[string]string{csrfHeader: "forged"}); r.StatusCode != 403 {
			t.Errorf("%s with a forged CSRF token: %d, want 403", m, r.StatusCode)
		}
		if r := request(t, m, srv.URL+"/api/status", map[string]string{csrfHeader: srv.csrf, "Origin": "http://evil.example"}); r.StatusCode != 403 {
			t.Errorf("%s from another origin: %d, want 403", m, r.StatusCode)
		}
		// With the token the request passes the guard; no endpoint takes writes yet.
		if r := request(t, m, srv.URL+"/api/status", map[string]string{csrfHeader: srv.csrf, "Origin": srv.URL}); r.StatusCode != 405 {
			t.Errorf("%s with the CSRF token: %d, want 405 from the router", m, r.StatusCode)
		}
	}
	// The page carries the token for its script.
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `<meta name="csrf-token" content="`+srv.csrf+`">`) {
		t.Error("the page does not embed the CSRF token")
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "http") {
		t.Errorf("Content-Security-Policy %q allows other origins", csp)
	}
}

// TestRun_RefusesNonLoopbackWithoutToken: observer-dash itself will not start beyond loopback
// without [dash] token, and says what to do.
func TestRun_RefusesNonLoopbackWithoutToken(t *testing.T) {
	t.Setenv("OBSERVER_DASH_ADDR", "0.0.0.0:0")
	t.Setenv("OBSERVER_DASH_TOKEN", "")
	var out, errOut strings.Builder
	code := Run(context.Background(), []string{"observer-dash", "--home", t.TempDir()}, &out, &errOut)
	if code != 64 || !strings.Contains(errOut.String(), "[dash] token") {
		t.Fatalf("exit %d, stderr %q; want 64 naming [dash] token", code, errOut.String())
	}
}

// TestAPI_Tools: each client's tool calls add up to the store's, and so does the action mix.
func TestAPI_Tools(t *testing.T) {
	path := corpusStore(t)
	srv := startServer(t, Options{StorePath: path})
	st := openReader(t, path)
	var d struct {
		Tools  []toolRow   `json:"tools"`
		Labels []string    `json:"labels"`
		Mix    []mixSeries `json:"mix"`
	}
	mustGet(t, srv.URL, "/api/tools?window=all", &d)
	var calls, fails int64
	for _, r := range d.Tools {
		calls += r.Calls
		fails += r.Failures
		if r.SuccessRate < 0 || r.SuccessRate > 1 {
			t.Errorf("%s/%s: success rate %v", r.Client, r.Tool, r.SuccessRate)
		}
	}
	// Tool calls only: a compaction's compact_boundary is a lifecycle record (the corpus has one).
	if n := count(t, st, "SELECT count(*) FROM actions WHERE tool = 'compact_boundary'"); n == 0 {
		t.Error("the corpus store has no compaction")
	}
	for _, r := range d.Tools {
		if r.Tool == "compact_boundary" || r.Tool == "microcompact_boundary" {
			t.Errorf("%s listed as a tool", r.Tool)
		}
	}
	const calls0 = "SELECT count(*) FROM actions WHERE tool != '' AND type NOT IN ('context_compacted', 'user_prompt', 'turn_aborted', 'api_error')"
	if want := count(t, st, calls0); calls != want || calls == 0 {
		t.Errorf("tool calls add up to %d, the store has %d", calls, want)
	}
	if want := count(t, st, calls0+" AND success = 0"); fails != want {
		t.Errorf("tool failures add up to %d, the store has %d", fails, want)
	}
	if want := count(t, st, "SELECT count(*) FROM actions WHERE client = 'codex' AND tool = 'exec_command'"); want > 0 {
		found := false
		for _, r := range d.Tools {
			if r.Client == "codex" && r.Tool == "exec_command" {
				found = r.Calls == want
			}
		}
		if !found {
			t.Errorf("codex exec_command: not %d calls", want)
		}
	}
	var mixed int64
	for _, m := range d.Mix {
		if len(m.Counts) != len(d.Labels) {
			t.Fatalf("%s has %d counts for %d buckets", m.Type, len(m.Counts), len(d.Labels))
		}
		for _, n := range m.Counts {
			mixed += n
		}
	}
	if want := count(t, st, "SELECT count(*) FROM actions"); mixed != want || len(d.Mix) > maxMixTypes+1 {
		t.Errorf("the mix holds %d actions in %d series, the store %d", mixed, len(d.Mix), want)
	}
}

// TestAPI_Compression: savings add up per mechanism and model from the events the proxy would
// publish; none in the corpus.
func TestAPI_Compression(t *testing.T) {
	var empty struct {
		Store bool
		Total compressionRow
	}
	mustGet(t, startServer(t, Options{StorePath: corpusStore(t)}).URL, "/api/compression?window=all", &empty)
	if !empty.Store || empty.Total.Events != 0 {
		t.Fatalf("corpus compression: %+v", empty)
	}
	path := compressionStore(t)
	var d struct {
		Total  compressionRow     `json:"total"`
		Groups []compressionRow   `json:"groups"`
		Recent []compressionEvent `json:"recent"`
	}
	mustGet(t, startServer(t, Options{StorePath: path}).URL, "/api/compression", &d)
	if d.Total.Events != 3 || d.Total.BytesBefore != 3500 || d.Total.BytesAfter != 1900 || len(d.Recent) != 3 ||
		math.Abs(d.Total.SavedUSD-0.75) > 1e-9 {
		t.Fatalf("total %+v, %d recent", d.Total, len(d.Recent))
	}
	if len(d.Groups) != 2 || d.Groups[0].Mechanism != "drop" || d.Groups[1].BytesBefore != 1500 || math.Abs(d.Groups[1].SavedRatio-0.4) > 1e-9 {
		t.Fatalf("groups %+v", d.Groups)
	}
	if d.Recent[0].Mode != "token" {
		t.Errorf("recent %+v: want the mode", d.Recent[0])
	}
}

// compressionStore holds three compression decisions as observer-proxy publishes them.
func compressionStore(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i, c := range []struct {
		mech, model   string
		before, after int64
		usd           float64
	}{{"json", "m1", 1000, 400, 0.25}, {"json", "m1", 500, 500, 0}, {"drop", "m2", 2000, 1000, 0.5}} {
		ev := event.New(event.KindCompression, "observer-proxy")
		ev.ID, ev.Client, ev.SessionID = fmt.Sprint("c", i), "claude-code", "s"
		ev.Time = time.Now().Add(time.Duration(i) * time.Second)
		ev.Compression = &event.Compression{Mechanism: c.mech, Mode: "token", Model: c.model, BytesBefore: c.before, BytesAfter: c.after,
			TokensBefore: c.before / 4, TokensAfter: c.after / 4, SavedUSD: c.usd}
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return path
}

// TestAPI_CostOverTimeByHour: windows up to two days chart cost by local hour, longer ones by
// local day, and either way the buckets add up to query.Cost's total for the same filters; a proxy
// turn, which carries no project, counts under its session's project; a session's detail is that
// session's turns only.
func TestAPI_CostOverTimeByHour(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var evs []event.Event
	usage := func(id, session, project string, at time.Time, usd float64) {
		ev := event.New(event.KindTokenUsage, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = id, "claude-code", session, project, at
		ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 100, Output: 10}, Model: "claude-sonnet-4-5", MessageID: "msg_" + id, CostUSD: usd}
		evs = append(evs, ev)
	}
	usage("u1", "s1", "/a", now.Add(-30*time.Minute), 1)
	usage("u2", "s1", "/a", now.Add(-3*time.Hour), 2)
	usage("u3", "s2", "/b", now.Add(-5*time.Hour), 4)
	usage("u4", "s2", "/b", now.Add(-5*24*time.Hour), 8)
	turn := event.New(event.KindAPITurn, "observer-proxy")
	turn.ID, turn.Client, turn.SessionID, turn.Time = "p1", "claude-code", "s1", now.Add(-2*time.Hour)
	turn.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 50}, Provider: "anthropic", Model: "claude-sonnet-4-5", MessageID: "msg_p1", Status: 200, CostUSD: 16}
	evs = append(evs, turn)
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	srv := startServer(t, Options{StorePath: path})

	for _, c := range []struct {
		params string
		unit   string
		usd    float64
	}{
		{"window=24h", "hour", 1 + 2 + 4 + 16},
		{"window=48h&project=/a", "hour", 1 + 2 + 16},
		{"window=7d", "day", 1 + 2 + 4 + 8 + 16},
		{"window=7d&project=/b", "day", 4 + 8},
	} {
		var ov struct {
			Total        Totals    `json:"total"`
			Unit         string    `json:"activity_unit"`
			CostOverTime []dayCost `json:"cost_over_time"`
		}
		mustGet(t, srv.URL, "/api/overview?"+c.params, &ov)
		var co struct {
			Total Totals    `json:"total"`
			Unit  string    `json:"days_unit"`
			Days  []dayCost `json:"days"`
		}
		mustGet(t, srv.URL, "/api/cost?"+c.params, &co)
		if ov.Total.CostUSD != c.usd || co.Total.CostUSD != c.usd {
			t.Errorf("%s: overview $%v, cost $%v, want $%v", c.params, ov.Total.CostUSD, co.Total.CostUSD, c.usd)
		}
		if ov.Unit != c.unit || co.Unit != c.unit {
			t.Errorf("%s: units %q and %q, want %q", c.params, ov.Unit, co.Unit, c.unit)
		}
		for _, series := range [][]dayCost{ov.CostOverTime, co.Days} {
			var sum float64
			for _, d := range series {
				sum += d.CostUSD
				start := time.Unix(d.T, 0)
				label := start.Format("2006-01-02")
				if c.unit == "hour" {
					label = start.Format("2006-01-02T15")
					if d.Hour != d.Day {
						t.Errorf("%s: hour bucket %+v", c.params, d)
					}
				}
				if d.Day != label || d.T == 0 {
					t.Errorf("%s: bucket %q starts at %v", c.params, d.Day, start)
				}
			}
			if math.Abs(sum-c.usd) > 1e-9 {
				t.Errorf("%s: buckets %+v add up to $%v, want $%v", c.params, series, sum, c.usd)
			}
		}
		if c.unit == "hour" && len(ov.CostOverTime) < 3 {
			t.Errorf("%s: %d hourly buckets for turns in 3+ distinct hours", c.params, len(ov.CostOverTime))
		}
	}
	var d struct {
		Total  Totals      `json:"total"`
		Models []ModelCost `json:"models"`
	}
	mustGet(t, srv.URL, "/api/sessions/s1?client=claude-code", &d)
	if d.Total.CostUSD != 1+2+16 || d.Total.Turns != 3 || d.Total.ProxyTurns != 1 || len(d.Models) != 1 || d.Models[0].Reliability != ReliabilityMixed {
		t.Errorf("session s1: %+v, models %+v", d.Total, d.Models)
	}
}
