package aider

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/internal/ingest/ingesttest"
	"github.com/observerhq/observer/pkg/transcript"
)

// TestAdapter_Discover lays out repositories as aider leaves them: the two files at the root of
// one, only an input history in another (chat history turned off), none in a third, and a chat
// history at a path of the user's choosing.
func TestAdapter_Discover(t *testing.T) {
	base := t.TempDir()
	withBoth, inputOnly, none := filepath.Join(base, "app"), filepath.Join(base, "lib"), filepath.Join(base, "empty")
	custom := filepath.Join(base, "logs", "aider-chat.md")
	for _, f := range []string{filepath.Join(withBoth, ChatHistoryFile), filepath.Join(withBoth, InputHistoryFile),
		filepath.Join(inputOnly, InputHistoryFile), filepath.Join(none, "README.md"), custom} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := New([]string{withBoth, inputOnly, none, filepath.Join(base, "missing"), withBoth + "/", ""})
	a.Files = []string{custom, filepath.Join(base, "logs", "missing.md")}
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	want := []transcript.Source{
		{Client: Client, Path: filepath.Join(withBoth, ChatHistoryFile)},
		{Client: Client, Path: custom},
	}
	if !slices.Equal(srcs, want) {
		t.Errorf("sources %+v\nwant %+v", srcs, want)
	}
	if got := a.WatchDirs(); !slices.Contains(got, filepath.Join(base, "logs")) || !slices.Contains(got, withBoth) {
		t.Errorf("watch dirs %q", got)
	}
}

func TestDefaultFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvChatHistoryFile, "")
	if got := DefaultFiles(); got != nil {
		t.Errorf("files %q", got)
	}
	t.Setenv(EnvChatHistoryFile, "~/aider/history.md")
	if got := DefaultFiles(); !slices.Equal(got, []string{filepath.Join(home, "aider", "history.md")}) {
		t.Errorf("files %q", got)
	}
	t.Setenv(EnvChatHistoryFile, "relative.md") // relative to wherever aider ran: unknown here
	if got := DefaultFiles(); got != nil {
		t.Errorf("files %q", got)
	}
}

// TestIngest_Scan drives a repository through internal/ingest as `observerctl scan` and
// observer-watch do: the file is read, a scan with no change reads nothing, and what aider
// appends is read once, dated by the input history appended with it.
func TestIngest_Scan(t *testing.T) {
	path := copyRepo(t)
	scan := ingesttest.NewScan(t, New([]string{filepath.Dir(path)}))
	sum := scan.Run()
	if sum.Files != 1 || sum.Events != 26 || sum.Malformed != 0 { // 17, and 9 messages
		t.Fatalf("first scan %+v", sum)
	}
	if sum := scan.Run(); sum.Read != 0 || sum.Events != 0 {
		t.Fatalf("second scan %+v", sum)
	}
	appendTo(t, filepath.Join(filepath.Dir(path), InputHistoryFile), "\n# 2026-01-05 14:40:00.000000\n+and goodbye\n")
	appendTo(t, path, "\n#### and goodbye  \n\nBye.\n\n> Tokens: 1.4k sent, 3 received.  \n")
	if sum := scan.Run(); sum.Events != 4 { // the prompt, its message, the reply's, the usage
		t.Fatalf("scan after an append %+v", sum)
	}
	if e := scan.Published[len(scan.Published)-4]; e.Action == nil || e.Action.Target != "and goodbye" || !e.Time.Equal(local("2026-01-05 14:40:00")) {
		t.Errorf("appended prompt %+v at %v", e.Action, e.Time)
	}
	if sum := scan.Run(); sum.Events != 0 {
		t.Fatalf("scan after that %+v", sum)
	}
}

func appendTo(tb testing.TB, path, s string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		tb.Fatal(err)
	}
}
