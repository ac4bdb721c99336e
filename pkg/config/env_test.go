package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestUnknownEnv(t *testing.T) {
	got := UnknownEnv([]string{
		"OBSERVER_COMPRESSION_ENABLE=true", // the typo
		"OBSERVER_COMPRESSION_ENABLED=true",
		"OBSERVER_HOME=/tmp/h",
		"OBSERVER_HOMEDIR=/tmp/h",
		"OBSERVER_CHAOS_RATE=5",
		"OBSERVER_BENCH_TURNS=10",
		"OBSERVER_MY_KEY=sk-x", // named by [memory] api_key_env
		"PATH=/bin",
		"OBSERVER_PROXY_ADDR=127.0.0.1:1",
	}, "OBSERVER_MY_KEY")
	want := []string{
		"environment variable OBSERVER_COMPRESSION_ENABLE is not one observer reads, and is ignored; the nearest known one is OBSERVER_COMPRESSION_ENABLED ([compression] enabled)",
		"environment variable OBSERVER_HOMEDIR is not one observer reads, and is ignored; the nearest known one is OBSERVER_HOME",
	}
	if !slices.Equal(got, want) {
		t.Errorf("UnknownEnv =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Load reports an unknown OBSERVER_ variable as a warning, and still loads.
func TestLoad_WarnsOfAnUnknownVariable(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "OBSERVER_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	home := t.TempDir()
	cfg, err := Load(home)
	if err != nil || cfg.Warnings != nil {
		t.Fatalf("Load = %v, warnings %q; want neither in a clean environment", err, cfg.Warnings)
	}
	t.Setenv("OBSERVER_COMPRESSION_ENABLE", "true")
	cfg, err = Load(home)
	if err != nil {
		t.Fatalf("an unknown variable stopped Load: %v", err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "OBSERVER_COMPRESSION_ENABLE ") ||
		!strings.Contains(cfg.Warnings[0], "OBSERVER_COMPRESSION_ENABLED") {
		t.Errorf("warnings %q, want one naming the variable and OBSERVER_COMPRESSION_ENABLED", cfg.Warnings)
	}
	if cfg.Compression.Enabled {
		t.Error("the misspelt variable turned compression on")
	}
	t.Setenv("OBSERVER_MEMORY_API_KEY_ENV", "OBSERVER_SUMMARY_KEY")
	t.Setenv("OBSERVER_SUMMARY_KEY", "sk-x")
	if cfg, _ = Load(home); len(cfg.Warnings) != 1 {
		t.Errorf("warnings %q: the variable [memory] api_key_env names is one observer reads", cfg.Warnings)
	}
}

// mentionedOnly are OBSERVER_ names the sources hold that observer does not read.
var mentionedOnly = map[string]bool{
	"OBSERVER_DEBUG": true, // internal/clientconfig/setup_test.go: a user's "env OBSERVER_DEBUG=1 observerctl hook"
	// The misspelling the warning's tests plant (internal/cli, internal/daemon).
	"OBSERVER_COMPRESSION_ENABLE": true,
}

// TestOtherVariables_AreTheOnesTheCodeReads keeps otherVariables true: every OBSERVER_ name in the
// Go sources, the scripts and the CI is a key's override, on the list, or of a listed family
// (a name ending in "_" is a family: a section's keys, or one of otherPrefixes); and every name on
// the list is still read somewhere. This file and env.go, which hold the list, are not read.
func TestOtherVariables_AreTheOnesTheCodeReads(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s: %v", root, err)
	}
	known := knownEnv()
	sections := map[string]bool{}
	for _, key := range known {
		if key != "-" {
			section, _, _ := strings.Cut(strings.TrimPrefix(key, "["), "]")
			sections[EnvName(section, "")] = true // OBSERVER_<SECTION>_
		}
	}
	name := regexp.MustCompile(`OBSERVER_[A-Z0-9_]+`)
	seen, reported := map[string]bool{}, map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		top, _, _ := strings.Cut(rel, string(filepath.Separator))
		if !strings.HasSuffix(path, ".go") && top != "scripts" && top != ".ci" && top != "deploy" && rel != "Makefile" {
			return nil
		}
		if rel == filepath.Join("pkg", "config", "env.go") || rel == filepath.Join("pkg", "config", "env_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range name.FindAllString(string(data), -1) {
			seen[n] = true
			switch {
			case known[n] != "", mentionedOnly[n]:
			case slices.ContainsFunc(otherPrefixes, func(p string) bool { return strings.HasPrefix(n, p) }):
			case strings.HasSuffix(n, "_") && sections[n]:
			case reported[n]:
			default:
				reported[n] = true
				t.Errorf("%s: %s is neither a configuration key's variable nor on config.otherVariables (pkg/config/env.go): add it there with what it is for, or warnings will call it unknown", rel, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range otherVariables {
		if !seen[n] {
			t.Errorf("%s is on config.otherVariables, but nothing reads it any more: take it off", n)
		}
	}
}
