package openclaw

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// TestRealClient runs the real OpenClaw (realclient.FindOpenClaw: skipped when it is missing,
// unless OBSERVER_REQUIRE_CLIENTS=1) for one turn against observer-fakeapi and reads what it
// wrote: one usage per model request, at the fake's figures, under the request's response id,
// and the tool call with its result. A second pass emits nothing.
func TestRealClient(t *testing.T) {
	bin := realclient.FindOpenClaw(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	home, repo := realclient.Dirs(t)
	realclient.OpenClawHome(t, home)
	out := realclient.Run(t, repo, realclient.OpenClawEnv(home, srv.URL+"/v1"), bin, realclient.OpenClawArgs("list the files")...)
	if !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Errorf("openclaw printed %q", out)
	}

	a := &Adapter{Roots: []string{filepath.Join(home, ".openclaw")}}
	srcs, err := a.Discover()
	if err != nil || len(srcs) != 1 || !srcs[0].Database {
		t.Fatalf("discovered %+v, %v", srcs, err)
	}
	evs, p := poll(t, a, srcs[0], nil)
	if st := p.Stats(); st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
	byMsg := map[string]*event.TokenUsage{}
	for _, e := range evs {
		if e.TokenUsage != nil {
			byMsg[e.TokenUsage.MessageID] = e.TokenUsage
		}
	}
	turns := 0
	for _, r := range fake.Requests() {
		if r.Method != "POST" || r.ResponseID == "" {
			continue
		}
		turns++
		u := byMsg[r.ResponseID]
		want := event.Tokens{Input: usage.Input, Output: usage.Output, CacheRead: usage.CacheRead, Reasoning: usage.Reasoning}
		if u == nil || u.Tokens != want || u.Model != realclient.FakeModel {
			t.Errorf("request %s (%s): usage %+v, want %+v", r.ResponseID, r.Path, u, want)
		}
	}
	if turns < 2 || len(byMsg) != turns {
		t.Errorf("%d usages for %d model requests", len(byMsg), turns)
	}
	acts := transcripttest.ActionsOf(evs)
	if len(acts) == 0 || acts[0].Success == nil {
		t.Errorf("tool actions %+v, want the call with its result", acts)
	}
	if again, _ := poll(t, a, srcs[0], p.State()); len(again) != 0 {
		t.Errorf("second pass: %d events", len(again))
	}
}
