package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMemory_TheRunningWriterRemembers: sessions published into a running suite are summarized
// by its writer once they end, their project's observations are learned, and `memory forget`
// reaches the running writer (the store's one writer) over the bus.
func TestMemory_TheRunningWriterRemembers(t *testing.T) {
	s := newSuite(t)
	s.start()
	var b bytes.Buffer
	at := time.Now().Add(-time.Hour)
	for i := range 3 {
		sess := fmt.Sprintf("mem-%d", i)
		ev := func(n int, kind, payload string) {
			fmt.Fprintf(&b, `{"id":"%s-%d","kind":"%s","time":"%s","source":"e2e","client":"claude-code","session_id":"%s","project":"/src/app","v":1,%s}`+"\n",
				sess, n, kind, at.Add(time.Duration(i*10+n)*time.Second).UTC().Format(time.RFC3339Nano), sess, payload)
		}
		ev(0, "action", `"action":{"type":"user_prompt","target":"fix the parser"}`)
		ev(1, "action", `"action":{"type":"edit_file","tool":"Edit","target":"parser.go","success":true}`)
		ev(2, "action", `"action":{"type":"run_command","tool":"Bash","target":"go test ./...","success":false,"error":"FAIL"}`)
		ev(3, "action", `"action":{"type":"run_command","tool":"Bash","target":"go test ./...","success":true}`)
		ev(4, "session", `"session":{"state":"finalized"}`)
	}
	s.publish(b.Bytes())

	var sums []struct {
		Epoch int    `json:"epoch"`
		Text  string `json:"text"`
		SoFar bool   `json:"so_far"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _, code := s.ctl(nil, "summary", "mem-2", "--json")
		if code == 0 && json.Unmarshal([]byte(out), &sums) == nil && len(sums) == 1 && !sums[0].SoFar {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer did not store mem-2's summary: %s", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if txt := sums[0].Text; !strings.Contains(txt, "Goal: fix the parser") || !strings.Contains(txt, "`go test ./...` failed, then succeeded") {
		t.Errorf("mem-2's summary:\n%s", txt)
	}

	var obs []struct {
		ID      int64  `json:"id"`
		Kind    string `json:"kind"`
		Key     string `json:"key"`
		Support int    `json:"support"`
	}
	var id int64
	for deadline := time.Now().Add(90 * time.Second); id == 0; {
		out, _, _ := s.ctl(nil, "memory", "--project", "/src/app", "--json", "--min-confidence", "0")
		json.Unmarshal([]byte(out), &obs)
		for _, o := range obs {
			if o.Kind == "test_command" && o.Key == "go test ./..." && o.Support == 3 {
				id = o.ID
			}
		}
		if id == 0 && time.Now().After(deadline) {
			t.Fatalf("no test command learned from the three sessions: %s", out)
		}
		time.Sleep(time.Second)
	}
	if out, errOut, code := s.ctl(nil, "memory", "forget", strconv.FormatInt(id, 10)); code != 0 {
		t.Fatalf("memory forget while the suite runs: exit %d %s %s", code, out, errOut)
	}
	if out, _, _ := s.ctl(nil, "memory", "--project", "/src/app", "--min-confidence", "0"); strings.Contains(out, "tests run with") {
		t.Errorf("forgotten, yet listed:\n%s", out)
	}
}
