package goldentest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/corpusstore"
	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/pkg/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from this code (also OBSERVER_GOLDEN_UPDATE=1)")

const regenerate = "OBSERVER_GOLDEN_UPDATE=1 go test -tags sqlite_fts5 -run TestGolden ./internal/goldentest/"

// The clocks, a little after the corpus's newest record (a Codex turn of 2026-05-11 11:47:47 UTC):
// the scan at buildClock (that session idle, the others finalized), the questions at queryClock.
var (
	buildClock = time.Date(2026, 5, 11, 11, 50, 0, 0, time.UTC)
	queryClock = time.Date(2026, 5, 11, 12, 0, 0, 0, time.UTC)
)

// zoneName and zoneOffset are the local zone the test runs in: UTC+05:30, no daylight saving time,
// an offset that is not whole hours.
const (
	zoneName   = "IST"
	zoneOffset = 5*3600 + 30*60
)

func TestMain(m *testing.M) {
	pinZone()
	// observer's own settings would change the answers (and an unknown OBSERVER_ variable is
	// warned about on stderr): only the corpus's location is kept.
	updateEnv = os.Getenv("OBSERVER_GOLDEN_UPDATE") == "1"
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OBSERVER_") && k != "OBSERVER_CORPUS" {
			os.Unsetenv(k)
		}
	}
	os.Exit(m.Run())
}

// pinZone makes the process's local zone zoneName, for Go (time.Local) and for the C library
// (SQLite's 'localtime') alike. Both read TZ once, and Go's time.Local is in use before TestMain
// runs (nats-server's process statistics read it from an init goroutine: assigning it is a data
// race), so the test binary executes itself again with TZ set, naming a zone file written here
// (TZ=":/path" means a file to both): no zoneinfo of the machine is needed.
func pinZone() {
	file := filepath.Join(os.TempDir(), fmt.Sprintf("observer-golden-%s%+d.tzif", zoneName, zoneOffset))
	tz := ":" + file
	if os.Getenv("TZ") == tz {
		if _, off := time.Now().Zone(); off != zoneOffset {
			fmt.Fprintf(os.Stderr, "goldentest: TZ=%s gave a local offset of %ds, want %d\n", tz, off, zoneOffset)
			os.Exit(1)
		}
		return
	}
	if err := writeZone(file); err != nil {
		fmt.Fprintf(os.Stderr, "goldentest: write the zone file: %v\n", err)
		os.Exit(1)
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, append(os.Environ(), "TZ="+tz))
	}
	fmt.Fprintf(os.Stderr, "goldentest: run again with TZ=%s: %v\n", tz, err)
	os.Exit(1)
}

// writeZone writes a TZif (version 1) file of one zone, zoneName at zoneOffset, without
// transitions, atomically (test binaries of two trees may write it at once).
func writeZone(path string) error {
	var b bytes.Buffer
	b.WriteString("TZif")
	b.Write(make([]byte, 16)) // version 1, then 15 reserved bytes
	name := zoneName + "\x00"
	// isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
	for _, n := range []uint32{0, 0, 0, 0, 1, uint32(len(name))} {
		binary.Write(&b, binary.BigEndian, n)
	}
	binary.Write(&b, binary.BigEndian, int32(zoneOffset)) // the one local time type: utoff,
	b.Write([]byte{0, 0})                                 // isdst, desigidx
	b.WriteString(name)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".observer-golden-zone-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	os.Chmod(tmp.Name(), 0o644)
	return os.Rename(tmp.Name(), path)
}

// output is one recorded answer.
type output struct {
	surface string // cli, dash, mcp: its folder under testdata
	name    string // its file, without .golden
	body    []byte
	meta    string // exit code and stderr, HTTP status and type, tool error or not
}

// recorder collects the outputs of one run.
type recorder struct {
	outs []output
}

func (r *recorder) add(surface, name string, body []byte, meta string) {
	r.outs = append(r.outs, output{surface: surface, name: name, body: bytes.Clone(body), meta: meta})
}

// TestGolden records every answer on the corpus store and compares each with its golden file.
func TestGolden(t *testing.T) {
	if why := corpusstore.Available(); why != "" {
		t.Skip("GOLDEN SNAPSHOT NOT CHECKED: " + why)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("GOLDEN SNAPSHOT NOT CHECKED: python3 (which lays the corpus out) is not on PATH")
	}
	dir := fixedDir(t)
	home := filepath.Join(dir, "home") // the clients' home gen_history.py fills
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")

	rec := &recorder{}
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(buildClock)
		path := buildStore(t, dir)
		writeConfig(t, dir)
		sleepUntil(queryClock)
		recordCLI(t, rec, dir)
		recordDash(t, rec, dir, path)
		recordMCP(t, rec, dir, path)
	})
	for i := range rec.outs {
		rec.outs[i].body = normalise(rec.outs[i].body, dir)
		rec.outs[i].meta = string(normalise([]byte(rec.outs[i].meta), dir))
	}
	if updating() {
		writeGoldens(t, rec.outs)
		return
	}
	checkGoldens(t, rec.outs)
}

// updateEnv is OBSERVER_GOLDEN_UPDATE=1, read before TestMain clears the OBSERVER_ variables.
var updateEnv bool

// fixedDir makes the test's directory, whose path has the same length at every run and on every
// machine: the store keeps the corpus's transcript paths under it, so its length sets the store
// file's size (observer_store_size_bytes in the metrics) and where a clipped path is cut.
func fixedDir(tb testing.TB) string {
	tb.Helper()
	if fi, err := os.Stat("/tmp"); err != nil || !fi.IsDir() {
		tb.Fatalf("the golden test builds its store under /tmp, which is not a directory here: %v", err)
	}
	for range 100 {
		dir := fmt.Sprintf("/tmp/observer-golden-%08x", rand.Uint32())
		if err := os.Mkdir(dir, 0o700); err == nil {
			tb.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		} else if !errors.Is(err, fs.ErrExist) {
			tb.Fatal(err)
		}
	}
	tb.Fatal("no free /tmp/observer-golden-* name")
	return ""
}

func updating() bool { return *update || updateEnv }

// sleepUntil moves the bubble's fake clock to at.
func sleepUntil(at time.Time) {
	if d := time.Until(at); d > 0 {
		time.Sleep(d)
	}
}

// buildStore fills the store as `observerctl scan` does, then lets the writer's analysis and
// session memory catch up, as a running writer does after a scan.
func buildStore(t *testing.T, dir string) string {
	t.Helper()
	path, err := corpusstore.Build(dir)
	if err != nil {
		t.Fatalf("corpus store: %v", err)
	}
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rdb, err := st.ReadDB()
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return buildClock }
	a := &analysis.Analyzer{DB: st.DB, Read: rdb, Now: now}
	if _, err := a.Run(ctx); err != nil {
		t.Fatalf("analysis: %v", err)
	}
	// One session a step (the writer takes 50): a step recomputes its sessions' projects in Go's
	// map order, which would number the observations differently at every run.
	m := &memory.Memory{DB: st.DB, Read: rdb, Now: now, ObserveEvery: time.Second}
	for i := 0; ; i++ {
		p, err := m.Step(ctx, 1)
		if err != nil {
			t.Fatalf("session memory: %v", err)
		}
		if p.Pending == 0 {
			break
		}
		if i == 1000 {
			t.Fatalf("session memory still has %d epochs due after 1000 steps", p.Pending)
		}
		time.Sleep(time.Second) // the throttle goes by the (fake) wall clock
	}
	forgetUnstable(t, st.DB)
	return path
}

// forgetUnstable forgets, as `observerctl memory forget` does while observer is not running,
// the observations the writer does not make the same at every run: memory.Observe takes a
// change_area observation's evidence (and so its last_seen and confidence) from one of the
// session's changed files in that area in Go's map order. Forgotten observations are hidden
// from every answer, which the goldens then also hold.
func forgetUnstable(t *testing.T, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT id FROM observations WHERE kind = ? ORDER BY id`, memory.KindChangeArea)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		if _, err := memory.Forget(ctx, db, id); err != nil {
			t.Fatalf("forget observation %d: %v", id, err)
		}
	}
}

// writeConfig gives the home a config.toml with budgets, so that budget, statusline and the
// settings page have something to show.
func writeConfig(t *testing.T, home string) {
	t.Helper()
	const cfg = `# observer's golden test: budgets that the corpus's last day reaches
[budget]
daily = 2.0
monthly = 20.0

[budget.projects]
"/Users/Sample_User/repos/codemie-ai/codemie-code" = 5.0
"/Users/user/repo" = 1.0
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// normalise replaces the test's directory, the part of an answer that differs between runs (with
// the page's CSRF token, see recordDash), with $GOLDEN_DIR. Nothing else is rewritten: numbers,
// times and ids are compared as they are.
func normalise(b []byte, dir string) []byte {
	return bytes.ReplaceAll(b, []byte(dir), []byte("$GOLDEN_DIR"))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileName makes name safe as a file name.
func fileName(name string) string { return unsafeName.ReplaceAllString(name, "_") }

func goldenPath(o output) string {
	return filepath.Join("testdata", o.surface, fileName(o.name)+".golden")
}

// metaFiles renders each surface's _meta.golden: one line per output, sorted by name.
func metaFiles(outs []output) map[string][]byte {
	lines := map[string][]string{}
	for _, o := range outs {
		lines[o.surface] = append(lines[o.surface], fileName(o.name)+": "+o.meta)
	}
	files := map[string][]byte{}
	for s, ls := range lines {
		sort.Strings(ls)
		files[filepath.Join("testdata", s, "_meta.golden")] = []byte(strings.Join(ls, "\n") + "\n")
	}
	return files
}

// wanted is every golden file a run writes, with its content.
func wanted(t *testing.T, outs []output) map[string][]byte {
	t.Helper()
	files := metaFiles(outs)
	for _, o := range outs {
		p := goldenPath(o)
		if _, dup := files[p]; dup {
			t.Fatalf("two outputs are named %s", p)
		}
		files[p] = o.body
	}
	return files
}

// existing lists the golden files under testdata.
func existing(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".golden") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func writeGoldens(t *testing.T, outs []output) {
	files := wanted(t, outs)
	for _, p := range existing(t) {
		if _, ok := files[p]; !ok {
			os.Remove(p)
			t.Logf("removed %s (no output has this name any more)", p)
		}
	}
	for p, b := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d golden files (%d outputs)", len(files), len(outs))
}

func checkGoldens(t *testing.T, outs []output) {
	files := wanted(t, outs)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(p, "testdata/"), ".golden"), func(t *testing.T) {
			want, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("no golden file %s for this output: record it with %s", p, regenerate)
			}
			if got := files[p]; !bytes.Equal(got, want) {
				t.Errorf("%s differs from what the code answers now (- golden, + now):\n%s\nIf the change is intended, regenerate with %s and explain it.",
					p, diff(want, got), regenerate)
			}
		})
	}
	for _, p := range existing(t) {
		if _, ok := files[p]; !ok {
			t.Errorf("%s is recorded but no output has this name now: regenerate with %s", p, regenerate)
		}
	}
}

// diff shows where two texts differ: the lines between their common start and end, with a few
// lines of context, at most maxLines of each side. Two JSON texts (the dashboard's are one line)
// are shown indented.
func diff(want, got []byte) string {
	const context, maxLines = 3, 40
	if json.Valid(want) && json.Valid(got) {
		var iw, ig bytes.Buffer
		if json.Indent(&iw, want, "", "  ") == nil && json.Indent(&ig, got, "", "  ") == nil {
			want, got = iw.Bytes(), ig.Bytes()
		}
	}
	a, b := strings.SplitAfter(string(want), "\n"), strings.SplitAfter(string(got), "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "@@ line %d: golden has %d lines, now %d @@\n", pre+1, len(a), len(b))
	line := func(mark string, s string) {
		s = strings.TrimSuffix(s, "\n")
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		sb.WriteString(mark + s + "\n")
	}
	for _, s := range a[max(0, pre-context):pre] {
		line("  ", s)
	}
	side := func(mark string, ls []string) {
		for i, s := range ls {
			if i == maxLines {
				fmt.Fprintf(&sb, "%s… %d more lines\n", mark, len(ls)-maxLines)
				break
			}
			line(mark, s)
		}
	}
	side("- ", a[pre:len(a)-suf])
	side("+ ", b[pre:len(b)-suf])
	end := len(a) - suf
	for _, s := range a[end:min(len(a), end+context)] {
		line("  ", s)
	}
	return sb.String()
}
