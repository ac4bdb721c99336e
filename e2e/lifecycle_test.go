package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ccSession writes a Claude Code transcript the way Claude Code does: one JSON line per record,
// appended, with the session's id, cwd and the wall-clock time.
type ccSession struct {
	tb   testing.TB
	id   string
	cwd  string
	path string
	n    int
}

// newCCSession places session id's transcript under projects, in the directory Claude Code would
// name after cwd.
func newCCSession(tb testing.TB, projects, id, cwd string) *ccSession {
	dir := filepath.Join(projects, strings.ReplaceAll(cwd, string(filepath.Separator), "-"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	return &ccSession{tb: tb, id: id, cwd: cwd, path: filepath.Join(dir, id+".jsonl")}
}

// append writes one record with the given fields over the envelope, at time at (now when zero).
func (c *ccSession) append(at time.Time, fields map[string]any) {
	c.tb.Helper()
	if at.IsZero() {
		at = time.Now()
	}
	c.n++
	m := map[string]any{"sessionId": c.id, "cwd": c.cwd, "timestamp": at.UTC().Format(time.RFC3339Nano),
		"version": "2.1.7", "isSidechain": false, "userType": "external", "uuid": fmt.Sprintf("%s-u%d", c.id, c.n)}
	for k, v := range fields {
		m[k] = v
	}
	line, err := json.Marshal(m)
	if err != nil {
		c.tb.Fatal(err)
	}
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		c.tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		c.tb.Fatal(err)
	}
}

// tool appends a tool call (assistant line) and its result (user line). The result is an error
// when errText is set.
func (c *ccSession) tool(id, name string, input map[string]any, output, errText string) {
	c.tb.Helper()
	c.append(time.Time{}, map[string]any{"type": "assistant", "requestId": "req_" + id, "message": map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
	res := map[string]any{"type": "tool_result", "tool_use_id": id, "content": output}
	if errText != "" {
		res["content"], res["is_error"] = errText, true
	}
	c.append(time.Time{}, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{res}}})
}

func (c *ccSession) prompt(text string, at time.Time) {
	c.append(at, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
}

// hook sends a Claude Code hook payload for the session through `observerctl hook`.
func (c *ccSession) hook(s *suite, name, extra string) {
	c.tb.Helper()
	payload := fmt.Sprintf(`{"session_id":%q,"transcript_path":%q,"cwd":%q,"hook_event_name":%q%s}`, c.id, c.path, c.cwd, name, extra)
	if _, errOut, code := s.ctl([]byte(payload), "hook"); code != 0 {
		c.tb.Fatalf("hook %s: exit %d: %s", name, code, errOut)
	}
}

// waitString waits until query returns want, failing after d with what it returned.
func (s *suite) waitString(d time.Duration, want, query string, args ...any) time.Duration {
	s.tb.Helper()
	d = patient(d)
	start := time.Now()
	db := s.db()
	var got string
	for time.Since(start) < d {
		if err := db.QueryRow(query, args...).Scan(&got); err == nil && got == want {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.tb.Fatalf("%s = %q after %v, want %q\nwatch log:\n%s", query, got, d, want, s.readFile("logs/watch.log"))
	return 0
}

func gitRepo(tb testing.TB) string {
	tb.Helper()
	repo, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o700); err != nil {
		tb.Fatal(err)
	}
	return repo
}

func writeFile(tb testing.TB, path, content string) string {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	h := sha256.Sum256([]byte(content))
	return hex.EncodeToString(h[:])
}

// TestLifecycle_HooksAndReadFreshness follows one Claude Code session the way a user sees it: the
// SessionStart hook makes it visible at once; its reads of a real file are classified (fresh,
// changed elsewhere, stale after a command, changed by its own edit, missing) from the file on disk
// as the watcher sees each result; the Stop hook finalizes it, and its next prompt reopens it.
func TestLifecycle_HooksAndReadFreshness(t *testing.T) {
	s := newSuite(t)
	s.start()
	repo := gitRepo(t)
	cc := newCCSession(t, filepath.Join(s.home, "clienthome", ".claude", "projects"), "lc-fresh-1", repo)
	const sessionRow = `SELECT state || ' ' || cwd || ' ' || transcript_path FROM sessions WHERE session_id = ?`

	cc.hook(s, "SessionStart", `,"source":"startup"`)
	took := s.waitString(5*time.Second, "started "+repo+" "+cc.path, sessionRow, cc.id)
	t.Logf("SessionStart hook: session row in %v", took.Round(time.Millisecond))

	notes := filepath.Join(repo, "notes.txt")
	const freshnessOf = `SELECT freshness || ' ' || content_hash FROM actions WHERE tool_use_id = ? AND success IS NOT NULL`
	read := func(id, class, hash string) {
		t.Helper()
		cc.tool(id, "Read", map[string]any{"file_path": notes}, "     1→...", "")
		s.waitString(10*time.Second, class+" "+hash, freshnessOf, id)
	}

	h1 := writeFile(t, notes, "v1\n")
	read("toolu_r1", "fresh", h1)
	s.waitString(5*time.Second, "active", `SELECT state FROM sessions WHERE session_id = ?`, cc.id)
	read("toolu_r2", "fresh", h1)

	h2 := writeFile(t, notes, "v2 written by the user\n")
	read("toolu_r3", "changed_elsewhere", h2)

	cc.tool("toolu_b1", "Bash", map[string]any{"command": "sed -i s/v2/v3/ notes.txt"}, "", "")
	h3 := writeFile(t, notes, "v3 written by sed\n")
	read("toolu_r4", "stale", h3)

	// The Edit tool changes the file, then its result is logged.
	h4 := writeFile(t, notes, "v4 written by the Edit tool\n")
	cc.tool("toolu_e1", "Edit", map[string]any{"file_path": notes, "old_string": "v3", "new_string": "v4"}, "ok", "")
	s.waitString(10*time.Second, " "+h4, freshnessOf, "toolu_e1")
	read("toolu_r5", "changed_by_agent", h4)
	read("toolu_r6", "fresh", h4)

	cc.tool("toolu_r7", "Read", map[string]any{"file_path": filepath.Join(repo, "gone.txt")}, "",
		"<tool_use_error>File does not exist.</tool_use_error>")
	s.waitString(10*time.Second, "missing ", freshnessOf, "toolu_r7")

	// file_state holds the last content the session saw of each file.
	s.waitString(5*time.Second, h4, `SELECT hash FROM file_state WHERE project = ? AND path = 'notes.txt' AND session_id = ?`, repo, cc.id)
	s.waitString(5*time.Second, "", `SELECT hash FROM file_state WHERE project = ? AND path = 'gone.txt' AND session_id = ?`, repo, cc.id)

	cc.hook(s, "Stop", `,"stop_hook_active":false`)
	took = s.waitString(5*time.Second, "finalized", `SELECT state FROM sessions WHERE session_id = ?`, cc.id)
	t.Logf("Stop hook: session finalized in %v", took.Round(time.Millisecond))
	// The watcher's next passes do not reopen it...
	time.Sleep(1500 * time.Millisecond)
	s.waitString(time.Second, "finalized", `SELECT state FROM sessions WHERE session_id = ?`, cc.id)
	// ...its next prompt does.
	cc.prompt("and now the tests", time.Time{})
	s.waitString(5*time.Second, "active", `SELECT state FROM sessions WHERE session_id = ?`, cc.id)
}

// TestLifecycle_IdleFinalizeEpochAndHistory runs the watcher with short timings: a live session
// goes active, idle, finalized, each reported once; a compaction starts epoch 1; a transcript in a
// directory the watcher was not told about is read once a SessionStart hook names it; a session
// whose records are an hour old is finalized once, at the time of its last record.
func TestLifecycle_IdleFinalizeEpochAndHistory(t *testing.T) {
	s := newSuite(t, "OBSERVER_WATCH_IDLE_AFTER=2s", "OBSERVER_WATCH_FINALIZE_AFTER=4s")
	repo := gitRepo(t)
	projects := filepath.Join(s.home, "clienthome", ".claude", "projects")

	old := newCCSession(t, projects, "lc-old-1", repo)
	oldLast := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	old.prompt("yesterday's work", oldLast.Add(-time.Minute))
	old.prompt("more of it", oldLast)

	s.start()
	// Claude Code kept under a config directory the watcher does not read.
	hidden := newCCSession(t, filepath.Join(s.home, "elsewhere", "projects"), "lc-hidden-1", repo)
	hidden.hook(s, "SessionStart", `,"source":"startup"`)
	hidden.prompt("hello", time.Time{})
	hidden.append(time.Time{}, map[string]any{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
		"compactMetadata": map[string]any{"trigger": "auto", "preTokens": 1000}})
	s.waitString(5*time.Second, "1", `SELECT count(*) FROM actions WHERE session_id = ? AND type = 'user_prompt'`, hidden.id)
	s.waitString(5*time.Second, "1", `SELECT epoch FROM sessions WHERE session_id = ?`, hidden.id)
	s.waitString(10*time.Second, "finalized", `SELECT state FROM sessions WHERE session_id = ?`, hidden.id)

	s.waitString(5*time.Second, "finalized", `SELECT state FROM sessions WHERE session_id = ?`, old.id)
	// A few more passes: nothing more is reported for either.
	time.Sleep(2 * time.Second)
	const states = `SELECT group_concat(state || '@' || epoch, ' ') FROM (SELECT state, epoch FROM session_events
		WHERE session_id = ? ORDER BY ts, id)`
	s.waitString(time.Second, "finalized@0", states, old.id)
	s.waitString(time.Second, fmt.Sprint(oldLast.UnixMilli()), `SELECT ts FROM session_events WHERE session_id = ?`, old.id)
	// started (the hook), then from the watcher: active (for the prompt, when the watcher read it
	// in a pass of its own), the new epoch (active@1), idle and finalized, each once.
	var got string
	if err := s.db().QueryRow(states, hidden.id).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "started@0 active@1 idle@1 finalized@1" && got != "started@0 active@0 active@1 idle@1 finalized@1" {
		t.Errorf("session events of the live session: %q, want started, active, idle, finalized, once each, with epoch 1 from the compaction", got)
	}
}
