package client

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
)

// Every entry is complete and no name or alias means two clients.
func TestRegistry(t *testing.T) {
	seen := map[string]string{}
	claim := func(s, by string) {
		if other, ok := seen[s]; ok {
			t.Errorf("%q names both %s and %s", s, other, by)
		}
		seen[s] = by
	}
	for _, c := range All() {
		claim(c.Name, c.Name)
		for _, a := range c.Aliases {
			claim(a, c.Name)
		}
		if c.Name == "" || c.Title == "" || c.Product == "" || c.Where == "" || strings.HasSuffix(c.Where, ".") {
			t.Errorf("%s: name, title, product and where (without its period) are required: %+v", c.Name, c)
		}
		if c.Proxy != "" && strings.Count(c.Proxy, "%s") != 1 {
			t.Errorf("%s: proxy recipe %q has no single %%s for the address", c.Name, c.Proxy)
		}
		if c.ForkOf != "" {
			if o, ok := Lookup(c.ForkOf); !ok || o.ForkOf != "" {
				t.Errorf("%s: fork of %q, which is no client (or a fork itself)", c.Name, c.ForkOf)
			}
		}
		for _, m := range c.Marks {
			if m.Prefix != strings.ToLower(m.Prefix) || m.Contains != strings.ToLower(m.Contains) {
				t.Errorf("%s: mark %+v is matched against a lower-cased value", c.Name, m)
			}
		}
		for _, p := range c.MCPNames {
			if p != strings.ToLower(p) {
				t.Errorf("%s: MCP name %q is matched lower-cased", c.Name, p)
			}
		}
		if c.Usage != "" && c.Usage != event.ReliabilityUnreliable && c.Usage != event.ReliabilityApproximate {
			t.Errorf("%s: usage %q", c.Name, c.Usage)
		}
	}
	if len(markOrder) != len(registry) {
		t.Errorf("the mark order holds %d clients of %d", len(markOrder), len(registry))
	}
}

// Each client is named from the headers it sent the fake API; a fork's marks come before those
// of the client it was built from.
func TestFromHeaders(t *testing.T) {
	for _, tc := range []struct {
		want   string
		header map[string]string
	}{
		{ClaudeCode, map[string]string{"User-Agent": "claude-cli/2.1.197 (external, sdk-cli)", "X-Claude-Code-Session-Id": "s"}},
		{ClaudeCode, map[string]string{"X-Claude-Code-Session-Id": "s"}},
		{Codex, map[string]string{"User-Agent": "codex_exec/0.171.0 (Debian 12; x86_64) xterm", "originator": "codex_exec"}},
		{Codex, map[string]string{"originator": "Codex_CLI_rs"}},
		{GeminiCLI, map[string]string{"User-Agent": "GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal)"}},
		{QwenCode, map[string]string{"User-Agent": "QwenCode/0.24.4 (linux; x64)"}},
		{OpenCode, map[string]string{"User-Agent": "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14"}},
		{Kilo, map[string]string{"User-Agent": "Kilo-Code/7.7.7 ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14", "X-Title": "Kilo Code"}},
		{Kilo, map[string]string{"User-Agent": "Kilo-Code/8.0.0 opencode/2.0.0"}},
		{Kilo, map[string]string{"User-Agent": "opencode/2.0.0", "X-Title": "Kilo Code"}},
		{OpenCode, map[string]string{"User-Agent": "opencode/2.0.0", "X-Title": "kilo code"}}, // the title is matched exactly
		{Cline, map[string]string{"User-Agent": "ai-sdk/openai-compatible/3.0.37 ai-sdk/provider-utils/5.0.30 runtime/bun/1.3.13"}},
		{Crush, map[string]string{"User-Agent": "Charm-Crush/0.66.0 (https://charm.land/crush)"}},
		{"", map[string]string{"User-Agent": "OpenAI/JS 6.26.0", "X-Stainless-Lang": "js"}}, // Pi, OpenClaw
		{"", nil},
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := FromHeaders(h); got != tc.want {
			t.Errorf("FromHeaders(%v) = %q, want %q", tc.header, got, tc.want)
		}
	}
}

func TestFromMCP(t *testing.T) {
	for in, want := range map[string]string{"claude-code": ClaudeCode, "Claude-Code-IDE": ClaudeCode, "codex-mcp-client": Codex,
		"cursor-vscode": Cursor, "inspector-client": "inspector-client", "": ""} {
		if got := FromMCP(in); got != want {
			t.Errorf("FromMCP(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	for in, want := range map[string]string{"claude": ClaudeCode, "gemini": GeminiCLI, "qwen": QwenCode, "roo": RooCode,
		"copilot": CopilotCLI, "codex": Codex, "vim": "vim", "": ""} {
		if got := Resolve(in); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
}

// Claude Code's transcripts log streaming placeholders; the others, and clients the registry does
// not know, final figures.
func TestUsageReliability(t *testing.T) {
	for name, want := range map[string]event.Reliability{ClaudeCode: event.ReliabilityUnreliable, Codex: event.ReliabilityApproximate,
		Aider: event.ReliabilityApproximate, "unknown": event.ReliabilityApproximate} {
		if got := UsageReliability(name); got != want {
			t.Errorf("UsageReliability(%s) = %s, want %s", name, got, want)
		}
	}
}

func TestShellTools(t *testing.T) {
	got := ShellTools()
	for _, want := range []Tool{{"bash", "command"}, {"run_shell_command", "command"}, {"run_commands", "commands"},
		{"execute_command", "command"}, {"exec", "command"}, {"Bash", "command"}, {"Execute", "command"}} {
		if !slices.Contains(got, want) {
			t.Errorf("shell tools %v lack %v", got, want)
		}
	}
	if len(got) != 7 {
		t.Errorf("shell tools %v: each once", got)
	}
}
