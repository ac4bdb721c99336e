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
	"github.com/observerhq/observer/pkg/store"
)

// TestRealClients_GeminiThroughProxy runs the real Gemini CLI, offline, against the fake Gemini
// API through observer-proxy started by `observerctl up` (GOOGLE_GEMINI_BASE_URL points at the
// proxy, [proxy] gemini_upstream at the fake). It completes a tool round trip, and every request
// the fake served (the model router's generateContent and the streamGenerateContent turns) is one
// api_turn of client gemini-cli whose buckets are the fake's usageMetadata stored net. The API key
// is in neither the store nor the proxy's log.
func TestRealClients_GeminiThroughProxy(t *testing.T) {
	gemini := realclient.FindGemini(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	home, repo := realclient.Dirs(t)
	realclient.GeminiHome(t, home)
	// The watcher reads the client's HOME: its own records are joined to the proxy's turns.
	s := newSuite(t, "HOME="+home, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_GEMINI_UPSTREAM="+up.URL)
	s.start()

	env := realclient.GeminiEnv(home, "http://"+proxyAddr)
	t0 := time.Now()
	out := realclient.Run(t, repo, env, gemini, realclient.GeminiArgs("list the files")...)
	t.Logf("gemini through the proxy in %v", time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Fatalf("gemini printed %q", out)
	}
	if _, _, err := fakeapi.RoundTrip(fake.Requests(), "/v1beta/models/", "run_shell_command"); err != nil {
		t.Fatalf("gemini: %v", err)
	}

	var turns []fakeapi.Request
	for _, r := range fake.Requests() {
		if r.ResponseID != "" && r.Method == "POST" {
			turns = append(turns, r)
		}
	}
	s.waitCount(20*time.Second, len(turns), "SELECT count(*) FROM api_turns")
	if n := s.count("SELECT count(*) FROM api_turns"); n != len(turns) {
		t.Errorf("%d api_turns for the %d requests the fake served", n, len(turns))
	}
	db := s.db()
	for _, r := range turns {
		var provider, client, endpoint, model, stop string
		var in, out, cr, cc, reasoning int64
		var status, stream, partial int
		err := db.QueryRow(`SELECT provider, client, endpoint, model, stop_reason, input_tokens, output_tokens, cache_read_tokens,
			cache_creation_tokens, reasoning_tokens, status, stream, partial FROM api_turns WHERE message_id = ?`, r.ResponseID).
			Scan(&provider, &client, &endpoint, &model, &stop, &in, &out, &cr, &cc, &reasoning, &status, &stream, &partial)
		if err != nil {
			t.Fatalf("turn %s (%s): %v", r.ResponseID, r.Path, err)
		}
		// Net of cache: Gemini's promptTokenCount includes the cached tokens; its candidates exclude
		// the thinking, which is output too.
		cached := r.Usage["cachedContentTokenCount"]
		want := [5]int64{r.Usage["promptTokenCount"] - cached, r.Usage["candidatesTokenCount"] + r.Usage["thoughtsTokenCount"], cached, 0,
			r.Usage["thoughtsTokenCount"]}
		if got := [5]int64{in, out, cr, cc, reasoning}; got != want {
			t.Errorf("turn %s (%s): buckets in/out/cache_read/cache_write/reasoning %v, the fake returned %v", r.ResponseID, r.Path, got, want)
		}
		if want != [5]int64{usage.Input, usage.Output, usage.CacheRead, 0, usage.Reasoning} {
			t.Errorf("turn %s: the fake's figures %v are not the configured usage", r.ResponseID, want)
		}
		if provider != "google" || client != "gemini-cli" || status != 200 || model != r.Model || stop != "STOP" || partial != 0 ||
			(stream == 1) != r.Stream || endpoint != strings.SplitN(r.Path, "?", 2)[0] {
			t.Errorf("turn %s: provider %q client %q endpoint %q model %q stop %q status %d stream %d partial %d; the fake served %+v",
				r.ResponseID, provider, client, endpoint, model, stop, status, stream, partial, r)
		}
	}
	t.Logf("%d api turns checked against the fake API's usage", len(turns))

	// Gemini CLI sends no session id: its turns are linked to the messages its own records name
	// (same model and figures, within 30 s), so cost counts each turn once, under that session. The
	// router's call has no message in the records: it takes the session of the request after it, so
	// no turn is left under no session ("-").
	deadline := time.Now().Add(20 * time.Second)
	for s.count("SELECT count(*) FROM token_usage WHERE client = 'gemini-cli'") < 1 ||
		s.count("SELECT count(*) FROM api_turns WHERE session_id = ''") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d transcript messages; proxy turns (session, model, endpoint, message):\n%s\n%s", s.count("SELECT count(*) FROM token_usage"),
				dumpRows(s, "SELECT session_id, model, endpoint, transcript_message_id FROM api_turns ORDER BY ts"), s.readFile("logs/watch.log"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	msgs := s.count("SELECT count(*) FROM token_usage WHERE client = 'gemini-cli'")
	session, project := "", ""
	db.QueryRow("SELECT session_id, project FROM token_usage WHERE client = 'gemini-cli' LIMIT 1").Scan(&session, &project)
	if n := s.count("SELECT count(*) FROM api_turns WHERE session_id = ? AND transcript_message_id NOT IN ('', ?)", session, store.NextTurnMark); n != msgs {
		t.Errorf("%d proxy turns linked to messages of session %s, its records hold %d messages", n, session, msgs)
	}
	routed := s.count("SELECT count(*) FROM api_turns WHERE session_id = ? AND project = ? AND transcript_message_id = ? AND endpoint LIKE '%:generateContent'",
		session, project, store.NextTurnMark)
	if n := s.count("SELECT count(*) FROM api_turns WHERE session_id = ?", session); n != len(turns) || routed < 1 {
		t.Errorf("%d proxy turns under session %s (%d router calls with the next turn's session and project %s), want all %d\n%s", n, session,
			routed, project, len(turns), dumpRows(s, "SELECT session_id, project, model, endpoint, transcript_message_id FROM api_turns ORDER BY ts"))
	}
	cout, errOut, code := s.ctl(nil, "cost", "--json")
	if code != 0 {
		t.Fatalf("cost: %d %s", code, errOut)
	}
	var c costJSON
	json.Unmarshal([]byte(cout), &c)
	if c.Total.Turns != int64(len(turns)) || c.Total.Input != int64(len(turns))*usage.Input || c.Total.Output != int64(len(turns))*usage.Output {
		t.Errorf("cost counts %+v, want each of the %d turns once at the fake's figures", c.Total, len(turns))
	}
	t.Logf("%d transcript messages joined to proxy turns; cost counts %d turns", msgs, c.Total.Turns)

	// The key went upstream, and nowhere else.
	key := strings.TrimPrefix(env[1], "GEMINI_API_KEY=")
	if !strings.HasPrefix(key, "AIza") {
		t.Fatalf("env %v: the key is not where the test expects it", env)
	}
	for _, r := range fake.Requests() {
		if r.Method == "POST" && !r.HasAPIKey {
			t.Errorf("%s reached the fake without the key", r.Path)
		}
	}
	s.stop()
	filepath.WalkDir(s.home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), key) {
			t.Errorf("the API key is in %s", p)
		}
		return nil
	})
}
