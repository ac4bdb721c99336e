package logging

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// A component's log (JSON) says "1.5s", not 1500000000.
func TestNew_DurationsAsText(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, "info").Info("restarting", "in", 1500*time.Millisecond, "waited", 250*time.Microsecond, "ranFor", 3*time.Second+123456789)
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("log line %q: %v", buf.Bytes(), err)
	}
	for k, want := range map[string]string{"in": "1.5s", "waited": "250µs", "ranFor": "3.123s"} {
		if m[k] != want {
			t.Errorf("%s = %v, want %q", k, m[k], want)
		}
	}
}

func TestNew_Level(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, "warn")
	l.Info("quiet")
	l.Warn("loud")
	if bytes.Contains(buf.Bytes(), []byte("quiet")) || !bytes.Contains(buf.Bytes(), []byte("loud")) {
		t.Errorf("level warn wrote %q", buf.String())
	}
}
