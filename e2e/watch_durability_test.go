package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Durability of observer-watch (issue 4): a Claude Code transcript grows by 100,000 prompt lines,
// some written in two halves with a pause between them, mixed with malformed lines (invalid JSON,
// invalid UTF-8 inside a string, one line longer than ingest.MaxLine), while observer-watch is
// killed -9 three times (twice while it reads a burst written at a random point, once in the
// middle of the long line) and restarted by `observerctl up`. Afterwards every complete line is
// stored exactly once, the malformed ones are reported in the watcher's log for that file with the
// exact total, nothing of theirs is stored, and the file's cursor stands at its end.
// DURABILITY_SEED=n repeats a run's random choices (bursts, cuts; the timing stays the machine's).

const (
	durLines     = 100_000
	durSplitEach = 211             // every 211th line is written in two halves
	durHugeLen   = 65<<20 + 12_345 // longer than ingest.MaxLine (64 MiB)
	durBurst     = 20_000          // lines written at once, twice
)

// durPrompt is a Claude Code user-prompt line: it yields one user_prompt action whose target ends
// in the line's number. The non-ASCII text lets a split fall inside a multi-byte character.
func durPrompt(sid string, i int) []byte {
	return fmt.Appendf(nil, `{"type":"user","uuid":"dur-%06d","sessionId":%q,"cwd":"/tmp/durproj","timestamp":"2026-03-01T10:%02d:%02d.%03dZ","message":{"role":"user","content":"durabilité 日本 prompt %06d"}}`+"\n",
		i, sid, i/60000%60, i/1000%60, i%1000, i)
}

// durMalformed are written before the prompt line of the same number.
func durMalformed(sid string) map[int][]byte {
	bad := map[int][]byte{}
	for k, at := range []int{1, 17_000, 39_999, 71_234} {
		bad[at] = fmt.Appendf(nil, `{"type":"user","uuid":"broken-%d","message":{"role":"user","content":"durability broken`+"\n", k)
	}
	for k, at := range []int{2, 23_456, 61_000, 88_888} {
		bad[at] = fmt.Appendf(nil, `{"type":"user","uuid":"badutf8-%d","sessionId":%q,"cwd":"/tmp/durproj","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"durability badutf8 %d `+"\xff\xfe\xc3"+`"}}`+"\n", k, sid, k)
	}
	return bad
}

const durHugeAt = 50_000

// durHuge is a valid prompt line longer than ingest.MaxLine: it must be skipped as malformed.
func durHuge(sid string) []byte {
	head := fmt.Appendf(nil, `{"type":"user","uuid":"dur-huge","sessionId":%q,"cwd":"/tmp/durproj","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"durability huge `, sid)
	tail := []byte(`"}}` + "\n")
	line := make([]byte, 0, durHugeLen)
	line = append(line, head...)
	line = append(line, bytes.Repeat([]byte("x"), durHugeLen-len(head)-len(tail))...)
	return append(line, tail...)
}

func TestWatch_DurabilityKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("long end-to-end test")
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("DURABILITY_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("DURABILITY_SEED: %v", err)
		}
		seed = n
	}
	rng := rand.New(rand.NewPCG(seed, 4))
	t.Logf("seed %d", seed)

	s := newSuite(t)
	proj := filepath.Join(s.home, "clienthome", ".claude", "projects", "-tmp-durproj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	s.start()
	if s.componentPID("watch") == 0 {
		t.Fatal("observer-watch does not run under observerctl up")
	}
	const sid = "4f1c2b7e-9d3a-4e56-8a01-d0c5e7b2a913"
	path := filepath.Join(proj, sid+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	// Two bursts start at random points: durBurst lines in one write, which the watcher reads in one
	// long pass. It is killed in that pass once rows from the burst are stored; when the cursor it
	// saved is behind stored rows, the restarted watcher reads them again (the case that stores a
	// line twice unless replays are harmless), and at least one kill must land so. A third kill
	// lands in the middle of the 65 MiB line. The supervisor restarts the watcher after each.
	bursts := [2]int{5_000 + rng.IntN(20_000), 55_000 + rng.IntN(20_000)}
	var written atomic.Int64 // prompt lines written
	burstWritten := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	hugeStarted, writingDone := make(chan struct{}), make(chan struct{})
	poll := s.db()
	stored := func() int {
		var n int
		poll.QueryRow("SELECT count(*) FROM actions WHERE type = 'user_prompt' AND session_id = ?", sid).Scan(&n)
		return n
	}
	var kills []string // what was going on at each kill
	replays := 0       // kills after which stored lines had to be read again
	var killErr error
	var killWG sync.WaitGroup
	killWG.Add(1)
	go func() {
		defer killWG.Done()
		kill := func(what string) bool {
			pid := s.componentPID("watch")
			if pid == 0 {
				killErr = fmt.Errorf("no watch pid before kill %d", len(kills)+1)
				return false
			}
			n := stored()
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				killErr = fmt.Errorf("kill watch %d: %v", pid, err)
				return false
			}
			time.Sleep(50 * time.Millisecond) // dead, and not yet restarted (the backoff is 0.5 s at least)
			c := readCursor(s, path)
			what = fmt.Sprintf("%s (pid %d, %d lines written, %d stored, saved cursor after %d lines)", what, pid, written.Load(), n, c.Lines)
			// More prompts stored than lines before the saved cursor: some stored ones lie beyond it.
			if int64(n) > c.Lines {
				replays++
				what += fmt.Sprintf(": >= %d stored lines to read again", int64(n)-c.Lines)
			}
			kills = append(kills, what)
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if p := s.componentPID("watch"); p != 0 && p != pid {
					return true
				}
				time.Sleep(50 * time.Millisecond)
			}
			killErr = fmt.Errorf("watch not restarted 30s after kill -9 of %d", pid)
			return false
		}
		// killMidPass kills once part of the burst is stored (or after 5 s, to go on).
		killMidPass := func(k int) bool {
			select {
			case <-burstWritten[k]:
			case <-writingDone:
				return false
			}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if stored() > bursts[k] { // kill() tells whether the pass was still going
					break
				}
			}
			return kill(fmt.Sprintf("in the pass over burst %d", k+1))
		}
		if !killMidPass(0) {
			return
		}
		select {
		case <-hugeStarted:
		case <-writingDone:
			return
		}
		time.Sleep(30 * time.Millisecond)
		if !kill("inside the 65 MiB line") {
			return
		}
		killMidPass(1)
	}()

	// The writer: batches of 250 complete lines 8 ms apart, every durSplitEach-th line in two halves
	// cut at a random byte with a pause between them (every tenth 120 ms, once the watcher has
	// caught up, so that it sees the half line); the bursts in one write each.
	bad := durMalformed(sid)
	huge := durHuge(sid)
	var buf []byte
	write := func(b []byte) {
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	flush := func() {
		if len(buf) > 0 {
			write(buf)
			buf = buf[:0]
		}
	}
	// catchUp waits until the watcher has stored every prompt before line i (at most d), so that
	// what is written next is read as it arrives rather than long after.
	var caughtUp time.Duration
	catchUp := func(i int, d time.Duration) {
		t0 := time.Now()
		for stored() < i && time.Since(t0) < d {
			time.Sleep(5 * time.Millisecond)
		}
		caughtUp += time.Since(t0)
	}
	start := time.Now()
	splits, longPauses, burstEnd, burst := 0, 0, -1, -1
	for i := range durLines {
		if k := slices.Index(bursts[:], i); k >= 0 {
			flush()
			burst, burstEnd = k, i+durBurst
		}
		if b, ok := bad[i]; ok {
			buf = append(buf, b...)
		}
		if i == durHugeAt {
			flush()
			catchUp(i, 10*time.Second)
			close(hugeStarted)
			// In pieces, so the watcher sees (and a kill interrupts) a partial line of many MB.
			for off := 0; off < len(huge); off += 8 << 20 {
				write(huge[off:min(off+8<<20, len(huge))])
				time.Sleep(15 * time.Millisecond)
			}
		}
		line := durPrompt(sid, i)
		switch {
		case i < burstEnd:
			buf = append(buf, line...)
			if i == burstEnd-1 {
				flush()
				written.Store(int64(i + 1))
				close(burstWritten[burst])
			}
			continue
		case i%durSplitEach == durSplitEach/2:
			pause := time.Duration(rng.IntN(4)) * time.Millisecond
			if splits%10 == 0 {
				// The watcher is at the end of the file when the half line arrives.
				flush()
				catchUp(i, 2*time.Second)
				pause = 120 * time.Millisecond
				longPauses++
			}
			cut := 1 + rng.IntN(len(line)-1)
			buf = append(buf, line[:cut]...)
			flush()
			time.Sleep(pause)
			buf = append(buf, line[cut:]...)
			splits++
		default:
			buf = append(buf, line...)
		}
		written.Store(int64(i + 1))
		if i%250 == 249 {
			flush()
			time.Sleep(8 * time.Millisecond)
		}
	}
	flush()
	close(writingDone)
	wrote := time.Since(start)
	killWG.Wait()
	if killErr != nil {
		t.Fatalf("%v\n%s", killErr, s.readFile("logs/supervisor.log"))
	}
	t.Logf("wrote %d lines (%d split, %d with a 120 ms pause; bursts of %d at %v), %d malformed and a %d MiB line in %v (%v of it waiting for the watcher to catch up)",
		durLines, splits, longPauses, durBurst, bursts, len(bad), len(huge)>>20, wrote.Round(time.Millisecond), caughtUp.Round(time.Millisecond))
	t.Logf("kills:\n  %s", strings.Join(kills, "\n  "))
	if len(kills) < 3 {
		t.Fatalf("only %d kills happened while the transcript grew: %v", len(kills), kills)
	}
	if replays == 0 {
		// No kill landed while stored lines lay beyond the saved cursor: the watcher saves its
		// cursors at the end of a pass, and it published the whole burst before the writer stored
		// from it (the bus takes batches faster than a loaded machine's store). Make the replay
		// happen: kill the watcher and take its saved cursor of the transcript away before the
		// supervisor restarts it, so the next watcher reads every stored line again.
		pid := s.componentPID("watch")
		if pid == 0 {
			t.Fatal("no watch pid for the replay")
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // dead, and not yet restarted (the backoff is 0.5 s at least)
		cursors := filepath.Join(s.home, "watch", "cursors.json")
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s.readFile("watch/cursors.json")), &m); err != nil {
			t.Fatalf("read %s: %v", cursors, err)
		}
		delete(m, path)
		data, _ := json.Marshal(m)
		if err := os.WriteFile(cursors, data, 0o600); err != nil {
			t.Fatal(err)
		}
		replays++
		kills = append(kills, fmt.Sprintf("after writing, its cursor of the transcript taken away (pid %d, %d stored): every stored line read again", pid, stored()))
		t.Logf("no kill landed while stored lines lay beyond the saved cursor; replaying the whole transcript instead:\n  %s", kills[len(kills)-1])
		deadline := time.Now().Add(30 * time.Second)
		for s.componentPID("watch") == pid || s.componentPID("watch") == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("watch not restarted 30s after kill -9 of %d", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Wait until the watcher has read the file to its end, the bus holds nothing for the writer and
	// every prompt is stored (or nothing moves for 30 s); then every prompt is there, each once.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(150 * time.Second)
	got, last, lastChange := 0, -1, time.Now()
	for {
		got = stored()
		st, _ := s.status()
		if got >= durLines && st.Bus.Pending == 0 && readCursor(s, path).Offset == fi.Size() {
			break
		}
		if got != last {
			last, lastChange = got, time.Now()
		}
		if time.Now().After(deadline) || time.Since(lastChange) > 30*time.Second {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	got = stored()
	t.Logf("%d prompts stored %v after the writing ended (%v after it began)", got,
		time.Since(start.Add(wrote)).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	seen := make([]int, durLines)
	var strays []string
	rows, err := poll.Query("SELECT target FROM actions WHERE type = 'user_prompt' AND session_id = ?", sid)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var target string
		rows.Scan(&target)
		var n int
		if _, err := fmt.Sscanf(target, "durabilité 日本 prompt %d", &n); err != nil || n < 0 || n >= durLines {
			strays = append(strays, target[:min(len(target), 60)])
			continue
		}
		seen[n]++
	}
	rows.Close()
	var missing, twice []int
	for n, c := range seen {
		switch {
		case c == 0:
			missing = append(missing, n)
		case c > 1:
			twice = append(twice, n)
		}
	}
	if len(missing) > 0 || len(twice) > 0 || len(strays) > 0 {
		t.Fatalf("%d prompts stored of %d: %d missing (first %v), %d stored more than once (first %v), %d rows from no prompt line %q\nwatch log:\n%s",
			got, durLines, len(missing), missing[:min(len(missing), 10)], len(twice), twice[:min(len(twice), 10)], len(strays), strays[:min(len(strays), 3)],
			tailLog(s.readFile("logs/watch.log"), 40))
	}

	// The malformed lines: none stored, each counted, reported for this file.
	wantBad := int64(len(bad) + 1)
	var n int
	if poll.QueryRow("SELECT count(*) FROM actions WHERE target LIKE 'durability %'").Scan(&n); n != 0 {
		t.Errorf("%d rows stored from malformed lines", n)
	}
	reports, total := malformedReports(t, s.readFile("logs/watch.log"), path)
	if len(reports) == 0 || total != wantBad {
		t.Fatalf("watch log reports file_total %d for %s in %d reports, want %d malformed lines\n%s",
			total, path, len(reports), wantBad, tailLog(s.readFile("logs/watch.log"), 40))
	}
	t.Logf("watch log: %d malformed-line reports for the file, last file_total %d", len(reports), total)
	// The line over the limit is reported as such, with its size, not only as malformed.
	if want := fmt.Sprintf(`"transcript line of %d bytes at offset `, durHugeLen); !strings.Contains(s.readFile("logs/watch.log"), want) ||
		!strings.Contains(s.readFile("logs/watch.log"), "passes the 64 MiB line limit, skipped") {
		t.Errorf("the watch log does not report the line of %d bytes over the 64 MiB line limit", durHugeLen)
	}
	// Growing while the watcher was killed and restarted is no rewrite.
	if log := s.readFile("logs/watch.log"); strings.Contains(log, "transcript rewritten") {
		t.Errorf("the growing transcript was read again as rewritten:\n%s", tailLog(log, 40))
	}

	// The file was read to its end: the cursor stands there, having counted every line.
	if c := readCursor(s, path); c.Offset != fi.Size() || c.Lines != durLines+wantBad || c.Malformed != wantBad {
		t.Fatalf("cursor %+v, want offset %d, lines %d, malformed %d", c, fi.Size(), durLines+wantBad, wantBad)
	}
	for _, comp := range s.waitHealthy(10 * time.Second).Components {
		if comp.Name == "watch" && comp.Restarts < len(kills) {
			t.Errorf("watch restarted %d times after %d kills", comp.Restarts, len(kills))
		}
	}
}

// malformedReports returns the watcher log's "malformed transcript lines skipped" records for
// path (the count of each) and the file_total of the last one.
func malformedReports(t *testing.T, log, path string) (counts []int64, total int64) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Msg       string `json:"msg"`
			File      string `json:"file"`
			Count     int64  `json:"count"`
			FileTotal int64  `json:"file_total"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Msg != "malformed transcript lines skipped" || r.File != path {
			continue
		}
		counts = append(counts, r.Count)
		total = r.FileTotal
	}
	return counts, total
}

// durCursor is the part of the watcher's cursor the test reads.
type durCursor struct{ Offset, Lines, Malformed int64 }

// readCursor reads the watcher's saved cursor of path (zero when there is none yet).
func readCursor(s *suite, path string) durCursor {
	var m map[string]durCursor
	json.Unmarshal([]byte(s.readFile("watch/cursors.json")), &m)
	return m[path]
}

func tailLog(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// A transcript rewritten in place while observer-watch follows it (issue 29) is read again: once
// truncated and written again longer with other prompts, once rewritten at the same size. Every
// prompt of every version is stored, `reconcile --dry-run` finds nothing missing, and the
// watcher's log names the file as rewritten.
func TestWatch_RewrittenInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	s := newSuite(t)
	proj := filepath.Join(s.home, "clienthome", ".claude", "projects", "-tmp-durproj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	s.start()
	const sid = "7a2e4c1b-3d5f-4e60-9b18-c2d4e6f8a0b1"
	path := filepath.Join(proj, sid+".jsonl")
	prompts := func(from, n int) []byte {
		var b []byte
		for i := from; i < from+n; i++ {
			b = append(b, durPrompt(sid, i)...)
		}
		return b
	}
	const q = "SELECT count(*) FROM actions WHERE type = 'user_prompt' AND session_id = ?"
	if err := os.WriteFile(path, prompts(0, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	s.waitCount(60*time.Second, 100, q, sid)

	// Truncated and written again, longer, with 150 other prompts.
	if err := os.WriteFile(path, prompts(1000, 150), 0o600); err != nil {
		t.Fatal(err)
	}
	s.waitCount(60*time.Second, 250, q, sid)

	// Rewritten at the same size (the prompts' lines have one length) with 150 others.
	size := int64(len(prompts(1000, 150)))
	if err := os.WriteFile(path, prompts(2000, 150), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if fi.Size() != size {
		t.Fatalf("the same-size rewrite has %d bytes, want %d", fi.Size(), size)
	}
	s.waitCount(60*time.Second, 400, q, sid)

	out, errOut, code := s.ctl(nil, "reconcile", "--since", "24h", "--dry-run", "--json")
	var rep struct{ Missing int64 }
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Missing != 0 {
		t.Fatalf("reconcile --dry-run: exit %d, %s %s", code, out, errOut)
	}
	if log := s.readFile("logs/watch.log"); !strings.Contains(log, "transcript rewritten; read again from its start") {
		t.Errorf("the watcher's log does not say the transcript was rewritten:\n%s", tailLog(log, 20))
	}
}
