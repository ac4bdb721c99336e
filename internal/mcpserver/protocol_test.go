package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// tableScan matches a scan of a table that grows with use (a and o are the search query's
// aliases); scans of projects (one row per repository) and of materialized CTEs are fine.
var tableScan = regexp.MustCompile(`^SCAN (actions|action_outputs|sessions|session_events|file_state|failure_context|patterns|token_usage|api_turns|hook_events|mcp_calls|a|o)( |$)`)

var projectOnly = regexp.MustCompile(`USING (COVERING )?INDEX actions_project_(target|type) \(project=\?\)$`)

// maxListBytes is the budget of the whole tools/list answer, as the client receives it.
const maxListBytes = 3840 // 15 tools (get_project_memory took it from 3584)

// rawClient speaks newline-delimited JSON-RPC to Serve over pipes, byte for byte.
type rawClient struct {
	t    testing.TB
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func serveRaw(t testing.TB, s *Server) *rawClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &rawClient{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	go func() { c.done <- s.Serve(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after its input closed")
		}
		s.Close()
	})
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// recv returns the next line the server writes, failing after 5 s: every answer, error or not,
// must come within a bounded time.
func (c *rawClient) recv() string {
	c.t.Helper()
	ch := make(chan string, 1)
	go func() {
		line, _ := c.out.ReadString('\n')
		ch <- line
	}()
	select {
	case line := <-ch:
		if line == "" {
			c.t.Fatal("the server closed its output")
		}
		return line
	case <-time.After(5 * time.Second):
		c.t.Fatal("no answer within 5 s")
	}
	return ""
}

func (c *rawClient) initialize() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if line := c.recv(); !strings.Contains(line, `"serverInfo"`) {
		c.t.Fatalf("initialize: %s", line)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeReply(t testing.TB, line string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

// The whole tools/list answer, as the client receives it on the wire, stays within budget.
func TestToolsListSize(t *testing.T) {
	c := serveRaw(t, New(Options{StorePath: filepath.Join(t.TempDir(), "none.db")}))
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	line := c.recv()
	var r struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Result.Tools) != 15 {
		t.Errorf("%d tools listed, want 15", len(r.Result.Tools))
	}
	t.Logf("tools/list answer: %d bytes", len(line))
	if len(line) > maxListBytes {
		t.Errorf("tools/list answer is %d bytes, over the %d-byte budget", len(line), maxListBytes)
	}
}

// Bad input gets a JSON-RPC error or a tool error, in bounded time, and the session goes on.
func TestBadInput(t *testing.T) {
	c := serveRaw(t, New(Options{StorePath: filepath.Join(t.TempDir(), "none.db")}))
	c.initialize()
	for _, tc := range []struct {
		name, line string
		id         string // the reply's id
		code       int    // JSON-RPC error code; 0: a tool error result
		msg        string
	}{
		{"NotJSON", `this is not json {`, "null", -32700, "parse error"},
		{"TruncatedJSON", `{"jsonrpc":"2.0","id":7,"method":"tools/li`, "null", -32700, "parse error"},
		{"NotJSONRPC", `{"id":8,"hello":"world"}`, "8", -32600, "invalid request"},
		{"BadIDType", `{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, "null", -32600, "invalid request"},
		{"UnknownMethod", `{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`, "9", -32601, ""},
		{"UnknownTool", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, "10", -32602, "unknown tool"},
		{"WrongArgumentType", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"get_action_details","arguments":{"id":"seven"}}}`, "11", 0, "validating"},
		{"MissingArgument", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"check_file_freshness","arguments":{}}}`, "12", 0, "path"},
		{"UnknownArgument", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"get_file_history","arguments":{"path":"a","sesion":"x"}}}`, "13", 0, "unknown argument \"sesion\""},
		{"ArgumentsNotObject", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"get_cost_summary","arguments":[1,2]}}`, "14", 0, ""},
		// MCP 2025-06-18 removed JSON-RPC batching: every batch is refused, and the session goes on.
		{"EmptyBatch", `[]`, "null", -32600, "batch"},
		{"BatchOfNumbers", `[1,2]`, "null", -32600, "batch"},
		{"BatchOfRequests", `[{"jsonrpc":"2.0","id":15,"method":"tools/list"},{"jsonrpc":"2.0","id":16,"method":"ping"}]`, "null", -32600, "batch"},
		{"NoMethodNoResult", `{"jsonrpc":"2.0","id":3}`, "3", -32600, "invalid request"},
		{"NoMethodNoResultStringID", `{"jsonrpc":"2.0","id":"x"}`, `"x"`, -32600, "invalid request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.line)
			r := decodeReply(t, c.recv())
			if string(r.ID) != tc.id {
				t.Errorf("reply id %s, want %s", r.ID, tc.id)
			}
			switch {
			case tc.code != 0:
				if r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.msg) {
					t.Errorf("error %+v, want code %d with %q", r.Error, tc.code, tc.msg)
				}
			case r.Error != nil:
				// Arguments that are not an object may be refused by the protocol layer too.
				if tc.msg != "" {
					t.Errorf("JSON-RPC error %+v, want a tool error with %q", r.Error, tc.msg)
				}
			default:
				var res mcp.CallToolResult
				if err := json.Unmarshal(r.Result, &res); err != nil {
					t.Fatal(err)
				}
				text := res.Content[0].(*mcp.TextContent).Text
				if !res.IsError || !strings.Contains(text, tc.msg) {
					t.Errorf("result %q (isError %v), want a tool error with %q", text, res.IsError, tc.msg)
				}
			}
		})
	}
	// The session still answers.
	c.send(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"get_session_summary","arguments":{}}}`)
	if line := c.recv(); !strings.Contains(line, "no data yet") {
		t.Errorf("after the bad input: %s", line)
	}
}

// Before the writer has created the store every tool answers "no data yet"; once the store
// exists, the same server answers from it without a restart.
func TestNoDataYet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.db")
	_, cs := newServer(t, path, "/p", time.Now())
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		args := map[string]any{}
		required, _ := tl.InputSchema.(map[string]any)["required"].([]any)
		for _, req := range required {
			switch req {
			case "id":
				args["id"] = 1
			default:
				args[req.(string)] = "x"
			}
		}
		text, isErr := call(t, cs, tl.Name, args)
		if isErr || !strings.HasPrefix(text, "no data yet") {
			t.Errorf("%s on a missing store: %q (error %v)", tl.Name, text, isErr)
		}
	}

	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ev := event.New(event.KindAction, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project = "a1", "claude-code", "s1", "/p"
	ev.Action = &event.Action{Type: event.ActionRunCommand, Target: "make"}
	if _, err := st.WriteBatch(context.Background(), []event.Event{ev}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var got summaryAnswer
	callJSON(t, cs, toolSessionSummary, nil, &got)
	if got.Sess != "s1" || got.Acts != 1 {
		t.Errorf("after the store appeared: %+v", got)
	}
}

// Every query a tool runs is an index search: no full scan of a table that grows with use.
// The plans come from SQLite without statistics (the writer never runs ANALYZE), as in production.
func TestQueryPlans(t *testing.T) {
	e := newCorpusEnv(t)
	lp := newLiveProject(t)
	var mu sync.Mutex
	seen := map[string][]any{}
	trace := func(q string, args []any) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := seen[q]; !ok {
			seen[q] = args
		}
	}
	for _, env := range []struct{ path, proj string }{{e.path, e.proj}, {lp.path, lp.dir}} {
		s, cs := newServer(t, env.path, env.proj, time.Now())
		s.trace = trace
		sess := queryStr(t, roDB(t, env.path), `SELECT session_id FROM sessions WHERE project = ? ORDER BY last_seen DESC LIMIT 1`, env.proj)
		id := queryInt(t, roDB(t, env.path), `SELECT max(id) FROM actions WHERE session_id = ?`, sess)
		for _, c := range []struct {
			name string
			args map[string]any
		}{
			{toolFileFreshness, map[string]any{"path": "a.go"}},
			{toolFileFreshness, map[string]any{"path": "a.go", "session": sess}},
			{toolFileHistory, map[string]any{"path": "a.go"}},
			{toolSessionSummary, nil},
			{toolSessionSummary, map[string]any{"session": short(sess)}},
			{toolSearch, map[string]any{"query": "package error"}},
			{toolSearch, map[string]any{"query": "package", "project": "*"}},
			{toolLastTest, nil},
			{toolLastTest, map[string]any{"session": sess}},
			{toolFailures, nil},
			{toolFailures, map[string]any{"session": sess}},
			{toolActionDetails, map[string]any{"id": id}},
			{toolCommandFreshness, map[string]any{"command": "ls"}},
			{toolCommandFreshness, map[string]any{"command": "go test", "session": sess}},
			{toolRecovery, nil},
			{toolPatterns, map[string]any{"project": filepath.Base(env.proj)}},
			{toolCost, nil},
			{toolCost, map[string]any{"session": sess}},
			{toolRedundancy, nil},
			{toolAround, map[string]any{"id": id}},
			{toolAround, nil},
		} {
			if text, isErr := call(t, cs, c.name, c.args); isErr {
				t.Errorf("%s(%v): %s", c.name, c.args, text)
			}
		}
	}
	db := roDB(t, e.path)
	for q, args := range seen {
		rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			rows.Scan(&id, &parent, &notused, &detail)
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			fullScan := tableScan.MatchString(step)
			// A project's index searched by the project alone walks all its actions.
			projectWalk := projectOnly.MatchString(step)
			if fullScan || projectWalk {
				t.Errorf("full scan in\n%s\nplan:\n  %s", strings.Join(strings.Fields(q), " "), strings.Join(plan, "\n  "))
				break
			}
		}
	}
	if len(seen) < 30 {
		t.Errorf("only %d distinct queries traced", len(seen))
	}
	t.Logf("%d distinct queries, each an index search", len(seen))
}
