package aider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The prompts (slash commands too) and the replies whole (headings, code, blank lines), scrubbed;
// aider's "> " lines are not messages; Seq follows the file; the ids are the same at a re-read.
func TestParser_Messages(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("D", 90)
	dir := t.TempDir()
	path := filepath.Join(dir, ChatHistoryFile)
	doc := "\n# aider chat started at 2026-02-01 09:00:00\n\n> Main model: gpt-4o with diff edit format  \n\n" +
		"#### use the key " + key + "  \n#### and be brief  \n\n" +
		"Sure.  \n\n#### Plan\n\n\n- one  \n\n```go\nx := 1\n```\n\n" +
		"> Tokens: 1.2k sent, 20 received.  \n> Applied edit to a.go  \n\n" +
		"#### /run make  \n> Added 3 lines of output to the chat.  \n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, _ := parseFile(t, New(nil), path)
	transcripttest.CheckConversation(t, evs,
		"user\t\tuse the key [REDACTED:anthropic-key]\\nand be brief",
		"assistant\t\tSure.\\n\\n#### Plan\\n\\n\\n- one\\n\\n```go\\nx := 1\\n```",
		"user\t\t/run make",
	)
	var last int64 = -1
	for _, e := range evs {
		if m := e.Message; m != nil {
			if m.Seq <= last || e.SessionID == "" || e.Client != Client {
				t.Errorf("message %+v of %s", m, e.SessionID)
			}
			last = m.Seq
			if m.Role == event.RoleAssistant && m.Model != "gpt-4o" {
				t.Errorf("reply's model %q", m.Model)
			}
		}
	}
	again, _ := parseFile(t, New(nil), path)
	transcripttest.SameMessageIDs(t, evs, again)
}
