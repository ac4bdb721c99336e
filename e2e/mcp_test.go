package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/realclient"
	"github.com/observerhq/observer/pkg/store"
)

// mcpListBudget is the byte budget of observer-mcp's whole tools/list answer.
const mcpListBudget = 3840 // 15 tools (get_project_memory took it from 3584)

// mcpCorpusSuite is a suite whose store holds the corpus, scanned by `observerctl scan` (nothing
// running) and then full-text indexed, as the writer of a running suite would do.
func mcpCorpusSuite(t *testing.T) *suite {
	t.Helper()
	clientHome := corpusHome(t)
	s := newSuite(t, "HOME="+clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	if out, errOut, code := s.ctl(nil, "scan", "--json"); code != 0 {
		t.Fatalf("scan: exit %d\n%s\n%s", code, out, errOut)
	}
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, s.home+"/observer.db")
	if err != nil {
		t.Fatal(err)
	}
	for {
		n, err := st.IndexOutputs(ctx, 5000)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	st.Close()
	return s
}

// mcpProc is observer-mcp running as an AI client spawns it: stdin and stdout carry the protocol.
type mcpProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	stderr bytes.Buffer
}

func (s *suite) startMCP(t *testing.T) *mcpProc {
	t.Helper()
	p := &mcpProc{t: t, cmd: exec.Command(s.bin("observer-mcp")), lines: make(chan string, 100)}
	p.cmd.Env, p.cmd.Dir = s.env, t.TempDir() // a working directory in no recorded project
	p.cmd.Stderr = &p.stderr
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				p.lines <- line
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		p.in.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	return p
}

func (p *mcpProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write to observer-mcp: %v\nstderr:\n%s", err, &p.stderr)
	}
}

// recv returns observer-mcp's next line on stdout; every answer must come within 10 s.
func (p *mcpProc) recv() string {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("observer-mcp closed stdout\nstderr:\n%s", &p.stderr)
		}
		return line
	case <-time.After(10 * time.Second):
		p.t.Fatalf("no answer from observer-mcp within 10 s\nstderr:\n%s", &p.stderr)
	}
	return ""
}

type mcpReply struct {
	ID     json.RawMessage `json:"id"`
	Result struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError    bool `json:"isError"`
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *mcpProc) reply() (mcpReply, string) {
	p.t.Helper()
	line := p.recv()
	var r mcpReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		p.t.Fatalf("stdout line is not JSON-RPC: %q: %v", line, err)
	}
	return r, line
}

func (p *mcpProc) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if r, line := p.reply(); r.Result.ServerInfo.Name != "observer" {
		p.t.Fatalf("initialize: %s", line)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// call sends a tools/call and returns the tool's text answer and whether it is a tool error.
func (p *mcpProc) call(id int, tool string, args map[string]any) (string, bool) {
	p.t.Helper()
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	p.send(string(req))
	r, line := p.reply()
	if r.Error != nil || len(r.Result.Content) != 1 {
		p.t.Fatalf("%s: %s", tool, line)
	}
	return r.Result.Content[0].Text, r.Result.IsError
}

// closeAndWait ends the session the way a client does, by closing stdin: the server exits 0.
func (p *mcpProc) closeAndWait() {
	p.t.Helper()
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			p.t.Errorf("observer-mcp exit: %v\nstderr:\n%s", err, &p.stderr)
		}
	case <-time.After(10 * time.Second):
		p.t.Fatal("observer-mcp still running 10 s after its stdin closed")
	}
	// Logs go to stderr, as JSON lines; stdout carried only the protocol (reply checked that).
	for _, l := range strings.Split(strings.TrimSpace(p.stderr.String()), "\n") {
		if l != "" && !json.Valid([]byte(l)) {
			p.t.Errorf("stderr line is not a JSON log record: %q", l)
		}
	}
}

// busiest returns the project with the most actions and its most recent session.
func busiest(t *testing.T, s *suite) (project, session string) {
	t.Helper()
	db := s.db()
	if err := db.QueryRow(`SELECT project FROM actions WHERE project != '' GROUP BY project ORDER BY count(*) DESC, project LIMIT 1`).Scan(&project); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT session_id FROM sessions WHERE project = ? ORDER BY last_seen DESC LIMIT 1`, project).Scan(&session); err != nil {
		t.Fatal(err)
	}
	return project, session
}

var longWord = regexp.MustCompile(`\b[a-z]{12,}\b`)

// TestMCP_Stdio drives the real observer-mcp binary over stdio on the corpus store: initialize,
// tools/list within its byte budget, calls whose answers agree with the store, and a clean exit
// when the client closes stdin.
func TestMCP_Stdio(t *testing.T) {
	s := mcpCorpusSuite(t)
	project, session := busiest(t, s)
	p := s.startMCP(t)
	p.initialize()

	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	r, line := p.reply()
	if len(r.Result.Tools) != 15 {
		t.Errorf("%d tools listed, want 15: %s", len(r.Result.Tools), line)
	}
	if len(line) > mcpListBudget {
		t.Errorf("tools/list answer is %d bytes, over %d", len(line), mcpListBudget)
	}
	t.Logf("tools/list answer: %d bytes", len(line))

	text, isErr := p.call(2, "get_session_summary", map[string]any{"project": project})
	var sum struct {
		Sess string `json:"sess"`
		Acts int    `json:"acts"`
	}
	if err := json.Unmarshal([]byte(text), &sum); err != nil || isErr {
		t.Fatalf("get_session_summary: %s", text)
	}
	if want := s.count(`SELECT count(*) FROM actions WHERE session_id = ?`, session); sum.Sess != session || sum.Acts != want {
		t.Errorf("summary of %s: %d acts, want %s with %d", sum.Sess, sum.Acts, session, want)
	}

	// A word from a stored tool output is found, in an output that holds it.
	rows, err := s.db().Query(`SELECT unpack(output) FROM action_outputs ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	var word string
	for rows.Next() && word == "" {
		var output string
		rows.Scan(&output)
		word = longWord.FindString(output)
	}
	rows.Close()
	if word == "" {
		t.Fatalf("no long word in the corpus outputs")
	}
	text, isErr = p.call(3, "search_past_outputs", map[string]any{"query": word, "project": "*", "limit": 1})
	var found struct {
		Hits []struct {
			ID int64 `json:"id"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(text), &found); err != nil || isErr || len(found.Hits) != 1 {
		t.Fatalf("search %q: %s", word, text)
	}
	if n := s.count(`SELECT count(*) FROM actions a JOIN action_outputs o USING (event_id) WHERE a.id = ? AND unpack(o.output) LIKE ?`,
		found.Hits[0].ID, "%"+word+"%"); n != 1 {
		t.Errorf("search %q found action %d, whose output does not hold it", word, found.Hits[0].ID)
	}
	p.closeAndWait()
}

// TestMCP_StdioBadInput: a malformed line, an unknown tool and invalid arguments get JSON-RPC or
// tool errors within the bound, and the server goes on answering; with no store yet, the tools
// answer "no data yet".
func TestMCP_StdioBadInput(t *testing.T) {
	s := newSuite(t) // nothing ever ran: no store
	p := s.startMCP(t)
	p.initialize()

	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":`)
	if r, line := p.reply(); r.Error == nil || r.Error.Code != -32700 || string(r.ID) != "null" {
		t.Errorf("malformed line: %s", line)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	if r, line := p.reply(); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "unknown tool") {
		t.Errorf("unknown tool: %s", line)
	}
	if text, isErr := p.call(3, "get_action_details", map[string]any{"id": "seven"}); !isErr || !strings.Contains(text, "id") {
		t.Errorf("invalid argument: %q (error %v)", text, isErr)
	}
	if text, isErr := p.call(4, "get_session_summary", map[string]any{"sesion": "x"}); !isErr || !strings.Contains(text, "unknown argument") {
		t.Errorf("misspelt argument: %q (error %v)", text, isErr)
	}
	if text, isErr := p.call(5, "get_session_summary", nil); isErr || !strings.HasPrefix(text, "no data yet") {
		t.Errorf("no store: %q (error %v)", text, isErr)
	}
	p.closeAndWait()
}

// TestMCP_Inspector: the real MCP Inspector CLI lists observer-mcp's tools and calls one, and an
// unknown tool fails it with the server's error.
func TestMCP_Inspector(t *testing.T) {
	insp := realclient.Find(t, "OBSERVER_MCP_INSPECTOR_BIN", "mcp-inspector", "npm install -g @modelcontextprotocol/inspector@0.15.0")
	s := mcpCorpusSuite(t)
	project, session := busiest(t, s)
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		// The inspector passes the server only the variables given with -e.
		full := append([]string{"--cli", s.bin("observer-mcp"), "-e", "OBSERVER_HOME=" + s.home}, args...)
		cmd := exec.CommandContext(ctx, insp, full...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = t.TempDir(), s.env, 5*time.Second
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run("--method", "tools/list")
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list output: %v\n%s", err, out)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"check_file_freshness", "get_file_history", "get_session_summary", "search_past_outputs",
		"get_last_test_result", "get_failure_context", "get_action_details", "check_command_freshness",
		"get_session_recovery_context", "get_project_patterns", "get_cost_summary", "get_redundancy_report", "list_actions_around"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tool %s not listed: %v", want, names)
		}
	}

	out, err = run("--method", "tools/call", "--tool-name", "get_session_summary", "--tool-arg", "project="+project)
	if err != nil {
		t.Fatalf("tools/call: %v\n%s", err, out)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	var sum struct {
		Sess string `json:"sess"`
		Acts int    `json:"acts"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].Text), &sum) != nil {
		t.Fatalf("tools/call output: %s", out)
	}
	if want := s.count(`SELECT count(*) FROM actions WHERE session_id = ?`, session); sum.Sess != session || sum.Acts != want {
		t.Errorf("summary through the inspector: %s with %d acts, want %s with %d", sum.Sess, sum.Acts, session, want)
	}

	out, err = run("--method", "tools/call", "--tool-name", "no_such_tool")
	if err == nil || !strings.Contains(out, "unknown tool") {
		t.Errorf("unknown tool through the inspector: err %v\n%s", err, out)
	}
}
