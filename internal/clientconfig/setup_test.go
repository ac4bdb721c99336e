package clientconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Tests for a set-up that survives (issue 16): secrets masked in the diffs, one backup per file
// and none after a full uninstall, a hook entry whose command the user edited found and reported,
// Codex's trust records of observer's hooks removed with them.

// TestMaskDiff: the diff shows no env or header value and no value of a key named like a secret,
// in JSON and TOML, one-line and multi-line; everything else reads as it is.
func TestMaskDiff(t *testing.T) {
	before := `{
  "mcpServers": {
    "github": {"type": "stdio", "command": "npx", "args": ["-y", "server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "plainvalue123", "LOG_LEVEL": "debug"}},
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.app/sse",
      "headers": {
        "Authorization": "Bearer abcdefghijklmnopqrstuvwxyz012345"
      }
    }
  },
  "oauthAccount": {"accessToken": "opaque-access", "emailAddress": "me@example.com"},
  "primaryApiKey": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
  "userID": "0f3c9d6a"
}
`
	after := strings.Replace(before, `"command": "npx", "args": ["-y", "server-github"]`, `"command": "/opt/observer-mcp", "args": ["wrap", "--", "npx", "-y", "server-github"]`, 1)
	b, a := parse(t, JSON, []byte(before)), parse(t, JSON, []byte(after))
	// A diff with every line as context: what the largest dry run would show.
	diff := maskDiff(Unified("f", "f (after)", []byte(before), []byte(after))+"\n"+string(maskedText([]byte(before), b.Tree(), a.Tree())), b.Tree(), a.Tree())
	for _, secret := range []string{"plainvalue123", "debug", "abcdefghijklmnopqrstuvwxyz012345", "opaque-access", "sk-ant-api03"} {
		if strings.Contains(diff, secret) {
			t.Errorf("the diff shows %q:\n%s", secret, diff)
		}
	}
	for _, kept := range []string{`"command": "/opt/observer-mcp"`, `"GITHUB_PERSONAL_ACCESS_TOKEN": "[REDACTED`, `"emailAddress": "me@example.com"`,
		`"url": "https://mcp.linear.app/sse"`, `"userID": "0f3c9d6a"`, "--- f\n", "+++ f (after)\n"} {
		if !strings.Contains(diff, kept) {
			t.Errorf("the diff lacks %q:\n%s", kept, diff)
		}
	}

	toml := "[mcp_servers.github]\ncommand = \"npx\"\nargs = [\"-y\", \"server-github\"]\nenv = { GITHUB_TOKEN = \"plainvalue123\", \"OTHER\" = 'lit-value' }\n\n[mcp_servers.other.env]\nAPI_KEY = \"abc123secret\"\n\n[model_providers.x]\nname = \"X\"\nexperimental_bearer_token = \"tok-xyz-123\"\n"
	tt := parse(t, TOML, []byte(toml)).Tree()
	got := string(maskedText([]byte(toml), tt))
	for _, secret := range []string{"plainvalue123", "lit-value", "abc123secret", "tok-xyz-123"} {
		if strings.Contains(got, secret) {
			t.Errorf("TOML: shows %q:\n%s", secret, got)
		}
	}
	if !strings.Contains(got, `name = "X"`) || !strings.Contains(got, `command = "npx"`) || !strings.Contains(got, `OTHER" = '[REDACTED]'`) {
		t.Errorf("TOML masked too much or badly:\n%s", got)
	}
}

// TestBackups_OnePerFileNoneAfterUninstall: each write keeps one backup per file (the file before
// observerctl's last write to it, 0600), older ones go (also those an earlier observerctl left, but
// no other file); a full uninstall removes them all; a partial one keeps one.
func TestBackups_OnePerFileNoneAfterUninstall(t *testing.T) {
	tg, obs := hookTarget(t, ClaudeCode, ptr(claudeSettingsFixture))
	dir := filepath.Dir(tg.File)
	legacy := tg.File + ".observer-backup-20250101T000000.000Z"
	mine := tg.File + ".observer-backup-mine" // not a name observerctl gives
	other := filepath.Join(dir, "settings.json.bak")
	for _, f := range []string{legacy, mine, other} {
		writeFile(t, f, []byte("{}"), 0o644)
	}
	now := time.Now()
	at := func(d time.Duration) Options {
		return Options{Home: obs, Now: func() time.Time { return now.Add(d) }}
	}
	r, err := Apply([]Target{tg}, at(0))
	if err != nil {
		t.Fatal(err)
	}
	first := r[0].Backup
	if bs := backups(t, tg.File); !slices.Equal(bs, []string{first, mine}) {
		t.Errorf("after init: backups %v, want only the new one (and the user's own file)", bs)
	}
	if !slices.Contains(r[0].BackupsRemoved, legacy) {
		t.Errorf("removed %v, want the legacy backup", r[0].BackupsRemoved)
	}
	if fi, err := os.Stat(first); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup %v, %v: want 0600", fi, err)
	}
	// init from another path writes again: one backup, the newest.
	moved := tg
	moved.Plan = HooksPlan(Location{Client: ClaudeCode, File: tg.File, Format: JSON}, strings.Replace(hookCmd, "/opt/observer", "/usr/local", 1))
	r, err = Apply([]Target{moved}, at(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if bs := backups(t, tg.File); !slices.Equal(bs, []string{r[0].Backup, mine}) || r[0].Backup == first {
		t.Errorf("after a second init: backups %v, want only %s", bs, r[0].Backup)
	}
	man, _ := LoadManifest(obs)
	if len(man.Files) != 1 || !slices.Equal(man.Files[0].Backups, []string{r[0].Backup}) {
		t.Errorf("manifest backups %+v", man.Files)
	}

	// A partial uninstall (an edited entry stays) writes one backup and keeps only it.
	d := parse(t, JSON, readFile(t, tg.File))
	list, _ := d.Lookup("hooks", "Stop")
	n := len(list.([]any)) - 1
	d.DeleteElem([]string{"hooks", "Stop"}, n)
	d.Append([]string{"hooks", "Stop"}, Object{{"hooks", []any{Object{{"type", "command"}, {"command", "/usr/local/bin/observerctl hook --client claude-code --debug"}}}}})
	writeFile(t, tg.File, d.Bytes(), 0o600)
	r, err = Undo(at(2 * time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Kept != 1 || r[0].Backup == "" {
		t.Fatalf("partial uninstall: kept %d backup %q", r[0].Kept, r[0].Backup)
	}
	if bs := backups(t, tg.File); !slices.Equal(bs, []string{r[0].Backup, mine}) {
		t.Errorf("after a partial uninstall: backups %v", bs)
	}
	// The full one removes them and writes none.
	r, err = Undo(Options{Home: obs, Force: true, Now: func() time.Time { return now.Add(3 * time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Backup != "" || len(r[0].BackupsRemoved) != 1 {
		t.Errorf("full uninstall: backup %q, removed %v", r[0].Backup, r[0].BackupsRemoved)
	}
	if bs := backups(t, tg.File); !slices.Equal(bs, []string{mine}) {
		t.Errorf("after a full uninstall: backups %v, want none of observerctl's", bs)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the user's settings.json.bak: %v", err)
	}
	if got := string(readFile(t, tg.File)); got != claudeSettingsFixture {
		t.Errorf("not restored:\n%s", got)
	}
}

// TestBackups_KeptWhenTheFileIsGone: a file the user removed since init is not restored, and its
// backup, then the only copy of what it held, stays.
func TestBackups_KeptWhenTheFileIsGone(t *testing.T) {
	tg, obs := hookTarget(t, ClaudeCode, ptr(claudeSettingsFixture))
	r, err := Apply([]Target{tg}, Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(tg.File)
	r, err = Undo(Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	if bs := backups(t, tg.File); len(bs) != 1 || !slices.ContainsFunc(r[0].Lines, func(l string) bool { return strings.Contains(l, "its backups stay") }) {
		t.Errorf("backups %v, lines %q", bs, r[0].Lines)
	}
}

// TestHooks_EditedCommandReported: an entry of observer's whose command the user edited (another
// path, an added flag, run through env) is found, left in place, reported by its key and kept in the
// manifest; --force removes it and the file comes back byte for byte. The user's own hooks, even
// one that runs observerctl hook and was there before init, are never taken for it.
func TestHooks_EditedCommandReported(t *testing.T) {
	own := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "observerctl hook --client claude-code"}]}], "SessionEnd": [{"hooks": [{"type": "command", "command": "cleanup.sh"}]}]}}`
	for name, edit := range map[string]func(string) string{
		"moved": func(c string) string {
			return strings.Replace(c, "/opt/observer/bin/observerctl", "/home/me/bin/observerctl", 1)
		},
		"flag":      func(c string) string { return c + " --debug" },
		"env":       func(c string) string { return "env OBSERVER_DEBUG=1 " + c },
		"sh -c":     func(c string) string { return "sh -c '" + c + " 2>/dev/null'" },
		"home gone": func(c string) string { return strings.Replace(c, " --home /srv/obs", "", 1) },
	} {
		t.Run(name, func(t *testing.T) {
			tg, obs := hookTarget(t, ClaudeCode, &own)
			if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
				t.Fatal(err)
			}
			text := string(readFile(t, tg.File))
			cmd, _ := json.Marshal(hookCmd)
			edited, _ := json.Marshal(edit(hookCmd))
			// SessionEnd's entry, after the user's cleanup.sh.
			i := strings.Index(text, `"SessionEnd"`)
			i += strings.Index(text[i:], string(cmd))
			text = text[:i] + string(edited) + text[i+len(cmd):]
			writeFile(t, tg.File, []byte(text), 0o600)

			r, err := Undo(Options{Home: obs})
			if err != nil {
				t.Fatal(err)
			}
			if r[0].Kept != 1 || !slices.Equal(r[0].KeptPaths, []string{"hooks.SessionEnd"}) {
				t.Fatalf("kept %d %v, want hooks.SessionEnd\n%q", r[0].Kept, r[0].KeptPaths, r[0].Lines)
			}
			if !slices.ContainsFunc(r[0].Lines, func(l string) bool {
				return strings.HasPrefix(l, "left the entry init added to hooks.SessionEnd as it is") && strings.Contains(l, "it now runs")
			}) {
				t.Errorf("lines %q", r[0].Lines)
			}
			d := parse(t, JSON, readFile(t, tg.File))
			if v, _ := d.Lookup("hooks", "SessionEnd"); len(asList(v)) != 2 {
				t.Errorf("hooks.SessionEnd = %v, want the user's and the edited entry", v)
			}
			if v, _ := d.Lookup("hooks", "Stop"); len(asList(v)) != 1 {
				t.Errorf("hooks.Stop = %v, want the user's own observerctl hook alone", v)
			}
			man, err := LoadManifest(obs)
			if err != nil || len(man.Files) != 1 || len(man.Files[0].Changes) != 1 {
				t.Fatalf("manifest after the partial uninstall: %+v %v", man, err)
			}
			if _, err := Undo(Options{Home: obs, Force: true}); err != nil {
				t.Fatal(err)
			}
			if got := string(readFile(t, tg.File)); got != own {
				t.Errorf("after --force:\n%s\nwant\n%s", got, own)
			}
			if _, err := os.Stat(ManifestPath(obs)); !errors.Is(err, os.ErrNotExist) {
				t.Error("manifest left after --force")
			}
		})
	}
}

// codexTrustFixture is a config.toml as Codex leaves it after the user trusted hooks on its /hooks
// screen: the user's own settings, a record for the user's hook (SessionStart entry 0), records
// for observer's entries, and one for a project's hooks file.
func codexTrustFixture(hooksFile string) string {
	k := func(ev string, i int) string {
		return `[hooks.state."` + hooksFile + ":" + ev + ":" + string(rune('0'+i)) + `:0"]`
	}
	return `# my settings
model = "gpt-5.1-codex"

[features]
hooks = true

` + k("session_start", 0) + `
trusted_hash = "sha256:1111"

` + k("session_start", 1) + `
trusted_hash = "sha256:2222"

[hooks.state."/work/app/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:3333"

` + k("stop", 0) + `
trusted_hash = "sha256:4444"
enabled = true

[projects."/work/app"]
trust_level = "trusted"
`
}

// TestCodexTrust_RemovedOnUninstall: uninstall removes the trust records Codex wrote for observer's
// entries in its hooks.json, and nothing else of config.toml, byte for byte.
func TestCodexTrust_RemovedOnUninstall(t *testing.T) {
	t.Run("hooks.json with the user's hooks", func(t *testing.T) {
		tg, obs := hookTarget(t, Codex, ptr(codexHooksFixture))
		cfg := filepath.Join(filepath.Dir(tg.File), "config.toml")
		if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
			t.Fatal(err)
		}
		// Observer's entries: SessionStart index 1 (after the user's), Stop index 0 (a list init made).
		trusted := codexTrustFixture(tg.File)
		writeFile(t, cfg, []byte(trusted), 0o600)
		if _, n, _ := tg.Plan(parse(t, JSON, readFile(t, tg.File))); slices.ContainsFunc(n, func(s string) bool { return strings.Contains(s, "[hooks] too") }) {
			t.Errorf("notes %q: Codex's trust records are not inline hooks", n)
		}
		r, err := Undo(Options{Home: obs, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(r) != 2 || r[1].File != cfg || !strings.Contains(r[1].Diff, `-[hooks.state."`+tg.File+`:stop:0:0"]`) {
			t.Fatalf("dry run reports %+v", r)
		}
		if string(readFile(t, cfg)) != trusted {
			t.Fatal("dry run wrote config.toml")
		}
		if _, err := Undo(Options{Home: obs}); err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(trusted, "\n[hooks.state.\""+tg.File+":session_start:1:0\"]\ntrusted_hash = \"sha256:2222\"\n", "", 1)
		want = strings.Replace(want, "\n[hooks.state.\""+tg.File+":stop:0:0\"]\ntrusted_hash = \"sha256:4444\"\nenabled = true\n", "", 1)
		if got := string(readFile(t, cfg)); got != want {
			t.Errorf("config.toml after uninstall:\n%s\nwant\n%s", got, want)
		}
		if got := string(readFile(t, tg.File)); got != codexHooksFixture {
			t.Errorf("hooks.json after uninstall:\n%s", got)
		}
		if bs := backups(t, cfg); len(bs) != 0 {
			t.Errorf("config.toml backups %v: only Codex's trust records left it", bs)
		}
	})
	t.Run("hooks.json init created", func(t *testing.T) {
		tg, obs := hookTarget(t, Codex, nil)
		cfg := filepath.Join(filepath.Dir(tg.File), "config.toml")
		if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
			t.Fatal(err)
		}
		trusted := codexTrustFixture(tg.File)
		writeFile(t, cfg, []byte(trusted), 0o644)
		r, err := Undo(Options{Home: obs})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(tg.File); !errors.Is(err, os.ErrNotExist) {
			t.Error("hooks.json init created is still there")
		}
		want := "# my settings\nmodel = \"gpt-5.1-codex\"\n\n[features]\nhooks = true\n\n[hooks.state.\"/work/app/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:3333\"\n\n[projects.\"/work/app\"]\ntrust_level = \"trusted\"\n"
		if got := string(readFile(t, cfg)); got != want {
			t.Errorf("config.toml:\n%s\nwant\n%s\nreports %+v", got, want, r)
		}
		if fi, _ := os.Stat(cfg); fi.Mode().Perm() != 0o644 {
			t.Errorf("config.toml mode %v, want its own", fi.Mode().Perm())
		}
	})
	t.Run("no config.toml", func(t *testing.T) {
		tg, obs := hookTarget(t, Codex, ptr(codexHooksFixture))
		if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
			t.Fatal(err)
		}
		r, err := Undo(Options{Home: obs})
		if err != nil || len(r) != 1 {
			t.Fatalf("%v %+v", err, r)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(tg.File), "config.toml")); !errors.Is(err, os.ErrNotExist) {
			t.Error("uninstall created config.toml")
		}
	})
}

// TestTOMLDoc_DeleteInlineAndDotted: a table written inline or through dotted keys is removed with
// its lines only.
func TestTOMLDoc_DeleteInlineAndDotted(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"a = 1\n[hooks.state]\n\"k\" = { trusted_hash = \"x\" }\n\"j\" = { trusted_hash = \"y\" }\n", "a = 1\n[hooks.state]\n\"j\" = { trusted_hash = \"y\" }\n"},
		{"[hooks]\nstate.\"k\".trusted_hash = \"x\"\nstate.\"k\".enabled = true\nother = 1\n", "[hooks]\nother = 1\n"},
		{"hooks.state.\"k\".trusted_hash = \"x\"\n# c\n", "# c\n"},
	} {
		d := parse(t, TOML, []byte(c.doc))
		if err := d.Delete([]string{"hooks", "state", "k"}); err != nil {
			t.Fatalf("%q: %v", c.doc, err)
		}
		if got := string(d.Bytes()); got != c.want {
			t.Errorf("%q became\n%q\nwant\n%q", c.doc, got, c.want)
		}
	}
}

// TestRegistrations: the commands of observer's in the clients' files: hook entries wherever they
// are, the MCP servers the manifest records.
func TestRegistrations(t *testing.T) {
	f := newFixture(t)
	if _, err := Apply(f.targets(true, []string{"github"}, map[string]int{}), Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	tg, _ := hookTarget(t, Cursor, nil)
	if _, err := Apply([]Target{tg}, Options{Home: f.obs}); err != nil {
		t.Fatal(err)
	}
	regs := Registrations(f.obs, nil)
	var where []string
	for _, r := range regs {
		where = append(where, filepath.Base(r.File)+" "+r.Where+" "+r.Program)
	}
	for _, want := range []string{
		"hooks.json hooks.stop /opt/observer/bin/observerctl",
		".claude.json mcpServers.observer " + observerMCP.Command,
		".claude.json projects[\"/home/dev/app\"].mcpServers.github " + observerMCP.Command,
		"config.toml mcp_servers.github " + observerMCP.Command,
	} {
		if !slices.Contains(where, want) {
			t.Errorf("registrations lack %q:\n%s", want, strings.Join(where, "\n"))
		}
	}
}
