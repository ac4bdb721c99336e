package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/budget"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
)

// statusPayload is what Claude Code writes on a status line command's stdin (the fields used).
type statusPayload struct {
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	Model     struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string `json:"current_dir"`
		ProjectDir string `json:"project_dir"`
	} `json:"workspace"`
	Cost struct {
		TotalCostUSD float64 `json:"total_cost_usd"`
	} `json:"cost"`
}

// statusLine is the JSON of `observerctl statusline --json`.
type statusLine struct {
	Line           string          `json:"line"`
	SessionID      string          `json:"session_id,omitempty"`
	SessionCostUSD float64         `json:"session_cost_usd"`
	SessionSource  string          `json:"session_source,omitempty"` // observer, or claude-code: its own estimate
	TodayCostUSD   float64         `json:"today_cost_usd"`
	Block          *query.Block    `json:"block"`          // Claude Code's active block (client "claude-code"), or null
	BudgetPercent  float64         `json:"budget_percent"` // the fullest budget that applies, 0 without one
	Budgets        []budget.Status `json:"budgets"`
	// Limits are Anthropic's own figures of the plan's 5-hour and weekly windows (the status line
	// is Claude Code's), the latest seen, when they still hold; [] when none is known.
	Limits []query.Limit `json:"limits"`
	// DiskFull says the home's disk is full ("disk full: 0 B free on ..."): what is spent meanwhile
	// is not recorded, and the line starts with a marker.
	DiskFull string `json:"disk_full,omitempty"`
}

// diskFullMarker starts the status line while the home's disk is full.
const diskFullMarker = "⚠ disk full"

func statuslineCommand() *cli.Command {
	return &cli.Command{
		Name:  "statusline",
		Usage: "one line for Claude Code's status bar: session, today, the 5-hour block, budget",
		Description: `Prints one line such as
  observer · $1.23 session · $8.90 today · block $4.10 (2h13m left, $1.9/h) · budget 45%
for Claude Code's status line. Claude Code runs the command after each message with a JSON
object on stdin (session_id, model, workspace.current_dir and project_dir, cost, ...). Set it up
in ~/.claude/settings.json:
  "statusLine": {"type": "command", "command": "observerctl statusline"}

session: this session's cost as observer counts it (each turn once, proxy figures first); Claude
Code's own estimate while observer has no turn of it yet. today: every client, since local
midnight. block: Claude Code's active 5-hour billing block (see ` + "`observerctl blocks`" + `; other
clients' turns have blocks of their own), the time left and its burn rate. budget: the fullest
of the daily, monthly and current project's [budget] limits. Parts without data are left out.
An empty stdin (</dev/null) gives the line without a session.

It reads the store read-only from the hourly rollups (no bus, no writer needed) and answers in a
few milliseconds on large stores. A status bar must not show errors: without a store, with bad
input or on any failure it prints a short line and exits 0. --check and --json are strict instead.

Exit codes: 0 done (always, without --check or --json); 64 a bad flag; 65 (strict) stdin is not
the JSON object Claude Code sends; 69 (strict) no store yet; 1 (strict) the store could not be read.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the figures as JSON (strict: errors exit non-zero)"},
			&cli.BoolFlag{Name: "check", Usage: "print the line, but report errors with an exit code"},
		},
		Action: func(c *cli.Context) error {
			strict := c.Bool("json") || c.Bool("check")
			out, err := runStatusline(c, strict)
			if err != nil {
				if strict {
					return err
				}
				fmt.Fprintln(c.App.Writer, out)
				return nil
			}
			return nil
		},
	}
}

// runStatusline prints the line (or the JSON). On an error it returns the short line to print
// instead, and the error.
func runStatusline(c *cli.Context, strict bool) (string, error) {
	p, perr := readStatusPayload(c.App.Reader)
	if perr != nil && strict {
		return "", withCode(ExitBadInput, perr)
	}
	e, err := load(c)
	if err != nil {
		return "observer · config error", err
	}
	if _, err := os.Stat(e.cfg.StorePath()); err != nil {
		return "observer · no data yet", withCode(ExitUnavailable, fmt.Errorf("no store at %s yet: start observer (`observerctl up`) or ingest history (`observerctl scan`)", e.cfg.StorePath()))
	}
	st, err := store.OpenReader(c.Context, e.cfg.StorePath())
	if err != nil {
		return "observer · store unavailable", withCode(ExitFailure, err)
	}
	defer st.Close()
	sl, err := statusFigures(c.Context, st, e.cfg.Budget, p, time.Now())
	if err != nil {
		return "observer · store unavailable", err
	}
	if full := bus.DiskFull(e.cfg.Home); full != "" {
		sl.DiskFull = full
		sl.Line = diskFullMarker + " · " + sl.Line
	}
	if c.Bool("json") {
		writeJSON(e.stdout, sl)
	} else {
		fmt.Fprintln(e.stdout, sl.Line)
	}
	return "", nil
}

// readStatusPayload decodes the first JSON value on r, without waiting for the end of the input.
// A terminal gives none; an empty input is an empty payload.
func readStatusPayload(r io.Reader) (statusPayload, error) {
	var p statusPayload
	if f, ok := r.(*os.File); ok {
		if isTerminal(f) {
			return p, errors.New("stdin is a terminal: Claude Code pipes a JSON object to the status line command")
		}
		f.SetReadDeadline(time.Now().Add(2 * time.Second)) // a pipe nobody writes to; ignored where unsupported
	}
	err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&p)
	if errors.Is(err, io.EOF) {
		return statusPayload{}, nil // nothing at all (</dev/null): the figures without a session
	}
	if err != nil {
		return statusPayload{}, fmt.Errorf("stdin: want the JSON object Claude Code sends a status line command: %w", err)
	}
	return p, nil
}

// statusFigures computes the line's figures at now.
func statusFigures(ctx context.Context, st *store.Store, b config.Budget, p statusPayload, now time.Time) (*statusLine, error) {
	sl := &statusLine{SessionID: p.SessionID, Budgets: []budget.Status{}, Limits: []query.Limit{}}
	parts := []string{"observer"}
	if p.SessionID != "" {
		spent, err := query.Spent(ctx, st.DB, query.CostQuery{Filter: query.Filter{SessionID: p.SessionID}})
		if err != nil {
			return nil, err
		}
		sl.SessionCostUSD, sl.SessionSource = spent, "observer"
		if spent == 0 && p.Cost.TotalCostUSD > 0 {
			sl.SessionCostUSD, sl.SessionSource = p.Cost.TotalCostUSD, claudecode.Client // observer has not seen it yet
		}
		parts = append(parts, fmt.Sprintf("%s session", usd(sl.SessionCostUSD)))
	}
	// The budgets that apply: daily, monthly and the current project's.
	applied := config.Budget{Daily: b.Daily, Monthly: b.Monthly}
	if proj := budgetProject(b, p); proj != "" {
		applied.Projects = map[string]float64{proj: b.Projects[proj]}
	}
	var err error
	if sl.Budgets, err = budget.Check(ctx, st.DB, applied, now, time.Local); err != nil {
		return nil, err
	}
	today := -1.0
	for _, s := range sl.Budgets {
		if s.Scope == budget.ScopeDay {
			today = s.SpentUSD
		}
		sl.BudgetPercent = max(sl.BudgetPercent, s.Percent)
	}
	if today < 0 {
		y, m, d := now.Date()
		if today, err = query.Spent(ctx, st.DB, query.CostQuery{Filter: query.Filter{Since: time.Date(y, m, d, 0, 0, 0, 0, time.Local)}}); err != nil {
			return nil, err
		}
	}
	sl.TodayCostUSD = today
	parts = append(parts, fmt.Sprintf("%s today", usd(today)))
	// Claude Code runs the status line: its own block, never another client's (each has its own).
	if sl.Block, err = query.ActiveBlock(ctx, st.DB, claudecode.Client, now); err != nil {
		return nil, err
	}
	if blk := sl.Block; blk != nil {
		detail := span(time.Duration(blk.Remaining)*time.Minute) + " left"
		if blk.Burn != nil {
			detail += ", " + usd(blk.Burn.CostPerHourUSD) + "/h"
		}
		parts = append(parts, fmt.Sprintf("block %s (%s)", usd(blk.CostUSD), detail))
	}
	if len(sl.Budgets) > 0 {
		parts = append(parts, fmt.Sprintf("budget %.0f%%", sl.BudgetPercent))
	}
	limits, err := query.Limits(ctx, st.DB, now)
	if err != nil {
		return nil, err
	}
	for _, l := range limits {
		if l.Provider != "anthropic" || l.Member != "" || l.Reset || l.Window != "5h" && l.Window != "7d" {
			continue
		}
		sl.Limits = append(sl.Limits, l)
		part := map[string]string{"5h": "5h", "7d": "week"}[l.Window] + " " + trimPct(l.UsedPercent) + "%"
		if !l.ResetsAt.IsZero() {
			part += " (resets " + localTime(l.ResetsAt, now) + ")"
		}
		parts = append(parts, part)
	}
	sl.Line = strings.Join(parts, " · ")
	return sl, nil
}

// budgetProject is the [budget] projects key that holds the session's directory (the longest,
// when several do), or "".
func budgetProject(b config.Budget, p statusPayload) string {
	dir := firstNonEmptyStr(p.Workspace.ProjectDir, firstNonEmptyStr(p.Workspace.CurrentDir, p.Cwd))
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	best, bestLen := "", 0
	for key, limit := range b.Projects {
		path := budget.ProjectPath(key)
		if limit > 0 && (dir == path || strings.HasPrefix(dir, path+string(filepath.Separator))) && len(path) > bestLen {
			best, bestLen = key, len(path)
		}
	}
	return best
}

// usd formats dollars for the status bar: cents, or tenths from $10 up.
func usd(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("$%.1f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
