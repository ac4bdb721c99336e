package aider

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// local is a wall-clock time of the hand-written files in the tests' zone.
func local(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999", s, time.Local)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// TestParser_HandWritten reads testdata/repo: two sessions of aider 0.86 written to io.py's and
// base_coder.py's formats, with the input history that dates their prompts.
func TestParser_HandWritten(t *testing.T) {
	path := copyRepo(t)
	evs, p := parseFile(t, New(nil), path)
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v", st)
	}
	type want struct {
		kind   string
		target string
		at     string
	}
	var got []want
	for _, e := range transcripttest.WithoutMessages(evs) {
		w := want{kind: string(e.Kind), at: e.Time.In(time.Local).Format("15:04:05.000")}
		switch {
		case e.Action != nil:
			w.kind += ":" + string(e.Action.Type) + ":" + e.Action.Tool
			w.target = e.Action.Target
		case e.Session != nil:
			w.target = e.Session.State + e.Session.Model
		case e.TokenUsage != nil:
			w.target = e.TokenUsage.Model
		}
		got = append(got, w)
	}
	wantEvs := []want{
		{"session", "started", "10:00:00.000"},
		{"session", "anthropic/claude-sonnet-4-20250514", "10:00:00.000"},
		{"action:user_prompt:", "add a --verbose flag to main.go", "10:00:05.123"},
		{"token_usage", "anthropic/claude-sonnet-4-20250514", "10:00:05.123"},
		{"action:edit_file:edit", "main.go", "10:00:05.123"},
		{"action:run_command:/run", "go test ./...", "10:01:10.500"},
		{"action:user_prompt:", "fix the failing test\nand keep the output short", "10:02:00.250"},
		{"token_usage", "anthropic/claude-sonnet-4-20250514", "10:02:00.250"},
		{"action:edit_file:edit", "main_test.go", "10:02:00.250"},
		{"action:run_command:shell", "go test ./...", "10:02:00.250"},
		{"action:run_command:/run", "git status", "10:02:00.250"},
		{"session", "started", "14:30:00.000"},
		{"session", "gpt-4o", "14:30:00.000"},
		{"action:user_prompt:", "/model o3-mini", "14:31:00.000"},
		{"session", "o3-mini", "14:31:00.000"},
		{"action:user_prompt:", "hello", "14:31:20.700"},
		{"token_usage", "o3-mini", "14:31:20.700"},
	}
	if !reflect.DeepEqual(got, wantEvs) {
		t.Errorf("events:\n%q\nwant\n%q", got, wantEvs)
	}
	var usages []*event.TokenUsage
	for _, e := range evs {
		if e.TokenUsage != nil {
			usages = append(usages, e.TokenUsage)
		}
	}
	if len(usages) == 3 {
		if u := usages[0]; u.Input != 2300 || u.Output != 145 || u.CostUSD != 0.0091 || u.Reliability != event.ReliabilityApproximate {
			t.Errorf("first usage %+v", u)
		}
		if u := usages[1]; u.Input != 700 || u.CacheCreation != 1500 || u.CacheRead != 9800 || u.Output != 310 || u.CostUSD != 0.01 {
			t.Errorf("cached usage %+v: input is sent minus the cache hit and write", u)
		}
		if u := usages[2]; u.Input != 1234 || u.Output != 56 || u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate {
			t.Errorf("priced usage %+v: o3-mini priced by observer's table", u)
		}
	}
	if evs[0].Session.StartedAt != local("2026-01-05 10:00:00") || evs[0].Project == "" || evs[0].Session.Cwd != filepath.Dir(path) {
		t.Errorf("session %+v project %q", evs[0].Session, evs[0].Project)
	}
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "repo.golden.json"), views(transcripttest.WithoutMessages(evs)), *update)
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "repo.conversation.golden.json"), transcripttest.ConversationLines(evs), *update)
}

// TestParser_Resume reads the file in two parts at every line, the second part with a fresh
// parser resumed from the first's state: the events are those of one read, and the ids are
// deterministic.
func TestParser_Resume(t *testing.T) {
	path := copyRepo(t)
	a := New(nil)
	all, _ := parseFile(t, a, path)
	data, _ := os.ReadFile(path)
	ls := lines(data)
	for k := range ls {
		p := newParser(a, transcript.Source{Client: Client, Path: path}, nil)
		first := feed(t, p, ls[:k])
		q := newParser(a, transcript.Source{Client: Client, Path: path}, p.State())
		rest := feed(t, q, ls[k:])
		if got := append(first, rest...); !reflect.DeepEqual(got, all) {
			t.Fatalf("split at line %d (%q): %d events, want %d", k, ls[k].body, len(got), len(all))
		}
	}
}

// TestParser_ResumeInAnotherProcess is TestParser_Resume with the state read by another process,
// which has not the text of the prompt being read (a transcript.Memo): it reads it again from the
// file, and the events are those of one read. The state holds no prompt text.
func TestParser_ResumeInAnotherProcess(t *testing.T) {
	path := copyRepo(t)
	a := New(nil)
	all, _ := parseFile(t, a, path)
	data, _ := os.ReadFile(path)
	ls := lines(data)
	pending := 0
	for k := range ls {
		p := newParser(a, transcript.Source{Client: Client, Path: path}, nil)
		first := feed(t, p, ls[:k])
		var st map[string]any
		if err := json.Unmarshal(p.State(), &st); err != nil {
			t.Fatal(err)
		}
		for _, memo := range []string{"prompt", "reply"} {
			if text, ok := st[memo]; ok {
				pending++
				if _, isRef := text.(map[string]any); !isRef {
					t.Fatalf("split at line %d: the state holds the %s %v", k, memo, text)
				}
				delete(st, memo)
			}
		}
		state, _ := json.Marshal(st)
		q := newParser(a, transcript.Source{Client: Client, Path: path}, state)
		rest := feed(t, q, ls[k:])
		if got := append(first, rest...); !reflect.DeepEqual(got, all) {
			t.Fatalf("split at line %d (%q): %d events, want %d", k, ls[k].body, len(got), len(all))
		}
	}
	if pending == 0 {
		t.Fatal("no split left a prompt being read")
	}
}

// TestParser_Appended checks that aider's appending keeps the ids of what was read, and that a
// file with its oldest session cut from the top yields the same ids for the rest.
func TestParser_Appended(t *testing.T) {
	path := copyRepo(t)
	a := New(nil)
	before, _ := parseFile(t, a, path)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n#### thanks  \n\nYou're welcome.\n\n> Tokens: 1.3k sent, 9 received.  \n")
	f.Close()
	after, _ := parseFile(t, a, path)
	if len(after) != len(before)+4 || !reflect.DeepEqual(after[:len(before)], before) {
		t.Fatalf("appended: %d events, want %d then the new prompt, its message, the reply's and the usage", len(after), len(before)+4)
	}
	data, _ := os.ReadFile(path)
	cut := data[strings.Index(string(data), "\n# aider chat started at 2026-01-05 14:30:00"):]
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	trimmed, _ := parseFile(t, a, path)
	ids := map[string]bool{}
	for _, e := range after {
		ids[e.ID] = true
	}
	for _, e := range trimmed {
		if !ids[e.ID] {
			t.Errorf("after the cut, %s %s has a new id", e.Kind, e.ID)
		}
	}
}

func TestParser_Malformed(t *testing.T) {
	p := newParser(New(nil), transcript.Source{Client: Client, Path: "/nonexistent-observer/r/" + ChatHistoryFile}, nil)
	for i, l := range []string{"#### before any header", "# aider chat started at yesterday", "\xff\xfe"} {
		if _, err := p.Record(int64(i*40), []byte(l)); i > 0 && !errors.Is(err, transcript.ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", l, err)
		}
	}
	if st := p.Stats(); st.Malformed != 2 || st.Unknown["line before a session header"] != 1 {
		t.Errorf("stats %+v", st)
	}
	evs := feed(t, p, lines([]byte("\n# aider chat started at 2026-02-01 09:00:00\n\n> Tokens: lots sent, 3 received.  \n#### hi  \n")))
	if len(evs) != 1 || p.Stats().Unknown["unparsed Tokens line"] != 1 {
		t.Errorf("events %d, stats %+v; the prompt waits for the next line", len(evs), p.Stats())
	}
}

// TestParser_CRLF reads a file aider wrote with --line-endings crlf: a multi-line prompt stays one.
func TestParser_CRLF(t *testing.T) {
	text := "\n# aider chat started at 2026-02-01 09:00:00\n\n#### one  \n#### two  \n\n#### three  \n\nok\n"
	for _, crlf := range []bool{false, true} {
		data := text
		if crlf {
			data = strings.ReplaceAll(text, "\n", "\r\n")
		}
		p := newParser(New(nil), transcript.Source{Client: Client, Path: "/nonexistent-observer/r/" + ChatHistoryFile}, nil)
		var prompts []string
		for _, e := range feed(t, p, lines([]byte(data))) {
			if e.Action != nil {
				prompts = append(prompts, e.Action.Target)
			}
		}
		if want := []string{"one\ntwo", "three"}; !reflect.DeepEqual(prompts, want) {
			t.Errorf("crlf %v: prompts %q, want %q", crlf, prompts, want)
		}
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[string]int64{"145": 145, "2,345": 2345, "2.3k": 2300, "12k": 12000, "1.2M": 1200000,
		"999": 999, "": 0, "k": 0, "-5": 0, "1e400": 0, "9.9k": 9900} {
		if got := count(in); got != want {
			t.Errorf("count(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestParser_OlderAnnouncements reads the model lines of older releases (get_announcements at
// 16856bb4: "Model:" or "Models:" with the weak model) and older Tokens lines (thousands with
// commas, "request" cost).
func TestParser_OlderAnnouncements(t *testing.T) {
	text := "\n# aider chat started at 2024-05-01 09:00:00\n\n> Aider v0.30.1  \n> Models: gpt-4o with diff edit format, weak model gpt-3.5-turbo  \n> Git repo: .git with 3 files  \n\n#### hi  \n\nHello.\n\n> Tokens: 1,024 sent, 8 received. Cost: $0.0052 request, $0.0052 session.  \n"
	p := newParser(New(nil), transcript.Source{Client: Client, Path: "/nonexistent-observer/r/" + ChatHistoryFile}, nil)
	evs := feed(t, p, lines([]byte(text)))
	var model string
	var usage *event.TokenUsage
	for _, e := range evs {
		if e.Session != nil && e.Session.Model != "" {
			model = e.Session.Model
		}
		if e.TokenUsage != nil {
			usage = e.TokenUsage
		}
	}
	if model != "gpt-4o" || usage == nil || usage.Input != 1024 || usage.Output != 8 || usage.CostUSD != 0.0052 || usage.Model != "gpt-4o" {
		t.Errorf("model %q usage %+v", model, usage)
	}
}
