package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/continuecli"
)

// BenchmarkReaders_Continue reads Continue CLI sessions laid out as the CLI keeps them (dry run:
// every file a whole JSON document), reporting MB/s beside BenchmarkReaders: copies of the
// reader's own fixture (pkg/transcript/continuecli/testdata/sessions; no corpus holds a Continue
// session), OBSERVER_BENCH_CONTINUE_COPIES of them (default 2,000, ~3.4 MB), each under a fresh
// session id.
func BenchmarkReaders_Continue(b *testing.B) {
	const id = "5b1f0c2e-7d4a-4f61-9a0e-2c8e1d3f4a55" // the fixture's session id
	data, err := os.ReadFile(filepath.Join("..", "..", "pkg", "transcript", "continuecli", "testdata", "sessions", id+".json"))
	if err != nil {
		b.Fatal(err)
	}
	sessions := filepath.Join(b.TempDir(), ".continue", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range benchCopies("OBSERVER_BENCH_CONTINUE_COPIES", 2000) {
		fresh := fmt.Sprintf("%s%04d", id[:len(id)-4], i)
		if err := os.WriteFile(filepath.Join(sessions, fresh+".json"), bytes.ReplaceAll(data, []byte(id), []byte(fresh)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchScan(b, continuecli.New([]string{sessions}))
}
