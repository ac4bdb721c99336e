package gptme

import (
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.Reasoning < 0 || u.Reasoning > u.Output ||
		u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzRecord feeds arbitrary conversation logs, a line at a time, to a parser: it never panics,
// what it emits validates, its state loads again, no more lines are malformed than read, and a
// second read of the same lines gives the same events.
func FuzzRecord(f *testing.F) {
	// Small seeds (the fixtures' shapes, cut down): the fuzzer minimizes every input it finds
	// interesting, which takes long on a log of several kilobytes.
	f.Add([]byte(`{"role":"user","content":"fix it","timestamp":"2026-02-14T16:20:01.123456"}` + "\n" +
		`{"role":"assistant","content":"<think>x</think>ok\n\n` + "```shell\\nls\\n```" + `","timestamp":"2026-02-14T16:20:04","metadata":{"model":"claude-sonnet-4-5","cost":0.01,"usage":{"input_tokens":3,"output_tokens":14,"cache_creation_tokens":91}}}` + "\n" +
		`{"role":"system","content":"Ran command: ` + "`ls`" + `\n\nReturn code: 1\n","timestamp":"2026-02-14T16:20:05"}`))
	f.Add([]byte(`{"role":"assistant","content":"@save(c2): {\"path\": \"T.md\", \"content\": \"x\"}","timestamp":"2026-02-15T09:02:24","metadata":{"model":"openai/gpt-5","input_tokens":15,"output_tokens":4}}` + "\n" +
		`{"role":"system","content":"Error: denied","call_id":"c2","timestamp":"2026-02-15T09:02:25"}`))
	f.Add([]byte(`{"role":"assistant","content":"@shell(c1): {\"command\": \"ls\"","timestamp":"2026-01-01T00:00:00","metadata":{"usage":{"input_tokens":"5","output_tokens":-1,"reasoning_tokens":9},"cost":"NaN"}}` + "\n" +
		`{"role":"system","content":"Return code: x\nReturn code: 2","call_id":"c1","timestamp":"bad"}`))
	f.Add([]byte("{\"role\":\"assistant\",\"content\":\"```save a\\n```md\\n```\\n```\\n<think>x</think>\",\"timestamp\":\"2026-01-01 00:00:00\"}\n{\"role\":\"system\",\"content\":\"\",\"timestamp\":\"2026-01-01T00:00:01Z\"}\n{}\n\xff"))
	dir := f.TempDir() // no config.toml, no workspace link: the parser reads nothing else
	s := transcript.Source{Client: Client, Path: filepath.Join(dir, "c", LogName), SessionID: "c"}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := transcripttest.FuzzLines(t, New(nil), s, data, badUsage)
		b := transcripttest.FuzzLines(t, New(nil), s, data, badUsage)
		transcripttest.SameEvents(t, a, b)
	})
}
