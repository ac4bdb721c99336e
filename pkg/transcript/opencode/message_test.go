package opencode

import (
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestMessages_Fixture covers each kind of part: a prompt, synthetic and ignored user text (the
// client's, not the user's), reasoning (and an encrypted one with no text), a reply streaming and
// then finished, a tool call pending and then running, a subagent's conversation, a compaction
// and its summary, and a secret in a prompt.
func TestMessages_Fixture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := newDB(t, path)
	user := `{"role":"user","agent":"build","model":{"providerID":"fake","modelID":"gpt-5.2"},"summary":{"diffs":[]},"time":{"created":1000}}`
	done := `{"role":"assistant","modelID":"gpt-5.2","providerID":"fake","time":{"created":1010,"completed":1090},"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}}`
	running := `{"role":"assistant","modelID":"gpt-5.2","providerID":"fake","time":{"created":1100}}`
	summary := `{"role":"assistant","modelID":"gpt-5.2","providerID":"fake","mode":"compaction","agent":"compaction","summary":true,"time":{"created":1300,"completed":1390}}`
	for _, q := range [][]any{
		{insSession, "ses_root", nil, 100, 100},
		{insSession, "ses_child", "ses_root", 200, 200},
		{insMessage, "msg_u1", "ses_root", 1000, 1000, user},
		{insPart, "prt_u1a", "msg_u1", "ses_root", 1001, 1001, `{"type":"text","text":"fix the build, token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}`},
		{insPart, "prt_u1b", "msg_u1", "ses_root", 1002, 1002, `{"type":"text","text":"Called the Read tool with the following input: {}","synthetic":true}`},
		{insPart, "prt_u1c", "msg_u1", "ses_root", 1003, 1003, `{"type":"text","text":"an ignored text","ignored":true}`},
		{insPart, "prt_u1d", "msg_u1", "ses_root", 1004, 1004, `{"type":"file","mime":"text/plain","url":"file:///tmp/p/a.go"}`},
		{insMessage, "msg_a1", "ses_root", 1010, 1090, done},
		{insPart, "prt_a1a", "msg_a1", "ses_root", 1011, 1011, `{"type":"step-start"}`},
		{insPart, "prt_a1b", "msg_a1", "ses_root", 1012, 1020, `{"type":"reasoning","text":"Look at the Makefile first.","time":{"start":1012,"end":1020}}`},
		{insPart, "prt_a1c", "msg_a1", "ses_root", 1013, 1021, `{"type":"reasoning","text":"","metadata":{"openai":{"reasoningEncryptedContent":"gAAAA"}},"time":{"start":1013,"end":1021}}`},
		{insPart, "prt_a1d", "msg_a1", "ses_root", 1022, 1030, `{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"make build"},"output":"ok","time":{"start":1025,"end":1030}}}`},
		{insPart, "prt_a1e", "msg_a1", "ses_root", 1031, 1032, `{"type":"text","text":"The build passes.","time":{"start":1031,"end":1032}}`},
		{insPart, "prt_a1f", "msg_a1", "ses_root", 1033, 1033, `{"type":"step-finish","tokens":{"input":1,"output":1}}`},
		// A reply still streaming, a tool call still pending: nothing yet.
		{insMessage, "msg_a2", "ses_root", 1100, 1100, running},
		{insPart, "prt_a2a", "msg_a2", "ses_root", 1101, 1101, `{"type":"text","text":"I will ru","time":{"start":1101}}`},
		{insPart, "prt_a2b", "msg_a2", "ses_root", 1102, 1102, `{"type":"tool","tool":"task","callID":"call_2","state":{"status":"pending","input":{},"raw":""}}`},
		// The subagent's conversation.
		{insMessage, "msg_c1", "ses_child", 1200, 1200, user},
		{insPart, "prt_c1a", "msg_c1", "ses_child", 1201, 1201, `{"type":"text","text":"Find the tests."}`},
		{insMessage, "msg_c2", "ses_child", 1210, 1290, done},
		{insPart, "prt_c2a", "msg_c2", "ses_child", 1211, 1212, `{"type":"text","text":"They are in pkg/.","time":{"start":1211,"end":1212}}`},
		// A compaction: the user message holds the compaction part, the summary message its text;
		// the client then adds a synthetic "continue" prompt.
		{insMessage, "msg_u3", "ses_root", 1295, 1295, user},
		{insPart, "prt_u3a", "msg_u3", "ses_root", 1296, 1296, `{"type":"compaction","auto":true}`},
		{insMessage, "msg_s", "ses_root", 1300, 1390, summary},
		{insPart, "prt_sa", "msg_s", "ses_root", 1301, 1302, `{"type":"text","text":"## Goal\nFix the build.","time":{"start":1301,"end":1302}}`},
		{insMessage, "msg_u4", "ses_root", 1400, 1400, user},
		{insPart, "prt_u4a", "msg_u4", "ses_root", 1401, 1401, `{"type":"text","text":"Continue if you have next steps","synthetic":true}`},
		// A command run as a subagent: its subtask part places the subagent in the conversation.
		{insMessage, "msg_u5", "ses_root", 1410, 1410, user},
		{insPart, "prt_u5a", "msg_u5", "ses_root", 1411, 1411, `{"type":"subtask","agent":"general","description":"review","prompt":"Review the diff."}`},
	} {
		execT(t, db, q[0].(string), q[1:]...)
	}
	a := New(nil)
	evs, state, st := poll(t, a, path, nil)
	if st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, e := range evs {
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", e.ID, err)
		}
	}
	got := transcripttest.Conversation(evs)
	transcripttest.CheckConversation(t, got,
		"user\t\tfix the build, token [REDACTED:github-token]",
		"thinking\t\tLook at the Makefile first.",
		"tool_call\tbash\tmake build",
		"assistant\t\tThe build passes.",
		"[ses_child] user\t\tFind the tests.",
		"[ses_child] assistant\t\tThey are in pkg/.",
		"summary\t\t## Goal\\nFix the build.",
		"tool_call\tsubtask\tgeneral: review",
	)
	for _, e := range got {
		m := e.Message
		if e.SessionID != "ses_root" || e.Client != Client || e.Project == "" {
			t.Errorf("%s: session %q client %q project %q", e.ID, e.SessionID, e.Client, e.Project)
		}
		sub := strings.HasPrefix(m.MessageID, "msg_c")
		if sub != (m.AgentID == "ses_child") || sub != m.Sidechain {
			t.Errorf("%s: agent %q sidechain %v", m.MessageID, m.AgentID, m.Sidechain)
		}
		if m.Tool == "bash" && (m.ToolUseID != "call_1" || m.MessageID != "msg_a1" || m.Model != "gpt-5.2") {
			t.Errorf("tool call %+v", m)
		}
		if m.Role == event.RoleUser && m.Model != "" {
			t.Errorf("a prompt with model %q", m.Model)
		}
	}
	// Within msg_a1, the index of the part orders what shares a millisecond.
	for _, e := range got {
		if e.Message.MessageID == "msg_a1" && e.Message.Seq/64 != 1010 {
			t.Errorf("%s: seq %d, want msg_a1's time_created × 64 + its index", e.ID, e.Message.Seq)
		}
	}
	// The tool call's message text is its action's target, its id the action's tool use id.
	for _, e := range evs {
		if e.Kind == event.KindAction && e.Action.ToolUseID == "call_1" && e.Action.Target != "make build" {
			t.Errorf("action target %q", e.Action.Target)
		}
	}

	// The reply ends and the tool call runs: read at the next pass, once; the rest is not read
	// again.
	execT(t, db, insPart, "prt_a2a", "msg_a2", "ses_root", 1101, 1500, `{"type":"text","text":"I will run a subagent.","time":{"start":1101,"end":1500}}`)
	execT(t, db, insPart, "prt_a2b", "msg_a2", "ses_root", 1102, 1501, `{"type":"tool","tool":"task","callID":"call_2","state":{"status":"running","input":{"subagent_type":"explore","description":"find tests"},"time":{"start":1501}}}`)
	more, _, _ := poll(t, a, path, state)
	transcripttest.CheckConversation(t, transcripttest.Conversation(more), "assistant\t\tI will run a subagent.", "tool_call\ttask\texplore: find tests")

	// A second read from the start yields the same ids.
	again, _, _ := poll(t, a, path, nil)
	transcripttest.SameMessageIDs(t, transcripttest.Conversation(append(evs, more...)), transcripttest.Conversation(again))
}

// TestMessages_Corpus reads each database dump of the corpus and checks its conversation against
// a golden file (testdata/golden/<dump>.messages; -update rewrites them), and its count per role
// against the dump's rows counted here apart from the parser: a user's text part (neither
// synthetic nor ignored) is a prompt, an assistant's text part a reply (a summary in a compaction's
// summary message), a reasoning part with text a thought, a tool part past pending or a subtask
// part a tool call. A second read gives the same ids.
func TestMessages_Corpus(t *testing.T) {
	dir := filepath.Join(transcripttest.CorpusRoot(), "opencode")
	for _, name := range transcripttest.CorpusNames(t, "OpenCode", dir, ".json") {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			dbPath := filepath.Join(t.TempDir(), "kilo.db")
			loadDump(t, newDB(t, dbPath), path)
			a := NewKilo(nil)
			evs, _, _ := poll(t, a, dbPath, nil)
			got := transcripttest.Conversation(evs)
			transcripttest.GoldenText(t, filepath.Join("testdata", "golden", name+".messages"), transcripttest.ConversationText(got), *update)

			if want := countDump(t, path); !maps.Equal(transcripttest.RoleCounts(got), want) {
				t.Errorf("messages per role %v, the dump's rows say %v", transcripttest.RoleCounts(got), want)
			}
			again, _, _ := poll(t, a, dbPath, nil)
			transcripttest.SameMessageIDs(t, got, transcripttest.Conversation(again))
		})
	}
}

// countDump counts the messages a dump's rows hold, per role.
func countDump(tb testing.TB, path string) map[string]int {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var dump struct {
		Messages []struct {
			ID   string `json:"id"`
			Data struct {
				Role    string `json:"role"`
				Summary any    `json:"summary"`
			} `json:"data"`
		} `json:"messages"`
		Parts []struct {
			MessageID string `json:"message_id"`
			Data      struct {
				Type      string `json:"type"`
				Text      string `json:"text"`
				Synthetic bool   `json:"synthetic"`
				Ignored   bool   `json:"ignored"`
				State     struct {
					Status string `json:"status"`
				} `json:"state"`
			} `json:"data"`
		} `json:"parts"`
	}
	if err := json.Unmarshal(raw, &dump); err != nil {
		tb.Fatal(err)
	}
	role, summary := map[string]string{}, map[string]bool{}
	for _, m := range dump.Messages {
		role[m.ID] = m.Data.Role
		summary[m.ID] = m.Data.Summary == true
	}
	n := map[string]int{}
	for _, p := range dump.Parts {
		d, r := p.Data, role[p.MessageID]
		text := strings.TrimSpace(d.Text) != ""
		switch {
		case d.Type == "text" && r == "user" && text && !d.Synthetic && !d.Ignored:
			n[event.RoleUser]++
		case d.Type == "text" && r == "assistant" && text && !d.Synthetic && !d.Ignored:
			if summary[p.MessageID] {
				n[event.RoleSummary]++
			} else {
				n[event.RoleAssistant]++
			}
		case d.Type == "reasoning" && r == "assistant" && text:
			n[event.RoleThinking]++
		case d.Type == "tool" && d.State.Status != "" && d.State.Status != "pending", d.Type == "subtask":
			n[event.RoleToolCall]++
		}
	}
	return n
}
