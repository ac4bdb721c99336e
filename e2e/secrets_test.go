package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/scrubtest"
	"github.com/observerhq/observer/pkg/store"
)

// secretsMCPEnv makes this test binary a small stdio MCP server instead of running the tests:
// TestSecrets_NeverStored wraps it with `observer-mcp wrap`.
const secretsMCPEnv = "OBSERVER_E2E_SECRETS_MCP"

// serverStderrPrefix starts every line the fake MCP server writes on stderr: observer-mcp wrap
// relays a server's stderr to its own unchanged (it is the server's output, for the client), so
// those lines are left out of the check of observer's logs.
const serverStderrPrefix = "fake-mcp-stderr: "

func init() {
	if os.Getenv(secretsMCPEnv) == "1" {
		secretsMCPServer(os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

// secretsMCPServer answers initialize and tools/list, and three tools that fail with the text
// they are given: leak (a tool error), rpcfail (a JSON-RPC error) and crash (the text on stderr,
// then exit 3).
func secretsMCPServer(in io.Reader, out io.Writer) {
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue
		}
		var answer map[string]any
		switch m.Method {
		case "initialize":
			answer = map[string]any{"result": map[string]any{"protocolVersion": "2025-06-18",
				"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "leaky", "version": "1"}}}
		case "tools/list":
			var tools []map[string]any
			for _, n := range []string{"leak", "rpcfail", "crash"} {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			answer = map[string]any{"result": map[string]any{"tools": tools}}
		case "tools/call":
			text := m.Params.Arguments.Text
			switch m.Params.Name {
			case "leak":
				answer = map[string]any{"result": map[string]any{"isError": true,
					"content": []map[string]string{{"type": "text", "text": "cannot do it: " + text}}}}
			case "rpcfail":
				answer = map[string]any{"error": map[string]any{"code": -32000, "message": "rpc failed: " + text}}
			case "crash":
				fmt.Fprintln(os.Stderr, serverStderrPrefix+text)
				os.Exit(3)
			}
		}
		if answer == nil {
			answer = map[string]any{"error": map[string]any{"code": -32601, "message": "no such method"}}
		}
		answer["jsonrpc"], answer["id"] = "2.0", m.ID
		b, _ := json.Marshal(answer)
		out.Write(append(b, '\n'))
	}
}

// planted is every secret the test puts somewhere, with the name of its format.
type planted struct {
	formats []scrubtest.Format
	secrets map[string]string // secret -> format name
}

func plant() planted {
	p := planted{formats: scrubtest.Formats(), secrets: map[string]string{}}
	for _, f := range p.formats {
		for _, s := range f.Secrets {
			p.secrets[s] = f.Name
		}
	}
	// The credentials of the proxy requests' headers and query.
	p.secrets[proxyAPIKey] = "x-api-key header"
	p.secrets[proxyBearer] = "authorization header"
	p.secrets[proxyGeminiKey] = "gemini key= query"
	return p
}

var (
	proxyAPIKey = "sk-ant-api03-" + strings.Repeat("Hd4", 30) + "AA"
	proxyBearer = "e2e" + strings.Repeat("Bz7q", 10)
	// proxyGeminiKey is in no format the scrubber knows: only the proxy, which forwarded it, can
	// take it out of the upstream's echo.
	proxyGeminiKey = "e2e-gemini-" + strings.Repeat("Kp4w", 8)
)

// leaks reads every regular file under root but the skipped directories, and the extra texts
// (named), and returns, per file or text, the formats whose secrets it holds.
func (p planted) leaks(tb testing.TB, root string, skip []string, extra map[string]string) map[string][]string {
	tb.Helper()
	found := map[string][]string{}
	check := func(name string, data []byte) {
		seen := map[string]bool{}
		for s, f := range p.secrets {
			if !seen[f] && bytes.Contains(data, []byte(s)) {
				seen[f] = true
				found[name] = append(found[name], f)
			}
		}
		sort.Strings(found[name])
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		for _, s := range skip {
			if path == s {
				return filepath.SkipDir
			}
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		check(place(rel), data)
		return nil
	})
	for name, text := range extra {
		check(name, []byte(text))
	}
	for name, fs := range found { // a place of many files lists a format once
		sort.Strings(fs)
		found[name] = slicesCompact(fs)
	}
	return found
}

// place names the place a file under $OBSERVER_HOME is part of: the spool and the JetStream
// store are many files each.
func place(rel string) string {
	switch first, _, _ := strings.Cut(filepath.ToSlash(rel), "/"); first {
	case "spool":
		return "spool/"
	case "bus", "jetstream":
		return "JetStream store (" + first + "/)"
	}
	return rel
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// storeColumns are the places in the store that keep text from outside, each a query of its rows.
var storeColumns = []struct{ place, query string }{
	{"actions.target (prompts)", `SELECT target FROM actions WHERE type = 'user_prompt'`},
	{"actions.target (tool inputs)", `SELECT target FROM actions WHERE type != 'user_prompt'`},
	{"action_outputs.output (tool outputs)", `SELECT unpack(output) FROM action_outputs`},
	{"messages.text (conversations)", `SELECT unpack(text) FROM messages`},
	{"actions.error (tool and API errors)", `SELECT error FROM actions WHERE error != ''`},
	{"api_turns.error_message", `SELECT error_message FROM api_turns`},
	{"api_turns.error_class", `SELECT error_class FROM api_turns`},
	{"hook_events (every column)", `SELECT event || ' ' || cwd || ' ' || tool_name || ' ' || tool_use_id || ' ' || matcher FROM hook_events`},
	{"mcp_calls.error", `SELECT error FROM mcp_calls`},
}

// storeLeaks returns, per column of the store that keeps outside text, the formats it holds.
func (p planted) storeLeaks(s *suite) map[string][]string {
	s.tb.Helper()
	db := s.db()
	found := map[string][]string{}
	for _, c := range storeColumns {
		rows, err := db.Query(c.query)
		if err != nil {
			s.tb.Fatalf("%s: %v", c.query, err)
		}
		seen := map[string]bool{}
		for rows.Next() {
			var text string
			rows.Scan(&text)
			for secret, f := range p.secrets {
				if !seen[f] && strings.Contains(text, secret) {
					seen[f] = true
					found[c.place] = append(found[c.place], f)
				}
			}
		}
		rows.Close()
		sort.Strings(found[c.place])
	}
	return found
}

func reportLeaks(tb testing.TB, when string, found map[string][]string) {
	tb.Helper()
	var places []string
	n := 0
	for place, fs := range found {
		places = append(places, place)
		n += len(fs)
	}
	sort.Strings(places)
	for _, place := range places {
		tb.Errorf("%s: %s holds %d secrets: %s", when, place, len(found[place]), strings.Join(found[place], ", "))
	}
	if n > 0 {
		tb.Errorf("%s: %d secrets leaked in %d places", when, n, len(places))
	}
}

// filesHolding returns how many files under dir hold s.
func filesHolding(dir, s string) int {
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if data, err := os.ReadFile(path); err == nil && bytes.Contains(data, []byte(s)) {
				n++
			}
		}
		return nil
	})
	return n
}

// occurrences counts s in the regular files under dir.
func occurrences(dir, s string) int {
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if data, err := os.ReadFile(path); err == nil {
				n += bytes.Count(data, []byte(s))
			}
		}
		return nil
	})
	return n
}

// echoUpstream is a model API that answers every request with an error echoing the request's
// URL, headers and body, as a misconfigured gateway does.
func echoUpstream(tb testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg := fmt.Sprintf("invalid request: url=%s headers=%v body=%s", r.URL, r.Header, body)
		e, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": msg}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(e)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// proxyRequests sends one request per format through the proxy at addr, the format's line in the
// prompt and credentials in the headers, and a Gemini request with its key in the query.
func (p planted) proxyRequests(tb testing.TB, addr string) {
	tb.Helper()
	gemini := `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}`
	resp, err := http.Post("http://"+addr+"/v1beta/models/gemini-2.5-pro:generateContent?key="+proxyGeminiKey,
		"application/json", strings.NewReader(gemini))
	if err != nil {
		tb.Fatalf("proxy request: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		tb.Fatalf("proxy answered the Gemini request %d, want the upstream's 400", resp.StatusCode)
	}
	for _, f := range p.formats {
		body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5-20250929", "max_tokens": 100,
			"messages": []map[string]string{{"role": "user", "content": "please check:\n" + f.Line}}})
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", proxyAPIKey)
		req.Header.Set("Authorization", "Bearer "+proxyBearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatalf("proxy request: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			tb.Fatalf("proxy answered %d, want the upstream's 400", resp.StatusCode)
		}
	}
}

// hooks calls `observerctl hook` once per format, the format's line in every field of the payload
// observer reads past (prompt, tool input and response, message) and in the one it keeps (the
// reason, notification type or source). It returns what the calls wrote on stderr.
func (p planted) hooks(s *suite, session string) string {
	s.tb.Helper()
	events := []struct{ name, keptField string }{
		{"SessionEnd", "reason"}, {"Notification", "notification_type"}, {"SessionStart", "source"}, {"PreCompact", "trigger"},
		{"PostToolUse", "reason"}, {"UserPromptSubmit", "reason"},
	}
	var mu sync.Mutex
	var stderr strings.Builder
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range jobs {
				f, ev := p.formats[i], events[i%len(events)]
				payload, _ := json.Marshal(map[string]any{"session_id": session, "cwd": "/tmp", "hook_event_name": ev.name,
					"transcript_path": "/home/u/.claude/projects/-tmp/" + session + ".jsonl", "tool_name": "Bash",
					"tool_use_id": fmt.Sprintf("toolu_%s_%d", session, i), ev.keptField: f.Line, "prompt": f.Line,
					"message": f.Line, "tool_input": map[string]any{"command": f.Line}, "tool_response": map[string]any{"stdout": f.Line}})
				_, errOut, code := s.ctl(payload, "hook")
				if code != 0 {
					s.tb.Errorf("hook %s: exit %d: %s", f.Name, code, errOut)
				}
				mu.Lock()
				stderr.WriteString(errOut)
				mu.Unlock()
			}
		})
	}
	for i := range p.formats {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return stderr.String()
}

// wrapSession runs one client session through `observer-mcp wrap` around the fake server: per
// format, a tool error and a JSON-RPC error carrying the format's line, then a crash whose last
// stderr line carries secrets. The server's command line carries secrets too. It returns what
// observer-mcp wrote on stderr, the server's relayed lines left out.
func (p planted) wrapSession(s *suite, session string) string {
	t := s.tb
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"wrap", "--", self, "--token", p.formats[0].Line, p.formats[len(p.formats)-1].Line}
	cmd := exec.Command(s.bin("observer-mcp"), args...)
	cmd.Env = append(append([]string{}, s.env...), secretsMCPEnv+"=1", "CLAUDE_CODE_SESSION_ID="+session)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReaderSize(outp, 1<<20)
	id := 0
	call := func(method string, params any) {
		t.Helper()
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatalf("write to observer-mcp wrap: %v\n%s", err, &errb)
		}
		done := make(chan error, 1)
		go func() {
			for {
				line, err := out.ReadBytes('\n')
				if err != nil {
					done <- err
					return
				}
				var m struct {
					ID int `json:"id"`
				}
				if json.Unmarshal(line, &m) == nil && m.ID == id {
					done <- nil
					return
				}
			}
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: no answer from observer-mcp wrap: %v\n%s", method, err, &errb)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no answer from observer-mcp wrap within 20 s\n%s", method, &errb)
		}
	}
	call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "claude-code", "version": "2.1.197"}})
	in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	call("tools/list", map[string]any{})
	for _, f := range p.formats {
		call("tools/call", map[string]any{"name": "leak", "arguments": map[string]any{"text": f.Line}})
		call("tools/call", map[string]any{"name": "rpcfail", "arguments": map[string]any{"text": f.Line}})
	}
	call("tools/call", map[string]any{"name": "crash", "arguments": map[string]any{"text": p.formats[1].Line + " " + p.formats[2].Line}})
	in.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("observer-mcp wrap still running 30 s after its input closed\n%s", &errb)
	}
	var own strings.Builder
	for _, l := range strings.SplitAfter(errb.String(), "\n") {
		if !strings.HasPrefix(l, serverStderrPrefix) {
			own.WriteString(l)
		}
	}
	return own.String()
}

// transcript writes a Claude Code session with every format in a prompt, a tool input (a Bash
// command), a tool output, a tool error and an API error, then all of them in one output; it ends
// with a sentinel prompt.
func (p planted) transcript(s *suite, session, cwd string) {
	cc := newCCSession(s.tb, filepath.Join(s.home, "clienthome", ".claude", "projects"), session, cwd)
	var all []string
	for i, f := range p.formats {
		cc.prompt("check this for me: "+f.Line, time.Time{})
		cc.tool(fmt.Sprintf("toolu_ok_%d", i), "Bash", map[string]any{"command": "echo '" + f.Line + "'"}, "out: "+f.Line, "")
		cc.tool(fmt.Sprintf("toolu_err_%d", i), "Bash", map[string]any{"command": "false"}, "", "Exit code 1\n"+f.Line)
		cc.append(time.Time{}, map[string]any{"type": "system", "subtype": "api_error", "level": "error", "content": "API Error: " + f.Line})
		all = append(all, f.Line)
	}
	cc.tool("toolu_all", "Bash", map[string]any{"command": "cat .env secrets/*"}, strings.Join(all, "\n"), "")
	cc.prompt("secrets-e2e sentinel "+session, time.Time{})
}

// waitFor polls query until it returns at least want.
func (s *suite) waitFor(d time.Duration, want int, query string, args ...any) int {
	s.tb.Helper()
	d = patient(d)
	deadline := time.Now().Add(d)
	got := 0
	for time.Now().Before(deadline) {
		if got = s.count(query, args...); got >= want {
			return got
		}
		time.Sleep(250 * time.Millisecond)
	}
	s.tb.Fatalf("%s = %d after %v, want at least %d", query, got, d, want)
	return got
}

// startStandaloneProxy runs observer-proxy alone, as its systemd unit does, on the suite's
// [proxy] addr; stop stops it and returns what it wrote.
func (s *suite) startStandaloneProxy() (addr string, stop func() string) {
	s.tb.Helper()
	addr = envValue(s.env, "OBSERVER_PROXY_ADDR")
	cmd := exec.Command(s.bin("observer-proxy"))
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		s.tb.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			s.tb.Fatalf("observer-proxy not listening on %s after 20 s:\n%s", addr, &out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return addr, func() string {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		return out.String()
	}
}

// TestSecrets_NeverStored plants every credential format of package scrubtest in every place
// observer takes text from: a Claude Code transcript (prompts, tool inputs, outputs, tool errors,
// API errors) read by observer-watch, proxy requests whose upstream echoes them in its error
// (and a Gemini request whose key, in no format the scrubber knows, it echoes too),
// hook payloads through `observerctl hook`, MCP tool and JSON-RPC errors, a crashing server's
// stderr and a server command line through `observer-mcp wrap`; first with the bus down (the
// events wait in the spool), then with `observerctl up` running and its writer paused (they wait
// in the JetStream store), then with the writer storing them. At each stage it reads every file
// under $OBSERVER_HOME (the store and its WAL, the JetStream store, the spool, the logs, the state
// files) and what the commands wrote on stderr, and at the end what the MCP tool
// search_past_outputs returns, for each raw secret: none may be anywhere.
func TestSecrets_NeverStored(t *testing.T) {
	p := plant()
	up := echoUpstream(t)
	s := newSuite(t, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL, "OBSERVER_PROXY_GEMINI_UPSTREAM="+up.URL)
	clientHome := filepath.Join(s.home, "clienthome")
	skip := []string{clientHome} // the transcripts are the clients' own files, the test's input
	stderrs := map[string]string{}

	// The bus is down: everything goes to the spool.
	stderrs["observerctl hook stderr (bus down)"] = p.hooks(s, "secrets-down")
	stderrs["observer-mcp wrap stderr (bus down)"] = p.wrapSession(s, "secrets-down")
	addr, stopProxy := s.startStandaloneProxy()
	p.proxyRequests(t, addr)
	deadline := time.Now().Add(20 * time.Second)
	for filesHolding(filepath.Join(s.home, "spool"), `"api_turn"`) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	stderrs["observer-proxy output (bus down)"] = stopProxy()
	spool := filepath.Join(s.home, "spool")
	for _, kind := range []string{`"kind":"hook"`, `"kind":"mcp_call"`, `"kind":"api_turn"`} {
		if filesHolding(spool, kind) == 0 {
			t.Fatalf("no %s event in the spool", kind)
		}
	}
	if filesHolding(spool, "[REDACTED:") == 0 {
		t.Fatal("the spool holds no redaction mark: the secrets did not reach it")
	}
	reportLeaks(t, "bus down", p.leaks(t, s.home, skip, stderrs))

	// The suite runs: the spool drains, and everything is planted again on the live paths. The
	// writer is paused meanwhile, so that the events wait in the JetStream store to be read there.
	s.start()
	writer := s.componentPID("writer")
	if writer == 0 {
		t.Fatal("no writer pid in status")
	}
	if err := syscall.Kill(writer, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(writer, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	cwd := t.TempDir()
	p.transcript(s, "secrets-live", cwd)
	stderrs["observerctl hook stderr"] = p.hooks(s, "secrets-live")
	stderrs["observer-mcp wrap stderr"] = p.wrapSession(s, "secrets-live")
	p.proxyRequests(t, envValue(s.env, "OBSERVER_PROXY_ADDR"))
	// Everything planted on the live paths waits in the JetStream store: the transcript's last
	// prompt, and one event per hook call, MCP call and proxy request.
	n := len(p.formats)
	bus := filepath.Join(s.home, "bus")
	want := map[string]int{"secrets-e2e sentinel": 1, `"kind":"hook"`: n, `"kind":"mcp_call"`: 2*n + 1, `"kind":"api_turn"`: n}
	inBus := func() (missing []string) {
		for what, min := range want {
			if got := occurrences(bus, what); got < min {
				missing = append(missing, fmt.Sprintf("%s %d/%d", what, got, min))
			}
		}
		return missing
	}
	deadline = time.Now().Add(30 * time.Second)
	for len(inBus()) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if missing := inBus(); len(missing) > 0 {
		t.Errorf("the JetStream store does not hold all the events while the writer is paused: %v", missing)
	}
	reportLeaks(t, "writer paused", p.leaks(t, bus, nil, nil))
	resume()

	s.waitFor(90*time.Second, 1, `SELECT count(*) FROM actions WHERE session_id = 'secrets-live' AND target LIKE 'secrets-e2e sentinel%'`)
	s.waitFor(60*time.Second, 2*n, `SELECT count(*) FROM api_turns`)
	s.waitFor(60*time.Second, 2*(2*n+1), `SELECT count(*) FROM mcp_calls`)
	s.waitFor(60*time.Second, 2*n, `SELECT count(*) FROM hook_events`)
	// Each place holds the marks, so the secrets did reach it and were scrubbed on the way.
	for _, q := range []string{
		`SELECT count(*) FROM actions WHERE type = 'user_prompt' AND target LIKE '%[REDACTED:%'`,
		`SELECT count(*) FROM actions WHERE type = 'run_command' AND target LIKE '%[REDACTED:%'`,
		`SELECT count(*) FROM action_outputs WHERE unpack(output) LIKE '%[REDACTED:%'`,
		`SELECT count(*) FROM actions WHERE error LIKE '%[REDACTED:%'`,
		`SELECT count(*) FROM actions WHERE type = 'api_error' AND error LIKE '%[REDACTED:%'`,
		`SELECT count(*) FROM api_turns WHERE error_message LIKE '%[REDACTED:%'`,
		`SELECT count(*) FROM mcp_calls WHERE error LIKE '%[REDACTED:%'`,
		`SELECT count(*) FROM hook_events WHERE matcher LIKE '%[REDACTED:%'`,
	} {
		if s.count(q) == 0 {
			t.Errorf("%s = 0: the secrets never reached this place", q)
		}
	}
	reportLeaks(t, "suite running", p.leaks(t, s.home, skip, stderrs))
	reportLeaks(t, "store", p.storeLeaks(s))
	for _, c := range storeColumns {
		t.Logf("%s: %d rows", c.place, s.count(`SELECT count(*) FROM (`+c.query+`)`))
	}

	// Stopped: the WAL is checkpointed into the store; index the outputs (as the writer does in
	// the background) and ask observer-mcp what it returns for them.
	s.stop()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(s.home, "observer.db"))
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
	mcp := s.startMCP(t)
	mcp.initialize()
	answer, isErr := mcp.call(1, "search_past_outputs", map[string]any{"query": "REDACTED", "project": "*", "limit": 100})
	if isErr || !strings.Contains(answer, "REDACTED") {
		t.Errorf("search_past_outputs REDACTED: %.300s", answer)
	}
	stderrs["search_past_outputs answer"] = answer
	// A secret's longest word finds no output. (The answer that says so repeats the query: it is
	// kept out of the check below.)
	for i, f := range p.formats {
		word := longestWord(f.Secrets[0])
		if len(word) < 12 {
			continue
		}
		if a, _ := mcp.call(2+i, "search_past_outputs", map[string]any{"query": word, "project": "*"}); !strings.HasPrefix(a, "no tool output matches") {
			t.Errorf("search_past_outputs finds a word of the %s secret %s: %.300s", f.Name, word, a)
		}
	}
	mcp.closeAndWait()
	stderrs["observer-mcp stderr"] = mcp.stderr.String()
	reportLeaks(t, "suite stopped", p.leaks(t, s.home, skip, stderrs))
}

// longestWord returns the longest run of letters and digits in s.
func longestWord(s string) string {
	best := ""
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if len(w) > len(best) {
			best = w
		}
	}
	return best
}

func envValue(env []string, key string) string {
	v := ""
	for _, e := range env {
		if x, ok := strings.CutPrefix(e, key+"="); ok {
			v = x
		}
	}
	return v
}
