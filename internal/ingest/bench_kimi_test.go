package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/kimi"
)

// BenchmarkReaders_Kimi reads a Kimi CLI share directory laid out as Kimi CLI keeps it (dry
// run: every wire.jsonl read line by line), reporting MB/s beside BenchmarkReaders: copies of
// the reader's fixtures (pkg/transcript/kimi/testdata/share; no corpus holds a Kimi CLI session),
// OBSERVER_BENCH_KIMI_COPIES of the session (default 1,000, ~9 MB), each under a session id of
// its own, with its subagent's wire.
func BenchmarkReaders_Kimi(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "kimi", "testdata", "share")
	const hash, session = "c4cb87f347809193df45a28061551a36", "3f0c2a6e-8d41-4b7a-9c15-2e6f1d0b7a93"
	share := filepath.Join(b.TempDir(), ".kimi")
	files := map[string][]byte{}
	for _, rel := range []string{"kimi.json", "config.toml", "wire.jsonl", filepath.Join("subagents", "a1b2c3d4", "wire.jsonl")} {
		src := filepath.Join(fixtures, rel)
		if filepath.Base(rel) == "wire.jsonl" {
			src = filepath.Join(fixtures, "sessions", hash, session, rel)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		files[rel] = data
	}
	for _, rel := range []string{"kimi.json", "config.toml"} {
		if err := os.MkdirAll(share, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(share, rel), files[rel], 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range benchCopies("OBSERVER_BENCH_KIMI_COPIES", 1000) {
		dir := filepath.Join(share, "sessions", hash, fmt.Sprintf("%s%04d", session[:len(session)-4], i))
		for _, rel := range []string{"wire.jsonl", filepath.Join("subagents", "a1b2c3d4", "wire.jsonl")} {
			path := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, files[rel], 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, kimi.New([]string{filepath.Join(share, "sessions")}))
}
