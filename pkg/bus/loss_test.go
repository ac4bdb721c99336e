package bus

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLossCounter_Add: the counter keeps the total, the last loss's time and why ("disk full" for
// ENOSPC), logs the first loss and then once per LossLogEvery with the count since, and its reading has a Problem
// until LossRecently after the last.
func TestLossCounter_Add(t *testing.T) {
	var logs bytes.Buffer
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	c := &LossCounter{What: "turns", Key: "turns", Msg: "turns lost", Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Now: func() time.Time { return now }}
	full := &NotRecordedError{Lost: []int{1}, Err: fmt.Errorf("spool: write x: %w", syscall.ENOSPC)}
	for range 20 {
		c.Add(2, 4, full)
		now = now.Add(100 * time.Millisecond)
	}
	now = now.Add(LossLogEvery)
	c.Add(1, 1, errors.New("bus: unavailable"))

	l := c.Losses()
	if l.N != 41 || !l.At.Equal(now) || l.Why != "bus: unavailable" {
		t.Errorf("Losses = %+v, want 41 at %v for bus: unavailable", l, now)
	}
	if n := strings.Count(logs.String(), "turns lost"); n != 2 {
		t.Errorf("%d log lines for two bursts, want 2:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "turns=2 turns_total=2") || !strings.Contains(logs.String(), "turns=39 turns_total=41") ||
		!strings.Contains(logs.String(), `why="disk full"`) {
		t.Errorf("log lacks the count, the total or why:\n%s", logs.String())
	}
	if pr := l.Problem(now.Add(LossRecently)); pr != "turns may not have been recorded: bus: unavailable (count in detail)" {
		t.Errorf("Problem = %q", pr)
	}
	if pr := l.Problem(now.Add(LossRecently + time.Second)); pr != "" {
		t.Errorf("Problem after %v = %q, want none", LossRecently, pr)
	}
	if pr := (Losses{}).Problem(now); pr != "" {
		t.Errorf("no loss: Problem = %q", pr)
	}
}
