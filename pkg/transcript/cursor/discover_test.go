package cursor

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/observerhq/observer/internal/ingest/ingesttest"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

func TestDefaultDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	want := filepath.Join(home, ".config", "Cursor", "User")
	if runtime.GOOS == "darwin" {
		want = filepath.Join(home, "Library", "Application Support", "Cursor", "User")
	}
	if got := DefaultDirs(); !slices.Equal(got, []string{want}) {
		t.Errorf("dirs %q, want %q", got, want)
	}
	if runtime.GOOS != "darwin" {
		t.Setenv("XDG_CONFIG_HOME", "/xdg")
		if got := DefaultDirs(); !slices.Equal(got, []string{"/xdg/Cursor/User"}) {
			t.Errorf("dirs %q", got)
		}
	}
}

// TestAdapter_Discover lays out a user directory as Cursor does: the global database with its
// WAL files, workspace databases (read only for the composers' folders), and a second user
// directory without a global database.
func TestAdapter_Discover(t *testing.T) {
	base := t.TempDir()
	user, other := filepath.Join(base, "Cursor", "User"), filepath.Join(base, "Other", "User")
	for _, f := range []string{"globalStorage/state.vscdb", "globalStorage/state.vscdb-wal", "globalStorage/storage.json",
		"workspaceStorage/abc/state.vscdb", "workspaceStorage/abc/workspace.json"} {
		p := filepath.Join(user, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(other, "globalStorage"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := New([]string{user, other, filepath.Join(base, "missing"), user})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	want := []transcript.Source{{Client: Client, Path: filepath.Join(user, "globalStorage", "state.vscdb"), Database: true}}
	if !slices.Equal(srcs, want) {
		t.Errorf("sources %+v, want %+v", srcs, want)
	}
}

// TestIngest_Scan drives a user directory through internal/ingest as `observerctl scan` and
// observer-watch do: a scan reads the chats, a scan with no change reads nothing, and a row
// Cursor replaces is read once.
func TestIngest_Scan(t *testing.T) {
	user := t.TempDir()
	db, _ := writeDemo(t, user, "DELETE")
	scan := ingesttest.NewScan(t, New([]string{user}))
	if sum := scan.Run(); sum.Files != 1 || sum.Events != 21 || sum.Malformed != 1 { // 12, and 9 messages
		t.Fatalf("first scan %+v", sum)
	}
	if sum := scan.Run(); sum.Read != 0 || sum.Events != 0 {
		t.Fatalf("second scan %+v", sum)
	}
	put(t, db, "cursorDiskKV", "bubbleId:c1:b8", map[string]any{"type": 1, "bubbleId": "b8", "text": "thanks", "createdAt": iso(c0 + 40000)})
	if sum := scan.Run(); sum.Events != 2 || scan.Published[len(scan.Published)-2].ID != event.ID(Client, "prompt", "c1", "b8") ||
		scan.Last().ID != event.ID(Client, "message", "c1", "b8", "0") {
		t.Fatalf("scan after a bubble %+v", sum)
	}
	if sum := scan.Run(); sum.Events != 0 {
		t.Fatalf("scan after that %+v", sum)
	}
}

func TestToolType(t *testing.T) {
	for name, want := range map[string]event.ActionType{"read_file": event.ActionReadFile, "Read File": event.ActionReadFile,
		"search_replace": event.ActionEditFile, "run_terminal_cmd": event.ActionRunCommand, "grep": event.ActionSearchText,
		"glob_file_search": event.ActionSearchFiles, "list_dir": event.ActionSearchFiles, "todo_write": event.ActionTodoUpdate,
		"mcp_github_create_issue": event.ActionMCPCall, "create_plan": event.ActionUnknown, "": event.ActionUnknown} {
		if got := ToolType(name); got != want {
			t.Errorf("ToolType(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestPriceName(t *testing.T) {
	for in, want := range map[string]string{"claude-4-sonnet": "claude-sonnet-4", "claude-4.5-opus-high-thinking": "claude-opus-4-5",
		"claude-3.7-sonnet": "claude-3-7-sonnet", "claude-3.5-sonnet": "claude-3-5-sonnet", "gpt-5": "gpt-5", "gemini-2.5-pro": "gemini-2.5-pro"} {
		if got := priceName(in); got != want {
			t.Errorf("priceName(%q) = %q, want %q", in, got, want)
		}
	}
}
