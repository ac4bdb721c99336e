package dash

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/metrics"
	"github.com/observerhq/observer/internal/query"
)

// withoutSize drops the store size line, which the readers' shared-memory file can change.
func withoutSize(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "observer_store_size_bytes ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMetrics_ServesTheStoresMetrics: GET /metrics is internal/metrics' text for the store, in
// the Prometheus content type, behind the same Host check as every page.
func TestMetrics_ServesTheStoresMetrics(t *testing.T) {
	path := corpusStore(t)
	srv := startServer(t, Options{StorePath: path})
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != metrics.ContentType {
		t.Fatalf("GET /metrics: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	st := openReader(t, path)
	counts, err := query.StoreCounts(context.Background(), st.DB)
	if err != nil {
		t.Fatal(err)
	}
	fams := metrics.Collect(counts, path)
	var want bytes.Buffer
	metrics.Write(&want, fams)
	if withoutSize(string(body)) != withoutSize(want.String()) {
		t.Errorf("GET /metrics:\n%s\nwant:\n%s", body, want.String())
	}
	if !strings.Contains(string(body), `observer_tokens_total{client="claude-code",model="`) {
		t.Errorf("no Claude Code tokens in\n%s", body)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	if r := request(t, "GET", srv.URL+"/metrics", map[string]string{"Host": "evil.example:" + port}); r.StatusCode != 403 {
		t.Errorf("a foreign Host: %d, want 403", r.StatusCode)
	}
	if code := get(t, srv.URL, "/metrics?x=1", nil); code != 400 {
		t.Errorf("a parameter: %d, want 400", code)
	}
}

func TestMetrics_TokenAndNoStore(t *testing.T) {
	token := "0123456789abcdef0123"
	srv := startServer(t, Options{Addr: "0.0.0.0:0", Token: token, StorePath: filepath.Join(t.TempDir(), "none.db")})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	u := "http://127.0.0.1:" + port + "/metrics"
	if r := request(t, "GET", u, nil); r.StatusCode != 401 {
		t.Errorf("no token: %d, want 401", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "observer_store_size_bytes 0\n") || !strings.Contains(string(body), "# TYPE observer_actions_total counter") {
		t.Errorf("with the token and no store: %d\n%s", resp.StatusCode, body)
	}
}
