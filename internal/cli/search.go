package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/client"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find the sessions where something was said or done: prompts, replies, commands, paths, outputs, titles",
		ArgsUsage: "QUERY",
		Description: `Looks through every stored conversation (the prompts, the assistant's replies and thinking,
the commands and file paths of tool calls, compaction summaries), the tool outputs and the
session titles, and lists the sessions that match, best match first (--newest: latest match
first), each with its best matching messages, the matched words marked.

QUERY: words (all of them must be there, in any order; case and accents do not matter), a word
ending in * for every word starting so (migrat*), "a quoted phrase", OR between alternatives, NOT
before what must not be there. A path or a flag is looked for as typed (internal/db/migrate.go).

  observerctl search "migration lock"
  observerctl search 'advisory_lock OR "migration lock"' --client claude-code --since 30d
  observerctl search deploy --kind prompt --kind reply --newest --json

The full-text indexes are filled by the writer in batches: what was said in the last seconds may
not be found yet. Open a session's conversation with ` + "`observerctl export --session ID --format md`" + `
or on the dashboard (/sessions/ID#m<message id>).

The JSON has "query", "sessions" (each a session row with "score", "last_hit", "hits" and
"matches": kind, message_id or action_id, t, score, snippet, highlights as [start, end) byte
offsets in the snippet) and "capped" (more matched than were looked at).

Exit codes: 0 done (also with no match); 64 bad flags or a query with nothing to look for; 69 no
store yet.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "project", Aliases: []string{"p"}, Usage: "only this project (its path)"},
			&cli.StringFlag{Name: "client", Usage: "only this client (" + strings.Join(registryNames(), ", ") + ")"},
			&cli.StringFlag{Name: "member", Usage: "on a team hub: only this member's sessions"},
			&cli.StringFlag{Name: "since", Value: "all", Usage: "only matches since a duration ago (24h, 7d), a date or all"},
			&cli.StringFlag{Name: "until", Usage: "only matches before a duration ago or a date"},
			&cli.StringSliceFlag{Name: "kind", Usage: "only these kinds of text: " + strings.Join(query.SearchKinds, ", ") + " (repeat or comma-separate)"},
			&cli.BoolFlag{Name: "newest", Usage: "latest match first, not best match first"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "at most this many sessions"},
			&cli.IntFlag{Name: "per-session", Value: 3, Usage: "at most this many matches shown per session"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			text := strings.Join(c.Args().Slice(), " ")
			if strings.TrimSpace(text) == "" {
				return usageErr("search needs a QUERY: observerctl search \"migration lock\"")
			}
			if c.Int("limit") < 1 || c.Int("per-session") < 1 {
				return usageErr("--limit and --per-session must be at least 1")
			}
			e, err := load(c)
			if err != nil {
				return err
			}
			now := time.Now()
			since, err := parseSince(c.String("since"), now)
			if err != nil {
				return usageErr("--since: %v", err)
			}
			until, err := parseSince(c.String("until"), now)
			if err != nil {
				return usageErr("--until: %v", err)
			}
			var kinds []string
			for _, k := range c.StringSlice("kind") {
				for _, part := range strings.Split(k, ",") {
					if part = strings.TrimSpace(part); part != "" {
						kinds = append(kinds, part)
					}
				}
			}
			st, err := openReadStore(c.Context, e)
			if err != nil {
				return err
			}
			defer st.Close()
			q := query.SearchQuery{Text: text, Kinds: kinds, Newest: c.Bool("newest"), Limit: c.Int("limit"),
				PerSession: c.Int("per-session"), Filter: query.Filter{Since: since, Until: until, Project: c.String("project"),
					Client: client.Resolve(c.String("client")), Member: c.String("member")}}
			res, err := query.Search(c.Context, st.DB, q)
			if errors.Is(err, query.ErrBadSearch) {
				return usageErr("%v", err)
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				writeJSON(e.stdout, res)
				return nil
			}
			printSearch(e.stdout, res, toTerminal(e.stdout))
			return nil
		},
	}
}

// registryNames are the registry's client names, for help text.
func registryNames() []string {
	var out []string
	for _, c := range client.All() {
		out = append(out, c.Name)
	}
	return out
}

// toTerminal reports whether w is a terminal (matched words are then shown bold).
func toTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

func printSearch(w io.Writer, res *query.SearchResult, tty bool) {
	if len(res.Sessions) == 0 {
		fmt.Fprintf(w, "no session matches %q\n", res.Query)
		return
	}
	open, close := "«", "»"
	if tty {
		open, close = "\x1b[1m", "\x1b[0m"
	}
	for i, s := range res.Sessions {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := s.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(w, "%s %s  %s  %s\n", s.Client, s.SessionID, time.UnixMilli(s.LastHit).Local().Format("2006-01-02 15:04"), title)
		if s.Project != "" {
			fmt.Fprintf(w, "  %s · %d match", s.Project, s.Hits)
		} else {
			fmt.Fprintf(w, "  %d match", s.Hits)
		}
		if s.Hits != 1 {
			fmt.Fprint(w, "es")
		}
		fmt.Fprintln(w)
		for _, m := range s.Matches {
			fmt.Fprintf(w, "  %-8s %s\n", m.Kind, strings.Join(strings.Fields(highlight(m.Snippet, m.Highlights, open, close)), " "))
		}
	}
	if res.Capped {
		fmt.Fprintln(w, "\n(more matched than were looked at: narrow the search with more words, --kind or --since)")
	}
}

// highlight puts open and close around each highlighted range of s.
func highlight(s string, hl [][2]int, open, close string) string {
	var b strings.Builder
	last := 0
	for _, h := range hl {
		if h[0] < last || h[1] > len(s) {
			continue
		}
		b.WriteString(s[last:h[0]])
		b.WriteString(open + s[h[0]:h[1]] + close)
		last = h[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
