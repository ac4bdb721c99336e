package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/compress/validate"
)

// servicesJSON is a ~55 KB JSON file of the kind agents read: an API listing.
func servicesJSON() []byte {
	type svc struct {
		ID      int      `json:"id"`
		Name    string   `json:"name"`
		Owner   string   `json:"owner"`
		Region  string   `json:"region"`
		Desc    string   `json:"description"`
		Tags    []string `json:"tags"`
		Healthy bool     `json:"healthy"`
		Replica int      `json:"replicas"`
	}
	var items []svc
	for i := range 280 {
		items = append(items, svc{ID: 1000 + i, Name: fmt.Sprintf("billing-worker-%03d", i), Owner: fmt.Sprintf("team-%d@example.com", i%9),
			Region: []string{"eu-west-1", "us-east-2", "ap-south-1"}[i%3], Desc: fmt.Sprintf("Processes shard %d of the invoice queue", i),
			Tags: []string{"prod", "billing"}, Healthy: i%11 != 0, Replica: 1 + i%4})
	}
	// One record per line, as data files often are: about 55 KB.
	var b strings.Builder
	b.WriteString("{\"kind\": \"ServiceList\", \"items\": [\n")
	for i, it := range items {
		line, _ := json.Marshal(it)
		b.Write(line)
		if i < len(items)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

// toolResultText returns the text of the tool output a saved request body carries for the
// command's call: the Messages API's tool_result, or the Responses API's function_call_output.
func toolResultText(t *testing.T, body []byte) string {
	var v struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("a body the upstream got is not JSON: %v", err)
	}
	text := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var parts []struct{ Text string }
		json.Unmarshal(raw, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	out := ""
	for _, m := range v.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = text(b.Content)
			}
		}
	}
	for _, it := range v.Input {
		if it.Type == "function_call_output" {
			out = text(it.Output)
		}
	}
	return out
}

// savedBodies reads the bodies the fake API saved for one endpoint, in order.
func savedBodies(t *testing.T, dir, suffix string) [][]byte {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestCompression_RealClients runs the real Claude Code and Codex CLIs offline through
// observer-proxy with request compression on, each asked to read a 55 KB JSON file (the fake
// model calls `cat data.json`). Claude Code completes its round trip and the tool_result the
// upstream gets is under 0.7x of what it gets without the proxy; Codex completes its round trip
// in every mode. Every body the upstream got is valid for its API; the dashboard and
// `observerctl cost` show the savings.
func TestCompression_RealClients(t *testing.T) {
	claude, codex := realclient.FindClaude(t), realclient.FindCodex(t)
	data := servicesJSON()
	api := validate.Anthropic

	// Without the proxy: what the upstream gets with compression off.
	// Claude Code reads it with its Read tool (a Bash output over 30,000 characters is kept in a
	// file and only a preview sent). The file sits at the same path in each run.
	dataPath := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(dataPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	offDir := t.TempDir()
	fakeOff := fakeapi.New(fakeapi.Config{Usage: fakeapi.DefaultUsage, ReadPath: dataPath, BodyDir: offDir})
	upOff := httptest.NewServer(fakeOff)
	defer upOff.Close()
	home, repo := realclient.Dirs(t)
	claudeArgs := []string{"-p", "read data.json", "--allowedTools", "Read"}
	claudeEnv := realclient.ClaudeEnv
	out := realclient.Run(t, repo, claudeEnv(home, upOff.URL), claude, claudeArgs...)
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Fatalf("claude without the proxy printed %q", out)
	}
	home, repo = realclient.Dirs(t)
	writeData(t, repo, data)
	out = realclient.Run(t, repo, realclient.CodexEnv(home), codex, realclient.CodexArgs(upOff.URL+"/v1", "read data.json", false)...)
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Fatalf("codex without the proxy printed %q", out)
	}
	offBodies := savedBodies(t, offDir, "v1-messages.json")
	offResult := lastToolResult(t, offBodies)
	// The clients' own bodies, compressed in every mode as a session (one compressor for the
	// sequence), stay valid.
	for _, set := range []struct {
		api    string
		bodies [][]byte
	}{{api, offBodies}, {validate.Responses, savedBodies(t, offDir, "v1-responses.json")}} {
		checkValid(t, set.api, set.bodies)
		for _, mode := range compress.Modes {
			c, err := compress.New(compress.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			var outs [][]byte
			for _, b := range set.bodies {
				res, err := c.Request(set.api, b)
				if err != nil {
					t.Fatalf("%s %s: %v", set.api, mode, err)
				}
				outs = append(outs, res.Body)
			}
			checkValid(t, set.api, outs)
		}
	}
	if len(offResult) < 55_000 {
		t.Fatalf("without compression the upstream got a tool_result of %d bytes; want the whole 55 KB file: %.600q", len(offResult), offResult)
	}

	for _, mode := range compress.Modes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			fake := fakeapi.New(fakeapi.Config{Usage: fakeapi.DefaultUsage, Command: "cat data.json", ReadPath: dataPath, BodyDir: dir})
			up := httptest.NewServer(fake)
			defer up.Close()
			proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			dashAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_DASH_ADDR="+dashAddr,
				"OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL,
				"OBSERVER_COMPRESSION_ENABLED=true", "OBSERVER_COMPRESSION_MODE="+mode, "OBSERVER_COMPRESSION_STASH=true")
			s.start()
			base := "http://" + proxyAddr

			if mode == compress.ModeCacheAware {
				home, repo := realclient.Dirs(t)
				out := realclient.Run(t, repo, claudeEnv(home, base), claude, claudeArgs...)
				if !strings.Contains(out, fakeapi.TextAfterTool) {
					t.Fatalf("claude printed %q", out)
				}
				if _, _, err := fakeapi.RoundTrip(fake.Requests(), "/v1/messages", "Read"); err != nil {
					t.Fatalf("claude: %v", err)
				}
				bodies := savedBodies(t, dir, "v1-messages.json")
				checkValid(t, api, bodies)
				on := lastToolResult(t, bodies)
				ratio := float64(len(on)) / float64(len(offResult))
				t.Logf("claude: the tool_result reaching the upstream is %d bytes with compression, %d without (%.2fx)", len(on), len(offResult), ratio)
				if ratio >= 0.7 {
					t.Errorf("the tool_result is %.2fx of its uncompressed size, want < 0.7x", ratio)
				}
				if !strings.Contains(on, "stash_") {
					t.Errorf("the compressed output names no stash id: %.200q", on)
				}
			}

			home, repo := realclient.Dirs(t)
			writeData(t, repo, data)
			out := realclient.Run(t, repo, realclient.CodexEnv(home), codex, realclient.CodexArgs(base+"/v1", "read data.json", false)...)
			if !strings.Contains(out, fakeapi.TextAfterTool) {
				t.Fatalf("codex printed %q", out)
			}
			if _, _, err := fakeapi.RoundTrip(fake.Requests(), "/v1/responses", "exec_command"); err != nil {
				t.Fatalf("codex: %v", err)
			}
			bodies := savedBodies(t, dir, "v1-responses.json")
			checkValid(t, validate.Responses, bodies)
			if r := lastToolResult(t, bodies); !strings.HasPrefix(r, "[observer compressed") {
				t.Errorf("codex's output of the 55 KB file reached the upstream uncompressed (%d bytes): %.300q", len(r), r)
			}

			// The savings are stored, priced, and shown: once every turn is stored (a request's
			// compression events are published before its turn).
			turns := 0
			for _, r := range fake.Requests() {
				if r.Method == "POST" { // every model call, token counts included, is a turn
					turns++
				}
			}
			s.waitCount(20*time.Second, turns, "SELECT count(*) FROM api_turns")
			if n := s.count("SELECT count(*) FROM compression_events WHERE mode = ?", mode); n == 0 {
				t.Fatalf("no compression event of mode %s stored", mode)
			}
			if n := s.count("SELECT count(*) FROM api_turns WHERE compressed_bytes_before > compressed_bytes_after"); n == 0 {
				t.Error("no api_turn carries the request's compression totals")
			}
			if n := s.count("SELECT count(*) FROM compression_stash WHERE length(content) > 10000"); n == 0 {
				t.Error("the original output was not stashed")
			}
			stdout, stderr, code := s.ctl(nil, "cost")
			if code != 0 || !strings.Contains(stdout, "Request compression saved") || !strings.Contains(stdout, "tool_trim") {
				t.Errorf("observerctl cost (exit %d) shows no savings:\n%s%s", code, stdout, stderr)
			}
			var dash struct {
				Total struct {
					Events   int64   `json:"events"`
					SavedUSD float64 `json:"saved_usd"`
				} `json:"total"`
			}
			getDashJSON(t, "http://"+dashAddr+"/api/compression?window=all", &dash)
			if dash.Total.Events == 0 || dash.Total.SavedUSD <= 0 {
				t.Errorf("the dashboard's compression tab shows %+v", dash.Total)
			}
			t.Logf("%s: %d compression decisions, $%.6f saved; observerctl cost:\n%s", mode, dash.Total.Events, dash.Total.SavedUSD, stdout)
		})
	}
}

func writeData(t *testing.T, repo string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(repo, "data.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lastToolResult is the tool output of the last body that carries one.
func lastToolResult(t *testing.T, bodies [][]byte) string {
	t.Helper()
	out := ""
	for _, b := range bodies {
		if r := toolResultText(t, b); r != "" {
			out = r
		}
	}
	if out == "" {
		t.Fatalf("none of the %d bodies the upstream got carries a tool output", len(bodies))
	}
	return out
}

func checkValid(t *testing.T, api string, bodies [][]byte) {
	t.Helper()
	if len(bodies) == 0 {
		t.Fatal("the upstream got no request body")
	}
	for i, b := range bodies {
		if errs := validate.Body(api, b); len(errs) > 0 {
			t.Errorf("body %d the upstream got is invalid for %s: %v", i, api, errs)
		}
	}
}

func getDashJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestCompression_MemorySurvivesProxyRestart: an output compressed before observer-proxy restarts
// is sent compressed the same way after it, so the prefix the upstream cached still matches; the
// memory is kept in $OBSERVER_HOME/run/compress-memory (0600).
func TestCompression_MemorySurvivesProxyRestart(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2}}`)
	}))
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL, "OBSERVER_COMPRESSION_ENABLED=true")
	s.start()
	out := string(servicesJSON())
	js := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	turn := func(last bool) string {
		cc := ""
		if last {
			cc = `,"cache_control":{"type":"ephemeral"}`
		}
		return `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/r/data.json"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + js(out) + cc + `}]}`
	}
	send := func(body string) []byte {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+proxyAddr+"/v1/messages", strings.NewReader(body))
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		return bodies[len(bodies)-1]
	}
	head := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"read it"},`
	first := send(head + turn(true) + `]}`)
	if !strings.Contains(string(first), "[observer compressed this json output") {
		t.Fatalf("the first request was not compressed: %.300s", first)
	}
	oldPID := s.componentPID("proxy")
	if _, errOut, code := s.ctl(nil, "restart", "proxy"); code != 0 {
		t.Fatalf("restart proxy: %d %s", code, errOut)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.componentPID("proxy") == oldPID || s.componentPID("proxy") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the proxy did not come back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.waitLog("proxy", "compression memory loaded", 1)
	fi, err := os.Stat(filepath.Join(s.home, "run", "compress-memory"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("memory file: %v %v", fi, err)
	}
	var second []byte
	for time.Now().Before(deadline) { // the new proxy may still be starting to listen
		if second = trySend(proxyAddr, head+turn(false)+`,{"role":"assistant","content":"next"},{"role":"user","content":"go on"}]}`); second != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	second = bodies[len(bodies)-1]
	mu.Unlock()
	want := strings.Replace(string(first), `,"cache_control":{"type":"ephemeral"}`, "", 1)
	prefix := want[:strings.LastIndex(want, "]}")]
	if !strings.HasPrefix(string(second), prefix) {
		t.Errorf("after the restart the conversation's compressed prefix changed:\nbefore %.400s\nafter  %.400s", prefix, second)
	}
}

// trySend posts body to the proxy and returns what came back, or nil when it did not answer.
func trySend(addr, body string) []byte {
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(body))
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil
	}
	return b
}
