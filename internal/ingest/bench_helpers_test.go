package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// benchCorpus returns one client's corpus directory (../shared/corpus/<sub>, or
// $OBSERVER_CORPUS/<sub>) and its entries, and skips the benchmark, saying so, when it is absent.
func benchCorpus(b *testing.B, what, sub string) (string, []os.DirEntry) {
	b.Helper()
	corpus := os.Getenv("OBSERVER_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "..", "shared", "corpus")
	}
	dir := filepath.Join(corpus, sub)
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		b.Skipf("SKIPPED: the %s corpus is absent (%v, %d files); set OBSERVER_CORPUS", what, err, len(entries))
	}
	return dir, entries
}

// benchCopies returns the positive count $env names, else def.
func benchCopies(env string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchScan runs one dry-run cold scan of adapters per iteration (fresh cursors each time, so
// every source is read whole), fails on an error, nothing read or a malformed record, sets the
// bytes per iteration for MB/s, and returns the last scan's summary.
func benchScan(b *testing.B, adapters ...transcript.Adapter) Summary {
	b.Helper()
	var sum Summary
	for b.Loop() {
		cur, err := OpenCursors(filepath.Join(b.TempDir(), "cursors.json"))
		if err != nil {
			b.Fatal(err)
		}
		s := &Scanner{DryRun: true, Cursors: cur, Adapters: adapters}
		sum, err = s.Scan(context.Background())
		cur.Close()
		if err != nil || sum.Lines == 0 || sum.Malformed != 0 || len(sum.Errors) != 0 {
			b.Fatalf("scan: %v, %+v", err, sum)
		}
		b.SetBytes(sum.Bytes)
	}
	return sum
}
