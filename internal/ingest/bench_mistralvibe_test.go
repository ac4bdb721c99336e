package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/mistralvibe"
)

// BenchmarkReaders_MistralVibe reads Mistral Vibe session logs laid out as Vibe keeps them (dry
// run: every session a whole document, a meta.json read with the messages.jsonl beside it, or a
// Vibe 1 file), reporting MB/s beside BenchmarkReaders: copies of the reader's fixtures
// (pkg/transcript/mistralvibe/testdata/vibe/logs/session; no corpus holds a Vibe session),
// OBSERVER_BENCH_MISTRALVIBE_COPIES of each (default 1,000, ~20 MB on disk, ~13 MB of documents
// read), each under session ids of its own (a continued session and a fork still naming their
// copy's parent).
func BenchmarkReaders_MistralVibe(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "mistralvibe", "testdata", "vibe", "logs", "session")
	entries, err := os.ReadDir(fixtures)
	if err != nil {
		b.Fatal(err)
	}
	// The fixtures' sessions are named by the first 8 characters of their ids.
	prefixes := map[string]byte{"019c1a2b": 'm', "019c1a3f": 'c', "019c1a5e": 'f', "9a8b7c6d": 'l'}
	root := filepath.Join(b.TempDir(), ".vibe", "logs", "session")
	for i := range benchCopies("OBSERVER_BENCH_MISTRALVIBE_COPIES", 1000) {
		rename := func(data []byte) []byte {
			for old, c := range prefixes {
				data = bytes.ReplaceAll(data, []byte(old), []byte(fmt.Sprintf("%c%07d", c, i)))
			}
			return data
		}
		for _, e := range entries {
			src := filepath.Join(fixtures, e.Name())
			dst := filepath.Join(root, string(rename([]byte(e.Name()))))
			files := []string{""}
			if e.IsDir() {
				files = []string{"meta.json", "messages.jsonl"}
			}
			for _, f := range files {
				data, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					b.Fatal(err)
				}
				path := filepath.Join(dst, f)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(path, rename(data), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if n, _ := os.ReadDir(root); len(n) == 0 || !strings.HasPrefix(n[0].Name(), "session_") {
		b.Fatalf("no sessions written under %s", root)
	}
	benchScan(b, mistralvibe.New([]string{root}))
}
