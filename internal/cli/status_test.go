package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/pkg/config"
)

// TestStatus_Degraded: a component that runs with part of it not working (the proxy whose OTLP
// listener could not bind) is not healthy: status says degraded with the address and the error,
// in text and JSON, and exits 1.
func TestStatus_Degraded(t *testing.T) {
	e := newCtlEnv(t)
	cfg := config.Default()
	cfg.Home = e.obs
	if err := os.MkdirAll(cfg.RunDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	const problem = "otlp/http listener 127.0.0.1:4318: address already in use (another program holds the port (an OpenTelemetry collector?): stop it, or change [otlp] addr)"
	ctrl := &supervisor.Control{Status: func() any {
		return statusReport{Running: true, PID: 4242, Home: e.obs, Components: []supervisor.ChildStatus{
			{Name: "bus", State: supervisor.StateRunning, Health: "ok"},
			{Name: "proxy", PID: 4244, State: supervisor.StateRunning, Health: "degraded", Problems: []string{problem},
				Detail: problem + "; 127.0.0.1:8820, 0 requests, 0 turns"},
		}}
	}}
	if err := ctrl.Listen(socketPath(&env{cfg: cfg})); err != nil {
		t.Fatal(err)
	}
	defer ctrl.Close()

	code, out, errOut := runCtl(t, "status")
	if code != ExitFailure {
		t.Errorf("status: exit %d, want 1\n%s%s", code, out, errOut)
	}
	var proxyLine string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "proxy ") {
			proxyLine = l
		}
	}
	if !strings.Contains(proxyLine, " degraded ") || !strings.Contains(proxyLine, "127.0.0.1:4318: address already in use") {
		t.Errorf("status does not show the proxy degraded with the address and the error:\n%s", out)
	}

	code, out, _ = runCtl(t, "status", "--json")
	if code != ExitFailure {
		t.Errorf("status --json: exit %d, want 1", code)
	}
	var st statusReport
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if p := st.Components[1]; p.Health != "degraded" || len(p.Problems) != 1 || p.Problems[0] != problem {
		t.Errorf("status --json proxy: %+v", p)
	}
	if st.allHealthy() || !st.settled() {
		t.Errorf("a degraded suite: allHealthy %v, settled %v; want false, true", st.allHealthy(), st.settled())
	}
}
