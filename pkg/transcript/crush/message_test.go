package crush

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// conversation returns the message events of evs in (Time, Seq) order, the last of each id kept.
func conversation(evs []event.Event) []event.Event {
	var out []event.Event
	seen := map[string]bool{}
	for _, e := range slices.Backward(evs) {
		if e.Kind == event.KindMessage && !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b event.Event) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Message.Seq, b.Message.Seq)
	})
	return out
}

func withoutMessages(evs []event.Event) []event.Event {
	return slices.DeleteFunc(slices.Clone(evs), func(e event.Event) bool { return e.Kind == event.KindMessage })
}

// messageLines is a conversation as the golden files hold it: role, tool, the first 60 characters
// of the text with its line breaks escaped, and a subagent's messages marked with its id.
func messageLines(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		m := e.Message
		text := []rune(m.Text)
		if len(text) > 60 {
			text = text[:60]
		}
		t := strings.NewReplacer("\\", `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(string(text))
		if m.AgentID != "" {
			fmt.Fprintf(&b, "[%s] ", m.AgentID)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", m.Role, m.Tool, t)
	}
	return b.String()
}

// goldenText compares got with the golden file at path, or writes it there with -update.
func goldenText(tb testing.TB, path, got string) {
	tb.Helper()
	if *update {
		transcripttest.WriteFile(tb, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		tb.Errorf("differs from %s:\n%s", path, got)
	}
}

// TestMessages_Fixture reads the fixture session's conversation (prompts, reasoning, replies,
// tool calls, the agent tool's sub-agent under its root, the summary; not the title session, not
// hidden text) into testdata/golden/session.messages (-update rewrites it), and checks what
// every message carries. No corpus holds Crush databases: the fixture is written from Crush's
// source (see the package doc).
func TestMessages_Fixture(t *testing.T) {
	dir, path := newProject(t)
	db := newDB(t, path, false)
	fixture(t, db, dir)
	evs, _, _ := poll(t, New(nil), path, nil)
	got := conversation(evs)
	goldenText(t, filepath.Join("testdata", "golden", "session.messages"), strings.ReplaceAll(messageLines(got), dir, "$DIR"))
	acts := map[string]*event.Action{}
	prompts := 0
	for _, e := range evs {
		if e.Action == nil {
			continue
		}
		if e.Action.ToolUseID != "" {
			acts[e.Action.ToolUseID] = e.Action
		}
		if e.Action.Type == event.ActionUserPrompt {
			prompts++
		}
	}
	roles := map[string]int{}
	for _, e := range got {
		m := e.Message
		roles[m.Role]++
		if e.SessionID != rootID || e.Project != dir || m.MessageID == "" {
			t.Errorf("%s: session %q project %q message %q", e.ID, e.SessionID, e.Project, m.MessageID)
		}
		if (m.AgentID != "") != m.Sidechain {
			t.Errorf("%s: agent %q sidechain %v", e.ID, m.AgentID, m.Sidechain)
		}
		if m.Role == event.RoleUser && m.Model != "" || m.Role == event.RoleAssistant && m.Model == "" {
			t.Errorf("%s %s: model %q", e.ID, m.Role, m.Model)
		}
		if m.Role == event.RoleToolCall {
			if a := acts[m.ToolUseID]; a == nil || a.Target != m.Text || a.Tool != m.Tool {
				t.Errorf("tool call %+v, its action %+v", m, a)
			}
		}
	}
	// Three prompts (the user's two, the agent's task), as many as the prompt actions; a tool
	// call per tool call action; the summary.
	if roles[event.RoleUser] != prompts || prompts != 3 || roles[event.RoleToolCall] != len(acts) || roles[event.RoleSummary] != 1 {
		t.Errorf("roles %v, prompt actions %d, tool call actions %d", roles, prompts, len(acts))
	}
	again, _, _ := poll(t, New(nil), path, nil)
	if a, b := messageLines(got), messageLines(conversation(again)); a != b {
		t.Error("a second read differs")
	}
}
