package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// TestHook_SuiteDownThenUp: with nothing running a hook call still exits 0 at once, prints
// nothing, and its event reaches the store when observer starts.
func TestHook_SuiteDownThenUp(t *testing.T) {
	s := newSuite(t)
	for i := range 5 {
		t0 := time.Now()
		out, errOut, code := s.ctl(hookPayload("down", i), "hook")
		if code != 0 || out != "" {
			t.Fatalf("hook with the suite down: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		t.Logf("hook call with the suite down took %v", time.Since(t0).Round(time.Millisecond))
	}
	s.start()
	s.waitCount(30*time.Second, 5, "SELECT count(*) FROM hook_events")
	if left, _ := filepath.Glob(filepath.Join(s.home, "spool", "*.jsonl")); len(left) != 0 {
		t.Fatalf("spool not drained: %v", left)
	}
}

func TestBadInput(t *testing.T) {
	s := newSuite(t)
	s.start()

	t.Run("HookNotJSON", func(t *testing.T) {
		out, errOut, code := s.ctl([]byte("this is not json"), "hook")
		if code != 65 || out != "" || !strings.Contains(errOut, "not a JSON object") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 65, nothing on stdout, a clear message", code, out, errOut)
		}
	})
	t.Run("HookWithoutEventName", func(t *testing.T) {
		_, errOut, code := s.ctl([]byte(`{"session_id":"x"}`), "hook")
		if code != 65 || !strings.Contains(errOut, "hook_event_name") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("Hook50MB", func(t *testing.T) {
		// A PostToolUse whose tool_response is 50 MB: the event is kept, the body is not.
		var b bytes.Buffer
		b.WriteString(`{"session_id":"big","hook_event_name":"PostToolUse","tool_name":"Read","cwd":"/tmp","tool_response":"`)
		b.Write(bytes.Repeat([]byte("x"), 50<<20))
		b.WriteString(`"}`)
		t0 := time.Now()
		out, errOut, code := s.ctl(b.Bytes(), "hook")
		if code != 0 || out != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		t.Logf("50 MB hook payload handled in %v", time.Since(t0).Round(time.Millisecond))
		s.waitCount(20*time.Second, 1, "SELECT count(*) FROM hook_events WHERE session_id = 'big' AND payload_bytes = ?", b.Len())
	})
	t.Run("HookOverLimit", func(t *testing.T) {
		payload := []byte(`{"session_id":"over","hook_event_name":"Stop","pad":"` + strings.Repeat("y", 2000) + `"}`)
		_, errOut, code := s.ctl(payload, "hook", "--max-bytes", "1000")
		if code != 65 || !strings.Contains(errOut, "larger than 1000 bytes") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if n := s.count("SELECT count(*) FROM hook_events WHERE session_id = 'over'"); n != 0 {
			t.Fatalf("an over-limit payload was stored")
		}
	})
	t.Run("UnknownEventKind", func(t *testing.T) {
		good := event.New(event.KindSession, "e2e")
		good.ID = "good-1"
		good.Client = "codex"
		good.SessionID = "kinds"
		good.Session = &event.Session{State: event.SessionStarted}
		goodJSON, _ := event.Marshal(&good)
		in := string(goodJSON) + "\n" + `{"id":"bad-1","kind":"telepathy","v":1,"time":"2026-01-01T00:00:00Z"}` + "\n"
		out, errOut, code := s.ctl([]byte(in), "publish")
		if code != 65 || !strings.Contains(errOut, `unknown event kind "telepathy"`) || !strings.Contains(out, "published 1 event") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		s.waitCount(20*time.Second, 1, "SELECT count(*) FROM session_events WHERE event_id = 'good-1'")
	})
	t.Run("CorruptSpoolFile", func(t *testing.T) {
		// A spool file with a good event, garbage, a good event and a cut-off last line: the
		// running suite publishes the good ones and keeps the rest in spool/corrupt/.
		mk := func(id string) string {
			ev := event.New(event.KindHook, "e2e")
			ev.ID = id
			ev.Client = "claude-code"
			ev.SessionID = "spool"
			ev.Hook = &event.Hook{Event: "Stop"}
			data, _ := event.Marshal(&ev)
			return string(data)
		}
		body := mk("spool-good-1") + "\n{garbage\n" + mk("spool-good-2") + "\n" + `{"id":"cut","kind":"ho`
		name := fmt.Sprintf("%020d-1-1.jsonl", time.Now().UnixNano())
		if err := os.WriteFile(filepath.Join(s.home, "spool", name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		s.waitCount(20*time.Second, 2, "SELECT count(*) FROM hook_events WHERE session_id = 'spool'")
		why, err := os.ReadFile(filepath.Join(s.home, "spool", "corrupt", name+".why"))
		if err != nil {
			t.Fatalf("no note of the corrupt lines: %v", err)
		}
		if !strings.Contains(string(why), ":2: malformed event JSON") || !strings.Contains(string(why), ":4: truncated last line") {
			t.Fatalf("corrupt note:\n%s", why)
		}
		kept, _ := os.ReadFile(filepath.Join(s.home, "spool", "corrupt", name))
		if !strings.Contains(string(kept), "{garbage") || !strings.Contains(string(kept), `{"id":"cut","kind":"ho`) {
			t.Fatalf("corrupt lines not kept: %q", kept)
		}
		if _, err := os.Stat(filepath.Join(s.home, "spool", name)); !os.IsNotExist(err) {
			t.Fatalf("drained spool file still there: %v", err)
		}
		// Whichever process drained the spool says so in its log: the supervisor, or a component
		// whose bus client drains it on its own timer (the proxy's every 5 s).
		reported := false
		for _, log := range []string{"supervisor", "proxy", "watch", "writer", "dash"} {
			reported = reported || strings.Contains(s.readFile("logs/"+log+".log"), "corrupt spool line quarantined")
		}
		if !reported {
			t.Fatal("no log reports the corrupt lines")
		}
	})
	t.Run("SpoolDrainCommand", func(t *testing.T) {
		name := fmt.Sprintf("%020d-2-1.jsonl", time.Now().UnixNano())
		// Hold the supervisor's drainer off by writing under a .partial name, then rename.
		tmp := filepath.Join(s.home, "spool", name+".partial")
		os.WriteFile(tmp, []byte("not an event\n"), 0o600)
		os.Rename(tmp, filepath.Join(s.home, "spool", name))
		out, errOut, code := s.ctl(nil, "spool", "drain")
		// Either this command or the suite's own drainer got the file first; both quarantine it.
		if code != 65 && code != 0 {
			t.Fatalf("spool drain: exit %d, %s %s", code, out, errOut)
		}
		if code == 65 && !strings.Contains(errOut, "corrupt spool lines quarantined") {
			t.Fatalf("spool drain stderr: %q", errOut)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(s.home, "spool", "corrupt", name)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("corrupt spool file not quarantined")
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	t.Run("Usage", func(t *testing.T) {
		for _, args := range [][]string{{"frobnicate"}, {"status", "--bogus"}, {"tail", "--kind", "nope"}, {"logs", "nope"}, {"restart"}} {
			_, errOut, code := s.ctl(nil, args...)
			if code != 64 || errOut == "" {
				t.Errorf("observerctl %v: exit %d, stderr %q; want 64 and a message", args, code, errOut)
			}
		}
		_, errOut, code := s.ctl(nil, "restart", "nosuch")
		if code != 64 || !strings.Contains(errOut, `no component "nosuch"`) {
			t.Errorf("restart nosuch: exit %d, %q", code, errOut)
		}
	})
	t.Run("SecondSupervisorRefused", func(t *testing.T) {
		_, errOut, code := s.ctl(nil, "up")
		if code != 1 || !strings.Contains(errOut, "already running") {
			t.Fatalf("second up: exit %d, %q", code, errOut)
		}
	})
	// Nothing that was valid got lost on the way: no event was quarantined by the writer.
	if n := s.count("SELECT count(*) FROM quarantine"); n != 0 {
		t.Fatalf("%d events quarantined by the writer", n)
	}
}

// TestStatus_NotRunning: status, tail and down when nothing runs.
func TestStatus_NotRunning(t *testing.T) {
	s := newSuite(t)
	out, errOut, code := s.ctl(nil, "status")
	if code != 69 || !strings.Contains(errOut, "not running") {
		t.Fatalf("status: exit %d, %q %q", code, out, errOut)
	}
	out, _, code = s.ctl(nil, "status", "--json")
	if code != 69 || !strings.Contains(out, `"running": false`) {
		t.Fatalf("status --json: exit %d, %q", code, out)
	}
	if _, errOut, code := s.ctl(nil, "tail"); code != 69 {
		t.Fatalf("tail: exit %d, %q", code, errOut)
	}
	if out, _, code := s.ctl(nil, "down"); code != 0 || !strings.Contains(out, "not running") {
		t.Fatalf("down: exit %d, %q", code, out)
	}
}
