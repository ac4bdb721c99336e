// Package mcpserver is observer-mcp's stdio server: thirteen read-only query tools over the store,
// for the agent that spawned it, on the official MCP Go SDK.
//
// # Guarantees
//
//   - Read-only: the store is opened with store.OpenReader (mode=ro, query_only) and never written.
//     The server works while the rest of the suite is down; when the store does not exist yet, it
//     still starts and every tool answers "no data yet" (the store is opened at the first call
//     that finds it, so a writer started later is picked up without a restart).
//   - Bounded answers: agents pay for every token, so answers are compact JSON (no indentation,
//     short keys, empty fields left out), lists have a default limit and a hard cap (maxLimit),
//     outputs and errors are clipped, session ids in lists are shortened to a prefix (see short;
//     every session argument accepts a prefix), and file paths are relative to the project. Ages
//     ("ago") are relative to the server's clock: 45s, 12m, 3h, 5d.
//   - Indexed: every query is an index range (migration 0003 adds the project-scoped indexes), so
//     a tool answers in milliseconds on a store with a million actions (BenchmarkTools).
//   - Bounded work: every string argument has a byte limit (argLimits) checked before any query
//     runs; a search query takes at most maxQueryBytes bytes and maxQueryTerms distinct terms, and
//     its snippets are marked in time linear in the query and the outputs (snippet.go), where
//     FTS5's snippet() is quadratic in the matches.
//   - Confined file tools: check_file_freshness (which reads the disk) and get_file_history answer
//     only for a file inside the tool's project, which must be the client's own or a recorded
//     one, and never for a file in observer's home (Options.Home); `..` and symbolic links are
//     resolved before deciding (fileIn). No other tool reads the file system.
//   - Protocol errors, not crashes: an unknown tool and an unknown method get JSON-RPC errors from
//     the SDK; arguments that fail their schema get a tool error result (isError, which the model
//     can read and correct); a line on stdin the SDK would end the session on (not JSON-RPC, a
//     batch, over maxLine bytes) gets a JSON-RPC parse or invalid-request error from guard.go,
//     and the session goes on.
//   - Answers before exit: when stdin ends, the requests already read are answered before Serve
//     returns (within drainGrace).
//
// # Scope
//
// A tool's project is its `project` argument (a path, or a project's base name as stored), else
// the project of the server's working directory (pkg/project.Root), which is where the client
// spawned it. A path names the nearest recorded project holding it, else the client's project
// when it lies inside, else itself: the file system is not searched for a repository root on an
// agent's word. A session-scoped tool takes a `session` argument (an id or a prefix of one), else
// the session of the client that spawned the server (Options.Session) when the store has it and no
// other project was asked for, else the project's most recently active session. Each answer names
// the session it used.
//
// Action ids in answers are the store's row ids: get_action_details and list_actions_around take
// them back.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

// Options configure a Server.
type Options struct {
	// StorePath is the SQLite store. It may not exist yet.
	StorePath string
	// Home is observer's home ($OBSERVER_HOME): the file tools never answer for a file in it,
	// whatever the project. Empty means the store's directory.
	Home string
	// Project is the default project root: the project of the server's working directory.
	Project string
	// Session is the default session: the session of the client that spawned the server, when
	// its environment tells (empty otherwise, and then a project's latest session is the default).
	Session string
	// Logger receives the server's and the SDK's logs; nil is silent. observer-mcp logs to
	// stderr only, since stdout carries the protocol.
	Logger *slog.Logger
	// Now is the clock answers' ages are measured against; nil means time.Now.
	Now func() time.Time
	// Version is reported to the client at initialization.
	Version string
}

// Server answers the tools over one store. It is safe for concurrent calls.
type Server struct {
	opts Options
	mcp  *mcp.Server

	mu sync.Mutex
	st *store.Store // nil until the store exists

	// trace, when set (by tests), sees every query a tool runs, for checking query plans.
	trace func(query string, args []any)
}

// dbh is the store handle tools read through: the read model's reads run on it, and the
// server's trace, when set, sees each of their statements.
type dbh = query.Traced

// errNoData is what every tool answers before the writer has created the store.
var errNoData = errors.New("no data yet")

// New returns a server with every tool registered.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Home == "" {
		opts.Home = filepath.Dir(opts.StorePath)
	}
	if abs, err := filepath.Abs(opts.Home); err == nil {
		opts.Home = abs
	}
	s := &Server{opts: opts}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "observer", Version: opts.Version}, &mcp.ServerOptions{
		Logger:       opts.Logger,
		Instructions: instructions,
	})
	s.addTools()
	return s
}

// instructions go to the client once, at initialization, rather than into every tool's schema.
const instructions = `observer records what coding agents did (actions, outputs, tokens). project defaults to the ` +
	`client's project, session to the client's own or the project's latest; session ids may be prefixes; ids are action ids.`

// MCP returns the SDK server, for callers that pick their own transport (tests use in-memory ones).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close closes the store.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		return nil
	}
	err := s.st.Close()
	s.st = nil
	return err
}

// db returns the store's handle, opening it the first time it exists.
func (s *Server) db(ctx context.Context) (query.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		return s.st.DB, nil
	}
	if _, err := os.Stat(s.opts.StorePath); errors.Is(err, fs.ErrNotExist) {
		return nil, errNoData
	}
	st, err := store.OpenReader(ctx, s.opts.StorePath)
	if err != nil {
		return nil, err
	}
	s.st = st
	return st.DB, nil
}

func (s *Server) now() int64 { return s.opts.Now().UnixMilli() }

// tool wraps a typed handler: it opens the store, turns errNoData into a plain answer and any
// other error into a tool error, and encodes the answer compactly as the result's only text.
func tool[In any](s *Server, name string, known []string, h func(ctx context.Context, db *dbh, in In) (any, error)) mcp.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		if err := knownArgs(req.Params.Arguments, known); err != nil {
			return nil, nil, err
		}
		start := time.Now()
		db, err := s.db(ctx)
		if errors.Is(err, errNoData) {
			return text(fmt.Sprintf("no data yet: observer has recorded nothing (no store at %s); start it with `observerctl up`",
				s.opts.StorePath)), nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		out, err := h(ctx, &dbh{DB: db, Trace: s.trace}, in)
		s.opts.Logger.Debug("tool call", "tool", name, "ms", time.Since(start).Milliseconds(), "err", err)
		var n notice
		if errors.As(err, &n) {
			return text(string(n)), nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if str, ok := out.(string); ok {
			return text(str), nil, nil
		}
		b, err := compactJSON(out)
		if err != nil {
			return nil, nil, err
		}
		return text(string(b)), nil, nil
	}
}

// knownArgs refuses arguments the tool does not take: a misspelt optional argument would
// otherwise be ignored and the agent answered about another scope than it asked for. It also
// refuses a string argument longer than its argLimits bound, before the handler sees it.
func knownArgs(raw json.RawMessage, known []string) error {
	var args map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &args) != nil {
		return nil // the schema validation already answered for what is not an object
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if !slices.Contains(known, k) {
			return fmt.Errorf("unknown argument %q: this tool takes %s", k, strings.Join(known, ", "))
		}
		var v string
		if max, ok := argLimits[k]; ok && json.Unmarshal(args[k], &v) == nil && len(v) > max {
			msg := fmt.Sprintf("%s is %d bytes, over its limit of %d bytes", k, len(v), max)
			if k == "query" {
				msg = fmt.Sprintf("query is %d bytes; a query takes at most %s: search for the few words that matter", len(v), queryLimits)
			}
			return errors.New(msg)
		}
	}
	return nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// compactJSON encodes v without indentation and without HTML escaping (a "<" costs the agent
// six characters as \u003c).
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Serve runs the server on in and out (stdin and stdout) until in ends and the requests read
// are answered, the client closes the session, or ctx is done. Lines the SDK cannot take (not
// JSON-RPC, batches, over-long) are answered by the guard (see guard.go) and never reach it,
// since it would end the session on them.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	g := newGuard(in, out)
	defer g.stop()
	err := s.mcp.Run(ctx, g.transport())
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}
