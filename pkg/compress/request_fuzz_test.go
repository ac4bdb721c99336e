package compress

import (
	"encoding/json"
	"testing"
)

// Whatever a client sends, compression never panics, returns the body unchanged when it fails,
// and turns JSON into JSON.
func FuzzRequest(f *testing.F) {
	f.Add(APIAnthropic, string(anthropicBody(userText("hi"), toolUse("t1", "cat x.json"), toolResult("t1", bigJSON(6), true))))
	f.Add(APIChat, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"package a\nfunc A() {\n\treturn\n}\n"}]}]}`)
	f.Add(APIResponses, `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}`)
	f.Add(APIResponses, `{"input":"just text"}`)
	f.Fuzz(func(t *testing.T, api, body string) {
		for _, mode := range Modes {
			c, _ := New(Options{Mode: mode, MinBytes: 64, PreserveTail: 1, TargetRatio: 0.2, TrimTools: "all"})
			res, err := c.Request(api, []byte(body))
			if err != nil {
				if string(res.Body) != body {
					t.Fatalf("%s: a failed compression changed the body", mode)
				}
				continue
			}
			if json.Valid([]byte(body)) && !json.Valid(res.Body) {
				t.Fatalf("%s: valid JSON became invalid:\n%s\n→\n%s", mode, body, res.Body)
			}
		}
	})
}
