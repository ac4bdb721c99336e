package dash

import (
	"context"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// teamStore is a team hub's store: three members' events as the hub's writer stores them (Member
// from the subject, Host and User as each machine reported them), and events without a member
// (the hub's own). All within the hour but alice's old session, ten days ago.
//
//	alice  alice-mbp  a1 claude-code /p/web: a transcript turn the proxy saw too ($1 logged, $1.50
//	                  measured: counted once, from the proxy), two actions, one failed
//	                  a2 codex /p/api: a transcript turn ($2, gpt-5-codex), one action
//	                  a3 claude-code /p/web, ten days ago: a transcript turn ($100)
//	bob    bob-linux  b1 claude-code /p/web: a transcript turn ($4), one action
//	                  a Gemini CLI proxy turn, which carries no session ($0.50)
//	carol  carol-desk c1 claude-code /p/api: a transcript turn ($0.25)
//	       carol-laptop c2 codex /p/web: two failed actions
//	(none)            x1 claude-code /p/web: a transcript turn ($8), one action
func teamStore(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	now := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	var evs []event.Event
	n := 0
	mk := func(kind event.Kind, source, member, host, client, session, project string, at time.Time) *event.Event {
		n++
		e := event.New(kind, source)
		e.ID = event.ID("team-test", member, session, string(kind), time.Duration(n).String())
		e.Time, e.Client, e.SessionID, e.Project = at, client, session, project
		e.Member, e.Host = member, host
		if member != "" {
			e.User = member
		}
		evs = append(evs, e)
		return &evs[len(evs)-1]
	}
	usage := func(member, host, client, session, project, model, msg string, at time.Time, usd float64) {
		e := mk(event.KindTokenUsage, "observer-watch", member, host, client, session, project, at)
		e.TokenUsage = &event.TokenUsage{MessageID: msg, Model: model, Tokens: event.Tokens{Input: 100, Output: 10, CacheRead: 1000},
			CostUSD: usd, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	}
	proxy := func(member, host, client, session, model, msg string, at time.Time, usd float64) {
		e := mk(event.KindAPITurn, "observer-proxy", member, host, client, session, "", at)
		e.APITurn = &event.APITurn{Provider: "anthropic", Model: model, MessageID: msg, RequestID: "req_" + msg, Status: 200,
			Tokens: event.Tokens{Input: 100, Output: 10, CacheRead: 1000}, CostUSD: usd, Reliability: event.ReliabilityAccurate}
	}
	action := func(member, host, client, session, project, model string, at time.Time, ok bool) {
		e := mk(event.KindAction, "observer-watch", member, host, client, session, project, at)
		e.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "make test", Model: model, Success: &ok}
		if !ok {
			e.Action.Error = "exit status 1"
		}
	}
	at := func(min int) time.Time { return now.Add(time.Duration(min) * time.Second) }

	usage("alice", "alice-mbp", "claude-code", "a1", "/p/web", "claude-sonnet-4-5", "msg_a1", at(1), 1)
	proxy("alice", "alice-mbp", "claude-code", "a1", "claude-sonnet-4-5", "msg_a1", at(2), 1.5)
	action("alice", "alice-mbp", "claude-code", "a1", "/p/web", "claude-sonnet-4-5", at(3), true)
	action("alice", "alice-mbp", "claude-code", "a1", "/p/web", "claude-sonnet-4-5", at(4), false)
	usage("alice", "alice-mbp", "codex", "a2", "/p/api", "gpt-5-codex", "msg_a2", at(5), 2)
	action("alice", "alice-mbp", "codex", "a2", "/p/api", "gpt-5-codex", at(6), true)
	usage("alice", "alice-mbp", "claude-code", "a3", "/p/web", "claude-sonnet-4-5", "msg_a3", now.AddDate(0, 0, -10), 100)
	usage("bob", "bob-linux", "claude-code", "b1", "/p/web", "claude-sonnet-4-5", "msg_b1", at(7), 4)
	action("bob", "bob-linux", "claude-code", "b1", "/p/web", "claude-sonnet-4-5", at(8), true)
	proxy("bob", "bob-linux", "gemini-cli", "", "gemini-2.5-pro", "msg_b2", at(9), 0.5)
	usage("carol", "carol-desk", "claude-code", "c1", "/p/api", "claude-sonnet-4-5", "msg_c1", at(10), 0.25)
	action("carol", "carol-laptop", "codex", "c2", "/p/web", "gpt-5-codex", at(11), false)
	action("carol", "carol-laptop", "codex", "c2", "/p/web", "gpt-5-codex", at(12), false)
	usage("", "", "claude-code", "x1", "/p/web", "claude-sonnet-4-5", "msg_x1", at(13), 8)
	action("", "", "claude-code", "x1", "/p/web", "claude-sonnet-4-5", at(14), true)
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			tb.Fatalf("event %d: %v", i, err)
		}
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		tb.Fatal(err)
	}
	return path
}

type membersJSON struct {
	Store   bool   `json:"store"`
	By      string `json:"by"`
	Member  string `json:"member"`
	Members []struct {
		memberFigures
		Hosts  []string `json:"hosts"`
		OSUser string   `json:"os_user"`
	} `json:"members"`
	Rows []struct {
		memberFigures
		Key string `json:"key"`
	} `json:"rows"`
}

// want is a member's expected figures (or one member's for a key).
type want struct {
	sessions, actions, failures, turns, apiTurns int64
	usd                                          float64
}

func (w want) check(tb testing.TB, what string, g memberFigures) {
	tb.Helper()
	got := want{g.Sessions, g.Actions, g.Failures, g.Turns, g.APITurns, g.CostUSD}
	if math.Abs(got.usd-w.usd) > 1e-9 {
		tb.Errorf("%s: $%v, want $%v", what, got.usd, w.usd)
	}
	got.usd = w.usd
	if got != w {
		tb.Errorf("%s: %+v, want %+v", what, got, w)
	}
	if g.Tokens != g.InputTokens+g.OutputTokens+g.CacheReadTokens+g.CacheWriteTokens || g.Tokens != w.turns*1110 {
		tb.Errorf("%s: %d tokens for %d turns of 1,110 (%+v)", what, g.Tokens, w.turns, g.Totals)
	}
	if b := bucketSum(g.Buckets); math.Abs(b-g.CostUSD) > 1e-9 {
		tb.Errorf("%s: billing buckets add up to $%v, not the cost $%v", what, b, g.CostUSD)
	}
}

// TestAPI_Members: /api/members lists each member of a hub's store once with its sessions,
// actions, failures, turns and dollars, each turn counted once as query.Cost counts it (so the
// members and the unattributed rows add up to query.Cost's total); by=project splits them per
// project; the window, client and model filters apply; a single user's store has no members.
func TestAPI_Members(t *testing.T) {
	path := teamStore(t)
	srv := startServer(t, Options{StorePath: path})
	st := openReader(t, path)

	var m membersJSON
	mustGet(t, srv.URL, "/api/members?window=7d", &m)
	if !m.Store || m.By != "" || len(m.Rows) != 0 {
		t.Fatalf("store %v, by %q, %d rows", m.Store, m.By, len(m.Rows))
	}
	names := []string{}
	for _, r := range m.Members {
		names = append(names, r.Member)
	}
	// Highest cost first.
	if !slices.Equal(names, []string{"bob", "alice", "carol"}) {
		t.Fatalf("members %q, want bob, alice, carol", names)
	}
	wants := map[string]want{
		"alice": {sessions: 2, actions: 3, failures: 1, turns: 2, apiTurns: 1, usd: 1.5 + 2},
		"bob":   {sessions: 1, actions: 1, failures: 0, turns: 2, apiTurns: 1, usd: 4 + 0.5},
		"carol": {sessions: 2, actions: 2, failures: 2, turns: 1, apiTurns: 0, usd: 0.25},
	}
	hosts := map[string][]string{"alice": {"alice-mbp"}, "bob": {"bob-linux"}, "carol": {"carol-desk", "carol-laptop"}}
	var sum float64
	for _, r := range m.Members {
		wants[r.Member].check(t, r.Member, r.memberFigures)
		if !slices.Equal(r.Hosts, hosts[r.Member]) || r.OSUser != r.Member {
			t.Errorf("%s: hosts %q, os_user %q", r.Member, r.Hosts, r.OSUser)
		}
		if r.LastSeen == 0 || r.LastSeen > time.Now().UnixMilli() {
			t.Errorf("%s: last_seen %d", r.Member, r.LastSeen)
		}
		sum += r.CostUSD
	}
	// The members and the unattributed $8 are query.Cost's total: no turn lost, none twice.
	since, _ := parseWindow("7d", time.Now())
	rep, err := query.Cost(context.Background(), st.DB, query.CostQuery{Filter: query.Filter{Since: since}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sum+8-rep.Total.CostUSD) > 1e-9 {
		t.Errorf("members' $%v + $8 unattributed, query.Cost says $%v", sum, rep.Total.CostUSD)
	}

	t.Run("AllTime", func(t *testing.T) {
		var m membersJSON
		mustGet(t, srv.URL, "/api/members?window=all&member=alice", &m)
		if len(m.Members) != 1 || m.Member != "alice" {
			t.Fatalf("member=alice: %+v", m.Members)
		}
		want{sessions: 3, actions: 3, failures: 1, turns: 3, apiTurns: 1, usd: 103.5}.check(t, "alice, all time", m.Members[0].memberFigures)
	})

	t.Run("ByProject", func(t *testing.T) {
		var m membersJSON
		mustGet(t, srv.URL, "/api/members?window=7d&by=project", &m)
		if m.By != "project" || len(m.Members) != 3 {
			t.Fatalf("by %q, %d members", m.By, len(m.Members))
		}
		type key struct{ member, key string }
		wants := map[key]want{
			{"alice", "/p/web"}: {sessions: 1, actions: 2, failures: 1, turns: 1, apiTurns: 1, usd: 1.5},
			{"alice", "/p/api"}: {sessions: 1, actions: 1, turns: 1, usd: 2},
			{"bob", "/p/web"}:   {sessions: 1, actions: 1, turns: 1, usd: 4},
			// The proxy turn without a session has no project, and is still bob's.
			{"bob", ""}:         {turns: 1, apiTurns: 1, usd: 0.5},
			{"carol", "/p/api"}: {sessions: 1, turns: 1, usd: 0.25},
			{"carol", "/p/web"}: {sessions: 1, actions: 2, failures: 2},
		}
		var got []key
		for _, r := range m.Rows {
			k := key{r.Member, r.Key}
			got = append(got, k)
			w, ok := wants[k]
			if !ok {
				t.Errorf("unexpected row %+v", r)
				continue
			}
			w.check(t, r.Member+" "+r.Key, r.memberFigures)
		}
		// By member, then highest cost first.
		order := []key{{"alice", "/p/api"}, {"alice", "/p/web"}, {"bob", "/p/web"}, {"bob", ""}, {"carol", "/p/api"}, {"carol", "/p/web"}}
		if !slices.Equal(got, order) {
			t.Errorf("rows %v, want %v", got, order)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		for _, c := range []struct {
			query string
			want  map[string]want
		}{
			{"client=codex", map[string]want{
				"alice": {sessions: 1, actions: 1, turns: 1, usd: 2},
				"carol": {sessions: 1, actions: 2, failures: 2},
			}},
			// A session counts under its main model, from its turns: carol's c2 has none.
			{"model=gpt-5-codex", map[string]want{
				"alice": {sessions: 1, actions: 1, turns: 1, usd: 2},
				"carol": {actions: 2, failures: 2},
			}},
			{"project=/p/api", map[string]want{
				"alice": {sessions: 1, actions: 1, turns: 1, usd: 2},
				"carol": {sessions: 1, turns: 1, usd: 0.25},
			}},
			{"window=1m", map[string]want{}},
		} {
			var m membersJSON
			mustGet(t, srv.URL, "/api/members?"+c.query, &m)
			if len(m.Members) != len(c.want) {
				t.Errorf("%s: %d members, want %d", c.query, len(m.Members), len(c.want))
			}
			for _, r := range m.Members {
				w, ok := c.want[r.Member]
				if !ok {
					t.Errorf("%s: unexpected %s", c.query, r.Member)
					continue
				}
				w.check(t, c.query+" "+r.Member, r.memberFigures)
			}
		}
	})

	t.Run("SingleUserStore", func(t *testing.T) {
		srv := startServer(t, Options{StorePath: pathsStore(t)})
		var m membersJSON
		mustGet(t, srv.URL, "/api/members?by=model", &m)
		if !m.Store || len(m.Members) != 0 || len(m.Rows) != 0 {
			t.Errorf("a store without members: %+v", m)
		}
		none := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "absent.db")})
		m = membersJSON{}
		mustGet(t, none.URL, "/api/members", &m)
		if m.Store || m.Members == nil || len(m.Members) != 0 {
			t.Errorf("no store: %+v", m)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		for _, q := range []string{"by=session", "member=Alice!", "model=a&model=b", "window=3x"} {
			if code := get(t, srv.URL, "/api/members?"+q, nil); code != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", q, code)
			}
		}
		// Endpoints that do not filter by member refuse it rather than ignore it.
		if code := get(t, srv.URL, "/api/tools?member=alice", nil); code != http.StatusBadRequest {
			t.Errorf("/api/tools?member=alice: status %d, want 400", code)
		}
	})
}

// TestAPI_MemberFilter: overview, cost, sessions and actions filtered by a member show that
// member's rows alone, its dollars equal to /api/members' (and, summed with the others', to the
// unfiltered figures).
func TestAPI_MemberFilter(t *testing.T) {
	path := teamStore(t)
	srv := startServer(t, Options{StorePath: path})
	var total float64
	for _, c := range []struct {
		member string
		want
		ids []string
	}{
		{"alice", want{sessions: 2, actions: 3, failures: 1, turns: 2, apiTurns: 1, usd: 3.5}, []string{"a2", "a1"}},
		{"bob", want{sessions: 1, actions: 1, turns: 2, apiTurns: 1, usd: 4.5}, []string{"b1"}},
		{"carol", want{sessions: 2, actions: 2, failures: 2, turns: 1, usd: 0.25}, []string{"c2", "c1"}},
		{"nobody", want{}, nil},
	} {
		q := "window=24h&member=" + c.member
		var ov overviewJSON
		mustGet(t, srv.URL, "/api/overview?"+q, &ov)
		got := want{ov.Counts.Sessions, ov.Counts.Actions, ov.Counts.Failures, ov.Total.Turns, ov.Counts.APITurns, ov.Total.CostUSD}
		if math.Abs(got.usd-c.usd) > 1e-9 || got.sessions != c.sessions || got.actions != c.actions || got.failures != c.failures || got.turns != c.turns || got.apiTurns != c.apiTurns {
			t.Errorf("overview %s: %+v, want %+v", c.member, got, c.want)
		}
		var acts int64
		for _, p := range ov.Activity {
			acts += p.Actions
		}
		if acts != c.actions {
			t.Errorf("overview %s: the activity chart adds up to %d actions, not %d", c.member, acts, c.actions)
		}
		var perDay float64
		for _, d := range ov.CostOverTime {
			perDay += d.CostUSD
		}
		if math.Abs(perDay-c.usd) > 1e-9 {
			t.Errorf("overview %s: cost over time adds up to $%v, not $%v", c.member, perDay, c.usd)
		}
		var co costJSON
		mustGet(t, srv.URL, "/api/cost?"+q, &co)
		if math.Abs(co.Total.CostUSD-c.usd) > 1e-9 || co.Total.Turns != c.turns || math.Abs(bucketSum(co.Buckets)-c.usd) > 1e-9 {
			t.Errorf("cost %s: %+v, buckets %+v, want $%v over %d turns", c.member, co.Total, co.Buckets, c.usd, c.turns)
		}
		total += co.Total.CostUSD
		for _, order := range []string{"last_seen", "cost"} {
			var ss struct {
				Total    int64     `json:"total"`
				Sessions []Session `json:"sessions"`
			}
			mustGet(t, srv.URL, "/api/sessions?"+q+"&sort="+order, &ss)
			var ids []string
			var usd float64
			for _, s := range ss.Sessions {
				ids = append(ids, s.SessionID)
				usd += s.CostUSD
			}
			slices.Sort(ids)
			wantIDs := slices.Sorted(slices.Values(c.ids))
			if ss.Total != c.want.sessions || !slices.Equal(ids, wantIDs) {
				t.Errorf("sessions %s sort=%s: total %d, %q, want %q", c.member, order, ss.Total, ids, wantIDs)
			}
			// bob's proxy turn without a session is in no session's row.
			if c.member == "bob" {
				usd += 0.5
			}
			if math.Abs(usd-c.usd) > 1e-9 {
				t.Errorf("sessions %s sort=%s: costs add up to $%v, want $%v", c.member, order, usd, c.usd)
			}
		}
		var a struct {
			Items []Action `json:"items"`
		}
		mustGet(t, srv.URL, "/api/actions?"+q, &a)
		var fails int64
		for _, it := range a.Items {
			if it.Success != nil && !*it.Success {
				fails++
			}
		}
		if int64(len(a.Items)) != c.actions || fails != c.failures {
			t.Errorf("actions %s: %d items, %d failed, want %d and %d", c.member, len(a.Items), fails, c.actions, c.failures)
		}
	}
	var all costJSON
	mustGet(t, srv.URL, "/api/cost?window=24h", &all)
	if math.Abs(total+8-all.Total.CostUSD) > 1e-9 {
		t.Errorf("members' costs $%v + $8 unattributed, the unfiltered cost $%v", total, all.Total.CostUSD)
	}
	// A member filter with the project and client filters.
	var co costJSON
	mustGet(t, srv.URL, "/api/cost?window=24h&member=alice&client=codex&project=/p/api", &co)
	if co.Total.CostUSD != 2 || co.Total.Turns != 1 || len(co.Projects) != 1 || co.Projects[0].Key != "/p/api" {
		t.Errorf("alice, codex, /p/api: %+v, projects %+v", co.Total, co.Projects)
	}
}
