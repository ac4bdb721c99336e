package realclient

import (
	"testing"
)

// ClinePackage is the Cline CLI the tests were verified with (.ci/run installs it).
const ClinePackage = "cline@3.0.65"

// FindCline returns the Cline CLI (OBSERVER_CLINE_BIN, else cline on PATH).
func FindCline(tb testing.TB) string {
	return Find(tb, "OBSERVER_CLINE_BIN", "cline", "npm install -g "+ClinePackage)
}

// ClineEnv is the Cline CLI's environment for an offline run: its state under home, kept locally
// (CLINE_SESSION_BACKEND_MODE=local: no hub process).
func ClineEnv(home string) []string {
	return []string{"HOME=" + home, "CLINE_SESSION_BACKEND_MODE=local", "NO_COLOR=1"}
}

// ClineAuthArgs configure the OpenAI-compatible provider at baseURL (ending in /v1) with model.
func ClineAuthArgs(baseURL, model string) []string {
	return []string{"auth", "-p", "openai", "-k", "sk-test", "-m", model, "-b", baseURL}
}

// ClineArgs run one prompt in dir (auto-approve is the default).
func ClineArgs(dir, prompt string) []string { return []string{"-c", dir, prompt} }
