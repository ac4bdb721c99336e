package pricing

import (
	"strings"
	"sync"
)

// Providers are the names ModelProvider gives, one per provider whose models the baked-in table
// prices: the companies that sell the models, and so the subscription plans that cover them.
var Providers = func() []string {
	var out []string
	for _, g := range groups {
		out = append(out, g.provider)
	}
	return out
}()

// keyProvider maps each key of the baked-in table to its provider.
var keyProvider = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, g := range groups {
		for _, s := range g.seeds {
			for _, k := range s.keys {
				m[k] = g.provider
			}
		}
	}
	return m
})

// nameRules give the provider of a model the baked-in table does not know (a price override's
// model, a model newer than the table's families) from a word of its name, in this order: a
// provider prefix ("anthropic/...", "openai/...") is matched as one of these words too.
var nameRules = []struct{ word, provider string }{
	{"claude", "anthropic"}, {"anthropic", "anthropic"},
	{"gpt", "openai"}, {"codex", "openai"}, {"chatgpt", "openai"}, {"openai", "openai"},
	{"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"},
	{"gemini", "google"}, {"gemma", "google"}, {"google", "google"},
	{"deepseek", "deepseek"},
	{"qwen", "qwen"},
	{"glm", "zai"}, {"zai", "zai"},
	{"kimi", "moonshot"}, {"moonshot", "moonshot"}, {"moonshotai", "moonshot"},
	{"grok", "xai"}, {"xai", "xai"}, {"x-ai", "xai"},
	{"mistral", "mistral"}, {"mistralai", "mistral"}, {"codestral", "mistral"}, {"devstral", "mistral"},
	{"magistral", "mistral"}, {"ministral", "mistral"},
}

// ModelProvider is the provider that sells model (one of Providers), or "" when neither the
// baked-in table nor the model's name tells. A model the table matches (by any of the lookup
// stages, so "us.anthropic.claude-sonnet-4-5-v1:0" and "aide-gpt-5" too) is its row's
// provider; any other is named by the first word of its name (its runs of letters and digits)
// that is a rule's word, or starts with one of three letters or more ("gpt5x" is openai,
// "openrouter/anthropic/claude-x" anthropic). The route does not
// count: a Claude model through Bedrock or OpenRouter is Anthropic's.
func ModelProvider(model string) string {
	if m, ok := Default().Resolve(model); ok {
		if p := keyProvider()[m.Key]; p != "" {
			return p
		}
	}
	name := strings.ToLower(model)
	words := strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, w := range words {
		for _, r := range nameRules {
			if w == r.word || strings.HasPrefix(w, r.word) && len(r.word) > 2 {
				return r.provider
			}
		}
	}
	return ""
}
