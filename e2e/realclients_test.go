package e2e

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
)

// TestRealClients_ThroughProxy runs the real Claude Code and Codex CLIs, offline, against the
// project's fake model API through observer-proxy started by `observerctl up`. Each completes a
// tool round trip, and every api_turn in the store equals, bucket by bucket, the usage the fake API
// returned for that message, and carries the client's session id.
func TestRealClients_ThroughProxy(t *testing.T) {
	claude, codex := realclient.FindClaude(t), realclient.FindCodex(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, CacheWrite5m: 222, CacheWrite1h: 111, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr,
		"OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL)
	s.start()
	base := "http://" + proxyAddr

	home, repo := realclient.Dirs(t)
	t0 := time.Now()
	out := realclient.Run(t, repo, realclient.ClaudeEnv(home, base), claude, realclient.ClaudeArgs("list the files")...)
	t.Logf("claude through the proxy in %v", time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Fatalf("claude printed %q", out)
	}
	if _, _, err := fakeapi.RoundTrip(fake.Requests(), "/v1/messages", "Bash"); err != nil {
		t.Fatalf("claude: %v", err)
	}
	home, repo = realclient.Dirs(t)
	t0 = time.Now()
	out = realclient.Run(t, repo, realclient.CodexEnv(home), codex, realclient.CodexArgs(base+"/v1", "list the files", true)...)
	t.Logf("codex through the proxy in %v", time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Fatalf("codex printed %q", out)
	}
	if _, _, err := fakeapi.RoundTrip(fake.Requests(), "/v1/responses", "exec_command"); err != nil {
		t.Fatalf("codex: %v", err)
	}

	// Every model call the fake answered is one api_turn with the same figures.
	var turns []fakeapi.Request
	for _, r := range fake.Requests() {
		if r.ResponseID != "" && r.Method == "POST" {
			turns = append(turns, r)
		}
	}
	s.waitCount(20*time.Second, len(turns), "SELECT count(*) FROM api_turns")
	db := s.db()
	for _, r := range turns {
		var provider, client, session, model string
		var in, out, cr, cc, cc1h, reasoning int64
		var status int
		err := db.QueryRow(`SELECT provider, client, session_id, model, input_tokens, output_tokens, cache_read_tokens,
			cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, status FROM api_turns WHERE message_id = ?`, r.ResponseID).
			Scan(&provider, &client, &session, &model, &in, &out, &cr, &cc, &cc1h, &reasoning, &status)
		if err != nil {
			rows, _ := db.Query("SELECT endpoint, message_id, status, stream, partial, error_class FROM api_turns")
			var have []string
			for rows.Next() {
				var a, b, e string
				var c, d, f int
				rows.Scan(&a, &b, &c, &d, &f, &e)
				have = append(have, fmt.Sprintf("%s %s %d stream=%d partial=%d %s", a, b, c, d, f, e))
			}
			rows.Close()
			t.Fatalf("turn %s (%s): %v; stored turns: %v", r.ResponseID, r.Path, err, have)
		}
		var want [6]int64
		wantClient := "claude-code"
		if r.Provider == fakeapi.ProviderAnthropic {
			want = [6]int64{r.Usage["input_tokens"], r.Usage["output_tokens"], r.Usage["cache_read_input_tokens"],
				r.Usage["cache_creation_input_tokens"], r.Usage["cache_creation.ephemeral_1h_input_tokens"], 0}
		} else {
			wantClient = "codex"
			cached := r.Usage["input_tokens_details.cached_tokens"]
			want = [6]int64{r.Usage["input_tokens"] - cached, r.Usage["output_tokens"], cached, 0, 0,
				r.Usage["output_tokens_details.reasoning_tokens"]}
		}
		got := [6]int64{in, out, cr, cc, cc1h, reasoning}
		if got != want {
			t.Errorf("turn %s (%s): buckets in/out/cache_read/cache_write/1h/reasoning %v, the fake returned %v", r.ResponseID, r.Path, got, want)
		}
		if session == "" || session != r.SessionID {
			t.Errorf("turn %s: session %q, the client sent %q", r.ResponseID, session, r.SessionID)
		}
		if client != wantClient || status != 200 || model == "" {
			t.Errorf("turn %s: client %q status %d model %q", r.ResponseID, client, status, model)
		}
	}
	// The figures are the fake's, not zero.
	if n := s.count("SELECT count(*) FROM api_turns WHERE cache_read_tokens = ? AND output_tokens = ?", usage.CacheRead, usage.Output); n != len(turns) {
		t.Errorf("%d of %d turns carry the fake's cache-read and output figures", n, len(turns))
	}
	t.Logf("%d api turns checked against the fake API's usage", len(turns))
}

// TestWatch_CodexLive runs the real Codex CLI through the proxy while observer-watch follows its
// rollout: the transcript reaches the store within a second of Codex finishing, its token figures
// equal the fake API's, and `observerctl cost` counts each turn once although both paths saw it.
func TestWatch_CodexLive(t *testing.T) {
	codex := realclient.FindCodex(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	home, repo := realclient.Dirs(t)
	s := newSuite(t, "HOME="+home, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL)
	s.start()

	realclient.Run(t, repo, realclient.CodexEnv(home), codex, realclient.CodexArgs("http://"+proxyAddr+"/v1", "list the files", false)...)
	done := time.Now()
	deadline := done.Add(10 * time.Second)
	for s.count("SELECT count(*) FROM token_usage WHERE client = 'codex'") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the rollout's usage did not reach the store within 10s\n%s", s.readFile("logs/watch.log"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("transcript usage in the store %v after codex exited", time.Since(done).Round(time.Millisecond))
	// Each turn from the transcript equals the fake's usage, net of cache.
	if n := s.count("SELECT count(*) FROM token_usage WHERE client = 'codex' AND input_tokens = ? AND cache_read_tokens = ? AND output_tokens = ? AND reasoning_tokens = ?",
		usage.Input, usage.CacheRead, usage.Output, usage.Reasoning); n != 2 {
		t.Fatalf("%d of the 2 transcript turns carry the fake's figures", n)
	}
	// The tool call is in the store, paired with its result.
	if n := s.count("SELECT count(*) FROM actions WHERE client = 'codex' AND type IN ('run_command', 'search_files', 'read_file') AND success = 1"); n < 1 {
		rows, _ := s.db().Query("SELECT type, tool, target, coalesce(success, -1), error FROM actions")
		var have []string
		for rows.Next() {
			var a, b, c, e string
			var d int
			rows.Scan(&a, &b, &c, &d, &e)
			have = append(have, fmt.Sprintf("%s %s %q %d %q", a, b, c, d, e))
		}
		rows.Close()
		t.Fatalf("no successful tool call stored from the rollout; actions: %v", have)
	}
	s.waitCount(10*time.Second, 2, "SELECT count(*) FROM api_turns WHERE client = 'codex'")
	// Codex 0.171 writes the prompt as an item_completed UserMessage (and a user message item), not
	// as user_message: one prompt, once.
	if n := s.count("SELECT count(*) FROM actions WHERE client = 'codex' AND type = 'user_prompt' AND target = 'list the files'"); n != 1 {
		t.Errorf("%d user_prompt actions for the one prompt, want 1", n)
	}
	out, errOut, code := s.ctl(nil, "cost", "--json")
	if code != 0 {
		t.Fatalf("cost: %d %s", code, errOut)
	}
	var c costJSON
	json.Unmarshal([]byte(out), &c)
	if c.Total.Turns != 2 || c.Total.Input != 2*usage.Input || c.Total.Output != 2*usage.Output {
		t.Fatalf("cost counts %+v, want 2 turns of the fake's figures (each seen by the proxy and the transcript)", c.Total)
	}
}
