package pricing

import (
	"slices"
	"testing"
)

func TestModelProvider(t *testing.T) {
	for model, want := range map[string]string{
		"claude-sonnet-4-5-20250929":          "anthropic",
		"claude-opus-4-9":                     "anthropic", // a newer version: the table's fallback
		"us.anthropic.claude-sonnet-4-5-v1:0": "anthropic",
		"openrouter/anthropic/claude-made-up": "anthropic", // unknown to the table: by name
		"gpt-5.2-codex":                       "openai",
		"gpt-5":                               "openai",
		"o3-mini":                             "openai",
		"aide-gpt-5":                          "openai",
		"gpt5-my-deployment":                  "openai",
		"gemini-2.5-pro":                      "google",
		"models/gemini-3.8-flash":             "google",
		"deepseek-chat":                       "deepseek",
		"qwen3.7-max":                         "qwen",
		"glm-4.6":                             "zai",
		"kimi-k2":                             "moonshot",
		"grok-code-fast-1":                    "xai",
		"devstral-medium-2507":                "mistral",
		"kilo-auto/free":                      "kilo",
		"":                                    "",
		"my-local-llama":                      "",
		"<synthetic>":                         "",
		"openrouter/meta-llama/llama-4-maverick:free": "",
	} {
		if got := ModelProvider(model); got != want {
			t.Errorf("ModelProvider(%q) = %q, want %q", model, got, want)
		}
	}
}

// Every table key has a provider, and every provider a name rule, so that an override of a model
// the table lacks is still placed.
func TestModelProvider_EveryKey(t *testing.T) {
	for _, k := range Default().Models() {
		if p := ModelProvider(k); !slices.Contains(Providers, p) {
			t.Errorf("table key %q: provider %q, not one of %v", k, p, Providers)
		}
	}
	for _, p := range Providers {
		if p == "kilo" {
			continue // only its free gateway models, all in the table
		}
		if !slices.ContainsFunc(nameRules, func(r struct{ word, provider string }) bool { return r.provider == p }) {
			t.Errorf("provider %q has no name rule", p)
		}
	}
}
