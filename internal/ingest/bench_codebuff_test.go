package ingest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/transcript/codebuff"
)

// BenchmarkReaders_Codebuff reads Codebuff chats laid out as the CLI keeps them (dry run: every
// chat-messages.json a whole JSON document, its run-state.json beside it), reporting MB/s beside
// BenchmarkReaders: copies of the reader's fixtures (pkg/transcript/codebuff/testdata/manicode;
// no corpus holds a Codebuff chat), OBSERVER_BENCH_CODEBUFF_COPIES of each (default 1,000, ~9 MB),
// each in a chat directory of its own (a fresh chat id).
func BenchmarkReaders_Codebuff(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "codebuff", "testdata", "manicode", "projects")
	chats := []struct{ project, id string }{
		{"webapp", "2026-02-03T09-15-00.000Z"},
		{"cli-tool", "2026-02-04T14-00-00.000Z"},
	}
	root := filepath.Join(b.TempDir(), ".config", "manicode")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for c, chat := range chats {
		src := filepath.Join(fixtures, chat.project, "chats", chat.id)
		files := map[string][]byte{}
		for _, name := range []string{codebuff.MessagesFile, codebuff.RunStateFile} {
			data, err := os.ReadFile(filepath.Join(src, name))
			if err == nil {
				files[name] = data
			} else if !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
		for i := range benchCopies("OBSERVER_BENCH_CODEBUFF_COPIES", 1000) {
			id := base.Add(time.Duration(c)*time.Hour*24*365 + time.Duration(i)*time.Minute).Format("2006-01-02T15-04-05.000Z")
			dir := filepath.Join(root, "projects", chat.project, "chats", id)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	benchScan(b, codebuff.New([]string{root}))
}
