package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/store"
)

// The commands that read the analysis the writer keeps (internal/analysis), through the read model
// (internal/query): discover, patterns, score and suggest.

var windowFlags = []cli.Flag{
	&cli.StringFlag{Name: "since", Value: "all", Usage: "sessions active since a duration ago (24h, 7d), a date (2026-11-01) or all"},
	&cli.StringFlag{Name: "project", Usage: "only this project (its path)"},
	&cli.StringFlag{Name: "client", Usage: "only this client (claude-code, codex, ...)"},
	&cli.IntFlag{Name: "limit", Value: 20, Usage: "rows per list"},
	&cli.BoolFlag{Name: "json", Usage: "print JSON"},
}

// analysisFilter loads the configuration and reads the window flags.
func analysisFilter(c *cli.Context) (*env, query.AnalysisQuery, error) {
	f := query.AnalysisQuery{Filter: query.Filter{Project: c.String("project"), Client: c.String("client")}, Limit: c.Int("limit")}
	e, err := load(c)
	if err != nil {
		return nil, f, err
	}
	if f.Limit <= 0 || f.Limit > 10000 {
		return nil, f, usageErr("--limit: must be between 1 and 10000")
	}
	since, err := parseSince(c.String("since"), time.Now())
	if err != nil {
		return nil, f, usageErr("--since: %v", err)
	}
	f.Since = since
	return e, f, nil
}

// emptyWindowNote says, after an empty answer for a window, where the stored turns are.
func emptyWindowNote(c *cli.Context, e *env, st *store.Store, since time.Time) {
	if hint := windowHint(c.Context, st, since, time.Time{}); hint != "" {
		fmt.Fprintln(e.stdout, hint)
	}
}

// openAnalysis opens the store read-only for a command of this file.
func openAnalysis(e *env, c *cli.Context) (*store.Store, error) {
	st, err := openReadStore(c.Context, e)
	if err != nil {
		return nil, err
	}
	if v, err := st.SchemaVersion(c.Context); err != nil || v < 6 {
		st.Close()
		return nil, withCode(ExitUnavailable, fmt.Errorf("the store at %s predates the analysis tables: start observer once (`observerctl up`) to migrate it", e.cfg.StorePath()))
	}
	return st, nil
}

// pendingNote tells the user when the writer has not caught up yet.
func pendingNote(e *env, sessions, projects int64) {
	if sessions > 0 {
		fmt.Fprintf(e.stderr, "note: %d session(s) are waiting for the writer's analysis; figures will follow in a few seconds while observer runs\n", sessions)
	}
	if projects > 0 {
		fmt.Fprintf(e.stderr, "note: the patterns of %d project(s) are being recomputed\n", projects)
	}
}

func discoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "discover",
		Usage: "work the agents did twice: stale re-reads, repeated commands, files several clients touched",
		Description: `Reads the findings the writer keeps per session. A session counts when it acted in the window,
with all its findings.

  stale re-read         ` + query.DefStaleReread + `
  unclassified re-read  ` + query.DefUnclassifiedReread + `
  across agents         ` + query.DefCrossAgent + `
  repeated command      ` + query.DefRepeat + `
  shared file           ` + query.DefShared + `

The JSON has "totals", "rereads", "repeats", "shared_files" and "pending_sessions".

Exit codes: 0 done; 64 a bad flag; 69 no store yet.`,
		Flags: windowFlags,
		Action: func(c *cli.Context) error {
			e, f, err := analysisFilter(c)
			if err != nil {
				return err
			}
			st, err := openAnalysis(e, c)
			if err != nil {
				return err
			}
			defer st.Close()
			d, err := query.Discover(c.Context, st.DB, f)
			if err != nil {
				return err
			}
			pendingNote(e, d.Pending, 0)
			if c.Bool("json") {
				writeJSON(e.stdout, d)
				return nil
			}
			t := d.Totals
			if t.Sessions == 0 {
				emptyWindowNote(c, e, st, f.Since)
			}
			fmt.Fprintf(e.stdout, "%d sessions: %d stale re-reads, %d unclassified re-reads (%d files across agents), %d repeated commands, %d files shared by clients\n",
				t.Sessions, t.StaleRereads, t.UnclassifiedRereads, t.CrossAgentFiles, t.RepeatedCommands, t.SharedFiles)
			if len(d.Rereads) > 0 {
				fmt.Fprintln(e.stdout, "\nRe-reads")
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "SESSION\tTITLE\tCLIENT\tFILE\tREADS\tSTALE\tUNCLASSIFIED\tFINDING")
				for _, r := range d.Rereads {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", short(r.SessionID), titleCell(r.Title), r.Client, r.Target, r.Reads, r.Stale, r.Unclassified, r.Label)
				}
				tw.Flush()
			}
			if len(d.Repeats) > 0 {
				fmt.Fprintln(e.stdout, "\nRepeated commands")
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "SESSION\tTITLE\tCLIENT\tRUNS\tREPEATS\tCOMMAND")
				for _, r := range d.Repeats {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", short(r.SessionID), titleCell(r.Title), r.Client, r.Runs, r.Repeats, oneLine(r.Command, 100))
				}
				tw.Flush()
			}
			if len(d.Shared) > 0 {
				fmt.Fprintln(e.stdout, "\nFiles touched by several clients")
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "PROJECT\tFILE\tCLIENTS\tACTIONS")
				for _, s := range d.Shared {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", filepath.Base(s.Project), s.Target, strings.Join(s.Clients, ","), s.Actions)
				}
				tw.Flush()
			}
			return nil
		},
	}
}

func patternsCommand() *cli.Command {
	return &cli.Command{
		Name:  "patterns",
		Usage: "habits found in each project's sessions, with a confidence that fades when they stop",
		Description: `Kinds: command_pair (command B run right after A), co_edit (files edited in the same session),
edit_then_test (edits followed by a test command), hot_file (files touched in many sessions).
Support counts occurrences (or sessions); ratio is support over opportunities; confidence is the
ratio halved for every 14 days since the pattern was last seen. Listed when last seen in the window.
The JSON has "patterns" and "pending_projects".

Exit codes: 0 done; 64 a bad flag; 69 no store yet.`,
		Flags: append(slices.Clone(windowFlags),
			&cli.StringFlag{Name: "kind", Usage: "only this kind: " + strings.Join(query.PatternKinds, ", ")},
			&cli.Float64Flag{Name: "min-confidence", Usage: "only patterns with at least this confidence (0 to 1)"}),
		Action: func(c *cli.Context) error {
			e, f, err := analysisFilter(c)
			if err != nil {
				return err
			}
			kind, minConf := c.String("kind"), c.Float64("min-confidence")
			if kind != "" && !slices.Contains(query.PatternKinds, kind) {
				return usageErr("--kind: one of %s", strings.Join(query.PatternKinds, ", "))
			}
			if minConf < 0 || minConf > 1 {
				return usageErr("--min-confidence: between 0 and 1")
			}
			st, err := openAnalysis(e, c)
			if err != nil {
				return err
			}
			defer st.Close()
			ps, err := query.Patterns(c.Context, st.DB, f, kind, minConf, time.Now())
			if err != nil {
				return err
			}
			pendingNote(e, 0, ps.Pending)
			if c.Bool("json") {
				writeJSON(e.stdout, ps)
				return nil
			}
			if len(ps.Patterns) == 0 {
				fmt.Fprintln(e.stdout, "no pattern seen twice in this window")
				emptyWindowNote(c, e, st, f.Since)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KIND\tPROJECT\tPATTERN\tSUPPORT\tRATIO\tCONFIDENCE\tLAST SEEN")
			for _, p := range ps.Patterns {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f%%\t%.0f%%\t%s\n", p.Kind, filepath.Base(p.Project), oneLine(p.Key, 80),
					p.Support, 100*p.Ratio, 100*p.Confidence, time.UnixMilli(p.LastSeen).Local().Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
}

func scoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "score",
		Usage:     "a score per session from its errors and repeated work, lowest first",
		ArgsUsage: "[SESSION_ID]",
		Description: `  score        ` + query.DefScore + `
  error rate   ` + query.DefErrorRate + `
  redundancy   ` + query.DefRedundancy + `
  exploration  ` + query.DefExploration + `

With a SESSION_ID (or a unique prefix of one), that session alone (whatever the window). The JSON
is an array of sessions, each with its title.

Exit codes: 0 done; 1 the session is not analysed (unknown, or not yet); 64 a bad flag; 69 no store yet.`,
		Flags: windowFlags,
		Action: func(c *cli.Context) error {
			e, f, err := analysisFilter(c)
			if err != nil {
				return err
			}
			if c.NArg() > 1 {
				return usageErr("score takes at most one session id")
			}
			id := c.Args().First()
			if id != "" {
				f.Since = time.Time{}
			}
			st, err := openAnalysis(e, c)
			if err != nil {
				return err
			}
			defer st.Close()
			if id != "" {
				ref, err := store.ResolveSession(c.Context, st.DB, id)
				if err != nil {
					return withCode(ExitFailure, err)
				}
				id = ref.ID
			}
			f.SessionID = id
			ss, err := query.Scores(c.Context, st.DB, f)
			if err != nil {
				return err
			}
			if id != "" && len(ss) == 0 {
				return withCode(ExitFailure, fmt.Errorf("session %q has no analysis: unknown, or the writer has not analysed it yet", id))
			}
			if c.Bool("json") {
				writeJSON(e.stdout, ss)
				return nil
			}
			if len(ss) == 0 {
				fmt.Fprintln(e.stdout, "no analysed session in this window")
				emptyWindowNote(c, e, st, f.Since)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tTITLE\tCLIENT\tPROJECT\tLAST\tACTIONS\tSCORE\tERRORS\tREDUNDANCY\tEXPLORATION\tFINDINGS")
			for _, s := range ss {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.0f%%\t%.0f%%\t%.0f%%\t%s\n", short(s.SessionID), titleCell(s.Title), s.Client,
					filepath.Base(s.Project), time.UnixMilli(s.LastTs).Local().Format("2006-01-02 15:04"), s.Actions, s.Score,
					100*s.ErrorRate, 100*s.Redundancy, 100*s.Exploration, findings(s))
			}
			return tw.Flush()
		},
	}
}

func findings(s query.SessionScore) string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Failures, "failed")
	add(s.StaleRereads, "stale re-reads")
	add(s.UnclassifiedRereads, "re-reads")
	add(s.RepeatedCommands, "repeats")
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// titleCell is a session title cut for a table column, "-" when it has none.
func titleCell(t string) string {
	if t == "" {
		return "-"
	}
	return oneLine(t, 40)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// The block suggest writes; everything between the markers is its own.
const (
	suggestBegin = "<!-- observer:patterns:begin — written by `observerctl suggest`; edits inside are replaced -->"
	suggestEnd   = "<!-- observer:patterns:end -->"
)

var suggestFiles = map[string]string{"claude": "CLAUDE.md", "agents": "AGENTS.md", "cursor": ".cursorrules"}

func suggestCommand() *cli.Command {
	return &cli.Command{
		Name:  "suggest",
		Usage: "write the project's high-confidence patterns and observations into CLAUDE.md, AGENTS.md or .cursorrules",
		Description: `Writes the patterns of the project (the git root of --dir) and what its past sessions taught
(observerctl memory; --no-observations leaves those out) with at least --min-confidence and
--min-support into a block between two marker lines, replacing the block when it is there and
appending it otherwise; everything outside the block is kept byte for byte. --remove takes the
block out. --dry-run prints the new file instead of writing it. --file picks claude (CLAUDE.md),
agents (AGENTS.md) or cursor (.cursorrules), or several separated by commas; by default every one
of them that exists in the project, or CLAUDE.md when none does.

Exit codes: 0 done (also when nothing changed); 1 no pattern reaches the thresholds; 64 a bad flag;
69 no store yet.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Value: ".", Usage: "a directory of the project"},
			&cli.StringFlag{Name: "file", Usage: "claude, agents or cursor (comma-separated for several)"},
			&cli.Float64Flag{Name: "min-confidence", Value: 0.6, Usage: "least confidence of a pattern written (0 to 1)"},
			&cli.IntFlag{Name: "min-support", Value: 3, Usage: "least support of a pattern written"},
			&cli.IntFlag{Name: "max", Value: 12, Usage: "most patterns written"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the new file(s), write nothing"},
			&cli.BoolFlag{Name: "remove", Usage: "take observer's block out of the file(s)"},
			&cli.BoolFlag{Name: "no-observations", Usage: "leave out what past sessions taught (observerctl memory): patterns only"},
			&cli.BoolFlag{Name: "json", Usage: "print per file what was done (written, unchanged, dry run) and the patterns written"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			minConf, minSup, maxN := c.Float64("min-confidence"), c.Int("min-support"), c.Int("max")
			if minConf < 0 || minConf > 1 {
				return usageErr("--min-confidence: between 0 and 1")
			}
			if minSup < 2 || maxN < 1 {
				return usageErr("--min-support must be at least 2 and --max at least 1")
			}
			dir, err := filepath.Abs(c.String("dir"))
			if err != nil {
				return usageErr("--dir: %v", err)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return usageErr("--dir %s: not a directory", dir)
			}
			root := project.Root(dir)
			var files []string
			if v := c.String("file"); v != "" {
				for _, k := range strings.Split(v, ",") {
					name, ok := suggestFiles[strings.TrimSpace(k)]
					if !ok {
						return usageErr("--file: claude, agents or cursor, not %q", k)
					}
					files = append(files, filepath.Join(root, name))
				}
			} else {
				for _, k := range []string{"claude", "agents", "cursor"} {
					if _, err := os.Stat(filepath.Join(root, suggestFiles[k])); err == nil {
						files = append(files, filepath.Join(root, suggestFiles[k]))
					}
				}
				if len(files) == 0 {
					files = []string{filepath.Join(root, "CLAUDE.md")}
				}
			}
			var block string
			rep := suggestReport{DryRun: c.Bool("dry-run"), Patterns: []query.Pattern{}, Files: []suggestFile{}}
			if !c.Bool("remove") {
				st, err := openAnalysis(e, c)
				if err != nil {
					return err
				}
				ps, err := query.Patterns(c.Context, st.DB, query.AnalysisQuery{Filter: query.Filter{Project: root}, Limit: 100}, "", minConf, time.Now())
				st.Close()
				if err != nil {
					return err
				}
				ps.Patterns = slices.DeleteFunc(ps.Patterns, func(p query.Pattern) bool { return p.Support < int64(minSup) })
				var obs []query.Observation
				if !c.Bool("no-observations") {
					rst, err := openReadStore(c.Context, e)
					if err != nil {
						return err
					}
					obs, err = query.Observations(c.Context, rst.DB, root, minConf, maxN, time.Now())
					rst.Close()
					if err != nil {
						return err
					}
					obs = slices.DeleteFunc(obs, func(o query.Observation) bool { return o.Support < minSup })
				}
				if len(ps.Patterns) == 0 && len(obs) == 0 {
					return withCode(ExitFailure, fmt.Errorf("no pattern or observation of %s reaches confidence %.2f and support %d (see `observerctl patterns --project %s` and `observerctl memory --project %s`)", root, minConf, minSup, root, root))
				}
				block = suggestBlock(ps.Patterns, obs, maxN)
				rep.Patterns = ps.Patterns[:min(len(ps.Patterns), maxN)]
				rep.Observations = obs
			}
			for _, path := range files {
				old, err := os.ReadFile(path)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				updated, err := replaceBlock(old, block)
				if err != nil {
					return withCode(ExitFailure, fmt.Errorf("%s: %w", path, err))
				}
				js := c.Bool("json")
				switch {
				case bytes.Equal(updated, old):
					rep.Files = append(rep.Files, suggestFile{Path: path, Action: "unchanged"})
					if !js {
						fmt.Fprintf(e.stderr, "%s: unchanged\n", path)
					}
				case c.Bool("dry-run"):
					rep.Files = append(rep.Files, suggestFile{Path: path, Action: "would write", Content: string(updated)})
					if !js {
						fmt.Fprintf(e.stdout, "--- %s (dry run, not written)\n%s", path, updated)
					}
				default:
					mode := fs.FileMode(0o644)
					if fi, err := os.Stat(path); err == nil {
						mode = fi.Mode().Perm()
					}
					if err := atomicfile.Write(path, updated, mode); err != nil {
						return err
					}
					rep.Files = append(rep.Files, suggestFile{Path: path, Action: "written"})
					if !js {
						fmt.Fprintf(e.stdout, "%s: written\n", path)
					}
				}
			}
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
			}
			return nil
		},
	}
}

// suggestReport is suggest's JSON.
type suggestReport struct {
	DryRun   bool            `json:"dry_run"`
	Patterns []query.Pattern `json:"patterns"` // those written (none with --remove)
	// Observations are the project's strong observations written (observerctl memory).
	Observations []query.Observation `json:"observations,omitempty"`
	Files        []suggestFile       `json:"files"`
}

type suggestFile struct {
	Path    string `json:"path"`
	Action  string `json:"action"`            // written, unchanged or would write
	Content string `json:"content,omitempty"` // the new file, on a dry run
}

// suggestBlock renders the patterns as instructions an agent can follow, strongest first.
func suggestBlock(ps []query.Pattern, obs []query.Observation, maxN int) string {
	slices.SortStableFunc(ps, func(a, b query.Pattern) int {
		x, y := float64(a.Support)*a.Confidence, float64(b.Support)*b.Confidence
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	var b strings.Builder
	b.WriteString(suggestBegin + "\n")
	if len(ps) > 0 {
		b.WriteString("## Habits observed in this project\n\n")
	}
	for i, p := range ps {
		if i == maxN {
			break
		}
		conf := fmt.Sprintf("%.0f%%, seen %d times", 100*p.Confidence, p.Support)
		switch p.Kind {
		case "command_pair":
			from, to, _ := strings.Cut(p.Key, " → ")
			fmt.Fprintf(&b, "- After `%s`, `%s` usually comes next (%s).\n", from, to, conf)
		case "co_edit":
			x, y, _ := strings.Cut(p.Key, " + ")
			fmt.Fprintf(&b, "- `%s` and `%s` are usually edited together: when changing one, check the other (%s).\n", x, y, conf)
		case "edit_then_test":
			fmt.Fprintf(&b, "- After editing, run the tests (%s).\n", conf)
		case "hot_file":
			fmt.Fprintf(&b, "- `%s` is read or edited in most sessions (%s).\n", p.Key, conf)
		}
	}
	if len(obs) > 0 {
		if len(ps) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("## What past sessions learned\n\n")
		for i, o := range obs {
			if i == maxN {
				break
			}
			conf := fmt.Sprintf("%.0f%%, %d sessions", 100*o.Confidence, o.Support)
			switch o.Kind {
			case query.KindTestCommand:
				fmt.Fprintf(&b, "- Run the tests with `%s` (%s).\n", o.Key, conf)
			case query.KindBuildCommand:
				fmt.Fprintf(&b, "- Build with `%s` (%s).\n", o.Key, conf)
			case query.KindFailingCommand:
				fmt.Fprintf(&b, "- `%s` has failed every time it ran: do not rely on it (%s).\n", o.Key, conf)
			case query.KindCoChange:
				x, y, _ := strings.Cut(o.Key, " + ")
				fmt.Fprintf(&b, "- `%s` and `%s` change together (%s).\n", x, y, conf)
			case query.KindChangeArea:
				fmt.Fprintf(&b, "- Most changes land in `%s` (%s).\n", o.Key, conf)
			default:
				fmt.Fprintf(&b, "- %s (%s).\n", o.Text, conf)
			}
		}
	}
	b.WriteString(suggestEnd + "\n")
	return b.String()
}

// replaceBlock puts block in place of observer's block in old, or appends it (after a blank line);
// an empty block removes observer's block. Text outside the block is kept as it is.
func replaceBlock(old []byte, block string) ([]byte, error) {
	s := string(old)
	i := strings.Index(s, "<!-- observer:patterns:begin")
	if i < 0 {
		if block == "" {
			return old, nil
		}
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" {
			s += "\n"
		}
		return []byte(s + block), nil
	}
	j := strings.Index(s[i:], suggestEnd)
	if j < 0 {
		return nil, errors.New("observer's block has a begin marker but no end marker; fix the file by hand")
	}
	end := i + j + len(suggestEnd)
	if end < len(s) && s[end] == '\n' {
		end++
	}
	if block == "" && i >= 1 && s[:i] != "" && strings.HasSuffix(s[:i], "\n\n") && end == len(s) {
		i-- // the blank line written before an appended block goes with it
	}
	return []byte(s[:i] + block + s[end:]), nil
}
