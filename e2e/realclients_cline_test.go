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

// TestRealClients_ClineThroughProxy runs the real Cline CLI, offline, against the fake OpenAI
// Chat Completions API through observer-proxy started by `observerctl up`. Cline sends no session
// id: every request the fake served must be one api_turn of client cline, linked by the writer
// to the message of the session that the watcher read from ~/.cline/data/sessions (same model and
// figures within 30 s), and `cost` must count each turn once at the fake's figures.
func TestRealClients_ClineThroughProxy(t *testing.T) {
	cline := realclient.FindCline(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	home, repo := realclient.Dirs(t)
	s := newSuite(t, "HOME="+home, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL)
	s.start()

	env := realclient.ClineEnv(home)
	realclient.Run(t, repo, env, cline, realclient.ClineAuthArgs("http://"+proxyAddr+"/v1", "gpt-5.2")...)
	t0 := time.Now()
	out := realclient.Run(t, repo, env, cline, realclient.ClineArgs(repo, "list the files")...)
	t.Logf("cline through the proxy in %v", time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Fatalf("cline printed %q", out)
	}
	var turns []fakeapi.Request
	for _, r := range fake.Requests() {
		if r.ResponseID != "" && r.Method == "POST" {
			turns = append(turns, r)
		}
	}
	if len(turns) < 2 {
		t.Fatalf("the fake served %d model requests, want a tool round trip", len(turns))
	}
	s.waitCount(20*time.Second, len(turns), "SELECT count(*) FROM api_turns WHERE client = 'cline'")
	if n := s.count("SELECT count(*) FROM api_turns"); n != len(turns) {
		t.Errorf("%d api_turns for the %d requests the fake served", n, len(turns))
	}

	// The watcher reads the session's messages; each is linked to its proxy turn.
	deadline := time.Now().Add(30 * time.Second)
	for s.count("SELECT count(*) FROM token_usage WHERE client = 'cline'") < len(turns) ||
		s.count("SELECT count(*) FROM api_turns WHERE session_id != ''") < len(turns) {
		if time.Now().After(deadline) {
			t.Fatalf("%d transcript messages, %d proxy turns linked to a session, for %d requests\n%s",
				s.count("SELECT count(*) FROM token_usage WHERE client = 'cline'"),
				s.count("SELECT count(*) FROM api_turns WHERE session_id != ''"), len(turns), s.readFile("logs/watch.log"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	db := s.db()
	var session string
	db.QueryRow("SELECT session_id FROM token_usage WHERE client = 'cline' LIMIT 1").Scan(&session)
	if n := s.count("SELECT count(*) FROM api_turns WHERE session_id = ?", session); n != len(turns) {
		t.Errorf("%d proxy turns linked to session %s, the fake served %d", n, session, len(turns))
	}
	var in, outTok, cr int64
	db.QueryRow("SELECT sum(input_tokens), sum(output_tokens), sum(cache_read_tokens) FROM token_usage WHERE client = 'cline'").
		Scan(&in, &outTok, &cr)
	n := int64(len(turns))
	if in != n*usage.Input || outTok != n*usage.Output || cr != n*usage.CacheRead {
		t.Errorf("transcript usage in/out/cache_read %d/%d/%d, want %d/%d/%d", in, outTok, cr, n*usage.Input, n*usage.Output, n*usage.CacheRead)
	}
	if s.count("SELECT count(*) FROM actions WHERE session_id = ? AND type = 'user_prompt'", session) != 1 {
		t.Errorf("the prompt is not stored as a user_prompt of session %s", session)
	}
	cout, errOut, code := s.ctl(nil, "cost", "--json")
	if code != 0 {
		t.Fatalf("cost: %d %s", code, errOut)
	}
	var c costJSON
	json.Unmarshal([]byte(cout), &c)
	if c.Total.Turns != n || c.Total.Input != n*usage.Input || c.Total.Output != n*usage.Output || c.Total.CacheRead != n*usage.CacheRead {
		t.Errorf("cost counts %+v, want each of the %d turns once at the fake's figures", c.Total, n)
	}
	t.Logf("%d cline turns joined to session %s; cost counts %d turns", n, session, c.Total.Turns)
}
