package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestApply_RegisterKeepsEverythingElse(t *testing.T) {
	f := newFixture(t)
	reports, err := Apply(f.targets(true, nil, nil), Options{Home: f.obs})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 3 {
		t.Fatalf("%d reports, want one per client", len(reports))
	}
	want := map[string]Object{
		f.claude: entry(ClaudeCode, observerMCP),
		f.codex:  entry(Codex, observerMCP),
		f.cursor: entry(Cursor, observerMCP),
	}
	for _, c := range []struct {
		file   string
		format Format
		orig   []byte
		key    string
		mode   os.FileMode
	}{
		{f.claude, JSON, f.origClaude, "mcpServers", 0o600},
		{f.codex, TOML, f.origCodex, "mcp_servers", 0o640},
		{f.cursor, JSON, f.origCursor, "mcpServers", 0o644},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			got := readFile(t, c.file)
			d := parse(t, c.format, got)
			v, ok := d.Lookup(c.key, "observer")
			if !ok || !equal(v, want[c.file]) {
				t.Fatalf("%s.observer = %v, want %v\n%s", c.key, v, normalize(want[c.file]), got)
			}
			// One contiguous insertion; what it displaced is at most a comma and line breaks.
			oldMid, newMid := changedRegion(c.orig, got)
			if !onlyPunctuation(oldMid) || !strings.Contains(newMid, observerMCP.Command) {
				t.Errorf("the edit is not one insertion:\nremoved %q\nadded %q", oldMid, newMid)
			}
			// Everything else parses to the same values.
			before := parse(t, c.format, c.orig).Tree()
			if !equal(prune(before, nil), prune(d.Tree(), [][]string{{c.key, "observer"}})) {
				t.Error("keys other than the new server changed")
			}
			if fi, _ := os.Stat(c.file); fi.Mode().Perm() != c.mode {
				t.Errorf("mode %v, want the file's own %v", fi.Mode().Perm(), c.mode)
			}
			bs := backups(t, c.file)
			if len(bs) != 1 {
				t.Fatalf("backups %v, want one", bs)
			}
			if fi, _ := os.Stat(bs[0]); fi.Mode().Perm() != 0o600 {
				t.Errorf("backup mode %v, want 0600", fi.Mode().Perm())
			}
			if !bytes.Equal(readFile(t, bs[0]), c.orig) {
				t.Error("the backup does not hold the original")
			}
		})
	}
	if fi, err := os.Stat(ManifestPath(f.obs)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("manifest: %v, %v; want a 0600 file", fi, err)
	}
}

func TestApply_TOMLCommentsSurvive(t *testing.T) {
	f := newFixture(t)
	seen := map[string]int{}
	if _, err := Apply(f.targets(true, []string{"github"}, seen), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	got := string(readFile(t, f.codex))
	// Every comment stays, except the one inside the replaced args value, which went with the
	// value (uninstall puts it back).
	for _, line := range strings.Split(codexFixture, "\n") {
		_, comment, ok := strings.Cut(line, "#")
		if ok && !strings.Contains(line, "the official one") && !strings.Contains(got, "#"+comment+"\n") {
			t.Errorf("comment %q is gone:\n%s", comment, got)
		}
	}
	// The comment after the wrapped command stays on its line.
	if !strings.Contains(got, `command = "/opt/observer/bin/observer-mcp"   # from npm`) {
		t.Errorf("the command's value was not replaced in place:\n%s", got)
	}
	if !strings.Contains(got, "[mcp_servers.github.env]\nGITHUB_TOKEN = \"ghp_x\"\n") {
		t.Errorf("the server's env table changed:\n%s", got)
	}
}

func TestApply_DryRunWritesNothing(t *testing.T) {
	f := newFixture(t)
	seen := map[string]int{}
	reports, err := Apply(f.targets(true, []string{"github"}, seen), Options{Home: f.obs, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if !r.Changed || r.Backup != "" {
			t.Errorf("%s: changed %v backup %q; want a change planned and no backup", r.File, r.Changed, r.Backup)
		}
		if !containsAll(r.Diff, "--- "+r.File+"\n", "+++ ", "@@ -", "+", observerMCP.Command) {
			t.Errorf("%s: diff is not a unified diff of the change:\n%s", r.File, r.Diff)
		}
		// The diff, applied to the file, gives what Apply would write.
		want := func() []byte {
			d := parse(t, map[bool]Format{true: TOML, false: JSON}[r.Client == Codex], readFile(t, r.File))
			var t2 []Target
			for _, tg := range f.targets(true, []string{"github"}, map[string]int{}) {
				if tg.File == r.File {
					t2 = append(t2, tg)
				}
			}
			edits, _, _ := t2[0].Plan(d)
			for _, e := range edits {
				d.Set(e.Path, e.Value)
			}
			return d.Bytes()
		}()
		// The diff masks the secrets (the env's GITHUB_TOKEN): applied to the masked file, it gives
		// the masked planned text.
		format := map[bool]Format{true: TOML, false: JSON}[r.Client == Codex]
		trees := []any{parse(t, format, readFile(t, r.File)).Tree(), parse(t, format, want).Tree()}
		if got := applyUnified(t, maskedText(readFile(t, r.File), trees...), r.Diff); !bytes.Equal(got, maskedText(want, trees...)) {
			t.Errorf("%s: the diff does not produce the planned text:\n%s", r.File, r.Diff)
		}
		if strings.Contains(r.Diff, "ghp_x") {
			t.Errorf("%s: the diff shows the env's token:\n%s", r.File, r.Diff)
		}
	}
	for file, orig := range map[string][]byte{f.claude: f.origClaude, f.codex: f.origCodex, f.cursor: f.origCursor} {
		if !bytes.Equal(readFile(t, file), orig) {
			t.Errorf("%s changed in a dry run", file)
		}
		if b := backups(t, file); len(b) != 0 {
			t.Errorf("dry run wrote backups %v", b)
		}
	}
	if _, err := os.Stat(ManifestPath(f.obs)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run wrote the manifest (%v)", err)
	}
	if seen["github"] != 2 {
		t.Errorf("github seen %d times, want 2 (Claude Code's project, Codex)", seen["github"])
	}
}

func TestApply_Idempotent(t *testing.T) {
	f := newFixture(t)
	seen := map[string]int{}
	if _, err := Apply(f.targets(true, []string{"github", "filesystem"}, seen), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	first := map[string][]byte{f.claude: readFile(t, f.claude), f.codex: readFile(t, f.codex), f.cursor: readFile(t, f.cursor)}
	man1 := readFile(t, ManifestPath(f.obs))
	reports, err := Apply(f.targets(true, []string{"github", "filesystem"}, seen), Options{Home: f.obs, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.Changed {
			t.Errorf("second init changed %s:\n%s", r.File, r.Diff)
		}
	}
	for file, b := range first {
		if !bytes.Equal(readFile(t, file), b) {
			t.Errorf("second init rewrote %s", file)
		}
		if n := len(backups(t, file)); n != 1 {
			t.Errorf("%s: %d backups after two inits, want 1", file, n)
		}
	}
	if !bytes.Equal(readFile(t, ManifestPath(f.obs)), man1) {
		t.Error("second init changed the manifest")
	}
}

func TestWrap_UninstallRestoresExactly(t *testing.T) {
	f := newFixture(t)
	seen := map[string]int{}
	reports, err := Apply(f.targets(true, []string{"github", "filesystem", "linear", "docs"}, seen), Options{Home: f.obs})
	if err != nil {
		t.Fatal(err)
	}
	claude := parse(t, JSON, readFile(t, f.claude))
	wantArgs := []string{"--home", "/srv/obs", "wrap", "--", "npx", "-y", "@modelcontextprotocol/server-github"}
	for _, c := range []struct {
		d    *Doc
		path []string
	}{
		{claude, []string{"projects", "/home/dev/app", "mcpServers", "github"}},
		{parse(t, TOML, readFile(t, f.codex)), []string{"mcp_servers", "github"}},
	} {
		e, _ := c.d.Lookup(c.path...)
		m, _ := e.(map[string]any)
		if !equal(m["command"], observerMCP.Command) || !equal(m["args"], wantArgs) {
			t.Errorf("%s = %v, want command %s args %v", DisplayPath(c.path), e, observerMCP.Command, wantArgs)
		}
		if env, _ := m["env"].(map[string]any); env["GITHUB_TOKEN"] != "ghp_x" {
			t.Errorf("%s lost its env: %v", DisplayPath(c.path), e)
		}
	}
	if c, _ := claude.Lookup("mcpServers", "docs", "url"); c != "https://example.com/mcp" {
		t.Error("an http server was changed")
	}
	var notes []string
	for _, r := range reports {
		notes = append(notes, r.Lines...)
	}
	if !containsAll(strings.Join(notes, "\n"), "not wrapped mcpServers.docs: it is a http server") {
		t.Errorf("no note on the http server:\n%s", strings.Join(notes, "\n"))
	}
	if seen["linear"] != 1 || seen["filesystem"] != 1 || seen["docs"] != 0 {
		t.Errorf("seen = %v", seen)
	}

	if _, err := Undo(Options{Home: f.obs, Now: func() time.Time { return time.Now().Add(time.Second) }}); err != nil {
		t.Fatal(err)
	}
	for file, orig := range map[string][]byte{f.claude: f.origClaude, f.codex: f.origCodex, f.cursor: f.origCursor} {
		if got := readFile(t, file); !bytes.Equal(got, orig) {
			o, n := changedRegion(orig, got)
			t.Errorf("%s is not restored byte for byte: %q became %q", file, o, n)
		}
		if b := backups(t, file); len(b) != 0 {
			t.Errorf("%s: backups %v left after a full uninstall, want none", file, b)
		}
	}
	if _, err := os.Stat(ManifestPath(f.obs)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the manifest is still there after a full uninstall (%v)", err)
	}
}

func TestUndo_KeepsUserEdits(t *testing.T) {
	f := newFixture(t)
	if _, err := Apply(f.targets(true, []string{"github"}, map[string]int{}), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	// The user (or the client) changes other keys, adds a server, and edits the Codex github entry.
	edit := func(file string, format Format, edits map[string]any) {
		d := parse(t, format, readFile(t, file))
		for p, v := range edits {
			if _, err := d.Set(strings.Split(p, "|"), v); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(t, file, d.Bytes(), 0o600)
	}
	edit(f.claude, JSON, map[string]any{
		"numStartups":         json.RawMessage("43"),
		"mcpServers|mine":     Object{{"command", "my-server"}},
		"projects|/new|trust": true,
	})
	edit(f.codex, TOML, map[string]any{
		"model_providers|local|name":   "Local 2",
		"mcp_servers|github|args":      []string{"--home", "/srv/obs", "wrap", "--", "npx", "-y", "other"},
		"mcp_servers|github|extra_key": "x",
	})
	claudeEdited := parse(t, JSON, readFile(t, f.claude)).Tree()

	reports, err := Undo(Options{Home: f.obs})
	if err != nil {
		t.Fatal(err)
	}
	claude := parse(t, JSON, readFile(t, f.claude))
	for _, k := range [][]string{{"numStartups"}, {"mcpServers", "mine"}, {"projects", "/new"}} {
		a, _ := lookup(claudeEdited, k)
		b, ok := claude.Lookup(k...)
		if !ok || !equal(a, b) {
			t.Errorf("the user's %s was not kept: %v", DisplayPath(k), b)
		}
	}
	if _, ok := claude.Lookup("mcpServers", "observer"); ok {
		t.Error("mcpServers.observer is still there")
	}
	if c, _ := claude.Lookup("projects", "/home/dev/app", "mcpServers", "github", "command"); c != "npx" {
		t.Errorf("Claude Code's github command = %v, want npx back", c)
	}
	codex := parse(t, TOML, readFile(t, f.codex))
	if v, _ := codex.Lookup("model_providers", "local", "name"); v != "Local 2" {
		t.Errorf("the user's model_providers.local.name = %v", v)
	}
	if _, ok := codex.Lookup("mcp_servers", "observer"); ok {
		t.Error("mcp_servers.observer is still there")
	}
	// The edited wrap is left whole: its command is not reverted under changed args.
	if c, _ := codex.Lookup("mcp_servers", "github", "command"); c != observerMCP.Command {
		t.Errorf("mcp_servers.github.command = %v: a half-undone entry", c)
	}
	kept := 0
	for _, r := range reports {
		kept += r.Kept
	}
	if kept != 2 {
		t.Errorf("kept %d changes, want 2 (Codex github command and args)", kept)
	}
	man, err := LoadManifest(f.obs)
	if err != nil || len(man.Files) != 1 || man.Files[0].Path != f.codex || len(man.Files[0].Changes) != 2 {
		t.Fatalf("manifest after a partial uninstall: %+v, %v", man, err)
	}
	// --force restores the rest.
	if _, err := Undo(Options{Home: f.obs, Force: true}); err != nil {
		t.Fatal(err)
	}
	codex = parse(t, TOML, readFile(t, f.codex))
	if c, _ := codex.Lookup("mcp_servers", "github", "command"); c != "npx" {
		t.Errorf("after --force, command = %v", c)
	}
	if a, _ := codex.Lookup("mcp_servers", "github", "args"); !equal(a, []string{"-y", "@modelcontextprotocol/server-github"}) {
		t.Errorf("after --force, args = %v", a)
	}
	if v, _ := codex.Lookup("mcp_servers", "github", "extra_key"); v != "x" {
		t.Error("--force touched a key init never set")
	}
}

func TestUndo_EntryAlreadyRemovedByUser(t *testing.T) {
	f := newFixture(t)
	if _, err := Apply(f.targets(true, nil, nil), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	d := parse(t, JSON, readFile(t, f.claude))
	if err := d.Delete([]string{"mcpServers", "observer"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.claude, d.Bytes(), 0o600)
	reports, err := Undo(Options{Home: f.obs})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.Kept != 0 {
			t.Errorf("%s: kept %d; an entry the user removed is already undone", r.File, r.Kept)
		}
	}
	if !bytes.Equal(readFile(t, f.claude), f.origClaude) {
		t.Error("claude.json differs from the original")
	}
}

func TestApply_MissingFiles(t *testing.T) {
	dir := t.TempDir()
	home, obs := filepath.Join(dir, "home"), filepath.Join(dir, "obs")
	var targets []Target
	for _, l := range Locate(home, func(string) string { return "" }) {
		if l.Found {
			t.Errorf("%s found in an empty home", l.Client)
		}
		targets = append(targets, Target{Client: l.Client, File: l.File, Format: l.Format, Plan: RegisterPlan(l.Client, "observer", observerMCP)})
	}
	if _, err := Apply(targets, Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		fi, err := os.Stat(tg.File)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v; want a new 0600 file", tg.File, fi, err)
		}
		d := parse(t, tg.Format, readFile(t, tg.File))
		if v, ok := d.Lookup(serversAt(tg.Client)[0], "observer"); !ok || !equal(v, entry(tg.Client, observerMCP)) {
			t.Errorf("%s: %s", tg.File, d.Bytes())
		}
		if b := backups(t, tg.File); len(b) != 0 {
			t.Errorf("backups of a file that did not exist: %v", b)
		}
	}
	if _, err := Undo(Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if _, err := os.Stat(tg.File); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: uninstall left the file init created (%v)", tg.File, err)
		}
	}
}

func TestApply_MalformedWritesNothing(t *testing.T) {
	for _, c := range []struct {
		name, file string
		data       string
		wantMsg    string
	}{
		{"json syntax", "claude", `{"numStartups": 1,, }`, "not valid json"},
		{"json not an object", "cursor", `["mcpServers"]`, "not an object"},
		{"json truncated", "claude", claudeFixture[:len(claudeFixture)/2], "not valid json"},
		{"toml syntax", "codex", "model = \n[mcp_servers.x\n", "not valid toml"},
		{"toml duplicate table", "codex", "[a]\nx = 1\n[a]\ny = 2\n", "not valid toml"},
		{"toml inline servers", "codex", "mcp_servers = { github = { command = \"npx\" } }\n", "is not written as a [table]"},
		{"servers not an object", "cursor", `{"mcpServers": []}`, "mcpServers is not an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			file := map[string]string{"claude": f.claude, "codex": f.codex, "cursor": f.cursor}[c.file]
			writeFile(t, file, []byte(c.data), 0o600)
			before := map[string][]byte{f.claude: readFile(t, f.claude), f.codex: readFile(t, f.codex), f.cursor: readFile(t, f.cursor)}
			_, err := Apply(f.targets(true, []string{"github"}, map[string]int{}), Options{Home: f.obs})
			if !errors.Is(err, ErrMalformed) || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.wantMsg)) || !strings.Contains(err.Error(), file) {
				t.Fatalf("err = %v; want ErrMalformed naming %s and saying %q", err, file, c.wantMsg)
			}
			for p, b := range before {
				if !bytes.Equal(readFile(t, p), b) {
					t.Errorf("%s was written", p)
				}
				if bs := backups(t, p); len(bs) != 0 {
					t.Errorf("backups written: %v", bs)
				}
			}
			if _, err := os.Stat(ManifestPath(f.obs)); !errors.Is(err, os.ErrNotExist) {
				t.Error("manifest written")
			}
		})
	}
}

func TestApply_NameTaken(t *testing.T) {
	f := newFixture(t)
	d := parse(t, JSON, f.origCursor)
	d.Set([]string{"mcpServers", "observer"}, Object{{"command", "/usr/bin/other-observer"}})
	writeFile(t, f.cursor, d.Bytes(), 0o600)
	_, err := Apply(f.targets(true, nil, nil), Options{Home: f.obs})
	if !errors.Is(err, ErrConflict) || !containsAll(err.Error(), f.cursor, "/usr/bin/other-observer", "--name") {
		t.Fatalf("err = %v, want ErrConflict naming the file, the command and --name", err)
	}
	if !bytes.Equal(readFile(t, f.claude), f.origClaude) {
		t.Error("another file was written")
	}
}

func TestApply_UpdatesOwnEntry(t *testing.T) {
	f := newFixture(t)
	if _, err := Apply(f.targets(true, nil, nil), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	old := observerMCP
	observerMCP = Server{Command: "/new/place/observer-mcp"}
	defer func() { observerMCP = old }()
	if _, err := Apply(f.targets(true, nil, nil), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	d := parse(t, TOML, readFile(t, f.codex))
	if v, _ := d.Lookup("mcp_servers", "observer"); !equal(v, entry(Codex, observerMCP)) {
		t.Fatalf("entry not updated: %v", v)
	}
	man, _ := LoadManifest(f.obs)
	for _, r := range man.Files {
		if len(r.Changes) != 1 || r.Changes[0].Existed {
			t.Errorf("%s: changes %+v; want the one added entry", r.Path, r.Changes)
		}
	}
	if _, err := Undo(Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, f.codex), f.origCodex) || !bytes.Equal(readFile(t, f.claude), f.origClaude) {
		t.Error("uninstall after an update did not restore the originals")
	}
}

func TestApply_FollowsSymlink(t *testing.T) {
	f := newFixture(t)
	real := filepath.Join(t.TempDir(), "dotfiles", "claude.json")
	writeFile(t, real, f.origClaude, 0o600)
	os.Remove(f.claude)
	if err := os.Symlink(real, f.claude); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := Apply(f.targets(true, nil, nil), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(f.claude); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if !strings.Contains(string(readFile(t, real)), observerMCP.Command) {
		t.Error("the link's target was not edited")
	}
}

func TestApply_FileChangedMeanwhile(t *testing.T) {
	f := newFixture(t)
	targets := f.targets(true, nil, nil)
	plan := targets[0].Plan
	targets[0].Plan = func(d *Doc) ([]Edit, []string, error) {
		// A client saves its state while init is planning.
		writeFile(t, f.claude, []byte(`{"saved": "by the client"}`), 0o600)
		return plan(d)
	}
	_, err := Apply(targets, Options{Home: f.obs})
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v, want ErrChanged", err)
	}
	if got := string(readFile(t, f.claude)); got != `{"saved": "by the client"}` {
		t.Errorf("the client's write was overwritten: %s", got)
	}
}

func TestManifest_RecordsPreviousText(t *testing.T) {
	f := newFixture(t)
	if _, err := Apply(f.targets(false, []string{"github"}, map[string]int{}), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	man, err := LoadManifest(f.obs)
	if err != nil {
		t.Fatal(err)
	}
	rec := man.file(f.codex)
	ch := rec.change([]string{"mcp_servers", "github", "args"})
	if ch == nil || !ch.Existed || ch.PreviousText != "[\n  \"-y\",\n  \"@modelcontextprotocol/server-github\", # the official one\n]" {
		t.Fatalf("change %+v; want the exact previous text, comment included", ch)
	}
	var prev []string
	if err := json.Unmarshal(ch.Previous, &prev); err != nil || !reflect.DeepEqual(prev, []string{"-y", "@modelcontextprotocol/server-github"}) {
		t.Errorf("previous = %s", ch.Previous)
	}
}

func TestApply_EmptyFileLeftAloneWithoutEdits(t *testing.T) {
	f := newFixture(t)
	writeFile(t, f.cursor, nil, 0o600)
	seen := map[string]int{}
	reports, err := Apply(f.targets(false, []string{"github"}, seen), Options{Home: f.obs})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.File == f.cursor && r.Changed {
			t.Errorf("an empty mcp.json without edits was rewritten:\n%s", r.Diff)
		}
	}
	if len(readFile(t, f.cursor)) != 0 {
		t.Error("the empty file was written")
	}
	// With an edit, the empty file gets the clients' own layout.
	if _, err := Apply(f.targets(true, nil, nil), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, f.cursor)); !strings.HasPrefix(got, "{\n  \"mcpServers\": {\n    \"observer\": {\n") {
		t.Errorf("mcp.json:\n%s", got)
	}
}
