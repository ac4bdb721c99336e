package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/atomicfile"
)

// Edit is one value wanted at a key path of a config file, or one element wanted in a list.
type Edit struct {
	Path   []string
	Value  any    // see Member
	Reason string // why, for the user and the manifest: "observer MCP server", "wrap github"
	// Append adds Value as the last element of the list at Path (creating the list, and the
	// objects on the way, when missing) instead of setting Path to Value. A list that already
	// holds an element equal to Value is left as it is. One element is appended per Path and
	// Reason: when an earlier Apply appended another value for the same reason (a hook command
	// whose path changed), that element is replaced. Undo removes the element, found by value.
	Append bool
	// Marker, for an Append, is a string Value holds (a hook's command): Undo recognizes the
	// element by it once someone has edited it, and then leaves it alone unless forced.
	Marker string
	// Same, for an Append, recognizes an element that already does what Value does (the user's
	// own entry running the same hook): when the list holds one, nothing is appended.
	Same func(elem any) bool
}

// Change operations.
const (
	opSet    = "set"
	opAppend = "append"
)

// Target is one client config file and the plan for it. A file has one Target: plans for the same
// file (an MCP server and hooks, say) are joined into one Plan.
type Target struct {
	Client string // claude-code, codex, cursor
	File   string // absolute path
	Format Format
	// Plan looks at the current document and returns the edits to make, and notes for the user
	// (an entry already wrapped, ...). A Plan error stops everything before anything is written.
	Plan func(d *Doc) (edits []Edit, notes []string, err error)
}

// Options are Apply's and Undo's settings.
type Options struct {
	Home   string // $OBSERVER_HOME, where the manifest lives
	DryRun bool   // compute and diff, write nothing
	Force  bool   // Undo: restore keys even when they changed since they were set
	Now    func() time.Time
	// BeforeWrite, when set, runs once every file is planned and checked and before anything is
	// written (also in a dry run); its error stops Apply with nothing written.
	BeforeWrite func() error
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// FileReport is what happened to one file.
type FileReport struct {
	Client  string   `json:"client"`
	File    string   `json:"file"`
	Lines   []string `json:"lines"`            // one line per key: "added mcpServers.observer", "unchanged ...", notes
	Diff    string   `json:"diff,omitempty"`   // unified diff of the change ("" when none)
	Backup  string   `json:"backup,omitempty"` // the backup written before the change
	Changed bool     `json:"changed"`          // the file was (or, with DryRun, would be) written
	Removed bool     `json:"removed"`          // the file was created by Apply and removed by Undo
	Kept    int      `json:"kept"`             // Undo: changes left in place because they changed since
	// KeptPaths names the keys and lists of the changes Undo left in place (DisplayPath).
	KeptPaths []string `json:"kept_paths,omitempty"`
	// BackupsRemoved lists the backups of the file removed once they were no longer needed: the
	// older ones when a new one is written, all of them when Undo gave the file back whole.
	BackupsRemoved []string `json:"backups_removed,omitempty"`
}

// ManifestName is the manifest's file name in $OBSERVER_HOME.
const ManifestName = "install.json"

// Manifest records what Apply changed, for Undo.
type Manifest struct {
	Version int          `json:"version"`
	Files   []FileRecord `json:"files"`
}

// FileRecord is one edited file.
type FileRecord struct {
	Client      string   `json:"client"`
	Path        string   `json:"path"`
	Format      Format   `json:"format"`
	CreatedFile bool     `json:"created_file,omitempty"` // the file did not exist before
	Changes     []Change `json:"changes"`
	Backups     []string `json:"backups,omitempty"`
	// EmptyText is the file's text before the first change when it held no key at all (blank,
	// "{ }", comments only): Undo writes it back once the file is empty again.
	EmptyText *string `json:"empty_text,omitempty"`
}

// Change is one edit made by Apply. Op "set": the key Path was set to Installed (Existed,
// Previous and PreviousText tell what it replaced). Op "append": the element Installed was
// appended to the list at Path (Existed, Previous and PreviousText tell what the list was before
// the first such append; Marker is a string the element holds).
type Change struct {
	Op             string          `json:"op"`
	Path           []string        `json:"path"`
	Reason         string          `json:"reason"`
	Existed        bool            `json:"existed"`
	Previous       json.RawMessage `json:"previous,omitempty"`      // the value before, as JSON
	PreviousText   string          `json:"previous_text,omitempty"` // its exact text in the file
	Installed      json.RawMessage `json:"installed"`               // the value set, as JSON
	CreatedParents int             `json:"created_parents,omitempty"`
	Marker         string          `json:"marker,omitempty"`
}

// ManifestPath returns the manifest's path in home.
func ManifestPath(home string) string { return filepath.Join(home, ManifestName) }

// LoadManifest reads home's manifest; a missing one is empty.
func LoadManifest(home string) (*Manifest, error) {
	path := ManifestPath(home)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Manifest{Version: 1}, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w %s: %v (move it away to start over)", ErrMalformed, path, err)
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("%w %s: version %d is not one this observerctl knows", ErrMalformed, path, m.Version)
	}
	return &m, nil
}

func (m *Manifest) save(home string) error {
	path := ManifestPath(home)
	if len(m.Files) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

func (m *Manifest) file(path string) *FileRecord {
	for i := range m.Files {
		if m.Files[i].Path == path {
			return &m.Files[i]
		}
	}
	return nil
}

func (r *FileRecord) change(path []string) *Change {
	for i := range r.Changes {
		if r.Changes[i].Op == opSet && slices.Equal(r.Changes[i].Path, path) {
			return &r.Changes[i]
		}
	}
	return nil
}

// ancestor returns the change that added a value holding path, if any.
func (r *FileRecord) ancestor(path []string) *Change {
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Op == opSet && !c.Existed && len(c.Path) < len(path) && slices.Equal(c.Path, path[:len(c.Path)]) {
			return c
		}
	}
	return nil
}

// appended returns the change that appended an element to the list at path for reason, if any.
func (r *FileRecord) appended(path []string, reason string) *Change {
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Op == opAppend && c.Reason == reason && slices.Equal(c.Path, path) {
			return c
		}
	}
	return nil
}

// loaded is one file read for editing.
type loaded struct {
	report   FileReport
	real     string // the file written: File with symlinks resolved
	orig     []byte // nil when the file does not exist
	exists   bool
	mode     fs.FileMode
	doc      *Doc
	before   any
	paths    [][]string // key paths edited
	record   FileRecord // the manifest record after the change
	drop     bool       // Undo: the record is done with
	removeIt bool       // Undo: remove the file (Apply created it, and it is empty again)
	restore  []byte     // Undo: write this text (the record's EmptyText) instead of the document's
	gone     bool       // Undo: the file no longer exists
	noBackup bool       // write it without a backup (Undo giving it back whole, Codex's trust records)
	extra    bool       // Undo: a file the manifest does not record (Codex's config.toml for its trust records)
}

// output is the text to write.
func (l *loaded) output() []byte {
	if l.restore != nil {
		return l.restore
	}
	return l.doc.Bytes()
}

// read loads a file, which may be missing.
func read(client, file string, f Format) (*loaded, error) {
	l := &loaded{report: FileReport{Client: client, File: file}, real: file, mode: 0o600}
	if r, err := filepath.EvalSymlinks(file); err == nil {
		l.real = r
	}
	data, err := os.ReadFile(l.real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		fi, err := os.Stat(l.real)
		if err != nil {
			return nil, err
		}
		l.orig, l.exists, l.mode = data, true, fi.Mode().Perm()
	}
	doc, err := ParseDoc(f, data)
	if err != nil {
		return nil, fmt.Errorf("%w %s: it is not valid %s (%v); fix or move it, then run again", ErrMalformed, file, f, err)
	}
	l.doc, l.before = doc, doc.Tree()
	return l, nil
}

// Apply plans every target, checks the results, and then (unless DryRun) writes the files that
// change, a backup of each first, and records the changes in the manifest.
func Apply(targets []Target, opts Options) ([]FileReport, error) {
	man, err := LoadManifest(opts.Home)
	if err != nil {
		return nil, err
	}
	var files []*loaded
	for i, t := range targets {
		if slices.ContainsFunc(targets[:i], func(o Target) bool { return o.File == t.File }) {
			return nil, fmt.Errorf("two targets for %s: join their plans into one", t.File)
		}
		l, err := read(t.Client, t.File, t.Format)
		if err != nil {
			return nil, err
		}
		edits, notes, err := t.Plan(l.doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.File, err)
		}
		rec := FileRecord{Client: t.Client, Path: t.File, Format: t.Format, CreatedFile: !l.exists}
		if l.exists && isEmpty(l.before) {
			text := string(l.orig)
			rec.EmptyText = &text
		}
		if old := man.file(t.File); old != nil {
			rec = *old
			rec.Changes = slices.Clone(old.Changes)
		}
		for _, e := range edits {
			line, err := applyEdit(l, &rec, e)
			if err != nil {
				return nil, fmt.Errorf("%w %s: %v", ErrMalformed, t.File, err)
			}
			l.report.Lines = append(l.report.Lines, line)
		}
		l.report.Lines = append(l.report.Lines, notes...)
		l.record = rec
		if err := l.check(); err != nil {
			return nil, err
		}
		files = append(files, l)
	}
	return finish(files, man, opts)
}

// applyEdit makes one edit and updates the file's manifest record.
func applyEdit(l *loaded, rec *FileRecord, e Edit) (string, error) {
	if e.Append {
		return applyAppend(l, rec, e)
	}
	what := DisplayPath(e.Path)
	cur, exists := l.doc.Lookup(e.Path...)
	if exists && equal(cur, e.Value) {
		return "unchanged " + what, nil
	}
	if anc := rec.ancestor(e.Path); anc != nil {
		// Inside a value Apply added: that value is ours as a whole, and stays one change.
		if _, err := l.doc.Set(e.Path, e.Value); err != nil {
			return "", fmt.Errorf("set %s: %v", what, err)
		}
		v, _ := l.doc.Lookup(anc.Path...)
		anc.Installed = toJSON(v)
		l.paths = append(l.paths, e.Path)
		return "changed " + what + " (" + e.Reason + ")", nil
	}
	ch := rec.change(e.Path)
	if ch == nil {
		rec.Changes = append(rec.Changes, Change{Op: opSet, Path: e.Path, Existed: exists})
		ch = &rec.Changes[len(rec.Changes)-1]
		if exists {
			raw, ok := l.doc.Raw(e.Path)
			if !ok {
				return "", fmt.Errorf("%s exists and cannot be replaced in place", what)
			}
			ch.Previous, ch.PreviousText = toJSON(cur), string(raw)
		}
	}
	created, err := l.doc.Set(e.Path, e.Value)
	if err != nil {
		return "", fmt.Errorf("set %s: %v", what, err)
	}
	if !ch.Existed && ch.CreatedParents == 0 {
		ch.CreatedParents = created
	}
	ch.Installed, ch.Reason = toJSON(e.Value), e.Reason
	l.paths = append(l.paths, e.Path)
	verb := "added "
	if exists {
		verb = "changed "
	}
	return verb + what + " (" + e.Reason + ")", nil
}

// applyAppend appends one element to a list and updates the file's manifest record.
func applyAppend(l *loaded, rec *FileRecord, e Edit) (string, error) {
	what := DisplayPath(e.Path)
	cur, exists := l.doc.Lookup(e.Path...)
	list, isList := cur.([]any)
	if exists && !isList {
		return "", fmt.Errorf("%s is not a list", what)
	}
	if slices.ContainsFunc(list, func(x any) bool { return equal(x, e.Value) }) {
		return "unchanged " + what + " (" + e.Reason + ")", nil
	}
	ch := rec.appended(e.Path, e.Reason)
	old := -1
	if ch != nil {
		if v, err := decodeJSON(ch.Installed); err == nil {
			old = lastIndex(list, func(x any) bool { return equal(x, v) })
		}
	}
	if e.Same != nil {
		for i, x := range list {
			if i != old && e.Same(x) {
				return "left " + what + " as it is: it already has an entry that does this (" + e.Reason + ")", nil
			}
		}
	}
	want := slices.Clone(list)
	if old >= 0 {
		if err := l.doc.DeleteElem(e.Path, old); err != nil {
			return "", fmt.Errorf("replace the entry of %s: %v", what, err)
		}
		want = slices.Delete(want, old, old+1)
	}
	fresh := ch == nil
	if fresh {
		rec.Changes = append(rec.Changes, Change{Op: opAppend, Path: e.Path})
		ch = &rec.Changes[len(rec.Changes)-1]
	}
	if exists {
		if fresh {
			raw, ok := l.doc.Raw(e.Path)
			if !ok {
				return "", fmt.Errorf("%s cannot be edited in place", what)
			}
			ch.Existed, ch.Previous, ch.PreviousText = true, toJSON(cur), string(raw)
		}
		if err := l.doc.Append(e.Path, e.Value); err != nil {
			return "", fmt.Errorf("append to %s: %v", what, err)
		}
	} else {
		// The list is new (or someone removed it since an earlier Apply): Undo removes it again.
		created, err := l.doc.Set(e.Path, []any{e.Value})
		if err != nil {
			return "", fmt.Errorf("set %s: %v", what, err)
		}
		ch.Existed, ch.Previous, ch.PreviousText, ch.CreatedParents = false, nil, "", created
	}
	ch.Installed, ch.Marker, ch.Reason = toJSON(e.Value), e.Marker, e.Reason
	l.paths = append(l.paths, e.Path)
	want = append(want, e.Value)
	if got, _ := l.doc.Lookup(e.Path...); !equal(got, want) {
		return "", fmt.Errorf("internal error: appending to %s would change its other elements", what)
	}
	if old >= 0 {
		return "replaced the entry in " + what + " (" + e.Reason + ")", nil
	}
	return "added an entry to " + what + " (" + e.Reason + ")", nil
}

func lastIndex(list []any, f func(any) bool) int {
	for i := len(list) - 1; i >= 0; i-- {
		if f(list[i]) {
			return i
		}
	}
	return -1
}

// holds reports whether v is the string s or holds it at any depth.
func holds(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return v == s
	case map[string]any:
		for _, x := range v {
			if holds(x, s) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if holds(x, s) {
				return true
			}
		}
	}
	return false
}

// check verifies the edited text: it parses, and apart from the edited paths it holds what the
// original held.
func (l *loaded) check() error {
	after, err := ParseDoc(l.doc.Format, l.doc.Bytes())
	if err != nil {
		return fmt.Errorf("internal error: the edited %s would not parse (%v); nothing written", l.report.File, err)
	}
	if !equal(prune(l.before, l.paths), prune(after.Tree(), l.paths)) {
		return fmt.Errorf("internal error: editing %s would change keys it should not; nothing written", l.report.File)
	}
	return nil
}

// finish diffs every file and, unless DryRun, writes the changed ones and the manifest.
func finish(files []*loaded, man *Manifest, opts Options) ([]FileReport, error) {
	if opts.BeforeWrite != nil {
		if err := opts.BeforeWrite(); err != nil {
			return nil, err
		}
	}
	var reports []FileReport
	for _, l := range files {
		newData := l.output()
		// Only an edit makes a write: an empty file parsed as {} is not rewritten as "{}".
		l.report.Changed = l.removeIt || (len(l.paths) > 0 || l.restore != nil) && !bytes.Equal(newData, l.orig)
		if l.report.Changed {
			after := newData
			if l.removeIt {
				after = nil
			}
			l.report.Diff = maskDiff(Unified(l.report.File, l.report.File+" (after)", l.orig, after), l.before, l.doc.Tree())
		}
		reports = append(reports, l.report)
	}
	if opts.DryRun {
		return reports, nil
	}
	for i, l := range files {
		if l.report.Changed {
			backup, err := l.write(opts.now())
			if err != nil {
				return reports, err
			}
			reports[i].Backup, reports[i].Removed = backup, l.removeIt
		}
		older := l.record.Backups
		if reports[i].Backup != "" {
			// One backup per file: the file as it was before observerctl's last write to it.
			l.record.Backups = []string{reports[i].Backup}
		}
		man.put(l.record, l.drop)
		if err := man.save(opts.Home); err != nil {
			return reports, fmt.Errorf("write the manifest %s: %w (the config files are written; their backups are beside them)", ManifestPath(opts.Home), err)
		}
		// Only now that the file and the manifest are written are the older backups not needed.
		switch {
		case l.extra:
		case l.drop && l.gone:
			if len(older) > 0 {
				reports[i].Lines = append(reports[i].Lines, "its backups stay, in case you want it back: "+strings.Join(older, ", "))
			}
		case l.drop:
			// Undo gave the file back: the backups (which may hold tokens) are not needed any more.
			reports[i].BackupsRemoved = removeBackups(l.report.File, older, "")
		case reports[i].Backup != "":
			reports[i].BackupsRemoved = removeBackups(l.report.File, older, reports[i].Backup)
		}
		if n := len(reports[i].BackupsRemoved); n > 0 && l.drop {
			reports[i].Lines = append(reports[i].Lines, fmt.Sprintf("removed the %d backup(s) observerctl kept of it: nothing of observer's is left in it", n))
		} else if n > 0 {
			reports[i].Lines = append(reports[i].Lines, fmt.Sprintf("removed %d older backup(s) of it: the one written now is kept", n))
		}
	}
	return reports, nil
}

// backupSuffix matches the names writeBackup gives, after the file's name.
var backupSuffix = regexp.MustCompile(`^\.observer-backup-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z(-[0-9]+)?$`)

// removeBackups removes the backups of file but keep: those recorded, and any other file beside it
// named as writeBackup names them (left by an earlier observerctl, whose manifest forgot them). It
// returns those removed.
func removeBackups(file string, recorded []string, keep string) []string {
	cands := slices.Clone(recorded)
	if ents, err := os.ReadDir(filepath.Dir(file)); err == nil {
		base := filepath.Base(file)
		for _, e := range ents {
			if rest, ok := strings.CutPrefix(e.Name(), base); ok && backupSuffix.MatchString(rest) && e.Type().IsRegular() {
				cands = append(cands, filepath.Join(filepath.Dir(file), e.Name()))
			}
		}
	}
	slices.Sort(cands)
	var out []string
	for _, b := range slices.Compact(cands) {
		if b == keep || !strings.HasPrefix(b, file+".observer-backup-") {
			continue
		}
		if err := os.Remove(b); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// put stores rec in the manifest, or removes it when it is done with or empty.
func (m *Manifest) put(rec FileRecord, drop bool) {
	m.Files = slices.DeleteFunc(m.Files, func(r FileRecord) bool { return r.Path == rec.Path })
	if !drop && len(rec.Changes) > 0 {
		m.Files = append(m.Files, rec)
	}
}

// write backs the file up, then writes (or removes) it, unless it changed since it was read.
func (l *loaded) write(now time.Time) (string, error) {
	cur, err := os.ReadFile(l.real)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !l.exists:
	case err != nil:
		return "", fmt.Errorf("%s: %w", l.report.File, err)
	case !l.exists || !bytes.Equal(cur, l.orig):
		return "", fmt.Errorf("%s %w (is the client running and saving it?); nothing written to it, run again", l.report.File, ErrChanged)
	}
	var backup string
	// A file removed by Undo held only what Apply put in it: nothing of the user's to back up.
	if l.exists && !l.removeIt && !l.noBackup {
		if backup, err = writeBackup(l.report.File, l.orig, now); err != nil {
			return "", err
		}
	}
	if l.removeIt {
		return backup, os.Remove(l.real)
	}
	if err := os.MkdirAll(filepath.Dir(l.real), 0o700); err != nil {
		return "", err
	}
	return backup, atomicfile.Write(l.real, l.output(), l.mode)
}

// writeBackup copies data to file.observer-backup-<UTC time> (mode 0600), never over an
// existing file.
func writeBackup(file string, data []byte, now time.Time) (string, error) {
	base := file + ".observer-backup-" + now.UTC().Format("20060102T150405.000Z")
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", file, err)
		}
		_, err = f.Write(data)
		if err2 := f.Close(); err == nil {
			err = err2
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("back up %s: %w", file, err)
		}
		return name, nil
	}
}

// prune returns a copy of tree without the given paths, and without the objects on those paths
// that are empty (an object created only to hold an edited key is not a difference).
func prune(tree any, paths [][]string) any {
	t := deepCopy(tree)
	for _, p := range paths {
		for n := len(p); n > 0; n-- {
			parent, _ := lookup(t, p[:n-1])
			m, isMap := parent.(map[string]any)
			if !isMap {
				continue
			}
			if sub, isMap := m[p[n-1]].(map[string]any); n == len(p) || isMap && len(sub) == 0 {
				delete(m, p[n-1])
				continue
			}
			break
		}
	}
	return t
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// Undo restores what the manifest says Apply changed: each key gets back its previous text, or is
// removed when it did not exist (with the objects Apply created for it, when they are empty
// again), newest change first. A key whose value is no longer the one Apply set was changed by
// someone since: it is left as it is, and kept in the manifest, unless opts.Force.
func Undo(opts Options) ([]FileReport, error) {
	man, err := LoadManifest(opts.Home)
	if err != nil {
		return nil, err
	}
	var files []*loaded
	var trust []trustCleanup
	for _, rec := range man.Files {
		l, err := read(rec.Client, rec.Path, rec.Format)
		if err != nil {
			return nil, err
		}
		l.record = rec
		codexHooks := rec.Client == Codex && rec.Format == JSON
		if !l.exists {
			l.report.Lines = append(l.report.Lines, "the file is gone: nothing to restore")
			l.drop, l.gone = true, true
			if codexHooks {
				trust = append(trust, trustCleanup{file: rec.Path, all: true})
			}
			files = append(files, l)
			continue
		}
		dirty, err := dirtyGroups(l.doc, rec.Changes)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrMalformed, rec.Path, err)
		}
		var kept []Change
		var removed []hookAt
		for i := len(rec.Changes) - 1; i >= 0; i-- {
			ch := rec.Changes[i]
			if dirty[groupOf(ch)] && !opts.Force {
				kept = append([]Change{ch}, kept...)
				l.report.KeptPaths = append([]string{DisplayPath(ch.Path)}, l.report.KeptPaths...)
				if ch.Op == opAppend {
					now := ""
					if at, _, err := findAppended(l.doc, ch); err == nil && at >= 0 {
						list, _ := l.doc.Lookup(ch.Path...)
						if cmds := Commands(list.([]any)[at]); len(cmds) > 0 {
							now = fmt.Sprintf(" (it now runs %q)", strings.Join(cmds, "; "))
						}
					}
					l.report.Lines = append(l.report.Lines, "left the entry init added to "+DisplayPath(ch.Path)+
						" as it is: it changed since init"+now+"; uninstall --force removes it anyway")
				} else {
					l.report.Lines = append(l.report.Lines, "left "+DisplayPath(ch.Path)+
						" as it is: it (or a key set with it) changed since init; uninstall --force restores it anyway")
				}
				continue
			}
			if codexHooks && ch.Op == opAppend && ch.Reason == HookReason && len(ch.Path) == 2 {
				if at, _, err := findAppended(l.doc, ch); err == nil && at >= 0 {
					removed = append(removed, hookAt{event: ch.Path[1], index: at})
				}
			}
			line, err := undoChange(l, ch)
			if err != nil {
				return nil, fmt.Errorf("%w %s: %v", ErrMalformed, rec.Path, err)
			}
			l.report.Lines = append(l.report.Lines, line)
		}
		l.record.Changes, l.report.Kept = kept, len(kept)
		l.drop = len(kept) == 0
		// Given back whole, the file holds nothing of observer's: nothing to back up (the change is
		// checked, and written atomically), and its backups go too (see finish).
		l.noBackup = l.drop
		if l.drop && isEmpty(l.doc.Tree()) {
			switch {
			case rec.CreatedFile:
				l.removeIt = true
				l.report.Lines = append(l.report.Lines, "removed the file, which init had created")
			case rec.EmptyText != nil:
				l.restore = []byte(*rec.EmptyText)
			}
		}
		if err := l.check(); err != nil {
			return nil, err
		}
		if codexHooks {
			trust = append(trust, trustCleanup{file: rec.Path, real: l.real, all: l.removeIt, removed: removed})
		}
		files = append(files, l)
	}
	files, err = forgetCodexTrust(files, trust)
	if err != nil {
		return nil, err
	}
	return finish(files, man, opts)
}

// groupOf names the unit a change is undone in: the keys set for one reason in one object (a
// wrapped server's command and args) are restored together or not at all.
func groupOf(ch Change) string {
	if ch.Op == opAppend {
		// An appended element is its own unit.
		return opAppend + "\x00" + ch.Reason + "\x00" + DisplayPath(ch.Path)
	}
	return ch.Reason + "\x00" + DisplayPath(ch.Path[:len(ch.Path)-1])
}

// dirtyGroups finds the groups with a key whose value is no longer the one Apply set.
func dirtyGroups(d *Doc, changes []Change) (map[string]bool, error) {
	dirty := map[string]bool{}
	for _, ch := range changes {
		if ch.Op == opAppend {
			_, edited, err := findAppended(d, ch)
			if err != nil {
				return nil, err
			}
			if edited {
				dirty[groupOf(ch)] = true
			}
			continue
		}
		if ch.Op != opSet {
			return nil, fmt.Errorf("the manifest has a change of kind %q, which this observerctl cannot undo", ch.Op)
		}
		installed, err := decodeJSON(ch.Installed)
		if err != nil {
			return nil, fmt.Errorf("the manifest's value for %s: %v", DisplayPath(ch.Path), err)
		}
		if cur, ok := d.Lookup(ch.Path...); !undone(d, ch) && (!ok || !equal(cur, installed)) {
			dirty[groupOf(ch)] = true
		}
	}
	return dirty, nil
}

// undone reports whether the key is already as it was before the change (someone removed the
// entry init added, say).
func undone(d *Doc, ch Change) bool {
	cur, ok := d.Lookup(ch.Path...)
	if !ch.Existed {
		return !ok
	}
	prev, err := decodeJSON(ch.Previous)
	return ok && err == nil && equal(cur, prev)
}

// findAppended finds the element an append change added in the list at its path: the last one
// equal to it, else (edited) the last one holding its marker, else (for a hook entry whose command
// the user edited) the last entry that looks like observer's hook and was not in the list before
// init; -1 when there is none.
func findAppended(d *Doc, ch Change) (i int, edited bool, err error) {
	installed, err := decodeJSON(ch.Installed)
	if err != nil {
		return -1, false, fmt.Errorf("the manifest's value for %s: %v", DisplayPath(ch.Path), err)
	}
	cur, _ := d.Lookup(ch.Path...)
	list, _ := cur.([]any)
	if i := lastIndex(list, func(x any) bool { return equal(x, installed) }); i >= 0 {
		return i, false, nil
	}
	if ch.Marker != "" {
		if i := lastIndex(list, func(x any) bool { return holds(x, ch.Marker) }); i >= 0 {
			return i, true, nil
		}
	}
	if ch.Reason == HookReason {
		var before []any
		if ch.Existed {
			prev, _ := decodeJSON(ch.Previous)
			before, _ = prev.([]any)
		}
		used := make([]bool, len(before))
		found := -1
		for j, x := range list {
			k := slices.IndexFunc(before, func(y any) bool { return equal(x, y) })
			for k >= 0 && used[k] {
				n := slices.IndexFunc(before[k+1:], func(y any) bool { return equal(x, y) })
				if n < 0 {
					k = -1
				} else {
					k += 1 + n
				}
			}
			if k >= 0 {
				used[k] = true // one of the entries that were there before init
				continue
			}
			if looksLikeObserverHook(x) {
				found = j
			}
		}
		if found >= 0 {
			return found, true, nil
		}
	}
	return -1, false, nil
}

// undoAppend removes the element an append change added (the edited one, when forced). When the
// rest of the list is what it was before, the list gets back its exact previous text; a list init
// created goes when it is empty again, with the objects created for it.
func undoAppend(l *loaded, ch Change) (string, error) {
	what := DisplayPath(ch.Path)
	i, _, err := findAppended(l.doc, ch)
	if err != nil {
		return "", err
	}
	if i < 0 {
		return "already as before init: " + what + " holds no entry init added", nil
	}
	cur, _ := l.doc.Lookup(ch.Path...)
	rest := slices.Delete(slices.Clone(cur.([]any)), i, i+1)
	l.paths = append(l.paths, ch.Path)
	prev, perr := decodeJSON(ch.Previous)
	gone := !ch.Existed && len(rest) == 0
	switch {
	case ch.Existed && perr == nil && ch.PreviousText != "" && equal(rest, prev):
		err = l.doc.SetRaw(ch.Path, []byte(ch.PreviousText))
	case gone:
		if err = l.doc.Delete(ch.Path); err == nil {
			err = removeCreatedParents(l.doc, ch)
		}
	default:
		err = l.doc.DeleteElem(ch.Path, i)
	}
	if err != nil {
		return "", fmt.Errorf("remove the entry init added to %s: %v", what, err)
	}
	if after, ok := l.doc.Lookup(ch.Path...); ok == gone || ok && !equal(after, rest) {
		return "", fmt.Errorf("internal error: removing the entry init added to %s would change its other elements", what)
	}
	return "removed the entry init added to " + what, nil
}

// removeCreatedParents removes the objects Apply created to hold ch's key, innermost first, while
// they are empty.
func removeCreatedParents(d *Doc, ch Change) error {
	for n := 1; n <= ch.CreatedParents && n < len(ch.Path); n++ {
		parent := ch.Path[:len(ch.Path)-n]
		if v, ok := d.Lookup(parent...); !ok || !isEmpty(v) {
			break
		}
		if err := d.Delete(parent); err != nil {
			return fmt.Errorf("remove %s: %v", DisplayPath(parent), err)
		}
	}
	return nil
}

// undoChange reverts one change.
func undoChange(l *loaded, ch Change) (string, error) {
	if ch.Op == opAppend {
		return undoAppend(l, ch)
	}
	what := DisplayPath(ch.Path)
	if undone(l.doc, ch) {
		return "already as before init: " + what, nil
	}
	l.paths = append(l.paths, ch.Path)
	if ch.Existed {
		if err := l.doc.SetRaw(ch.Path, []byte(ch.PreviousText)); err != nil {
			return "", fmt.Errorf("restore %s: %v", what, err)
		}
		return "restored " + what, nil
	}
	if err := l.doc.Delete(ch.Path); err != nil {
		return "", fmt.Errorf("remove %s: %v", what, err)
	}
	if err := removeCreatedParents(l.doc, ch); err != nil {
		return "", err
	}
	return "removed " + what, nil
}

func isEmpty(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
