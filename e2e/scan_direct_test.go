package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// storedTables are the tables a scan fills, compared row by row (without their row ids) between
// two stores of the same history.
var storedTables = []string{"actions", "action_outputs", "token_usage", "api_turns", "messages", "sessions",
	"session_events", "limit_snapshots", "quarantine"}

// storedRows lists table's rows as text, sorted, without the columns that number rows.
func storedRows(tb testing.TB, db *sql.DB, table string) []string {
	tb.Helper()
	rows, err := db.Query("SELECT * FROM " + table)
	if err != nil {
		tb.Fatalf("%s: %v", table, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		var b strings.Builder
		for i, c := range cols {
			if c == "id" || c == "rowid" || c == "received_at" { // row numbers, the time quarantined
				continue
			}
			if v, ok := vals[i].([]byte); ok {
				vals[i] = string(v)
			}
			fmt.Fprintf(&b, "%s=%v ", c, vals[i])
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// sameStored fails the test where the two stores' tables differ.
func sameStored(tb testing.TB, what string, a, b *suite) {
	tb.Helper()
	da, db := a.db(), b.db()
	for _, table := range storedTables {
		ra, rb := storedRows(tb, da, table), storedRows(tb, db, table)
		if slices.Equal(ra, rb) {
			continue
		}
		for i := range max(len(ra), len(rb)) {
			var x, y string
			if i < len(ra) {
				x = ra[i]
			}
			if i < len(rb) {
				y = rb[i]
			}
			if x != y {
				tb.Errorf("%s: table %s differs (%d rows against %d); first difference:\n  %s\n  %s", what, table, len(ra), len(rb), x, y)
				break
			}
		}
	}
}

// daemon runs observerctl with args (a unit's command: bus, writer) until the test ends.
func (s *suite) daemon(args ...string) {
	s.tb.Helper()
	cmd := exec.Command(s.bin("observerctl"), args...)
	cmd.Env = s.env
	logf, err := os.OpenFile(filepath.Join(s.home, args[0]+"-stderr.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		s.tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	s.tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

// TestScan_DirectStoresWhatTheBusStores: `observerctl scan` with nothing running hands its events
// straight to a writer in its own process, without a bus (DESIGN.md). What it stores is, row for
// row, what the same scan stores through a running bus and writer (the units' `observerctl bus`
// and `observerctl writer`).
func TestScan_DirectStoresWhatTheBusStores(t *testing.T) {
	clientHome := corpusHome(t)
	env := []string{"HOME=" + clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME="}
	direct := newSuite(t, env...)
	out, errOut, code := direct.ctl(nil, "scan", "--json")
	if code != 0 {
		t.Fatalf("scan with nothing running: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(direct.home, "bus")); err == nil {
		t.Errorf("a scan with nothing running started a bus (%s exists)", filepath.Join(direct.home, "bus"))
	}

	viaBus := newSuite(t, env...)
	viaBus.daemon("bus")
	viaBus.daemon("writer")
	deadline := time.Now().Add(patient(30 * time.Second))
	for {
		// Until the writer holds the store and its bus answers, scan says the store is held
		// (exit 69) or runs alone; the bus has to be up before the writer takes the store.
		out, errOut, code = viaBus.ctl(nil, "scan", "--json")
		if code == 0 || code != 69 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 0 {
		t.Fatalf("scan through the running bus: exit %d\n%s\n%s\nwriter:\n%s", code, out, errOut, viaBus.readFile("writer-stderr.log"))
	}
	want := direct.count("SELECT count(*) FROM messages")
	viaBus.waitCount(30*time.Second, want, "SELECT count(*) FROM messages")
	viaBus.waitCount(30*time.Second, direct.count("SELECT count(*) FROM actions"), "SELECT count(*) FROM actions")
	sameStored(t, "direct scan against a scan through the bus", direct, viaBus)
	if want == 0 || direct.count("SELECT count(*) FROM token_usage") == 0 {
		t.Fatal("the corpus scan stored no messages or no usage")
	}
}

// TestScan_KilledMidwayLosesNothing: a scan killed with SIGKILL while its writer stores (no bus
// in between) leaves a store the next scan completes: the same rows as one uninterrupted scan,
// none twice, none missing.
func TestScan_KilledMidwayLosesNothing(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "shared", "corpus")); err != nil {
		t.Skip("../shared/corpus is absent")
	}
	clientHome := t.TempDir()
	// Eight copies of the corpus (about 70 MB): a scan long enough to be killed in the middle.
	script := filepath.Join("..", "..", "shared", "scripts", "gen_history.py")
	if out, err := exec.Command("python3", script, "scaled", clientHome, "8").CombinedOutput(); err != nil {
		t.Fatalf("gen_history.py scaled 8: %v\n%s", err, out)
	}
	env := []string{"HOME=" + clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME="}
	whole := newSuite(t, env...)
	if out, errOut, code := whole.ctl(nil, "scan", "--json"); code != 0 {
		t.Fatalf("uninterrupted scan: exit %d\n%s\n%s", code, out, errOut)
	}

	killed := newSuite(t, env...)
	cmd := exec.Command(killed.bin("observerctl"), "scan", "--json")
	cmd.Env = killed.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	// Kill it once about a third of the actions are committed.
	total := whole.count("SELECT count(*) FROM actions")
	var stored int
	deadline := time.Now().Add(patient(time.Minute))
	for stored < total/3 && time.Now().Before(deadline) {
		select {
		case err := <-waited:
			t.Fatalf("the scan ended (%v) before it could be killed with some of its batches stored; stderr:\n%s", err, errb.String())
		default:
		}
		if _, err := os.Stat(filepath.Join(killed.home, "observer.db")); err == nil {
			stored = killed.count("SELECT count(*) FROM actions")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	err := <-waited
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the scan was not killed (%v); stderr:\n%s", err, errb.String())
	}
	t.Logf("killed with %d of %d actions stored", stored, total)
	if stored >= total {
		t.Fatalf("killed after storing everything (%d actions): nothing was left to lose", stored)
	}
	if out, errOut, code := killed.ctl(nil, "scan", "--json"); code != 0 {
		t.Fatalf("scan after the kill: exit %d\n%s\n%s", code, out, errOut)
	}
	sameStored(t, "killed scan completed by the next against an uninterrupted one", whole, killed)
}
