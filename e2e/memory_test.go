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

	// The writer stores it (the CLI alone would make a finalized session's summary on the fly).
	s.waitCount(60*time.Second, 1, `SELECT count(*) FROM session_summaries WHERE session_id = 'mem-2' AND source = 'extractive'`)
	var sums []struct {
		Epoch int    `json:"epoch"`
		Text  string `json:"text"`
		SoFar bool   `json:"so_far"`
	}
	deadline := time.Now().Add(patient(60 * time.Second))
	for {
		out, errOut, code := s.ctl(nil, "summary", "mem-2", "--json")
		// Each answer into a fresh slice: encoding/json decodes into the elements a slice
		// already holds without zeroing them, so a first answer's so_far (the session not yet
		// finalized while its events were being stored) would outlive the answers that omit it.
		sums = nil
		if code == 0 && json.Unmarshal([]byte(out), &sums) == nil && len(sums) == 1 && !sums[0].SoFar {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mem-2's summary, as observerctl summary tells it: exit %d %s%s\n%s", code, out, errOut, s.memoryState())
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
	for deadline := time.Now().Add(patient(90 * time.Second)); id == 0; {
		out, _, _ := s.ctl(nil, "memory", "--project", "/src/app", "--json", "--min-confidence", "0")
		obs = nil
		json.Unmarshal([]byte(out), &obs)
		for _, o := range obs {
			if o.Kind == "test_command" && o.Key == "go test ./..." && o.Support == 3 {
				id = o.ID
			}
		}
		if id == 0 && time.Now().After(deadline) {
			t.Fatalf("no test command learned from the three sessions: %s\n%s", out, s.memoryState())
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

// memoryState is what a memory test's failure needs to be read: the sessions' rows and stored
// summaries, the suite's status and the writer's log.
func (s *suite) memoryState() string {
	var b strings.Builder
	db := s.db()
	for _, q := range []string{
		`SELECT client || ' ' || session_id || ' ' || state || ' state_at ' || state_at || ' last_seen ' || last_seen || ' events ' || events FROM sessions`,
		`SELECT session_id || ' epoch ' || epoch || ' ' || source || ' last_ts ' || last_ts FROM session_summaries`,
		`SELECT event_id || ' ' || state FROM session_events`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", q, err)
			continue
		}
		for rows.Next() {
			var line string
			rows.Scan(&line)
			fmt.Fprintf(&b, "  %s\n", line)
		}
		rows.Close()
	}
	out, errOut, _ := s.ctl(nil, "status")
	fmt.Fprintf(&b, "--- status:\n%s%s--- logs/writer.log:\n%s", out, errOut, s.readFile("logs/writer.log"))
	return b.String()
}
