package gemini

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// fixtureSummary is a session the real Gemini CLI 0.61.0 wrote offline against internal/fakeapi
// (`gemini -p "list the files here" --yolo`), then `gemini --list-sessions`, which generated the
// previous session's summary (the fake API's text) and appended it as a $set.
const fixtureSummary = "testdata/gemini/session-2026-12-01T19-30-7bbe3782.jsonl"

// titles returns the session events that carry a title.
func titles(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Session != nil && e.Session.Title != "" {
			out = append(out, e)
		}
	}
	return out
}

func TestParser_GeminiSummaryRecorded(t *testing.T) {
	src := srcOf(absFixture(t, fixtureSummary))
	evs, p := parseFile(t, New(nil), src)
	ts := titles(evs)
	if len(ts) != 1 {
		t.Fatalf("titles %+v, want one", ts)
	}
	e := ts[0]
	// The $set has no time: the last one seen, the last message's.
	if e.Session.Title != "This is the observer fake API." || e.Session.TitleByUser || e.Session.State != "" ||
		e.SessionID != "7bbe3782-5b98-4fea-817d-4ef0b2330f65" || !e.Time.Equal(time.Date(2026, 12, 1, 19, 30, 45, 134e6, time.UTC)) {
		t.Errorf("title event %+v %+v", e, e.Session)
	}
	if s := summarize(evs, p); s.Malformed != 0 || len(s.Unknown) != 0 {
		t.Errorf("malformed %d unknown %v", s.Malformed, s.Unknown)
	}
	// Read a line at a time by parsers resumed from the state, as the watcher does: the same.
	var state []byte
	var all []event.Event
	for i, line := range transcripttest.ReadLines(t, src.Path) {
		p, err := New(nil).newParser(src, state)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(int64(i), line)
		all = append(all, evs...)
		state = p.State()
	}
	if a, b := eventsJSON(t, all), eventsJSON(t, evs); a != b {
		t.Errorf("resumed:\n%s\none pass:\n%s", a, b)
	}
}

// Gemini CLI's summary in a header, a $set and a document: reported once per new text, at the
// last time seen; one read before any time waits for the first; a subagent's summary (its result)
// is not the session's.
func TestParser_GeminiSummary(t *testing.T) {
	p, err := New(nil).newParser(transcript.Source{Client: Client, Path: "/g/chats/session-x.jsonl"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := run(t, p, [][]byte{
		[]byte(`{"$set":{"summary":"  Fix the   login bug "}}`), // before any time
		[]byte(`{"sessionId":"g1","projectHash":"ab","startTime":"2026-05-01T10:00:00.000Z","lastUpdated":"2026-05-01T10:00:00.000Z","kind":"main"}`),
		[]byte(`{"id":"m1","timestamp":"2026-05-01T10:00:05.000Z","type":"user","content":[{"text":"fix it"}]}`),
		[]byte(`{"$set":{"summary":"Fix the login bug","memoryScratchpad":{"version":1}}}`), // the same again
	})
	ts := titles(evs)
	if len(ts) != 1 || ts[0].Session.Title != "Fix the login bug" || ts[0].Session.TitleByUser || ts[0].SessionID != "g1" ||
		!ts[0].Time.Equal(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("titles %+v", ts)
	}
	p2, err := New(nil).newParser(p.src, p.State())
	if err != nil {
		t.Fatal(err)
	}
	evs = run(t, p2, [][]byte{[]byte(`{"$set":{"summary":"Debug the login flow"}}`)})
	if ts := titles(evs); len(ts) != 1 || ts[0].Session.Title != "Debug the login flow" || !ts[0].Time.Equal(time.Date(2026, 5, 1, 10, 0, 5, 0, time.UTC)) {
		t.Errorf("a new summary after a restart: %+v", ts)
	}

	// A header carrying the summary (a session rewritten, or converted from .json).
	p, _ = New(nil).newParser(transcript.Source{Client: Client, Path: "/g/chats/session-y.jsonl"}, nil)
	evs = run(t, p, [][]byte{[]byte(`{"sessionId":"g2","projectHash":"ab","startTime":"2026-05-01T10:00:00.000Z","kind":"main","summary":"Add dark mode"}`)})
	if ts := titles(evs); len(ts) != 1 || ts[0].Session.Title != "Add dark mode" {
		t.Errorf("header summary: %+v", ts)
	}

	// A subagent's file: its summary is its result.
	sub, _ := New(nil).newParser(transcript.Source{Client: Client, Path: "/g/chats/g1/s1.jsonl", SessionID: "g1", AgentID: "s1"}, nil)
	evs = run(t, sub, [][]byte{
		[]byte(`{"sessionId":"s1","projectHash":"ab","startTime":"2026-05-01T10:00:00.000Z","kind":"subagent"}`),
		[]byte(`{"$set":{"summary":"Found three files."}}`),
	})
	if ts := titles(evs); len(ts) != 0 {
		t.Errorf("subagent summary: %+v", ts)
	}

	// A document: the summary is reported once, however often the document is read again.
	dir := t.TempDir()
	doc := filepath.Join(dir, "session-2026-05-01T10-00-g3.json")
	body := `{"sessionId":"g3","projectHash":"ab","startTime":"2026-05-01T10:00:00.000Z","lastUpdated":"2026-05-01T10:01:00.000Z","summary":"Refactor the parser",
	  "messages":[{"id":"m1","timestamp":"2026-05-01T10:00:30.000Z","type":"user","content":[{"text":"refactor"}]}]}`
	if err := os.WriteFile(doc, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	dp, _ := New(nil).newParser(srcOf(doc), nil)
	evs = run(t, dp, [][]byte{[]byte(body)})
	if ts := titles(evs); len(ts) != 1 || ts[0].Session.Title != "Refactor the parser" || !ts[0].Time.Equal(time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)) {
		t.Errorf("document summary: %+v", ts)
	}
	if evs := run(t, dp, [][]byte{[]byte(body)}); len(titles(evs)) != 0 {
		t.Errorf("document read again: %+v", titles(evs))
	}
}

// Qwen Code's custom_title records: "auto" is the title it generated, "manual" (or, before the
// field, none) the user's /rename; the record written again at each lifecycle event is reported
// once.
func TestParser_QwenCustomTitle(t *testing.T) {
	p, err := NewQwen(nil).newParser(transcript.Source{Client: QwenClient, Path: "/q/chats/q1.jsonl", SessionID: "q1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	title := func(uuid, text, source string) []byte {
		payload := map[string]any{"customTitle": text}
		if source != "" {
			payload["titleSource"] = source
		}
		return qwenLine(t, uuid, "system", map[string]any{"subtype": "custom_title", "systemPayload": payload})
	}
	evs := run(t, p, [][]byte{
		title("t1", "Fix login bug", "auto"),
		title("t2", "Fix login bug", "auto"), // finalize() writes it again
		title("t3", "Auth refactor", "manual"),
		title("t4", "Auth refactor", "manual"),
		title("t5", "Legacy name", ""),
	})
	ts := titles(evs)
	type tt struct {
		title  string
		byUser bool
	}
	var got []tt
	for _, e := range ts {
		got = append(got, tt{e.Session.Title, e.Session.TitleByUser})
		if e.SessionID != "q1" || e.Time.IsZero() || e.Session.State != "" {
			t.Errorf("title event %+v", e)
		}
	}
	want := []tt{{"Fix login bug", false}, {"Auth refactor", true}, {"Legacy name", true}}
	if len(got) != len(want) {
		t.Fatalf("titles %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("title %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := summarize(evs, p); len(s.Unknown) != 0 {
		t.Errorf("unknown %v", s.Unknown)
	}
}

// A summary read before any time is kept in the state as a memo, whose text only the process that
// read it has. Another process resuming the .jsonl reads the line again at its offset and still
// reports the title; a file whose line there changed reports none.
func TestParser_TitleResumedElsewhere(t *testing.T) {
	lines := [][]byte{[]byte(`{"$set":{"summary":"  Fix the   login bug "}}`)}
	path := filepath.Join(t.TempDir(), "session-x.jsonl")
	if err := os.WriteFile(path, append(lines[0], '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	src := transcript.Source{Client: Client, Path: path}
	p, err := New(nil).newParser(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if evs := run(t, p, lines); len(titles(evs)) != 0 {
		t.Fatalf("before any time: %+v", evs)
	}
	re := regexp.MustCompile(`\{"memo":"[^"]*"\}`)
	state := re.ReplaceAll(p.State(), []byte(`{"memo":"gone"}`)) // as another process reads it
	if bytes.Contains(state, []byte("login")) || !bytes.Contains(state, []byte(`"gone"`)) {
		t.Fatalf("state %s: want the title as a memo, no text", state)
	}
	header := []byte(`{"sessionId":"g1","projectHash":"ab","startTime":"2026-05-01T10:00:00.000Z","lastUpdated":"2026-05-01T10:00:00.000Z","kind":"main"}`)
	resume := func() []event.Event {
		t.Helper()
		p, err := New(nil).newParser(src, state)
		if err != nil {
			t.Fatal(err)
		}
		return titles(transcripttest.Feed(t, p, [][]byte{header}, transcripttest.CheckValid))
	}
	if ts := resume(); len(ts) != 1 || ts[0].Session.Title != "Fix the login bug" {
		t.Errorf("titles after a resume without the memo: %+v, want Fix the login bug", ts)
	}
	if err := os.WriteFile(path, []byte(`{"$set":{"summary":"Something else entirely"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ts := resume(); len(ts) != 0 {
		t.Errorf("titles from a changed file: %+v, want none", ts)
	}
}
