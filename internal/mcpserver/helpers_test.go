package mcpserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/observerhq/observer/internal/corpusstore"
	"github.com/observerhq/observer/pkg/store"
)

var corpusDir = filepath.Join("..", "..", "..", "shared", "corpus")

var (
	corpusOnce sync.Once
	corpusPath string
	corpusErr  string
)

// corpusStore returns a store filled from the shared corpus the way `observerctl scan` fills one
// (the same readers, scanner and session lifecycle, then the full-text index), built once per test
// binary; tests open it read-only. It skips when the corpus is absent.
func corpusStore(tb testing.TB) string {
	tb.Helper()
	if why := corpusstore.Available(); why != "" {
		tb.Skip(why)
	}
	corpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "observer-mcp-corpus-")
		if err != nil {
			corpusErr = err.Error()
			return
		}
		if p, err := fillFromCorpus(dir); err != nil {
			corpusErr = err.Error()
		} else {
			corpusPath = p
		}
	})
	if corpusErr != "" {
		tb.Fatalf("corpus store: %s", corpusErr)
	}
	return corpusPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if corpusPath != "" {
		os.RemoveAll(filepath.Dir(corpusPath))
	}
	os.Exit(code)
}

func fillFromCorpus(dir string) (string, error) { return corpusstore.Build(dir) }

type cmdError struct {
	what string
	err  error
	out  []byte
}

func (e *cmdError) Error() string { return e.what + ": " + e.err.Error() + "\n" + string(e.out) }

// roDB opens a store read-only for the tests' own expectations.
func roDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	st, err := store.OpenReader(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st.DB
}

// connect runs the server on one end of an in-memory transport and returns a client session on
// the other.
func connect(tb testing.TB, s *Server) *mcp.ClientSession {
	tb.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
		s.Close()
	})
	return cs
}

// newServer serves the store at path with project as the working directory's project.
func newServer(tb testing.TB, path, project string, now time.Time) (*Server, *mcp.ClientSession) {
	tb.Helper()
	s := New(Options{StorePath: path, Project: project, Now: func() time.Time { return now }})
	return s, connect(tb, s)
}

// call calls a tool and returns its text and whether it is a tool error.
func call(tb testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s(%v): %v", name, args, err)
	}
	if len(res.Content) != 1 {
		tb.Fatalf("%s(%v): %d content blocks, want 1", name, args, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		tb.Fatalf("%s: content is %T", name, res.Content[0])
	}
	if res.StructuredContent != nil {
		tb.Errorf("%s: structured content doubles the answer's tokens", name)
	}
	return tc.Text, res.IsError
}

// callJSON calls a tool that must succeed with a JSON answer and decodes it into out.
func callJSON(tb testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	tb.Helper()
	text, isErr := call(tb, cs, name, args)
	if isErr {
		tb.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	if !strings.HasPrefix(text, "{") {
		tb.Fatalf("%s(%v) = %q, want a JSON object", name, args, text)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		tb.Fatalf("%s: %v\n%s", name, err, text)
	}
	return text
}

func queryInt(tb testing.TB, db *sql.DB, q string, args ...any) int64 {
	tb.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n.Int64
}

func queryStr(tb testing.TB, db *sql.DB, q string, args ...any) string {
	tb.Helper()
	var s sql.NullString
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return s.String
}

func queryInts(tb testing.TB, db *sql.DB, q string, args ...any) []int64 {
	tb.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			tb.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}
