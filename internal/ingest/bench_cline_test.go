package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/cline"
)

// BenchmarkReaders_Cline reads Cline records laid out as the clients keep them (dry run: every
// file a whole JSON document), reporting MB/s beside BenchmarkReaders: OBSERVER_BENCH_CLINE_COPIES
// copies (default 400: 1,200 documents, ~5.6 MB) of the corpus's Cline CLI session (../shared/corpus/cline, or
// $OBSERVER_CORPUS/cline), each a session directory of its own (<id>/<id>.messages.json, the
// source, beside its <id>.json metadata) under a fresh session id, and as many copies of each
// VS Code task fixture (pkg/transcript/cline/testdata/vscode: Cline and Roo Code), each a task
// directory of its own under a fresh task id.
func BenchmarkReaders_Cline(b *testing.B) {
	sessions, globalStorage := clineHistory(b)
	benchScan(b, cline.New([]string{sessions}),
		cline.NewVSCode(cline.ClientVSCode, []string{globalStorage}), cline.NewVSCode(cline.ClientRoo, []string{globalStorage}))
}

// clineHistory writes the records BenchmarkReaders_Cline reads and returns the CLI's sessions
// directory and the globalStorage directory.
func clineHistory(b *testing.B) (sessions, globalStorage string) {
	b.Helper()
	dir, _ := benchCorpus(b, "Cline", "cline")
	copies := benchCopies("OBSERVER_BENCH_CLINE_COPIES", 400)
	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Skipf("SKIPPED: %v; set OBSERVER_CORPUS", err)
		}
		return data
	}
	write := func(path string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	root := b.TempDir()
	sessions = filepath.Join(root, ".cline", "data", "sessions")
	msgs := read(filepath.Join(dir, "observer__sample-session-messages.json"))
	meta := read(filepath.Join(dir, "observer__sample-session-meta.json"))
	const id = "1780701711502_0v8d2" // the corpus session's id, in both files
	for i := range copies {
		fresh := fmt.Sprintf("%d_b%04d", 1780701711502+int64(i), i)
		write(filepath.Join(sessions, fresh, fresh+".messages.json"), bytes.ReplaceAll(msgs, []byte(id), []byte(fresh)))
		write(filepath.Join(sessions, fresh, fresh+".json"), bytes.ReplaceAll(meta, []byte(id), []byte(fresh)))
	}
	globalStorage = filepath.Join(root, ".config", "Code", "User", "globalStorage")
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "cline", "testdata", "vscode")
	for _, ext := range []string{cline.ExtensionCline, cline.ExtensionRoo} {
		tasks, err := os.ReadDir(filepath.Join(fixtures, ext, "tasks"))
		if err != nil || len(tasks) == 0 {
			b.Fatalf("the VS Code fixtures of %s: %v", ext, err)
		}
		for _, t := range tasks {
			data := read(filepath.Join(fixtures, ext, "tasks", t.Name(), "ui_messages.json"))
			for i := range copies {
				// A fresh task id of the fixture's shape: Cline's are unix milliseconds, Roo's UUIDs.
				fresh := fmt.Sprintf("%s%04d", strings.TrimRight(t.Name()[:len(t.Name())-4], "-"), i)
				write(filepath.Join(globalStorage, ext, "tasks", fresh, "ui_messages.json"), data)
			}
		}
	}
	return sessions, globalStorage
}
