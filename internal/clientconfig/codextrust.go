package clientconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Codex hook trust, read (trust.go removes observer's records on uninstall). Codex runs a hook of hooks.json only once the user trusted it: at start the
// TUI says "Hooks need review" and offers "Trust all and continue" (or /hooks, one by one);
// `codex exec` runs untrusted hooks only with --dangerously-bypass-hook-trust. The trust is kept
// in $CODEX_HOME/config.toml, one table per hook:
//
//	[hooks.state."/home/me/.codex/hooks.json:session_start:0:0"]
//	trusted_hash = "sha256:69ea4a96…"
//	enabled = false   # optional: the hook turned off in /hooks
//
// The key is the absolute path of hooks.json, the event's snake_case name, the group's position
// in the event's list and the handler's in the group's "hooks" (the path as given, or with its
// symlinks resolved: either is looked up, as trust.go does). The hash is SHA-256 over the
// compact JSON, keys sorted, of {"event_name", "matcher" (the group's; UserPromptSubmit and Stop
// take none), "hooks": [the handler normalized: type, command, timeout (seconds: 600 when unset,
// SessionEnd's 1, and at most 3; at least 1), async (false when unset), statusMessage when set]}.
// A trusted hash that differs from the hook's means it changed since it was trusted, and Codex
// asks again. All this was read off Codex 0.171.0's own answer to `codex app-server` hooks/list
// (key, currentHash, trustStatus), for every event observer registers and for matchers, timeouts,
// async and status messages (TestCodexHooks_Hashes holds the hashes it gave).

// Codex trust states of a hook, as Codex names them.
const (
	CodexTrusted   = "trusted"
	CodexUntrusted = "untrusted"
	CodexModified  = "modified" // trusted once, changed since
)

// CodexHook is one handler of Codex's hooks.json and what Codex's config.toml records of it.
type CodexHook struct {
	Key     string // Codex's key for it: "<hooks.json>:<event>:<group>:<handler>"
	Event   string // the event as hooks.json names it (SessionStart)
	Command string
	Hash    string // the hash Codex trusts it under
	Trust   string // CodexTrusted, CodexUntrusted or CodexModified
	Enabled bool   // false when turned off in Codex (enabled = false)
}

// CodexHooks returns the handlers of Codex's hooks.json (hooksFile, an absolute path, parsed as
// hooks) whose command ours selects, each with the trust that configTOML (the text of
// $CODEX_HOME/config.toml; nil when there is none) records. A config.toml that does not parse
// records nothing.
func CodexHooks(hooksFile string, hooks *Doc, configTOML []byte, ours func(command string) bool) []CodexHook {
	var state map[string]any
	if len(configTOML) > 0 {
		if d, err := ParseDoc(TOML, configTOML); err == nil {
			v, _ := d.Lookup("hooks", "state")
			state, _ = v.(map[string]any)
		}
	}
	v, _ := hooks.Lookup("hooks")
	events, _ := v.(map[string]any)
	var out []CodexHook
	for _, ev := range slices.Sorted(func(yield func(string) bool) {
		for k := range events {
			if !yield(k) {
				return
			}
		}
	}) {
		groups, _ := events[ev].([]any)
		label := snakeCase(ev)
		for gi, g := range groups {
			group, _ := g.(map[string]any)
			handlers, _ := group["hooks"].([]any)
			for hi, h := range handlers {
				handler, _ := h.(map[string]any)
				command, _ := handler["command"].(string)
				if handler == nil || !ours(command) {
					continue
				}
				hook := CodexHook{Key: hooksFile + ":" + label + ":" + strconv.Itoa(gi) + ":" + strconv.Itoa(hi), Event: ev,
					Command: command, Hash: codexHookHash(label, group["matcher"], handler), Trust: CodexUntrusted, Enabled: true}
				st, found := state[hook.Key].(map[string]any)
				if real, err := filepath.EvalSymlinks(hooksFile); !found && err == nil && real != hooksFile {
					if st, found = state[real+":"+label+":"+strconv.Itoa(gi)+":"+strconv.Itoa(hi)].(map[string]any); found {
						hook.Key = real + ":" + label + ":" + strconv.Itoa(gi) + ":" + strconv.Itoa(hi)
					}
				}
				if trusted, ok := st["trusted_hash"].(string); ok {
					hook.Trust = CodexModified
					if trusted == hook.Hash {
						hook.Trust = CodexTrusted
					}
				}
				if st["enabled"] == false {
					hook.Enabled = false
				}
				out = append(out, hook)
			}
		}
	}
	return out
}

// codexHookHash is the hash Codex 0.171 keeps in trusted_hash for a command handler of an event
// (its snake_case label) in a group with matcher (nil when none).
func codexHookHash(event string, matcher any, handler map[string]any) string {
	timeout := int64(600)
	if event == "session_end" {
		timeout = 1
	}
	for _, k := range []string{"timeout", "timeoutSec"} {
		if n, ok := handler[k].(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				timeout = i
			}
			break
		}
	}
	if event == "session_end" {
		timeout = min(timeout, 3)
	}
	norm := map[string]any{"type": "command", "command": handler["command"], "timeout": max(timeout, 1), "async": handler["async"] == true}
	if s, ok := handler["statusMessage"].(string); ok {
		norm["statusMessage"] = s
	}
	identity := map[string]any{"event_name": event, "hooks": []any{norm}}
	if m, ok := matcher.(string); ok && event != "user_prompt_submit" && event != "stop" {
		identity["matcher"] = m
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Codex's serde_json writes <, > and & as they are
	if err := enc.Encode(identity); err != nil {
		return ""
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// snakeCase turns a Codex event name into its key label: PreToolUse → pre_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
