package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// `observerctl limits` gives the providers' figures and resets exactly as they were given; with
// none, it says so and shows the token-based blocks, marked estimated, never as measured.
func TestLimits_Command(t *testing.T) {
	home := costHome(t) // a store with turns, no limit figure
	code, out, errOut := runCtl(t, "--home", home, "limits")
	if code != 0 || !strings.Contains(out, "no provider limit figure seen yet") {
		t.Fatalf("no figures: exit %d\n%s%s", code, out, errOut)
	}
	var rep limitsReport
	code, out, _ = runCtl(t, "--home", home, "limits", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Limits) != 0 || rep.Estimated == nil ||
		!strings.Contains(rep.Estimated.Note, "estimated") {
		t.Fatalf("no figures, JSON: exit %d\n%s", code, out)
	}

	st, err := store.OpenWriter(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	reset5h, reset7d := now.Add(2*time.Hour+13*time.Minute+30*time.Second), now.Add(3*24*time.Hour)
	var evs []event.Event
	for i, l := range []event.Limit{
		{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: 42, Status: "allowed", ResetsAt: reset5h},
		{Provider: "anthropic", Window: "7d", WindowMinutes: 10080, UsedPercent: 7, Status: "allowed", ResetsAt: reset7d},
	} {
		ev := event.New(event.KindLimit, "observer-proxy")
		ev.ID, ev.Time, ev.Client, ev.Limit = "l"+string(rune('0'+i)), now, "claude-code", &l
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	rep = limitsReport{}
	code, out, _ = runCtl(t, "--home", home, "limits", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Estimated != nil || len(rep.Limits) != 2 {
		t.Fatalf("figures, JSON: exit %d\n%s", code, out)
	}
	five, week := rep.Limits[0], rep.Limits[1]
	if five.Window != "5h" || five.UsedPercent != 42 || !five.ResetsAt.Equal(reset5h) || five.Client != "claude-code" ||
		week.Window != "7d" || week.UsedPercent != 7 || !week.ResetsAt.Equal(reset7d) {
		t.Errorf("limits %+v", rep.Limits)
	}
	if !strings.Contains(out, `"resets_at": "`+reset5h.UTC().Format(time.RFC3339)+`"`) {
		t.Errorf("the reset is not given in RFC 3339 UTC:\n%s", out)
	}
	code, out, _ = runCtl(t, "--home", home, "limits")
	for _, want := range []string{"PROVIDER", "anthropic", "5h", "42%", "7%", reset5h.Local().Format("15:04") + " (in 2 h 1", "not before the reset"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("table lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	if strings.Contains(out, "estimated") {
		t.Errorf("measured figures shown as estimated:\n%s", out)
	}
}
