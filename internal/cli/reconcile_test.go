package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/store"
)

type reconcileJSON struct {
	DryRun bool `json:"dry_run"`
	Files  []struct {
		Path       string   `json:"path"`
		Events     int64    `json:"events"`
		IDs        int64    `json:"ids"`
		Stored     int64    `json:"stored"`
		Missing    int64    `json:"missing"`
		Sent       int64    `json:"sent"`
		MissingIDs []string `json:"missing_ids"`
	} `json:"files"`
	Events, Stored, Missing, Sent int64
}

func runReconcileJSON(t *testing.T, args ...string) reconcileJSON {
	t.Helper()
	code, out, errOut := runCtl(t, append([]string{"reconcile", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("reconcile %v: exit %d\n%s%s", args, code, out, errOut)
	}
	var r reconcileJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("reconcile %v: %v\n%s", args, err, out)
	}
	return r
}

func (r reconcileJSON) missingIDs() []string {
	var ids []string
	for _, f := range r.Files {
		ids = append(ids, f.MissingIDs...)
	}
	slices.Sort(ids)
	return ids
}

// deleteEvents deletes rows from the store as a writer and returns their event ids.
func deleteEvents(t *testing.T, obs string, picks map[string]int) []string {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(obs, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for table, n := range picks {
		rows, err := st.DB.Query("SELECT event_id FROM "+table+" ORDER BY id DESC LIMIT ?", n)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var id string
			rows.Scan(&id)
			got = append(got, id)
		}
		rows.Close()
		if len(got) != n {
			t.Fatalf("%s has %d rows, want %d to delete", table, len(got), n)
		}
		for _, id := range got {
			if _, err := st.DB.Exec("DELETE FROM "+table+" WHERE event_id = ?", id); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, got...)
	}
	slices.Sort(ids)
	return ids
}

// TestReconcile_FindsAndRestoresDeletedRows fills a store from the corpus, deletes a few rows,
// and checks that a dry run reports exactly those ids as missing (and sends nothing), that
// reconcile then restores them, and that neither moves a cursor.
func TestReconcile_FindsAndRestoresDeletedRows(t *testing.T) {
	e := newCorpusEnv(t)
	runBackfillJSON(t)
	cursors := filepath.Join(e.obs, "watch", "cursors.json")
	before := read(t, cursors)

	r := runReconcileJSON(t, "--since", "1d", "--dry-run")
	if !r.DryRun || len(r.Files) != 4 || r.Events == 0 || r.Stored == 0 || r.Missing != 0 || r.Sent != 0 {
		t.Fatalf("after backfill, reconcile --dry-run: %+v", r)
	}

	deleted := deleteEvents(t, e.obs, map[string]int{"actions": 2, "token_usage": 1})
	counts := storeCounts(t, e.obs)
	r = runReconcileJSON(t, "--since", "1d", "--dry-run")
	if got := r.missingIDs(); !slices.Equal(got, deleted) || r.Missing != 3 {
		t.Fatalf("dry run reports missing %v (%d), deleted %v", got, r.Missing, deleted)
	}
	if r.Sent < 3 {
		t.Errorf("dry run would send %d events for 3 missing ids", r.Sent)
	}
	if c := storeCounts(t, e.obs); c["actions"] != counts["actions"] || c["token_usage"] != counts["token_usage"] {
		t.Errorf("the dry run changed the store: %v then %v", counts, c)
	}
	code, out, errOut := runCtl(t, "reconcile", "--since", "1d", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "WOULD SEND") || !strings.Contains(out, " 3 missing") ||
		!strings.Contains(out, "nothing sent") || !strings.Contains(out, e.files[0]) {
		t.Errorf("dry run table: exit %d\n%s%s", code, out, errOut)
	}

	r = runReconcileJSON(t, "--since", "1d")
	if r.DryRun || r.Missing != 3 || r.Sent < 3 {
		t.Errorf("reconcile: %+v", r)
	}
	if c := storeCounts(t, e.obs); c["actions"] != counts["actions"]+2 || c["token_usage"] != counts["token_usage"]+1 {
		t.Errorf("reconcile restored %v, had %v before", c, counts)
	}
	if r := runReconcileJSON(t, "--since", "1d", "--dry-run"); r.Missing != 0 {
		t.Errorf("after reconcile, still missing %v", r.missingIDs())
	}
	if read(t, cursors) != before {
		t.Error("reconcile changed the cursors")
	}
	if r := runReconcileJSON(t, "--since", "2026-01-01", "--client", "codex", "--dry-run"); len(r.Files) != 1 || r.Missing != 0 {
		t.Errorf("--client codex: %+v", r)
	}
}

func TestReconcile_Errors(t *testing.T) {
	e := newCorpusEnv(t)
	code, _, errOut := runCtl(t, "reconcile", "--since", "1d")
	if code != ExitUnavailable || !strings.Contains(errOut, "no store") {
		t.Errorf("no store: exit %d, %s", code, errOut)
	}
	runBackfillJSON(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"reconcile"}, ExitUsage, "--since is required"},
		{[]string{"reconcile", "--since", "soon"}, ExitUsage, "--since"},
		{[]string{"reconcile", "--since", "1d", "--client", "vim"}, ExitUsage, "claude-code"},
		{[]string{"reconcile", "--since", "1d", "--bogus"}, ExitUsage, "bogus"},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}

	// Something to send, the bus down and the store held by a writer: nowhere to send it.
	deleteEvents(t, e.obs, map[string]int{"actions": 1})
	st, err := store.OpenWriter(context.Background(), filepath.Join(e.obs, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	code, _, errOut = runCtl(t, "reconcile", "--since", "1d")
	if code != ExitUnavailable || !strings.Contains(errOut, "does not answer") {
		t.Errorf("bus down: exit %d, %s", code, errOut)
	}
	if r := runReconcileJSON(t, "--since", "1d", "--dry-run"); r.Missing != 1 {
		t.Errorf("a dry run needs no bus: %+v", r)
	}
}
