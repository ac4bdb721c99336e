package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/antigravity"
)

// BenchmarkReaders_Antigravity reads Antigravity brain transcripts laid out as Antigravity keeps
// them (dry run), reporting MB/s beside BenchmarkReaders: copies of the reader's fixtures
// (pkg/transcript/antigravity/testdata; no corpus holds an Antigravity transcript),
// OBSERVER_BENCH_ANTIGRAVITY_COPIES of each (default 1,000, ~4 MB), each under a conversation
// uuid of its own, with the CLI fixture's history.jsonl beside them and a prompt row in it for
// every copy (the log the adapter reads once for all conversations, not once for each).
func BenchmarkReaders_Antigravity(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "antigravity", "testdata")
	convs := []struct{ root, id string }{
		{"antigravity-cli", "6f1c2a9e-3b4d-4e8f-9a17-2c5d8e0b7f41"},
		{"antigravity", "0b3d7c55-91e2-4a60-8d3c-5e6f7a8b9c0d"},
	}
	root := filepath.Join(b.TempDir(), ".gemini", "antigravity-cli")
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	hist, err := os.ReadFile(filepath.Join(fixtures, "antigravity-cli", "history.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	for ci, c := range convs {
		data, err := os.ReadFile(antigravity.TranscriptPath(filepath.Join(fixtures, c.root), c.id))
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchCopies("OBSERVER_BENCH_ANTIGRAVITY_COPIES", 1000) {
			id := fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", ci, i)
			hist = fmt.Appendf(hist, `{"display":"why does the parser test fail on windows paths?","timestamp":%d,"workspace":"/home/dev/pathkit","conversationId":%q}`+"\n",
				1779954120000+int64(i), id)
			path := antigravity.TranscriptPath(root, id)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, "history.jsonl"), hist, 0o644); err != nil {
		b.Fatal(err)
	}
	benchScan(b, antigravity.New([]string{root}))
}
