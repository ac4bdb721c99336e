package goldentest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/observerhq/observer/internal/cli"
	"github.com/observerhq/observer/internal/dash"
	"github.com/observerhq/observer/internal/mcpserver"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/store"
)

// Projects and sessions of the corpus the cases name (see `observerctl cost -g project,session`).
const (
	projCodex  = "/Users/Sample_User/repos/codemie-ai/codemie-code" // Codex, the corpus's last day: inside 24h and 7d
	projNaya   = "/Users/Sample_User/naya"                          // Codex, its session idle at the query clock
	projRepo   = "/Users/user/repo"                                 // Claude Code, four sessions, one compaction
	projDemo   = "/path/to/Demo"                                    // Claude Code, the session with the most turns
	sessCodex  = "019e1625-789d-76c0-80ab-3724b5ddb799"             // projCodex's session
	sessNaya   = "019e1695-0522-7c83-8b39-0dd379793f80"             // projNaya's, idle
	sessCompac = "session-624a4a58"                                 // projRepo's, epochs 0 and 1
	sessDemo   = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"             // projDemo's biggest
	sessConv   = "01996135-afde-7911-97f0-d863511eca56"             // a Codex session with its conversation
	sessSubag  = "incremental-subagents__turn-2"                    // Claude Code 2.1 layout, with a subagent file
)

// cliCase is one observerctl command line (after `observerctl --home HOME`), with its stdin.
type cliCase struct {
	name  string
	args  []string
	stdin string
}

// statusPayload is what Claude Code sends the statusline command: a session of the corpus's last
// day, in its project.
var statusPayload = `{"session_id":"` + sessCodex + `","transcript_path":"/nowhere.jsonl","cwd":"` + projCodex + `/src",` +
	`"model":{"id":"gpt-5.5","display_name":"GPT-5.5"},"workspace":{"current_dir":"` + projCodex + `/src","project_dir":"` + projCodex + `"},` +
	`"version":"2.1.197","cost":{"total_cost_usd":0.5}}`

func cliCases() []cliCase {
	c := func(name string, args ...string) cliCase { return cliCase{name: name, args: args} }
	return []cliCase{
		// cost: every group key, combinations, every filter, relative and absolute windows.
		c("cost", "cost", "--json"),
		c("cost_by_day", "cost", "--json", "-g", "day"),
		c("cost_by_hour", "cost", "--json", "-g", "hour"),
		c("cost_by_model", "cost", "--json", "-g", "model"),
		c("cost_by_project", "cost", "--json", "-g", "project"),
		c("cost_by_client", "cost", "--json", "-g", "client"),
		c("cost_by_session", "cost", "--json", "-g", "session"),
		c("cost_by_client_model", "cost", "--json", "-g", "client,model"),
		c("cost_by_day_client", "cost", "--json", "-g", "day", "-g", "client"),
		c("cost_by_project_session", "cost", "--json", "-g", "project,session"),
		c("cost_since_24h_by_session", "cost", "--json", "--since", "24h", "-g", "session"),
		c("cost_since_7d_by_hour", "cost", "--json", "--since", "7d", "-g", "hour"),
		c("cost_since_30d_by_model", "cost", "--json", "--since", "30d", "-g", "model"),
		c("cost_window_dates_by_day", "cost", "--json", "--since", "2025-09-01", "--until", "2026-01-03", "-g", "day"),
		c("cost_until_duration", "cost", "--json", "--until", "180d", "-g", "client"),
		c("cost_project_by_session", "cost", "--json", "--project", projRepo, "-g", "session"),
		c("cost_client_codex_by_model", "cost", "--json", "--client", "codex", "-g", "model"),
		c("cost_session_prefix_by_model", "cost", "--json", "--session", "session-62", "-g", "model"),
		c("cost_session_by_day", "cost", "--json", "--session", sessDemo, "-g", "day"),
		c("cost_empty_window", "cost", "--json", "--since", "2020-01-01", "--until", "2020-02-01"),
		c("cost_bad_group", "cost", "--json", "-g", "weekday"),
		c("cost_unknown_session", "cost", "--json", "--session", "no-such-session"),

		// The analysis: discover, patterns, score.
		c("discover", "discover", "--json"),
		c("discover_client_claude", "discover", "--json", "--client", "claude-code"),
		c("discover_project", "discover", "--json", "--project", projRepo),
		c("discover_since_7d", "discover", "--json", "--since", "7d"),
		c("discover_limit_2", "discover", "--json", "--limit", "2"),
		c("patterns", "patterns", "--json"),
		c("patterns_kind_command_pair", "patterns", "--json", "--kind", "command_pair"),
		c("patterns_kind_co_edit", "patterns", "--json", "--kind", "co_edit"),
		c("patterns_kind_edit_then_test", "patterns", "--json", "--kind", "edit_then_test"),
		c("patterns_kind_hot_file", "patterns", "--json", "--kind", "hot_file"),
		c("patterns_min_confidence", "patterns", "--json", "--min-confidence", "0.5"),
		c("patterns_project_since_7d", "patterns", "--json", "--project", projCodex, "--since", "7d"),
		c("score", "score", "--json"),
		c("score_client_codex", "score", "--json", "--client", "codex"),
		c("score_since_7d", "score", "--json", "--since", "7d"),
		c("score_session", "score", "--json", sessDemo),
		c("score_session_prefix", "score", "--json", "session-3f"),

		// Session memory: summary, memory, memory export.
		c("summary_newest", "summary", "--json"),
		c("summary_compaction", "summary", "--json", sessCompac),
		c("summary_compaction_epoch_1", "summary", "--json", "--epoch", "1", sessCompac),
		c("summary_idle", "summary", "--json", sessNaya),
		c("summary_subagents", "summary", "--json", sessSubag),
		c("summary_unknown", "summary", "--json", "no-such-session"),
		c("memory", "memory", "--json"),
		c("memory_all", "memory", "--json", "--min-confidence", "0", "--limit", "1000"),
		c("memory_evidence", "memory", "--json", "--evidence"),
		c("memory_project", "memory", "--json", "--project", projCodex, "--min-confidence", "0"),
		c("memory_export", "memory", "export"),
		c("memory_export_project", "memory", "export", "--project", projRepo),

		// Billing blocks and budgets.
		c("blocks", "blocks", "--json"),
		c("blocks_active", "blocks", "--json", "--active"),
		c("blocks_client_codex", "blocks", "--json", "--client", "codex"),
		c("blocks_client_claude_since", "blocks", "--json", "--client", "claude", "--since", "2026-01-01"),
		c("blocks_since_7d", "blocks", "--json", "--since", "7d"),
		c("blocks_window_dates", "blocks", "--json", "--since", "2025-09-01", "--until", "2025-09-10"),
		c("budget", "budget", "--json"),
		c("limits", "limits", "--json"), // no provider figure in the corpus: the estimated blocks

		// Prices of the models the store has turns of.
		c("prices_list", "prices", "list", "--json"),
		c("prices_list_unpriced", "prices", "list", "--unpriced", "--json"),
		c("prices_show_sonnet_4_5", "prices", "show", "--json", "claude-sonnet-4-5-20250929"),
		c("prices_show_sonnet_4", "prices", "show", "--json", "claude-sonnet-4-20250514"),
		c("prices_show_gpt_5_5", "prices", "show", "--json", "gpt-5.5"),
		c("prices_show_bedrock_haiku", "prices", "show", "--json", "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0"),
		c("prices_show_aide_gpt_5", "prices", "show", "--json", "aide-gpt-5"),

		// The status line, its JSON, and without a session.
		{name: "statusline", args: []string{"statusline"}, stdin: statusPayload},
		{name: "statusline_json", args: []string{"statusline", "--json"}, stdin: statusPayload},
		{name: "statusline_json_no_session", args: []string{"statusline", "--json"}, stdin: ""},

		// Prometheus metrics, text and JSON.
		c("metrics", "metrics"),
		c("metrics_json", "metrics", "--json"),

		// export: every table (JSON), every format on sessions, filters.
		c("export_sessions", "export", "--table", "sessions"),
		c("export_sessions_jsonl", "export", "--table", "sessions", "--format", "jsonl"),
		c("export_sessions_csv", "export", "--table", "sessions", "--format", "csv"),
		c("export_sessions_since_7d", "export", "--table", "sessions", "--since", "7d"),
		c("export_actions_client_project", "export", "--table", "actions", "--client", "codex", "--project", projNaya),
		c("export_actions_project_since", "export", "--table", "actions", "--project", projRepo, "--since", "2026-01-11"),
		c("export_actions_window_csv", "export", "--table", "actions", "--format", "csv", "--since", "2025-12-01", "--until", "2026-01-02"),
		c("export_usage_codex_since_24h", "export", "--table", "usage", "--client", "codex", "--since", "24h"),
		c("export_usage_project_jsonl", "export", "--table", "usage", "--project", "/home/wei/repo/claude-code", "--format", "jsonl"),
		c("export_turns", "export", "--table", "turns"),

		// What a prune would delete (read-only).
		c("prune_dry_run_older_than", "prune", "--dry-run", "--json", "--older-than", "180d"),
		c("prune_dry_run_max_actions", "prune", "--dry-run", "--json", "--max-actions", "500"),
		c("prune_dry_run_date", "prune", "--dry-run", "--json", "--older-than", "2026-01-01", "--max-actions", "100"),

		// reconcile --dry-run compares the corpus's files with the store (nothing should be missing).
		c("reconcile_claude", "reconcile", "--dry-run", "--json", "--since", "2000-01-01", "--client", "claude-code"),
		c("reconcile_codex", "reconcile", "--dry-run", "--json", "--since", "2000-01-01", "--client", "codex"),

		// status while nothing runs.
		c("status_not_running", "status", "--json"),
	}
}

// recordCLI runs every case in-process, as main does.
func recordCLI(t *testing.T, rec *recorder, home string) {
	for _, tc := range cliCases() {
		var stdout, stderr bytes.Buffer
		args := append([]string{"observerctl", "--home", home}, tc.args...)
		code := cli.Run(context.Background(), args, strings.NewReader(tc.stdin), &stdout, &stderr)
		meta := fmt.Sprintf("exit %d", code)
		if s := stderr.String(); s != "" {
			meta += fmt.Sprintf(" stderr %q", s)
		}
		rec.add("cli", tc.name, stdout.Bytes(), meta)
	}
}

// dashAddr is where the dashboard says it listens; requests carry it as their Host.
const dashAddr = "127.0.0.1:8081"

// recordDash asks the dashboard's handler, as observer-dash serves it, every endpoint.
func recordDash(t *testing.T, rec *recorder, home, path string) {
	pr := prices.FollowOrDefault(home, nil)
	s, err := dash.New(dash.Options{Addr: dashAddr, StorePath: path, Home: home, Version: "dev",
		PriceTable: pr.Table, PriceSet: pr.Current})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	get := func(target string) (int, string, []byte) {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Host = dashAddr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Header().Get("Content-Type"), w.Body.Bytes()
	}
	ask := func(name, target string) []byte {
		code, typ, body := get(target)
		rec.add("dash", name, body, fmt.Sprintf("%s -> %d %s", target, code, typ))
		return body
	}

	// The page, its CSRF token (new in every process) replaced, and its assets' tag (a hash of the
	// script and styles, which the goldens do not record) written $ASSETS.
	code, typ, page := get("/")
	page = csrfMeta.ReplaceAll(page, []byte("${1}$$CSRF${2}"))
	page = assetTag.ReplaceAll(page, []byte("?v=$$ASSETS"))
	rec.add("dash", "page_index", page, fmt.Sprintf("/ -> %d %s", code, typ))

	ask("status", "/api/status")
	ask("filters", "/api/filters")
	ask("members", "/api/members")
	ask("members_by_model", "/api/members?by=model")
	ask("settings", "/api/settings")
	ask("metrics", "/metrics")

	// The views that take the common filters: window (all by default), project, client.
	for _, view := range []string{"overview", "cost", "tools", "compression", "analysis", "discovery", "patterns", "memory"} {
		ask(view, "/api/"+view)
		ask(view+"_window_24h", "/api/"+view+"?window=24h")
		ask(view+"_window_7d", "/api/"+view+"?window=7d")
		ask(view+"_window_30d", "/api/"+view+"?window=30d")
		ask(view+"_client_claude", "/api/"+view+"?client=claude-code")
		ask(view+"_project_repo", "/api/"+view+"?project="+url.QueryEscape(projRepo))
		ask(view+"_client_codex_project", "/api/"+view+"?client=codex&project="+url.QueryEscape(projCodex))
	}
	ask("patterns_kind_hot_file", "/api/patterns?kind=hot_file")
	ask("memory_kind_test_command", "/api/memory?kind=test_command&limit=5")
	ask("alerts", "/api/alerts")
	ask("alerts_days_365", "/api/alerts?days=365&limit=5")
	// Plan limits: the corpus has no provider figure, so the answer says so with the estimated
	// blocks active at the query clock.
	ask("limits", "/api/limits")
	ask("limits_since_all", "/api/limits?since=all")

	// Sessions: the list, sorted both ways and paged; each session's detail and the start of its
	// timeline (25 entries: a whole timeline is up to 190 KB), and one timeline paged through.
	ask("sessions", "/api/sessions")
	ask("sessions_sort_cost", "/api/sessions?sort=cost")
	ask("sessions_page_2", "/api/sessions?limit=5&page=2")
	ask("sessions_window_7d", "/api/sessions?window=7d")
	ask("sessions_client_codex", "/api/sessions?client=codex")
	ask("sessions_project_repo", "/api/sessions?project="+url.QueryEscape(projRepo))
	for _, ref := range allSessions(t, path) {
		id := url.PathEscape(ref.ID)
		ask("session_"+ref.Client+"_"+ref.ID, "/api/sessions/"+id+"?client="+ref.Client)
		ask("timeline_"+ref.Client+"_"+ref.ID, "/api/sessions/"+id+"/timeline?limit=25&client="+ref.Client)
	}
	first := ask("timeline_page_1", "/api/sessions/"+sessDemo+"/timeline?limit=50")
	ask("timeline_page_2", "/api/sessions/"+sessDemo+"/timeline?limit=50&cursor="+url.QueryEscape(nextCursor(t, first)))
	// Conversations (issue 32): a Codex session's (28 messages, 18 of them tool calls) in two
	// pages; a search through every conversation, output and title.
	first = ask("conversation_page_1", "/api/sessions/"+sessConv+"/conversation?limit=25&client=codex")
	ask("conversation_page_2", "/api/sessions/"+sessConv+"/conversation?limit=25&client=codex&after="+url.QueryEscape(nextCursor(t, first)))
	ask("search_build", "/api/search?q=build")

	// Actions: newest first, filtered, and a second page.
	first = ask("actions", "/api/actions?limit=50")
	ask("actions_page_2", "/api/actions?limit=50&cursor="+url.QueryEscape(nextCursor(t, first)))
	ask("actions_session", "/api/actions?session="+sessCompac)
	ask("actions_type_edit_file", "/api/actions?type=edit_file&limit=30")
	ask("actions_tool_bash", "/api/actions?tool=Bash&limit=30")
	ask("actions_failed", "/api/actions?failed=1")
	ask("actions_client_codex_window_24h", "/api/actions?client=codex&window=24h&limit=40")

	// Answers other than 200.
	ask("error_unknown_endpoint", "/api/nosuch")
	ask("error_unknown_session", "/api/sessions/no-such-session")
	ask("error_bad_window", "/api/cost?window=fortnight")
	ask("error_unknown_param", "/api/overview?windw=7d")
	ask("error_bad_sort", "/api/sessions?sort=name")
}

// csrfMeta finds the page's CSRF token, assetTag its assets' tag.
var (
	csrfMeta = regexp.MustCompile(`(name="csrf-token" content=")[0-9a-f]{64}(")`)
	assetTag = regexp.MustCompile(`\?v=[0-9a-f]{12}`)
)

// nextCursor reads a page's next_cursor.
func nextCursor(t *testing.T, page []byte) string {
	t.Helper()
	var p struct {
		Next string `json:"next_cursor"`
	}
	if err := json.Unmarshal(page, &p); err != nil || p.Next == "" {
		t.Fatalf("no next_cursor in %.300s (%v)", page, err)
	}
	return p.Next
}

// allSessions lists the store's sessions, by client and id.
func allSessions(t *testing.T, path string) []store.SessionRef {
	t.Helper()
	st, err := store.OpenReader(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.DB.Query(`SELECT client, session_id FROM sessions ORDER BY client, session_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []store.SessionRef
	for rows.Next() {
		var r store.SessionRef
		if err := rows.Scan(&r.Client, &r.ID); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// mcpCall is one tool call.
type mcpCall struct {
	name string
	tool string
	args map[string]any
}

// mcpCalls are every tool with representative arguments; the server's project (its working
// directory's) is projCodex.
func mcpCalls(t *testing.T, path string) []mcpCall {
	ids := actionIDs(t, path)
	c := func(name, tool string, args map[string]any) mcpCall { return mcpCall{name, tool, args} }
	type m = map[string]any
	return []mcpCall{
		c("session_summary", "get_session_summary", nil),
		c("session_summary_prefix", "get_session_summary", m{"session": "session-62"}),
		c("session_summary_project_naya", "get_session_summary", m{"project": "naya"}),
		c("session_summary_project_demo", "get_session_summary", m{"project": projDemo}),

		c("file_history", "get_file_history", m{"path": "src/agents/plugins/codemie-code.plugin.ts"}),
		c("file_history_limit", "get_file_history", m{"path": projRepo + "/src/providers/plugins/sso/ARCHITECTURE-REFACTORING.md", "limit": 3}),
		c("file_history_unknown", "get_file_history", m{"path": "no/such/file.go"}),
		c("file_freshness", "check_file_freshness", m{"path": "src/agents/plugins/codemie-code.plugin.ts"}),
		c("file_freshness_session", "check_file_freshness", m{"path": "src/providers/plugins/sso/ARCHITECTURE-REFACTORING.md", "project": projRepo, "session": sessCompac}),
		c("file_freshness_outside", "check_file_freshness", m{"path": "/etc/passwd"}),

		c("search", "search_past_outputs", m{"query": "error"}),
		c("search_all_projects", "search_past_outputs", m{"query": "test", "project": "*", "limit": 5}),
		c("search_phrase_project", "search_past_outputs", m{"query": "npm run build", "project": projDemo}),
		c("search_no_match", "search_past_outputs", m{"query": "xylophonequartz"}),

		c("last_test", "get_last_test_result", nil),
		c("last_test_max_bytes", "get_last_test_result", m{"max_bytes": 300}),
		c("last_test_project_repo", "get_last_test_result", m{"project": projRepo}),

		c("failures", "get_failure_context", nil),
		c("failures_session_limit", "get_failure_context", m{"session": "session-3f", "limit": 3}),
		c("failures_project_repo", "get_failure_context", m{"project": projRepo}),

		c("action_details", "get_action_details", m{"id": ids.failed}),
		c("action_details_max_bytes", "get_action_details", m{"id": ids.output, "max_bytes": 200}),
		c("action_details_edit", "get_action_details", m{"id": ids.edit}),
		c("action_details_unknown", "get_action_details", m{"id": 1 << 40}),

		c("command_freshness_build", "check_command_freshness", m{"command": "npm run build"}),
		c("command_freshness_test_session", "check_command_freshness", m{"command": "npm test", "session": sessCodex}),
		c("command_freshness_never", "check_command_freshness", m{"command": "never-ran-this --flag"}),
		c("command_freshness_demo", "check_command_freshness", m{"command": "npm run build", "project": projDemo}),

		c("recovery", "get_session_recovery_context", nil),
		c("recovery_compaction", "get_session_recovery_context", m{"session": sessCompac}),
		c("recovery_project_repo", "get_session_recovery_context", m{"project": projRepo}),

		c("patterns", "get_project_patterns", nil),
		c("patterns_days_limit", "get_project_patterns", m{"days": 100000, "limit": 3}),
		c("patterns_project_demo", "get_project_patterns", m{"project": projDemo, "days": 100000}),

		c("cost", "get_cost_summary", nil),
		c("cost_days", "get_cost_summary", m{"days": 100000}),
		c("cost_session", "get_cost_summary", m{"session": sessDemo}),
		c("cost_project_naya", "get_cost_summary", m{"project": projNaya, "days": 1}),

		c("redundancy", "get_redundancy_report", nil),
		c("redundancy_session", "get_redundancy_report", m{"session": sessDemo}),
		c("redundancy_project_repo", "get_redundancy_report", m{"project": projRepo}),

		c("around", "list_actions_around", nil),
		c("around_id", "list_actions_around", m{"id": ids.failed, "before": 3, "after": 3}),
		c("around_session", "list_actions_around", m{"session": sessSubag, "before": 2}),

		c("stashed_unknown", "retrieve_stashed", m{"stash_id": "stash_0000"}),

		c("memory", "get_project_memory", nil),
		c("memory_project_repo", "get_project_memory", m{"project": projRepo}),
		c("memory_project_naya", "get_project_memory", m{"project": "naya"}),

		c("error_unknown_argument", "get_cost_summary", m{"dayz": 3}),
		c("error_bad_type", "get_action_details", m{"id": "seven"}),
	}
}

// picked are action ids the calls name: the store's row ids.
type picked struct {
	failed, output, edit int64
}

// actionIDs picks, in projCodex, its first failed command, its command with the longest output,
// and its first edit.
func actionIDs(t *testing.T, path string) picked {
	t.Helper()
	st, err := store.OpenReader(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var p picked
	one := func(dst *int64, q string) {
		if err := st.DB.QueryRow(q, projCodex).Scan(dst); err != nil && err != sql.ErrNoRows {
			t.Fatalf("%s: %v", q, err)
		}
	}
	one(&p.failed, `SELECT id FROM actions WHERE project = ? AND type = 'run_command' AND success = 0 ORDER BY ts, id LIMIT 1`)
	one(&p.output, `SELECT a.id FROM actions a JOIN action_outputs o ON o.event_id = a.event_id WHERE a.project = ?
		ORDER BY length(unpack(o.output)) DESC, a.id LIMIT 1`)
	one(&p.edit, `SELECT id FROM actions WHERE project = ? AND type = 'edit_file' ORDER BY ts, id LIMIT 1`)
	return p
}

// recordMCP calls every tool through the SDK's client over an in-memory transport, on a server
// started in projCodex; then a few on a server that knows its client's own session (observer-mcp
// reads it from the client's environment), which then is the default session.
func recordMCP(t *testing.T, rec *recorder, home, path string) {
	cs, done := connectMCP(t, mcpserver.Options{StorePath: path, Home: home, Project: projCodex, Version: "dev"})
	ctx := context.Background()
	init, _ := json.MarshalIndent(cs.InitializeResult(), "", "  ")
	rec.add("mcp", "initialize", append(init, '\n'), "ok")
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := json.MarshalIndent(tools, "", "  ")
	rec.add("mcp", "tools_list", append(list, '\n'), fmt.Sprintf("ok, %d tools", len(tools.Tools)))
	callMCP(rec, cs, "", mcpCalls(t, path))
	done()

	cs, done = connectMCP(t, mcpserver.Options{StorePath: path, Home: home, Project: projNaya, Session: sessNaya, Version: "dev"})
	type m = map[string]any
	callMCP(rec, cs, "own_session_", []mcpCall{
		{"session_summary", "get_session_summary", nil},
		{"cost", "get_cost_summary", nil},
		{"around", "list_actions_around", m{"before": 4}},
		{"recovery", "get_session_recovery_context", nil},
		{"session_summary_other_project", "get_session_summary", m{"project": projCodex}},
	})
	done()
}

// connectMCP serves a server on one end of an in-memory transport and returns a client session
// on the other, and what closes both.
func connectMCP(t *testing.T, opts mcpserver.Options) (*mcp.ClientSession, func()) {
	ctx := context.Background()
	s := mcpserver.New(opts)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "golden", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, func() {
		cs.Close()
		ss.Wait()
		s.Close()
	}
}

// callMCP makes the calls and records each answer's text under prefix+name.
func callMCP(rec *recorder, cs *mcp.ClientSession, prefix string, calls []mcpCall) {
	ctx := context.Background()
	for _, call := range calls {
		name := prefix + call.name
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		args, _ := json.Marshal(call.args)
		if err != nil {
			rec.add("mcp", name, []byte(err.Error()+"\n"), fmt.Sprintf("%s %s -> protocol error", call.tool, args))
			continue
		}
		var body bytes.Buffer
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				body.WriteString(tc.Text)
			} else {
				fmt.Fprintf(&body, "[%T content]", c)
			}
			body.WriteByte('\n')
		}
		meta := "ok"
		if res.IsError {
			meta = "tool error"
		}
		rec.add("mcp", name, body.Bytes(), fmt.Sprintf("%s %s -> %s", call.tool, args, meta))
	}
}
