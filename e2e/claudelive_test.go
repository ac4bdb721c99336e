package e2e

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
)

// TestWatch_ClaudeLive runs the real Claude Code CLI twice while observer-watch follows its
// transcripts: once straight at the fake API (only the transcript sees the turns), once through
// observer-proxy (both paths see them). Each time, every message's token_usage row equals, bucket by
// bucket, the usage the fake API returned for it, once per message, and reaches the store within
// a second of its line appearing on disk. `observerctl cost` then counts every turn once: the
// proxied session's turns come from the proxy, not from the proxy and the transcript.
func TestWatch_ClaudeLive(t *testing.T) {
	claude := realclient.FindClaude(t)
	// Distinct non-zero buckets, none equal to another's, so a swapped bucket shows.
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, CacheWrite5m: 222, CacheWrite1h: 111}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	home, repo := realclient.Dirs(t)
	// CLAUDE_CONFIG_DIR is empty (newSuite): the watcher and Claude both use HOME/.claude.
	s := newSuite(t, "HOME="+home, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL)
	s.start()
	db := s.db()
	projects := filepath.Join(home, ".claude", "projects")

	direct := runClaudeWatched(t, s, db, fake, claude, home, repo, up.URL, projects, usage.Output)
	proxied := runClaudeWatched(t, s, db, fake, claude, home, repo, "http://"+proxyAddr, projects, usage.Output)
	if direct.session == proxied.session {
		t.Fatalf("both runs have session %q", direct.session)
	}

	// 1. The transcript's figures are the fake API's, each message once.
	for _, run := range []claudeRun{direct, proxied} {
		checkTranscriptUsage(t, db, run)
	}
	if n := s.count("SELECT count(*) FROM api_turns WHERE session_id = ?", direct.session); n != 0 {
		t.Errorf("%d api_turns for the session that bypassed the proxy", n)
	}

	// 3. With the proxy in the path, every proxied message is also an api_turn; cost counts it once.
	s.waitCount(10*time.Second, len(proxied.turns), "SELECT count(*) FROM api_turns WHERE session_id = ?", proxied.session)
	for _, r := range proxied.turns {
		if n := s.count("SELECT count(*) FROM api_turns WHERE message_id = ?", r.ResponseID); n != 1 {
			t.Errorf("message %s: %d api_turns, want 1", r.ResponseID, n)
		}
	}
	var rep costReport
	ctlJSON(t, s, &rep, "cost", "--json", "--group-by", "session")
	want := map[string]costBuckets{direct.session: sumUsage(direct.turns, 0), proxied.session: sumUsage(proxied.turns, int64(len(proxied.turns)))}
	got := map[string]costBuckets{}
	for _, r := range rep.Rows {
		got[r.SessionID] = r.costBuckets
	}
	if len(got) != len(want) || got[direct.session] != want[direct.session] || got[proxied.session] != want[proxied.session] {
		t.Errorf("cost by session:\n got %+v\nwant %+v (each turn once)", got, want)
	}
	// The same usage of the same model costs the same whichever path measured it.
	usd := map[string]float64{}
	for _, r := range rep.Rows {
		usd[r.SessionID] = r.CostUSD
	}
	if d, p := usd[direct.session], usd[proxied.session]; d <= 0 || math.Abs(d-p) > 1e-9 {
		t.Errorf("cost_usd: $%v from the transcript, $%v from the proxy, for the same usage", d, p)
	}
	total := want[direct.session].plus(want[proxied.session])
	if rep.Total.costBuckets != total {
		t.Errorf("cost --group-by session total %+v, want %+v", rep.Total.costBuckets, total)
	}
	var all costReport
	ctlJSON(t, s, &all, "cost", "--json")
	if all.Total.costBuckets != total {
		t.Errorf("cost total %+v, want %+v", all.Total.costBuckets, total)
	}
	t.Logf("cost: %d turns (%d from the proxy), %d input, %d output, %d cache read, %d cache write (%d 1h), $%.4f",
		all.Total.Turns, all.Total.ProxyTurns, all.Total.Input, all.Total.Output, all.Total.CacheRead,
		all.Total.CacheWrite, all.Total.Cache1h, all.Total.CostUSD)
}

// claudeRun is what one Claude Code run produced: its session, the model turns the fake answered,
// and, per message id, when its first transcript line appeared on disk and when its token_usage row
// with the final output appeared in the store.
type claudeRun struct {
	session        string
	turns          []fakeapi.Request
	onDisk, stored map[string]time.Time
}

// runClaudeWatched runs claude -p in repo against baseURL while two pollers time each message: one
// reads the transcripts under projects, the other the store. It returns once every message the
// fake answered for the session has its row, and fails after 10 s.
func runClaudeWatched(t *testing.T, s *suite, db *sql.DB, fake *fakeapi.Server, claude, home, repo, baseURL, projects string, output int64) claudeRun {
	t.Helper()
	before := len(fake.Requests())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	run := claudeRun{onDisk: map[string]time.Time{}, stored: map[string]time.Time{}}
	wg.Add(2)
	go func() { // transcript lines, every 5 ms
		defer wg.Done()
		for ctx.Err() == nil {
			ids := assistantMessageIDs(projects)
			now := time.Now()
			mu.Lock()
			for _, id := range ids {
				if _, ok := run.onDisk[id]; !ok {
					run.onDisk[id] = now
				}
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	go func() { // store rows with the final output, every 10 ms
		defer wg.Done()
		for ctx.Err() == nil {
			rows, err := db.QueryContext(ctx, "SELECT message_id FROM token_usage WHERE client = 'claude-code' AND output_tokens = ?", output)
			now := time.Now()
			for err == nil && rows.Next() {
				var id string
				rows.Scan(&id)
				mu.Lock()
				if _, ok := run.stored[id]; !ok {
					run.stored[id] = now
				}
				mu.Unlock()
			}
			if rows != nil {
				rows.Close()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	t0 := time.Now()
	out := realclient.Run(t, repo, realclient.ClaudeEnv(home, baseURL), claude, realclient.ClaudeArgs("list the files")...)
	exited := time.Now()
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		cancel()
		wg.Wait()
		t.Fatalf("claude (%s) printed %q", baseURL, out)
	}
	reqs := fake.Requests()[before:]
	if _, _, err := fakeapi.RoundTrip(reqs, "/v1/messages", "Bash"); err != nil {
		cancel()
		wg.Wait()
		t.Fatalf("claude (%s): %v", baseURL, err)
	}
	for _, r := range reqs {
		if r.Provider == fakeapi.ProviderAnthropic && r.Method == "POST" && r.ResponseID != "" {
			run.turns = append(run.turns, r)
			if run.session == "" {
				run.session = r.SessionID
			} else if r.SessionID != run.session {
				t.Errorf("claude sent sessions %q and %q in one run", run.session, r.SessionID)
			}
		}
	}
	deadline := exited.Add(10 * time.Second)
	for {
		mu.Lock()
		missing := slices.IndexFunc(run.turns, func(r fakeapi.Request) bool { return run.stored[r.ResponseID].IsZero() })
		mu.Unlock()
		if missing < 0 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			wg.Wait()
			t.Fatalf("message %s of claude (%s) not in the store 10s after claude exited\nwatch.log:\n%s",
				run.turns[missing].ResponseID, baseURL, s.readFile("logs/watch.log"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()

	// 2. Latency, from the message's first line on disk to its row in the store.
	var worst time.Duration
	var each []string
	for _, r := range run.turns {
		disk, ok := run.onDisk[r.ResponseID]
		if !ok {
			t.Fatalf("message %s never seen in a transcript under %s", r.ResponseID, projects)
		}
		d := run.stored[r.ResponseID].Sub(disk)
		worst = max(worst, d)
		each = append(each, fmt.Sprintf("%s %v", r.ResponseID, d.Round(time.Millisecond)))
	}
	t.Logf("claude (%s) ran %v; transcript line on disk -> token_usage row in the store: %s (worst %v; last row %v after claude exited)",
		baseURL, exited.Sub(t0).Round(time.Millisecond), strings.Join(each, ", "), worst.Round(time.Millisecond),
		maxStored(run).Sub(exited).Round(time.Millisecond))
	// The watcher is woken by fsnotify; its fallback poll is 0.5 s. The delay is logged above, not
	// asserted: a busy machine stretches it, and what a test asserts is that every line arrived.
	return run
}

func maxStored(run claudeRun) time.Time {
	var last time.Time
	for _, r := range run.turns {
		if at := run.stored[r.ResponseID]; at.After(last) {
			last = at
		}
	}
	return last
}

// assistantMessageIDs returns the message ids of the assistant lines of every transcript under
// projects. Only complete lines count.
func assistantMessageIDs(projects string) []string {
	files, _ := filepath.Glob(filepath.Join(projects, "*", "*.jsonl"))
	var ids []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i]
		} else {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var line struct {
				Type    string `json:"type"`
				Message struct {
					ID string `json:"id"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Type == "assistant" && line.Message.ID != "" {
				ids = append(ids, line.Message.ID)
			}
		}
	}
	return ids
}

// checkTranscriptUsage asserts that each message the fake answered in the run is one token_usage
// row of the run's session with the fake's buckets, and that the session has no other rows.
func checkTranscriptUsage(t *testing.T, db *sql.DB, run claudeRun) {
	t.Helper()
	for _, r := range run.turns {
		rows, err := db.Query(`SELECT session_id, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
			cache_creation_1h_tokens, reasoning_tokens FROM token_usage WHERE client = 'claude-code' AND message_id = ?`, r.ResponseID)
		if err != nil {
			t.Fatal(err)
		}
		var got [][6]int64
		for rows.Next() {
			var session string
			var b [6]int64
			if err := rows.Scan(&session, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]); err != nil {
				t.Fatal(err)
			}
			if session != run.session {
				t.Errorf("message %s: session %q, claude sent %q", r.ResponseID, session, run.session)
			}
			got = append(got, b)
		}
		rows.Close()
		// Anthropic's input already excludes the cache; cache_creation_input_tokens is 5m + 1h.
		want := [6]int64{r.Usage["input_tokens"], r.Usage["output_tokens"], r.Usage["cache_read_input_tokens"],
			r.Usage["cache_creation_input_tokens"], r.Usage["cache_creation.ephemeral_1h_input_tokens"], 0}
		if len(got) != 1 || got[0] != want {
			t.Errorf("message %s: token_usage rows (in/out/cache_read/cache_write/1h/reasoning) %v, the fake returned %v once",
				r.ResponseID, got, want)
		}
	}
	var n int
	db.QueryRow("SELECT count(*) FROM token_usage WHERE session_id = ?", run.session).Scan(&n)
	if n != len(run.turns) {
		t.Errorf("session %s: %d token_usage rows, want one per message (%d)", run.session, n, len(run.turns))
	}
}

// costBuckets are the figures `observerctl cost --json` reports for a group.
type costBuckets struct {
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheRead  int64 `json:"cache_read_tokens"`
	CacheWrite int64 `json:"cache_creation_tokens"`
	Cache1h    int64 `json:"cache_creation_1h_tokens"`
	Reasoning  int64 `json:"reasoning_tokens"`
	Turns      int64 `json:"turns"`
	ProxyTurns int64 `json:"proxy_turns"`
}

func (a costBuckets) plus(b costBuckets) costBuckets {
	return costBuckets{a.Input + b.Input, a.Output + b.Output, a.CacheRead + b.CacheRead, a.CacheWrite + b.CacheWrite,
		a.Cache1h + b.Cache1h, a.Reasoning + b.Reasoning, a.Turns + b.Turns, a.ProxyTurns + b.ProxyTurns}
}

type costRow struct {
	SessionID string  `json:"session_id"`
	CostUSD   float64 `json:"cost_usd"`
	costBuckets
}

type costReport struct {
	Rows  []costRow `json:"rows"`
	Total costRow   `json:"total"`
}

// sumUsage is the usage the fake returned for turns, each counted once; proxyTurns of them were
// seen by the proxy.
func sumUsage(turns []fakeapi.Request, proxyTurns int64) costBuckets {
	var b costBuckets
	for _, r := range turns {
		b = b.plus(costBuckets{Input: r.Usage["input_tokens"], Output: r.Usage["output_tokens"],
			CacheRead: r.Usage["cache_read_input_tokens"], CacheWrite: r.Usage["cache_creation_input_tokens"],
			Cache1h: r.Usage["cache_creation.ephemeral_1h_input_tokens"], Turns: 1})
	}
	b.ProxyTurns = proxyTurns
	return b
}

// ctlJSON runs observerctl and decodes its JSON output into v.
func ctlJSON(t *testing.T, s *suite, v any, args ...string) {
	t.Helper()
	out, errOut, code := s.ctl(nil, args...)
	if code != 0 {
		t.Fatalf("observerctl %v: exit %d: %s", args, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("observerctl %v: %v\n%s", args, err, out)
	}
}
