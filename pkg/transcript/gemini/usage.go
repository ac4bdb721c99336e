package gemini

import (
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
)

// usage is a message's usage as the client logged it: Gemini CLI's tokens {input, output, cached,
// thoughts, tool, total} or Qwen Code's usageMetadata (Gemini's field names).
type usage struct {
	prompt, candidates, cached, thoughts, tool, total int64
}

// readUsage reads a usage object; ok is false when it holds no count.
func readUsage(raw []byte) (u usage, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return u, false
	}
	if jsonscan.Members(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "input", "promptTokenCount":
			u.prompt = num(v)
		case "output", "candidatesTokenCount":
			u.candidates = num(v)
		case "cached", "cachedContentTokenCount":
			u.cached = num(v)
		case "thoughts", "thoughtsTokenCount":
			u.thoughts = num(v)
		case "tool", "toolUsePromptTokenCount":
			u.tool = num(v)
		case "total", "totalTokenCount":
			u.total = num(v)
		}
		return true
	}) != nil {
		return u, false
	}
	return u, u.prompt+u.candidates+u.cached+u.thoughts+u.tool+u.total > 0
}

// tokens converts a usage into observer's buckets (see the package doc). thoughtsBeside says
// whether thoughts lie beside the output when the total cannot tell: true for the Gemini API.
func (u usage) tokens(thoughtsBeside bool) event.Tokens {
	if u.prompt == 0 && u.candidates == 0 && u.tool == 0 {
		// Only a total: the split is unknown; it counts as input.
		cached := min(u.cached, u.total)
		return event.Tokens{Input: u.total - cached, CacheRead: cached}
	}
	cached := u.cached
	if u.prompt > 0 && cached > u.prompt {
		cached = u.prompt
	}
	beside := thoughtsBeside
	if u.thoughts > 0 && u.total > 0 {
		beside = u.total >= u.prompt+u.candidates+u.thoughts+u.tool
	}
	out := u.candidates
	if beside {
		out += u.thoughts
	}
	return event.Tokens{
		Input:     max(u.prompt-cached, 0) + u.tool,
		CacheRead: cached,
		Output:    out,
		Reasoning: min(u.thoughts, out),
	}
}
