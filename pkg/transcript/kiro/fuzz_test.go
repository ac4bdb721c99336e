package kiro

import (
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord: whatever a line, a metadata document or a database value holds, the readers do not
// panic, every event they emit is valid (an id, this client, a time), a usage counts nothing
// negative, and the state they leave loads again.
func FuzzRecord(f *testing.F) {
	transcripttest.SeedLines(f, 20, 4096, kasPath(), cliPath(v2ID, ".jsonl"), cliPath(subID, ".jsonl"))
	f.Add(fixture(f, filepath.Join("home", "sessions", "cli", subID+".json")))
	f.Add(fixture(f, filepath.Join("conversations", convID+".json")))
	f.Add([]byte(`{"id":"a","timestamp":1773311520123,"payload":{"type":"tool_result","toolCallId":"t","content":[{"kind":"json","data":{"exit_status":7,"stdout":"x"}}],"success":true}}`))
	f.Add([]byte(`{"version":"v1","kind":"AssistantMessage","data":{"content":[{"kind":"toolUse","data":{"toolUseId":"t","name":"a___b","input":[1]}}]}}`))
	f.Add([]byte(`{"history":[[{"content":{"Prompt":{"prompt":"p"}},"timestamp":"2026-01-01T00:00:00Z"},{"Response":{"content":"r"}}]],"latest_summary":["s",{}]}`))
	bad := func(u *event.TokenUsage) bool {
		return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := New(nil)
		for _, src := range []transcript.Source{srcOf(kasPath(), kasID), srcOf(cliPath(v2ID, ".jsonl"), v2ID)} {
			transcripttest.FuzzLines(t, a, src, data, bad)
		}
		doc := srcOf(filepath.Join("x", v2ID+".json"), v2ID)
		p, err := a.NewParser(doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, data)
		transcripttest.CheckFuzzed(t, evs, bad)
		if _, err := a.NewParser(doc, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
		db := newDBParser(transcript.Source{Client: Client, Path: "x/" + DBName, Database: true}, nil, pricing.Source(nil, nil))
		evs, _, _ = db.conversation(convRow{id: "c", key: "/tmp/w", updated: convUpd}, data, convCrtd, convState{})
		transcripttest.CheckFuzzed(t, evs, bad)
		for _, e := range evs {
			if e.Client != Client || e.SessionID == "" {
				t.Fatalf("event %+v", e)
			}
		}
	})
}
