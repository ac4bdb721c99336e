package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/trae"
)

// BenchmarkReaders_Trae reads Trae's records as a cold scan does (dry run), reporting MB/s beside
// BenchmarkReaders: OBSERVER_BENCH_TRAE_COPIES copies (default 1,000, ~13 MB) of the reader's
// fixtures (pkg/transcript/trae/testdata; no corpus holds Trae's files), laid out in one root
// that is both a TRAE CLI home (sessions/YYYY/MM/DD/rollout-*.jsonl, each copy under a fresh
// uuid) and a directory of trae-agent trajectories (trajectories/trajectory_*.json, whole JSON
// documents, each copy under a fresh name).
func BenchmarkReaders_Trae(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "trae", "testdata")
	const uuid = "0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	read := func(parts ...string) []byte {
		data, err := os.ReadFile(filepath.Join(append([]string{fixtures}, parts...)...))
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	rollout := read("cli", "sessions", "2026", "06", "09", "rollout-2026-06-09T11-00-00-"+uuid+".jsonl")
	docs := map[string][]byte{}
	for _, name := range []string{"trajectory_20260609_101500", "trajectory_20260609_120000"} {
		docs[name] = read("trajectories", name+".json")
	}
	root := filepath.Join(b.TempDir(), "trae")
	sessions := filepath.Join(root, "sessions", "2026", "06", "09")
	trajectories := filepath.Join(root, "trajectories")
	for _, d := range []string{sessions, trajectories} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range benchCopies("OBSERVER_BENCH_TRAE_COPIES", 1000) {
		fresh := fmt.Sprintf("%s%012x", uuid[:24], i)
		name := filepath.Join(sessions, "rollout-2026-06-09T11-00-00-"+fresh+".jsonl")
		if err := os.WriteFile(name, bytes.ReplaceAll(rollout, []byte(uuid), []byte(fresh)), 0o644); err != nil {
			b.Fatal(err)
		}
		for base, data := range docs {
			if err := os.WriteFile(filepath.Join(trajectories, fmt.Sprintf("%s_%05d.json", base, i)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, trae.New([]string{root}))
}
