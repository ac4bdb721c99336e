package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/aider"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

// appendLines adds lines to a file, creating it and its directory.
func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		f.WriteString(l + "\n")
	}
}

// TestScan_CursorsHoldNoText: a pass that ends with a tool call waiting for its result (Claude
// Code's Bash command, Codex's exec command and web search) or a prompt waiting for its reply
// (aider's) saves cursors that hold none of their text; the next pass in the same process still
// gives each result its call's target, and the prompt its text.
func TestScan_CursorsHoldNoText(t *testing.T) {
	home := t.TempDir()
	cc := filepath.Join(home, ".claude", "projects", "-work-app", "0b7c3a52-1f7e-4d1e-9a53-5f1c2b3d4e5f.jsonl")
	cx := filepath.Join(home, ".codex", "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-7d0e2c1a-3b4f-4a5e-8c6d-9e0f1a2b3c4d.jsonl")
	ad := filepath.Join(home, "app", aider.ChatHistoryFile)
	const (
		ccCommand = "echo cursor-marker-claude-4d1e > /tmp/out"
		cxCommand = "cat cursor-marker-codex-8c6d.txt"
		cxQuery   = "cursor-marker-query-9a53"
		adPrompt  = "please deploy cursor-marker-aider-5f1c"
	)
	markers := []string{"cursor-marker-claude", "cursor-marker-codex", "cursor-marker-query", "cursor-marker-aider"}
	appendLines(t, cc,
		`{"type":"user","sessionId":"0b7c3a52-1f7e-4d1e-9a53-5f1c2b3d4e5f","cwd":"/work/app","uuid":"u1","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"go"}}`,
		`{"type":"assistant","sessionId":"0b7c3a52-1f7e-4d1e-9a53-5f1c2b3d4e5f","cwd":"/work/app","uuid":"a1","timestamp":"2026-03-01T10:00:01Z","requestId":"req_1","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"`+ccCommand+`"}}],"usage":{"input_tokens":10,"output_tokens":5}}}`)
	appendLines(t, cx,
		`{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"7d0e2c1a-3b4f-4a5e-8c6d-9e0f1a2b3c4d","cwd":"/work/app"}}`,
		`{"timestamp":"2026-03-01T10:00:01Z","type":"turn_context","payload":{"model":"gpt-5","turn_id":"t1"}}`,
		`{"timestamp":"2026-03-01T10:00:02Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"c1","arguments":"{\"cmd\":\"`+cxCommand+`\"}"}}`,
		`{"timestamp":"2026-03-01T10:00:03Z","type":"event_msg","payload":{"type":"web_search_end","call_id":"ws1","query":"`+cxQuery+`"}}`)
	appendLines(t, ad, "# aider chat started at 2026-03-01 10:00:00", "", "#### "+adPrompt)

	adapters := []transcript.Adapter{claudecode.New([]string{filepath.Join(home, ".claude", "projects")}),
		codex.New(filepath.Join(home, ".codex")), aider.New([]string{filepath.Join(home, "app")})}
	path := filepath.Join(home, "watch", "cursors.json")
	pub := &events{}
	scan := func() {
		t.Helper()
		cur, err := OpenCursors(path)
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		s := &Scanner{Adapters: adapters, Cursors: cur, Publisher: pub}
		if sum, err := s.Scan(context.Background()); err != nil || sum.Files != 3 {
			t.Fatalf("scan: %+v %v", sum, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markers {
			if strings.Contains(string(data), m) {
				t.Errorf("the cursors file holds %q:\n%s", m, data)
			}
		}
		if !strings.Contains(string(data), `"memo"`) {
			t.Errorf("the cursors file holds no memo: nothing was pending?\n%s", data)
		}
	}
	scan()

	// The results and the reply come: the next pass (the watcher's, in the same process) pairs them.
	appendLines(t, cc,
		`{"type":"user","sessionId":"0b7c3a52-1f7e-4d1e-9a53-5f1c2b3d4e5f","cwd":"/work/app","uuid":"u2","timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}}`)
	appendLines(t, cx,
		`{"timestamp":"2026-03-01T10:00:04Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Process exited with code 0\nOutput:\nhello"}}`,
		`{"timestamp":"2026-03-01T10:00:05Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"`+cxQuery+`"}}}`)
	appendLines(t, ad, "", "Sure, deploying now.")
	n := len(pub.all())
	scan()
	targets := map[string]bool{}
	for _, ev := range pub.all()[n:] {
		if ev.Kind == event.KindAction {
			targets[ev.Action.Target] = true
		}
	}
	// Codex's cat is a read of the file.
	for _, want := range []string{ccCommand, "cursor-marker-codex-8c6d.txt", cxQuery, adPrompt} {
		if !targets[want] {
			t.Errorf("no event of the second pass has the target %q: %v", want, targets)
		}
	}
}
