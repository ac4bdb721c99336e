package goose

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/observerhq/observer/internal/ingest/ingesttest"
	"github.com/observerhq/observer/pkg/transcript"
)

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvPathRoot, "")
	t.Setenv("XDG_DATA_HOME", "")
	want := []string{filepath.Join(home, ".local", "share", "goose", "sessions")}
	if runtime.GOOS == "darwin" {
		want = append(want, filepath.Join(home, "Library", "Application Support", "Block", "goose", "sessions"))
	}
	if got := DefaultRoots(); !slices.Equal(got, want) {
		t.Errorf("roots %q, want %q", got, want)
	}
	t.Setenv("XDG_DATA_HOME", "/xdg/data")
	t.Setenv(EnvPathRoot, "/srv/goose-root")
	if got := DefaultRoots(); len(got) < 2 || got[0] != "/srv/goose-root/data/sessions" || got[1] != "/xdg/data/goose/sessions" {
		t.Errorf("roots %q: want GOOSE_PATH_ROOT's first, then XDG_DATA_HOME's", got)
	}
	// goose ignores a relative GOOSE_PATH_ROOT or XDG_DATA_HOME.
	t.Setenv(EnvPathRoot, "rel")
	t.Setenv("XDG_DATA_HOME", "rel")
	if got := DefaultRoots(); got[0] != filepath.Join(home, ".local", "share", "goose", "sessions") {
		t.Errorf("roots %q", got)
	}
}

// TestAdapter_Discover lays a data directory out as goose does: sessions.db with its -wal and -shm
// files, older <id>.jsonl files, and files of other kinds.
func TestAdapter_Discover(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "goose", "sessions")
	if err := os.MkdirAll(filepath.Join(dir, "backups"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{DBName, DBName + "-wal", DBName + "-shm", "20250301_120000.jsonl", "20250302_090000.jsonl",
		"notes.txt", ".jsonl", "backups/sessions_backup_1.db"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "x.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := New([]string{dir, filepath.Join(t.TempDir(), "missing")})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	want := []transcript.Source{
		{Client: Client, Path: filepath.Join(dir, "20250301_120000.jsonl"), SessionID: "20250301_120000", Document: true},
		{Client: Client, Path: filepath.Join(dir, "20250302_090000.jsonl"), SessionID: "20250302_090000", Document: true},
		{Client: Client, Path: filepath.Join(dir, DBName), Database: true},
	}
	if !slices.Equal(srcs, want) {
		t.Errorf("sources %+v\nwant %+v", srcs, want)
	}
}

// TestIngest_Scan drives a goose directory through internal/ingest as `observerctl scan` and
// observer-watch do: the database and a JSONL file are read, a scan with no change reads
// nothing, and rows goose adds are read once.
func TestIngest_Scan(t *testing.T) {
	dir := t.TempDir()
	db := writeDemo(t, filepath.Join(dir, DBName))
	writeFile(t, filepath.Join(dir, "20260105_1.jsonl"), legacyLines)
	scan := ingesttest.NewScan(t, New([]string{dir}))
	if sum := scan.Run(); sum.Files != 2 || sum.Events == 0 || sum.Malformed != 0 {
		t.Fatalf("first scan %+v", sum)
	}
	if sum := scan.Run(); sum.Read != 0 || sum.Events != 0 {
		t.Fatalf("second scan %+v", sum)
	}
	execT(t, db, insMessage, "msg_z", "20260105_1", "user", `[{"type":"text","text":"one more"}]`, t0+500, visibleMeta)
	if sum := scan.Run(); sum.Events != 2 { // the prompt and its message
		t.Fatalf("scan after a message %+v", sum)
	}
	if sum := scan.Run(); sum.Events != 0 {
		t.Fatalf("scan after that %+v", sum)
	}
}
