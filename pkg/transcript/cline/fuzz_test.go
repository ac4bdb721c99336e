package cline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// checkFuzz fails on an event CheckFuzzed rejects, a negative count among them.
func checkFuzz(t *testing.T, evs []event.Event) {
	transcripttest.CheckFuzzed(t, evs, func(u *event.TokenUsage) bool {
		return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0
	})
}

// FuzzRecord feeds arbitrary documents to a CLI parser and an extension parser: they must never
// panic, every event must validate, and the state must survive a round trip.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		doc(msgUser, msgCall, msgResult, msgFinal), doc(), `{}`, `[]`, `null`, "\xff", `{"messages":[7,{"role":"x"}]}`,
		`{"messages":[{"id":"a","role":"assistant","ts":"1796146908192","metrics":{"inputTokens":"9","outputTokens":-1,"cost":"x"},"content":"hi"}]}`,
		`[{"ts":1767261600000,"type":"say","say":"task","text":"go"},{"ts":1767261600010,"type":"say","say":"api_req_started","text":"{\"tokensIn\":1e30,\"cost\":-1}"},` +
			`{"ts":1767261600011,"type":"ask","ask":"tool","text":"{\"tool\":\"readFile\",\"path\":7}"},{"ts":1,"type":"say","say":"command_output","text":"x"}]`,
	}
	for _, name := range []string{
		filepath.Join("testdata", "cli", "1796146906278_zgn42", "1796146906278_zgn42.messages.json"),
		filepath.Join("testdata", "vscode", "saoudrizwan.claude-dev", "tasks", "1767261600000", "ui_messages.json"),
		filepath.Join("testdata", "vscode", "rooveterinaryinc.roo-cline", "tasks", "0199f2c4-7d1e-7b52-9a43-5be1c2d0e8a1", "ui_messages.json"),
		filepath.Join(corpusDir(), fileMessages),
	} {
		if b, err := os.ReadFile(name); err == nil && len(b) < 64<<10 {
			seeds = append(seeds, string(b))
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, a := range []*Adapter{New(nil), NewVSCode(ClientRoo, nil)} {
			src := transcript.Source{Client: a.Client(), Path: "/nowhere/s/s.messages.json", SessionID: "s", Document: true}
			p, err := a.NewParser(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, _ := p.Record(0, data)
			checkFuzz(t, evs)
			q, err := a.NewParser(src, p.State())
			if err != nil {
				t.Fatalf("state does not load: %v", err)
			}
			evs, _ = q.Record(0, data)
			checkFuzz(t, evs)
			if len(evs) != 0 {
				t.Fatalf("a re-read of the same document emitted %d events", len(evs))
			}
		}
	})
}
