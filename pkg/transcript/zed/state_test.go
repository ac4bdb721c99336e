package zed

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// threadJSON is a current thread's JSON (data_type "json") holding msgs.
func threadJSON(msgs ...string) []byte {
	return []byte(`{"version":"0.3.0","title":"Login form","messages":[` + strings.Join(msgs, ",") +
		`],"model":{"provider":"anthropic","model":"claude-sonnet-4-5"},"cumulative_token_usage":{"input_tokens":10,"output_tokens":5}}`)
}

func userMsg(id, text string) string {
	return `{"User":{"id":"` + id + `","content":[{"Text":"` + text + `"}]}}`
}

func agentMsg(text string) string {
	return `{"Agent":{"content":[{"Text":"` + text + `"}],"tool_results":{}}}`
}

// zedTime is a time as Zed writes it (chrono's RFC 3339, UTC).
func zedTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }

func prompts(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			out = append(out, e.Action.Target)
		}
	}
	return out
}

// The user edits the first prompt (Zed truncates the thread there) and the thread grows past
// where it was, its last reported message the same as before: the edited prompt is read.
func TestPoll_EditedPromptWhileGrowing(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path)
	const id = "5d1f2e3c-4b5a-4697-8a8b-9c0d1e2f3a4b"
	created := "2026-02-12T10:00:00.000000+00:00"
	execT(t, db, upsertThread, id, nil, "/nonexistent-observer/webapp", "0", "Login form", "2026-02-12T10:01:00.000000+00:00", "json",
		threadJSON(userMsg("u1", "add a login form"), agentMsg("Done."), userMsg("u2", "now style it"), agentMsg("Styled.")), created)
	first, state, _ := poll(t, path, nil)
	if got := strings.Join(prompts(first), "|"); got != "add a login form|now style it" {
		t.Fatalf("prompts %s", got)
	}
	execT(t, db, upsertThread, id, nil, "/nonexistent-observer/webapp", "0", "Login form", "2026-02-12T10:05:00.000000+00:00", "json",
		threadJSON(userMsg("u1b", "add a signup form"), agentMsg("Signup form added."), userMsg("u2b", "now style it"), agentMsg("Styled."),
			userMsg("u3", "add tests"), agentMsg("Tests added.")), created)
	evs, state, _ := poll(t, path, state)
	if got := strings.Join(prompts(evs), "|"); got != "add a signup form|now style it|add tests" {
		t.Errorf("prompts after the edit %q: want the edited prompt, the one after it, the new one", got)
	}
	texts := map[string]bool{}
	for _, e := range evs {
		if e.Message != nil {
			texts[e.Message.Text] = true
		}
	}
	if !texts["add a signup form"] || !texts["Signup form added."] || !texts["Tests added."] {
		t.Errorf("messages after the edit %v", texts)
	}
	if again, _, _ := poll(t, path, state); len(again) != 0 {
		t.Errorf("a pass after the edit emitted %d events", len(again))
	}
}

// The State keeps the most recently updated threads one by one and settles the others under a
// watermark of updated_at; a settled thread Zed saves again is read (again from its first
// message, under the ids it had). A pass streams its events in batches.
func TestPoll_StateBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path)
	const n = maxRecent + 40
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	idOf := func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }
	updOf := func(i int) string { return zedTime(base.Add(time.Duration(i) * 2 * time.Hour)) }
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := tx.Exec(insThread, idOf(i), nil, "/nonexistent-observer/webapp", "0", fmt.Sprintf("Thread %d", i), updOf(i), "json",
			threadJSON(userMsg("u", fmt.Sprintf("task %d", i)), agentMsg("Done.")), updOf(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	first, state, st := poll(t, path, nil)
	if st.Lines != n || len(prompts(first)) != n {
		t.Fatalf("read %d threads, %d prompts; want %d", st.Lines, len(prompts(first)), n)
	}
	var s dbState
	if err := json.Unmarshal(state, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Threads) != maxRecent || s.Settled != updatedNs(updOf(n-maxRecent-1)) || len(state) > 32<<10 {
		t.Fatalf("state of %d bytes, %d threads, settled at %v: want the %d most recent, settled at the newest of the others",
			len(state), len(s.Threads), time.Unix(0, s.Settled).UTC(), maxRecent)
	}
	if again, _, st := poll(t, path, state); len(again) != 0 || st.Lines != 0 {
		t.Errorf("a pass from the state read %d threads, emitted %d events", st.Lines, len(again))
	}

	ids := map[string]bool{}
	for _, e := range first {
		ids[e.ID] = true
	}
	old := idOf(2)
	execT(t, db, upsertThread, old, nil, "/nonexistent-observer/webapp", "0", "Thread 2", updOf(n+1), "json",
		threadJSON(userMsg("u", "task 2"), agentMsg("Done."), userMsg("v", "and the docs"), agentMsg("Docs done.")), updOf(2))
	evs, state, st := poll(t, path, state)
	if got := strings.Join(prompts(evs), "|"); st.Lines != 1 || !strings.HasSuffix(got, "and the docs") {
		t.Errorf("a settled thread saved again: %d threads read, prompts %q; want it read, its new prompt", st.Lines, got)
	}
	for _, e := range evs {
		if e.SessionID != old {
			t.Errorf("event of another thread %s", e.SessionID)
		}
		if e.Action != nil && e.Action.Target == "task 2" && !ids[e.ID] {
			t.Errorf("its first prompt again under a new id %s", e.ID)
		}
	}
	if again, _, _ := poll(t, path, state); len(again) != 0 {
		t.Errorf("a pass after it emitted %d events", len(again))
	}

	// A cold pass hands its events over in batches as it reads the threads.
	p, _ := New(nil).NewParser(srcDB(path), nil)
	var calls, total int
	err = p.(transcript.StreamPoller).PollEach(context.Background(), 7, func(batch []event.Event) error {
		if len(batch) == 0 || len(batch) > 7 {
			t.Errorf("a batch of %d events", len(batch))
		}
		calls++
		total += len(batch)
		return nil
	})
	if err != nil || calls < n/4 || total < len(first) {
		t.Errorf("PollEach: %v, %d batches, %d events (a pass from nothing emitted %d)", err, calls, total, len(first))
	}
}
