package compress

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The inputs the content tests compress: what coding agents read and run, written out or
// generated deterministically.

// sampleGo is a Go source file as Read or cat returns it.
const sampleGo = `// Package store keeps sessions in SQLite.
//
// It owns one writer connection and a pool of readers.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound reports a session that is not in the store.
var ErrNotFound = errors.New("session not found")

const defaultLimit = 100

// Session is one agent session.
type Session struct {
	ID        string
	Project   string
	StartedAt time.Time
	Tokens    int64
}

// Store reads and writes sessions.
type Store struct {
	db    *sql.DB
	now   func() time.Time
	limit int
}

// Querier is what Store needs of a database.
type Querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// Open opens the store at path, creating its tables.
// It fails when the file cannot be opened.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, project TEXT, started INTEGER, tokens INTEGER)"); err != nil {
		db.Close()
		return nil, fmt.Errorf("create tables in %s: %w", path, err)
	}
	s := &Store{db: db, now: time.Now, limit: defaultLimit}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return s.db.Close()
}

// Session returns the session with the given id.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	var sess Session
	var started int64
	row := s.db.QueryRowContext(ctx, "SELECT id, project, started, tokens FROM sessions WHERE id = ?", id)
	switch err := row.Scan(&sess.ID, &sess.Project, &started, &sess.Tokens); {
	case errors.Is(err, sql.ErrNoRows):
		return Session{}, ErrNotFound
	case err != nil:
		return Session{}, fmt.Errorf("read session %s: %w", id, err)
	}
	sess.StartedAt = time.Unix(0, started)
	return sess, nil
}

// Sessions lists the sessions of a project, newest first.
func (s *Store) Sessions(ctx context.Context, project string) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, project, started, tokens FROM sessions WHERE project = ? ORDER BY started DESC LIMIT ?", project, s.limit)
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s: %w", project, err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var sess Session
		var started int64
		if err := rows.Scan(&sess.ID, &sess.Project, &started, &sess.Tokens); err != nil {
			return nil, err
		}
		sess.StartedAt = time.Unix(0, started)
		out = append(out, sess)
	}
	return out, rows.Err()
}

// Put writes a session, replacing one with the same id.
func (s *Store) Put(ctx context.Context, sess Session) error {
	if sess.ID == "" {
		return errors.New("put session: empty id")
	}
	if sess.StartedAt.IsZero() {
		sess.StartedAt = s.now()
	}
	_, err := s.db.ExecContext(ctx,
		"INSERT OR REPLACE INTO sessions (id, project, started, tokens) VALUES (?, ?, ?, ?)",
		sess.ID, sess.Project, sess.StartedAt.UnixNano(), sess.Tokens)
	if err != nil {
		return fmt.Errorf("put session %s: %w", sess.ID, err)
	}
	return nil
}

// total sums tokens over sessions; braces in strings such as "{" and '}' do not count.
func total(sessions []Session) int64 {
	var n int64
	for _, s := range sessions {
		if s.Project == "{" || s.Project == "}" {
			continue
		}
		n += s.Tokens
	}
	return n
}
`

// sampleGoKept are lines of sampleGo its outline keeps; sampleGoDropped, lines it drops.
var (
	sampleGoKept = []string{
		"// Package store keeps sessions in SQLite.", "package store", "import (", "\t\"database/sql\"", ")",
		"var ErrNotFound = errors.New(\"session not found\")", "const defaultLimit = 100",
		"type Session struct {", "\tTokens    int64", "type Store struct {", "type Querier interface {",
		"\tQueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)",
		"// Open opens the store at path, creating its tables.",
		"func Open(ctx context.Context, path string) (*Store, error) {",
		"func (s *Store) Close() error {",
		"func (s *Store) Session(ctx context.Context, id string) (Session, error) {",
		"func (s *Store) Sessions(ctx context.Context, project string) ([]Session, error) {",
		"func (s *Store) Put(ctx context.Context, sess Session) error {",
		"func total(sessions []Session) int64 {",
	}
	sampleGoDropped = []string{
		"// It fails when the file cannot be opened.", "// It owns one writer connection and a pool of readers.",
		"\tdefer rows.Close()", "\t\treturn nil, fmt.Errorf(\"list sessions of %s: %w\", project, err)",
		"\t\tsess.StartedAt = s.now()", "\t\tn += s.Tokens",
	}
)

// samplePython is a Python module.
const samplePython = `"""Billing: turns token counts into invoices.

The rates come from the pricing table.
"""
from __future__ import annotations

import dataclasses
import decimal
from typing import Iterable

RATE_SCALE = 1_000_000


@dataclasses.dataclass
class Rate:
    """A price per million tokens."""

    model: str
    input: decimal.Decimal
    output: decimal.Decimal

    def cost(self, tokens_in: int, tokens_out: int) -> decimal.Decimal:
        """The cost of one call."""
        total = self.input * tokens_in + self.output * tokens_out
        return total / RATE_SCALE


class Invoice:
    """The lines billed to one project."""

    def __init__(self, project: str, rates: dict[str, Rate]):
        self.project = project
        self.rates = rates
        self.lines: list[tuple[str, decimal.Decimal]] = []
        self._closed = False

    def add(
        self,
        model: str,
        tokens_in: int,
        tokens_out: int,
    ) -> None:
        """
        Add one call to the invoice.

        Unknown models are billed at zero and logged.
        """
        if self._closed:
            raise RuntimeError("invoice is closed")
        rate = self.rates.get(model)
        if rate is None:
            print(f"unknown model {model}")
            return
        self.lines.append((model, rate.cost(tokens_in, tokens_out)))

    @property
    def total(self) -> decimal.Decimal:
        return sum((amount for _, amount in self.lines), decimal.Decimal(0))

    def render(self) -> str:
        out = [f"Invoice for {self.project}"]
        for model, amount in self.lines:
            out.append(f"  {model:<30} {amount:>12.4f}")
        out.append(f"  {'total':<30} {self.total:>12.4f}")
        text = """
        Thank you.
def not_a_function():
        """
        return "\n".join(out) + text


async def invoices(projects: Iterable[str], rates: dict[str, Rate]) -> list[Invoice]:
    result = []
    for project in projects:
        inv = Invoice(project, rates)
        inv.add("claude-sonnet", 1000, 200)
        result.append(inv)
    return result
`

var (
	samplePythonKept = []string{
		`"""Billing: turns token counts into invoices.`, "from __future__ import annotations", "import dataclasses",
		"from typing import Iterable", "RATE_SCALE = 1_000_000", "@dataclasses.dataclass", "class Rate:",
		"    model: str", "    def cost(self, tokens_in: int, tokens_out: int) -> decimal.Decimal:",
		`        """The cost of one call."""`, "class Invoice:",
		"    def __init__(self, project: str, rates: dict[str, Rate]):", "    def add(", "        tokens_out: int,",
		"    ) -> None:", "        Add one call to the invoice.", "    @property", "    def total(self) -> decimal.Decimal:",
		"    def render(self) -> str:",
		"async def invoices(projects: Iterable[str], rates: dict[str, Rate]) -> list[Invoice]:",
	}
	samplePythonDropped = []string{
		"        self.rates = rates", "            raise RuntimeError(\"invoice is closed\")",
		"        Unknown models are billed at zero and logged.", "def not_a_function():",
		"        inv.add(\"claude-sonnet\", 1000, 200)",
	}
)

// sampleTS is a TypeScript module.
const sampleTS = `import { readFile } from "node:fs/promises";
import type { Config } from "./config";

export interface Item {
  id: string;
  title: string;
  done: boolean;
}

export type Filter = {
  done?: boolean;
  text?: string;
};

/**
 * Loads the items of a list from disk.
 * Missing files read as empty lists.
 */
export async function loadItems(path: string): Promise<Item[]> {
  try {
    const raw = await readFile(path, "utf8");
    const parsed = JSON.parse(raw) as { items: Item[] };
    return parsed.items.map((it) => ({ ...it, title: it.title.trim() }));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      return [];
    }
    throw err;
  }
}

export class TodoList {
  private items: Item[] = [];

  constructor(private readonly config: Config) {}

  add(title: string): Item {
    const item = { id: String(this.items.length + 1), title, done: false };
    this.items.push(item);
    if (this.items.length > this.config.maxItems) {
      this.items.shift();
    }
    return item;
  }

  filter(f: Filter): Item[] {
    return this.items.filter((it) => {
      if (f.done !== undefined && it.done !== f.done) {
        return false;
      }
      return !f.text || it.title.includes(f.text);
    });
  }
}

export const summarize = (items: Item[]): string => {
  const done = items.filter((it) => it.done).length;
  const open = items.length - done;
  const label = open === 1 ? "item" : "items";
  return "" + open + " open " + label + ", " + done + " done";
};
`

var (
	sampleTSKept = []string{
		`import { readFile } from "node:fs/promises";`, `import type { Config } from "./config";`,
		"export interface Item {", "  done: boolean;", "export type Filter = {", "  text?: string;",
		" * Loads the items of a list from disk.",
		"export async function loadItems(path: string): Promise<Item[]> {", "export class TodoList {",
		"  private items: Item[] = [];", "  constructor(private readonly config: Config) {}",
		"  add(title: string): Item {", "  filter(f: Filter): Item[] {",
		"export const summarize = (items: Item[]): string => {",
	}
	sampleTSDropped = []string{
		" * Missing files read as empty lists.", `    const raw = await readFile(path, "utf8");`,
		"    this.items.push(item);", "      return !f.text || it.title.includes(f.text);",
		"  const open = items.length - done;",
	}
)

// sampleDiff is a git diff of two files with the default three lines of context, and more
// context where hunks merged.
const sampleDiff = `diff --git a/pkg/store/store.go b/pkg/store/store.go
index 3b18e51..a8f2c0d 100644
--- a/pkg/store/store.go
+++ b/pkg/store/store.go
@@ -41,20 +41,22 @@ func Open(ctx context.Context, path string) (*Store, error) {
 	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
 	if err != nil {
 		return nil, fmt.Errorf("open store %s: %w", path, err)
 	}
-	if _, err := db.ExecContext(ctx, schema); err != nil {
+	if _, err := db.ExecContext(ctx, schemaV2); err != nil {
 		db.Close()
 		return nil, fmt.Errorf("create tables in %s: %w", path, err)
 	}
 	s := &Store{db: db, now: time.Now, limit: defaultLimit}
 	return s, nil
 }
 
 // Close closes the database.
 func (s *Store) Close() error {
 	return s.db.Close()
 }
 
+// Ping checks the connection.
+func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
 // Session returns the session with the given id.
 func (s *Store) Session(ctx context.Context, id string) (Session, error) {
 	var sess Session
@@ -97,8 +98,8 @@ func (s *Store) Sessions(ctx context.Context, project string) ([]Session, error)
 		if err := rows.Scan(&sess.ID, &sess.Project, &started, &sess.Tokens); err != nil {
 			return nil, err
 		}
-		sess.StartedAt = time.Unix(0, started)
+		sess.StartedAt = time.Unix(0, started).UTC()
 		out = append(out, sess)
 	}
 	return out, rows.Err()
 }
diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1,10 +1,10 @@
 # observer
 
-Observer watches coding agents.
+Observer watches coding agents and what they cost.
 
 ## Install
 
 Run make build and copy the binary somewhere on your PATH.
 Then start it with observer up.
-- not a list item, a removed line that reads like a header
+-- neither is this one
 The end.
`

// sampleApplyPatch is a Codex apply_patch input.
const sampleApplyPatch = `*** Begin Patch
*** Update File: src/app.py
@@ def main():
     args = parse_args()
     config = load_config(args.config)
     setup_logging(config.log_level)
     client = Client(config.url, timeout=config.timeout)
-    result = client.run(args.task)
+    result = client.run(args.task, retries=3)
     print(result.summary)
     write_report(result, args.out)
     notify(config.webhook, result)
     cleanup(client)
     return 0
@@ def parse_args():
     parser = argparse.ArgumentParser()
     parser.add_argument("--config", default="config.toml")
     parser.add_argument("--out", default="report.json")
+    parser.add_argument("--retries", type=int, default=3)
     parser.add_argument("task")
     parser.add_argument("--verbose", action="store_true")
     parser.add_argument("--dry-run", action="store_true")
     return parser.parse_args()
*** Add File: src/retry.py
+def retry(fn, times):
+    for _ in range(times):
+        try:
+            return fn()
+        except Exception:
+            pass
*** End Patch
`

// sampleHTML is a web page as a fetch returns it.
func sampleHTML() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Release notes - Observer 2.4</title>
    <!-- Google Tag Manager -->
    <SCRIPT type="text/javascript">
      (function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start': new Date().getTime(),event:'gtm.js'});
      var f=d.getElementsByTagName(s)[0], j=d.createElement(s); j.async=true; j.src='https://www.googletagmanager.com/gtm.js?id='+i;
      f.parentNode.insertBefore(j,f);})(window,document,'script','dataLayer','GTM-XXXX');
    </SCRIPT>
    <style>
      body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 48rem; }
      .note { border-left: 4px solid #36c; padding: 0.5rem 1rem; background: #f4f7fb; }
      pre, code { font-family: ui-monospace, monospace; font-size: 0.9em; }
    </style>
    <script src="/static/app.js" defer></script>
  </head>
  <body>
    <header style="display:flex; gap: 1rem; align-items:center">
      <svg width="24" height="24" viewBox="0 0 24 24"><path d="M12 2L2 7l10 5 10-5-10-5zm0 7.5L4.5 6 12 2.5 19.5 6 12 9.5z"/>
        <path d="M2 17l10 5 10-5M2 12l10 5 10-5" fill="none" stroke="currentColor"/></svg>
      <h1>Observer 2.4</h1>
    </header>
    <!--
      Legacy banner, kept for the old theme.
      <div class="banner">Old</div>
    -->
    <main>
`)
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, `      <section class="note" id="change-%d" style="margin-top: %dpx; color: #333">
        <h2>Change %d</h2>
        <p>
          The proxy now compresses tool output of kind %d before it goes upstream,
          which saves tokens on long sessions.
        </p>
        <svg class="icon"><use href="#check"/></svg>
      </section>

`, i, i*4, i, i)
	}
	b.WriteString(`    </main>
    <footer><p>&copy; 2025 Observer</p><script>window.analytics && window.analytics.page();</script></footer>
  </body>
</html>
`)
	return b.String()
}

// sampleGoTestLog is "go test ./..." output: a run of passing tests, a failure in the middle,
// repeated retry lines and a summary at the end.
func sampleGoTestLog() string {
	var b strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "=== RUN   TestStore_Put/case_%03d\n", i)
		fmt.Fprintf(&b, "--- PASS: TestStore_Put/case_%03d (0.%02ds)\n", i, i%100)
		if i == 60 {
			b.WriteString("    store_test.go:88: put session s60: database is locked\n")
			b.WriteString("--- FAIL: TestStore_Put/case_060_locked (1.20s)\n")
		}
	}
	for i := 0; i < 30; i++ {
		b.WriteString("    bus_test.go:41: waiting for the server\n")
	}
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&b, "2025-03-14T10:22:%02d.%03dZ retrying connection to nats://127.0.0.1:4222 (attempt %d)\n", i, i*7, i+1)
	}
	for i := 1; i <= 70; i++ {
		fmt.Fprintf(&b, "ok  \tgithub.com/observerhq/observer/pkg/mod%02d\t0.%03ds\n", i, 100+i)
	}
	b.WriteString("FAIL\tgithub.com/observerhq/observer/pkg/store\t3.412s\nFAIL\n")
	return b.String()
}

// sampleNpmLog is "npm ci && npm test" output with deprecation warnings, a long Jest run and a
// failing suite.
func sampleNpmLog() string {
	var b strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "npm WARN deprecated inflight@1.0.%d: This module is not supported, and leaks memory.\n", i)
	}
	b.WriteString("\nadded 1287 packages, and audited 1288 packages in 41s\n\n")
	b.WriteString("> web@1.0.0 test\n> jest --ci\n\n")
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&b, "PASS src/components/widget%d.test.tsx (%d.%03d s)\n", i, i%7, i*13%1000)
		if i%50 == 0 {
			fmt.Fprintf(&b, "  console.warn\n    Warning: componentWillMount has been renamed (widget%d)\n", i)
		}
	}
	b.WriteString("FAIL src/api/client.test.ts\n  ● client › retries on 503\n\n    expect(received).toBe(expected)\n\n    Expected: 3\n    Received: 1\n\n")
	b.WriteString("Test Suites: 1 failed, 150 passed, 151 total\nTests:       1 failed, 612 passed, 613 total\nTime:        38.21 s\n")
	return b.String()
}

// samplePytestLog is "pytest -v" output.
func samplePytestLog() string {
	var b strings.Builder
	b.WriteString("============================= test session starts ==============================\n")
	b.WriteString("platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0\nrootdir: /src/billing\ncollected 240 items\n\n")
	for i := 1; i <= 240; i++ {
		status := "PASSED"
		if i == 117 {
			status = "FAILED"
		}
		fmt.Fprintf(&b, "tests/test_invoice.py::test_rate_%d %s [%3d%%]\n", i, status, i*100/240)
	}
	b.WriteString("\n=================================== FAILURES ===================================\n")
	b.WriteString("________________________________ test_rate_117 _________________________________\n")
	b.WriteString("    def test_rate_117():\n>       assert rate.cost(1000, 0) == Decimal('0.003')\nE       AssertionError: assert Decimal('0.0030') == Decimal('0.003')\n")
	b.WriteString("=========================== short test summary info ============================\n")
	b.WriteString("FAILED tests/test_invoice.py::test_rate_117 - AssertionError\n========================= 1 failed, 239 passed in 2.31s =========================\n")
	return b.String()
}

// sampleText is a long README.
func sampleText() string {
	var b strings.Builder
	b.WriteString("# Observer\n\nObserver watches the coding agents on a machine and what they cost.\n\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nThis section explains feature number %d in some detail, with the reasoning behind it,\nthe options that control it and what to do when it goes wrong.\n\n", i, i)
	}
	b.WriteString("## License\n\nMIT. See LICENSE for the full text.\n")
	return b.String()
}

// apiIssue is one item of a GitHub-style issue listing; its fields marshal in this order.
type apiIssue struct {
	URL       string     `json:"url"`
	ID        int        `json:"id"`
	Number    int        `json:"number"`
	Title     string     `json:"title"`
	State     string     `json:"state"`
	Locked    bool       `json:"locked"`
	User      apiUser    `json:"user"`
	Labels    []apiLabel `json:"labels"`
	Assignee  *apiUser   `json:"assignee"`
	Comments  int        `json:"comments"`
	CreatedAt string     `json:"created_at"`
	Body      string     `json:"body"`
	Reactions struct {
		Total int `json:"total_count"`
		Plus1 int `json:"+1"`
		Heart int `json:"heart"`
	} `json:"reactions"`
}

type apiUser struct {
	Login     string `json:"login"`
	ID        int    `json:"id"`
	AvatarURL string `json:"avatar_url"`
	Type      string `json:"type"`
	SiteAdmin bool   `json:"site_admin"`
}

type apiLabel struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	Color   string `json:"color"`
	Default bool   `json:"default"`
}

// sampleJSON is a pretty-printed issue listing of about 55 KB, as "gh api" or curl prints it.
func sampleJSON() string {
	issues := make([]apiIssue, 40)
	for i := range issues {
		is := &issues[i]
		is.Number = 1000 + i
		is.ID = 2000000 + i*37
		is.URL = fmt.Sprintf("https://api.github.com/repos/observerhq/observer/issues/%d", is.Number)
		is.Title = fmt.Sprintf("Proxy drops the usage of streamed response %d", i)
		is.State = []string{"open", "closed"}[i%2]
		is.User = apiUser{Login: fmt.Sprintf("dev%d", i%7), ID: 500 + i%7, AvatarURL: fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", 500+i%7), Type: "User"}
		for j := 0; j < 1+i%5; j++ {
			is.Labels = append(is.Labels, apiLabel{ID: 90 + j, Name: []string{"bug", "proxy", "p1", "needs-repro", "good first issue"}[j], Color: "d73a4a"})
		}
		if i%3 == 0 {
			u := is.User
			is.Assignee = &u
		}
		is.Comments = i % 11
		is.CreatedAt = fmt.Sprintf("2025-02-%02dT10:%02d:00Z", 1+i%28, i%60)
		is.Body = strings.Repeat(fmt.Sprintf("Steps: start the proxy, stream response %d, compare the usage with the upstream's \"usage\" event. ", i), 3)
		is.Reactions.Total = i % 4
		is.Reactions.Plus1 = i % 3
	}
	out, err := json.MarshalIndent(map[string]any{"total_count": len(issues), "incomplete_results": false, "items": issues}, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(out) + "\n"
}

// withReadPrefixes writes s the way Claude Code's Read tool returns a file: each line behind its
// number, right-aligned in six columns, and an arrow (or a tab).
func withReadPrefixes(s, sep string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d%s%s", i+1, sep, l)
	}
	return b.String()
}
