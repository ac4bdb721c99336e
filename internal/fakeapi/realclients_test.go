package fakeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/observerhq/observer/internal/realclient"
	"net/http/httptest"
	"os"
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
	bin := realclient.FindClaude(t)
	s := New(Config{Usage: realUsage})
	ts := httptest.NewServer(s)
	defer ts.Close()
	home, repo := realclient.Dirs(t)

	start := time.Now()
	stdout := realclient.Run(t, repo, realclient.ClaudeEnv(home, ts.URL), bin, realclient.ClaudeArgs("list the files")...)
	t.Logf("claude ran in %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(stdout, TextAfterTool) {
		t.Errorf("claude printed %q, want the final text %q", stdout, TextAfterTool)
	}

	call, final := mustRoundTrip(t, s.Requests(), "/v1/messages", "Bash")
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
	bin := realclient.FindCodex(t)
	s := New(Config{Usage: realUsage})
	ts := httptest.NewServer(s)
	defer ts.Close()
	home, repo := realclient.Dirs(t)

	// supports_websockets makes Codex try GET /v1/responses as a WebSocket first; the 426 sends
	// it to HTTP. Without the key Codex 0.171 goes straight to HTTP for a custom provider.
	start := time.Now()
	stdout := realclient.Run(t, repo, realclient.CodexEnv(home), bin, realclient.CodexArgs(ts.URL+"/v1", "list the files", true)...)
	t.Logf("codex ran in %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(stdout, `"type":"command_execution"`) || !strings.Contains(stdout, TextAfterTool) {
		t.Errorf("codex --json output lacks the command execution or the final text:\n%s", stdout)
	}

	reqs := s.Requests()
	if !slices.ContainsFunc(reqs, func(r Request) bool { return r.Method == "GET" && r.Status == 426 }) {
		t.Errorf("no WebSocket attempt answered 426; requests: %v", Summary(reqs))
	}
	call, final := mustRoundTrip(t, reqs, "/v1/responses", "exec_command")
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

func mustRoundTrip(tb testing.TB, reqs []Request, path, tool string) (call, final Request) {
	tb.Helper()
	call, final, err := RoundTrip(reqs, path, tool)
	if err != nil {
		tb.Fatal(err)
	}
	return call, final
}
