package clientconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Realistic client configs, written the way each client writes them, with the traps an editor
// falls into: many unrelated keys in a set order, nested projects with their own servers, escapes
// and HTML-looking text, numbers encoding/json would round, TOML comments everywhere (inside a
// multi-line array too), sub-tables, a table far from its parent.

const claudeFixture = `{
  "numStartups": 42,
  "installMethod": "global",
  "autoUpdates": false,
  "tipsHistory": {
    "new-user-warmup": 7,
    "memory-command": 12
  },
  "userID": "0f3c9d6ad1f1b7e2b0c7f1f0a9e7c2d1",
  "projects": {
    "/home/dev/app": {
      "allowedTools": [],
      "history": [
        {
          "display": "fix the <b>bug</b> & run \"go test\"",
          "pastedContents": {}
        }
      ],
      "mcpServers": {
        "github": {
          "type": "stdio",
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-github"],
          "env": {"GITHUB_TOKEN": "ghp_x"}
        }
      },
      "lastCost": 0.12345678901234567890123,
      "lastTotalInputTokens": 12345678901234567890
    },
    "/home/dev/other.v2": {
      "allowedTools": ["Bash(ls:*)"]
    }
  },
  "mcpServers": {
    "filesystem": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/home/dev"
      ],
      "env": {}
    },
    "docs": {
      "type": "http",
      "url": "https://example.com/mcp"
    }
  },
  "cachedChangelog": "# Changelog\n\n## 2.1.197\n- caf\u00e9 \ud83d\ude80",
  "oauthAccount": {
    "emailAddress": "dev@example.com"
  },
  "hasCompletedOnboarding": true
}`

const codexFixture = `# Codex configuration
model = "gpt-5.2-codex"
approval_policy = "on-request"   # ask before running commands

[model_providers.local]
name = "Local"
base_url = "http://127.0.0.1:8820/v1"
env_key = "OPENAI_API_KEY"

# Servers
[mcp_servers.github]
command = "npx"   # from npm
args = [
  "-y",
  "@modelcontextprotocol/server-github", # the official one
]
startup_timeout_sec = 20

[mcp_servers.github.env]
GITHUB_TOKEN = "ghp_x"

[profiles.fast]
model = "gpt-5.2-mini"

[mcp_servers."my docs"]
url = "https://example.com/mcp"
# trailing comment
`

const cursorFixture = `{
  "mcpServers": {
    "linear": { "command": "npx", "args": ["-y", "mcp-remote", "https://mcp.linear.app/sse"] }
  }
}
`

var observerMCP = Server{Command: "/opt/observer/bin/observer-mcp", Args: []string{"--home", "/srv/obs"}}

// fixture is a temporary user home with the three configs, and observer's home.
type fixture struct {
	home, obs             string
	claude, codex, cursor string
	origClaude, origCodex []byte
	origCursor            []byte
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	dir := tb.TempDir()
	f := &fixture{home: filepath.Join(dir, "home"), obs: filepath.Join(dir, "obs")}
	f.claude = filepath.Join(f.home, ".claude.json")
	f.codex = filepath.Join(f.home, ".codex", "config.toml")
	f.cursor = filepath.Join(f.home, ".cursor", "mcp.json")
	f.origClaude, f.origCodex, f.origCursor = []byte(claudeFixture), []byte(codexFixture), []byte(cursorFixture)
	writeFile(tb, f.claude, f.origClaude, 0o600)
	writeFile(tb, f.codex, f.origCodex, 0o640)
	writeFile(tb, f.cursor, f.origCursor, 0o644)
	return f
}

func writeFile(tb testing.TB, path string, data []byte, mode os.FileMode) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		tb.Fatal(err)
	}
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func (f *fixture) locations() []Location { return Locate(f.home, func(string) string { return "" }) }

// targets plans registration (when register) and the wraps on every client.
func (f *fixture) targets(register bool, wraps []string, seen map[string]int) []Target {
	var out []Target
	for _, l := range f.locations() {
		var plans []func(*Doc) ([]Edit, []string, error)
		if register {
			plans = append(plans, RegisterPlan(l.Client, "observer", observerMCP))
		}
		if len(wraps) > 0 {
			plans = append(plans, WrapPlan(l.Client, wraps, observerMCP, seen))
		}
		out = append(out, Target{Client: l.Client, File: l.File, Format: l.Format, Plan: func(d *Doc) ([]Edit, []string, error) {
			var edits []Edit
			var notes []string
			for _, p := range plans {
				e, n, err := p(d)
				if err != nil {
					return nil, nil, err
				}
				edits, notes = append(edits, e...), append(notes, n...)
			}
			return edits, notes, nil
		}})
	}
	return out
}

// changedRegion strips the common head and tail of a and b and returns what is left of each.
func changedRegion(a, b []byte) (string, string) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return string(a[p : len(a)-s]), string(b[p : len(b)-s])
}

// onlyPunctuation reports whether s is made of white space and commas: what an insertion into
// JSON may move.
func onlyPunctuation(s string) bool {
	return strings.Trim(s, " \t\n,") == ""
}

func parse(tb testing.TB, f Format, data []byte) *Doc {
	tb.Helper()
	d, err := ParseDoc(f, data)
	if err != nil {
		tb.Fatalf("parse %s: %v\n%s", f, err, data)
	}
	return d
}

func backups(tb testing.TB, file string) []string {
	tb.Helper()
	m, err := filepath.Glob(file + ".observer-backup-*")
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// maskedText is data as a diff of it shows it: each line masked as maskDiff masks a line.
func maskedText(data []byte, trees ...any) []byte {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l != "" {
			b.WriteString(" " + l)
		}
	}
	var out strings.Builder
	for _, l := range strings.SplitAfter(maskDiff(b.String(), trees...), "\n") {
		out.WriteString(strings.TrimPrefix(l, " "))
	}
	return []byte(out.String())
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
