package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/cursoragent"
)

// BenchmarkReaders_CursorAgent reads Cursor agent transcripts laid out as Cursor keeps them (dry
// run: JSON lines), reporting MB/s beside BenchmarkReaders: copies of the reader's fixtures
// (pkg/transcript/cursoragent/testdata/cursor; no corpus holds a Cursor transcript), each
// conversation and its subagent's file OBSERVER_BENCH_CURSORAGENT_COPIES times (default 2,000,
// ~8 MB) under fresh ids, read with the editor's conversations included (no chat directories).
func BenchmarkReaders_CursorAgent(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "cursoragent", "testdata", "cursor", "projects")
	type file struct{ slug, id, sub string }
	files := []file{
		{"home-dev-api-server", "3f6c1a52-9a0e-4c1b-8d2e-5b7a9c0d1e2f", ""},
		{"home-dev-webapp", "7b1e2d3c-4a5b-4c6d-8e7f-9a0b1c2d3e4f", ""},
		{"home-dev-webapp", "7b1e2d3c-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "9c2d4e6f-1a3b-4c5d-8e9f-0a1b2c3d4e5f"},
	}
	root := filepath.Join(b.TempDir(), ".cursor", "projects")
	for _, f := range files {
		src := filepath.Join(fixtures, f.slug, "agent-transcripts", f.id, f.id+".jsonl")
		if f.sub != "" {
			src = filepath.Join(fixtures, f.slug, "agent-transcripts", f.id, "subagents", f.sub+".jsonl")
		}
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchCopies("OBSERVER_BENCH_CURSORAGENT_COPIES", 2000) {
			id := fmt.Sprintf("%s%06d", f.id[:len(f.id)-6], i)
			path := filepath.Join(root, f.slug, "agent-transcripts", id, id+".jsonl")
			if f.sub != "" {
				path = filepath.Join(root, f.slug, "agent-transcripts", id, "subagents", f.sub+".jsonl")
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, bytes.Clone(data), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	a := cursoragent.New([]string{root})
	a.IDE = true
	benchScan(b, a)
}
