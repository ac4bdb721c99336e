package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dashAddr is the dashboard's address in the suite's environment.
func (s *suite) dashAddr() string {
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "OBSERVER_DASH_ADDR="); ok {
			return v
		}
	}
	s.tb.Fatal("no OBSERVER_DASH_ADDR in the suite")
	return ""
}

// TestDash_UpServesTheCorpus: `observerctl up` runs observer-dash and reports it healthy; on the
// corpus scanned by `observerctl scan`, its Overview and Cost totals equal `observerctl cost
// --json` for the same window; a hook call reaches /api/live within a second; a foreign Host
// header gets 403. (The page itself is tested in Chromium by internal/dash's TestBrowser.)
func TestDash_UpServesTheCorpus(t *testing.T) {
	clientHome := corpusHome(t)
	s := newSuite(t, "HOME="+clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	if out, errOut, code := s.ctl(nil, "scan", "--json"); code != 0 {
		t.Fatalf("scan: exit %d\n%s\n%s", code, out, errOut)
	}
	s.start()
	var dashHealth string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		st, _ := s.status()
		for _, c := range st.Components {
			if c.Name == "dash" {
				dashHealth = c.Health
			}
		}
		if dashHealth == "ok" {
			break
		}
	}
	if dashHealth != "ok" {
		t.Fatalf("observer-dash health %q under `observerctl up`\n%s", dashHealth, s.readFile("logs/dash.log"))
	}
	base := "http://" + s.dashAddr()

	type totals struct {
		Input      int64   `json:"input_tokens"`
		Output     int64   `json:"output_tokens"`
		CacheRead  int64   `json:"cache_read_tokens"`
		CacheWrite int64   `json:"cache_creation_tokens"`
		Cache1h    int64   `json:"cache_creation_1h_tokens"`
		Reasoning  int64   `json:"reasoning_tokens"`
		CostUSD    float64 `json:"cost_usd"`
		Turns      int64   `json:"turns"`
	}
	for window, since := range map[string]string{"all": "", "3650d": "3650d", "30d": "30d"} {
		args := []string{"cost", "--json"}
		if since != "" {
			args = append(args, "--since", since)
		}
		out, errOut, code := s.ctl(nil, args...)
		if code != 0 {
			t.Fatalf("cost %v: exit %d %s", args, code, errOut)
		}
		var cli struct{ Total totals }
		if err := json.Unmarshal([]byte(out), &cli); err != nil {
			t.Fatal(err)
		}
		if window == "all" && cli.Total.Turns == 0 {
			t.Fatal("the scanned corpus has no turns")
		}
		for _, tab := range []string{"overview", "cost"} {
			resp, err := http.Get(base + "/api/" + tab + "?window=" + window)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Store bool
				Total totals
			}
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if resp.StatusCode != 200 || err != nil || !got.Store {
				t.Fatalf("/api/%s?window=%s: %d %v store=%v", tab, window, resp.StatusCode, err, got.Store)
			}
			if math.Abs(got.Total.CostUSD-cli.Total.CostUSD) < 1e-6 {
				got.Total.CostUSD = cli.Total.CostUSD
			}
			if got.Total != cli.Total {
				t.Errorf("/api/%s?window=%s total %+v, `observerctl %s` says %+v", tab, window, got.Total, strings.Join(args, " "), cli.Total)
			}
		}
	}

	// A hook call, published on the bus, reaches the live stream.
	resp, err := http.Get(base + "/api/live?kind=hook")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitLine := func(prefix string, d time.Duration) string {
		t.Helper()
		timeout := time.After(d)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the live stream ended waiting for %q", prefix)
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q line within %v", prefix, d)
			}
		}
	}
	if hello := waitLine("data: ", 5*time.Second); !strings.Contains(hello, `"bus_connected":true`) {
		t.Fatalf("live stream hello: %s", hello)
	}
	start := time.Now()
	if _, errOut, code := s.ctl(hookPayload("dash", 1), "hook"); code != 0 {
		t.Fatalf("hook: exit %d %s", code, errOut)
	}
	ev := waitLine("data: ", 30*time.Second)
	t.Logf("hook call to live stream: %v", time.Since(start))
	if !strings.Contains(ev, `"session_id":"sess-dash-1"`) || !strings.Contains(ev, "PreToolUse") {
		t.Fatalf("live event %s is not the hook call", ev)
	}

	// DNS rebinding: another site's name on the dashboard's address is refused.
	req, _ := http.NewRequest("GET", base+"/api/status", nil)
	req.Host = "rebind.example:" + strings.Split(s.dashAddr(), ":")[1]
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r2.Body)
	r2.Body.Close()
	if r2.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403", r2.StatusCode)
	}
}
