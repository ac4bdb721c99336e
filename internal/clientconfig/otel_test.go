package clientconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Telemetry settings as users have them: beside other env variables and hooks, in every JSON
// style, and Codex configs with comments, an [otel] table of their own, export turned off.

const otelEndpoint = "http://127.0.0.1:4318"

const codexOTelFixture = `# Codex configuration
model = "gpt-5.2-codex"   # the default

[otel]
# which deployment this is
environment = "dev"
log_user_prompt = false

[mcp_servers.github]
command = "npx"   # from npm
`

// otelTarget is one client's telemetry file in a temporary home, with content (nil: no file).
func otelTarget(tb testing.TB, client string, content *string, endpoint string) (Target, string) {
	tb.Helper()
	dir := tb.TempDir()
	var loc Location
	for _, l := range LocateOTel(filepath.Join(dir, "home"), func(string) string { return "" }, noPath) {
		if l.Client == client {
			loc = l
		}
	}
	if content != nil {
		writeFile(tb, loc.File, []byte(*content), 0o644)
	}
	obs := filepath.Join(dir, "obs")
	return otelTargetAt(tb, loc, obs, endpoint), obs
}

// otelTargetAt plans loc's telemetry settings with the manifest in obs as it is now.
func otelTargetAt(tb testing.TB, loc Location, obs, endpoint string) Target {
	tb.Helper()
	man, err := LoadManifest(obs)
	if err != nil {
		tb.Fatal(err)
	}
	return Target{Client: loc.Client, File: loc.File, Format: loc.Format, Plan: OTelPlan(loc, endpoint, man)}
}

func locOf(tg Target) Location { return Location{Client: tg.Client, File: tg.File, Format: tg.Format} }

// wantOTel returns the key paths and values init --otel sets for client.
func wantOTel(client, endpoint string) map[string]any {
	out := map[string]any{}
	if client == ClaudeCode {
		for _, m := range ClaudeOTelEnv(endpoint) {
			out[DisplayPath([]string{"env", m.Key})] = m.Value
		}
		return out
	}
	for _, m := range CodexOTel(endpoint) {
		out[DisplayPath([]string{"otel", m.Key})] = m.Value
	}
	return out
}

func otelPaths(client string) [][]string {
	var out [][]string
	if client == ClaudeCode {
		for _, m := range ClaudeOTelEnv(otelEndpoint) {
			out = append(out, []string{"env", m.Key})
		}
		return out
	}
	for _, m := range CodexOTel(otelEndpoint) {
		out = append(out, []string{"otel", m.Key})
	}
	return out
}

// TestOTelPlan_InitUninstallByteIdentical: in every kind of settings file, init --otel sets
// exactly its keys, keeps everything else (TOML comments too), changes nothing the second time,
// and uninstall gives back the original bytes (no file, when there was none). A dry run writes
// nothing and shows the values.
func TestOTelPlan_InitUninstallByteIdentical(t *testing.T) {
	for _, c := range []struct {
		name, client string
		content      *string
		keep         []string // text that must survive
	}{
		{"claude with env and hooks", ClaudeCode, ptr(claudeSettingsFixture), []string{`"DISABLE_TELEMETRY": "1"`, `"model": "opus"`}},
		{"claude tabs", ClaudeCode, ptr(strings.ReplaceAll(claudeSettingsFixture, "  ", "\t")), nil},
		{"claude CRLF", ClaudeCode, ptr(strings.ReplaceAll(claudeSettingsFixture, "\n", "\r\n")), nil},
		{"claude compact", ClaudeCode, ptr(`{"model":"opus","hooks":{"Stop":[]}}`), nil},
		{"claude multi-line env", ClaudeCode, ptr("{\n  \"env\": {\n    \"FOO\": \"bar\"\n  },\n  \"model\": \"opus\"\n}\n"), []string{"    \"FOO\": \"bar\",\n"}},
		{"claude empty env", ClaudeCode, ptr("{\n  \"env\": {}\n}\n"), nil},
		{"claude {}", ClaudeCode, ptr("{}"), nil},
		{"claude blank", ClaudeCode, ptr(""), nil},
		{"claude missing", ClaudeCode, nil, nil},
		{"codex with comments", Codex, ptr(codexFixture), []string{"# Servers\n", "# the official one\n", "# trailing comment\n"}},
		{"codex own [otel]", Codex, ptr(codexOTelFixture), []string{"# which deployment this is\n", `environment = "dev"`, "log_user_prompt = false"}},
		{"codex [otel] export off", Codex, ptr("[otel] # mine\nexporter = \"none\"  # off for now\n"), []string{"[otel] # mine\n", "  # off for now\n"}},
		{"codex CRLF", Codex, ptr(strings.ReplaceAll(codexFixture, "\n", "\r\n")), nil},
		{"codex blank", Codex, ptr(""), nil},
		{"codex missing", Codex, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, obs := otelTarget(t, c.client, c.content, otelEndpoint)
			format := tg.Format
			var orig []byte
			if c.content != nil {
				orig = []byte(*c.content)
			}

			reports, err := Apply([]Target{tg}, Options{Home: obs, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if c.content == nil {
				if _, err := os.Stat(tg.File); !errors.Is(err, os.ErrNotExist) {
					t.Error("the dry run created the file")
				}
			} else if !bytes.Equal(readFile(t, tg.File), orig) {
				t.Error("the dry run wrote the file")
			}
			if _, err := os.Stat(ManifestPath(obs)); !errors.Is(err, os.ErrNotExist) {
				t.Error("the dry run wrote the manifest")
			}
			if d := reports[0].Diff; !reports[0].Changed || !containsAll(d, otelEndpoint, "otlp") || strings.Contains(d, `"[REDACTED]"`) && c.client == Codex {
				t.Errorf("dry run diff does not show the settings:\n%s", d)
			}

			if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, tg.File)
			d := parse(t, format, got)
			for _, p := range otelPaths(c.client) {
				if v, _ := d.Lookup(p...); !equal(v, wantOTel(c.client, otelEndpoint)[DisplayPath(p)]) {
					t.Errorf("%s = %v\n%s", DisplayPath(p), v, got)
				}
			}
			before := parse(t, format, orig)
			if !equal(prune(before.Tree(), otelPaths(c.client)), prune(d.Tree(), otelPaths(c.client))) {
				t.Errorf("keys other than the telemetry settings changed:\n%s", got)
			}
			for _, k := range c.keep {
				if !bytes.Contains(got, []byte(k)) {
					t.Errorf("lost %q:\n%s", k, got)
				}
			}
			if bytes.Contains(orig, []byte("\r\n")) && bytes.Count(got, []byte("\n")) != bytes.Count(got, []byte("\r\n")) {
				t.Errorf("mixed line breaks in a CRLF file:\n%q", got)
			}
			if bytes.Contains(got, []byte("log_user_prompt = true")) || bytes.Contains(got, []byte("OTEL_LOG_USER_PROMPTS")) {
				t.Errorf("init turned on the export of prompts:\n%s", got)
			}

			again := otelTargetAt(t, locOf(tg), obs, otelEndpoint)
			reports, err = Apply([]Target{again}, Options{Home: obs, Now: func() time.Time { return time.Now().Add(time.Hour) }})
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
			} else if after := readFile(t, tg.File); !bytes.Equal(after, orig) {
				t.Errorf("uninstall gave\n%q\nwant the original\n%q", after, orig)
			}
			if _, err := os.Stat(ManifestPath(obs)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("manifest left after a full uninstall (%v)", err)
			}
		})
	}
}

// TestOTelPlan_Conflict: a setting of the user's that sends the telemetry elsewhere is not
// overwritten: Apply fails with ErrConflict naming the file and every such key (never an
// exporter's headers), and writes nothing.
func TestOTelPlan_Conflict(t *testing.T) {
	for _, c := range []struct {
		name, client, content string
		want                  []string
	}{
		{"claude endpoint", ClaudeCode, `{"env": {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example.com:4318", "OTEL_LOGS_EXPORTER": "console"}}`,
			[]string{"env.OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example.com:4318", "env.OTEL_LOGS_EXPORTER", `"console"`}},
		{"claude per-signal endpoint", ClaudeCode, `{"env": {"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://10.0.0.5:4318/v1/logs"}}`,
			[]string{"env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "10.0.0.5"}},
		{"claude grpc", ClaudeCode, `{"env": {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}}`, []string{"env.OTEL_EXPORTER_OTLP_PROTOCOL", `"grpc"`}},
		{"codex other exporter", Codex, "# mine\n[otel]\nexporter = { otlp-grpc = { endpoint = \"https://otel.example.com\", headers = { \"x-api-key\" = \"sekrit-123\" } } }\n",
			[]string{"otel.exporter", "otlp-grpc", "https://otel.example.com"}},
		{"codex statsig", Codex, "[otel]\nmetrics_exporter = \"statsig\"\n", []string{"otel.metrics_exporter", `"statsig"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, obs := otelTarget(t, c.client, &c.content, otelEndpoint)
			_, err := Apply([]Target{tg}, Options{Home: obs})
			if !errors.Is(err, ErrConflict) || !containsAll(err.Error(), append([]string{tg.File, "--otel"}, c.want...)...) {
				t.Fatalf("err = %v, want ErrConflict naming %s and %q", err, tg.File, c.want)
			}
			if strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), "name taken") {
				t.Errorf("err = %v", err)
			}
			if got := string(readFile(t, tg.File)); got != c.content {
				t.Errorf("the file was written:\n%s", got)
			}
			if _, err := os.Stat(ManifestPath(obs)); !errors.Is(err, os.ErrNotExist) {
				t.Error("manifest written")
			}
		})
	}
}

// TestOTelPlan_UsersWorkingValues: values of the user's that already export to observer stay as
// they are and are not recorded, so uninstall leaves them; a value that turned export off is
// replaced, said so, and given back by uninstall.
func TestOTelPlan_UsersWorkingValues(t *testing.T) {
	orig := `{
  "env": {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "true",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "console,otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
    "OTEL_LOGS_EXPORT_INTERVAL": "10000",
    "OTEL_LOG_USER_PROMPTS": "1"
  }
}
`
	tg, obs := otelTarget(t, ClaudeCode, &orig, otelEndpoint)
	reports, err := Apply([]Target{tg}, Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(reports[0].Lines, "\n")
	for _, want := range []string{"left env.CLAUDE_CODE_ENABLE_TELEMETRY as it is", "left env.OTEL_LOGS_EXPORTER as it is",
		"left env.OTEL_EXPORTER_OTLP_PROTOCOL as it is", "left env.OTEL_LOGS_EXPORT_INTERVAL as it is",
		"changed env.OTEL_METRICS_EXPORTER", `env.OTEL_METRICS_EXPORTER was "none"`, "added env.OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if !strings.Contains(lines, want) {
			t.Errorf("report lacks %q:\n%s", want, lines)
		}
	}
	d := parse(t, JSON, readFile(t, tg.File))
	for k, want := range map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "true", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "console,otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_LOGS_EXPORT_INTERVAL": "10000", "OTEL_EXPORTER_OTLP_ENDPOINT": otelEndpoint, "OTEL_LOG_USER_PROMPTS": "1"} {
		if v, _ := d.Lookup("env", k); v != want {
			t.Errorf("env.%s = %v, want %q", k, v, want)
		}
	}
	man, _ := LoadManifest(obs)
	if n := len(man.Files[0].Changes); n != 2 {
		t.Errorf("recorded %d changes, want 2 (the exporter replaced, the endpoint added): %+v", n, man.Files[0].Changes)
	}
	if _, err := Undo(Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, tg.File)); got != orig {
		t.Errorf("uninstall gave\n%s\nwant\n%s", got, orig)
	}
}

// TestOTelPlan_UpdatesOwnSettings: init again with another receiver address brings observer's own
// settings up to date (no conflict), and uninstall still gives back the original.
func TestOTelPlan_UpdatesOwnSettings(t *testing.T) {
	const moved = "http://127.0.0.1:14318"
	for _, c := range []struct {
		name, client string
		content      *string
	}{
		{"claude", ClaudeCode, ptr(claudeSettingsFixture)},
		{"codex created [otel]", Codex, ptr(codexFixture)},
		{"codex own [otel]", Codex, ptr(codexOTelFixture)},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, obs := otelTarget(t, c.client, c.content, otelEndpoint)
			if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
				t.Fatal(err)
			}
			reports, err := Apply([]Target{otelTargetAt(t, locOf(tg), obs, moved)}, Options{Home: obs})
			if err != nil {
				t.Fatalf("init with a new address: %v", err)
			}
			got := readFile(t, tg.File)
			if !reports[0].Changed || !bytes.Contains(got, []byte(moved)) || bytes.Contains(got, []byte(otelEndpoint+"/")) || bytes.Contains(got, []byte(otelEndpoint+`"`)) {
				t.Errorf("not updated to %s:\n%s", moved, got)
			}
			d := parse(t, tg.Format, got)
			for _, p := range otelPaths(c.client) {
				if v, _ := d.Lookup(p...); !equal(v, wantOTel(c.client, moved)[DisplayPath(p)]) {
					t.Errorf("%s = %v", DisplayPath(p), v)
				}
			}
			if _, err := Undo(Options{Home: obs}); err != nil {
				t.Fatal(err)
			}
			if after := string(readFile(t, tg.File)); after != *c.content {
				t.Errorf("uninstall after an update gave\n%s\nwant\n%s", after, *c.content)
			}
		})
	}
}

// TestOTelPlan_UninstallKeepsUserEdit: a telemetry setting the user changed since init is left,
// with the ones set with it, until forced; the user's other env variables stay either way.
func TestOTelPlan_UninstallKeepsUserEdit(t *testing.T) {
	orig := "{\n  \"env\": {\n    \"FOO\": \"bar\"\n  }\n}\n"
	tg, obs := otelTarget(t, ClaudeCode, &orig, otelEndpoint)
	if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, tg.File, bytes.Replace(readFile(t, tg.File), []byte(`"5000"`), []byte(`"1000"`), 1), 0o644)
	reports, err := Undo(Options{Home: obs})
	if err != nil {
		t.Fatal(err)
	}
	if reports[0].Kept != len(ClaudeOTelEnv(otelEndpoint)) || !strings.Contains(strings.Join(reports[0].KeptPaths, " "), "env.OTEL_LOGS_EXPORT_INTERVAL") {
		t.Errorf("kept %d %v, want every telemetry key", reports[0].Kept, reports[0].KeptPaths)
	}
	if d := parse(t, JSON, readFile(t, tg.File)); !equal(must(d.Lookup("env", "OTEL_EXPORTER_OTLP_ENDPOINT")), otelEndpoint) {
		t.Error("uninstall removed a key set with the one the user edited")
	}
	if _, err := Undo(Options{Home: obs, Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, tg.File)); got != orig {
		t.Errorf("uninstall --force gave\n%s\nwant\n%s", got, orig)
	}
}

func must(v any, _ bool) any { return v }

// TestOTelPlan_JoinedWithHooks: hooks and telemetry settings in the same settings.json are one
// target; uninstall takes both out byte for byte.
func TestOTelPlan_JoinedWithHooks(t *testing.T) {
	tg, obs := hookTarget(t, ClaudeCode, ptr(claudeSettingsFixture))
	hooks := tg.Plan
	otel := OTelPlan(locOf(tg), otelEndpoint, nil)
	tg.Plan = func(d *Doc) ([]Edit, []string, error) {
		e1, n1, err := hooks(d)
		if err != nil {
			return nil, nil, err
		}
		e2, n2, err := otel(d)
		return append(e1, e2...), append(n1, n2...), err
	}
	if _, err := Apply([]Target{tg}, Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	d := parse(t, JSON, readFile(t, tg.File))
	if v, _ := d.Lookup("env", "OTEL_EXPORTER_OTLP_ENDPOINT"); v != otelEndpoint {
		t.Errorf("endpoint %v", v)
	}
	if v, _ := d.Lookup("hooks", "SessionEnd"); len(asList(v)) != 1 {
		t.Errorf("hooks.SessionEnd %v", v)
	}
	if _, err := Undo(Options{Home: obs}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, tg.File)); got != claudeSettingsFixture {
		t.Errorf("uninstall gave\n%s", got)
	}
}

// TestOTelPlan_Malformed: an env or otel that is not an object, or an [otel] written inline, is
// refused with nothing written.
func TestOTelPlan_Malformed(t *testing.T) {
	for _, c := range []struct{ name, client, content string }{
		{"env a list", ClaudeCode, `{"env": ["A=1"]}`},
		{"otel a string", Codex, "otel = \"none\"\n"},
		{"otel inline", Codex, "otel = { environment = \"dev\" }\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, obs := otelTarget(t, c.client, &c.content, otelEndpoint)
			if _, err := Apply([]Target{tg}, Options{Home: obs}); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if got := string(readFile(t, tg.File)); got != c.content {
				t.Errorf("written:\n%s", got)
			}
		})
	}
}

func TestOTelEndpoint(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:4318": "http://127.0.0.1:4318",
		"localhost:4318": "http://localhost:4318",
		":4318":          "http://127.0.0.1:4318",
		"0.0.0.0:9000":   "http://127.0.0.1:9000",
		"[::]:4318":      "http://[::1]:4318",
		"[::1]:4318":     "http://[::1]:4318",
		"127.0.0.1":      "",
		"127.0.0.1:x":    "",
		"127.0.0.1:0":    "",
	} {
		got, err := OTelEndpoint(addr)
		if want == "" {
			if err == nil {
				t.Errorf("OTelEndpoint(%q) = %q, want an error", addr, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("OTelEndpoint(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
}

func TestLocateOTel(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	found := func() map[string]string {
		m := map[string]string{}
		for _, l := range LocateOTel(home, getenv, noPath) {
			if l.Found {
				m[l.Client] = l.File
			}
		}
		return m
	}
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	if f := found(); len(f) != 0 {
		t.Errorf("found %v with only Cursor set up", f)
	}
	env["CODEX_HOME"] = filepath.Join(home, "ch")
	writeFile(t, filepath.Join(home, "ch", "config.toml"), nil, 0o600)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	want := map[string]string{ClaudeCode: filepath.Join(home, ".claude", "settings.json"), Codex: filepath.Join(home, "ch", "config.toml")}
	if f := found(); len(f) != 2 || f[ClaudeCode] != want[ClaudeCode] || f[Codex] != want[Codex] {
		t.Errorf("found %v, want %v", f, want)
	}
}
