package claudecode

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// referenceUsage is lineUsage as it was written with encoding/json, the reference the jsonscan
// reading is held to: the same tokens on every line, and the same lines with none.
func referenceUsage(m *message) (tok event.Tokens, ok bool) {
	type usage struct {
		Input         num             `json:"input_tokens"`
		Output        num             `json:"output_tokens"`
		CacheRead     num             `json:"cache_read_input_tokens"`
		CacheCreation num             `json:"cache_creation_input_tokens"`
		Breakdown     json.RawMessage `json:"cache_creation"`
	}
	type breakdown struct {
		Write5m num `json:"ephemeral_5m_input_tokens"`
		Write1h num `json:"ephemeral_1h_input_tokens"`
	}
	raw := bytes.TrimSpace(m.Usage)
	if len(raw) == 0 || raw[0] != '{' || m.ID == "" || m.Model == syntheticModel {
		return tok, false
	}
	var u usage
	if json.Unmarshal(raw, &u) != nil {
		return tok, false
	}
	tok = event.Tokens{Input: int64(u.Input), Output: int64(u.Output), CacheRead: int64(u.CacheRead),
		CacheCreation: int64(u.CacheCreation)}
	var b breakdown
	if len(u.Breakdown) > 0 && u.Breakdown[0] == '{' && json.Unmarshal(u.Breakdown, &b) == nil {
		tok.CacheCreation1h = int64(b.Write1h)
		if tok.CacheCreation == 0 {
			tok.CacheCreation = int64(b.Write5m) + int64(b.Write1h)
		}
		if tok.CacheCreation1h > tok.CacheCreation {
			tok.CacheCreation1h = tok.CacheCreation
		}
	}
	return tok, true
}

func TestLineUsage_Cases(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		want        event.Tokens
		ok          bool
	}{
		{"plain", `{"input_tokens":3,"output_tokens":5,"cache_read_input_tokens":7,"cache_creation_input_tokens":11}`,
			event.Tokens{Input: 3, Output: 5, CacheRead: 7, CacheCreation: 11}, true},
		{"1h part of the writes", `{"input_tokens":1,"cache_creation_input_tokens":10,"cache_creation":{"ephemeral_5m_input_tokens":4,"ephemeral_1h_input_tokens":6}}`,
			event.Tokens{Input: 1, CacheCreation: 10, CacheCreation1h: 6}, true},
		{"writes from the breakdown alone", `{"cache_creation":{"ephemeral_5m_input_tokens":4,"ephemeral_1h_input_tokens":6}}`,
			event.Tokens{CacheCreation: 10, CacheCreation1h: 6}, true},
		{"1h capped by the writes", `{"cache_creation_input_tokens":2,"cache_creation":{"ephemeral_1h_input_tokens":6}}`,
			event.Tokens{CacheCreation: 2, CacheCreation1h: 2}, true},
		{"counts as strings, floats, junk", `{"input_tokens":"7","output_tokens":2.0,"cache_read_input_tokens":-4,"cache_creation_input_tokens":{"x":1},"cache_creation":5}`,
			event.Tokens{Input: 7, Output: 2}, true},
		{"nulls and nesting beside", ` {"input_tokens":null,"output_tokens":9,"server_tool_use":{"web_search_requests":1},"service_tier":"standard"}`,
			event.Tokens{Output: 9}, true},
		{"a key twice: the last", `{"output_tokens":1,"output_tokens":4}`, event.Tokens{Output: 4}, true},
		{"not an object", `[1,2]`, event.Tokens{}, false},
		{"broken", `{"input_tokens":1,`, event.Tokens{}, false},
		{"empty", ``, event.Tokens{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := message{ID: "msg_1", Model: "claude-sonnet-4-5", Usage: json.RawMessage(c.usage)}
			got, ok := lineUsage(&m)
			if got != c.want || ok != c.ok {
				t.Errorf("lineUsage(%s) = %+v, %v; want %+v, %v", c.usage, got, ok, c.want, c.ok)
			}
			ref, refOK := referenceUsage(&m)
			if got != ref || ok != refOK {
				t.Errorf("lineUsage(%s) = %+v, %v; encoding/json read %+v, %v", c.usage, got, ok, ref, refOK)
			}
		})
	}
	for _, m := range []message{{Model: "m", Usage: json.RawMessage(`{"output_tokens":1}`)},
		{ID: "x", Model: syntheticModel, Usage: json.RawMessage(`{"output_tokens":1}`)}} {
		if _, ok := lineUsage(&m); ok {
			t.Errorf("%+v: usage read from a message without an id, or a synthetic one", m)
		}
	}
}

// TestLineUsage_SameAsEncodingJSONOnEveryLine reads the usage of every assistant line of the
// corpus's Claude Code transcripts both ways (skipped without the corpus; TestLineUsage_Cases
// holds the edge cases here).
func TestLineUsage_SameAsEncodingJSONOnEveryLine(t *testing.T) {
	names := corpusNames(t)
	var lines, usages int
	for _, name := range names {
		for _, raw := range transcripttest.ReadLines(t, corpus(t, name)) {
			var l line
			if json.Unmarshal(raw, &l) != nil || l.Type != "assistant" {
				continue
			}
			m, _, _, err := decodeMessage(l.Message)
			if err != nil {
				continue
			}
			lines++
			got, ok := lineUsage(&m)
			want, wantOK := referenceUsage(&m)
			if got != want || ok != wantOK {
				t.Fatalf("%s: usage %s read as %+v, %v; encoding/json reads %+v, %v", name, m.Usage, got, ok, want, wantOK)
			}
			if ok {
				usages++
			}
		}
	}
	if usages == 0 {
		t.Fatalf("no assistant line with usage in %d files", len(names))
	}
	t.Logf("%d assistant lines, %d with usage, in %d files: the same both ways", lines, usages, len(names))
}
