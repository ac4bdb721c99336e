package clientconfig

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Codex's hook trust. Codex runs a hook from hooks.json only once the user trusted it on its /hooks
// screen, and records that trust in config.toml, one table per hook:
//
//	[hooks.state."/home/me/.codex/hooks.json:session_start:0:0"]
//	trusted_hash = "sha256:..."
//
// keyed by the hooks file, the event (snake_case), the entry's index in the event's list and the
// hook's index in the entry. Once Undo removes observer's entries these records name hooks that
// are gone (or, when init created hooks.json, a file that is gone), so Undo removes them too: the
// records of the entries it removed, or every record naming the file when the file goes. Nothing
// else in config.toml changes, byte for byte; the file is not recorded in the manifest for this
// (Codex wrote the records, not init) and is written without a backup, since only Codex's trust
// records leave it.

// hookAt is an entry of observer's in a Codex hooks file: its event and its index in the list.
type hookAt struct {
	event string // as hooks.json spells it: SessionStart
	index int
}

// trustCleanup is a Codex hooks file Undo edited, and the entries of observer's it removed.
type trustCleanup struct {
	file    string // as the manifest records it
	real    string // with symlinks resolved (Codex may record either)
	all     bool   // the file is removed, or gone: every record naming it goes
	removed []hookAt
}

// parseTrustKey splits a [hooks.state] key, "<file>:<event>:<entry>:<hook>".
func parseTrustKey(k string) (file, event string, entry int, ok bool) {
	parts := strings.Split(k, ":")
	if len(parts) < 4 {
		return "", "", 0, false
	}
	n := len(parts)
	e, err1 := strconv.Atoi(parts[n-2])
	_, err2 := strconv.Atoi(parts[n-1])
	if err1 != nil || err2 != nil {
		return "", "", 0, false
	}
	return strings.Join(parts[:n-3], ":"), parts[n-3], e, true
}

// sameEvent compares an event name as hooks.json spells it (PreToolUse) with Codex's key
// (pre_tool_use).
func sameEvent(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	return norm(a) == norm(b)
}

// forgetCodexTrust removes, from the config.toml beside each Codex hooks file Undo edited, the
// trust records of the entries it removed. The config.toml is the one Undo already edits when the
// manifest records it (observer-mcp registered there), else it is read and added to files.
func forgetCodexTrust(files []*loaded, cleanups []trustCleanup) ([]*loaded, error) {
	for _, c := range cleanups {
		if !c.all && len(c.removed) == 0 {
			continue
		}
		cfg := filepath.Join(filepath.Dir(c.file), "config.toml")
		var l *loaded
		for _, f := range files {
			if f.report.File == cfg {
				l = f
			}
		}
		extra := l == nil
		if extra {
			var err error
			if l, err = read(Codex, cfg, TOML); err != nil || !l.exists {
				continue // no config.toml, or one Codex cannot read either: no trust records to remove
			}
			l.record = FileRecord{Client: Codex, Path: cfg, Format: TOML}
			l.drop, l.extra, l.noBackup = true, true, true
		}
		if l.removeIt || !l.exists {
			continue
		}
		state, _ := l.doc.Lookup("hooks", "state")
		m, _ := state.(map[string]any)
		var keys []string
		for k := range m {
			file, ev, entry, ok := parseTrustKey(k)
			if !ok || file != c.file && (c.real == "" || file != c.real) {
				continue
			}
			if c.all || slices.ContainsFunc(c.removed, func(h hookAt) bool { return h.index == entry && sameEvent(h.event, ev) }) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		n := 0
		for _, k := range keys {
			p := []string{"hooks", "state", k}
			if err := l.doc.Delete(p); err != nil {
				l.report.Lines = append(l.report.Lines, fmt.Sprintf("left Codex's trust record %s: %v", DisplayPath(p), err))
				continue
			}
			l.paths = append(l.paths, p)
			n++
		}
		if n == 0 {
			continue
		}
		l.report.Lines = append(l.report.Lines, fmt.Sprintf("removed %d trust record(s) Codex kept for observer's hooks in %s (hooks.state)", n, c.file))
		if err := l.check(); err != nil {
			return nil, err
		}
		if extra {
			files = append(files, l)
		}
	}
	return files, nil
}
