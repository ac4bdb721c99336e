package mcpwrap

import (
	"os"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/project"
)

// sessionVars are the environment variables that carry the client's session id to the servers it
// spawns, in the order they are tried. Claude Code sets CLAUDE_CODE_SESSION_ID (seen in 2.1.197);
// the Codex names are read when present.
var sessionVars = []string{"CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID"}

// SessionFromEnv returns the client's session id from the environment, or "".
func SessionFromEnv(getenv func(string) string) string {
	for _, v := range sessionVars {
		if s := getenv(v); s != "" {
			return s
		}
	}
	return ""
}

// ProjectFromEnv returns the project the client works in: the git root of CLAUDE_PROJECT_DIR (set
// by Claude Code for its servers), else of the working directory.
func ProjectFromEnv(getenv func(string) string) string {
	dir := getenv("CLAUDE_PROJECT_DIR")
	if dir == "" {
		dir, _ = os.Getwd()
	}
	return project.Root(dir)
}

// ClientName maps the clientInfo.name of an initialize request to observer's client names where
// it knows the client (pkg/client's registry: claude-code, codex-mcp-client, cursor-vscode); any
// other name is kept as the client gave it.
func ClientName(info string) string { return client.FromMCP(info) }
