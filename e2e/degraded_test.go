package e2e

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// TestStatus_OTLPPortTaken: another program holds the OTLP/HTTP port before observer starts. The
// proxy serves on without that listener, but `up -d`, `status`, `status --json` and doctor say the
// proxy is degraded, naming the address and the error, instead of "ok" with the error only in
// logs/proxy.log.
func TestStatus_OTLPPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0") // the other collector
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	s := newSuite(t, "OBSERVER_OTLP_ADDR="+addr)
	want := "otlp/http listener " + addr + ": address already in use"

	// up -d returns once every component settled, and says what does not work.
	out, errOut, code := s.ctl(nil, "up", "-d", "--grace", "5s")
	t.Cleanup(func() { s.ctl(nil, "down") })
	if code != 1 || !strings.Contains(out+errOut, want) {
		t.Fatalf("up -d: exit %d, want 1 naming %q\n%s%s", code, want, out, errOut)
	}

	var proxyLine string
	deadline := time.Now().Add(patient(0))
	for proxyLine == "" && time.Now().Before(deadline) {
		out, _, code = s.ctl(nil, "status")
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "proxy ") && strings.Contains(l, " degraded ") {
				proxyLine = l
			}
		}
		if proxyLine == "" {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if proxyLine == "" || code != 1 || !strings.Contains(proxyLine, want) {
		t.Fatalf("status: exit %d, want 1 and the proxy degraded naming %q:\n%s\n%s", code, want, out, s.readFile("logs/proxy.log"))
	}

	out, _, code = s.ctl(nil, "status", "--json")
	var st struct {
		Components []struct {
			Name     string   `json:"name"`
			Health   string   `json:"health"`
			Problems []string `json:"problems"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 1 {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, out)
	}
	for _, c := range st.Components {
		if c.Name == "proxy" && (c.Health != "degraded" || len(c.Problems) != 1 || !strings.HasPrefix(c.Problems[0], want)) {
			t.Errorf("status --json proxy: health %q problems %q, want degraded, %q", c.Health, c.Problems, want)
		}
	}

	out, _, code = s.ctl(nil, "doctor", "--json")
	var rep struct {
		Checks []struct{ Name, Status, Detail, Fix string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("doctor --json: exit %d, %v\n%s", code, err, out)
	}
	for _, c := range rep.Checks {
		if c.Name == "otlp" && (c.Status != "fail" || !strings.Contains(c.Detail, want)) {
			t.Errorf("doctor otlp: %s %q, want fail naming %q", c.Status, c.Detail, want)
		}
	}
}
