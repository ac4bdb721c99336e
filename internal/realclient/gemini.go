package realclient

import (
	"os"
	"path/filepath"
	"testing"
)

// GeminiCLIPackage is the Gemini CLI version the project tests with; .ci/run installs it.
const GeminiCLIPackage = "@google/gemini-cli@0.61.0"

// FindGemini returns the gemini binary ($OBSERVER_GEMINI_BIN, else PATH).
func FindGemini(tb testing.TB) string {
	return Find(tb, "OBSERVER_GEMINI_BIN", "gemini", "npm install -g "+GeminiCLIPackage)
}

// GeminiHome prepares home for an offline Gemini CLI run: an API key login (the CLI otherwise asks
// which login to use) and no usage statistics (they would be sent to Google).
func GeminiHome(tb testing.TB, home string) {
	tb.Helper()
	dir := filepath.Join(home, ".gemini")
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}`
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// GeminiEnv is Gemini CLI's environment for an offline run against baseURL (the API's root, without
// /v1beta): the workspace is trusted so that --yolo may run tools.
func GeminiEnv(home, baseURL string) []string {
	return []string{"HOME=" + home, "GEMINI_API_KEY=AIzaSy-observer-test-key", "GOOGLE_GEMINI_BASE_URL=" + baseURL,
		"GEMINI_CLI_TRUST_WORKSPACE=true"}
}

// GeminiArgs asks Gemini CLI for one tool round trip, every tool call approved.
func GeminiArgs(prompt string) []string {
	return []string{"-p", prompt, "--yolo"}
}
