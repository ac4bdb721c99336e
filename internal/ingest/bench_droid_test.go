package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/droid"
)

// BenchmarkReaders_Droid reads Factory Droid's sessions and log laid out as Droid keeps them (dry
// run): copies of the reader's fixtures (pkg/transcript/droid/testdata; no corpus holds Droid's
// files), OBSERVER_BENCH_DROID_COPIES of each session (default 1,000), each under a fresh session
// id, and one log holding every copy's usage lines (~4 MB in all).
func BenchmarkReaders_Droid(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "droid", "testdata", "home", ".factory")
	ids := []string{"7d0c2a51-3e4f-4a8b-9c1d-2e3f4a5b6c7d", "5e6f7a8b-1c2d-4e3f-8a9b-0c1d2e3f4a5b"}
	home := filepath.Join(b.TempDir(), ".factory")
	sessions := filepath.Join(home, "sessions", "-home-ann-shop")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "logs"), 0o755); err != nil {
		b.Fatal(err)
	}
	logData, err := os.ReadFile(filepath.Join(fixtures, "logs", "droid-log-single.log"))
	if err != nil {
		b.Fatal(err)
	}
	var log bytes.Buffer
	for i := range benchCopies("OBSERVER_BENCH_DROID_COPIES", 1000) {
		lines := logData
		for _, id := range ids {
			data, err := os.ReadFile(filepath.Join(fixtures, "sessions", "-home-ann-shop", id+".jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			fresh := fmt.Sprintf("%s%04d", id[:len(id)-4], i)
			if err := os.WriteFile(filepath.Join(sessions, fresh+".jsonl"), bytes.ReplaceAll(data, []byte(id), []byte(fresh)), 0o644); err != nil {
				b.Fatal(err)
			}
			lines = bytes.ReplaceAll(lines, []byte(id), []byte(fresh))
		}
		log.Write(lines)
	}
	if err := os.WriteFile(filepath.Join(home, "logs", "droid-log-single.log"), log.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	benchScan(b, droid.New([]string{home}))
}
