package mcpwrap_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/mcpwrap"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// memPub collects the published events.
type memPub struct {
	mu  sync.Mutex
	evs []event.Event
}

func (m *memPub) Publish(_ context.Context, ev *event.Event) (bus.Result, error) {
	if err := ev.Validate(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evs = append(m.evs, *ev)
	return bus.Published, nil
}

func (m *memPub) events() []event.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]event.Event(nil), m.evs...)
}

// msg is a decoded line from the proxy.
type msg struct {
	raw    string
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// session is one client talking to a Proxy run in-process over pipes.
type session struct {
	tb      testing.TB
	in      *io.PipeWriter
	out     *io.PipeReader
	pub     *memPub
	done    chan error
	mu      sync.Mutex
	got     []msg
	arrived chan struct{}
}

// fakeCmd runs this test binary as the fake server.
func fakeCmd() []string { return []string{os.Args[0], "-test.run=^$"} }

func fakeEnv(extra ...string) []string {
	return append(append(os.Environ(), "MCPWRAP_FAKE=1"), extra...)
}

// start runs a Proxy in front of the fake server, whose environment gets env.
func start(tb testing.TB, opts mcpwrap.Options, env ...string) *session {
	tb.Helper()
	if opts.Command == nil {
		opts.Command = fakeCmd()
	}
	opts.Env = fakeEnv(env...)
	s := &session{tb: tb, pub: &memPub{}, done: make(chan error, 1), arrived: make(chan struct{}, 1)}
	if opts.Publisher == nil {
		opts.Publisher = s.pub
	}
	opts.StopGrace = 500 * time.Millisecond
	p, err := mcpwrap.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.in, s.out = inW, outR
	go func() {
		s.done <- p.Run(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				var m msg
				if e := json.Unmarshal([]byte(line), &m); e != nil {
					tb.Errorf("the proxy wrote a line that is not JSON: %q", line)
				}
				m.raw = strings.TrimSuffix(line, "\n")
				s.mu.Lock()
				s.got = append(s.got, m)
				s.mu.Unlock()
				select {
				case s.arrived <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	tb.Cleanup(func() {
		s.in.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			tb.Error("Run did not return 10 s after the client closed its input")
		}
	})
	return s
}

func (s *session) send(line string) {
	s.tb.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.tb.Fatalf("send %s: %v", line, err)
	}
}

// call sends a request with a numeric id.
func (s *session) call(id int, method string, params any) {
	s.tb.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	s.send(string(b))
}

func (s *session) tool(id int, name string, args any) {
	s.tb.Helper()
	s.call(id, "tools/call", map[string]any{"name": name, "arguments": args})
}

// wait returns the first message that match accepts, failing after d.
func (s *session) wait(d time.Duration, what string, match func(msg) bool) msg {
	s.tb.Helper()
	deadline := time.After(d)
	for {
		s.mu.Lock()
		for _, m := range s.got {
			if match(m) {
				s.mu.Unlock()
				return m
			}
		}
		s.mu.Unlock()
		select {
		case <-s.arrived:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			var got []string
			for _, m := range s.got {
				got = append(got, m.raw)
			}
			s.tb.Fatalf("no %s within %v; got:\n%s", what, d, strings.Join(got, "\n"))
		}
	}
}

// answer waits for the response with the given id (a JSON literal: `1`, `"a"`, `null`).
func (s *session) answer(id string, d time.Duration) msg {
	s.tb.Helper()
	return s.wait(d, "answer to id "+id, func(m msg) bool { return m.Method == "" && string(m.ID) == id })
}

func (s *session) count(match func(msg) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.got {
		if match(m) {
			n++
		}
	}
	return n
}

// initialize does the handshake as Claude Code would.
func (s *session) initialize() msg {
	s.tb.Helper()
	s.call(0, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"roots": map[string]any{}},
		"clientInfo": map[string]any{"name": "claude-code", "version": "2.1.197"}})
	m := s.answer("0", 10*time.Second)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

func toolNames(tb testing.TB, m msg) []string {
	tb.Helper()
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		tb.Fatalf("tools/list result %s: %v", m.Result, err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names
}

// text returns the first text content of a tools/call result.
func text(tb testing.TB, m msg) string {
	tb.Helper()
	if m.Error != nil {
		tb.Fatalf("tools/call failed: %d %s", m.Error.Code, m.Error.Message)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Content) == 0 {
		tb.Fatalf("tools/call result %s: %v", m.Result, err)
	}
	return res.Content[0].Text
}

func sha(b string) string {
	sum := sha256.Sum256([]byte(b))
	return hex.EncodeToString(sum[:8])
}

var traceNames = []string{"observer_trace_history", "observer_trace_stats", "observer_trace_search", "observer_trace_replay"}

// TestProxy_Transparent: what the proxy does not own crosses it byte for byte, both ways, including
// a request of the server's to the client and the client's answer.
func TestProxy_Transparent(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "server-read.log")
	s := start(t, mcpwrap.Options{}, "FAKE_LOG="+logPath)
	init := s.initialize()
	if !strings.Contains(init.raw, `"serverInfo":{"name":"fake-server"`) {
		t.Errorf("initialize answer changed: %s", init.raw)
	}

	// A request with odd spacing and key order reaches the server as it was sent.
	odd := `{"params" : {"arguments":{"text":"h\u00e9llo"},"name":"echo"}, "method":"tools/call","id":"str-id","jsonrpc":"2.0"}`
	s.send(odd)
	if got := text(t, s.answer(`"str-id"`, 5*time.Second)); got != "héllo" {
		t.Errorf("echo = %q", got)
	}
	// The server's answer reaches the client as it was written.
	s.tool(7, "raw", map[string]any{})
	if got, want := s.answer("7", 5*time.Second).raw, fmt.Sprintf(mcpwrapRaw(), "7"); got != want {
		t.Errorf("raw answer changed by the proxy:\n got %s\nwant %s", got, want)
	}
	// The server asks the client for its roots; the client's answer goes back unchanged.
	s.tool(8, "roots", map[string]any{})
	req := s.wait(5*time.Second, "roots/list request from the server", func(m msg) bool { return m.Method == "roots/list" })
	if req.raw != `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}` {
		t.Errorf("server request changed: %s", req.raw)
	}
	s.send(`{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[{"uri":"file:///w","name":"w"}]}}`)
	if got := text(t, s.answer("8", 5*time.Second)); got != `roots: {"roots":[{"uri":"file:///w","name":"w"}]}` {
		t.Errorf("roots answer = %q", got)
	}
	s.in.Close()
	<-s.done
	s.done <- nil // for the cleanup
	logged, _ := os.ReadFile(logPath)
	if !strings.Contains(string(logged), odd+"\n") {
		t.Errorf("the server did not read the request unchanged; it read:\n%s", logged)
	}
	if !strings.Contains(string(logged), `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[{"uri":"file:///w","name":"w"}]}}`+"\n") {
		t.Errorf("the server did not get the client's answer unchanged; it read:\n%s", logged)
	}
}

func mcpwrapRaw() string { return rawAnswer }

// TestProxy_ToolsList: hidden and capped tools leave the list and cannot be called; the trace tools
// are appended, last page only when the server paginates.
func TestProxy_ToolsList(t *testing.T) {
	t.Run("HideAndCap", func(t *testing.T) {
		s := start(t, mcpwrap.Options{Hide: []string{"crash", "observer_trace_replay"}, MaxTools: 3})
		s.initialize()
		s.call(1, "tools/list", map[string]any{})
		got := toolNames(t, s.answer("1", 5*time.Second))
		want := []string{"echo", "slow", "hang", "observer_trace_history", "observer_trace_stats", "observer_trace_search"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("tools = %v, want %v", got, want)
		}
		for i, name := range []string{"crash", "counter", "observer_trace_replay"} {
			s.tool(10+i, name, map[string]any{})
			m := s.answer(fmt.Sprint(10+i), 5*time.Second)
			if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "hidden") {
				t.Errorf("call of %s: %s, want a -32602 hidden error", name, m.raw)
			}
		}
		s.tool(20, "echo", map[string]any{"text": "still here"})
		if got := text(t, s.answer("20", 5*time.Second)); got != "still here" {
			t.Errorf("echo after refusals = %q", got)
		}
	})
	t.Run("Pages", func(t *testing.T) {
		s := start(t, mcpwrap.Options{MaxTools: 7}, "FAKE_PAGES=1")
		s.initialize()
		s.call(1, "tools/list", map[string]any{})
		first := s.answer("1", 5*time.Second)
		if got := toolNames(t, first); strings.Join(got, ",") != "echo,slow,hang,crash,fail" {
			t.Errorf("page 1 = %v", got)
		}
		if !strings.Contains(string(first.Result), `"nextCursor":"page2"`) {
			t.Errorf("page 1 lost its cursor: %s", first.Result)
		}
		s.call(2, "tools/list", map[string]any{"cursor": "page2"})
		got := toolNames(t, s.answer("2", 5*time.Second))
		want := append([]string{"rpcerror", "counter"}, traceNames...)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("page 2 = %v, want %v (cap 7 across pages)", got, want)
		}
		s.tool(3, "raw", map[string]any{})
		if m := s.answer("3", 5*time.Second); m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("call of a capped tool: %s", m.raw)
		}
	})
	t.Run("ServerWithoutTools", func(t *testing.T) {
		s := start(t, mcpwrap.Options{}, "FAKE_NO_TOOLS=1")
		init := s.initialize()
		if !strings.Contains(string(init.Result), `"capabilities":{"logging":{},"tools":{}}`) {
			t.Errorf("initialize answer: %s, want the tools capability added after the server's", init.Result)
		}
		s.call(1, "tools/list", map[string]any{})
		if got := toolNames(t, s.answer("1", 5*time.Second)); strings.Join(got, ",") != strings.Join(traceNames, ",") {
			t.Errorf("tools = %v, want the trace tools only", got)
		}
	})
}

// TestProxy_Concurrent: a slow call does not hold up a fast one sent after it.
func TestProxy_Concurrent(t *testing.T) {
	s := start(t, mcpwrap.Options{})
	s.initialize()
	t0 := time.Now()
	s.tool(1, "slow", map[string]any{"ms": 3000})
	for i := range 20 {
		s.tool(100+i, "echo", map[string]any{"text": fmt.Sprint(i)})
	}
	for i := range 20 {
		if got := text(t, s.answer(fmt.Sprint(100+i), 2*time.Second)); got != fmt.Sprint(i) {
			t.Errorf("echo %d = %q", i, got)
		}
	}
	fast := time.Since(t0)
	if s.count(func(m msg) bool { return string(m.ID) == "1" }) != 0 {
		t.Fatal("the slow call was answered before the fast ones")
	}
	text(t, s.answer("1", 6*time.Second))
	t.Logf("20 fast calls answered in %v behind a 3 s call", fast.Round(time.Millisecond))
}

// TestProxy_ServerCrash: a server that dies mid-call answers every pending request, and every later
// one, with an error that says why; nothing hangs.
func TestProxy_ServerCrash(t *testing.T) {
	s := start(t, mcpwrap.Options{CallTimeout: time.Minute})
	s.initialize()
	s.tool(1, "hang", map[string]any{})
	s.tool(2, "slow", map[string]any{"ms": 30000})
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	s.tool(3, "crash", map[string]any{})
	for _, id := range []string{"1", "2", "3"} {
		m := s.answer(id, 5*time.Second)
		if m.Error == nil || m.Error.Code != mcpwrap.CodeServerGone {
			t.Fatalf("pending %s after the crash: %s", id, m.raw)
		}
		if !strings.Contains(m.Error.Message, "exit status 3") || !strings.Contains(m.Error.Message, "fake: boom") {
			t.Errorf("error %q does not give the exit status and the last stderr line", m.Error.Message)
		}
		if strings.Contains(m.Error.Message, "abcdefghijklmnop") {
			t.Errorf("error %q carries the secret from stderr", m.Error.Message)
		}
	}
	t.Logf("pending requests answered %v after the crash", time.Since(t0).Round(time.Millisecond))
	// Answered with "server gone", not left to the call timeout.
	s.call(4, "tools/list", map[string]any{})
	if m := s.answer("4", 30*time.Second); m.Error == nil || m.Error.Code != mcpwrap.CodeServerGone {
		t.Errorf("request after the crash: %s", m.raw)
	}
	// The three calls are recorded with the error.
	waitEvents(t, s.pub, 3)
	for _, ev := range s.pub.events() {
		if !strings.Contains(ev.MCPCall.Error, "exit status 3") {
			t.Errorf("event for %s: error %q", ev.MCPCall.Tool, ev.MCPCall.Error)
		}
	}
}

func waitEvents(tb testing.TB, p *memPub, n int) []event.Event {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(p.events()) < n {
		if time.Now().After(deadline) {
			tb.Fatalf("%d events published, want %d", len(p.events()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p.events()
}

// TestProxy_Timeout: a request the server never answers gets -32001 after CallTimeout and the server
// is told to cancel it; progress notifications keep a long call alive.
func TestProxy_Timeout(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "server-read.log")
	s := start(t, mcpwrap.Options{CallTimeout: 400 * time.Millisecond}, "FAKE_LOG="+logPath)
	s.initialize()
	t0 := time.Now()
	s.tool(1, "hang", map[string]any{})
	m := s.answer("1", 30*time.Second)
	d := time.Since(t0)
	if m.Error == nil || m.Error.Code != mcpwrap.CodeTimeout || !strings.Contains(m.Error.Message, "call_timeout") {
		t.Fatalf("hang: %s", m.raw)
	}
	if d < 400*time.Millisecond {
		t.Errorf("timeout after %v, want 400ms or more", d)
	}
	// A call reporting progress every 100 ms for 1 s outlives the 400 ms timeout.
	s.call(2, "tools/call", map[string]any{"name": "progress", "arguments": map[string]any{"ms": 1000},
		"_meta": map[string]any{"progressToken": "tok-2"}})
	if got := text(t, s.answer("2", 5*time.Second)); got != "done" {
		t.Errorf("progress = %q", got)
	}
	if n := s.count(func(m msg) bool { return m.Method == "notifications/progress" }); n < 5 {
		t.Errorf("%d progress notifications relayed, want about 10", n)
	}
	// The server can still serve.
	s.tool(3, "echo", map[string]any{"text": "ok"})
	text(t, s.answer("3", 5*time.Second))
	logged, _ := os.ReadFile(logPath)
	if !strings.Contains(string(logged), `"method":"notifications/cancelled","params":{"reason":"timed out in observer-mcp wrap","requestId":1}`) {
		t.Errorf("the server was not told to cancel the timed-out request; it read:\n%s", logged)
	}
	evs := waitEvents(t, s.pub, 3)
	if !strings.Contains(evs[0].MCPCall.Error, "did not answer") {
		t.Errorf("timed-out call recorded with error %q", evs[0].MCPCall.Error)
	}
}

// TestProxy_BadInput: malformed client input is answered with the JSON-RPC error it deserves, never
// forwarded, and the session goes on.
func TestProxy_BadInput(t *testing.T) {
	s := start(t, mcpwrap.Options{})
	s.initialize()
	s.send(`{"jsonrpc":"2.0","id":1,"method":`) // cut short
	if m := s.answer("null", 5*time.Second); m.Error == nil || m.Error.Code != -32700 {
		t.Errorf("truncated JSON: %s", m.raw)
	}
	for _, line := range []string{
		`[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, // a batch
		`{"jsonrpc":"1.0","id":3,"method":"tools/list"}`,   // wrong version
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,   // id of the wrong type
		`"just a string"`,
	} {
		before := s.count(func(m msg) bool { return m.Error != nil && m.Error.Code == -32600 })
		s.send(line)
		s.wait(5*time.Second, "invalid request error for "+line, func(m msg) bool { return m.Error != nil && m.Error.Code == -32600 && string(m.ID) == "null" })
		deadline := time.Now().Add(5 * time.Second)
		for s.count(func(m msg) bool { return m.Error != nil && m.Error.Code == -32600 }) == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	s.send("")
	s.send("   ")
	// An id reused while its request is pending is refused; the first request still gets its answer.
	s.tool(5, "slow", map[string]any{"ms": 300})
	s.tool(5, "echo", map[string]any{"text": "dup"})
	first := s.wait(5*time.Second, "an answer to id 5", func(m msg) bool { return string(m.ID) == "5" })
	if first.Error == nil || first.Error.Code != -32600 || !strings.Contains(first.Error.Message, "already in use") {
		t.Errorf("duplicate id: %s", first.raw)
	}
	s.wait(5*time.Second, "the slow call's answer", func(m msg) bool { return string(m.ID) == "5" && m.Error == nil })
	// Unknown tools and methods are the server's to answer.
	s.tool(6, "no_such_tool", map[string]any{})
	if m := s.answer("6", 5*time.Second); m.Error == nil || m.Error.Message != "fake: unknown tool no_such_tool" {
		t.Errorf("unknown tool: %s", m.raw)
	}
	s.call(7, "no/such/method", nil)
	if m := s.answer("7", 5*time.Second); m.Error == nil || m.Error.Code != -32601 {
		t.Errorf("unknown method: %s", m.raw)
	}
	// Invalid arguments of a trace tool are the proxy's.
	s.tool(8, "observer_trace_replay", map[string]any{"seq": "one"})
	if m := s.answer("8", 5*time.Second); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("trace tool with bad arguments: %s", m.raw)
	}
	s.tool(9, "echo", map[string]any{"text": "alive"})
	if got := text(t, s.answer("9", 5*time.Second)); got != "alive" {
		t.Errorf("echo after bad input = %q", got)
	}
	if n := s.count(func(m msg) bool { return string(m.ID) == "null" }); n != 5 {
		t.Errorf("%d errors with a null id, want 5 (one per malformed line, none for blank lines)", n)
	}
}

// TestProxy_Record: each tools/call is one event whose sizes and hashes are those of the raw bytes,
// and whose error text is redacted.
func TestProxy_Record(t *testing.T) {
	s := start(t, mcpwrap.Options{SessionID: "sess-1", Project: "/p", Redact: []*regexp.Regexp{regexp.MustCompile(`acct-[0-9]+`)}})
	s.initialize()
	args := `{"text":"hello",  "n":1}`
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + args + `}}`)
	ok := s.answer("1", 5*time.Second)
	s.tool(2, "fail", map[string]any{})
	s.answer("2", 5*time.Second)
	s.tool(3, "rpcerror", map[string]any{})
	s.answer("3", 5*time.Second)
	evs := waitEvents(t, s.pub, 3)
	e := evs[0]
	if e.Kind != event.KindMCPCall || e.Client != "claude-code" || e.SessionID != "sess-1" || e.Project != "/p" || e.Source != "observer-mcp" {
		t.Errorf("envelope = %+v", e)
	}
	m := e.MCPCall
	if m.Server != "fake-server" || m.Tool != "echo" || m.RequestID != "1" {
		t.Errorf("call = %+v", m)
	}
	if m.InputBytes != int64(len(args)) || m.InputHash != sha(args) {
		t.Errorf("input %d bytes %s, want %d %s (the raw bytes)", m.InputBytes, m.InputHash, len(args), sha(args))
	}
	if m.OutputBytes != int64(len(ok.Result)) || m.OutputHash != sha(string(ok.Result)) {
		t.Errorf("output %d bytes %s, want %d %s", m.OutputBytes, m.OutputHash, len(ok.Result), sha(string(ok.Result)))
	}
	if m.TokenEstimate != (int64(len(ok.Result))+3)/4 || m.DurationMs <= 0 || m.Error != "" {
		t.Errorf("call = %+v", m)
	}
	failed := evs[1].MCPCall.Error
	if !strings.HasPrefix(failed, "tool error: cannot open") || strings.Contains(failed, "hunter2") || strings.Contains(failed, "acct-123456") {
		t.Errorf("tool error recorded as %q: want the text with the secret and the account redacted", failed)
	}
	if evs[2].MCPCall.Error != "fake: bad arguments" {
		t.Errorf("JSON-RPC error recorded as %q", evs[2].MCPCall.Error)
	}
	if evs[0].ID == evs[1].ID {
		t.Error("two calls share an event id")
	}
}

type traceResult struct {
	Calls []struct {
		Seq        int64  `json:"seq"`
		Tool       string `json:"tool"`
		Error      string `json:"error"`
		Input      string `json:"input"`
		Output     string `json:"output"`
		OutputHash string `json:"output_hash"`
		ReplayOf   int64  `json:"replay_of"`
	} `json:"calls"`
	Session int64 `json:"session_calls"`
}

func traceJSON(tb testing.TB, m msg, v any) {
	tb.Helper()
	if err := json.Unmarshal([]byte(text(tb, m)), v); err != nil {
		tb.Fatalf("trace result %s: %v", m.Result, err)
	}
}

// TestProxy_TraceTools: history, stats, search and replay over this session's calls.
func TestProxy_TraceTools(t *testing.T) {
	s := start(t, mcpwrap.Options{})
	s.initialize()
	s.tool(1, "echo", map[string]any{"text": "one"})
	s.answer("1", 5*time.Second)
	s.tool(2, "counter", map[string]any{})
	s.answer("2", 5*time.Second)
	s.tool(3, "fail", map[string]any{})
	s.answer("3", 5*time.Second)
	s.tool(4, "echo", map[string]any{"text": "two"})
	s.answer("4", 5*time.Second)

	s.tool(10, "observer_trace_history", map[string]any{"limit": 3})
	var h traceResult
	traceJSON(t, s.answer("10", 5*time.Second), &h)
	if len(h.Calls) != 3 || h.Calls[0].Tool != "echo" || h.Calls[0].Seq != 4 || h.Calls[2].Tool != "counter" || h.Session != 4 {
		t.Errorf("history = %+v, want the last 3 calls newest first of 4", h)
	}
	if h.Calls[0].Input != "" || h.Calls[0].Output != "" {
		t.Error("history returned payloads with raw payloads off")
	}
	s.tool(11, "observer_trace_history", map[string]any{"errors": true})
	traceJSON(t, s.answer("11", 5*time.Second), &h)
	if len(h.Calls) != 1 || h.Calls[0].Tool != "fail" || !strings.Contains(h.Calls[0].Error, "[REDACTED") {
		t.Errorf("error history = %+v", h)
	}

	s.tool(12, "observer_trace_stats", nil)
	var st struct {
		Server string `json:"server"`
		Calls  int    `json:"calls"`
		Errors int    `json:"errors"`
		Tools  []struct {
			Tool  string  `json:"tool"`
			Calls int     `json:"calls"`
			P95   float64 `json:"p95_ms"`
		} `json:"tools"`
	}
	traceJSON(t, s.answer("12", 5*time.Second), &st)
	if st.Server != "fake-server" || st.Calls != 4 || st.Errors != 1 || len(st.Tools) != 3 || st.Tools[0].Tool != "echo" || st.Tools[0].Calls != 2 || st.Tools[0].P95 <= 0 {
		t.Errorf("stats = %+v", st)
	}

	s.tool(13, "observer_trace_search", map[string]any{"query": "COUNT"})
	traceJSON(t, s.answer("13", 5*time.Second), &h)
	if len(h.Calls) != 1 || h.Calls[0].Tool != "counter" {
		t.Errorf("search = %+v", h)
	}

	// Replay: the same echo matches, the counter does not.
	var r struct {
		Seq      int64  `json:"seq"`
		ReplayOf int64  `json:"replay_of"`
		Match    bool   `json:"match"`
		Error    string `json:"error"`
	}
	s.tool(14, "observer_trace_replay", map[string]any{"seq": 1})
	traceJSON(t, s.answer("14", 5*time.Second), &r)
	if !r.Match || r.ReplayOf != 1 || r.Seq != 5 {
		t.Errorf("replay of echo = %+v, want a match recorded as call 5", r)
	}
	s.tool(15, "observer_trace_replay", map[string]any{"seq": 2})
	traceJSON(t, s.answer("15", 5*time.Second), &r)
	if r.Match {
		t.Errorf("replay of counter = %+v, want no match", r)
	}
	s.tool(16, "observer_trace_replay", map[string]any{"seq": 99})
	if m := s.answer("16", 5*time.Second); !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("replay of an unknown seq: %s", m.raw)
	}
	// The replays were calls to the server: recorded, the trace tools' own calls were not.
	evs := waitEvents(t, s.pub, 6)
	if len(evs) != 6 || !strings.HasPrefix(evs[4].MCPCall.RequestID, "observer-wrap-") {
		t.Errorf("%d events; the fifth %+v", len(evs), evs[4].MCPCall)
	}
}

// TestProxy_RawPayloads: with raw payloads on, the trace tools return the arguments and results,
// redacted.
func TestProxy_RawPayloads(t *testing.T) {
	s := start(t, mcpwrap.Options{RawPayloads: true, Redact: []*regexp.Regexp{regexp.MustCompile(`acct-[0-9]+`)}})
	s.initialize()
	s.tool(1, "echo", map[string]any{"text": "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz for acct-998877"})
	s.answer("1", 5*time.Second)
	s.tool(2, "observer_trace_search", map[string]any{"query": "for [REDACTED]"})
	var h traceResult
	traceJSON(t, s.answer("2", 5*time.Second), &h)
	if len(h.Calls) != 1 {
		t.Fatalf("search in payloads = %+v", h)
	}
	c := h.Calls[0]
	for _, p := range []string{c.Input, c.Output} {
		if !strings.Contains(p, "[REDACTED") || strings.Contains(p, "abcdefghijkl") || strings.Contains(p, "998877") {
			t.Errorf("payload %q not redacted", p)
		}
	}
}

// TestProxy_ClientEOF: a client that closes its input right after a request still gets the answer,
// and Run returns once it is given.
func TestProxy_ClientEOF(t *testing.T) {
	s := start(t, mcpwrap.Options{})
	s.initialize()
	s.tool(1, "slow", map[string]any{"ms": 500})
	s.in.Close()
	if got := text(t, s.answer("1", 5*time.Second)); got != "slept" {
		t.Errorf("slow = %q", got)
	}
	select {
	case <-s.done:
		s.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the last answer")
	}
}

// TestProxy_Stop: Run returns, and the server is gone, however the session ends: a server that
// ignores the end of its input and SIGTERM is killed; a client that stops reading or a cancelled
// context end the session too.
func TestProxy_Stop(t *testing.T) {
	t.Run("StubbornServer", func(t *testing.T) {
		s := start(t, mcpwrap.Options{}, "FAKE_STUBBORN=1")
		s.initialize()
		t0 := time.Now()
		s.in.Close()
		select {
		case <-s.done:
			s.done <- nil
		case <-time.After(60 * time.Second):
			t.Fatal("Run did not return")
		}
		// StopGrace is 500ms in these tests: input closed, 500ms, SIGTERM, 500ms, SIGKILL.
		if d := time.Since(t0); d < time.Second {
			t.Errorf("stopped in %v, want the two 500ms graces first", d)
		}
	})
	t.Run("ClientStopsReading", func(t *testing.T) {
		s := start(t, mcpwrap.Options{})
		s.initialize()
		s.out.Close()
		s.tool(1, "echo", map[string]any{"text": "nobody reads this"})
		select {
		case <-s.done:
			s.done <- nil
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after the client stopped reading")
		}
	})
	t.Run("ContextCancelled", func(t *testing.T) {
		p, err := mcpwrap.New(mcpwrap.Options{Command: fakeCmd(), Env: fakeEnv(), StopGrace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		inR, inW := io.Pipe()
		defer inW.Close()
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx, inR, io.Discard) }()
		time.Sleep(100 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	})
}

func TestProxy_BadCommand(t *testing.T) {
	p, err := mcpwrap.New(mcpwrap.Options{Command: []string{filepath.Join(t.TempDir(), "no-such-server")}})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Run(context.Background(), strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no-such-server") {
		t.Errorf("Run = %v, want an error naming the command", err)
	}
	if _, err := mcpwrap.New(mcpwrap.Options{}); err == nil {
		t.Error("New without a command succeeded")
	}
}

func TestClientName(t *testing.T) {
	for in, want := range map[string]string{"claude-code": "claude-code", "codex-mcp-client": "codex",
		"cursor-vscode": "cursor", "inspector-client": "inspector-client", "": ""} {
		if got := mcpwrap.ClientName(in); got != want {
			t.Errorf("ClientName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSessionFromEnv(t *testing.T) {
	env := map[string]string{"CODEX_THREAD_ID": "thread", "CLAUDE_CODE_SESSION_ID": "claude"}
	if got := mcpwrap.SessionFromEnv(func(k string) string { return env[k] }); got != "claude" {
		t.Errorf("SessionFromEnv = %q, want Claude Code's first", got)
	}
	delete(env, "CLAUDE_CODE_SESSION_ID")
	if got := mcpwrap.SessionFromEnv(func(k string) string { return env[k] }); got != "thread" {
		t.Errorf("SessionFromEnv = %q", got)
	}
}
