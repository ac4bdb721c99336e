package config_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/config"
)

// Each bad value is refused by Load with the file and line that set it, the key, the value and
// what it must be; the same value from the environment names the variable instead.
func TestLoad_Validates(t *testing.T) {
	for _, tc := range []struct{ section, key, value, want string }{
		{"log", "level", `"loud"`, "must be one of debug, info, warn, error"},
		{"writer", "batch_size", `0`, "must be between 1 and 100000"},
		{"writer", "batch_size", `-5`, "must be between 1 and 100000"},
		{"writer", "ack_wait", `"-1s"`, "must be between 1s and 1h0m0s"},
		{"writer", "flush_interval", `12`, "must be a duration in quotes"},
		{"writer", "flush_interval", `"0s"`, "must be between 1ms and 1m0s"},
		{"hook", "max_payload_bytes", `-1`, "must be between 1024 and"},
		{"hook", "timeout", `"0s"`, "must be between 10ms and"},
		{"hook", "stdin_timeout", `"1ns"`, "must be between 10ms and"},
		{"bus", "port", `70000`, "must be between 1 and 65535"},
		{"bus", "max_bytes", `10`, "must be at least 1048576"},
		{"bus", "host", `""`, "must be a host name or address"},
		{"proxy", "addr", `"localhost"`, "must be host:port"},
		{"proxy", "anthropic_upstream", `"api.anthropic.com"`, "must be an http(s) URL"},
		{"proxy", "openai_upstream", `"ftp://x"`, "must be an http(s) URL"},
		{"proxy", "openai_upstream", `"https://user:pw@api.openai.com"`, "must not carry a user or password"},
		{"proxy", "gemini_upstream", `"generativelanguage.googleapis.com"`, "must be an http(s) URL"},
		{"dash", "addr", `"127.0.0.1:99999"`, "port must be a number from 0 to 65535"},
		{"dash", "token", `"                "`, "must not contain spaces"},
		{"dash", "token", `"aaaaaaaaaaaaaaaaaaaaaaaa"`, "must be random"},
		{"dash", "token", `"short"`, "at least 16 characters"},
		{"watch", "idle_after", `"0s"`, "must be between 1s and"},
		{"mcp", "redact", `["(unclosed"]`, "is not a regular expression"},
		{"mcp", "max_tools", `-1`, "must be between 0 and"},
		{"mcp", "history", `0`, "must be between 1 and"},
		{"retention", "max_age", `"-24h"`, "must be between 0s and"},
		{"retention", "max_actions", `-1`, "must be at least 0"},
		{"budget", "daily", `-3`, "must be a number between 0 and"},
		{"budget", "projects", `{ "/src/app" = -1 }`, `"/src/app": must be a number between 0 and`},
		{"plans", "anthropic", `{ name = "max-20x", usd_month = -200 }`, "usd_month must not be negative"},
		{"plans", "openai", `{ name = "pro" }`, "usd_month is missing"},
		{"plans", "github", `{ usd_month = 2e6 }`, "usd_month must be at most 1e6"},
		{"alerts", "webhook_url", `"hooks.slack.com/services/T0/B0/XYZ"`, "must be an https:// URL"},
		{"alerts", "webhook_url", `"ftp://example.com/hook"`, "must be an https:// URL"},
		{"alerts", "webhook_url", `"http://example.com/hook"`, "must be https://"},
		{"alerts", "webhook_url", `"http://10.0.0.1:8080/hook"`, "must be https://"},
		{"alerts", "webhook_url", `"https://u:p@example.com/hook"`, "must not carry a user or password"},
		{"alerts", "format", `"teams"`, "must be one of slack, discord, json"},
		{"limits", "warn_at", `120`, "must be a number between 0 and"},
		{"otlp", "body_timeout", `"10ms"`, "must be between 100ms and 1h0m0s"},
		{"otlp", "body_timeout", `"0s"`, "must be between 100ms and 1h0m0s"},
	} {
		t.Run(tc.section+"."+tc.key+"="+tc.value, func(t *testing.T) {
			clearEnv(t)
			home := t.TempDir()
			writeConfig(t, home, fmt.Sprintf("# a comment\n\n[%s]\n%s = %s\n", tc.section, tc.key, tc.value))
			_, err := config.Load(home)
			if err == nil {
				t.Fatalf("Load accepted [%s] %s = %s", tc.section, tc.key, tc.value)
			}
			for _, want := range []string{config.Path(home) + ":4: ", "[" + tc.section + "] " + tc.key + " = ", tc.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(tc.value, "{") || strings.Contains(tc.value, "[") {
				return // lists and tables from the environment have their own syntax
			}
			writeConfig(t, home, "")
			env := config.EnvName(tc.section, tc.key)
			t.Setenv(env, strings.Trim(tc.value, `"`))
			_, err = config.Load(home)
			if tc.want == "must be a duration in quotes" {
				if err == nil {
					t.Fatalf("Load accepted %s=%s", env, tc.value)
				}
				return // "12" in the environment is not a duration: the parser says so
			}
			if err == nil || !strings.Contains(err.Error(), env+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s=%s: error %v, want it to name the variable and say %q", env, tc.value, err, tc.want)
			}
		})
	}
}

// Every problem in a file is reported at once, each with its own line.
func TestLoad_ValidatesAll(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	writeConfig(t, home, "[writer]\nbatch_size = 0\nflush_interval = 12\n\n[log]\nlevel = \"loud\"\n")
	_, err := config.Load(home)
	if err == nil {
		t.Fatal("Load accepted three bad values")
	}
	for _, want := range []string{":2: [writer] batch_size", ":3: [writer] flush_interval", ":6: [log] level"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// Good values at the edges of each range, and the defaults, pass.
func TestLoad_ValidEdges(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	writeConfig(t, home, `[writer]
batch_size = 1
flush_interval = "1ms"
ack_wait = "1s"
[hook]
max_payload_bytes = 1024
[watch]
idle_after = "1s"
finalize_after = "1s"
[dash]
token = "0123456789abcdef0123"
addr = "[::1]:0"
[proxy]
anthropic_upstream = "http://127.0.0.1:9999"
[mcp]
redact = ["sk-[a-z]+"]
max_tools = 0
[retention]
max_age = "0s"
`)
	if _, err := config.Load(home); err != nil {
		t.Fatal(err)
	}
}

// Every key whose type admits a value observer cannot use has a rule. Keys left out on purpose:
// a boolean, a list of tool names (any name is fine), and the price overrides, which
// internal/prices validates with the price table's own rules.
func TestValidate_EveryKeyHasARule(t *testing.T) {
	free := map[string]bool{"mcp.raw_payloads": true, "mcp.hide": true, "pricing.models": true, "pricing.auto_update": true,
		"compression.enabled": true, "compression.stash": true}
	cfg := config.Default()
	v := reflect.ValueOf(cfg)
	for i := 0; i < v.NumField(); i++ {
		section := v.Type().Field(i).Tag.Get("toml")
		if section == "" || section == "-" {
			continue
		}
		st := v.Field(i).Type()
		for j := 0; j < st.NumField(); j++ {
			name := section + "." + st.Field(j).Tag.Get("toml")
			if !free[name] && !config.HasRule(name) {
				t.Errorf("%s has no validation rule", name)
			}
		}
	}
}

func TestCheckToken(t *testing.T) {
	for _, tok := range []string{"0123456789abcdef0123", "f3a9c1d07b4e2a6c5d8e9f01", "Zk3_q9Lm-8Rt2vX1pQ7sWn4B"} {
		if err := config.CheckToken(tok); err != nil {
			t.Errorf("CheckToken(%q) = %v, want nil", tok, err)
		}
	}
	for _, tok := range []string{"", "short", "                ", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abababababababababababab", "aabbccddaabbccddaabbccdd", "has a space in it 1234", "tab\tinside0123456789"} {
		if err := config.CheckToken(tok); err == nil {
			t.Errorf("CheckToken(%q) = nil, want an error", tok)
		}
	}
}

// [alerts]: the file's values, the environment's overrides, the loopback exception to https://,
// and an error that never shows the URL's path, which is the webhook's token.
func TestLoad_Alerts(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	writeConfig(t, home, "[alerts]\nwebhook_url = \"https://hooks.slack.com/services/T0/B0/filetoken\"\n")
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Alerts.WebhookURL != "https://hooks.slack.com/services/T0/B0/filetoken" || cfg.Alerts.Format != "slack" {
		t.Errorf("[alerts] = %+v, want the file's URL and the default format slack", cfg.Alerts)
	}
	for _, u := range []string{"http://127.0.0.1:9/hook", "http://[::1]:9/hook", "http://localhost/hook", "https://example.com/x"} {
		t.Setenv("OBSERVER_ALERTS_WEBHOOK_URL", u)
		t.Setenv("OBSERVER_ALERTS_FORMAT", "discord")
		cfg, err := config.Load(home)
		if err != nil {
			t.Fatalf("OBSERVER_ALERTS_WEBHOOK_URL=%s: %v", u, err)
		}
		if cfg.Alerts.WebhookURL != u || cfg.Alerts.Format != "discord" {
			t.Errorf("with the environment, [alerts] = %+v", cfg.Alerts)
		}
	}
	t.Setenv("OBSERVER_ALERTS_WEBHOOK_URL", "http://example.com/services/T0/B0/envtoken")
	_, err = config.Load(home)
	if err == nil || !strings.Contains(err.Error(), "OBSERVER_ALERTS_WEBHOOK_URL: [alerts] webhook_url = \"http://example.com/…\": must be https://") {
		t.Errorf("a plain-http URL to another host: error %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "envtoken") {
		t.Errorf("the error shows the URL's token: %v", err)
	}
}
