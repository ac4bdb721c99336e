package ingest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
	"github.com/observerhq/observer/pkg/transcript/gemini"
)

// BenchmarkReaders parses every transcript of a history laid out as the clients do on disk (dry
// run: nothing is published), reporting MB/s. OBSERVER_BENCH_HOME names the history (for example
// the ~300 MB one from `gen_history.py scaled HOME 40`); without it the benchmark is skipped.
func BenchmarkReaders(b *testing.B) {
	home := os.Getenv("OBSERVER_BENCH_HOME")
	if home == "" {
		b.Skip("OBSERVER_BENCH_HOME is not set (build one with ../shared/scripts/gen_history.py scaled HOME 40)")
	}
	for b.Loop() {
		cur, err := OpenCursors(filepath.Join(b.TempDir(), "cursors.json"))
		if err != nil {
			b.Fatal(err)
		}
		s := &Scanner{DryRun: true, Cursors: cur, Adapters: []transcript.Adapter{
			claudecode.New([]string{filepath.Join(home, ".claude", "projects")}), codex.New(filepath.Join(home, ".codex"))}}
		sum, err := s.Scan(context.Background())
		cur.Close()
		if err != nil || sum.Lines == 0 {
			b.Fatalf("scan: %v, %d lines", err, sum.Lines)
		}
		b.SetBytes(sum.Bytes)
	}
}

// BenchmarkReaders_Gemini parses a Gemini CLI history laid out as Gemini CLI keeps it (dry run),
// reporting MB/s beside BenchmarkReaders: OBSERVER_BENCH_GEMINI_COPIES copies (default 100) of the
// corpus's Gemini CLI files (../shared/corpus/gemini-cli, or $OBSERVER_CORPUS/gemini-cli), each
// with fresh session, message and call ids, in one project directory per copy with its
// .project_root. The whole-file .json sessions are read whole, as a cold scan reads them.
func BenchmarkReaders_Gemini(b *testing.B) {
	home := geminiHistory(b)
	benchScan(b, gemini.New([]string{filepath.Join(home, ".gemini")}))
}

// geminiHistory writes the history BenchmarkReaders_Gemini reads and returns its home.
func geminiHistory(b *testing.B) string {
	b.Helper()
	dir, entries := benchCorpus(b, "Gemini CLI", "gemini-cli")
	copies := benchCopies("OBSERVER_BENCH_GEMINI_COPIES", 100)
	idRE := regexp.MustCompile(`"(?:id|sessionId)"\s*:\s*"([^"]+)"`)
	home := b.TempDir()
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		var ids []string
		for _, m := range idRE.FindAllSubmatch(data, -1) {
			ids = append(ids, string(m[1]))
		}
		ext := filepath.Ext(e.Name())
		for i := range copies {
			copyData := data
			for _, id := range ids {
				copyData = bytes.ReplaceAll(copyData, []byte(`"`+id+`"`), []byte(fmt.Sprintf(`"%s-c%d"`, id, i)))
			}
			proj := filepath.Join(home, ".gemini", "tmp", fmt.Sprintf("p%d", i))
			path := filepath.Join(proj, "chats", fmt.Sprintf("session-2026-01-01T00-00-%s%s", strings.TrimSuffix(e.Name(), ext), ext))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, copyData, 0o644); err != nil {
				b.Fatal(err)
			}
			os.WriteFile(filepath.Join(proj, ".project_root"), []byte(fmt.Sprintf("/work/p%d", i)), 0o644)
		}
	}
	return home
}
