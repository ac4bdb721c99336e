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

// otherClient is one of the OpenAI-compatible terminal agents run through the proxy.
type otherClient struct {
	name string
	find func(testing.TB) string
	// setup prepares home for a run against baseURL (the proxy, ending in /v1) and returns the
	// client's environment and arguments.
	setup func(tb testing.TB, home, baseURL string) (env, args []string)
	// proxyClient is the client the proxy names from the headers, readerClient the one the
	// transcript reader names the records with. A turn of client "unknown" takes the records'
	// client when it is linked to them by response id (Pi).
	proxyClient, readerClient string
	// endpoint is the API the client calls (default /v1/chat/completions).
	endpoint string
	// wholePrompt says that the client's records keep the whole prompt as input, cached tokens
	// included, and no cached count (Continue's CLI).
	wholePrompt bool
}

// TestRealClients_OpenCodeThroughProxy: OpenCode sends X-Session-Id ses_..., the session of its
// own records (~/.local/share/opencode/opencode.db), so its proxy turns carry the session and its
// messages (which keep no response id) are joined by session and time.
func TestRealClients_OpenCodeThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "opencode", find: realclient.FindOpenCode, proxyClient: "opencode", readerClient: "opencode",
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			realclient.OpenCodeHome(tb, home, baseURL)
			return realclient.OpenCodeEnv(home), realclient.OpenCodeArgs("list the files")
		}})
}

// TestRealClients_KiloThroughProxy: Kilo is OpenCode's fork; its records are in
// ~/.local/share/kilo, its title request carries X-Session-Id title-ses_....
func TestRealClients_KiloThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "kilo", find: realclient.FindKilo, proxyClient: "kilo", readerClient: "kilo",
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			realclient.KiloHome(tb, home, baseURL)
			return realclient.OpenCodeEnv(home), realclient.KiloArgs("list the files")
		}})
}

// TestRealClients_QwenThroughProxy: Qwen Code sends no session id; its proxy turns are linked to
// the messages of its records (~/.qwen/tmp/<project hash>/chats) by model and figures.
func TestRealClients_QwenThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "qwen", find: realclient.FindQwen, proxyClient: "qwen-code", readerClient: "qwen-code",
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			return realclient.QwenEnv(home, baseURL), realclient.QwenArgs("list the files")
		}})
}

// TestRealClients_PiThroughProxy: Pi sends only the OpenAI SDK's marks and no session, so the proxy
// names its turns "unknown"; its records (~/.pi/agent/sessions) keep the API's response id, by
// which the writer links each turn to its message: the turn takes the session and the client pi.
func TestRealClients_PiThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "pi", find: realclient.FindPi, proxyClient: "unknown", readerClient: "pi",
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			realclient.PiHome(tb, home, baseURL)
			return realclient.PiEnv(home), realclient.PiArgs("list the files")
		}})
}

// TestRealClients_ContinueThroughProxy: Continue's CLI (with a local config.yaml: without one it
// fetches its default from Continue's servers) sends only the OpenAI SDK's marks and no session,
// calls the Responses API for a gpt-5 model, and keeps per message the usage it read with the
// cached tokens inside the prompt and no response id: the proxy names its turns "unknown", and the
// writer links each to its message by model, output and whole prompt (the turn takes the session
// and the client continue-cli).
func TestRealClients_ContinueThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "continue", find: realclient.FindContinue, proxyClient: "unknown", readerClient: "continue-cli",
		endpoint: "/v1/responses", wholePrompt: true,
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			realclient.ContinueHome(tb, home, baseURL)
			return realclient.ContinueEnv(home), realclient.ContinueArgs("list the files")
		}})
}

// TestRealClients_DroidThroughProxy: Factory's Droid (a custom model in ~/.factory/settings.json,
// air-gapped) sends User-Agent factory-cli/<version> and no session; its session files keep no
// token figures, its log one usage line per model call: the proxy names its turns droid, and the
// writer joins each to its log line by model, time and figures (the turn takes the session).
func TestRealClients_DroidThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "droid", find: realclient.FindDroid, proxyClient: "droid", readerClient: "droid",
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			realclient.DroidHome(tb, home, baseURL)
			return realclient.DroidEnv(home), realclient.DroidArgs("list the files")
		}})
}

// TestRealClients_CopilotThroughProxy: GitHub's Copilot CLI with a custom provider
// (COPILOT_PROVIDER_BASE_URL) runs offline, without a GitHub sign-in; the proxy names it by its
// X-Interaction-Type header; its records
// (~/.copilot/session-state/<id>/events.jsonl) keep one usage record per API call with the call's
// response id, by which the writer links each proxy turn to the session.
func TestRealClients_CopilotThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "copilot", find: realclient.FindCopilot, proxyClient: "copilot-cli", readerClient: "copilot-cli",
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			return realclient.CopilotEnv(home, baseURL), realclient.CopilotArgs("list the files")
		}})
}

// runOtherClient runs the client, offline, against the fake Chat Completions API through
// observer-proxy started by `observerctl up`, with the client's HOME as the watcher's. It checks
// that every request the fake served is one api_turn of the client at the fake's figures, that the
// watcher stored the client's records (usage and the ls action), that every proxy turn is linked to
// the session those records name, and that `cost --json` counts each turn once.
func runOtherClient(t *testing.T, c otherClient) {
	bin := c.find(t)
	if c.endpoint == "" {
		c.endpoint = "/v1/chat/completions"
	}
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	home, repo := realclient.Dirs(t)
	s := newSuite(t, "HOME="+home, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL)
	s.start()

	env, args := c.setup(t, home, "http://"+proxyAddr+"/v1")
	t0 := time.Now()
	out := realclient.Run(t, repo, env, bin, args...)
	t.Logf("%s through the proxy in %v", c.name, time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Errorf("%s printed %q, not %q", c.name, out, fakeapi.TextAfterTool)
	}
	var turns []fakeapi.Request
	tools := 0
	for _, r := range fake.Requests() {
		if r.ResponseID != "" && r.Method == "POST" {
			turns = append(turns, r)
			if r.Action == "tool_call" {
				tools++
			}
		}
	}
	if len(turns) < 2 || tools < 1 {
		t.Fatalf("the fake served %d model requests (%d tool calls), want a tool round trip: %+v", len(turns), tools, fake.Requests())
	}
	n := int64(len(turns))

	// Every request is one api_turn at the fake's figures, stored net of cache.
	s.waitCount(20*time.Second, len(turns), "SELECT count(*) FROM api_turns")
	if got := s.count("SELECT count(*) FROM api_turns"); got != len(turns) {
		t.Errorf("%d api_turns for the %d requests the fake served", got, len(turns))
	}
	db := s.db()
	for _, r := range turns {
		var client, endpoint, model string
		var in, outTok, cr, cc, reasoning int64
		var status, partial int
		err := db.QueryRow(`SELECT client, endpoint, model, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
			reasoning_tokens, status, partial FROM api_turns WHERE message_id = ?`, r.ResponseID).
			Scan(&client, &endpoint, &model, &in, &outTok, &cr, &cc, &reasoning, &status, &partial)
		if err != nil {
			t.Fatalf("turn %s (%s): %v", r.ResponseID, r.Path, err)
		}
		if got, want := [5]int64{in, outTok, cr, cc, reasoning}, [5]int64{usage.Input, usage.Output, usage.CacheRead, 0, usage.Reasoning}; got != want {
			t.Errorf("turn %s: buckets in/out/cache_read/cache_write/reasoning %v, the fake returned %v", r.ResponseID, got, want)
		}
		if (client != c.proxyClient && client != c.readerClient) || status != 200 || partial != 0 || model != r.Model || endpoint != c.endpoint {
			t.Errorf("turn %s: client %q (want %q) endpoint %q model %q status %d partial %d; the fake served %+v",
				r.ResponseID, client, c.proxyClient, endpoint, model, status, partial, r)
		}
	}

	// The watcher stores the client's records; every proxy turn ends up in the records' session.
	var session string
	deadline := time.Now().Add(30 * time.Second)
	for {
		msgs := s.count("SELECT count(*) FROM token_usage WHERE client = ?", c.readerClient)
		session = ""
		db.QueryRow("SELECT session_id FROM token_usage WHERE client = ? ORDER BY ts LIMIT 1", c.readerClient).Scan(&session)
		if msgs > 0 && session != "" && s.count("SELECT count(*) FROM api_turns WHERE session_id = ? AND client = ?", session, c.readerClient) == len(turns) &&
			s.count("SELECT count(*) FROM actions WHERE client = ? AND type = 'run_command'", c.readerClient) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after 30 s: %d %s transcript messages (session %q), %d actions; %d of %d proxy turns in that session\nturns: %s\nwatch.log:\n%s",
				msgs, c.readerClient, session, s.count("SELECT count(*) FROM actions WHERE client = ?", c.readerClient),
				s.count("SELECT count(*) FROM api_turns WHERE session_id = ? AND session_id != ''", session), len(turns),
				dumpRows(s, "SELECT client, session_id, message_id, transcript_message_id, model, ts FROM api_turns ORDER BY ts"),
				s.readFile("logs/watch.log"))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	msgs := s.count("SELECT count(*) FROM token_usage WHERE client = ?", c.readerClient)
	var tin, tout, tcr int64
	db.QueryRow("SELECT coalesce(sum(input_tokens),0), coalesce(sum(output_tokens),0), coalesce(sum(cache_read_tokens),0) FROM token_usage WHERE client = ?",
		c.readerClient).Scan(&tin, &tout, &tcr)
	switch prompt := usage.Input + usage.CacheRead; {
	case c.wholePrompt:
		if tin%prompt != 0 || tin/prompt != tout/usage.Output || tcr != 0 || tin == 0 {
			t.Errorf("%d transcript messages hold in/out/cache_read %d/%d/%d: not a multiple of the fake's whole prompt %d and output %d",
				msgs, tin, tout, tcr, prompt, usage.Output)
		}
	case tin%usage.Input != 0 || tin/usage.Input != tout/usage.Output || tin/usage.Input != tcr/usage.CacheRead || tin == 0:
		t.Errorf("%d transcript messages hold in/out/cache_read %d/%d/%d: not a multiple of the fake's %d/%d/%d",
			msgs, tin, tout, tcr, usage.Input, usage.Output, usage.CacheRead)
	}

	cout, errOut, code := s.ctl(nil, "cost", "--json")
	if code != 0 {
		t.Fatalf("cost: %d %s", code, errOut)
	}
	var cj costJSON
	json.Unmarshal([]byte(cout), &cj)
	if cj.Total.Turns != n || cj.Total.Input != n*usage.Input || cj.Total.Output != n*usage.Output || cj.Total.CacheRead != n*usage.CacheRead {
		t.Errorf("cost counts %+v, want each of the %d turns once at the fake's figures\nrows: %v\nturns: %s\nusage: %s", cj.Total, n, cj.Rows,
			dumpRows(s, "SELECT client, session_id, message_id, transcript_message_id, model, ts FROM api_turns ORDER BY ts"),
			dumpRows(s, "SELECT client, session_id, message_id, model, input_tokens, ts FROM token_usage ORDER BY ts"))
	}
	t.Logf("%s: %d requests served, %d api_turns (proxy named %s), %d linked to session %s, %d transcript messages (%s, %d/%d/%d tokens), cost counts %d turns",
		c.name, len(turns), s.count("SELECT count(*) FROM api_turns"), c.proxyClient,
		s.count("SELECT count(*) FROM api_turns WHERE session_id = ? AND session_id != ''", session), session, msgs, c.readerClient, tin, tout, tcr, cj.Total.Turns)
}

// dumpRows renders the rows of query, one a line, for failure messages.
func dumpRows(s *suite, query string) string {
	rows, err := s.db().Query(query)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rows.Scan(ptrs...)
		b.WriteString("\n  ")
		for i, v := range vals {
			fmt.Fprintf(&b, "%s=%v ", cols[i], v)
		}
	}
	return b.String()
}

// TestRealClients_OpenClawThroughProxy: OpenClaw (on Node 24) sends the OpenAI SDK's marks and no
// session, so the proxy names its turns "unknown"; its records (an SQLite database per agent under
// ~/.openclaw/agents) keep the API's response id, by which the writer links each turn to its
// message: the turn takes the session and the client openclaw.
func TestRealClients_OpenClawThroughProxy(t *testing.T) {
	runOtherClient(t, otherClient{name: "openclaw", find: realclient.FindOpenClaw, proxyClient: "unknown", readerClient: "openclaw",
		setup: func(tb testing.TB, home, baseURL string) ([]string, []string) {
			realclient.OpenClawHome(tb, home)
			return realclient.OpenClawEnv(home, baseURL), realclient.OpenClawArgs("list the files")
		}})
}

// TestRealClients_GrokCLIThroughProxy: the community Grok CLI (@vibe-kit/grok-cli, GROK_BASE_URL)
// keeps no record of a session or its usage and sends only the OpenAI SDK's headers: the proxy is
// its only capture. Every request it makes is one api_turn at the fake's figures, of client
// "unknown" (nothing names it), and `cost --json` counts each once.
func TestRealClients_GrokCLIThroughProxy(t *testing.T) {
	bin := realclient.FindGrokCLI(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	home, repo := realclient.Dirs(t)
	s := newSuite(t, "HOME="+home, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL)
	s.start()
	out := realclient.Run(t, repo, realclient.GrokCLIEnv(home, "http://"+proxyAddr+"/v1"), bin, "-p", "list the files")
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Errorf("grok printed %q, not %q", out, fakeapi.TextAfterTool)
	}
	n := 0
	for _, r := range fake.Requests() {
		if r.ResponseID != "" && r.Method == "POST" {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("the fake served %d model requests, want a tool round trip: %+v", n, fake.Requests())
	}
	s.waitCount(20*time.Second, n, "SELECT count(*) FROM api_turns WHERE client = 'unknown' AND input_tokens = ? AND output_tokens = ? AND cache_read_tokens = ?",
		usage.Input, usage.Output, usage.CacheRead)
	if got := s.count("SELECT count(*) FROM api_turns"); got != n {
		t.Errorf("%d api_turns for the %d requests the fake served", got, n)
	}
	cout, errOut, code := s.ctl(nil, "cost", "--json")
	if code != 0 {
		t.Fatalf("cost: %d %s", code, errOut)
	}
	var cj costJSON
	json.Unmarshal([]byte(cout), &cj)
	if k := int64(n); cj.Total.Turns != k || cj.Total.Input != k*usage.Input || cj.Total.Output != k*usage.Output || cj.Total.CacheRead != k*usage.CacheRead {
		t.Errorf("cost counts %+v, want each of the %d turns once at the fake's figures", cj.Total, n)
	}
}
