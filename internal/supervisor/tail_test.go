package supervisor_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/supervisor"
)

func TestTailFile(t *testing.T) {
	// numbered returns lines from..to-1 as "line 00042\n" (11 bytes each).
	numbered := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "line %05d\n", i)
		}
		return b.String()
	}
	big := numbered(0, 10000) // 110,000 bytes: two 64 KiB chunks
	tests := []struct {
		name    string
		content string
		n       int
		want    string
	}{
		{"TrailingNewline", "a\nb\nc\n", 2, "b\nc\n"},
		{"NoTrailingNewline", "a\nb\nc", 2, "b\nc"},
		{"NoTrailingNewlineOneLine", "a\nb\nc", 1, "c"},
		{"ExactlyN", "a\nb\n", 2, "a\nb\n"},
		{"NMoreThanLines", "a\nb\n", 10, "a\nb\n"},
		{"NMoreThanLinesNoTrailingNewline", "a\nb", 10, "a\nb"},
		{"SingleUnterminatedLine", "only", 1, "only"},
		{"EmptyLines", "a\n\n\n", 2, "\n\n"},
		{"Empty", "", 5, ""},
		{"Zero", "a\nb\n", 0, ""},
		{"ZeroNoTrailingNewline", "a\nb", 0, ""},
		{"LargeFileFewLines", big, 3, numbered(9997, 10000)},
		// 7000 lines are 77,000 bytes: they start in the first 64 KiB chunk read from the end.
		{"LargeFileAcrossChunks", big, 7000, numbered(3000, 10000)},
		{"LargeFileAll", big, 20000, big},
		{"LargeFileNoTrailingNewline", big + "tail", 2, "line 09999\ntail"},
		// The last 64 KiB start 2 bytes into line 4042: 5957 whole lines follow it. The partial
		// line must not show, and one line more needs the chunk before.
		{"LargeFileChunkStartsMidLine", big, 5957, numbered(4043, 10000)},
		{"LargeFileLineAcrossChunks", big, 5958, numbered(4042, 10000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			size, err := supervisor.TailFile(&out, path, tt.n)
			if err != nil {
				t.Fatalf("TailFile: %v", err)
			}
			if size != int64(len(tt.content)) {
				t.Errorf("TailFile returned offset %d, want the file size %d", size, len(tt.content))
			}
			if got := out.String(); got != tt.want {
				t.Errorf("TailFile(n=%d) = %q, want %q", tt.n, abbrev(got), abbrev(tt.want))
			}
		})
	}
	t.Run("Missing", func(t *testing.T) {
		_, err := supervisor.TailFile(&bytes.Buffer{}, filepath.Join(t.TempDir(), "nope"), 5)
		if !os.IsNotExist(err) {
			t.Errorf("TailFile on a missing file = %v, want a not-exist error", err)
		}
	})
}

func abbrev(s string) string {
	if len(s) <= 80 {
		return s
	}
	return fmt.Sprintf("%s...(%d bytes)...%s", s[:30], len(s), s[len(s)-30:])
}
