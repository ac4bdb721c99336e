package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/openhands"
)

// BenchmarkReaders_OpenHands reads OpenHands CLI conversations laid out as the CLI keeps them (dry
// run: every events directory polled from its first file, every base_state.json read whole),
// reporting MB/s beside BenchmarkReaders: copies of the reader's fixture conversation
// (pkg/transcript/openhands/testdata/conversations; no corpus holds one),
// OBSERVER_BENCH_OPENHANDS_COPIES of it (default 500: 8,000 event files), each under a
// conversation id of its own.
func BenchmarkReaders_OpenHands(b *testing.B) {
	const convID = "3f8a2c71d4e94b1a9c0e5f6a7b8c9d01"
	src := filepath.Join("..", "..", "pkg", "transcript", "openhands", "testdata", "conversations", convID)
	ents, err := os.ReadDir(filepath.Join(src, openhands.EventsDirName))
	if err != nil {
		b.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range ents {
		if files[e.Name()], err = os.ReadFile(filepath.Join(src, openhands.EventsDirName, e.Name())); err != nil {
			b.Fatal(err)
		}
	}
	base, err := os.ReadFile(filepath.Join(src, openhands.BaseStateName))
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(b.TempDir(), ".openhands", "conversations")
	for i := range benchCopies("OBSERVER_BENCH_OPENHANDS_COPIES", 500) {
		conv := filepath.Join(root, fmt.Sprintf("%s%06d", convID[:26], i))
		if err := os.MkdirAll(filepath.Join(conv, openhands.EventsDirName), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(conv, openhands.BaseStateName), base, 0o644); err != nil {
			b.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(conv, openhands.EventsDirName, name), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, openhands.New([]string{root}))
}
