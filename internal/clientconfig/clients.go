package clientconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/observerhq/observer/pkg/client"
)

// Client names, as --client takes them (pkg/client).
const (
	ClaudeCode = client.ClaudeCode
	Codex      = client.Codex
	Cursor     = client.Cursor
)

// Clients lists the supported clients.
var Clients = []string{ClaudeCode, Codex, Cursor}

// Location is where a client keeps its user-wide MCP servers.
type Location struct {
	Client string
	File   string
	Format Format
	Found  bool // the file, or the client's directory, exists: the client is set up for this user
}

// Locate returns each client's config file for the user whose home directory is home. getenv
// reads CLAUDE_CONFIG_DIR (Claude Code then keeps .claude.json there) and CODEX_HOME.
func Locate(home string, getenv func(string) string) []Location {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	var out []Location

	claudeDir := filepath.Join(home, ".claude")
	claudeFile := filepath.Join(home, ".claude.json")
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		claudeDir, claudeFile = d, filepath.Join(d, ".claude.json")
	}
	out = append(out, Location{ClaudeCode, claudeFile, JSON, exists(claudeFile) || exists(claudeDir)})

	codexDir := filepath.Join(home, ".codex")
	if d := getenv("CODEX_HOME"); d != "" {
		codexDir = d
	}
	codexFile := filepath.Join(codexDir, "config.toml")
	out = append(out, Location{Codex, codexFile, TOML, exists(codexFile) || exists(codexDir)})

	cursorDir := filepath.Join(home, ".cursor")
	cursorFile := filepath.Join(cursorDir, "mcp.json")
	out = append(out, Location{Cursor, cursorFile, JSON, exists(cursorFile) || exists(cursorDir)})
	return out
}

// Server is a stdio MCP server's command line.
type Server struct {
	Command string
	Args    []string
}

// serversAt is the key holding a client's user-wide servers.
func serversAt(client string) []string {
	if client == Codex {
		return []string{"mcp_servers"}
	}
	return []string{"mcpServers"}
}

// entry is how a client writes a new stdio server: as `claude mcp add` and `codex mcp add` write
// it, and as Cursor's documentation shows it.
func entry(client string, s Server) Object {
	args := s.Args
	if args == nil {
		args = []string{}
	}
	if client == ClaudeCode {
		return Object{{"type", "stdio"}, {"command", s.Command}, {"args", args}, {"env", Object{}}}
	}
	return Object{{"command", s.Command}, {"args", args}}
}

// IsObserverMCP reports whether command runs observer-mcp.
func IsObserverMCP(command string) bool {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	return base == "observer-mcp"
}

// RegisterPlan adds observer-mcp as the server name of a client's user-wide servers. An entry of
// that name that already runs observer-mcp is brought up to date (its command and arguments); one
// that runs anything else is the user's, and is refused rather than replaced.
func RegisterPlan(client, name string, s Server) func(d *Doc) ([]Edit, []string, error) {
	reason := "observer MCP server"
	return func(d *Doc) ([]Edit, []string, error) {
		path := append(serversAt(client), name)
		cur, ok := d.Lookup(path...)
		if !ok {
			return []Edit{{Path: path, Value: entry(client, s), Reason: reason}}, nil, nil
		}
		m, _ := cur.(map[string]any)
		command, _ := m["command"].(string)
		if !IsObserverMCP(command) {
			return nil, nil, fmt.Errorf("%w: it already has an MCP server named %q that runs %q, not observer-mcp; register observer under another name with --name", ErrConflict, name, command)
		}
		args := s.Args
		if args == nil {
			args = []string{}
		}
		return []Edit{
			{Path: append(slices.Clone(path), "command"), Value: s.Command, Reason: reason},
			{Path: append(slices.Clone(path), "args"), Value: args, Reason: reason},
		}, nil, nil
	}
}

// ErrConflict reports a server name that is taken by someone else's server.
var ErrConflict = fmt.Errorf("name taken")

// WrapPlan rewrites each named stdio server so that it runs as `observer-mcp [PREFIX...] wrap --
// COMMAND ARGS...`: its command and args change, everything else in the entry (env, cwd,
// timeouts) stays. Claude Code's servers are looked for in the user's servers and in each
// project's. seen counts, per name, the stdio entries found (wrapped now or already).
func WrapPlan(client string, names []string, observerMCP Server, seen map[string]int) func(d *Doc) ([]Edit, []string, error) {
	return func(d *Doc) ([]Edit, []string, error) {
		var edits []Edit
		var notes []string
		for _, at := range containers(client, d) {
			for _, name := range names {
				path := append(slices.Clone(at), name)
				cur, ok := d.Lookup(path...)
				if !ok {
					continue
				}
				e, note, stdio := wrapEntry(path, cur, observerMCP)
				if note != "" {
					notes = append(notes, note)
				}
				if stdio {
					seen[name]++
				}
				edits = append(edits, e...)
			}
		}
		return edits, notes, nil
	}
}

// containers lists where a client's document keeps servers.
func containers(client string, d *Doc) [][]string {
	out := [][]string{serversAt(client)}
	if client != ClaudeCode {
		return out
	}
	projects, _ := d.Lookup("projects")
	m, _ := projects.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := d.Lookup("projects", k, "mcpServers"); ok {
			out = append(out, []string{"projects", k, "mcpServers"})
		}
	}
	return out
}

// wrapEntry plans the wrap of one server entry, or says why not; stdio reports a stdio server
// (wrapped now or before).
func wrapEntry(path []string, cur any, observerMCP Server) (edits []Edit, note string, stdio bool) {
	what := DisplayPath(path)
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, "not wrapped " + what + ": it is not an object", false
	}
	if t, ok := m["type"].(string); ok && t != "stdio" {
		return nil, fmt.Sprintf("not wrapped %s: it is a %s server (only stdio servers run through observer-mcp wrap)", what, t), false
	}
	command, ok := m["command"].(string)
	if !ok || command == "" {
		return nil, "not wrapped " + what + ": it has no command (only stdio servers run through observer-mcp wrap)", false
	}
	args, ok := stringList(m["args"])
	if !ok {
		return nil, "not wrapped " + what + ": its args are not a list of strings", false
	}
	if IsObserverMCP(command) {
		if slices.Contains(args, "wrap") {
			return nil, "already wrapped " + what, true
		}
		return nil, "not wrapped " + what + ": it is observer-mcp itself", false
	}
	reason := "wrap " + path[len(path)-1]
	newArgs := append(append(slices.Clone(observerMCP.Args), "wrap", "--", command), args...)
	return []Edit{
		{Path: append(slices.Clone(path), "command"), Value: observerMCP.Command, Reason: reason},
		{Path: append(slices.Clone(path), "args"), Value: newArgs, Reason: reason},
	}, "", true
}

func stringList(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, x := range l {
		if out[i], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}
