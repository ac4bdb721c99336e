package logging

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// /dev/null is a character device but not a terminal: a status line or a service run with it as
// stdin or stdout must not be taken for a terminal.
func TestIsTerminal_DevNull(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("/dev/null taken for a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(r) {
		t.Error("a pipe taken for a terminal")
	}
}

func TestLineHandler(t *testing.T) {
	var b strings.Builder
	l := slog.New(newLineHandler(&b, slog.LevelInfo)).With("component", "writer")
	l.Info("component started", "pid", 42, "took", 1500*time.Millisecond)
	l.Warn("config.toml not applied", "err", `line 3: "x" is bad`)
	l.WithGroup("bus").Debug("hidden")
	l.WithGroup("bus").Info("connected", "url", "nats://127.0.0.1:4247")
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		` component started  component=writer pid=42 took=1.5s`,
		` WARN config.toml not applied  component=writer err="line 3: \"x\" is bad"`,
		` connected  component=writer bus.url=nats://127.0.0.1:4247`,
	}
	if len(got) != len(want) {
		t.Fatalf("lines:\n%s", b.String())
	}
	for i := range want {
		if len(got[i]) < 8 || got[i][8:] != want[i] || got[i][2] != ':' {
			t.Errorf("line %d: %q, want HH:MM:SS%q", i, got[i], want[i])
		}
	}
}
