// Package client is the registry of the AI clients observer knows: one Client entry per client
// (registry.go), in the order every listing shows them (doctor, --client's help, the watcher's
// roots). Each entry says what the client is called (the name events, bus subjects and --client
// carry, typed once as a constant here, and its aliases), where its reader looks and which
// variables move it, how observer-proxy tells its requests from others', how doctor checks it and
// how far its transcripts' token figures are trusted when priced.
//
// The package imports only pkg/event, so that every binary can read the registry: observer-proxy
// names a request's client by its marks, the store sets a priced row's reliability, observer-mcp
// maps an MCP client's name, and none of them links a transcript reader. The readers themselves
// (pkg/transcript/<client>) are tied to their entries by name in internal/readers, the one
// package that opens them.
package client

import (
	"net/http"
	"slices"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// Client describes one AI client.
type Client struct {
	// Name is the client's name in events, bus subjects and --client: claude-code.
	Name string
	// Title is how help text names this client: Claude Code, Kilo CLI, VS Code Copilot Chat.
	Title string
	// Product is the product it belongs to, as scan's one-line help lists them: several clients
	// may share one (the Cline CLI and the Cline VS Code extension are both Cline).
	Product string
	// Aliases are the short names --client also takes: claude for claude-code.
	Aliases []string
	// Where says where its reader looks on Linux and macOS and which environment variables move
	// it, in one sentence without its final period (scan's help).
	Where string
	// Bins are the commands that run it: doctor calls it installed when one is on PATH.
	Bins []string
	// Proxy says how to point it at observer-proxy, %s standing for the proxy's address; empty
	// when its API traffic cannot go through the proxy (doctor).
	Proxy string
	// Marks are the signs in a request's headers that it sent the request (observer-proxy). A
	// request is the first client's in registry order whose any mark it carries, except that a
	// client's forks (ForkOf) are tried before it. A client with no marks is never named by the
	// proxy ("unknown"; the writer may name the turn later from the client's record).
	Marks []Mark
	// ForkOf names the client this one was built from, whose marks its requests may carry too.
	ForkOf string
	// Usage is the reliability of the token usage its transcripts give, as a priced row records
	// it; empty means event.ReliabilityApproximate (final figures as the client logged them).
	Usage event.Reliability
	// MCPNames are prefixes of the clientInfo.name it gives an MCP server at initialize (lower
	// case), which observer-mcp's wrap mode maps to Name.
	MCPNames []string
	// Shell lists its tools that run a command line: the fake model API calls them.
	Shell []Tool
}

// Mark is one sign in a request's headers. Header is the header's name, User-Agent when empty.
// With Prefix or Contains, the header's value, lower-cased, starts with or contains it; with
// Value, the value is exactly it; with none of them, the header is present.
type Mark struct {
	Header   string
	Prefix   string
	Contains string
	Value    string
}

// Tool is a tool a client offers the model that runs a command line, and the parameter of it
// that takes the command (a string, or a list of command lines).
type Tool struct {
	Name  string
	Param string
}

// All returns every client, in registry order. The slice is the caller's.
func All() []Client { return slices.Clone(registry) }

// Lookup returns the client named name (not an alias).
func Lookup(name string) (Client, bool) {
	i := slices.IndexFunc(registry, func(c Client) bool { return c.Name == name })
	if i < 0 {
		return Client{}, false
	}
	return registry[i], true
}

// Resolve returns the name of the client whose alias s is, else s.
func Resolve(s string) string {
	for _, c := range registry {
		if slices.Contains(c.Aliases, s) {
			return c.Name
		}
	}
	return s
}

// UsageReliability is the reliability of a priced token_usage row of the client named name (see
// Client.Usage); approximate for a client the registry does not know.
func UsageReliability(name string) event.Reliability {
	if c, ok := Lookup(name); ok && c.Usage != "" {
		return c.Usage
	}
	return event.ReliabilityApproximate
}

// FromHeaders names the client that sent a request with headers h, by the clients' Marks; ""
// when no client's mark is there.
func FromHeaders(h http.Header) string {
	for _, c := range markOrder {
		for _, m := range c.Marks {
			if m.match(h) {
				return c.Name
			}
		}
	}
	return ""
}

func (m Mark) match(h http.Header) bool {
	name := m.Header
	if name == "" {
		name = "User-Agent"
	}
	v := h.Get(name)
	switch {
	case v == "":
		return false
	case m.Prefix != "":
		return strings.HasPrefix(strings.ToLower(v), m.Prefix)
	case m.Contains != "":
		return strings.Contains(strings.ToLower(v), m.Contains)
	case m.Value != "":
		return v == m.Value
	}
	return true
}

// markOrder is the registry with every client moved before the client it is a fork of.
var markOrder = func() []Client {
	var out []Client
	for _, c := range registry {
		if c.ForkOf != "" {
			continue
		}
		for _, f := range registry {
			if f.ForkOf == c.Name {
				out = append(out, f)
			}
		}
		out = append(out, c)
	}
	return out
}()

// FromMCP maps the clientInfo.name of an MCP initialize request to the name of the client whose
// MCPNames it starts with (ignoring case); any other name is returned as it is.
func FromMCP(info string) string {
	n := strings.ToLower(info)
	for _, c := range registry {
		for _, p := range c.MCPNames {
			if strings.HasPrefix(n, p) {
				return c.Name
			}
		}
	}
	return info
}

// ShellTools lists the clients' command-line tools in registry order, each tool once.
func ShellTools() []Tool {
	var out []Tool
	for _, c := range registry {
		for _, t := range c.Shell {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}
