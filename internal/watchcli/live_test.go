package watchcli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/freshness"
	"github.com/observerhq/observer/internal/lifecycle"
	"github.com/observerhq/observer/pkg/event"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func hookEvent(client, sid, transcript string) event.Event {
	return event.Event{ID: event.RandomID(), Kind: event.KindHook, Time: time.Now(), Client: client, SessionID: sid,
		V: event.SchemaVersion, Hook: &event.Hook{Event: "SessionStart", TranscriptPath: transcript}}
}

func TestHooked_FollowsWhatNoReaderReads(t *testing.T) {
	dir := t.TempDir()
	known := filepath.Join(dir, "home", ".claude", "projects")
	state := filepath.Join(dir, "watch", "hooked.json")
	h := newHooked(state, []string{known}, quiet)

	h.add(hookEvent("claude-code", "s0", filepath.Join(known, "p", "s0.jsonl"))) // read already
	h.add(hookEvent("claude-code", "s1", filepath.Join(dir, "cfg", "projects", "p", "s1.jsonl")))
	h.add(hookEvent("claude-code", "s2", filepath.Join(dir, "cfg", "projects", "q", "s2.jsonl"))) // same root
	h.add(hookEvent("codex", "c1", filepath.Join(dir, "cx", "sessions", "2026", "03", "01", "rollout-x.jsonl")))
	h.add(hookEvent("claude-code", "s3", filepath.Join(dir, "odd", "s3.jsonl")))
	h.add(hookEvent("claude-code", "s4", "relative/s4.jsonl"))
	h.add(hookEvent("claude-code", "s5", filepath.Join(dir, "odd", "notes.txt")))

	check := func(h *hooked) {
		t.Helper()
		l := h.list
		if len(l.ClaudeRoots) != 1 || l.ClaudeRoots[0] != filepath.Join(dir, "cfg", "projects") {
			t.Errorf("Claude roots %v, want the one projects directory", l.ClaudeRoots)
		}
		if len(l.CodexHomes) != 1 || l.CodexHomes[0] != filepath.Join(dir, "cx") {
			t.Errorf("Codex homes %v", l.CodexHomes)
		}
		if len(l.Files) != 1 || l.Files[0].Path != filepath.Join(dir, "odd", "s3.jsonl") || l.Files[0].SessionID != "s3" {
			t.Errorf("files %+v, want the one odd transcript", l.Files)
		}
		ads := h.adapters(nil)
		if len(ads) != 3 {
			t.Errorf("%d adapters, want 3 (Claude root, Codex home, single file)", len(ads))
		}
	}
	check(h)
	check(newHooked(state, []string{known}, quiet)) // a restarted watcher goes on

	// The single file is read with the Claude Code parser.
	p := filepath.Join(dir, "odd", "s3.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	ads := h.adapters(nil)
	srcs, err := ads[2].Discover()
	if err != nil || len(srcs) != 1 || srcs[0].Path != p || ads[2].Client() != "claude-code" {
		t.Fatalf("Discover = %+v, %v", srcs, err)
	}
	if _, err := ads[2].NewParser(srcs[0], nil); err != nil {
		t.Fatal(err)
	}
}

// failing fails its first publication.
type failing struct {
	fail bool
	got  [][]event.Event
}

func (f *failing) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	if f.fail {
		f.fail = false
		return 0, errors.New("bus down")
	}
	f.got = append(f.got, evs)
	return 0, nil
}

// The trackers keep what a batch taught them only once it is published: a batch read again after
// a failure yields the same events, the epoch event included.
func TestLivePublisher_CommitsAfterPublication(t *testing.T) {
	l := &live{logger: quiet, life: lifecycle.New(lifecycle.Config{}), fresh: freshness.New()}
	next := &failing{fail: true}
	pub := l.publisher(next)
	batch := func() []event.Event {
		return []event.Event{{ID: "c1", Kind: event.KindAction, Time: time.Now(), Client: "claude-code", SessionID: "s1",
			V: event.SchemaVersion, Action: &event.Action{Type: event.ActionContextCompacted, Tool: "compact_boundary"}}}
	}
	if _, err := pub.PublishBatch(context.Background(), batch()); err == nil {
		t.Fatal("the failure was not passed on")
	}
	if st, _ := l.life.State("claude-code", "s1"); st != "" {
		t.Fatalf("a failed publication changed the tracker: state %q", st)
	}
	if _, err := pub.PublishBatch(context.Background(), batch()); err != nil {
		t.Fatal(err)
	}
	if len(next.got) != 1 || len(next.got[0]) != 2 || next.got[0][1].Session == nil || next.got[0][1].Session.Epoch != 1 {
		t.Fatalf("published %+v, want the record and its epoch-1 event", next.got)
	}
	if _, ep := l.life.State("claude-code", "s1"); ep != 1 {
		t.Errorf("epoch %d after the publication, want 1", ep)
	}
}
