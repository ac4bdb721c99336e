package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sparseFile is a file of size bytes (zeros after prefix) that takes no room on disk.
func sparseFile(tb testing.TB, prefix string, size int64) *os.File {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "payload.json")
	if err := os.WriteFile(path, []byte(prefix), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// A payload read from a file (stdin redirected from one, not a pipe left open) that is larger than
// the limit is reported as too large, with its size and the limit's setting, and is not read: it is
// never "stdin still open", however short the wait.
func TestReadPayload_FileOverLimit(t *testing.T) {
	const size = 300_000_000
	for _, limit := range []int64{1 << 20, 256 << 20} {
		_, err := readPayload(sparseFile(t, `{"hook_event_name":"Stop","pad":"`, size), limit, 10*time.Millisecond)
		if err == nil {
			t.Fatalf("limit %d: a %d-byte payload was accepted", limit, size)
		}
		msg := err.Error()
		if strings.Contains(msg, "still open") || !strings.Contains(msg, "300000000 bytes") ||
			!strings.Contains(msg, "[hook] max_payload_bytes") || !strings.Contains(msg, " "+strconv.FormatInt(limit, 10)+" bytes") {
			t.Errorf("limit %d: %q does not say the payload of %d bytes is over the limit", limit, msg, size)
		}
	}

	// A file within the limit is read whole, whatever the wait: a file has an end.
	payload := `{"session_id":"s1","hook_event_name":"Stop","cwd":"/tmp"}`
	f := sparseFile(t, payload, int64(len(payload)))
	data, err := readPayload(f, 1<<20, 10*time.Millisecond)
	if err != nil || string(data) != payload {
		t.Fatalf("file within the limit: %q, %v", data, err)
	}
}

// The same through the command: `observerctl hook < big.json` exits 65 saying the payload's size
// and the limit.
func TestHook_FileOverLimit(t *testing.T) {
	obs := t.TempDir()
	t.Setenv("OBSERVER_HOME", obs)
	t.Setenv("OBSERVER_HOOK_MAX_PAYLOAD_BYTES", "1024")
	t.Setenv("OBSERVER_HOOK_STDIN_TIMEOUT", "10ms")
	var stdout, stderr bytes.Buffer
	f := sparseFile(t, `{"hook_event_name":"Stop","pad":"`, 300_000_000)
	code := Run(context.Background(), []string{"observerctl", "hook"}, f, &stdout, &stderr)
	if errOut := stderr.String(); code != ExitBadInput || strings.Contains(errOut, "still open") ||
		!strings.Contains(errOut, "300000000 bytes") || !strings.Contains(errOut, "1024 bytes ([hook] max_payload_bytes)") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	if n := len(spooled(t, obs)); n != 0 {
		t.Errorf("%d events spooled", n)
	}
}
