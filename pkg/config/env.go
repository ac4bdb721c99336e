package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// otherVariables are the OBSERVER_ environment variables observer reads that are not overrides of
// a configuration key: an OBSERVER_ variable that is neither is a typo, and UnknownEnv warns of it.
// TestOtherVariables_AreTheOnesTheCodeReads keeps the list equal to what the code, the scripts
// and the CI read.
var otherVariables = []string{
	"OBSERVER_HOME",                 // the home directory (HomeDir)
	"OBSERVER_SUPERVISOR_PID",       // set by `observerctl up` for its children (Supervised)
	"OBSERVER_CPUPROFILE",           // observerctl's CPU profile
	"OBSERVER_MEMPROFILE",           // observerctl's heap profile
	"OBSERVER_TRACE",                // observerctl's execution trace
	"OBSERVER_PROXY_CPUPROFILE",     // observer-proxy's CPU profile
	"OBSERVER_WATCH_CPUPROFILE",     // observer-watch's CPU profile
	"OBSERVER_DASH_CPUPROFILE",      // observer-dash's CPU profile
	"OBSERVER_AIDER_DIRS",           // where Aider's histories are looked for
	"OBSERVER_CRUSH_DIRS",           // where Crush's databases are looked for
	"OBSERVER_ANTIGRAVITY_DIRS",     // Antigravity's data directories (it honours no variable of its own)
	"OBSERVER_ZCODE_DIRS",           // where ZCode's database directories are looked for
	"OBSERVER_WINDSURF_DIRS",        // where Windsurf's hook transcripts are looked for
	"OBSERVER_WARP_DIRS",            // where Warp's database directories are looked for
	"OBSERVER_DEVIN_DIRS",           // where Devin CLI's database directories are looked for
	"OBSERVER_TRAE_DIRS",            // trae-agent's trajectory directories (it writes them where it runs)
	"OBSERVER_COPILOT_VS_DIRS",      // Visual Studio Copilot's trace directories (Windows has defaults)
	"OBSERVER_AUGGIE_DIRS",          // Auggie's cache directories (its --augment-cache-dir)
	"OBSERVER_IFLOW_DIRS",           // iFlow CLI's projects directories
	"OBSERVER_QODER_DIRS",           // Qoder CLI's projects directories
	"OBSERVER_VSCODE_GLOBALSTORAGE", // VS Code's globalStorage directories (Cline, Roo, Kilo)
	"OBSERVER_VSCODE_USER_DIRS",     // VS Code's User directories (Copilot Chat)
	"OBSERVER_FAKE_OPENAI_API_KEY",  // the key OpenClaw is given against a fake API
	"OBSERVER_FAKE_OPENAI_BASE_URL", // the fake API OpenClaw is pointed at
	// Tests, benchmarks and CI: the real clients' binaries, the corpus, and what they require.
	"OBSERVER_CORPUS", "OBSERVER_REQUIRE_CLIENTS", "OBSERVER_SHOTS", "OBSERVER_ARTIFACTS", "OBSERVER_CHAOS",
	"OBSERVER_CLAUDE_BIN", "OBSERVER_CODEX_BIN", "OBSERVER_GEMINI_BIN", "OBSERVER_QWEN_BIN", "OBSERVER_OPENCODE_BIN",
	"OBSERVER_KILO_BIN", "OBSERVER_CLINE_BIN", "OBSERVER_PI_BIN", "OBSERVER_CONTINUE_BIN", "OBSERVER_DROID_BIN", "OBSERVER_COPILOT_BIN", "OBSERVER_GROKCLI_BIN", "OBSERVER_OPENCLAW_BIN", "OBSERVER_OPENCLAW_NODE",
	"OBSERVER_NODE_BIN", "OBSERVER_CCUSAGE_BIN", "OBSERVER_MCP_INSPECTOR_BIN", "OBSERVER_MCP_FILESYSTEM_BIN",
	"OBSERVER_MCP_BENCH_DIR", "OBSERVER_DASH_BENCH_DIR", "OBSERVER_STATUSLINE_HOME", "OBSERVER_E2E_SECRETS_MCP",
	"OBSERVER_TEST_ZONE", "OBSERVER_TEST_MEMORY_MODEL_KEY", "OBSERVER_TEST_MEMORY_MODEL_NO_KEY",
	"OBSERVER_GOLDEN_UPDATE", // rewrites the golden snapshot (internal/goldentest)
}

// otherPrefixes name families of variables the tests and benchmarks read (OBSERVER_CHAOS_RATE,
// OBSERVER_BENCH_TURNS, ...), none of them a configuration key.
var otherPrefixes = []string{"OBSERVER_CHAOS_", "OBSERVER_BENCH_"}

// UnknownEnv returns a warning for each OBSERVER_ variable of environ ("NAME=value" items, as
// os.Environ gives them) that observer does not read: neither a key's override nor one of
// otherVariables, otherPrefixes or also (names the configuration itself points at, such as
// [memory] api_key_env). Each names the nearest known variable. Such a variable is ignored, as an
// unknown key in config.toml is not: a typo in the environment (OBSERVER_COMPRESSION_ENABLE for
// OBSERVER_COMPRESSION_ENABLED) would otherwise go unnoticed, while refusing to start on it would
// stop every component over a variable meant for something else.
func UnknownEnv(environ []string, also ...string) []string {
	known := knownEnv()
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "OBSERVER_") || known[name] != "" || slices.Contains(also, name) ||
			slices.ContainsFunc(otherPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		near, dist := "", -1
		for k := range known {
			if d := editDistance(name, k); dist < 0 || d < dist || d == dist && k < near {
				near, dist = k, d
			}
		}
		what := near
		if key := known[near]; key != "-" {
			what += " (" + key + ")"
		}
		out = append(out, fmt.Sprintf("environment variable %s is not one observer reads, and is ignored; the nearest known one is %s", name, what))
	}
	slices.Sort(out)
	return out
}

// knownEnv maps every variable observer reads to the key it overrides ("[compression] enabled"),
// or "-" for otherVariables.
func knownEnv() map[string]string {
	known := map[string]string{}
	cfg := Default()
	forEachKey(&cfg, func(section, key, env, _ string, _ reflect.Value) {
		if key != "" {
			known[env] = "[" + section + "] " + key
		}
	})
	for _, name := range otherVariables {
		known[name] = "-"
	}
	return known
}

// editDistance is the Levenshtein distance between a and b, in bytes (the names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
