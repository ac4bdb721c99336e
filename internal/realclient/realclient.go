// Package realclient runs the real AI client CLIs (Claude Code, Codex) in tests, offline, against
// a local model API: the working command lines live here, once.
//
// A test calls Find for the binary: a missing client skips the test, or fails it when
// OBSERVER_REQUIRE_CLIENTS=1 (CI installs the clients and sets it).
package realclient

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Timeout bounds one client run.
const Timeout = 120 * time.Second

// Versions the project tests with; .ci/run installs these.
const (
	ClaudeCodePackage = "@anthropic-ai/claude-code@2.1.197"
	CodexPackage      = "@openai/codex@0.171.0"
)

// FindClaude returns the claude binary ($OBSERVER_CLAUDE_BIN, else PATH).
func FindClaude(tb testing.TB) string {
	return Find(tb, "OBSERVER_CLAUDE_BIN", "claude", "npm install -g "+ClaudeCodePackage)
}

// FindCodex returns the codex binary ($OBSERVER_CODEX_BIN, else PATH).
func FindCodex(tb testing.TB) string {
	return Find(tb, "OBSERVER_CODEX_BIN", "codex", "npm install -g "+CodexPackage)
}

// Required reports whether missing clients fail tests instead of skipping them.
func Required() bool { return os.Getenv("OBSERVER_REQUIRE_CLIENTS") == "1" }

// Find returns the path of a client CLI from the environment variable env, else from PATH. git is
// needed too. A missing one skips the test, or fails it when Required.
func Find(tb testing.TB, env, name, install string) string {
	tb.Helper()
	p := os.Getenv(env)
	var err error
	if p == "" {
		p, err = exec.LookPath(name)
	}
	if err == nil {
		if _, err = exec.LookPath("git"); err != nil {
			name = "git"
		}
	}
	if err != nil {
		msg := name + " not found (set " + env + " or put it on PATH: " + install + ")"
		if Required() {
			tb.Fatal(msg + "; OBSERVER_REQUIRE_CLIENTS=1 requires it")
		}
		tb.Skip(msg)
	}
	return p
}

// Dirs makes a temporary HOME and a temporary git repository with two files.
func Dirs(tb testing.TB) (home, repo string) {
	tb.Helper()
	home, repo = filepath.Join(tb.TempDir(), "home"), filepath.Join(tb.TempDir(), "repo")
	for _, d := range []string{home, repo} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o600)
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o600)
	git := exec.Command("git", "init", "-q")
	git.Dir, git.Env = repo, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if out, err := git.CombinedOutput(); err != nil {
		tb.Fatalf("git init: %v\n%s", err, out)
	}
	return home, repo
}

// ClaudeEnv is Claude Code's environment for an offline run against baseURL.
func ClaudeEnv(home, baseURL string) []string {
	return []string{"HOME=" + home, "ANTHROPIC_BASE_URL=" + baseURL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1"}
}

// ClaudeArgs asks Claude Code for one tool round trip (it may run ls only).
func ClaudeArgs(prompt string) []string {
	return []string{"-p", prompt, "--allowedTools", "Bash(ls:*)"}
}

// CodexEnv is Codex's environment for an offline run.
func CodexEnv(home string) []string {
	return []string{"HOME=" + home, "OPENAI_API_KEY=sk-test"}
}

// CodexArgs runs `codex exec` against the Responses API at baseURL (ending in /v1) through a
// custom provider: Codex ignores OPENAI_BASE_URL. With websockets, Codex first tries a WebSocket
// on GET /v1/responses and falls back to HTTP on a 426.
func CodexArgs(baseURL, prompt string, websockets bool) []string {
	provider := `model_providers.x={name="X",base_url="` + baseURL + `",env_key="OPENAI_API_KEY",wire_api="responses"`
	if websockets {
		provider += `,supports_websockets=true`
	}
	provider += "}"
	return []string{"exec", "-m", "gpt-5.2-codex", "-c", "model_provider=x", "-c", provider,
		"-c", "analytics.enabled=false", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"--json", prompt}
}

// PathWith returns PATH with dirs put first, the way a user's shell finds a client installed in
// its own folder: every other program (git, node, sh) stays where the rest of PATH has it.
func PathWith(dirs ...string) string {
	return strings.Join(append(dirs, os.Getenv("PATH")), string(os.PathListSeparator))
}

// Run runs a client in dir with only PATH and env as its environment (so that no key or setting
// of the developer's leaks in), stdin empty, and fails unless it exits 0 within Timeout. PATH is
// the one a user's shell would give it: the client's own folder first, then the test's PATH, so
// the client finds its node, git and shell wherever they are installed.
func Run(tb testing.TB, dir string, env []string, bin string, args ...string) string {
	tb.Helper()
	stdout, stderr, err := Exec(dir, env, bin, args...)
	if err != nil {
		tb.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return stdout
}

// Exec is Run for callers that go on after a failed run (the chaos test, whose client runs may
// fail while the proxy is down): it returns the client's stdout, its stderr and the failure.
func Exec(dir string, env []string, bin string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + PathWith(filepath.Dir(bin))}, env...)
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish within %v", filepath.Base(bin), Timeout)
	} else if err != nil {
		err = fmt.Errorf("%s: %w", filepath.Base(bin), err)
	}
	return out.String(), errb.String(), err
}
