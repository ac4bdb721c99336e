package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// memoryHome is a home whose store holds three finished sessions of proj that ran `go test ./x`
// (passing) after editing x.go, and one still going on, with the memory loop run as the writer
// runs it.
func memoryHome(t *testing.T, proj string) string {
	t.Helper()
	home := t.TempDir()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now().Add(-3 * time.Hour)
	var evs []event.Event
	n := 0
	add := func(sid string, kind event.Kind, fill func(*event.Event)) {
		n++
		e := event.New(kind, "test")
		e.ID, e.Client, e.SessionID, e.Project, e.Time = fmt.Sprintf("m%d", n), "claude-code", sid, proj, start.Add(time.Duration(n)*time.Second)
		fill(&e)
		evs = append(evs, e)
	}
	action := func(sid string, typ event.ActionType, target string, ok bool) {
		add(sid, event.KindAction, func(e *event.Event) { e.Action = &event.Action{Type: typ, Target: target, Tool: "T", Success: &ok} })
	}
	for i := range 4 {
		sid := fmt.Sprintf("sess-%d", i)
		action(sid, event.ActionUserPrompt, fmt.Sprintf("make the x tests pass (%d)", i), true)
		action(sid, event.ActionEditFile, "x.go", true)
		action(sid, event.ActionRunCommand, "go test ./x", i != 1)
		action(sid, event.ActionRunCommand, "go test ./x", true)
		if i < 3 {
			add(sid, event.KindSession, func(e *event.Event) { e.Session = &event.Session{State: "finalized"} })
		}
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	m := &memory.Memory{DB: st.DB, ObserveEvery: time.Nanosecond}
	if _, err := m.Step(ctx, 100); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestSummaryAndMemory_CLI(t *testing.T) {
	proj := t.TempDir()
	home := memoryHome(t, proj)

	code, out, errOut := runCtl(t, "--home", home, "summary", "sess-1")
	if code != 0 || !strings.Contains(out, "Goal: make the x tests pass (1)") || !strings.Contains(out, "ended by finalized") ||
		!strings.Contains(out, "`go test ./x` 2× (1 failed, last passed)") || !strings.Contains(out, "`go test ./x` failed, then succeeded") {
		t.Fatalf("summary sess-1: exit %d %s\n%s", code, errOut, out)
	}
	// The session still going on: its epoch so far, computed on the spot.
	code, out, _ = runCtl(t, "--home", home, "summary", "sess-3")
	if code != 0 || !strings.Contains(out, "so far") || !strings.Contains(out, "Goal: make the x tests pass (3)") {
		t.Fatalf("summary of a session going on: exit %d\n%s", code, out)
	}
	// The prompt a model would get, shown and not sent (no model is set: nothing could be).
	code, out, _ = runCtl(t, "--home", home, "summary", "sess-1", "--dry-run")
	if code != 0 || !strings.Contains(out, "dry run, not sent") || !strings.Contains(out, "make the x tests pass (1)") {
		t.Fatalf("summary --dry-run: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCtl(t, "--home", home, "summary", "no-such"); code != ExitFailure {
		t.Errorf("summary of an unknown session: exit %d %s", code, errOut)
	}

	code, out, errOut = runCtl(t, "--home", home, "memory", "--project", proj, "--json", "--min-confidence", "0")
	var obs []query.Observation
	if code != 0 || json.Unmarshal([]byte(out), &obs) != nil {
		t.Fatalf("memory --json: exit %d %s\n%s", code, errOut, out)
	}
	var test *query.Observation
	for i := range obs {
		// A run of one package is a narrowed run of the project's test command, go test ./...
		if obs[i].Kind == query.KindTestCommand && obs[i].Key == "go test ./..." {
			test = &obs[i]
		}
	}
	if test == nil || test.Support != 4 || len(test.Evidence) != 4 { // the session going on counts too
		t.Fatalf("memory: no test command learned from the four sessions: %+v", obs)
	}
	code, out, _ = runCtl(t, "--home", home, "memory", "--project", proj, "--evidence")
	if code != 0 || !strings.Contains(out, "tests run with `go test ./...`") || !strings.Contains(out, "run_command go test ./x") {
		t.Fatalf("memory --evidence: exit %d\n%s", code, out)
	}

	// suggest writes it into CLAUDE.md as an instruction.
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	code, out, errOut = runCtl(t, "--home", home, "suggest", "--dir", proj, "--dry-run", "--min-confidence", "0.5")
	if code != 0 || !strings.Contains(out, "## What past sessions learned") || !strings.Contains(out, "- Run the tests with `go test ./...`") {
		t.Fatalf("suggest with observations: exit %d %s\n%s", code, errOut, out)
	}

	// Forgotten (observer is not running: straight in the store), it is gone from the list.
	if code, out, errOut := runCtl(t, "--home", home, "memory", "forget", strconv.FormatInt(test.ID, 10)); code != 0 {
		t.Fatalf("memory forget: exit %d %s %s", code, out, errOut)
	}
	if code, _, _ := runCtl(t, "--home", home, "memory", "forget", strconv.FormatInt(test.ID, 10)); code != ExitFailure {
		t.Errorf("forgetting it twice: exit %d", code)
	}
	_, out, _ = runCtl(t, "--home", home, "memory", "--project", proj, "--min-confidence", "0")
	if strings.Contains(out, "tests run with") {
		t.Errorf("a forgotten observation is listed:\n%s", out)
	}
	code, out, _ = runCtl(t, "--home", home, "memory", "export", "--project", proj)
	var exp struct {
		Summaries []query.StoredSummary `json:"summaries"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || len(exp.Summaries) != 3 {
		t.Errorf("memory export: exit %d, %d summaries\n%s", code, len(exp.Summaries), out)
	}
}
