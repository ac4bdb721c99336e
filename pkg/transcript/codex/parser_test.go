package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// A file in which every token_count line is written twice yields exactly the same events, but for
// the Seq of the messages, which follows their lines.
func TestParser_RepeatsSkipped(t *testing.T) {
	for _, name := range corpusFiles {
		t.Run(name, func(t *testing.T) {
			path := corpus(t, name)
			lines := transcripttest.ReadLines(t, path)
			a := testAdapter(t, "")
			p1, _ := a.newParser(srcOf(path), nil)
			p2, _ := a.newParser(srcOf(path), nil)
			once := eventsJSON(t, withoutSeq(run(t, p1, lines)))
			twice := eventsJSON(t, withoutSeq(run(t, p2, withDuplicatedTokenCounts(lines))))
			if once != twice {
				t.Errorf("duplicated token_count lines changed the events")
			}
		})
	}
}

// A parser resumed from State after any line gives the same events as one pass.
func TestParser_ResumeFromState(t *testing.T) {
	for _, name := range corpusFiles {
		t.Run(name, func(t *testing.T) {
			path := corpus(t, name)
			lines := transcripttest.ReadLines(t, path)
			a := testAdapter(t, "")
			p, _ := a.newParser(srcOf(path), nil)
			want := eventsJSON(t, run(t, p, lines))
			splits := []int{1, 2, 3, len(lines) / 3, len(lines) / 2, len(lines) - 1}
			for i := 5; i < len(lines) && !testing.Short(); i += len(lines)/4 + 1 {
				splits = append(splits, i)
			}
			for _, k := range splits {
				if k <= 0 || k >= len(lines) {
					continue
				}
				p1, _ := a.newParser(srcOf(path), nil)
				evs := run(t, p1, lines[:k])
				state := p1.State()
				if !json.Valid(state) {
					t.Fatalf("state is not JSON: %s", state)
				}
				p2, err := a.NewParser(srcOf(path), state)
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, run(t, p2.(*Parser), lines[k:])...)
				if got := eventsJSON(t, evs); got != want {
					t.Fatalf("split after line %d: events differ from one pass", k)
				}
			}
		})
	}
}

// forkOf builds a fork of parent the way Codex writes one (see the package documentation): the
// fork's own session_meta naming its source in forked_from_id, the parent's lines copied verbatim
// with every timestamp re-stamped to the fork instant, then the fork's own turn, whose cumulative
// totals continue from the copied ones.
func forkOf(tb testing.TB, parent [][]byte, forkID, parentID, instant string, last counts, extra counts, callID string) [][]byte {
	tb.Helper()
	meta := mustJSON(tb, map[string]any{"timestamp": instant, "type": "session_meta", "payload": map[string]any{
		"id": forkID, "forked_from_id": parentID, "timestamp": instant, "cwd": "/work/proj",
		"originator": "codex_cli_rs", "cli_version": "0.130.0", "source": "cli"}})
	out := [][]byte{meta}
	for _, l := range parent {
		out = append(out, restamp(tb, l, instant))
	}
	total := last.add(extra)
	later := strings.Replace(instant, ":00.", ":09.", 1)
	usage := func(c counts) map[string]any {
		return map[string]any{"input_tokens": c.Input, "cached_input_tokens": c.Cached,
			"output_tokens": c.Output, "reasoning_output_tokens": c.Reasoning, "total_tokens": c.Input + c.Output}
	}
	tc := mustJSON(tb, map[string]any{"timestamp": later, "type": "turn_context", "payload": map[string]any{
		"cwd": "/work/proj", "model": "gpt-5.1-codex", "turn_id": "turn-" + forkID}})
	um := mustJSON(tb, map[string]any{"timestamp": later, "type": "event_msg", "payload": map[string]any{
		"type": "user_message", "message": "now run the tests", "images": []any{}}})
	fc := mustJSON(tb, map[string]any{"timestamp": later, "type": "response_item", "payload": map[string]any{
		"type": "function_call", "name": "shell", "call_id": callID,
		"arguments": `{"command":["bash","-lc","go test ./..."],"workdir":"/work/proj"}`}})
	tcnt := mustJSON(tb, map[string]any{"timestamp": later, "type": "event_msg", "payload": map[string]any{
		"type": "token_count", "info": map[string]any{"total_token_usage": usage(total), "last_token_usage": usage(extra)}}})
	fo := mustJSON(tb, map[string]any{"timestamp": later, "type": "response_item", "payload": map[string]any{
		"type": "function_call_output", "call_id": callID,
		"output": `{"output":"ok  \tgithub.com/x/y\t0.1s\n","metadata":{"exit_code":0,"duration_seconds":1.5}}`}})
	return append(out, tc, um, fc, tcnt, fo, tcnt)
}

// A fork replays its parent's history, token_count events included. Parsed together, the parent's
// usage and actions are counted once; only the fork's own turn adds to them. The same holds for a
// fork of the fork (a chain of copied session_metas) and for a fork whose file lacks the copies
// of its ancestors' metas, whose root the adapter then reads from the parent's file on disk.
func TestParser_Fork(t *testing.T) {
	parentPath := corpus(t, fileCodemie)
	parentLines := transcripttest.ReadLines(t, parentPath)
	const parentID = "019b7f94-51b4-7593-922e-ba12b5b73b52"
	const forkID = "019b8000-0000-7000-8000-00000000f001"
	const grandID = "019b8000-0000-7000-8000-00000000f002"
	parentLast := counts{Input: 22474, Cached: 14848, Output: 300, Reasoning: 128}
	forkExtra := counts{Input: 8000, Cached: 7680, Output: 50}
	grandExtra := counts{Input: 9000, Cached: 8704, Output: 70, Reasoning: 10}

	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "01", "03")
	forkPath := filepath.Join(day, "rollout-2026-01-03T10-00-00-"+forkID+".jsonl")
	forkLines := forkOf(t, parentLines, forkID, parentID, "2026-01-03T10:00:00.000Z", parentLast, forkExtra, "call_fork_1")
	writeLines(t, forkPath, forkLines)
	grandPath := filepath.Join(day, "rollout-2026-01-03T11-00-00-"+grandID+".jsonl")
	grandLines := forkOf(t, forkLines, grandID, forkID, "2026-01-03T11:00:00.000Z", parentLast.add(forkExtra), grandExtra, "call_grand_1")
	writeLines(t, grandPath, grandLines)
	writeLines(t, filepath.Join(home, "sessions", "2026", "01", "02", filepath.Base(parentPath)[len("codemie-code__"):]), parentLines)

	a := testAdapter(t, home)
	parentEvs, _ := parseFile(t, a, parentPath)
	forkEvs, fp := parseFile(t, a, forkPath)
	grandEvs, gp := parseFile(t, a, grandPath)

	if m := fp.Meta(); m.SessionID != forkID || m.Root != parentID {
		t.Errorf("fork meta = %+v", m)
	}
	if m := gp.Meta(); m.SessionID != grandID || m.Root != parentID {
		t.Errorf("grandchild meta = %+v", m)
	}
	for _, e := range forkEvs {
		if e.SessionID != forkID {
			t.Fatalf("fork event in session %q", e.SessionID)
		}
		if e.Session != nil && e.Session.State == event.SessionStarted && e.Session.ParentSessionID != parentID {
			t.Errorf("fork session parent = %q", e.Session.ParentSessionID)
		}
	}

	check := func(t *testing.T, evs []event.Event, wantDeltas int, want counts) {
		t.Helper()
		ids, byID := transcripttest.Merge(evs)
		var got counts
		deltas, calls := 0, 0
		for _, id := range ids {
			e := byID[id]
			if u := e.TokenUsage; u != nil {
				deltas++
				got = got.add(counts{Input: u.Input + u.CacheRead, Cached: u.CacheRead, Output: u.Output, Reasoning: u.Reasoning})
			}
			if a := e.Action; a != nil && a.ToolUseID != "" {
				calls++
			}
		}
		if deltas != wantDeltas || got != want {
			t.Errorf("%d deltas %+v, want %d %+v", deltas, got, wantDeltas, want)
		}
		if want := wantDeltas; calls != want {
			t.Errorf("%d distinct tool calls, want %d (one per usage delta here)", calls, want)
		}
	}
	t.Run("ParentAndFork", func(t *testing.T) {
		check(t, append(append([]event.Event{}, parentEvs...), forkEvs...), 4, parentLast.add(forkExtra))
	})
	t.Run("ForkFirst", func(t *testing.T) {
		check(t, append(append([]event.Event{}, forkEvs...), parentEvs...), 4, parentLast.add(forkExtra))
	})
	t.Run("Chain", func(t *testing.T) {
		all := append(append(append([]event.Event{}, parentEvs...), forkEvs...), grandEvs...)
		check(t, all, 5, parentLast.add(forkExtra).add(grandExtra))
	})
	t.Run("ChainWithoutCopiedMetas", func(t *testing.T) {
		// Drop the copied ancestors' session_metas: only the grandchild's own remains, naming the
		// fork; the adapter finds the fork's rollout under home and follows it to the parent.
		var stripped [][]byte
		for i, l := range grandLines {
			if i > 0 && strings.Contains(string(l), `"type":"session_meta"`) {
				continue
			}
			stripped = append(stripped, l)
		}
		p, _ := a.newParser(srcOf(grandPath), nil)
		evs := run(t, p, stripped)
		if m := p.Meta(); m.Root != parentID {
			t.Errorf("root = %q, want %q", m.Root, parentID)
		}
		all := append(append(append([]event.Event{}, parentEvs...), forkEvs...), evs...)
		check(t, all, 5, parentLast.add(forkExtra).add(grandExtra))
	})
	t.Run("UserPromptsOnce", func(t *testing.T) {
		ids, byID := transcripttest.Merge(append(append(append([]event.Event{}, parentEvs...), forkEvs...), grandEvs...))
		prompts := 0
		for _, id := range ids {
			if a := byID[id].Action; a != nil && a.Type == event.ActionUserPrompt {
				prompts++
			}
		}
		if prompts != 3 { // the parent's, the fork's, the grandchild's
			t.Errorf("%d user prompts, want 3", prompts)
		}
	})
}

// A subagent's rollout names the thread that spawned it; it becomes the session's parent.
func TestParser_SubagentParent(t *testing.T) {
	line := `{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"child","cwd":"/w",` +
		`"source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent","depth":1}}}}}`
	p, _ := New("").newParser(transcript.Source{Path: "/x/rollout.jsonl"}, nil)
	evs := run(t, p, [][]byte{[]byte(line)})
	if len(evs) != 1 || evs[0].Session.ParentSessionID != "parent" || evs[0].SessionID != "child" {
		t.Fatalf("events = %+v", evs)
	}
	if p.Meta().Root != "parent" {
		t.Errorf("root = %q", p.Meta().Root)
	}
}

func tokenCountLine(ts string, in, cached, out, reasoning int64) string {
	return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":`+
		`{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":%d},`+
		`"last_token_usage":null}}}`, ts, in, cached, out, reasoning)
}

// A cumulative total that goes down (a new conversation in the same file, a reset) restarts the
// delta base at zero.
func TestParser_TotalGoesDown(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}`),
		[]byte(`{"timestamp":"2026-03-01T10:00:01Z","type":"turn_context","payload":{"model":"gpt-5"}}`),
		[]byte(tokenCountLine("2026-03-01T10:00:02Z", 1000, 0, 10, 0)),
		[]byte(tokenCountLine("2026-03-01T10:00:03Z", 3000, 1000, 30, 5)),
		[]byte(tokenCountLine("2026-03-01T10:00:04Z", 500, 100, 5, 0)), // went down
		[]byte(tokenCountLine("2026-03-01T10:00:05Z", 500, 100, 5, 0)), // repeat
		[]byte(tokenCountLine("2026-03-01T10:00:06Z", 900, 300, 9, 1)),
	}
	p, _ := New("").newParser(transcript.Source{Path: "/x/r.jsonl"}, nil)
	var got []event.Tokens
	for _, e := range run(t, p, lines) {
		if e.TokenUsage != nil {
			got = append(got, e.TokenUsage.Tokens)
		}
	}
	want := []event.Tokens{
		{Input: 1000, Output: 10},
		{Input: 1000, CacheRead: 1000, Output: 20, Reasoning: 5},
		{Input: 400, CacheRead: 100, Output: 5},
		{Input: 200, CacheRead: 200, Output: 4, Reasoning: 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("deltas = %+v, want %+v", got, want)
	}
}

// Without total_token_usage, last_token_usage is added up, and a repeat with no model output in
// between is skipped.
func TestParser_LastUsageOnly(t *testing.T) {
	last := func(ts string, in int64) []byte {
		return []byte(fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":`+
			`{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}}}`, ts, in))
	}
	reasoning := []byte(`{"timestamp":"2026-03-01T10:00:03Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}`)
	lines := [][]byte{last("2026-03-01T10:00:01Z", 100), last("2026-03-01T10:00:02Z", 100), reasoning, last("2026-03-01T10:00:04Z", 100)}
	p, _ := New("").newParser(transcript.Source{Path: "/x/r.jsonl", SessionID: "s"}, nil)
	n := 0
	for _, e := range run(t, p, lines) {
		if e.TokenUsage != nil {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d usage events, want 2", n)
	}
}

// token_usage_record lines carry per-response usage; once seen, token_count totals no longer add.
func TestParser_TokenUsageRecord(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"timestamp":"2026-06-01T10:00:00Z","type":"session_meta","payload":{"id":"s2","cwd":"/w"}}`),
		[]byte(`{"timestamp":"2026-06-01T10:00:01Z","type":"turn_context","payload":{"model":"gpt-5.5"}}`),
		[]byte(`{"timestamp":"2026-06-01T10:00:02Z","type":"token_usage_record","payload":{"response_id":"resp_1",` +
			`"usage":{"input_tokens":1000,"cached_input_tokens":800,"output_tokens":20,"reasoning_output_tokens":5}}}`),
		[]byte(tokenCountLine("2026-06-01T10:00:02Z", 1000, 800, 20, 5)),
		[]byte(`{"timestamp":"2026-06-01T10:00:03Z","type":"compacted","payload":{"message":"summary"}}`),
	}
	p, _ := New("").newParser(transcript.Source{Path: "/x/r.jsonl"}, nil)
	var usage []event.TokenUsage
	compactions := 0
	for _, e := range run(t, p, lines) {
		if e.TokenUsage != nil {
			usage = append(usage, *e.TokenUsage)
		}
		if e.Action != nil && e.Action.Type == event.ActionContextCompacted {
			compactions++
		}
	}
	if len(usage) != 1 || usage[0].Input != 200 || usage[0].CacheRead != 800 || usage[0].MessageID != "resp_1" {
		t.Errorf("usage = %+v", usage)
	}
	if compactions != 1 {
		t.Errorf("compactions = %d", compactions)
	}
}

// The bare format (Codex before the envelope): a meta line, state markers, bare response items
// with no timestamp. User messages that are not injected context are the prompts.
func TestParser_BareFormat(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-07T17:24:21.123Z","instructions":null,"git":{"branch":"main"}}`),
		[]byte(`{"record_type":"state"}`),
		[]byte(`{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/u/proj</cwd>\n</environment_context>"}]}`),
		[]byte(`{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"fix the build"}]}`),
		[]byte(`{"type":"local_shell_call","id":"lsc_1","call_id":"call_1","status":"completed","action":{"type":"exec","command":["bash","-lc","cat go.mod"],"working_directory":"/home/u/proj"}}`),
		[]byte(`{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"module x\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.2}}"}`),
		[]byte(`{"record_type":"state"}`),
	}
	p, _ := New("").newParser(transcript.Source{Path: "/x/rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"}, nil)
	evs := run(t, p, lines)
	if p.Stats().Malformed != 0 || len(p.Stats().Unknown) != 0 {
		t.Fatalf("stats = %+v", p.Stats())
	}
	ids, byID := transcripttest.Merge(evs)
	var types []string
	for _, id := range ids {
		e := byID[id]
		if e.Action != nil {
			types = append(types, string(e.Action.Type)+":"+e.Action.Target)
			if e.Action.ToolUseID == "call_1" && (e.Action.Success == nil || !*e.Action.Success || e.Action.DurationMs != 200) {
				t.Errorf("result = %+v", e.Action)
			}
		}
		if e.Time.IsZero() || (e.Action != nil && e.Project != "/home/u/proj") {
			t.Errorf("event %+v", e)
		}
	}
	if got := strings.Join(types, ","); got != "user_prompt:fix the build,read_file:go.mod" {
		t.Errorf("actions = %s", got)
	}
}

// Bad lines are counted and skipped, never fatal; the lines around them still count.
func TestParser_Malformed(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"s3","cwd":"/w"}}`),
		[]byte(`{"timestamp":"2026-03-01T10:00:01Z","type":"turn_context","payload":{"model":"gpt-5"}}`),
		[]byte(`not json at all`),
		[]byte(`{"timestamp":"2026-03-01T10:00:02Z","type":"event_msg","payload":{"type":"token_co`), // truncated
		[]byte("{\"timestamp\":\"2026-03-01T10:00:02Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"\xff\xfe\"}}"),
		[]byte(`[1,2,3]`),
		[]byte(`{"no_type":true}`),
		[]byte(`{"timestamp":"2026-03-01T10:00:02Z","type":"event_msg","payload":"text"}`),
		[]byte(`{"timestamp":"2026-03-01T10:00:02Z","type":"future_record","payload":{"x":1}}`),
		[]byte(`{"timestamp":"2026-03-01T10:00:02Z","type":"event_msg","payload":{"type":"brand_new_event"}}`),
		[]byte(`{"timestamp":"2026-03-01T10:00:02Z","type":"response_item","payload":{"type":"brand_new_item"}}`),
		[]byte(`{"timestamp":"2026-03-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":"many"}}}}`),
		[]byte(tokenCountLine("2026-03-01T10:00:03Z", 100, 0, 1, 0)),
	}
	p, _ := New("").newParser(transcript.Source{Path: "/x/r.jsonl"}, nil)
	var usage int
	var errs int
	for i, l := range lines {
		evs, err := p.Record(int64(i*100), l)
		if err != nil {
			errs++
			if !errors.Is(err, transcript.ErrMalformed) {
				t.Errorf("line %d: error %v does not wrap ErrMalformed", i, err)
			}
		}
		for _, e := range evs {
			if e.TokenUsage != nil {
				usage++
			}
		}
	}
	st := p.Stats()
	if st.Malformed != 7 || errs != 7 || st.Lines != int64(len(lines)) {
		t.Errorf("stats = %+v, errors %d", st, errs)
	}
	if st.Unknown["future_record"] != 1 || st.Unknown["event_msg/brand_new_event"] != 1 || st.Unknown["response_item/brand_new_item"] != 1 {
		t.Errorf("unknown = %v", st.Unknown)
	}
	if usage != 1 {
		t.Errorf("usage events = %d, want 1", usage)
	}
}

// Secrets never leave the parser: targets, errors and outputs are scrubbed, and cut to size.
func TestParser_ScrubsAndCuts(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("A1b2C3d4", 6)
	big := strings.Repeat("x", 20000) + key
	args, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", "curl -H 'Authorization: Bearer " + key + "' https://api"}})
	out, _ := json.Marshal(map[string]any{"output": "OPENAI_API_KEY=" + key + "\n" + big, "metadata": map[string]any{"exit_code": 1}})
	lines := [][]byte{
		mustJSON(t, map[string]any{"timestamp": "2026-03-01T10:00:00Z", "type": "response_item", "payload": map[string]any{
			"type": "function_call", "name": "shell", "call_id": "c1", "arguments": string(args)}}),
		mustJSON(t, map[string]any{"timestamp": "2026-03-01T10:00:01Z", "type": "response_item", "payload": map[string]any{
			"type": "function_call_output", "call_id": "c1", "output": string(out)}}),
	}
	p, _ := New("").newParser(transcript.Source{Path: "/x/r.jsonl", SessionID: "s"}, nil)
	for _, e := range run(t, p, lines) {
		if m := e.Message; m != nil {
			if strings.Contains(m.Text, key[:20]) || len([]rune(m.Text)) > maxTarget {
				t.Errorf("message %+v", m)
			}
			continue
		}
		a := e.Action
		for _, s := range []string{a.Target, a.Error, a.Output} {
			if strings.Contains(s, key) || strings.Contains(s, key[:20]) {
				t.Errorf("secret leaked: %q", s[:min(len(s), 120)])
			}
		}
		if len(a.Output) > maxOutput || len(a.Error) > maxError || len([]rune(a.Target)) > maxTarget {
			t.Errorf("sizes: output %d error %d target %d", len(a.Output), len(a.Error), len(a.Target))
		}
		if a.Success != nil && a.OutputSize <= int64(len(big)) {
			t.Errorf("output size %d is not the full size", a.OutputSize)
		}
	}
}

// Commands that plainly read a file map to read_file; anything else stays run_command.
func TestReadOnly(t *testing.T) {
	cases := map[string]string{
		"cat go.mod":                     "go.mod",
		"cat -n 'a b.txt'":               "a b.txt",
		"sed -n '1,200p' README.md":      "README.md",
		"sed -n 10p x.go":                "x.go",
		"head -n 50 main.go":             "main.go",
		"tail -20 log.txt":               "log.txt",
		"nl -ba pkg/a.go":                "pkg/a.go",
		"cat a | grep b":                 "",
		"cat a && rm b":                  "",
		"sed -i 's/a/b/' x":              "",
		"sed -n '/re/p' x":               "",
		"cat":                            "",
		"cat > out.txt":                  "",
		"ls -la":                         "",
		"cat .python-version || true":    "",
		"head -n 5 $(find . -name x)":    "",
		"cat 'unterminated":              "",
		`cat "dir with \"quote\"/f.txt"`: `dir with "quote"/f.txt`,
	}
	for cmd, want := range cases {
		got, ok := readOnly(cmd)
		if got != want || ok != (want != "") {
			t.Errorf("readOnly(%q) = %q %v, want %q", cmd, got, ok, want)
		}
	}
}

func TestPatchInfo(t *testing.T) {
	for patch, want := range map[string]string{
		"*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch":                                     "write_file a.txt",
		"*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.txt\n@@\n-y\n+z\n*** End Patch": "edit_file a.txt",
		"*** Begin Patch\n*** Delete File: c.txt\n*** End Patch":                                      "edit_file c.txt",
		"*** Begin Patch\n*** End Patch":                                                              "edit_file ",
	} {
		typ, file := patchInfo(patch)
		if got := string(typ) + " " + file; got != want {
			t.Errorf("patchInfo = %q, want %q", got, want)
		}
	}
}

func TestAdapter_Discover(t *testing.T) {
	home := t.TempDir()
	files := []string{
		"sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
		"sessions/2025/09/01/rollout-2025-09-01T08-00-00-01990000-0000-7000-8000-000000000001.jsonl",
		"sessions/rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl",
		"archived_sessions/rollout-2025-10-01T09-00-00-01990000-0000-7000-8000-000000000002.jsonl",
		"archived_sessions/2025/11/01/rollout-2025-11-01T09-00-00-01990000-0000-7000-8000-000000000003.jsonl",
		"sessions/2026/01/02/notes.txt",
		"sessions/2026/01/02/history.jsonl",
	}
	for _, f := range files {
		writeLines(t, filepath.Join(home, f), [][]byte{[]byte(`{}`)})
	}
	// A rollout whose name has no uuid: the id comes from its session_meta.
	writeLines(t, filepath.Join(home, "sessions/2026/02/01/rollout-2026-02-01T00-00-00.jsonl"),
		[][]byte{[]byte(`{"timestamp":"2026-02-01T00:00:00Z","type":"session_meta","payload":{"id":"meta-id"}}`)})
	srcs, err := New(home).Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		if s.Client != Client || !filepath.IsAbs(s.Path) {
			t.Errorf("source %+v", s)
		}
		got = append(got, s.SessionID)
	}
	want := "5973b6c0-94b8-487b-a530-2aeb6098ae0e,01990000-0000-7000-8000-000000000001,01990000-0000-7000-8000-000000000002," +
		"01990000-0000-7000-8000-000000000003,019b7f94-51b4-7593-922e-ba12b5b73b52,meta-id"
	if strings.Join(got, ",") != want {
		t.Errorf("discovered %v", got)
	}
	if srcs, err := New(filepath.Join(home, "missing")).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("missing home: %v %v", srcs, err)
	}
}

func TestDefaultHome(t *testing.T) {
	t.Setenv("CODEX_HOME", "/tmp/codex-home")
	if DefaultHome() != "/tmp/codex-home" {
		t.Errorf("DefaultHome = %q", DefaultHome())
	}
	t.Setenv("CODEX_HOME", "")
	if h, _ := os.UserHomeDir(); h != "" && DefaultHome() != filepath.Join(h, ".codex") {
		t.Errorf("DefaultHome = %q", DefaultHome())
	}
}
