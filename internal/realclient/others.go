package realclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The versions of the other terminal agents the tests were verified with (.ci/run installs them).
const (
	OpenCodePackage = "opencode-ai@1.18.33"
	KiloPackage     = "@kilocode/cli@7.7.7"
	QwenCodePackage = "@qwen-code/qwen-code@0.24.4"
	PiPackage       = "@mariozechner/pi-coding-agent@0.73.1"
	ContinuePackage = "@continuedev/cli@1.5.47"
	// DroidPackage is Droid's Linux binary: @factory/cli 0.225.1, the newest on npm, names a
	// platform package of its own version that npm does not have, so .ci/run installs the binary's
	// package (0.225.2) under a prefix and points OBSERVER_DROID_BIN at it.
	DroidPackage = "@factory/cli-linux-x64@0.225.2"
	// CopilotPackage is GitHub's Copilot CLI, run with a custom (BYOK) provider and offline: no
	// GitHub sign-in.
	CopilotPackage = "@github/copilot@1.0.102"
	// GrokCLIPackage is the community Grok CLI (command grok, like xAI's Grok Build: .ci/run installs
	// it under a prefix, OBSERVER_GROKCLI_BIN).
	GrokCLIPackage = "@vibe-kit/grok-cli@0.0.34"
)

// FakeModel is the model the OpenAI-compatible providers below are configured with.
const FakeModel = "gpt-5.2"

// FindOpenCode returns the opencode binary ($OBSERVER_OPENCODE_BIN, else PATH).
func FindOpenCode(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_OPENCODE_BIN", "opencode", "npm install -g "+OpenCodePackage)
}

// FindKilo returns the kilo binary ($OBSERVER_KILO_BIN, else PATH).
func FindKilo(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_KILO_BIN", "kilo", "npm install -g "+KiloPackage)
}

// FindQwen returns the qwen binary ($OBSERVER_QWEN_BIN, else PATH).
func FindQwen(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_QWEN_BIN", "qwen", "npm install -g "+QwenCodePackage)
}

// FindPi returns the pi binary ($OBSERVER_PI_BIN, else PATH).
func FindPi(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_PI_BIN", "pi", "npm install -g "+PiPackage)
}

// FindContinue returns Continue's CLI, cn ($OBSERVER_CONTINUE_BIN, else PATH).
func FindContinue(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_CONTINUE_BIN", "cn", "npm install -g "+ContinuePackage)
}

// FindDroid returns Factory's Droid ($OBSERVER_DROID_BIN, else PATH).
func FindDroid(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_DROID_BIN", "droid", "npm install --prefix DIR "+DroidPackage+
		" and OBSERVER_DROID_BIN=DIR/node_modules/@factory/cli-linux-x64/bin/droid")
}

// FindCopilot returns GitHub's Copilot CLI ($OBSERVER_COPILOT_BIN, else PATH).
func FindCopilot(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_COPILOT_BIN", "copilot", "npm install -g "+CopilotPackage)
}

// FindGrokCLI returns the community Grok CLI ($OBSERVER_GROKCLI_BIN only: its command, grok, is
// also xAI's Grok Build's).
func FindGrokCLI(tb testing.TB) string {
	tb.Helper()
	return Find(tb, "OBSERVER_GROKCLI_BIN", "grok (the community Grok CLI)", "npm install --prefix DIR "+GrokCLIPackage+
		" and OBSERVER_GROKCLI_BIN=DIR/node_modules/.bin/grok")
}

func writeJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// openCodeConfig is an OpenCode (or Kilo) configuration with one OpenAI-compatible provider, fake,
// at baseURL (ending in /v1), serving FakeModel; no automatic update and no sharing.
func openCodeConfig(baseURL string) map[string]any {
	return map[string]any{
		"autoupdate": false,
		"share":      "disabled",
		"provider": map[string]any{
			"fake": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"options": map[string]any{"baseURL": baseURL, "apiKey": "sk-test"},
				"models":  map[string]any{FakeModel: map[string]any{"tool_call": true}},
			},
		},
	}
}

// OpenCodeHome writes $HOME/.config/opencode/opencode.json for an offline run against baseURL.
func OpenCodeHome(tb testing.TB, home, baseURL string) {
	writeJSON(tb, filepath.Join(home, ".config", "opencode", "opencode.json"), openCodeConfig(baseURL))
}

// KiloHome writes $HOME/.config/kilo/kilo.json, the same configuration as OpenCode's.
func KiloHome(tb testing.TB, home, baseURL string) {
	writeJSON(tb, filepath.Join(home, ".config", "kilo", "kilo.json"), openCodeConfig(baseURL))
}

// OpenCodeEnv is OpenCode's (and Kilo's) environment: its state under home, no models.dev fetch.
func OpenCodeEnv(home string) []string {
	return []string{"HOME=" + home, "OPENCODE_DISABLE_MODELS_FETCH=true", "OPENCODE_DISABLE_AUTOUPDATE=true", "NO_COLOR=1"}
}

// OpenCodeArgs run one prompt with the fake provider's model.
func OpenCodeArgs(prompt string) []string { return []string{"run", prompt, "-m", "fake/" + FakeModel} }

// KiloArgs run one prompt with the fake provider's model; --auto approves every tool (without it
// Kilo waits on a question).
func KiloArgs(prompt string) []string {
	return []string{"run", "--auto", prompt, "-m", "fake/" + FakeModel}
}

// QwenEnv is Qwen Code's environment for an offline run against baseURL (ending in /v1).
func QwenEnv(home, baseURL string) []string {
	return []string{"HOME=" + home, "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + baseURL, "OPENAI_MODEL=" + FakeModel, "NO_COLOR=1"}
}

// QwenArgs run one prompt, every tool call approved, with the OpenAI-compatible login.
func QwenArgs(prompt string) []string {
	return []string{"-p", prompt, "--yolo", "--auth-type", "openai"}
}

// PiHome writes $HOME/.pi/agent/models.json: a provider fake at baseURL (ending in /v1) speaking
// Chat Completions, serving FakeModel.
func PiHome(tb testing.TB, home, baseURL string) {
	writeJSON(tb, filepath.Join(home, ".pi", "agent", "models.json"), map[string]any{
		"providers": map[string]any{
			"fake": map[string]any{"baseUrl": baseURL, "api": "openai-completions", "apiKey": "sk-test",
				"models": []any{map[string]any{"id": FakeModel}}},
		},
	})
}

// PiEnv is Pi's environment: its state under home.
func PiEnv(home string) []string { return []string{"HOME=" + home, "NO_COLOR=1"} }

// PiArgs run one prompt, non-interactively, with the fake provider's model.
func PiArgs(prompt string) []string {
	return []string{"-p", "--provider", "fake", "--model", FakeModel, prompt}
}

// ContinueHome writes $HOME/.continue/config.yaml: one model, FakeModel from the OpenAI provider at
// baseURL (ending in /v1). Without a local configuration the CLI fetches its default one from
// Continue's servers, which an offline run cannot reach.
func ContinueHome(tb testing.TB, home, baseURL string) {
	tb.Helper()
	dir := filepath.Join(home, ".continue")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	cfg := "name: observer fake\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: fake\n    provider: openai\n" +
		"    model: " + FakeModel + "\n    apiBase: " + baseURL + "\n    apiKey: sk-test\n    roles: [chat]\n"
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// ContinueEnv is the CLI's environment: its state under home, no telemetry.
func ContinueEnv(home string) []string {
	return []string{"HOME=" + home, "CONTINUE_CLI_ENABLE_TELEMETRY=0", "NO_COLOR=1"}
}

// ContinueArgs run one prompt headless, every tool allowed (--auto).
func ContinueArgs(prompt string) []string { return []string{"-p", "--auto", prompt} }

// DroidModel is the id of the custom model DroidHome configures.
const DroidModel = "custom:observer-fake"

// DroidHome writes $HOME/.factory/settings.json: one custom (BYOK) model, FakeModel from an
// OpenAI-compatible provider at baseURL (ending in /v1).
func DroidHome(tb testing.TB, home, baseURL string) {
	writeJSON(tb, filepath.Join(home, ".factory", "settings.json"), map[string]any{
		"customModels": []any{map[string]any{"id": DroidModel, "model": FakeModel, "displayName": "observer fake",
			"baseUrl": baseURL, "apiKey": "sk-test", "provider": "generic-chat-completion-api", "maxOutputTokens": 1024}},
	})
}

// DroidEnv is Droid's environment: its state under home, and air-gapped (without it each run
// spends seconds on calls to Factory's servers, which an offline run cannot reach).
func DroidEnv(home string) []string {
	return []string{"HOME=" + home, "FACTORY_AIRGAP_ENABLED=1", "NO_COLOR=1"}
}

// DroidArgs run one prompt headless with the custom model; --auto low lets it run read-only
// commands such as ls.
func DroidArgs(prompt string) []string {
	return []string{"exec", "--model", DroidModel, "--auto", "low", prompt}
}

// CopilotEnv is Copilot CLI's environment for an offline run against baseURL (ending in /v1): its
// state under home, a custom OpenAI-compatible provider serving FakeModel (COPILOT_PROVIDER_*),
// offline mode (no GitHub sign-in, no update check).
func CopilotEnv(home, baseURL string) []string {
	// The binary unpacks its ~240 MB of JavaScript on its first run: once per machine, not per HOME.
	return []string{"HOME=" + home, "COPILOT_PKG_CACHE_HOME=" + filepath.Join(os.TempDir(), "observer-copilot-pkg"),
		"COPILOT_OFFLINE=1", "COPILOT_AUTO_UPDATE=false", "COPILOT_PROVIDER_BASE_URL=" + baseURL,
		"COPILOT_PROVIDER_API_KEY=sk-test", "COPILOT_MODEL=" + FakeModel, "NO_COLOR=1"}
}

// CopilotArgs run one prompt headless, every tool allowed.
func CopilotArgs(prompt string) []string { return []string{"-p", prompt, "--allow-all-tools"} }

// GrokCLIEnv is the community Grok CLI's environment for an offline run against baseURL (ending in
// /v1) with FakeModel.
func GrokCLIEnv(home, baseURL string) []string {
	return []string{"HOME=" + home, "GROK_API_KEY=sk-test", "GROK_BASE_URL=" + baseURL, "GROK_MODEL=" + FakeModel, "NO_COLOR=1"}
}
