package pricing

import "testing"

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"},
		{"apac.anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku-20240307"},
		{"anthropic.claude-opus-4-6-v1", "claude-opus-4-6"},
		{"claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet-v2"},
		{"claude-opus-4-6[1m]", "claude-opus-4-6"},
		{"models/gemini-2.5-pro", "gemini-2.5-pro"},
		{"gpt-5-1-codex-2025-11-13", "gpt-5.1-codex-2025-11-13"},
		{"gpt-5-1", "gpt-5.1"},
		{"gpt-5-2025-08-07", "gpt-5-2025-08-07"},
		{"gpt-4-1106-preview", "gpt-4-1106-preview"},
		{"gpt-4-0613", "gpt-4-0613"},
		{"gpt-5-mini", "gpt-5-mini"},
		{"gpt-4o", "gpt-4o"},
		{"gpt-5.1", "gpt-5.1"},
		{"gemini-2.5-flash", "gemini-2.5-flash"}, // dots stay outside Claude ids
		{"deepseek-v3", "deepseek-v3"},           // not a Bedrock version
		{"deepseek/deepseek-v4-flash", "deepseek-v4-flash"},
		{"claude-sonnet-4-5-20250929-v1", "claude-sonnet-4-5-20250929"},
		{"qwen3:32b", "qwen3"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in).id; got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStripDate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4o-mini", "gpt-4o-mini"},
		{"gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash-preview-09-2025"},
		{"gpt-4-0613", "gpt-4-0613"},
		{"model-12345678", "model-12345678"}, // not a year
		{"20250929", "20250929"},
	}
	for _, tt := range tests {
		if got := stripDate(tt.in); got != tt.want {
			t.Errorf("stripDate(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSameModel(t *testing.T) {
	same := []string{"preview", "latest", "001", "preview-09-2025", "codex-preview", "thinking",
		"20251101-thinking", "v2", "customtools", "chat-latest", "high", "exp-1206"}
	other := []string{"", "mini", "nano", "lite", "pro", "max", "image-preview", "preview-tts", "7",
		"5-20250929", "8b", "fast", "search-preview", "deep-research", "realtime-preview", "audio"}
	for _, s := range same {
		if !sameModel(s) {
			t.Errorf("sameModel(%q) = false, want true", s)
		}
	}
	for _, s := range other {
		if sameModel(s) {
			t.Errorf("sameModel(%q) = true, want false", s)
		}
	}
}
