package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/auggie"
)

// BenchmarkReaders_Auggie reads Auggie's sessions laid out as Auggie keeps them (dry run: every
// file a whole JSON document): copies of the reader's fixtures (pkg/transcript/auggie/testdata/
// sessions; no corpus holds Auggie's files), OBSERVER_BENCH_AUGGIE_COPIES of the session and its
// sub-agent's session (default 1,000, ~7 MB), each pair under fresh session ids.
func BenchmarkReaders_Auggie(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "auggie", "testdata", "sessions")
	ids := []string{"b6f2a9e4-3c1d-4e5f-8a7b-9c0d1e2f3a4b", "e0c4d2b1-7a6f-4e3d-b2c1-0f9e8d7c6b5a"}
	sessions := filepath.Join(b.TempDir(), ".augment", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		b.Fatal(err)
	}
	var docs [][]byte
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(fixtures, id+".json"))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, data)
	}
	for i := range benchCopies("OBSERVER_BENCH_AUGGIE_COPIES", 1000) {
		for j, id := range ids {
			data := docs[j]
			for _, other := range ids { // the sub-agent names its parent: rename both alike
				data = bytes.ReplaceAll(data, []byte(other), []byte(fmt.Sprintf("%s%04d", other[:len(other)-4], i)))
			}
			fresh := fmt.Sprintf("%s%04d", id[:len(id)-4], i)
			if err := os.WriteFile(filepath.Join(sessions, fresh+".json"), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, auggie.New([]string{sessions}))
}
