package config_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/pricing"
)

// clearEnv unsets every OBSERVER_ variable for the test, so the developer's own environment cannot
// change what Load returns. t.Setenv restores them afterwards.
func clearEnv(tb testing.TB) {
	tb.Helper()
	t, ok := tb.(*testing.T)
	if !ok {
		tb.Fatal("clearEnv needs a *testing.T")
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OBSERVER_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
}

func writeConfig(tb testing.TB, home, body string) {
	tb.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(config.Path(home), []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func wantDefault(home string) config.Config {
	c := config.Default()
	c.Home = home
	return c
}

func perm(tb testing.TB, path string) os.FileMode {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Mode().Perm()
}

// keyLine matches a commented-out key in the default file: "# key = value".
var keyLine = regexp.MustCompile(`^# ([a-z0-9_]+) = `)

func TestLoad_EmptyHome(t *testing.T) {
	clearEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDefault(home); !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load = %+v\nwant %+v", cfg, want)
	}
	if p := perm(t, home); p != 0o700 {
		t.Errorf("home mode = %v, want 0700", p)
	}
	if p := perm(t, config.Path(home)); p != 0o600 {
		t.Errorf("config.toml mode = %v, want 0600", p)
	}
	data, err := os.ReadFile(config.Path(home))
	if err != nil {
		t.Fatal(err)
	}
	// Only section headers are live: every key is commented out, so the file changes nothing.
	var keys []string
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			if m := keyLine.FindStringSubmatch(line); m != nil {
				keys = append(keys, m[1])
			}
			continue
		}
		if !strings.HasPrefix(line, "[") {
			t.Errorf("live line in the default file: %q", line)
		}
	}
	if n := countKeys(); len(keys) != n {
		t.Errorf("default file has %d commented keys %v, Config has %d", len(keys), keys, n)
	}

	// A second Load keeps the file as it is.
	writeConfig(t, home, "[bus]\nport = 1\n")
	cfg, err = config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bus.Port != 1 {
		t.Errorf("second Load: port = %d, want 1 from the edited file", cfg.Bus.Port)
	}
}

// countKeys counts the keys of every section of Config.
func countKeys() int {
	n := 0
	rt := reflect.TypeFor[config.Config]()
	for i := range rt.NumField() {
		if f := rt.Field(i); f.Type.Kind() == reflect.Struct && f.Tag.Get("toml") != "-" {
			n += f.Type.NumField()
		}
	}
	return n
}

func TestWriteDefault_UncommentedIsDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := config.WriteDefault(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if keyLine.MatchString(line) {
			line = strings.TrimPrefix(line, "# ")
			n++
		}
		out.WriteString(line + "\n")
	}
	if n != countKeys() {
		t.Fatalf("uncommented %d keys, want %d:\n%s", n, countKeys(), out.String())
	}
	// Decode into a zero Config: a key missing from the file would stay zero and differ from Default.
	var got config.Config
	dec := toml.NewDecoder(bytes.NewReader(out.Bytes())).DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("uncommented default file does not parse: %v\n%s", err, out.String())
	}
	if want := config.Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("uncommented default file = %+v\nwant %+v", got, want)
	}

	// WriteDefault leaves an existing file alone.
	if err := os.WriteFile(path, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := config.WriteDefault(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "# mine\n" {
		t.Errorf("WriteDefault overwrote an existing file: %q", b)
	}
}

func TestLoad_File(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	writeConfig(t, home, `
[bus]
port = 5000
max_age = '1h'

[writer]
flush_interval = '250ms'

[proxy]
anthropic_upstream = 'http://127.0.0.1:9999'

[log]
level = 'debug'
`)
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	want := wantDefault(home)
	want.Bus.Port = 5000
	want.Bus.MaxAge = config.Duration(time.Hour)
	want.Writer.FlushInterval = config.Duration(250 * time.Millisecond)
	want.Proxy.AnthropicUpstream = "http://127.0.0.1:9999"
	want.Log.Level = "debug"
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load = %+v\nwant %+v", cfg, want)
	}
}

func TestLoad_EnvBeatsFile(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	writeConfig(t, home, `
[bus]
port = 5000
[writer]
flush_interval = '250ms'
[proxy]
anthropic_upstream = 'http://file.example'
`)
	t.Setenv("OBSERVER_PROXY_ANTHROPIC_UPSTREAM", "http://env.example")
	t.Setenv("OBSERVER_PROXY_GEMINI_UPSTREAM", "http://127.0.0.1:9999")
	t.Setenv("OBSERVER_BUS_PORT", "6000")
	t.Setenv("OBSERVER_WRITER_FLUSH_INTERVAL", "2s")
	t.Setenv("OBSERVER_HOOK_MAX_PAYLOAD_BYTES", "1024")
	t.Setenv("OBSERVER_OTLP_BODY_TIMEOUT", "5s")
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	want := wantDefault(home)
	want.Proxy.AnthropicUpstream = "http://env.example"
	want.Proxy.GeminiUpstream = "http://127.0.0.1:9999"
	want.Bus.Port = 6000
	want.Writer.FlushInterval = config.Duration(2 * time.Second)
	want.Hook.MaxPayloadBytes = 1024
	want.OTLP.BodyTimeout = config.Duration(5 * time.Second)
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load = %+v\nwant %+v", cfg, want)
	}
}

func TestLoad_BadEnv(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"OBSERVER_BUS_PORT", "not-a-port"},
		{"OBSERVER_BUS_PORT", "4247.5"},
		{"OBSERVER_BUS_MAX_BYTES", "1GB"},
		{"OBSERVER_WRITER_FLUSH_INTERVAL", "50"},
		{"OBSERVER_HOOK_TIMEOUT", "soon"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(tc.name, tc.value)
			_, err := config.Load(t.TempDir())
			if err == nil {
				t.Fatalf("Load with %s=%q succeeded", tc.name, tc.value)
			}
			if !strings.Contains(err.Error(), tc.name) {
				t.Errorf("error %q does not name %s", err, tc.name)
			}
		})
	}
	t.Run("Several", func(t *testing.T) {
		clearEnv(t)
		t.Setenv("OBSERVER_BUS_PORT", "x")
		t.Setenv("OBSERVER_WRITER_ACK_WAIT", "y")
		_, err := config.Load(t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "OBSERVER_BUS_PORT") || !strings.Contains(err.Error(), "OBSERVER_WRITER_ACK_WAIT") {
			t.Errorf("Load = %v, want an error naming both variables", err)
		}
	})
}

func TestLoad_BadFile(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"UnknownKey", "[bus]\nprot = 4247\n", "prot"},
		{"UnknownSection", "[buss]\nport = 4247\n", "buss"},
		{"UnknownTopLevelKey", "home = '/tmp'\n", "home"},
		{"WrongType", "[bus]\nport = 'high'\n", "config.toml:2:"},
		{"BadDuration", "[writer]\nflush_interval = 'fast'\n", "config.toml:2:"},
		{"Syntax", "[bus]\nport = \n", "config.toml:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			home := t.TempDir()
			writeConfig(t, home, tc.body)
			_, err := config.Load(home)
			if err == nil {
				t.Fatalf("Load accepted %q", tc.body)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestLoad_TightensHome(t *testing.T) {
	clearEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o755); err != nil { // explicit: Mkdir is subject to the umask
		t.Fatal(err)
	}
	if _, err := config.Load(home); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, home); p != 0o700 {
		t.Errorf("home mode after Load = %v, want 0700", p)
	}
}

func TestEnsureDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := config.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, dir); p != 0o700 {
		t.Errorf("new dir mode = %v, want 0700", p)
	}
	for _, mode := range []os.FileMode{0o750, 0o701, 0o777} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		if err := config.EnsureDir(dir); err != nil {
			t.Fatal(err)
		}
		if p := perm(t, dir); p != 0o700 {
			t.Errorf("EnsureDir on %v: mode = %v, want 0700", mode, p)
		}
	}
	// A dir already private to its owner is left as it is.
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if err := config.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, dir); p != 0o500 {
		t.Errorf("EnsureDir changed a 0500 dir to %v", p)
	}
}

func TestEnvName(t *testing.T) {
	for _, tc := range []struct{ section, key, want string }{
		{"proxy", "anthropic_upstream", "OBSERVER_PROXY_ANTHROPIC_UPSTREAM"},
		{"bus", "port", "OBSERVER_BUS_PORT"},
		{"writer", "flush_interval", "OBSERVER_WRITER_FLUSH_INTERVAL"},
	} {
		if got := config.EnvName(tc.section, tc.key); got != tc.want {
			t.Errorf("EnvName(%q, %q) = %q, want %q", tc.section, tc.key, got, tc.want)
		}
	}
}

// TestApplyEnv_Names checks that ApplyEnv looks up exactly the variables the default file
// documents, one per key.
func TestApplyEnv_Names(t *testing.T) {
	var asked []string
	cfg := config.Default()
	if err := config.ApplyEnv(&cfg, func(name string) (string, bool) {
		asked = append(asked, name)
		return "", false
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, config.Default()) {
		t.Errorf("ApplyEnv with no variables changed the config: %+v", cfg)
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := config.WriteDefault(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	documented := regexp.MustCompile(`\((OBSERVER_[A-Z0-9_]+)\)`).FindAllStringSubmatch(string(data), -1)
	var names []string
	for _, m := range documented {
		names = append(names, m[1])
	}
	sort.Strings(asked)
	sort.Strings(names)
	if !reflect.DeepEqual(asked, names) {
		t.Errorf("ApplyEnv asked for %v\nthe default file documents %v", asked, names)
	}
	if len(asked) != countKeys() {
		t.Errorf("ApplyEnv asked for %d variables, Config has %d keys", len(asked), countKeys())
	}
}

func TestApplyEnv_EveryType(t *testing.T) {
	env := map[string]string{
		"OBSERVER_BUS_HOST":      "0.0.0.0",
		"OBSERVER_BUS_PORT":      "-1",
		"OBSERVER_BUS_MAX_AGE":   "90m",
		"OBSERVER_BUS_MAX_BYTES": "9007199254740993",
		"OBSERVER_LOG_LEVEL":     "",
	}
	cfg := config.Default()
	err := config.ApplyEnv(&cfg, func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	want.Bus.Host = "0.0.0.0"
	want.Bus.Port = -1
	want.Bus.MaxAge = config.Duration(90 * time.Minute)
	want.Bus.MaxBytes = 9007199254740993
	want.Log.Level = "" // set but empty is still set
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("ApplyEnv = %+v\nwant %+v", cfg, want)
	}
}

func TestDuration_Text(t *testing.T) {
	var d config.Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil {
		t.Fatal(err)
	}
	if d.D() != 90*time.Minute {
		t.Errorf("D() = %v, want 1h30m", d.D())
	}
	b, err := d.MarshalText()
	if err != nil || string(b) != "1h30m0s" {
		t.Errorf("MarshalText = %q, %v", b, err)
	}
	before := d
	if err := d.UnmarshalText([]byte("90")); err == nil {
		t.Error("UnmarshalText(\"90\") succeeded; a duration needs a unit")
	}
	if d != before {
		t.Errorf("a failed UnmarshalText changed the value to %v", d.D())
	}
}

func TestHomeDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("OBSERVER_HOME", "rel/home")
	got, err := config.HomeDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "rel", "home"); got != want {
		t.Errorf("HomeDir with a relative OBSERVER_HOME = %q, want %q", got, want)
	}
	t.Setenv("OBSERVER_HOME", "")
	t.Setenv("HOME", dir)
	got, err = config.HomeDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, ".observer"); got != want {
		t.Errorf("HomeDir without OBSERVER_HOME = %q, want %q", got, want)
	}
}

func TestConfig_Paths(t *testing.T) {
	c := config.Default()
	c.Home = "/h"
	for got, want := range map[string]string{
		c.StorePath(): "/h/observer.db",
		c.BusDir():    "/h/bus",
		c.TokenPath(): "/h/bus.token",
		c.SpoolDir():  "/h/spool",
		c.LogDir():    "/h/logs",
		c.RunDir():    "/h/run",
		c.BusURL():    "nats://127.0.0.1:4247",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// The watcher's lifecycle timings: 1m and 5m unless the file or OBSERVER_WATCH_* say otherwise.
func TestLoad_WatchTimings(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Watch.IdleAfter.D() != time.Minute || cfg.Watch.FinalizeAfter.D() != 5*time.Minute {
		t.Errorf("default watch timings = %v, %v; want 1m, 5m", cfg.Watch.IdleAfter.D(), cfg.Watch.FinalizeAfter.D())
	}
	writeConfig(t, home, "[watch]\nidle_after = '30s'\nfinalize_after = '10m'\n")
	t.Setenv("OBSERVER_WATCH_FINALIZE_AFTER", "45s")
	if cfg, err = config.Load(home); err != nil {
		t.Fatal(err)
	}
	if cfg.Watch.IdleAfter.D() != 30*time.Second || cfg.Watch.FinalizeAfter.D() != 45*time.Second {
		t.Errorf("watch timings = %v, %v; want 30s from the file, 45s from the environment",
			cfg.Watch.IdleAfter.D(), cfg.Watch.FinalizeAfter.D())
	}
}

// The [mcp] section: defaults, the file, and list values from the environment in both forms.
func TestLoad_MCP(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MCP.CallTimeout.D() != 120*time.Second || cfg.MCP.RawPayloads || len(cfg.MCP.Hide) != 0 ||
		len(cfg.MCP.Redact) != 0 || cfg.MCP.MaxTools != 0 || cfg.MCP.History != 1000 {
		t.Errorf("default [mcp] = %+v", cfg.MCP)
	}
	writeConfig(t, home, "[mcp]\ncall_timeout = '5s'\nraw_payloads = true\nhide = ['write_file']\nredact = ['acct-[0-9]{4,8}']\nmax_tools = 3\n")
	if cfg, err = config.Load(home); err != nil {
		t.Fatal(err)
	}
	want := config.MCP{CallTimeout: config.Duration(5 * time.Second), RawPayloads: true, Hide: []string{"write_file"},
		Redact: []string{"acct-[0-9]{4,8}"}, MaxTools: 3, History: 1000}
	if !reflect.DeepEqual(cfg.MCP, want) {
		t.Errorf("[mcp] from the file = %+v, want %+v", cfg.MCP, want)
	}

	for _, tc := range []struct {
		env  string
		want []string
	}{
		{"write_file, move_file,,", []string{"write_file", "move_file"}},
		{`['a{1,2}', "b"]`, []string{"a{1,2}", "b"}},
		{"", []string{}},
	} {
		t.Setenv("OBSERVER_MCP_HIDE", tc.env)
		if cfg, err = config.Load(home); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cfg.MCP.Hide, tc.want) {
			t.Errorf("OBSERVER_MCP_HIDE=%q: hide = %q, want %q", tc.env, cfg.MCP.Hide, tc.want)
		}
	}
	t.Setenv("OBSERVER_MCP_REDACT", "['unterminated")
	if _, err := config.Load(home); err == nil || !strings.Contains(err.Error(), "OBSERVER_MCP_REDACT") {
		t.Errorf("Load with a broken TOML array = %v, want an error naming OBSERVER_MCP_REDACT", err)
	}
}

// TestLoad_BudgetAndPricing reads the sections with maps and numbers from the file and from the
// environment, and refuses a malformed inline table.
func TestLoad_BudgetAndPricing(t *testing.T) {
	home := t.TempDir()
	file := `[budget]
daily = 12.5
projects = { "/src/app" = 40 }

[pricing.models."my-model"]
input = 1.5
output = 6
cache_read = 0.15
`
	if err := os.WriteFile(config.Path(home), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Budget.Daily != 12.5 || cfg.Budget.Projects["/src/app"] != 40 || cfg.Budget.Monthly != 0 {
		t.Errorf("[budget] = %+v", cfg.Budget)
	}
	if p := cfg.Pricing.Models["my-model"]; p.Input != 1.5 || p.Output != 6 || p.CacheRead != 0.15 {
		t.Errorf("[pricing.models.my-model] = %+v", p)
	}
	t.Setenv("OBSERVER_BUDGET_MONTHLY", "300")
	t.Setenv("OBSERVER_BUDGET_PROJECTS", `{ "/src/other" = 5.5 }`)
	if cfg, err = config.Load(home); err != nil {
		t.Fatal(err)
	}
	if cfg.Budget.Monthly != 300 || cfg.Budget.Projects["/src/other"] != 5.5 || len(cfg.Budget.Projects) != 1 {
		t.Errorf("[budget] with env = %+v", cfg.Budget)
	}
	t.Setenv("OBSERVER_BUDGET_PROJECTS", `{ "/src/other" = }`)
	if _, err := config.Load(home); err == nil || !strings.Contains(err.Error(), "OBSERVER_BUDGET_PROJECTS") {
		t.Errorf("Load with a broken inline table = %v, want an error naming OBSERVER_BUDGET_PROJECTS", err)
	}
	t.Setenv("OBSERVER_BUDGET_PROJECTS", "")
	t.Setenv("OBSERVER_BUDGET_DAILY", "lots")
	if _, err := config.Load(home); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("Load with OBSERVER_BUDGET_DAILY=lots = %v, want not a number", err)
	}
}

// TestLoad_PricingAutoUpdateOnByDefault: a new user's suite keeps its prices current by itself
// ([pricing] auto_update on, LiteLLM's public file at most daily), and config.toml written on first
// run says so; auto_update = false in the file or OBSERVER_PRICING_AUTO_UPDATE=false turns it off.
func TestLoad_PricingAutoUpdateOnByDefault(t *testing.T) {
	t.Setenv("OBSERVER_PRICING_AUTO_UPDATE", "")
	os.Unsetenv("OBSERVER_PRICING_AUTO_UPDATE")
	home := t.TempDir()
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Pricing; !p.AutoUpdate || p.URL != config.DefaultPricingURL || p.UpdateEvery.D() != 24*time.Hour {
		t.Errorf("default [pricing] = auto_update %v, url %q, update_every %v; want on, LiteLLM's file, 24h", p.AutoUpdate, p.URL, p.UpdateEvery.D())
	}
	b, err := os.ReadFile(config.Path(home))
	if err != nil || !strings.Contains(string(b), "auto_update = true") {
		t.Errorf("config.toml written on first run does not show auto_update = true (%v):\n%s", err, b)
	}
	if err := os.WriteFile(config.Path(home), []byte("[pricing]\nauto_update = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = config.Load(home); err != nil || cfg.Pricing.AutoUpdate {
		t.Errorf("auto_update = false in config.toml: %v, %v", cfg.Pricing.AutoUpdate, err)
	}
	os.Remove(config.Path(home))
	t.Setenv("OBSERVER_PRICING_AUTO_UPDATE", "false")
	if cfg, err = config.Load(home); err != nil || cfg.Pricing.AutoUpdate {
		t.Errorf("OBSERVER_PRICING_AUTO_UPDATE=false: %v, %v", cfg.Pricing.AutoUpdate, err)
	}
}

// TestLoad_Plans reads [plans] from the file and from OBSERVER_PLANS_<PROVIDER>, and names the
// providers when the file gives an unknown one.
func TestLoad_Plans(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	file := `[plans]
anthropic = { name = "max-20x", usd_month = 200 }
openai = { name = "pro", usd_month = 200 }
`
	if err := os.WriteFile(config.Path(home), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]config.Plan{"anthropic": {Name: "max-20x", USDMonth: 200}, "openai": {Name: "pro", USDMonth: 200}}
	if got := cfg.Plans.ByProvider(); !reflect.DeepEqual(got, want) {
		t.Errorf("Plans.ByProvider() = %v, want %v", got, want)
	}
	t.Setenv("OBSERVER_PLANS_ANTHROPIC", `{ name = "pro", usd_month = 20 }`)
	t.Setenv("OBSERVER_PLANS_GITHUB", `{ name = "pro+", usd_month = 39 }`)
	if cfg, err = config.Load(home); err != nil {
		t.Fatal(err)
	}
	want["anthropic"], want["github"] = config.Plan{Name: "pro", USDMonth: 20}, config.Plan{Name: "pro+", USDMonth: 39}
	if got := cfg.Plans.ByProvider(); !reflect.DeepEqual(got, want) {
		t.Errorf("Plans.ByProvider() with env = %v, want %v", got, want)
	}
	t.Setenv("OBSERVER_PLANS_GITHUB", `{ name = "pro+", usd_month = -1 }`)
	if _, err := config.Load(home); err == nil || !strings.Contains(err.Error(), "OBSERVER_PLANS_GITHUB") || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("Load with a negative plan price in the environment = %v, want an error naming OBSERVER_PLANS_GITHUB", err)
	}
	t.Setenv("OBSERVER_PLANS_GITHUB", "")
	t.Setenv("OBSERVER_PLANS_ANTHROPIC", "")
	os.Unsetenv("OBSERVER_PLANS_GITHUB")
	os.Unsetenv("OBSERVER_PLANS_ANTHROPIC")
	if err := os.WriteFile(config.Path(home), []byte("[plans]\nclaude = { name = \"max\", usd_month = 100 }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(home)
	if err == nil || !strings.Contains(err.Error(), "[plans] is keyed by provider: anthropic, openai") || !strings.Contains(err.Error(), `"claude" is not one`) {
		t.Errorf("Load with an unknown provider = %v, want the providers listed", err)
	}
}

// TestPlans_KeysAreTheProviders keeps [plans] keyed by every provider a turn can be given: those
// of pricing.Providers, and github for the Copilot clients.
func TestPlans_KeysAreTheProviders(t *testing.T) {
	want := append(slices.Clone(pricing.Providers), "github")
	got := config.PlanProviders()
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("[plans] keys = %v, want %v", got, want)
	}
}
