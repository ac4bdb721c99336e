package crush

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// A message streams: Crush inserts it, rewrites its parts many times (within one second, so its
// updated_at does not move) and finishes it. Each version is read once, and the tool call only
// once its input is complete.
func TestPoll_StreamingSameSecond(t *testing.T) {
	_, path := newProject(t)
	db := newDB(t, path, false)
	// Updates within one second, deterministically: updated_at as Crush's trigger would leave it.
	execT(t, db, "DROP TRIGGER update_messages_updated_at")
	const upd = "UPDATE messages SET parts = ?, finished_at = ?, updated_at = ? WHERE id = ?"
	a := New(nil)
	execT(t, db, insSession, rootID, nil, "t", t0, t0)
	execT(t, db, insMessage, "m1", rootID, "assistant", parts(t, pText{Text: "Let me"}), "gpt-5", "openai", t0, t0)
	evs, state, _ := poll(t, a, path, nil)
	if len(evs) != 1 || evs[0].Kind != event.KindSession {
		t.Fatalf("first pass %d events, want the session only", len(evs))
	}
	partial := parts(t, pText{Text: "Let me look"}, pCall{ID: "c1", Name: "bash", Input: `{"command":"go te`})
	execT(t, db, upd, partial, nil, t0, "m1")
	evs, state, _ = poll(t, a, path, state)
	if len(evs) != 0 {
		t.Fatalf("a call still streaming: %d events, want none", len(evs))
	}
	if evs, _, _ = poll(t, a, path, state); len(evs) != 0 {
		t.Fatalf("the same version again: %d events", len(evs))
	}
	done := parts(t, pText{Text: "Let me look"}, pCall{ID: "c1", Name: "bash", Input: `{"command":"go test ./..."}`, Finished: true},
		pFinish{Reason: "tool_use", Time: t0})
	execT(t, db, upd, done, t0, t0, "m1")
	evs, state, _ = poll(t, a, path, state)
	// The reply's text and its tool call are messages once it is finished.
	transcripttest.CheckConversation(t, transcripttest.Conversation(evs), "assistant\t\tLet me look", "tool_call\tbash\tgo test ./...")
	evs = transcripttest.WithoutMessages(evs)
	if len(evs) != 1 || evs[0].Action == nil || evs[0].Action.Target != "go test ./..." || evs[0].ID != actionID(rootID, "c1") {
		t.Fatalf("finished in the same second: %+v", evs)
	}
	execT(t, db, insMessage, "m2", rootID, "tool", parts(t, pResult{ToolCallID: "c1", Name: "bash", Content: "ok"}, pFinish{Reason: "stop"}), nil, nil, t0, t0)
	evs, state, _ = poll(t, a, path, state)
	if len(evs) != 1 || evs[0].ID != actionID(rootID, "c1") || evs[0].Action.Success == nil || !*evs[0].Action.Success {
		t.Fatalf("the result: %+v", evs)
	}
	if evs, _, _ = poll(t, a, path, state); len(evs) != 0 {
		t.Fatalf("nothing new: %d events", len(evs))
	}
}

// Rows Crush would never write, or that were damaged, are counted and passed over; the rows
// around them are read, and the watermark moves past them.
func TestPoll_Malformed(t *testing.T) {
	_, path := newProject(t)
	db := newDB(t, path, false)
	a := New(nil)
	execT(t, db, insSession, rootID, nil, "t", t0, t0)
	for i, p := range []string{`{"type":"text"}`, `not json`, `[{"type":"text","data":"hello"}]`,
		`[{"type":"tool_call","data":{"id":5}}]`, `[{"type":"finish","data":{"reason":1}}]`, ``} {
		execT(t, db, insMessage, fmt.Sprintf("bad%d", i), rootID, "assistant", p, nil, nil, t0+1, t0+1)
	}
	execT(t, db, insMessage, "good", rootID, "user", parts(t, pText{Text: "hi"}, pFinish{Reason: "stop"}), nil, nil, t0+2, t0+2)
	execT(t, db, insMessage, "odd", rootID, "critic", parts(t, pText{Text: "?"}), nil, nil, t0+3, t0+3)
	execT(t, db, insMessage, "new-part", rootID, "user", `[{"type":"shell_command","data":{"command":"ls"}},{"type":"text","data":{"text":"x"}}]`, nil, nil, t0+4, t0+4)
	evs, state, st := poll(t, a, path, nil)
	if st.Malformed != 6 {
		t.Errorf("malformed %d, want 6", st.Malformed)
	}
	if st.Unknown["message role critic"] != 1 || st.Unknown["part shell_command"] != 1 {
		t.Errorf("unknown %v", st.Unknown)
	}
	if n := len(byKind(evs, event.KindAction)); n != 2 {
		t.Errorf("%d actions, want the two prompts", n)
	}
	if evs, _, st = poll(t, a, path, state); len(evs) != 0 || st.Malformed != 0 {
		t.Errorf("second pass: %d events, %d malformed: the watermark moved past them", len(evs), st.Malformed)
	}
}

// Builds that compress parts store them as a zstd frame; they read as the JSON ones.
func TestPoll_CompressedParts(t *testing.T) {
	_, path := newProject(t)
	db := newDB(t, path, false)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	blob := enc.EncodeAll([]byte(parts(t, pText{Text: "compressed prompt"}, pFinish{Reason: "stop"})), nil)
	execT(t, db, insSession, rootID, nil, "t", t0, t0)
	execT(t, db, insMessage, "m1", rootID, "user", blob, nil, nil, t0, t0)
	execT(t, db, insMessage, "m2", rootID, "user", append([]byte(nil), blob[:8]...), nil, nil, t0, t0) // cut short
	evs, _, st := poll(t, New(nil), path, nil)
	prompts := byKind(evs, event.KindAction)
	if len(prompts) != 1 || prompts[0].Action.Target != "compressed prompt" || st.Malformed != 1 {
		t.Fatalf("prompts %+v, stats %+v", prompts, st)
	}
}

// Builds that record a step's usage on the finish part yield one token usage per assistant
// message, at Crush's own cost; without it, observer's price; the released format yields none.
func TestPoll_FinishUsage(t *testing.T) {
	_, path := newProject(t)
	db := newDB(t, path, false)
	execT(t, db, insSession, rootID, nil, "t", t0, t0)
	execT(t, db, insSession, titleID, rootID, "Title", t0, t0)
	execT(t, db, insMessage, "m1", rootID, "assistant", parts(t, pText{Text: "a"},
		pFinishUsage{Reason: "end_turn", Time: t0, PromptTokens: 1600, CompletionTokens: 200, Cost: 0.0123}), "claude-sonnet-4-5", "anthropic", t0, t0)
	execT(t, db, insMessage, "m2", rootID, "assistant", parts(t, pText{Text: "b"},
		pFinishUsage{Reason: "end_turn", Time: t0, PromptTokens: 1000, CompletionTokens: 100}), "claude-sonnet-4-5", "anthropic", t0+1, t0+1)
	execT(t, db, insMessage, "m3", rootID, "assistant", parts(t, pText{Text: "c"},
		pFinishUsage{Reason: "end_turn", Time: t0, PromptTokens: 10, CompletionTokens: 1}), "no-such-model-x", "custom", t0+2, t0+2)
	execT(t, db, insMessage, "m4", rootID, "assistant", parts(t, pText{Text: "d"}, pFinish{Reason: "end_turn", Time: t0}), "claude-sonnet-4-5", "anthropic", t0+3, t0+3)
	execT(t, db, insMessage, "m5", titleID, "assistant", parts(t, pText{Text: "Title"},
		pFinishUsage{Reason: "end_turn", Time: t0, PromptTokens: 50, CompletionTokens: 5, Cost: 0.0001}), "claude-haiku-4-5", "anthropic", t0+4, t0+4)
	evs, _, _ := poll(t, New(nil), path, nil)
	us := byKind(evs, event.KindTokenUsage)
	if len(us) != 4 {
		t.Fatalf("%d usages, want 4 (m4 records none)", len(us))
	}
	want := map[string]struct {
		in, out int64
		rel     event.Reliability
		agent   string
	}{
		"m1": {1600, 200, event.ReliabilityApproximate, ""}, "m2": {1000, 100, event.ReliabilityApproximate, ""},
		"m3": {10, 1, event.ReliabilityUnknown, ""}, "m5": {50, 5, event.ReliabilityApproximate, titleID},
	}
	for _, e := range us {
		var msg string
		for id := range want {
			if e.ID == event.ID(Client, "usage", id) {
				msg = id
			}
		}
		w, ok := want[msg]
		u := e.TokenUsage
		if !ok || u.Input != w.in || u.Output != w.out || u.CacheRead != 0 || u.Reliability != w.rel || u.AgentID != w.agent || e.SessionID != rootID {
			t.Errorf("%s: %+v, want %+v", msg, u, w)
		}
		switch msg {
		case "m1":
			if u.CostUSD != 0.0123 {
				t.Errorf("m1 cost %v, want Crush's own 0.0123", u.CostUSD)
			}
		case "m2":
			if u.CostUSD <= 0 {
				t.Errorf("m2 cost %v, want observer's price", u.CostUSD)
			}
		case "m3":
			if u.CostUSD != 0 {
				t.Errorf("m3 cost %v", u.CostUSD)
			}
		}
	}
}

// A database with no -wal file (Crush not running, checkpointed) is read as immutable, and the
// pass leaves nothing beside it.
func TestPoll_ImmutableLeavesNoFiles(t *testing.T) {
	dir, path := newProject(t)
	db := newDB(t, path, false)
	fixture(t, db, dir)
	if err := db.Close(); err != nil { // the last connection checkpoints and removes -wal and -shm
		t.Fatal(err)
	}
	if files := transcripttest.DirFiles(t, filepath.Dir(path)); !slices.Equal(files, []string{"crush.db"}) {
		t.Fatalf("files before: %v", files)
	}
	evs, _, _ := poll(t, New(nil), path, nil)
	if len(transcripttest.ActionsOf(evs)) != 9 {
		t.Errorf("%d tool actions, want 9", len(transcripttest.ActionsOf(evs)))
	}
	if files := transcripttest.DirFiles(t, filepath.Dir(path)); !slices.Equal(files, []string{"crush.db"}) {
		t.Errorf("files after: %v", files)
	}
}

// TestPoll_ConcurrentWriter writes messages from another connection the way Crush streams them
// (insert, several rewrites, finish; Crush's trigger stamping updated_at with the current second)
// while the reader polls: every final row is read, none is lost.
func TestPoll_ConcurrentWriter(t *testing.T) {
	_, path := newProject(t)
	db := newDB(t, path, false)
	execT(t, db, insSession, rootID, nil, "t", t0, t0)
	a := New(nil)
	const n = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			id := fmt.Sprintf("m%04d", i)
			now := time.Now().Unix()
			if _, err := db.Exec(insMessage, id, rootID, "assistant", parts(t, pText{Text: "x"}), "gpt-5", "openai", now, now); err != nil {
				t.Error(err)
				return
			}
			for k := range 3 {
				in := fmt.Sprintf(`{"command":"echo %d`, k)
				db.Exec(updMessage, parts(t, pCall{ID: "c" + id, Name: "bash", Input: in}), nil, id)
			}
			final := parts(t, pCall{ID: "c" + id, Name: "bash", Input: fmt.Sprintf(`{"command":"echo %d"}`, i), Finished: true},
				pFinish{Reason: "tool_use", Time: now})
			if _, err := db.Exec(updMessage, final, now, id); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	final := transcripttest.PollUntil(t, a, transcript.Source{Client: Client, Path: path, Database: true}, done, time.Millisecond)
	for i := range n {
		id := fmt.Sprintf("m%04d", i)
		e, ok := final[actionID(rootID, "c"+id)]
		if !ok || e.Action.Target != fmt.Sprintf("echo %d", i) {
			t.Fatalf("%s: %+v, want its finished call", id, e.Action)
		}
	}
}
