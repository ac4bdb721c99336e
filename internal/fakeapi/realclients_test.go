package fakeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// realUsage differs from every default so that a number in a client's files can only have come
// from this test's server.
var realUsage = Usage{Input: 321, Output: 54, CacheRead: 4321, CacheWrite5m: 222, CacheWrite1h: 111, Reasoning: 7}

const realClientTimeout = 120 * time.Second

// TestRealClients drives the real Claude Code and Codex CLIs against the fake, each through one
// tool round trip (see the package doc for the command lines). It skips when a client is not
// installed, unless OBSERVER_REQUIRE_CLIENTS=1.
func TestRealClients(t *testing.T) {
	if testing.Short() && os.Getenv("OBSERVER_REQUIRE_CLIENTS") != "1" {
		t.Skip("real clients: skipped in -short mode")
	}
	t.Run("ClaudeCode", testClaudeCode)
	t.Run("Codex", testCodex)
}

func testClaudeCode(t *testing.T) {
	bin := findClient(t, "OBSERVER_CLAUDE_BIN", "claude", "npm install -g @anthropic-ai/claude-code@2.1.197")
	s := New(Config{Usage: realUsage})
	ts := httptest.NewServer(s)
	defer ts.Close()
	home, repo := clientDirs(t)

	start := time.Now()
	stdout := runClient(t, repo, []string{
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + ts.URL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
	}, bin, "-p", "list the files", "--allowedTools", "Bash(ls:*)")
	t.Logf("claude ran in %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(stdout, TextAfterTool) {
		t.Errorf("claude printed %q, want the final text %q", stdout, TextAfterTool)
	}

	call, final := roundTrip(t, s.Requests(), "/v1/messages", "Bash")
	session := call.Headers["X-Claude-Code-Session-Id"]
	if session == "" || final.Headers["X-Claude-Code-Session-Id"] != session {
		t.Errorf("X-Claude-Code-Session-Id = %q then %q, want one session id on both turns",
			session, final.Headers["X-Claude-Code-Session-Id"])
	}
	if call.Headers["Anthropic-Version"] == "" || !call.HasAPIKey {
		t.Errorf("tool-call request: headers %v, x-api-key present %v", call.Headers, call.HasAPIKey)
	}

	// The transcript must hold the usage the server returned, cache-write breakdown included.
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", session+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts for session %q: %v", session, files)
	}
	want := map[string]int64{"input_tokens": 321, "cache_creation_input_tokens": 333, "cache_read_input_tokens": 4321,
		"ephemeral_5m_input_tokens": 222, "ephemeral_1h_input_tokens": 111, "output_tokens": 54}
	seen := map[string]bool{}
	for _, line := range jsonLines(t, files[0]) {
		var rec struct {
			Type    string `json:"type"`
			Message struct {
				ID    string `json:"id"`
				Usage struct {
					Input         int64 `json:"input_tokens"`
					CacheCreation int64 `json:"cache_creation_input_tokens"`
					CacheRead     int64 `json:"cache_read_input_tokens"`
					Output        int64 `json:"output_tokens"`
					Breakdown     struct {
						M5 int64 `json:"ephemeral_5m_input_tokens"`
						H1 int64 `json:"ephemeral_1h_input_tokens"`
					} `json:"cache_creation"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Type != "assistant" {
			continue
		}
		u := rec.Message.Usage
		got := map[string]int64{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheCreation,
			"cache_read_input_tokens": u.CacheRead, "ephemeral_5m_input_tokens": u.Breakdown.M5,
			"ephemeral_1h_input_tokens": u.Breakdown.H1, "output_tokens": u.Output}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("transcript usage of %s = %v, want %v", rec.Message.ID, got, want)
		}
		seen[rec.Message.ID] = true
	}
	if !seen[call.ResponseID] || !seen[final.ResponseID] {
		t.Errorf("transcript messages %v, want %s and %s", seen, call.ResponseID, final.ResponseID)
	}
}

func testCodex(t *testing.T) {
	bin := findClient(t, "OBSERVER_CODEX_BIN", "codex", "npm install -g @openai/codex@0.171.0")
	s := New(Config{Usage: realUsage})
	ts := httptest.NewServer(s)
	defer ts.Close()
	home, repo := clientDirs(t)

	// supports_websockets makes Codex try GET /v1/responses as a WebSocket first; the 426 sends
	// it to HTTP. Without the key Codex 0.171 goes straight to HTTP for a custom provider.
	provider := `model_providers.x={name="X",base_url="` + ts.URL + `/v1",env_key="OPENAI_API_KEY",wire_api="responses",supports_websockets=true}`
	start := time.Now()
	stdout := runClient(t, repo, []string{"HOME=" + home, "OPENAI_API_KEY=sk-test"},
		bin, "exec", "-m", "gpt-5.2-codex", "-c", "model_provider=x", "-c", provider,
		"-c", "analytics.enabled=false", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"--json", "list the files")
	t.Logf("codex ran in %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(stdout, `"type":"command_execution"`) || !strings.Contains(stdout, TextAfterTool) {
		t.Errorf("codex --json output lacks the command execution or the final text:\n%s", stdout)
	}

	reqs := s.Requests()
	if !slices.ContainsFunc(reqs, func(r Request) bool { return r.Method == "GET" && r.Status == 426 }) {
		t.Errorf("no WebSocket attempt answered 426; requests: %v", summary(reqs))
	}
	call, final := roundTrip(t, reqs, "/v1/responses", "exec_command")
	session := call.Headers["Session-Id"]
	if session == "" || final.Headers["Session-Id"] != session {
		t.Errorf("session-id = %q then %q, want one session id on both turns", session, final.Headers["Session-Id"])
	}
	if !call.HasAuthorization {
		t.Error("Codex sent no Authorization header")
	}

	// The session file's token_count events must hold the usage the server returned: the last
	// turn's and the running total of both turns.
	var files []string
	filepath.WalkDir(filepath.Join(home, ".codex", "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && strings.Contains(p, session) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("session files for %q: %v", session, files)
	}
	type tokens struct {
		Input     int64 `json:"input_tokens"`
		Cached    int64 `json:"cached_input_tokens"`
		Output    int64 `json:"output_tokens"`
		Reasoning int64 `json:"reasoning_output_tokens"`
		Total     int64 `json:"total_tokens"`
	}
	var last struct{ Total, Last tokens }
	for _, line := range jsonLines(t, files[0]) {
		var rec struct {
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total tokens `json:"total_token_usage"`
					Last  tokens `json:"last_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Payload.Type == "token_count" && rec.Payload.Info != nil {
			last.Total, last.Last = rec.Payload.Info.Total, rec.Payload.Info.Last
		}
	}
	turn := tokens{Input: 321 + 4321, Cached: 4321, Output: 54, Reasoning: 7, Total: 321 + 4321 + 54}
	if last.Last != turn {
		t.Errorf("last_token_usage = %+v, want %+v", last.Last, turn)
	}
	two := tokens{turn.Input * 2, turn.Cached * 2, turn.Output * 2, turn.Reasoning * 2, turn.Total * 2}
	if last.Total != two {
		t.Errorf("total_token_usage = %+v, want two turns %+v", last.Total, two)
	}
}

// findClient returns the path of a client CLI from the environment variable env, else from PATH.
// A missing client skips the test, or fails it when OBSERVER_REQUIRE_CLIENTS=1.
func findClient(tb testing.TB, env, name, install string) string {
	tb.Helper()
	p := os.Getenv(env)
	var err error
	if p == "" {
		p, err = exec.LookPath(name)
	}
	if err == nil {
		if _, err = exec.LookPath("git"); err != nil {
			name = "git"
		}
	}
	if err != nil {
		msg := name + " not found (set " + env + " or put it on PATH: " + install + ")"
		if os.Getenv("OBSERVER_REQUIRE_CLIENTS") == "1" {
			tb.Fatal(msg + "; OBSERVER_REQUIRE_CLIENTS=1 requires it")
		}
		tb.Skip(msg)
	}
	return p
}

// clientDirs makes a temporary HOME and a temporary git repository with two files.
func clientDirs(tb testing.TB) (home, repo string) {
	tb.Helper()
	home, repo = filepath.Join(tb.TempDir(), "home"), filepath.Join(tb.TempDir(), "repo")
	for _, d := range []string{home, repo} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o600)
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o600)
	git := exec.Command("git", "init", "-q")
	git.Dir, git.Env = repo, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if out, err := git.CombinedOutput(); err != nil {
		tb.Fatalf("git init: %v\n%s", err, out)
	}
	return home, repo
}

// runClient runs a client in dir with only PATH and env as its environment (so that no key or
// setting of the developer's leaks in), stdin empty, and fails unless it exits 0 in time.
func runClient(tb testing.TB, dir string, env []string, bin string, args ...string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), realClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		tb.Fatalf("%s did not finish within %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), realClientTimeout, &stdout, &stderr)
	}
	if err != nil {
		tb.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), err, &stdout, &stderr)
	}
	return stdout.String()
}

// roundTrip finds, among the requests to path, a tool call of tool followed by a final text
// answering a conversation that holds the tool's result.
func roundTrip(tb testing.TB, reqs []Request, path, tool string) (call, final Request) {
	tb.Helper()
	i := slices.IndexFunc(reqs, func(r Request) bool {
		return strings.HasPrefix(r.Path, path) && r.Action == ActionToolCall && r.Tool == tool
	})
	if i < 0 {
		tb.Fatalf("no %s call among %v", tool, summary(reqs))
	}
	j := slices.IndexFunc(reqs[i+1:], func(r Request) bool {
		return strings.HasPrefix(r.Path, path) && r.Action == ActionFinalText && r.ToolResult
	})
	if j < 0 {
		tb.Fatalf("no final text after the tool result among %v", summary(reqs))
	}
	return reqs[i], reqs[i+1+j]
}

func summary(reqs []Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method+" "+r.Path+" "+r.Action+" "+r.Tool)
	}
	return out
}

func jsonLines(tb testing.TB, path string) [][]byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read %s: %v", path, err)
	}
	return out
}
