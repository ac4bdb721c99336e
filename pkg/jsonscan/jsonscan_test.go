package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var seeds = []string{
	`{"a":1,"b":[true,false,null,{"c":"d"}],"e":-1.5e+10}`, `[]`, `{}`, `"x\u00e9\ud83d\ude00\n\"q\""`, `"\ud800x"`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `-`, `1.`, `1e`, `"\x"`, "\"a\tb\"", `tru`, `nulll`, `{"a":"b"} x`,
	` [ 1 , { "k" : [ ] } ] `, `"\u12"`, `{"type":"user","message":{"content":[{"type":"tool_result","content":"ok"}]}}`,
}

// FuzzValidMatchesEncodingJSON: Valid and Skip agree with encoding/json on every input; String and
// StringPrefix decode what encoding/json decodes.
func FuzzValidMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), 5)
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 || trimmed[0] != '"' || !utf8.Valid(trimmed) {
			return
		}
		var want string
		werr := json.Unmarshal(trimmed, &want)
		got, ok := String(trimmed)
		if ok != (werr == nil) || ok && got != want {
			t.Fatalf("String(%q) = %q, %v; encoding/json: %q, %v", trimmed, got, ok, want, werr)
		}
		if !ok {
			return
		}
		max = max % 64
		prefix, size, _ := StringPrefix(trimmed, max)
		if size != int64(len(want)) || !strings.HasPrefix(want, prefix) || max >= 0 && len(prefix) > max ||
			max >= 0 && len(prefix) < min(max, len(want))-utf8.UTFMax {
			t.Fatalf("StringPrefix(%q, %d) = %q, %d; whole string %q", trimmed, max, prefix, size, want)
		}
	})
}

func TestMembersAndElements(t *testing.T) {
	data := []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1"}]},"n":3}`)
	var typ string
	var blocks []string
	err := Members(data, func(k, v []byte) bool {
		switch {
		case Key(k, "type"):
			typ = Str(v)
		case Key(k, "message"):
			Members(v, func(k, v []byte) bool {
				if Key(k, "content") {
					Elements(v, func(e []byte) bool { blocks = append(blocks, string(e)); return true })
				}
				return true
			})
		}
		return true
	})
	if err != nil || typ != "assistant" || len(blocks) != 2 || blocks[1] != `{"type":"tool_use","id":"t1"}` {
		t.Fatalf("err %v, type %q, blocks %q", err, typ, blocks)
	}
	if Count([]byte(`[1, [2, 3], {"a": [4]}]`)) != 3 || Count([]byte(`[1,`)) != -1 {
		t.Error("Count")
	}
	// A truncated line is an error even after the members read so far.
	if Members([]byte(`{"type":"user","message":{"content":"x"`), func(k, v []byte) bool { return true }) == nil {
		t.Error("truncated object accepted")
	}
	deep := []byte(strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1))
	if Valid(deep) {
		t.Error("nesting past MaxDepth accepted")
	}
}

func TestStringPrefix_BigString(t *testing.T) {
	big := strings.Repeat("line with a \"quote\" and a tab\t\n", 100000)
	raw, _ := json.Marshal(big)
	prefix, size, ok := StringPrefix(raw, 8192)
	if !ok || size != int64(len(big)) || prefix != big[:len(prefix)] || len(prefix) < 8192-utf8.UTFMax {
		t.Fatalf("ok %v, size %d (want %d), prefix %d bytes", ok, size, len(big), len(prefix))
	}
}

func BenchmarkMembers_ToolResult(b *testing.B) {
	out, _ := json.Marshal(strings.Repeat("some tool output line: a/b/c.go:12: x := \"y\"\n", 4000))
	line := []byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":` + string(out) + `}]},"uuid":"u"}`)
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			Members(line, func(k, v []byte) bool { return true })
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			var m map[string]json.RawMessage
			json.Unmarshal(line, &m)
		}
	})
}
