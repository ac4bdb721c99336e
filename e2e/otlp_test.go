package e2e

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
)

// claudeTelemetry is Claude Code's environment for exporting its logs and metrics to endpoint.
func claudeTelemetry(endpoint, protocol string) []string {
	return []string{"CLAUDE_CODE_ENABLE_TELEMETRY=1", "OTEL_METRICS_EXPORTER=otlp", "OTEL_LOGS_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol, "OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_LOGS_EXPORT_INTERVAL=500", "OTEL_METRIC_EXPORT_INTERVAL=1000"}
}

// codexTelemetry writes Codex's [otel] settings (protocol "json" or "binary") into home.
func codexTelemetry(t *testing.T, home, endpoint, protocol string) {
	t.Helper()
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[otel]\nexporter = { otlp-http = { endpoint = %q, protocol = %q } }\n"+
		"metrics_exporter = { otlp-http = { endpoint = %q, protocol = %q } }\n",
		endpoint+"/v1/logs", protocol, endpoint+"/v1/metrics", protocol)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOTLP_RealClients runs the real Claude Code and Codex CLIs offline against the fake API with
// their telemetry exported to observer's OTLP receiver. First straight to the fake (OTLP and the
// transcripts see the turns, the proxy does not): each session's tokens from OTLP equal the fake
// API's usage. Then through the proxy as well, with the other protocol: all three paths see
// every turn, and `observerctl cost` counts each turn once.
func TestOTLP_RealClients(t *testing.T) {
	claude, codex := realclient.FindClaude(t), realclient.FindCodex(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, CacheWrite5m: 222, CacheWrite1h: 111, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	otlpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dashAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	home, repo := realclient.Dirs(t)
	s := newSuite(t, "HOME="+home, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_OTLP_ADDR="+otlpAddr, "OBSERVER_DASH_ADDR="+dashAddr,
		"OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL)
	s.start()
	endpoint := "http://" + otlpAddr

	pathsOf := map[string]string{} // session → the capture paths the dashboard should show
	type run struct {
		name                    string
		claudeBase              string // where Claude Code sends its requests
		codexBase               string
		protoClaude, protoCodex string
	}
	for _, r := range []run{
		{"direct", up.URL, up.URL + "/v1", "http/json", "binary"},
		{"through the proxy", "http://" + proxyAddr, "http://" + proxyAddr + "/v1", "http/protobuf", "json"},
	} {
		before := len(fake.Requests())
		env := append(realclient.ClaudeEnv(home, r.claudeBase), claudeTelemetry(endpoint, r.protoClaude)...)
		out := realclient.Run(t, repo, env, claude, realclient.ClaudeArgs("list the files")...)
		if !strings.Contains(out, fakeapi.TextAfterTool) {
			t.Fatalf("%s: claude printed %q", r.name, out)
		}
		codexTelemetry(t, home, endpoint, r.protoCodex)
		out = realclient.Run(t, repo, realclient.CodexEnv(home), codex, realclient.CodexArgs(r.codexBase, "list the files", false)...)
		if !strings.Contains(out, fakeapi.TextAfterTool) {
			t.Fatalf("%s: codex printed %q", r.name, out)
		}
		// The model calls of this run, by session.
		calls := map[string]int{}
		for _, q := range fake.Requests()[before:] {
			if q.ResponseID != "" && q.Action != fakeapi.ActionInfo && q.Status == 200 {
				calls[q.SessionID]++
			}
		}
		if len(calls) != 2 {
			t.Fatalf("%s: the fake saw model calls of sessions %v, want one Claude Code and one Codex session", r.name, calls)
		}
		for session, n := range calls {
			pathsOf[session] = "records,otlp"
			if r.name != "direct" {
				pathsOf[session] = "proxy,records,otlp"
			}
			// Every call of the session arrives through OTLP with the fake's figures (Anthropic's
			// cache writes as one bucket: Claude Code does not report the 5m/1h split).
			want := fmt.Sprintf("%d %d %d %d", n*int(usage.Input), n*int(usage.Output), n*int(usage.CacheRead), n)
			deadline := time.Now().Add(20 * time.Second)
			var got string
			for {
				var in, outT, cr, cnt int64
				s.db().QueryRow(`SELECT coalesce(sum(input_tokens),0), coalesce(sum(output_tokens),0), coalesce(sum(cache_read_tokens),0), count(*)
					FROM api_turns WHERE origin = 'otlp' AND session_id = ? AND status = 200`, session).Scan(&in, &outT, &cr, &cnt)
				got = fmt.Sprintf("%d %d %d %d", in, outT, cr, cnt)
				if got == want || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if got != want {
				t.Fatalf("%s: session %s from OTLP: input/output/cache read/turns %s, the fake answered %s\n%s", r.name, session, got, want, s.readFile("logs/proxy.log"))
			}
		}
		t.Logf("%s: OTLP figures equal the fake API's for sessions %v", r.name, calls)
	}
	if n := s.count("SELECT count(*) FROM api_turns WHERE origin = 'otlp' AND client = 'claude-code' AND cache_creation_tokens = ?", usage.CacheWrite5m+usage.CacheWrite1h); n == 0 {
		t.Error("no Claude Code OTLP turn carries the fake's cache writes")
	}
	if n := s.count("SELECT count(*) FROM actions WHERE source = 'otlp' OR (client = 'codex' AND success = 1)"); n == 0 {
		t.Error("no tool call stored")
	}

	// Each model call counted once although up to three paths saw it.
	calls := 0
	for _, q := range fake.Requests() {
		if q.ResponseID != "" && q.Action != fakeapi.ActionInfo && q.Status == 200 {
			calls++
		}
	}
	// The proxy and the watcher have their figures in too.
	s.waitCount(20*time.Second, calls/2, "SELECT count(*) FROM api_turns WHERE origin = '' AND status = 200 AND (input_tokens > 0 OR output_tokens > 0)")
	deadline := time.Now().Add(20 * time.Second)
	for s.count("SELECT count(DISTINCT session_id) FROM token_usage") < 4 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	out, errOut, code := s.ctl(nil, "cost", "--json")
	if code != 0 {
		t.Fatalf("cost: %d %s", code, errOut)
	}
	var c costJSON
	json.Unmarshal([]byte(out), &c)
	if c.Total.Input != int64(calls)*usage.Input || c.Total.Output != int64(calls)*usage.Output {
		dumpTurns(t, s)
		t.Fatalf("cost counts input %d output %d over %d turns; want %d calls of the fake's figures, each once",
			c.Total.Input, c.Total.Output, c.Total.Turns, calls)
	}
	t.Logf("%d model calls, each seen by OTLP, the transcripts and (the second run) the proxy: cost counts %d turns, input %d", calls, c.Total.Turns, c.Total.Input)

	// The dashboard says which paths saw each session.
	var page struct {
		Sessions []struct {
			SessionID string   `json:"session_id"`
			Paths     []string `json:"paths"`
		} `json:"sessions"`
	}
	getDashJSON(t, "http://"+dashAddr+"/api/sessions?window=all&limit=50", &page)
	seen := 0
	for _, ss := range page.Sessions {
		if want, ok := pathsOf[ss.SessionID]; ok {
			seen++
			if got := strings.Join(ss.Paths, ","); got != want {
				t.Errorf("session %s: the dashboard shows paths %q, want %q", ss.SessionID, got, want)
			}
		}
	}
	if seen != len(pathsOf) {
		t.Errorf("the dashboard lists %d of the %d sessions", seen, len(pathsOf))
	}
}

// dumpTurns logs every turn row the store holds, by path, for a failure's message.
func dumpTurns(t *testing.T, s *suite) {
	for _, q := range []string{
		"SELECT 'api_turn', origin, client, session_id, request_id, message_id, ts, input_tokens, endpoint FROM api_turns ORDER BY ts",
		"SELECT 'usage', origin, client, session_id, request_id, message_id, ts, input_tokens, source FROM token_usage ORDER BY ts",
	} {
		rows, err := s.db().Query(q)
		if err != nil {
			t.Log(err)
			continue
		}
		for rows.Next() {
			var a, b, c, d, e, f, i string
			var ts, in int64
			rows.Scan(&a, &b, &c, &d, &e, &f, &ts, &in, &i)
			t.Logf("%s origin=%q %s %s req=%s msg=%s ts=%d in=%d %s", a, b, c, d, e, f, ts, in, i)
		}
		rows.Close()
	}
}
