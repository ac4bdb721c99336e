package pi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// BenchmarkParser parses every Pi file of the corpus (3.3 MB) from a fresh parser, as a cold scan
// does, without the file system: the parser's own MB/s. internal/ingest's BenchmarkReaders_Pi
// measures a whole cold scan of many copies.
func BenchmarkParser(b *testing.B) {
	names := corpusNames(b)
	type file struct {
		path  string
		lines [][]byte
	}
	var files []file
	var size int64
	for _, n := range names {
		path := filepath.Join(corpusDir(), n)
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, file{path, transcripttest.ReadLines(b, path)})
		size += fi.Size()
	}
	a := New(nil)
	b.SetBytes(size)
	for b.Loop() {
		for _, f := range files {
			p, err := a.newParser(srcOf(f.path), nil)
			if err != nil {
				b.Fatal(err)
			}
			for i, l := range f.lines {
				p.Record(int64(i), l)
			}
		}
	}
}
