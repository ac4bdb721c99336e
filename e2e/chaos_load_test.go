package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
)

// The producers of TestChaos. Each keeps a ledger of what it produced; none calls t.Fatal (they
// run in goroutines): failures are recorded and judged by the checks.

// proxyLedger records the synthetic requests sent through the proxy.
type proxyLedger struct {
	mu        sync.Mutex
	sent      int
	skipped   int                  // ticks with too many requests still in flight
	answered  map[string]time.Time // response id the client read in full -> when
	errsDown  []string             // failures during proxy down time
	errsOther []string
}

// chaosResponseID finds the fake API's message or response id in an answer.
var chaosResponseID = regexp.MustCompile(`(?:msg|resp)_fake_[0-9]+`)

// proxyLoad sends cfg.rate requests per second through the proxy until ctx ends, then waits for
// those in flight.
func (r *chaosRun) proxyLoad(ctx context.Context) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 128}}
	defer client.CloseIdleConnections()
	l := &r.proxy
	l.answered = map[string]time.Time{}
	// A ticker drops ticks when this goroutine is late (a loaded machine): send what the elapsed
	// time is due instead, so that the rate holds on average.
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.rate))
	defer tick.Stop()
	var inflight atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	start, n := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for due := int(time.Since(start).Seconds() * r.cfg.rate); n < due; n++ {
			if inflight.Load() >= 128 {
				l.mu.Lock()
				l.skipped++
				l.mu.Unlock()
				continue
			}
			inflight.Add(1)
			i := n
			wg.Go(func() {
				defer inflight.Add(-1)
				r.proxyRequest(client, i)
			})
		}
	}
}

// proxyRequest sends one request of one of four shapes; session ids name the synthetic load.
func (r *chaosRun) proxyRequest(client *http.Client, n int) {
	kinds := []string{"anthropic-stream", "anthropic", "responses-stream", "responses"}
	kind := kinds[n%len(kinds)]
	session := fmt.Sprintf("chaos-proxy-%d", n/50)
	var path, body, done string
	switch kind {
	case "anthropic-stream", "anthropic":
		path = "/v1/messages"
		body = fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"chaos %d"}]}`, kind == "anthropic-stream", n)
		done = `"message_stop"`
		if kind == "anthropic" {
			done = `"end_turn"`
		}
	default:
		path = "/v1/responses"
		body = fmt.Sprintf(`{"model":"gpt-5.2-codex","stream":%t,"input":"chaos %d"}`, kind == "responses-stream", n)
		done = `response.completed`
		if kind == "responses" {
			done = `"completed"`
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.proxyAddr+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if strings.HasPrefix(kind, "anthropic") {
		req.Header.Set("X-Api-Key", "sk-test")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("X-Claude-Code-Session-Id", session)
	} else {
		req.Header.Set("Authorization", "Bearer sk-test")
		req.Header.Set("Session-Id", session)
	}
	start := time.Now()
	resp, err := client.Do(req)
	var data []byte
	if err == nil {
		data, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("status %d: %.200s", resp.StatusCode, data)
		}
	}
	id := chaosResponseID.Find(data)
	if err == nil && (id == nil || !bytes.Contains(data, []byte(done))) {
		err = fmt.Errorf("incomplete answer (%d bytes)", len(data))
	}
	end := time.Now()
	l := &r.proxy
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	if err == nil {
		l.answered[string(id)] = end
		return
	}
	msg := fmt.Sprintf("%s #%d at +%v: %v", kind, n, start.Sub(r.start).Round(time.Millisecond), err)
	if r.proxyDownAt(start, end) {
		l.errsDown = append(l.errsDown, msg)
	} else {
		l.errsOther = append(l.errsOther, msg)
	}
}

// clientLedger records the runs of one real client.
type clientLedger struct {
	runs, ok  int
	errsDown  []string
	errsOther []string
}

// clientLoop runs a real client (claude or codex) through the proxy, one run after another, with
// cfg.clientPause between runs, in repo with HOME the directory observer-watch follows.
func (r *chaosRun) clientLoop(ctx context.Context, name, repo string) {
	l := &clientLedger{}
	r.mu.Lock()
	if r.clientRuns == nil {
		r.clientRuns = map[string]*clientLedger{}
	}
	r.clientRuns[name] = l
	r.mu.Unlock()
	base := "http://" + r.proxyAddr
	for i := 0; ctx.Err() == nil; i++ {
		prompt := fmt.Sprintf("list the files (chaos run %d)", i)
		var bin string
		var env, args []string
		if name == "claude" {
			bin, env, args = r.claude, realclient.ClaudeEnv(r.clientHome, base), realclient.ClaudeArgs(prompt)
		} else {
			bin, env, args = r.codex, realclient.CodexEnv(r.clientHome), realclient.CodexArgs(base+"/v1", prompt, false)
		}
		start := time.Now()
		out, err := runClient(repo, env, bin, args...)
		if err == nil && !strings.Contains(out, fakeapi.TextAfterTool) {
			err = fmt.Errorf("no %q in its output: %.300s", fakeapi.TextAfterTool, out)
		}
		end := time.Now()
		down := r.proxyDownAt(start, end)
		r.mu.Lock()
		l.runs++
		switch {
		case err == nil:
			l.ok++
		case down:
			l.errsDown = append(l.errsDown, fmt.Sprintf("run %d at +%v: %v", i, start.Sub(r.start).Round(time.Second), err))
		default:
			l.errsOther = append(l.errsOther, fmt.Sprintf("run %d at +%v (%v): %v", i, start.Sub(r.start).Round(time.Second), end.Sub(start).Round(time.Millisecond), err))
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(r.cfg.clientPause):
		}
	}
}

// runClient runs a client with realclient.Exec; the error carries the end of its stderr.
func runClient(dir string, env []string, bin string, args ...string) (string, error) {
	out, errOut, err := realclient.Exec(dir, env, bin, args...)
	if err != nil {
		err = fmt.Errorf("%w; stderr: %s", err, tailLog(errOut, 3))
	}
	return out, err
}

// lineLedger records the synthetic Claude Code transcript lines written.
type lineLedger struct {
	mu      sync.Mutex
	files   []string
	prompts []string // prompt texts (the action's target)
	tools   []string // tool_use ids
	msgs    []string // message ids carrying usage
}

// unread is the number of bytes of the synthetic transcripts the watcher has not read yet.
func (l *lineLedger) unread(s *suite) int64 {
	l.mu.Lock()
	files := append([]string(nil), l.files...)
	l.mu.Unlock()
	var n int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		n += max(0, fi.Size()-readCursor(s, f).Offset)
	}
	return n
}

// transcriptLoop appends Claude Code turns (a prompt, an assistant message with usage and a Bash
// tool call, the tool's result) at cfg.lineRate lines per second, 200 turns per session file.
func (r *chaosRun) transcriptLoop(ctx context.Context) {
	const cwd = "/tmp/chaosproj"
	dir := filepath.Join(r.clientHome, ".claude", "projects", "-tmp-chaosproj")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.t.Errorf("transcripts: %v", err)
		return
	}
	l := &r.lines
	every := time.Duration(float64(time.Second) / r.cfg.lineRate)
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var sid string
	for n := 0; ; n++ {
		if n%200 == 0 {
			if f != nil {
				f.Close()
			}
			sid = fmt.Sprintf("c4a05000-0000-4000-8000-%012d", n/200)
			path := filepath.Join(dir, sid+".jsonl")
			var err error
			if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
				r.t.Errorf("transcripts: %v", err)
				return
			}
			l.mu.Lock()
			l.files = append(l.files, path)
			l.mu.Unlock()
		}
		prompt := fmt.Sprintf("chaos prompt %d", n)
		toolID, msgID := fmt.Sprintf("toolu_chaos_%d", n), fmt.Sprintf("msg_chaos_%d", n)
		head := func(kind string, k int) string {
			return fmt.Sprintf(`"type":%q,"uuid":"chaos-%d-%d","sessionId":%q,"cwd":%q,"timestamp":%q`,
				kind, n, k, sid, cwd, time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
		}
		lines := []string{
			fmt.Sprintf(`{%s,"message":{"role":"user","content":%q}}`, head("user", 0), prompt),
			fmt.Sprintf(`{%s,"requestId":"req_chaos_%d","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"ls chaos-%d"}}],"stop_reason":"tool_use","usage":{"input_tokens":12,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":0}}}`,
				head("assistant", 1), n, msgID, toolID, n),
			fmt.Sprintf(`{%s,"message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":"a.txt\nb.txt","is_error":false}]}}`, head("user", 2), toolID),
		}
		for i, line := range lines {
			if _, err := f.WriteString(line + "\n"); err != nil {
				r.t.Errorf("transcripts: %v", err)
				return
			}
			l.mu.Lock()
			switch i {
			case 0:
				l.prompts = append(l.prompts, prompt)
			case 1:
				l.msgs = append(l.msgs, msgID)
				l.tools = append(l.tools, toolID)
			}
			l.mu.Unlock()
			select {
			case <-ctx.Done():
				if i == len(lines)-1 {
					return
				}
				// Finish the turn so that every tool call has its result.
			case <-time.After(every):
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// hookLedger records the `observerctl hook` calls.
type hookLedger struct {
	mu     sync.Mutex
	ok     []string // tool_use ids of the calls that exited 0
	failed []hookFailure
}

// hookFailure is one `observerctl hook` call that did not exit 0.
type hookFailure struct {
	id       string // its tool_use id
	msg      string
	from, to time.Time
	code     int // its exit code; -1 when it did not exit
}

// hookLoop calls `observerctl hook` cfg.hookRate times per second (two at a time at most).
func (r *chaosRun) hookLoop(ctx context.Context) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.hookRate))
	defer tick.Stop()
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cmd := exec.Command(r.s.bin("observerctl"), "hook")
			cmd.Env = r.s.env
			cmd.Stdin = bytes.NewReader(hookPayload("chaos", i))
			var errb bytes.Buffer
			cmd.Stderr = &errb
			start := time.Now()
			err := cmd.Run()
			l := &r.hooks
			l.mu.Lock()
			defer l.mu.Unlock()
			if err != nil {
				code := -1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				l.failed = append(l.failed, hookFailure{id: fmt.Sprintf("chaos-%d", i), from: start, to: time.Now(), code: code,
					msg: fmt.Sprintf("hook %d at +%v (%v): %v %s", i, start.Sub(r.start).Round(time.Millisecond),
						time.Since(start).Round(time.Millisecond), err, strings.TrimSpace(errb.String()))})
				return
			}
			l.ok = append(l.ok, fmt.Sprintf("chaos-%d", i))
		})
	}
}

// mcpLedger records the tools/call requests sent through `observer-mcp wrap`.
type mcpLedger struct {
	mu       sync.Mutex
	wraps    int
	answered []mcpKey // calls that got an answer
	failed   []string
	runs     map[string]mcpRun // by session
}

// mcpRun is one `observer-mcp wrap` process: when it ran, and how many mcp_call events it said it
// could not record (its log: "mcp_call event lost", neither published nor spooled; "events still
// queued at exit were not published"; "mcp_call events dropped" from a full queue).
type mcpRun struct {
	from, to time.Time
	lost     int
}

// mcpLost counts the mcp_call events a wrap process's log (its stderr, JSON lines) says it could
// not record.
func mcpLost(stderr string) int {
	lost, dropped := 0, 0
	for _, line := range strings.Split(stderr, "\n") {
		var l struct {
			Msg     string `json:"msg"`
			Queued  int    `json:"queued"`
			Dropped int    `json:"dropped"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		switch l.Msg {
		case "mcp_call event lost":
			lost++
		case "events still queued at exit were not published":
			lost += l.Queued
		case "bus too slow; mcp_call events dropped":
			dropped = max(dropped, l.Dropped) // a running total, logged every 100
		}
	}
	return lost + dropped
}

type mcpKey struct{ session, request string }

// mcpLoop runs `observer-mcp wrap -- observer-mcp` processes, each for up to 40 tools/call
// requests one cfg.mcpEvery apart, its session a fresh CLAUDE_CODE_SESSION_ID.
func (r *chaosRun) mcpLoop(ctx context.Context) {
	dir := r.t.TempDir()
	tools := []string{
		`{"name":"get_cost_summary","arguments":{"days":1}}`,
		`{"name":"get_session_summary","arguments":{}}`,
		`{"name":"search_past_outputs","arguments":{"query":"chaos"}}`,
	}
	l := &r.mcp
	fail := func(format string, args ...any) {
		l.mu.Lock()
		l.failed = append(l.failed, fmt.Sprintf("+%v ", time.Since(r.start).Round(time.Millisecond))+fmt.Sprintf(format, args...))
		l.mu.Unlock()
	}
	for k := 0; ctx.Err() == nil; k++ {
		session := fmt.Sprintf("chaos-mcp-%d", k)
		cmd := exec.Command(r.s.bin("observer-mcp"), "wrap", "--", r.s.bin("observer-mcp"))
		cmd.Dir = dir
		cmd.Env = append(append([]string{}, r.s.env...), "CLAUDE_CODE_SESSION_ID="+session)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			fail("start wrap: %v", err)
			return
		}
		from := time.Now()
		l.mu.Lock()
		l.wraps++
		l.mu.Unlock()
		answers := make(chan mcpAnswer, 16)
		go func() {
			defer close(answers)
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var a mcpAnswer
				if json.Unmarshal(sc.Bytes(), &a) == nil && a.ID != nil {
					answers <- a
				}
			}
		}()
		call := func(id, method, params string) (mcpAnswer, error) {
			if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%q,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
				return mcpAnswer{}, err
			}
			timeout := time.After(60 * time.Second)
			for {
				select {
				case a, ok := <-answers:
					if !ok {
						return mcpAnswer{}, errors.New("wrap closed its output")
					}
					var got string
					if json.Unmarshal(*a.ID, &got) == nil && got == id {
						return a, nil
					}
				case <-timeout:
					return mcpAnswer{}, errors.New("no answer within 60s")
				}
			}
		}
		if _, err := call("init", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"chaos"}}`); err != nil {
			fail("%s initialize: %v", session, err)
		} else {
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for i := 0; i < 40 && ctx.Err() == nil; i++ {
				id := fmt.Sprintf("c-%d", i)
				a, err := call(id, "tools/call", tools[(k+i)%len(tools)])
				if err != nil {
					fail("%s %s: %v", session, id, err)
					break
				}
				l.mu.Lock()
				l.answered = append(l.answered, mcpKey{session, id})
				l.mu.Unlock()
				if a.Error != nil {
					fail("%s %s: JSON-RPC error %s", session, id, *a.Error)
				}
				time.Sleep(r.cfg.mcpEvery)
			}
		}
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				fail("%s: wrap exited: %v %s", session, err, tailLog(stderr.String(), 3))
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			fail("%s: wrap did not exit within 30 s of its input closing", session)
		}
		l.mu.Lock()
		if l.runs == nil {
			l.runs = map[string]mcpRun{}
		}
		l.runs[session] = mcpRun{from: from, to: time.Now(), lost: mcpLost(stderr.String())}
		l.mu.Unlock()
	}
}

type mcpAnswer struct {
	ID     *json.RawMessage `json:"id"`
	Error  *json.RawMessage `json:"error"`
	Result *json.RawMessage `json:"result"`
}
