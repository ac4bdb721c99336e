package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/grokbuild"
)

// BenchmarkReaders_GrokBuild reads Grok Build sessions laid out as Grok Build keeps them (dry
// run), reporting MB/s beside BenchmarkReaders: copies of the reader's fixture session and its
// subagent (pkg/transcript/grokbuild/testdata/sessions; no corpus holds a Grok Build session),
// OBSERVER_BENCH_GROKBUILD_COPIES of them (default 1,000, ~12 MB), each under a session id of
// its own.
func BenchmarkReaders_GrokBuild(b *testing.B) {
	const id = "019f8870-2c4e-7a31-9b5d-0e6f1a2b3c4d"
	const sub = "019f8871-0d1e-7f20-8a3b-4c5d6e7f8091"
	session := filepath.Join("..", "..", "pkg", "transcript", "grokbuild", "testdata", "sessions", "%2Fhome%2Fdev%2Fledger", id)
	main, err := os.ReadFile(filepath.Join(session, "updates.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	child, err := os.ReadFile(filepath.Join(session, "subagents", sub, "updates.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(b.TempDir(), ".grok", "sessions")
	for i := range benchCopies("OBSERVER_BENCH_GROKBUILD_COPIES", 1000) {
		fresh := fmt.Sprintf("019f8870-2c4e-7a31-9b5d-%012d", i)
		dir := filepath.Join(root, "%2Fhome%2Fdev%2Fledger", fresh)
		if err := os.MkdirAll(filepath.Join(dir, "subagents", sub), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "updates.jsonl"), bytes.ReplaceAll(main, []byte(id), []byte(fresh)), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "subagents", sub, "updates.jsonl"), bytes.ReplaceAll(child, []byte(id), []byte(fresh)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchScan(b, grokbuild.New([]string{root}))
}
