package crush

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

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
	got := transcripttest.Conversation(evs)
	transcripttest.GoldenText(t, filepath.Join("testdata", "golden", "session.messages"), strings.ReplaceAll(transcripttest.ConversationText(got), dir, "$DIR"), *update)
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
	if a, b := transcripttest.ConversationText(got), transcripttest.ConversationText(transcripttest.Conversation(again)); a != b {
		t.Error("a second read differs")
	}
}
