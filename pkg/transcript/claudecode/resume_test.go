package claudecode

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func eventsJSON(tb testing.TB, evs []event.Event) []byte {
	tb.Helper()
	var b bytes.Buffer
	for i := range evs {
		line, err := json.Marshal(&evs[i])
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// runFrom feeds lines to a parser as the caller does after a resume: the first at off (the
// cursor), each next one after the one before and its newline.
func runFrom(tb testing.TB, p *Parser, lines [][]byte, off int64) []event.Event {
	tb.Helper()
	var out []event.Event
	for _, l := range lines {
		evs, err := p.Record(off, l)
		if err != nil {
			tb.Logf("record at %d: %v", off, err)
		}
		transcripttest.CheckValid(tb, evs)
		out = append(out, evs...)
		off += int64(len(l)) + 1
	}
	return out
}

// offsetOf is the byte offset of line n of a file made of lines.
func offsetOf(lines [][]byte, n int) int64 {
	var off int64
	for _, l := range lines[:n] {
		off += int64(len(l)) + 1
	}
	return off
}

// Parsing a file in two halves, the second parser resumed from the first one's State, gives the
// same events as one pass, wherever the file is cut.
func TestParser_ResumeFromState(t *testing.T) {
	for _, name := range []string{fileVCT, fileCodemieMain, fileTurn2, fileTurn2Agent, file624, file9eda,
		"claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", snifflyFiles[0]} {
		t.Run(name, func(t *testing.T) {
			src := srcOf(corpus(t, name))
			lines := transcripttest.ReadLines(t, src.Path)
			whole := eventsJSON(t, run(t, newTestParser(t, src, nil), lines))
			cuts := []int{0, 1, len(lines) / 3, len(lines) / 2, len(lines) - 1, len(lines)}
			if len(lines) <= 30 {
				cuts = cuts[:0]
				for i := 0; i <= len(lines); i++ {
					cuts = append(cuts, i)
				}
			}
			for _, cut := range cuts {
				first := newTestParser(t, src, nil)
				evs := run(t, first, lines[:cut])
				state := first.State()
				if !json.Valid(state) {
					t.Fatalf("state %q", state)
				}
				second, err := New(nil).NewParser(src, state)
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, runFrom(t, second.(*Parser), lines[cut:], offsetOf(lines, cut))...)
				if got := eventsJSON(t, evs); !bytes.Equal(got, whole) {
					t.Fatalf("cut at line %d: events differ from one pass", cut)
				}
			}
		})
	}
	if _, err := New(nil).NewParser(transcript.Source{Path: "/x"}, []byte("{bad")); err == nil {
		t.Error("a damaged state loaded")
	}
}

// A resumed session copies earlier messages into a new file; sidechain replays reuse message ids.
// Reading the same lines from a second file (another path, another session) adds no token_usage id
// and changes no merged total.
func TestParser_NoDoubleCountAcrossFiles(t *testing.T) {
	for _, group := range [][]string{{fileVCT}, snifflyFiles, codemieTrio, {fileTurn2, fileTurn2Agent}} {
		t.Run(group[0], func(t *testing.T) {
			once := parseGroup(t, group...)
			var copies []event.Event
			for _, name := range group {
				src := srcOf(corpus(t, name))
				copied := transcript.Source{Client: Client, Path: src.Path + ".resumed.jsonl", SessionID: "resumed-session"}
				copies = append(copies, run(t, newTestParser(t, copied, nil), transcripttest.ReadLines(t, src.Path))...)
			}
			twice := append(append([]event.Event{}, once...), copies...)
			a, b := usageIDs(once), usageIDs(twice)
			if len(a) == 0 || len(a) != len(b) {
				t.Errorf("usage ids: %d once, %d with the copy", len(a), len(b))
			}
			for id := range b {
				if !a[id] {
					t.Errorf("new usage id %s", id)
				}
			}
			if ta, tb := totals(once), totals(twice); ta.buckets() != tb.buckets() || ta.Messages != tb.Messages {
				t.Errorf("totals %+v once, %+v with the copy", ta, tb)
			}
			// Every action id of the copy is one of the original's too.
			ids, _ := merge(once)
			known := map[string]bool{}
			for _, id := range ids {
				known[id] = true
			}
			for _, e := range copies {
				if !known[e.ID] {
					t.Errorf("copy yields new id %s (%+v)", e.ID, e.Action)
					break
				}
			}
		})
	}
}

// A message copied with only its final line (a resume keeps the last state of each message) still
// lands on the same id and the writer keeps the larger output.
func TestParser_PartialCopyKeepsFinalOutput(t *testing.T) {
	p1 := newTestParser(t, testSource(), nil)
	early := assistantLine(t, "a1", "2026-03-01T10:00:01Z", "msg_9", "claude-sonnet-4-5", use(2, 1, 10, 100, 0),
		map[string]any{"type": "text", "text": "t"})
	final := assistantLine(t, "a2", "2026-03-01T10:00:02Z", "msg_9", "claude-sonnet-4-5", use(2, 300, 10, 100, 0),
		toolUse("toolu_9", "Bash", map[string]any{"command": "ls"}))
	evs := run(t, p1, [][]byte{early})
	other := transcript.Source{Client: Client, Path: "/t/other.jsonl", SessionID: "other"}
	evs = append(evs, run(t, newTestParser(t, other, nil), [][]byte{final, early})...)
	u := totals(evs)
	if u.Messages != 1 || u.Output != 300 || u.Input != 2 || u.CacheRead != 100 {
		t.Errorf("totals %+v", u)
	}
}
