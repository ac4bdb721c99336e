package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/pkg/store"
)

// corpusEnv is a user whose Claude Code and Codex history is a few files of ../shared/corpus,
// laid out as the clients keep them, and an observer home with no store yet. The bus port is a
// closed one, so that no observer running on this machine is reached: the commands host their
// own writer.
type corpusEnv struct {
	home, obs, codexHome string
	files                []string // the transcripts, as laid out
}

func newCorpusEnv(t *testing.T) *corpusEnv {
	t.Helper()
	corpus := filepath.Join("..", "..", "..", "shared", "corpus")
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("../shared/corpus is absent")
	}
	dir := t.TempDir()
	e := &corpusEnv{home: filepath.Join(dir, "home"), obs: filepath.Join(dir, "obs"), codexHome: filepath.Join(dir, "home", ".codex")}
	for src, dst := range map[string]string{
		"claude-code/claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl":                 ".claude/projects/-demo/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
		"claude-code/codemie-code__4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl":                       ".claude/projects/-codemie/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
		"claude-code/codemie-code__agent-36541525.jsonl":                                             ".claude/projects/-codemie/agent-36541525.jsonl",
		"codex/codemie-code__rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl": ".codex/sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
	} {
		data, err := os.ReadFile(filepath.Join(corpus, src))
		if err != nil {
			t.Skipf("corpus file %s: %v", src, err)
		}
		path := filepath.Join(e.home, dst)
		write(t, path, string(data))
		e.files = append(e.files, path)
	}
	t.Setenv("HOME", e.home)
	t.Setenv("OBSERVER_HOME", e.obs)
	t.Setenv("CODEX_HOME", e.codexHome)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("OBSERVER_BUS_PORT", strconv.Itoa(closedPort(t)))
	return e
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// storeCounts reads the store's row counts.
func storeCounts(t *testing.T, obs string) map[string]int64 {
	t.Helper()
	st, err := store.OpenReader(context.Background(), filepath.Join(obs, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type backfillJSON struct {
	DryRun bool `json:"dry_run"`
	ingest.Summary
}

func runBackfillJSON(t *testing.T, args ...string) backfillJSON {
	t.Helper()
	code, out, errOut := runCtl(t, append([]string{"backfill", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("backfill %v: exit %d\n%s%s", args, code, out, errOut)
	}
	var r backfillJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("backfill %v: %v\n%s", args, err, out)
	}
	return r
}

// TestBackfill_CorpusOnceThenNothing: a dry run counts the history and stores nothing; backfill
// stores it (hosting its own writer); a second backfill finds nothing new.
func TestBackfill_CorpusOnceThenNothing(t *testing.T) {
	e := newCorpusEnv(t)
	storePath := filepath.Join(e.obs, "observer.db")

	code, out, errOut := runCtl(t, "backfill", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "would backfill (dry run) 4 of 4 files") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	dry := runBackfillJSON(t, "--dry-run")
	if !dry.DryRun || dry.Files != 4 || dry.Read != 4 || dry.Events == 0 || dry.Lines == 0 {
		t.Errorf("dry run summary %+v", dry)
	}
	if _, err := os.Stat(storePath); !os.IsNotExist(err) {
		t.Errorf("the dry run made a store (%v)", err)
	}

	got := runBackfillJSON(t, "--client", "claude-code")
	if got.DryRun || got.Files != 3 || got.Read != 3 {
		t.Errorf("claude-code backfill: %+v", got)
	}
	c := storeCounts(t, e.obs)
	if c["actions"] == 0 || c["token_usage"] == 0 || c["sessions"] == 0 {
		t.Fatalf("store after backfill: %v", c)
	}
	got = runBackfillJSON(t)
	if got.Files != 4 || got.Read != 1 {
		t.Errorf("second backfill reads only the Codex file: %+v", got)
	}
	if c2 := storeCounts(t, e.obs); c2["actions"] <= c["actions"] {
		t.Errorf("the Codex file added no action: %v then %v", c, c2)
	}
	c = storeCounts(t, e.obs)

	code, out, errOut = runCtl(t, "backfill")
	if code != ExitOK || !strings.Contains(out, "nothing to backfill: all 4 transcript file(s) were read already") {
		t.Errorf("third backfill: exit %d\n%s%s", code, out, errOut)
	}
	if c2 := storeCounts(t, e.obs); c2["actions"] != c["actions"] || c2["token_usage"] != c["token_usage"] {
		t.Errorf("a backfill with nothing new changed the store: %v then %v", c, c2)
	}

	// A file that grows is read from where the last backfill stopped.
	f, err := os.OpenFile(e.files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"y\"}\n")
	f.Close()
	if r := runBackfillJSON(t); r.Read != 1 || r.Lines != 1 {
		t.Errorf("after one line was appended: %+v", r)
	}
}

func TestBackfill_Errors(t *testing.T) {
	e := newCorpusEnv(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"backfill", "--client", "vim"}, ExitUsage, "claude-code"},
		{[]string{"backfill", "--since", "yesterday"}, ExitUsage, "--since"},
		{[]string{"backfill", "--bogus"}, ExitUsage, "bogus"},
		{[]string{"backfill", "extra"}, ExitUsage, "no arguments"},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}

	t.Run("writer holds the store, bus down", func(t *testing.T) {
		st, err := store.OpenWriter(context.Background(), filepath.Join(e.obs, "observer.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		code, _, errOut := runCtl(t, "backfill")
		if code != ExitUnavailable || !strings.Contains(errOut, "observerctl status") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
	t.Run("no history", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		t.Setenv("CODEX_HOME", filepath.Join(t.TempDir(), "none"))
		code, out, errOut := runCtl(t, "backfill")
		if code != ExitOK || !strings.Contains(out, "no transcript files found for claude-code, codex") {
			t.Errorf("exit %d\n%s%s", code, out, errOut)
		}
	})
}

func TestBackfill_ProgressLine(t *testing.T) {
	p := ingest.Progress{Files: 4, FilesDone: 1, Bytes: 4 << 20, BytesDone: 1 << 20}
	line := progressLine(p, 2*time.Second)
	for _, want := range []string{" 25%", "1/4 files", "1.0/4.0 MB", "0.5 MB/s", "6s left"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}

// TestOpsHelp: every ops command documents its usage and exit codes.
func TestOpsHelp(t *testing.T) {
	for _, cmd := range []string{"doctor", "export", "prune", "backfill", "reconcile"} {
		code, out, _ := runCtl(t, cmd, "--help")
		if code != ExitOK || !strings.Contains(out, "USAGE:") || !strings.Contains(out, "DESCRIPTION:") ||
			!strings.Contains(out, "Exit codes: 0") || !strings.Contains(out, " 64 ") {
			t.Errorf("%s --help (exit %d) lacks its usage or exit codes:\n%s", cmd, code, out)
		}
	}
}
