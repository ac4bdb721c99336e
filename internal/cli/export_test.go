package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// exportHome is costHome's store (two transcript turns and a proxy turn) with three tool calls:
// Claude Code in /work/a two days and 20 minutes ago, Codex in /work/b an hour ago.
func exportHome(t *testing.T) string {
	t.Helper()
	home := costHome(t)
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	act := func(id, client, session, project string, at time.Time, target string) event.Event {
		e := event.New(event.KindAction, "test")
		e.ID, e.Client, e.SessionID, e.Project, e.Time = id, client, session, project, at
		ok := true
		e.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: target, Success: &ok, DurationMs: 12}
		return e
	}
	evs := []event.Event{
		act("a1", "claude-code", "c1", "/work/a", now.Add(-48*time.Hour), "go test ./..."),
		act("a2", "codex", "x1", "/work/b", now.Add(-time.Hour), `echo "a, b"`),
		act("a3", "claude-code", "c1", "/work/a", now.Add(-20*time.Minute), "ls\nla"),
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	return home
}

func exportJSON(t *testing.T, home string, args ...string) []map[string]any {
	t.Helper()
	code, out, errOut := runCtl(t, append([]string{"--home", home, "export"}, args...)...)
	if code != ExitOK {
		t.Fatalf("export %v: exit %d\n%s%s", args, code, out, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("export %v: not a JSON array: %v\n%s", args, err, out)
	}
	return rows
}

func ids(rows []map[string]any, key string) []string {
	var out []string
	for _, r := range rows {
		s, _ := r[key].(string)
		out = append(out, s)
	}
	return out
}

func TestExport_TablesAndFilters(t *testing.T) {
	home := exportHome(t)

	rows := exportJSON(t, home) // actions, JSON by default
	if got := strings.Join(ids(rows, "event_id"), ","); got != "a1,a2,a3" {
		t.Fatalf("actions oldest first: %s\n%v", got, rows)
	}
	if _, err := time.Parse(time.RFC3339, rows[0]["ts"].(string)); err != nil || rows[0]["target"] != "go test ./..." || rows[0]["duration_ms"] != 12.0 {
		t.Errorf("first action: %v (%v)", rows[0], err)
	}
	if _, ok := rows[0]["id"]; ok {
		t.Error("the storage rowid is exported")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--client", "codex"}, "a2"},
		{[]string{"--project", "/work/a"}, "a1,a3"},
		{[]string{"--since", "2h"}, "a2,a3"},
		{[]string{"--until", "1d"}, "a1"},
		{[]string{"--since", "2h", "--until", "30m", "--project", "/work/b"}, "a2"},
		{[]string{"--client", "nobody"}, ""},
	} {
		if got := strings.Join(ids(exportJSON(t, home, c.args...), "event_id"), ","); got != c.want {
			t.Errorf("export %v: %q, want %q", c.args, got, c.want)
		}
	}

	// usage: every turn once, the sum cost reports.
	usage := exportJSON(t, home, "--table", "usage")
	var usd float64
	for _, r := range usage {
		usd += r["cost_usd"].(float64)
	}
	if len(usage) != 3 || math.Abs(usd-costTotal(t, home)) > 1e-9 || math.Abs(usd-2.25) > 1e-9 {
		t.Errorf("usage: %d rows, $%.4f; cost says $%.4f\n%v", len(usage), usd, costTotal(t, home), usage)
	}
	for _, want := range []string{"ts", "client", "session_id", "project", "model", "input_tokens", "output_tokens", "cost_usd", "proxy", "reliability"} {
		if _, ok := usage[0][want]; !ok {
			t.Errorf("usage rows lack %q: %v", want, usage[0])
		}
	}
	if a := exportJSON(t, home, "--table", "usage", "--project", "/work/a"); len(a) != 2 || a[1]["proxy"] != 1.0 || a[1]["project"] != "/work/a" {
		t.Errorf("usage of /work/a (the proxy turn takes its session's project): %v", a)
	}

	turns := exportJSON(t, home, "--table", "turns")
	if len(turns) != 1 || turns[0]["event_id"] != "p1" || turns[0]["project"] != "/work/a" || turns[0]["status"] != 200.0 {
		t.Errorf("turns: %v", turns)
	}
	sessions := exportJSON(t, home, "--table", "sessions")
	if got := strings.Join(ids(sessions, "session_id"), ","); got != "c1,x1" {
		t.Errorf("sessions: %v", sessions)
	}
	if _, err := time.Parse(time.RFC3339, sessions[0]["last_seen"].(string)); err != nil {
		t.Errorf("sessions' last_seen: %v", sessions[0])
	}
	if s := exportJSON(t, home, "--table", "sessions", "--since", "90m"); len(s) != 2 {
		t.Errorf("sessions overlapping the last 90 minutes: %v", s)
	}
	if s := exportJSON(t, home, "--table", "sessions", "--until", "1d"); len(s) != 1 || s[0]["session_id"] != "c1" {
		t.Errorf("sessions before a day ago: %v", s)
	}
}

func TestExport_FormatsAndFile(t *testing.T) {
	home := exportHome(t)
	code, out, errOut := runCtl(t, "--home", home, "export", "--format", "jsonl")
	if code != ExitOK {
		t.Fatalf("jsonl: exit %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("jsonl: %d lines\n%s", len(lines), out)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["event_id"] == nil {
			t.Errorf("jsonl line %q: %v", l, err)
		}
	}

	code, out, errOut = runCtl(t, "--home", home, "export", "--format", "csv", "--table", "actions")
	if code != ExitOK {
		t.Fatalf("csv: exit %d %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("csv: %d records, %v\n%s", len(recs), err, out)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if recs[2][col["target"]] != `echo "a, b"` || recs[3][col["target"]] != "ls\nla" || recs[1][col["success"]] != "1" || recs[1][col["client"]] != "claude-code" {
		t.Errorf("csv rows: %q", recs)
	}

	code, out, _ = runCtl(t, "--home", home, "export", "--client", "nobody")
	if code != ExitOK || out != "[]\n" {
		t.Errorf("no rows: exit %d %q", code, out)
	}

	path := filepath.Join(t.TempDir(), "usage.csv")
	write(t, path, "old content that is longer than the export will be, to check truncation\n"+strings.Repeat("x", 4096))
	os.Chmod(path, 0o644)
	code, out, errOut = runCtl(t, "--home", home, "export", "--table", "usage", "--format", "csv", "--output", path)
	if code != ExitOK || !strings.Contains(out, "exported 3 usage row(s) to "+path) {
		t.Fatalf("--output: exit %d\n%s%s", code, out, errOut)
	}
	_, stdout, _ := runCtl(t, "--home", home, "export", "--table", "usage", "--format", "csv")
	if got := read(t, path); got != stdout {
		t.Errorf("the file differs from stdout's export:\n%s\n%s", got, stdout)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("output file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

func TestExport_Errors(t *testing.T) {
	home := exportHome(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--home", t.TempDir(), "export"}, ExitUnavailable, "no store"},
		{[]string{"--home", home, "export", "--table", "tools"}, ExitUsage, "--table"},
		{[]string{"--home", home, "export", "--format", "xml"}, ExitUsage, "--format"},
		{[]string{"--home", home, "export", "--since", "yesterday"}, ExitUsage, "--since"},
		{[]string{"--home", home, "export", "--since", "1d", "--until", "2d"}, ExitUsage, "must be after"},
		{[]string{"--home", home, "export", "--bogus"}, ExitUsage, "bogus"},
		{[]string{"--home", home, "export", "--output", filepath.Join(t.TempDir(), "no", "such", "dir", "f.json")}, ExitFailure, "no such file"},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}
