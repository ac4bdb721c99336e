package gemini

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// BenchmarkParser parses every Gemini CLI file of the corpus from a fresh parser, as a cold scan
// does (a .jsonl by line, a .json whole), without the file system: the parser's own MB/s.
// internal/ingest's BenchmarkReaders_Gemini measures a whole cold scan.
func BenchmarkParser(b *testing.B) {
	names := corpusNames(b)
	type file struct {
		src  []byte
		recs [][]byte
		doc  bool
		path string
	}
	var files []file
	var size int64
	for _, n := range names {
		path := filepath.Join(corpusDir(), n)
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		src := srcOf(path)
		f := file{doc: src.Document, path: path}
		if src.Document {
			f.recs = [][]byte{data}
		} else {
			f.recs = transcripttest.ReadLines(b, path)
		}
		files = append(files, f)
		size += int64(len(data))
	}
	a := New(nil)
	b.SetBytes(size)
	for b.Loop() {
		for _, f := range files {
			p, err := a.newParser(srcOf(f.path), nil)
			if err != nil {
				b.Fatal(err)
			}
			p.triedDisk, p.st.Sure = true, true // the project search is measured by the scan benchmark
			for i, r := range f.recs {
				p.Record(int64(i), r)
			}
		}
	}
}
