package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Hook configs as the clients and their users write them: other hooks on the same events, other
// keys, and each formatting trap (tabs, CRLF, one line, compact, empty lists written oddly).

const claudeSettingsFixture = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(ls:*)", "Read(~/.zshrc)"],
    "deny": []
  },
  "env": {"DISABLE_TELEMETRY": "1"},
  "mcpServers": {
    "fs": {"type": "stdio", "command": "/bin/true", "args": ["arg1"]}
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/check-bash \"$CLAUDE_PROJECT_DIR\"",
            "timeout": 30
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [{"type": "command", "command": "notify-send done"}]
      }
    ],
    "Notification": []
  },
  "model": "opus"
}
`

const codexHooksFixture = `{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup|resume",
        "hooks": [
          {
            "type": "command",
            "command": "sh ~/.codex/hooks/session-start.sh",
            "statusMessage": "Loading context"
          }
        ]
      }
    ],
    "PermissionRequest": [
      {"hooks": [{"type": "command", "command": "python3 ~/.codex/hooks/perm.py"}]}
    ]
  }
}
`

const cursorHooksFixture = `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./hooks/format.sh" }],
    "beforeShellExecution": [{ "command": "./hooks/guard.sh", "failClosed": true }],
    "stop": [
      { "command": "./hooks/a.sh" },
      { "command": "./hooks/b.sh" }
    ]
  }
}
`

const hookCmd = "/opt/observer/bin/observerctl --home /srv/obs hook --client claude-code"

// hookTarget is one client's hooks file in a temporary home.
func hookTarget(tb testing.TB, client string, content *string) (Target, string) {
	tb.Helper()
	dir := tb.TempDir()
	var loc Location
	for _, l := range LocateHooks(filepath.Join(dir, "home"), func(string) string { return "" }, noPath) {
		if l.Client == client {
			loc = l
		}
	}
	if content != nil {
		writeFile(tb, loc.File, []byte(*content), 0o644)
	}
	return Target{Client: client, File: loc.File, Format: JSON, Plan: HooksPlan(loc, hookCmd)}, filepath.Join(dir, "obs")
}

func noPath(string) (string, error) { return "", errors.New("not found") }

func ptr(s string) *string { return &s }

// TestHooks_InitUninstallByteIdentical: on every kind of config, init adds exactly one entry per
// event at the end of its list and changes nothing else; init again changes nothing; uninstall
// gives back the original bytes (no file, when there was none).
func TestHooks_InitUninstallByteIdentical(t *testing.T) {
	for _, c := range []struct {
		name, client string
		content      *string
	}{
		{"claude with hooks and servers", ClaudeCode, ptr(claudeSettingsFixture)},
		{"claude tabs", ClaudeCode, ptr(strings.ReplaceAll(claudeSettingsFixture, "  ", "\t"))},
		{"claude CRLF", ClaudeCode, ptr(strings.ReplaceAll(claudeSettingsFixture, "\n", "\r\n"))},
		{"claude compact", ClaudeCode, ptr(`{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}],"PreToolUse":[]}}`)},
		{"claude one line", ClaudeCode, ptr(`{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}` + "\n")},
		{"claude odd empty lists", ClaudeCode, ptr("{\n  \"hooks\": {\n    \"Stop\": [ ],\n    \"PreToolUse\": [\n\n    ]\n  }\n}")},
		{"claude empty hooks", ClaudeCode, ptr("{\n  \"hooks\": {}\n}\n")},
		{"claude {}", ClaudeCode, ptr("{}")},
		{"claude { } CRLF", ClaudeCode, ptr("{ }\r\n")},
		{"claude blank", ClaudeCode, ptr("")},
		{"claude newline", ClaudeCode, ptr("\n")},
		{"claude missing", ClaudeCode, nil},
		{"codex with hooks", Codex, ptr(codexHooksFixture)},
		{"codex missing", Codex, nil},
		{"cursor with hooks", Cursor, ptr(cursorHooksFixture)},
		{"cursor without version", Cursor, ptr(`{"hooks":{"stop":[{"command":"x"}]}}`)},
		{"cursor missing", Cursor, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, obs := hookTarget(t, c.client, c.content)
			if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, tg.File)
			d := parse(t, JSON, got)
			var before *Doc
			if c.content != nil {
				before = parse(t, JSON, []byte(*c.content))
			} else {
				before = parse(t, JSON, nil)
			}
			// Each event's list is what it was, plus observer's entry at the end.
			var paths [][]string
			for ev, entry := range HookEntries(c.client, hookCmd) {
				p := []string{"hooks", ev}
				paths = append(paths, p)
				old, _ := before.Lookup(p...)
				want := append(slices.Clone(asList(old)), entry)
				if v, _ := d.Lookup(p...); !equal(v, want) {
					t.Errorf("%s = %v, want %v\n%s", DisplayPath(p), v, want, got)
				}
			}
			if c.client == Cursor {
				if v, _ := d.Lookup("version"); !equal(v, json.RawMessage("1")) {
					t.Errorf("version = %v, want 1", v)
				}
				paths = append(paths, []string{"version"})
			}
			if !equal(prune(before.Tree(), paths), prune(d.Tree(), paths)) {
				t.Errorf("keys other than the hook lists changed:\n%s", got)
			}
			if c.content != nil && strings.Contains(*c.content, "\r\n") && strings.Count(string(got), "\n") != strings.Count(string(got), "\r\n") {
				t.Errorf("mixed line breaks in a CRLF file:\n%q", got)
			}

			reports, err := Apply([]Target{tg}, Options{Home: obs, Now: func() time.Time { return time.Now().Add(time.Hour) }})
			if err != nil {
				t.Fatal(err)
			}
			if reports[0].Changed || !bytes.Equal(readFile(t, tg.File), got) {
				t.Errorf("second init changed the file:\n%s", reports[0].Diff)
			}

			if _, err := Undo(Options{Home: obs}); err != nil {
				t.Fatal(err)
			}
			if c.content == nil {
				if _, err := os.Stat(tg.File); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("uninstall left the file init created (%v)", err)
				}
			} else if after := string(readFile(t, tg.File)); after != *c.content {
				t.Errorf("uninstall gave\n%q\nwant the original\n%q", after, *c.content)
			}
			if _, err := os.Stat(ManifestPath(obs)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("manifest left after a full uninstall (%v)", err)
			}
		})
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// TestHooks_EntriesObserveOnly: the registered entries run the handler and carry nothing that
// could decide for the user (no permission decision, no blocking option, no matcher narrowing).
func TestHooks_EntriesObserveOnly(t *testing.T) {
	for _, client := range Clients {
		entries := HookEntries(client, hookCmd)
		if len(entries) == 0 {
			t.Fatalf("%s: no events", client)
		}
		for ev, e := range entries {
			if strings.HasPrefix(ev, "before") || ev == "PermissionRequest" {
				t.Errorf("%s: %s is an event whose hook output decides", client, ev)
			}
			m := e.(map[string]any)
			var keys []string
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			want := map[string][]string{ClaudeCode: {"hooks"}, Codex: {"hooks"}, Cursor: {"command"}}[client]
			if client == ClaudeCode && (ev == "PreToolUse" || ev == "PostToolUse") {
				want = []string{"hooks", "matcher"}
				if m["matcher"] != "*" {
					t.Errorf("%s %s matcher %v, want every tool", client, ev, m["matcher"])
				}
			}
			if !slices.Equal(keys, want) {
				t.Errorf("%s %s entry keys %v, want %v", client, ev, keys, want)
			}
			if client != Cursor {
				hooks := m["hooks"].([]any)
				if len(hooks) != 1 || !equal(hooks[0], Object{{"type", "command"}, {"command", hookCmd}}) {
					t.Errorf("%s %s hooks %v", client, ev, hooks)
				}
			} else if m["command"] != hookCmd {
				t.Errorf("%s %s command %v", client, ev, m["command"])
			}
			b, _ := json.Marshal(e)
			for _, bad := range []string{"ecision", "failClosed", "continue", "block", "permission"} {
				if strings.Contains(string(b), bad) {
					t.Errorf("%s %s entry %s carries %q", client, ev, b, bad)
				}
			}
		}
	}
}

// TestHooks_UninstallKeepsUserEdits: after init the user edits their own hook, adds one after
// observer's and a new event; uninstall removes observer's entries only.
func TestHooks_UninstallKeepsUserEdits(t *testing.T) {
	tg, obs := hookTarget(t, ClaudeCode, ptr(claudeSettingsFixture))
	if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	d := parse(t, JSON, readFile(t, tg.File))
	text := strings.Replace(string(d.Bytes()), "notify-send done", "notify-send finished", 1)
	d = parse(t, JSON, []byte(text))
	mine := Object{{"hooks", []any{Object{{"type", "command"}, {"command", "my-logger"}}}}}
	if err := d.Append([]string{"hooks", "Stop"}, mine); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Set([]string{"hooks", "TeammateIdle"}, []any{mine}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, tg.File, d.Bytes(), 0o600)

	reports, err := Undo(Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	if reports[0].Kept != 0 {
		t.Errorf("kept %d; observer's entries were not edited", reports[0].Kept)
	}
	// What is left is the original with the user's three edits.
	want := parse(t, JSON, []byte(strings.Replace(claudeSettingsFixture, "notify-send done", "notify-send finished", 1)))
	want.Append([]string{"hooks", "Stop"}, mine)
	want.Set([]string{"hooks", "TeammateIdle"}, []any{mine})
	got := parse(t, JSON, readFile(t, tg.File))
	if !equal(got.Tree(), want.Tree()) {
		t.Errorf("after uninstall:\n%s\nwant\n%s", got.Bytes(), want.Bytes())
	}
	if strings.Contains(string(got.Bytes()), "observerctl") {
		t.Errorf("an observer entry is left:\n%s", got.Bytes())
	}
}

// TestHooks_EditedEntryKeptUnlessForced: an entry of observer's that the user edited is theirs now:
// uninstall leaves it (and says so) until --force.
func TestHooks_EditedEntryKeptUnlessForced(t *testing.T) {
	tg, obs := hookTarget(t, ClaudeCode, ptr(claudeSettingsFixture))
	if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	d := parse(t, JSON, readFile(t, tg.File))
	list, _ := d.Lookup("hooks", "Stop")
	last := len(list.([]any)) - 1
	if err := d.DeleteElem([]string{"hooks", "Stop"}, last); err != nil {
		t.Fatal(err)
	}
	edited := Object{{"hooks", []any{Object{{"type", "command"}, {"command", hookCmd}, {"timeout", json.RawMessage("5")}}}}}
	if err := d.Append([]string{"hooks", "Stop"}, edited); err != nil {
		t.Fatal(err)
	}
	writeFile(t, tg.File, d.Bytes(), 0o600)

	// init again adds no second entry beside the edited one.
	reports, err := Apply([]Target{tg}, Options{Home: obs})
	if err != nil || reports[0].Changed {
		t.Fatalf("init after the edit: %v\n%s", err, reports[0].Diff)
	}

	reports, err = Undo(Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	if reports[0].Kept != 1 || !slices.ContainsFunc(reports[0].Lines, func(l string) bool {
		return strings.HasPrefix(l, "left the entry init added to hooks.Stop as it is")
	}) {
		t.Errorf("kept %d, lines %q", reports[0].Kept, reports[0].Lines)
	}
	got := parse(t, JSON, readFile(t, tg.File))
	if v, _ := got.Lookup("hooks", "Stop"); len(v.([]any)) != 2 || !equal(v.([]any)[1], edited) {
		t.Errorf("hooks.Stop = %v, want the user's and the edited entry", v)
	}
	if v, _ := got.Lookup("hooks", "PreToolUse"); len(v.([]any)) != 1 {
		t.Errorf("hooks.PreToolUse = %v: the unedited entry should be gone", v)
	}
	if _, err := Undo(Options{Home: obs, Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, tg.File)); got != claudeSettingsFixture {
		t.Errorf("after --force:\n%s", got)
	}
}

// TestHooks_CommandChange: init from another observerctl path replaces observer's own entry
// instead of adding a second one; uninstall still gives back the original.
func TestHooks_CommandChange(t *testing.T) {
	tg, obs := hookTarget(t, Codex, ptr(codexHooksFixture))
	if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(hookCmd, "/opt/observer/bin", "/usr/local/bin", 1)
	var loc Location
	for _, l := range LocateHooks(filepath.Dir(filepath.Dir(filepath.Dir(tg.File)))+"/home", func(string) string { return "" }, noPath) {
		if l.Client == Codex {
			loc = l
		}
	}
	tg2 := Target{Client: Codex, File: tg.File, Format: JSON, Plan: HooksPlan(loc, moved)}
	reports, err := Apply([]Target{tg2}, Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	got := string(readFile(t, tg.File))
	if strings.Contains(got, "/opt/observer/bin") || strings.Count(got, moved) != len(HookEvents[Codex]) {
		t.Errorf("after init from another path:\n%s\n%q", got, reports[0].Lines)
	}
	if _, err := Undo(Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, tg.File)); got != codexHooksFixture {
		t.Errorf("after uninstall:\n%s", got)
	}
}

// TestHooks_UsersOwnObserverHook: an event where the user already runs `observerctl hook` (from
// anywhere) gets no second entry, and uninstall leaves the user's.
func TestHooks_UsersOwnObserverHook(t *testing.T) {
	orig := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "'/home/me/my tools/observerctl' hook"}]}]}}`
	tg, obs := hookTarget(t, ClaudeCode, &orig)
	reports, err := Apply([]Target{tg}, Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	d := parse(t, JSON, readFile(t, tg.File))
	if v, _ := d.Lookup("hooks", "Stop"); len(v.([]any)) != 1 {
		t.Errorf("hooks.Stop = %v: a second observer hook was added", v)
	}
	if v, _ := d.Lookup("hooks", "SessionStart"); len(asList(v)) != 1 {
		t.Errorf("hooks.SessionStart = %v", v)
	}
	if !slices.Contains(reports[0].Lines, "left hooks.Stop as it is: it already has an entry that does this (observer hook)") {
		t.Errorf("lines %q", reports[0].Lines)
	}
	if _, err := Undo(Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, tg.File)); got != orig {
		t.Errorf("after uninstall:\n%s", got)
	}
}

// TestHooks_MalformedWritesNothing: a file that does not parse, or whose hooks are not in the
// clients' format, is refused with ErrMalformed before anything is written.
func TestHooks_MalformedWritesNothing(t *testing.T) {
	for _, c := range []struct{ name, content string }{
		{"not JSON", `{"hooks": {`},
		{"hooks a list", `{"hooks": []}`},
		{"event an object", `{"hooks": {"Stop": {"command": "x"}}}`},
		{"top level a list", `[]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, obs := hookTarget(t, ClaudeCode, &c.content)
			// A good file for another client must not be written either.
			good, _ := hookTarget(t, Codex, ptr(codexHooksFixture))
			_, err := Apply([]Target{good, tg}, Options{Home: obs})
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tg.File) {
				t.Fatalf("err = %v, want ErrMalformed naming the file", err)
			}
			if got := string(readFile(t, tg.File)); got != c.content {
				t.Errorf("the malformed file was written: %s", got)
			}
			if got := string(readFile(t, good.File)); got != codexHooksFixture {
				t.Error("the good file was written")
			}
			if _, err := os.Stat(ManifestPath(obs)); !errors.Is(err, os.ErrNotExist) {
				t.Error("manifest written")
			}
		})
	}
}

func TestHookCommand(t *testing.T) {
	for _, c := range []struct{ bin, home, client, want string }{
		{"/usr/local/bin/observerctl", "", "codex", "/usr/local/bin/observerctl hook --client codex"},
		{"/opt/o/observerctl", "/srv/obs", "cursor", "/opt/o/observerctl --home /srv/obs hook --client cursor"},
		{"/home/me/my tools/observerctl", "/home/me/it's", "claude-code",
			`'/home/me/my tools/observerctl' --home '/home/me/it'\''s' hook --client claude-code`},
	} {
		got := HookCommand(c.bin, c.home, c.client)
		if got != c.want {
			t.Errorf("HookCommand(%q, %q) = %s, want %s", c.bin, c.home, got, c.want)
		}
		f := shellFields(got)
		if f[0] != c.bin || (c.home != "" && f[2] != c.home) {
			t.Errorf("%s does not split back into %q %q: %q", got, c.bin, c.home, f)
		}
		if !IsObserverHook(normalize(hookEntry(c.client, "Stop", got))) {
			t.Errorf("IsObserverHook does not recognize %s", got)
		}
	}
	for _, cmd := range []string{"observerctl-hook", "/bin/echo observerctl hook", "observerctl status", "'/x/observerctl hook'"} {
		if IsObserverHook(map[string]any{"command": cmd}) {
			t.Errorf("IsObserverHook(%q) = true", cmd)
		}
	}
}

func TestLocateHooks(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	onPath := map[string]bool{}
	lookPath := func(b string) (string, error) {
		if onPath[b] {
			return "/usr/bin/" + b, nil
		}
		return "", errors.New("not found")
	}
	found := func() map[string]string {
		m := map[string]string{}
		for _, l := range LocateHooks(home, getenv, lookPath) {
			if l.Found {
				m[l.Client] = l.File
			}
		}
		return m
	}
	if f := found(); len(f) != 0 {
		t.Errorf("found %v in an empty home", f)
	}
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	onPath["claude"] = true
	env["CODEX_HOME"] = filepath.Join(home, "ch")
	os.MkdirAll(env["CODEX_HOME"], 0o700)
	f := found()
	want := map[string]string{
		ClaudeCode: filepath.Join(home, ".claude", "settings.json"),
		Codex:      filepath.Join(home, "ch", "hooks.json"),
		Cursor:     filepath.Join(home, ".cursor", "hooks.json"),
	}
	if len(f) != 3 || f[ClaudeCode] != want[ClaudeCode] || f[Codex] != want[Codex] || f[Cursor] != want[Cursor] {
		t.Errorf("found %v, want %v", f, want)
	}
	env["CLAUDE_CONFIG_DIR"] = filepath.Join(home, "cc")
	if f := found(); f[ClaudeCode] != filepath.Join(home, "cc", "settings.json") {
		t.Errorf("with CLAUDE_CONFIG_DIR: %v", f)
	}
}

// TestJSONDoc_AppendDeleteElem: appending follows the list's own style, and deleting the appended
// element gives back the text byte for byte.
func TestJSONDoc_AppendDeleteElem(t *testing.T) {
	entry := Object{{"command", "x"}, {"n", []any{"a"}}}
	for _, c := range []struct{ name, in, want string }{
		{"multi-line", "{\n  \"l\": [\n    {\n      \"command\": \"a\"\n    }\n  ]\n}",
			"{\n  \"l\": [\n    {\n      \"command\": \"a\"\n    },\n    {\n      \"command\": \"x\",\n      \"n\": [\n        \"a\"\n      ]\n    }\n  ]\n}"},
		{"one element a line", "{\n  \"l\": [\n    {\"command\": \"a\"}\n  ]\n}",
			"{\n  \"l\": [\n    {\"command\": \"a\"},\n    {\"command\": \"x\", \"n\": [\"a\"]}\n  ]\n}"},
		{"one line", `{"l": [{"command": "a"}, {"command": "b"}]}`, `{"l": [{"command": "a"}, {"command": "b"}, {"command": "x", "n": ["a"]}]}`},
		{"compact", `{"l":[{"command":"a"}]}`, `{"l":[{"command":"a"},{"command":"x","n":["a"]}]}`},
		{"padded braces", `{"l": [{ "command": "a" }]}`, `{"l": [{ "command": "a" }, { "command": "x", "n": ["a"] }]}`},
		{"empty in multi-line", "{\n\t\"l\": []\n}", "{\n\t\"l\": [\n\t\t{\n\t\t\t\"command\": \"x\",\n\t\t\t\"n\": [\n\t\t\t\t\"a\"\n\t\t\t]\n\t\t}\n\t]\n}"},
		{"empty compact", `{"l":[]}`, `{"l":[{"command":"x","n":["a"]}]}`},
		{"CRLF", "{\r\n  \"l\": [\r\n    \"s\"\r\n  ]\r\n}\r\n", "{\r\n  \"l\": [\r\n    \"s\",\r\n    {\r\n      \"command\": \"x\",\r\n      \"n\": [\r\n        \"a\"\r\n      ]\r\n    }\r\n  ]\r\n}\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := parse(t, JSON, []byte(c.in))
			if err := d.Append([]string{"l"}, entry); err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != c.want {
				t.Errorf("append gave\n%s\nwant\n%s", got, c.want)
			}
			l, _ := d.Lookup("l")
			if err := d.DeleteElem([]string{"l"}, len(l.([]any))-1); err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != c.in && !strings.Contains(c.name, "empty") {
				t.Errorf("delete gave\n%q\nwant\n%q", got, c.in)
			}
		})
	}
	d := parse(t, JSON, []byte(`{"l": {}}`))
	if err := d.Append([]string{"l"}, "x"); err == nil {
		t.Error("append to an object: no error")
	}
	if err := d.Append([]string{"m"}, "x"); err == nil {
		t.Error("append to a missing list: no error")
	}
}

// FuzzJSONAppendDelete: appending to any list keeps every other value and leaves valid JSON, and
// deleting the element again gives back the text byte for byte (for a list that was not empty).
func FuzzJSONAppendDelete(f *testing.F) {
	for _, s := range []string{claudeSettingsFixture, cursorHooksFixture, codexHooksFixture, `{"hooks":{"l":[1]}}`,
		"{\"hooks\": {\"l\": [\n\t\"a\" ,\n\t\"b\"\n]}}", `{ "hooks" : { "l" : [ { } ] } }`} {
		f.Add(s, "l")
	}
	f.Fuzz(func(t *testing.T, doc, key string) {
		d, err := ParseDoc(JSON, []byte(doc))
		if err != nil || strings.TrimSpace(doc) == "" {
			return
		}
		path := []string{"hooks", key}
		v, ok := d.Lookup(path...)
		list, isList := v.([]any)
		if !ok || !isList {
			return
		}
		before := d.Tree()
		val := Object{{"hooks", []any{Object{{"type", "command"}, {"command", "c\u2028<&>"}}}}}
		if err := d.Append(path, val); err != nil {
			t.Fatalf("append: %v", err)
		}
		after, err := ParseDoc(JSON, d.Bytes())
		if err != nil {
			t.Fatalf("append made invalid JSON: %v\n%s", err, d.Bytes())
		}
		if got, _ := after.Lookup(path...); !equal(got, append(slices.Clone(list), val)) {
			t.Fatalf("list after append: %v\n%s", got, d.Bytes())
		}
		if !equal(prune(before, [][]string{path}), prune(after.Tree(), [][]string{path})) {
			t.Fatalf("other values changed:\n%s\n%s", doc, d.Bytes())
		}
		if err := d.DeleteElem(path, len(list)); err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 && string(d.Bytes()) != doc {
			t.Fatalf("append then delete:\n%q\nbecame\n%q", doc, d.Bytes())
		}
	})
}

func TestHooksPlan_Notes(t *testing.T) {
	tg, _ := hookTarget(t, Codex, nil)
	cfg := filepath.Join(filepath.Dir(tg.File), "config.toml")
	notes := func() []string {
		_, n, err := tg.Plan(parse(t, JSON, nil))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := notes(); len(n) != 1 || !strings.Contains(n[0], "/hooks") {
		t.Errorf("notes without config.toml: %q, want the trust note only", n)
	}
	writeFile(t, cfg, []byte("[features]\nhooks = false\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"x\"\n"), 0o600)
	if n := notes(); len(n) != 3 || !strings.Contains(n[1], "hooks = false") || !strings.Contains(n[2], "[hooks] too") {
		t.Errorf("notes: %q", n)
	}
	claude, _ := hookTarget(t, ClaudeCode, nil)
	if _, n, _ := claude.Plan(parse(t, JSON, []byte(`{"disableAllHooks": true}`))); len(n) != 1 || !strings.Contains(n[0], "disableAllHooks") {
		t.Errorf("claude notes: %q", n)
	}
}
