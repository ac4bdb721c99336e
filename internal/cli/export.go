package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

var (
	exportTables  = query.ExportTables
	exportFormats = []string{"json", "jsonl", "csv"}
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write stored actions, API turns, sessions or model usage as JSON, JSON lines or CSV",
		Description: `Streams rows from the store (read-only, while observer runs too) without holding them in
memory, oldest first. --table:

  actions    every tool call: the actions table's columns (tool outputs are not exported)
  turns      every API turn the proxy saw (api_turns); a turn's project is its session's when the
             proxy did not know it
  sessions   one row per session: first_seen, last_seen, state, project, model, events, ...
  usage      every model turn once, as cost counts it: a proxy turn, or a transcript message the
             proxy did not see. Columns: ts, client, session_id, project, model, input_tokens (net
             of cache), output_tokens, cache_read_tokens, cache_creation_tokens,
             cache_creation_1h_tokens, reasoning_tokens, cost_usd, proxy (1: measured by the proxy),
             reliability

--format json writes one JSON array of objects, jsonl one object per line, csv a header line and
one line per row. Times (ts, first_seen, last_seen, state_at) are RFC 3339 in UTC with
milliseconds; an unknown time is null (empty in CSV). --since and --until take a duration ago (24h,
7d) or a local date (2026-11-01); --until is exclusive; sessions match when they overlap the
window. --output writes a file created with mode 0600 (a partial file is removed on failure);
otherwise the rows go to stdout.

--session ID exports one session's conversation instead: --format md (Markdown), html (one
self-contained page: no script, no outside resource; thinking and long outputs folded; each
message anchored #m<id>) or json (the messages as the dashboard reads them). The prompts, replies,
thinking, tool calls with their results (outputs cut at 20,000 characters) and compaction
summaries, in order, each model turn's tokens and dollars beside it; scrubbed of secrets again as
they are written.

Exit codes: 0 done; 1 failure; 64 a bad flag (unknown table or format, a bad time); 69 no store
yet or no such session.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "table", Value: "actions", Usage: "what to export: " + strings.Join(exportTables, ", ")},
			&cli.StringFlag{Name: "format", Value: "json", Usage: "json (an array), jsonl (one object per line) or csv"},
			&cli.StringFlag{Name: "since", Value: "all", Usage: "only rows since a duration ago (24h, 7d), a date (2026-11-01) or all"},
			&cli.StringFlag{Name: "until", Usage: "only rows before a duration ago or a date"},
			&cli.StringFlag{Name: "project", Usage: "only this project (its path)"},
			&cli.StringFlag{Name: "client", Usage: "only this client (claude-code, codex, ...)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to this `FILE` (mode 0600) instead of stdout"},
			&cli.StringFlag{Name: "session", Usage: "export this session's conversation instead (its `ID` or a unique prefix), with --format md, html or json"},
		},
		Action: runExport,
	}
}

// exportQuery is what to read.
type exportQuery struct {
	table, project, client string
	since, until           time.Time
}

func runExport(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("export takes no arguments, got %q", c.Args().First())
	}
	e, err := load(c)
	if err != nil {
		return err
	}
	if c.IsSet("session") {
		return runExportSession(c, e)
	}
	q := exportQuery{table: c.String("table"), project: c.String("project"), client: c.String("client")}
	format := c.String("format")
	if !slices.Contains(exportTables, q.table) {
		return usageErr("--table %q: choose one of %s", q.table, strings.Join(exportTables, ", "))
	}
	if !slices.Contains(exportFormats, format) {
		return usageErr("--format %q: choose one of %s", format, strings.Join(exportFormats, ", "))
	}
	now := time.Now()
	if q.since, err = parseSince(c.String("since"), now); err != nil {
		return usageErr("--since: %v", err)
	}
	if q.until, err = parseSince(c.String("until"), now); err != nil {
		return usageErr("--until: %v", err)
	}
	if !q.since.IsZero() && !q.until.IsZero() && !q.until.After(q.since) {
		return usageErr("--until (%s) must be after --since (%s)", q.until.Format(time.RFC3339), q.since.Format(time.RFC3339))
	}
	if _, err := os.Stat(e.cfg.StorePath()); err != nil {
		return withCode(ExitUnavailable, fmt.Errorf("no store at %s yet: start observer (`observerctl up`) or ingest history (`observerctl backfill`)", e.cfg.StorePath()))
	}
	st, err := store.OpenReader(c.Context, e.cfg.StorePath())
	if err != nil {
		return withCode(ExitUnavailable, err)
	}
	defer st.Close()

	path := c.String("output")
	var rows int64
	err = writeOutput(e.stdout, path, func(w io.Writer) error {
		var err error
		rows, err = exportRows(c.Context, st, q, format, w)
		return err
	})
	if err != nil {
		return fmt.Errorf("export %s: %w", q.table, err)
	}
	if path != "" {
		fmt.Fprintf(e.stdout, "exported %s %s row(s) to %s\n", n(rows), q.table, path)
	}
	return nil
}

// writeOutput runs write on stdout, or, with a path, on a temporary file beside it renamed over it
// once complete: a failed export leaves the previous file as it was (CreateTemp makes it 0600).
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// exportTimeCols are the columns holding Unix ms, written as RFC 3339.
var exportTimeCols = map[string]bool{"ts": true, "first_seen": true, "last_seen": true, "state_at": true}

// exportRows writes q's rows to w in format, one at a time, and returns how many it wrote.
func exportRows(ctx context.Context, st *store.Store, q exportQuery, format string, w io.Writer) (int64, error) {
	rows, err := query.Export(ctx, st.DB, q.table, query.Filter{Since: q.since, Until: q.until, Project: q.project, Client: q.client})
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols := rows.Columns()
	bw := bufio.NewWriterSize(w, 256<<10)
	var cw *csv.Writer
	keys := make([][]byte, len(cols))
	for i, c := range cols {
		keys[i], _ = json.Marshal(c)
	}
	switch format {
	case "csv":
		cw = csv.NewWriter(bw)
		if err := cw.Write(cols); err != nil {
			return 0, err
		}
	case "json":
		bw.WriteString("[")
	}
	rec := make([]string, len(cols))
	var count int64
	var line []byte
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return count, err
		}
		for i, v := range vals {
			vals[i] = exportValue(cols[i], v)
		}
		if cw != nil {
			for i, v := range vals {
				rec[i] = csvValue(v)
			}
			if err := cw.Write(rec); err != nil {
				return count, err
			}
		} else {
			line = append(line[:0], '{')
			for i, v := range vals {
				if i > 0 {
					line = append(line, ',')
				}
				b, err := json.Marshal(v)
				if err != nil {
					return count, fmt.Errorf("column %s: %w", cols[i], err)
				}
				line = append(append(append(line, keys[i]...), ':'), b...)
			}
			line = append(line, '}')
			switch {
			case format == "jsonl":
				line = append(line, '\n')
			case count == 0:
				bw.WriteString("\n")
			default:
				bw.WriteString(",\n")
			}
			if _, err := bw.Write(line); err != nil {
				return count, err
			}
		}
		count++
	}
	if err := rows.Err(); err != nil {
		return count, err
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return count, err
		}
	}
	if format == "json" {
		if count > 0 {
			bw.WriteString("\n")
		}
		bw.WriteString("]\n")
	}
	if err := bw.Flush(); err != nil {
		return count, err
	}
	return count, ctx.Err()
}

// exportValue turns a column's stored value into what is written: times as RFC 3339 (null when
// 0), text as strings.
func exportValue(col string, v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case int64:
		if exportTimeCols[col] {
			if x == 0 {
				return nil
			}
			return time.UnixMilli(x).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		}
	case time.Time: // the driver parses columns declared as timestamps
		return x.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return v
}

func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}
