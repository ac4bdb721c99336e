package cursor

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzValues feeds arbitrary composerData and bubble values to a pass: it never panics, every
// event validates, token figures are not negative, and the same values give the same events.
func FuzzValues(f *testing.F) {
	f.Add([]byte(`{"composerId":"c","name":"n","createdAt":1766691308486,"lastUpdatedAt":"2025-12-25T19:35:08Z","modelConfig":{"modelName":"claude-4.5-sonnet"},"fullConversationHeadersOnly":[{}],"conversation":[{"bubbleId":"i","type":2,"tokenCount":{"inputTokens":"5","outputTokens":-1}}]}`),
		[]byte(`{"type":2,"createdAt":"2025-12-25T19:35:08.486Z","toolFormerData":{"toolCallId":"t","status":"completed","name":"run_terminal_cmd","params":"{\"command\":\"ls\"}","result":"{\"output\":\"x\",\"exitCodeV2\":2}"},"tokenCount":{"inputTokens":10,"outputTokens":2},"workspaceUris":["file:///w"]}`))
	f.Add([]byte(`{"createdAt":-1,"conversation":[7,{"bubbleId":"x","type":1,"text":"hi"}]}`),
		[]byte(`{"type":1,"text":"  ","timingInfo":{"clientRpcSendTime":1e300},"workspaceProjectDir":"relative"}`))
	f.Add([]byte(`[]`), []byte(`{"type":2,"toolFormerData":{"name":"read_file","params":{"targetFile":"/w/a"},"result":"not json","status":"error"}}`))
	f.Add([]byte(`{"createdAt":"1766691308486","fullConversationHeadersOnly":[1]}`), []byte(`{"type":9,"createdAt":1766691308486}`))
	a := New(nil)
	src := transcript.Source{Client: Client, Path: "/nonexistent-observer/User/globalStorage/state.vscdb", Database: true}
	f.Fuzz(func(t *testing.T, composer, bubble []byte) {
		run := func() []event.Event {
			p := newParser(a, src, nil)
			st := state{}
			ps := &pass{p: p, st: &st, chats: map[string]*chat{}, roots: map[string]string{}}
			_ = ps.composer("c", composer)
			c0 := ps.chats["c"]
			if c0 == nil {
				c0 = &chat{id: "c"}
			}
			_ = ps.bubble(c0, "b", bubble)
			c := &chat{id: "orphan"}
			_ = ps.bubble(c, "b", bubble)
			ps.fillProjects()
			if _, err := json.Marshal(st); err != nil {
				t.Fatal(err)
			}
			return ps.evs
		}
		evs := run()
		transcripttest.CheckFuzzed(t, evs, func(u *event.TokenUsage) bool {
			return u.Input < 0 || u.Output < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
		})
		if again := run(); !reflect.DeepEqual(again, evs) {
			t.Fatal("not deterministic")
		}
	})
}
