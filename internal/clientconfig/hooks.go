package clientconfig

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/observerhq/observer/pkg/client"
)

// Hooks. `observerctl init --hooks` registers `observerctl hook --client NAME` for a fixed set of
// events in each client's user-wide hooks file, one entry appended to each event's list:
//
//   - Claude Code: ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json), "hooks": each event
//     a list of {"matcher", "hooks": [{"type": "command", "command"}]}; the matcher "*" (every
//     tool) on the tool events, none on the others (every source).
//   - Codex: $CODEX_HOME/hooks.json (~/.codex/hooks.json), the same structure without a matcher.
//     Codex (0.124 and later) also reads inline [hooks] tables of config.toml, but warns when one
//     layer has both, and TOML arrays of tables are not something observerctl edits in place;
//     hooks.json is Codex's documented user-level file and needs no TOML. The older `notify`
//     setting is not used: it takes one program, so it would displace the user's own. Codex runs
//     a new hook only once the user trusted it (/hooks in the Codex TUI); observerctl does not
//     write that trust itself.
//   - Cursor: ~/.cursor/hooks.json, {"version": 1, "hooks": {event: [{"command"}]}}, camelCase
//     event names. Only events whose hooks cannot change what the agent does are used: no
//     before* hook (their output allows or denies).
//
// Every entry is observe-only: a command and nothing else, no decision, no blocking option. The
// handler never writes to stdout and never exits 2 (see internal/cli/hook.go). The Claude Code and
// Codex formats are checked against the real clients (internal/cli TestInitHooks_RealClients:
// Claude Code 2.1.197, Codex 0.171.0); Cursor's comes from its documentation, with no Cursor to
// run here.

// HookReason is the manifest reason of every hook entry.
const HookReason = "observer hook"

// HookEvents lists, per client, the events observer's hook is registered for.
var HookEvents = map[string][]string{
	ClaudeCode: {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "PreCompact",
		"SubagentStop", "Stop", "SessionEnd"},
	Codex: {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "PostCompact",
		"SubagentStart", "SubagentStop", "Stop", "SessionEnd"},
	Cursor: {"sessionStart", "postToolUse", "afterShellExecution", "afterMCPExecution", "afterFileEdit",
		"preCompact", "subagentStop", "stop", "sessionEnd"},
}

// LocateHooks returns each client's user-wide hooks file for the user whose home directory is
// home. A client is Found when its config directory or hooks file exists or its command is on
// PATH (lookPath). getenv reads CLAUDE_CONFIG_DIR and CODEX_HOME.
func LocateHooks(home string, getenv func(string) string, lookPath func(string) (string, error)) []Location {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	// A client is on PATH when one of its commands (pkg/client's Bins) is.
	onPath := func(name string) bool {
		c, _ := client.Lookup(name)
		return slices.ContainsFunc(c.Bins, func(b string) bool { _, err := lookPath(b); return err == nil })
	}
	claudeDir := filepath.Join(home, ".claude")
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		claudeDir = d
	}
	codexDir := filepath.Join(home, ".codex")
	if d := getenv("CODEX_HOME"); d != "" {
		codexDir = d
	}
	cursorDir := filepath.Join(home, ".cursor")
	var out []Location
	for _, c := range []struct{ client, dir, file string }{
		{ClaudeCode, claudeDir, "settings.json"},
		{Codex, codexDir, "hooks.json"},
		{Cursor, cursorDir, "hooks.json"},
	} {
		file := filepath.Join(c.dir, c.file)
		out = append(out, Location{c.client, file, JSON, exists(file) || exists(c.dir) || onPath(c.client)})
	}
	return out
}

// HookCommand is the shell command a client runs for observer's hook: observerctl's absolute path,
// --home when observer's home is not the default (home != ""), then `hook --client CLIENT`.
func HookCommand(observerctl, home, client string) string {
	cmd := shellQuote(observerctl)
	if home != "" {
		cmd += " --home " + shellQuote(home)
	}
	return cmd + " hook --client " + shellQuote(client)
}

// hookEntry is the element appended to an event's list.
func hookEntry(client, ev, command string) Object {
	if client == Cursor {
		return Object{{"command", command}}
	}
	hooks := []any{Object{{"type", "command"}, {"command", command}}}
	if client == ClaudeCode && (ev == "PreToolUse" || ev == "PostToolUse") {
		return Object{{"matcher", "*"}, {"hooks", hooks}}
	}
	return Object{{"hooks", hooks}}
}

// HookEntries returns the entries HooksPlan appends, by event.
func HookEntries(client, command string) map[string]any {
	out := map[string]any{}
	for _, ev := range HookEvents[client] {
		out[ev] = normalize(hookEntry(client, ev, command))
	}
	return out
}

// HooksPlan appends observer's hook entry, which runs command, to each of the client's events in
// loc.File (Cursor's file also gets "version": 1 when it has no version). An event that already
// has an entry running `observerctl hook` (the user's own) gets none.
func HooksPlan(loc Location, command string) func(d *Doc) ([]Edit, []string, error) {
	return func(d *Doc) ([]Edit, []string, error) {
		if v, ok := d.Lookup("hooks"); ok {
			if _, isMap := v.(map[string]any); !isMap {
				return nil, nil, fmt.Errorf(`%w: "hooks" is not an object`, ErrMalformed)
			}
		}
		var edits []Edit
		var notes []string
		if loc.Client == Cursor {
			if v, ok := d.Lookup("version"); !ok {
				edits = append(edits, Edit{Path: []string{"version"}, Value: json.RawMessage("1"), Reason: HookReason})
			} else if !equal(v, json.RawMessage("1")) {
				notes = append(notes, "note: the file's version is not 1, the hooks format observerctl writes; Cursor may not read it")
			}
		}
		for _, ev := range HookEvents[loc.Client] {
			edits = append(edits, Edit{Path: []string{"hooks", ev}, Value: hookEntry(loc.Client, ev, command),
				Reason: HookReason, Append: true, Marker: command, Same: IsObserverHook})
		}
		switch loc.Client {
		case ClaudeCode:
			if v, _ := d.Lookup("disableAllHooks"); v == true {
				notes = append(notes, `note: "disableAllHooks" is true here: Claude Code runs no hook until you remove it`)
			}
		case Codex:
			notes = append(notes, "note: Codex runs a new hook only once you trust it: start codex and review them with /hooks")
			notes = append(notes, codexConfigNotes(filepath.Join(filepath.Dir(loc.File), "config.toml"))...)
		}
		return edits, notes, nil
	}
}

// codexConfigNotes reads Codex's config.toml for what keeps the hooks from running as expected:
// hooks turned off, or inline [hooks] beside hooks.json (Codex loads both, and warns).
func codexConfigNotes(configTOML string) []string {
	data, err := os.ReadFile(configTOML)
	if err != nil {
		return nil
	}
	d, err := ParseDoc(TOML, data)
	if err != nil {
		return nil
	}
	var notes []string
	for _, k := range []string{"hooks", "codex_hooks"} {
		if v, _ := d.Lookup("features", k); v == false {
			notes = append(notes, "note: "+configTOML+" turns hooks off ([features] "+k+" = false): Codex runs none until you remove it")
		}
	}
	// [hooks.state."..."] tables are Codex's own record of the hooks the user trusted, not hooks.
	if v, ok := d.Lookup("hooks"); ok {
		m, _ := v.(map[string]any)
		if len(m) == 0 || slices.ContainsFunc(slices.Collect(maps.Keys(m)), func(k string) bool { return k != "state" }) {
			notes = append(notes, "note: "+configTOML+" has [hooks] too: Codex loads both and warns at start")
		}
	}
	return notes
}

// IsObserverHook reports whether a hook entry (an element of an event's list, in any client's
// format) runs `observerctl hook`, wherever observerctl is installed.
func IsObserverHook(elem any) bool {
	for _, c := range Commands(elem) {
		f := shellFields(c)
		if len(f) > 1 && strings.TrimSuffix(filepath.Base(f[0]), ".exe") == "observerctl" && slices.Contains(f[1:], "hook") {
			return true
		}
	}
	return false
}

// looksLikeObserverHook reports whether a hook entry runs observerctl's hook handler, also in a
// form IsObserverHook does not read (through env or sh -c, say): a command naming observerctl and
// hook. Undo uses it to find observer's entry once the user edited its command.
func looksLikeObserverHook(elem any) bool {
	if IsObserverHook(elem) {
		return true
	}
	for _, c := range Commands(elem) {
		if i := strings.Index(c, "observerctl"); i >= 0 && strings.Contains(c[i:], "hook") {
			return true
		}
	}
	return false
}

// Commands collects the strings held under "command" keys at any depth of a hook entry.
func Commands(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "command" {
				out = append(out, s)
			} else {
				out = append(out, Commands(x)...)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, Commands(x)...)
		}
	}
	return out
}

// ShellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func ShellQuote(s string) string { return shellQuote(s) }

// shellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellFields splits a command line into words the way a POSIX shell would for simple commands:
// white space separates, single and double quotes group, a backslash escapes.
func shellFields(s string) []string {
	var out []string
	var w strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			w.WriteRune(r)
			esc = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\\':
			esc, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}
