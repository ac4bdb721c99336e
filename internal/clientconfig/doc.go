// Package clientconfig edits the AI clients' own configuration files — Claude Code's
// ~/.claude.json, Codex's ~/.codex/config.toml, Cursor's ~/.cursor/mcp.json — to register
// observer-mcp or to route an existing MCP server through `observer-mcp wrap`, and their hooks
// files — ~/.claude/settings.json, ~/.codex/hooks.json, ~/.cursor/hooks.json — to register the
// observe-only `observerctl hook` handler (see hooks.go), and writes the telemetry settings that
// make Claude Code and Codex export OpenTelemetry to observer's OTLP receiver (see otel.go); it
// undoes exactly those edits later. `observerctl init` and `observerctl uninstall` are its front
// end.
//
// Guarantees:
//
//   - Surgical edits. A change touches only the bytes of the keys it sets: every other key keeps
//     its place, spacing and spelling, and TOML comments survive (one written inside a value that
//     is replaced goes with the value, and comes back with Undo). New keys follow the file's own
//     style: its indentation, line breaks, and one-line or multi-line objects. JSON is edited
//     through pkg/jsonscan's raw members, TOML through go-toml's parser positions; neither is
//     re-marshalled.
//   - Checked before written. After editing, the text must parse, hold the new values at their
//     paths, and be equal to the old text everywhere else once both are parsed; otherwise nothing
//     is written. A file that does not parse to begin with is refused (ErrMalformed), and so is a
//     plan that fails for any file: all files are planned and checked before the first is written.
//   - Safe writes. Before writing a file that exists, Apply copies it to
//     <file>.observer-backup-<UTC time> (mode 0600). Writes go to a temporary file in the same
//     directory, renamed over the original, which keeps its mode (new files are 0600); a symlink is
//     followed, not replaced. If the file changed between reading and writing (a client saving its
//     state), the write is abandoned with ErrChanged.
//   - Exact undo. The manifest $OBSERVER_HOME/install.json records, per file, each key path set,
//     the value set and the exact text it replaced (or that it did not exist). Undo restores exactly
//     those keys and only those: a key the user edited since is left alone unless forced, and keys
//     changed by anyone else stay as they are. Running Apply again with the same edits changes
//     nothing and keeps the first recorded previous values.
//   - Lists are appended to, never replaced. An "append" change (a hook entry) records the element
//     added and the list's exact text before. Undo finds the element by value and removes it with
//     its separator, leaving the other elements (the user's hooks) as they are; when the rest of
//     the list is what it was, the list gets back its exact old text, and a list (or object) Apply
//     created goes when empty. An element the user edited since is recognized by its marker (the
//     hook's command) and left alone unless forced. A file that held no key at all before ("",
//     "{ }") gets back its exact text once it is empty again, and one Apply created is removed, so
//     Apply then Undo gives back the original bytes. (An existing empty object written with
//     white space inside, `"hooks": { }`, comes back as `{}`.)
//
// Callers describe what they want as Targets (one file each) whose Plan returns Edits; the MCP
// registration, the wraps, the hooks and the telemetry settings share the machinery and the
// manifest.
package clientconfig

import (
	"errors"
	"fmt"
)

// Format is a config file's syntax.
type Format string

// Formats.
const (
	JSON Format = "json"
	TOML Format = "toml"
)

// Errors callers tell apart.
var (
	// ErrMalformed reports a config file that does not parse, or that holds a key in a form the
	// editor cannot change safely. Nothing is written.
	ErrMalformed = errors.New("cannot edit")
	// ErrChanged reports a file that changed while it was being edited.
	ErrChanged = errors.New("changed while observerctl was editing it")
)

// editor is one format's text editor. Paths are key paths from the top of the document.
type editor interface {
	bytes() []byte
	tree() (any, error)
	raw(path []string) ([]byte, bool)
	set(path []string, v any) (createdParents int, err error)
	setRaw(path []string, raw []byte) error
	del(path []string) error
	appendElem(path []string, v any) error
	delElem(path []string, i int) error
}

// Doc is one config file being edited.
type Doc struct {
	Format Format
	ed     editor
	cache  any
}

// ParseDoc reads data in format f. Empty data is an empty document.
func ParseDoc(f Format, data []byte) (*Doc, error) {
	var ed editor
	var err error
	switch f {
	case JSON:
		ed, err = newJSONDoc(data)
	case TOML:
		ed, err = newTOMLDoc(data)
	default:
		return nil, fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		return nil, err
	}
	return &Doc{Format: f, ed: ed}, nil
}

// Bytes returns the current text.
func (d *Doc) Bytes() []byte { return d.ed.bytes() }

// Tree returns the parsed document: maps, []any, strings, bools, json.Number.
func (d *Doc) Tree() any {
	if d.cache == nil {
		t, err := d.ed.tree()
		if err != nil {
			return map[string]any{}
		}
		d.cache = normalize(t)
	}
	return d.cache
}

// Lookup returns the value at path, normalized (see Tree).
func (d *Doc) Lookup(path ...string) (any, bool) { return lookup(d.Tree(), path) }

// Raw returns the exact text of the value at path, when the editor can address it.
func (d *Doc) Raw(path []string) ([]byte, bool) { return d.ed.raw(path) }

// Set writes v at path (see Member for the value types) and reports how many parent objects it
// had to create.
func (d *Doc) Set(path []string, v any) (int, error) {
	d.cache = nil
	return d.ed.set(path, v)
}

// SetRaw writes text saved by Raw back at path.
func (d *Doc) SetRaw(path []string, raw []byte) error {
	d.cache = nil
	return d.ed.setRaw(path, raw)
}

// Delete removes the key at path; an absent key is not an error.
func (d *Doc) Delete(path []string) error {
	d.cache = nil
	if _, ok := d.Lookup(path...); !ok {
		return nil
	}
	d.cache = nil
	return d.ed.del(path)
}

// Append adds v (see Member) at the end of the existing list at path, in the style of its
// elements.
func (d *Doc) Append(path []string, v any) error {
	d.cache = nil
	return d.ed.appendElem(path, v)
}

// DeleteElem removes element i of the list at path.
func (d *Doc) DeleteElem(path []string, i int) error {
	d.cache = nil
	return d.ed.delElem(path, i)
}
