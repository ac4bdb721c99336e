package gemini

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// badUsage is a usage a fuzzed parser must never return: a negative token count, a cache write
// (Gemini reports none) or reasoning above output.
func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation != 0 ||
		u.Reasoning < 0 || u.Reasoning > u.Output
}

// FuzzRecord feeds arbitrary lines to a .jsonl parser, Gemini CLI's and Qwen Code's records mixed:
// it must never panic, every event must validate, and its state must survive a round trip.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		`{"sessionId":"s","projectHash":"` + hashOf("/w") + `","startTime":"2026-03-01T10:00:00Z","kind":"main","directories":["/w"]}`,
		`{"$set":{"messages":[{"id":"c","timestamp":"2026-03-01T10:00:00Z","type":"user","content":[{"text":"<session_context>\n- **Workspace Directories:**\n  - /w\n"}]}],"lastUpdated":"x"}}`,
		`{"id":"u","timestamp":"2026-03-01T10:00:01Z","type":"user","content":[{"text":"hi"},{"inlineData":{"data":"AA"}}],"displayContent":[{"text":"@f hi"}]}`,
		`{"id":"g","timestamp":"2026-03-01T10:00:02Z","type":"gemini","content":"","model":"gemini-3-flash","tokens":{"input":10,"output":2,"cached":20,"thoughts":3,"tool":1,"total":"16"},"toolCalls":[{"id":"t","name":"run_shell_command","args":{"command":"ls /w/x"},"result":[{"functionResponse":{"id":"t","name":"run_shell_command","response":{"output":"Output: x\nExit Code: 2"}}}],"status":"success","timestamp":"2026-03-01T10:00:03Z"},{"name":"web_fetch","args":{"prompt":"see https://a.b/c"},"status":"error","result":"boom"}]}`,
		`{"id":"e","timestamp":"2026-03-01T10:00:04Z","type":"error","content":"[API Error: 500]"}`,
		`{"$rewindTo":"g"}`, `{"$set":{"sessionId":"s2","directories":["/v"]}}`,
		`{"uuid":"q","sessionId":"s","timestamp":"2026-03-01T10:00:05Z","type":"assistant","cwd":"/w","model":"qwen3","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"edit","args":{"file_path":"a"}}}]},"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":4,"thoughtsTokenCount":9}}`,
		`{"uuid":"r","type":"tool_result","timestamp":1772359205000,"message":{"parts":[{"functionResponse":{"id":"c1","name":"edit","response":{"error":{"message":"no"}}}}]},"toolCallResult":{"callId":"c1","status":"error"}}`,
		`{"uuid":"s","type":"system","subtype":"ui_telemetry","timestamp":"2026-03-01T10:00:06Z","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error","status_code":"x"}}}`,
		`{"uuid":"z","type":"system","subtype":"chat_compression"}`, `{}`, `[]`, `null`, "\xff", `{"id":7}`, `{"$set":[]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(seeds[0] + "\n" + seeds[2] + "\n" + seeds[3] + "\n" + seeds[3]))
	transcripttest.SeedLines(f, 8, 16384, filepath.Join(corpusDir(), fileLive), filepath.Join(corpusDir(), fileVCTJSONL))
	src := transcript.Source{Client: Client, Path: "/fuzz/chats/session-x.jsonl"}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, a := range []*Adapter{New(nil), NewQwen(nil)} {
			transcripttest.FuzzLines(t, a, src, data, badUsage)
		}
	})
}

// FuzzDocument feeds arbitrary documents: never a panic, valid events, and a document that fails
// to parse leaves the state as it was.
func FuzzDocument(f *testing.F) {
	if data, err := os.ReadFile(fixtureDoc); err == nil {
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte(`{"sessionId":"s","messages":[{"id":"a","type":"gemini","timestamp":"2026-03-01T10:00:00Z","tokens":{"input":1}}]}`))
	f.Add([]byte(`{"messages":[7,{"id":"b"},{"id":"c","type":"user","timestamp":"x","content":{"text":"y"}}]}`))
	f.Add([]byte(``))
	src := transcript.Source{Client: Client, Path: "/fuzz/chats/session-x.json", Document: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := New(nil)
		p, err := a.newParser(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, []byte(`{"sessionId":"s0","messages":[{"id":"m0","type":"user","timestamp":"2026-01-01T00:00:00Z","content":"first"}]}`))
		transcripttest.CheckFuzzed(t, evs, badUsage)
		before := p.State()
		evs, err = p.Record(0, data)
		transcripttest.CheckFuzzed(t, evs, badUsage)
		if err != nil && !bytes.Equal(p.State(), before) {
			t.Fatalf("a failed read changed the state:\n%s\n%s", before, p.State())
		}
		if _, err := a.NewParser(src, p.State()); err != nil {
			t.Fatalf("state does not load: %v", err)
		}
	})
}
