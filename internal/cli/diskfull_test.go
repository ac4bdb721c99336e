package cli

import (
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/supervisor"
)

// TestMarkDiskFull: a full disk makes the bus and the writer unhealthy and the proxy and the
// watcher degraded, each saying "disk full: N free on <path>"; the dashboard keeps its health.
func TestMarkDiskFull(t *testing.T) {
	comps := []supervisor.ChildStatus{
		{Name: "bus", Health: "ok", Detail: "0 pending for the writer"},
		{Name: "writer", Health: "ok"},
		{Name: "proxy", Health: "ok", Detail: "127.0.0.1:8820"},
		{Name: "watch", Health: "ok"},
		{Name: "dash", Health: "ok"},
	}
	const full = "disk full: 0 B free on /home/me/.observer"
	markDiskFull(comps, full, "JetStream stream '$G > OBSERVER' write error: no space left on device")
	want := map[string]string{"bus": "unhealthy", "writer": "unhealthy", "proxy": "degraded", "watch": "degraded", "dash": "ok"}
	for _, c := range comps {
		if c.Health != want[c.Name] {
			t.Errorf("%s: health %s, want %s", c.Name, c.Health, want[c.Name])
		}
		if c.Name != "dash" && (!strings.HasPrefix(c.Detail, full) || len(c.Problems) == 0 || !strings.HasPrefix(c.Problems[0], full)) {
			t.Errorf("%s: detail %q, problems %q: want them to start with %q", c.Name, c.Detail, c.Problems, full)
		}
	}
	st := statusReport{Running: true, Components: comps}
	if st.allHealthy() {
		t.Error("a suite on a full disk is all healthy")
	}

	// The bus's write error alone (the disk has room again, the bus has not recovered yet).
	comps = []supervisor.ChildStatus{{Name: "bus", Health: "ok"}, {Name: "writer", Health: "ok"}}
	markDiskFull(comps, "", "write error: no space left on device")
	if comps[0].Health != "unhealthy" || !strings.Contains(comps[0].Detail, "cannot store events") || comps[1].Health != "ok" {
		t.Errorf("bus write error only: %+v", comps)
	}
	comps = []supervisor.ChildStatus{{Name: "bus", Health: "ok", Detail: "x"}}
	markDiskFull(comps, "", "")
	if comps[0].Health != "ok" || comps[0].Detail != "x" {
		t.Errorf("no full disk: %+v", comps[0])
	}
}
