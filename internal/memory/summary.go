// Package memory is observer's session memory: an account of each session epoch, and what a
// project's sessions have taught its agents.
//
// Summaries. A session's epoch (a new one starts at each compaction) is summarized when it ends:
// its session compacted again, or went idle or was finalized (a Stop or SessionEnd hook finalizes
// it). The default summary is extractive and deterministic, built from the stored records alone:
// the goal (the epoch's first prompt), the files read and changed, the commands with their
// outcomes, the failures and how they ended (a later run of the same command or edit of the same
// file that succeeded), the subagents, and the epoch's tokens and cost (each turn once, as
// observerctl cost counts them). The same records always give the same summary, byte for byte.
// A summary is written again when its epoch gets more records (an idle session resumed).
//
// Observations. Per project, facts learned from its sessions (observe.go): the test and build
// commands that succeed, commands that always fail, files that change together, where the
// changes happen. Each has its evidence (sessions and action event ids), a support (the sessions
// that confirm it), contradictions (those that went against it) and a confidence that grows with
// support and fades when contradicted or unseen.
//
// The writer runs Step off its insert path (internal/writer); observerctl summary, memory and
// suggest, the dashboard and the MCP tool get_project_memory read the tables (store migration
// 0016) through the read model, internal/query, which holds the rows' types.
package memory

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// Summary is the extractive account of one session epoch (stored as facts, rendered as its Text),
// with the files, commands and failures it lists: internal/query's rows, which it reads back.
type (
	Summary = query.Summary
	File    = query.File
	Cmd     = query.Cmd
	Failure = query.Failure
)

// Window is an epoch's time range: [From, To), To 0 for open.
type Window struct {
	Epoch    int
	From, To int64
}

// Windows returns a session's epochs with their time ranges, from its session events: epoch k
// starts at its first session event with epoch k. A session with no epoch events has epoch 0.
func Windows(ctx context.Context, db *sql.DB, client, sessionID string, current int) ([]Window, error) {
	rows, err := db.QueryContext(ctx, `SELECT epoch, min(ts) FROM session_events
		WHERE client = ? AND session_id = ? AND epoch > 0 GROUP BY epoch ORDER BY epoch`, client, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	starts := map[int]int64{}
	for rows.Next() {
		var e int
		var ts int64
		if err := rows.Scan(&e, &ts); err != nil {
			return nil, err
		}
		starts[e] = ts
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Every epoch up to the current one gets a window, so that each can be summarized once. One
	// the watcher never reported starts where the one before it does (that one is then empty):
	// its records are the newer epoch's.
	ws := []Window{{Epoch: 0, From: math.MinInt64}}
	for e := 1; e <= current; e++ {
		from, ok := starts[e]
		if !ok || from < ws[len(ws)-1].From {
			from = ws[len(ws)-1].From
		}
		ws[len(ws)-1].To = from
		ws = append(ws, Window{Epoch: e, From: from})
	}
	return ws, nil
}

type act struct {
	id        string
	ts        int64
	typ       string
	tool      string
	target    string
	success   sql.NullBool
	errText   string
	agent     string
	sidechain bool
}

// Summarize builds the extractive summary of one epoch of a session.
func Summarize(ctx context.Context, db *sql.DB, client, sessionID, project string, w Window, endedBy string) (Summary, error) {
	return summarize(ctx, db, &store.SpanTurns{DB: db}, client, sessionID, project, w, endedBy)
}

// summarize is Summarize with the epoch's cost read through cost (a Memory keeps one for its
// reading connection).
func summarize(ctx context.Context, db *sql.DB, cost *store.SpanTurns, client, sessionID, project string, w Window, endedBy string) (Summary, error) {
	s := Summary{Client: client, SessionID: sessionID, Epoch: w.Epoch, Project: project, EndedBy: endedBy}
	to := w.To
	if to == 0 {
		to = math.MaxInt64
	}
	rows, err := db.QueryContext(ctx, `SELECT event_id, ts, type, tool, target, success, error, agent_id, sidechain
		FROM actions WHERE client = ? AND session_id = ? AND ts >= ? AND ts < ? ORDER BY ts, id`, client, sessionID, w.From, to)
	if err != nil {
		return s, err
	}
	var acts []act
	for rows.Next() {
		var a act
		if err := rows.Scan(&a.id, &a.ts, &a.typ, &a.tool, &a.target, &a.success, &a.errText, &a.agent, &a.sidechain); err != nil {
			rows.Close()
			return s, err
		}
		acts = append(acts, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, err
	}
	s.Actions = len(acts)
	if len(acts) > 0 {
		s.FirstTS, s.LastTS = acts[0].ts, acts[len(acts)-1].ts
	}
	reads, changes := map[string]int{}, map[string]int{}
	cmds := map[string]*Cmd{}
	var cmdOrder []string
	type failKey struct{ typ, key string }
	fails := map[failKey]*Failure{}
	var failOrder []failKey
	lastOK := map[failKey]int64{} // the last success of each key
	lastFail := map[failKey]int64{}
	for _, a := range acts {
		key := a.target
		switch a.typ {
		case string(event.ActionUserPrompt):
			if a.agent != "" || a.sidechain {
				continue
			}
			if t, ok := event.CleanTitle(a.target); ok {
				s.Prompts++
				if s.Goal == "" {
					s.Goal, s.GoalID = clip(t, 240), a.id
				}
			}
			continue
		case string(event.ActionReadFile):
			reads[a.target]++
		case string(event.ActionEditFile), string(event.ActionWriteFile):
			changes[a.target]++
		case string(event.ActionRunCommand):
			key = normCommand(a.target)
			c := cmds[key]
			if c == nil {
				c = &Cmd{Command: key}
				cmds[key] = c
				cmdOrder = append(cmdOrder, key)
			}
			c.Runs++
			if a.success.Valid {
				ok := a.success.Bool
				c.LastOK = &ok
				if !ok {
					c.Failed++
				}
			}
			c.LastID = a.id
		case string(event.ActionSpawnSubagent):
			s.Subagents++
		}
		if !a.success.Valid || key == "" {
			continue
		}
		k := failKey{a.typ, key}
		if a.success.Bool {
			lastOK[k] = a.ts
			continue
		}
		f := fails[k]
		if f == nil {
			f = &Failure{What: describe(a.typ, a.tool, key)}
			fails[k] = f
			failOrder = append(failOrder, k)
		}
		f.Count++
		f.EventID, f.Error = a.id, clip(firstLine(a.errText), 160)
		lastFail[k] = a.ts
	}
	s.Read, s.ReadN = topFiles(reads, 8), len(reads)
	s.Changed = topFiles(changes, 12)
	for _, k := range cmdOrder {
		s.Commands = append(s.Commands, *cmds[k])
	}
	slices.SortStableFunc(s.Commands, func(a, b Cmd) int { return cmp.Compare(b.Runs, a.Runs) })
	if len(s.Commands) > 10 {
		s.Commands = s.Commands[:10]
	}
	for _, k := range failOrder {
		f := fails[k]
		if ok, seen := lastOK[k]; seen && ok > lastFail[k] {
			f.Resolved, f.How = true, "then succeeded"
		} else {
			f.How = "not resolved by the end"
		}
		s.Failures = append(s.Failures, *f)
	}
	if len(s.Failures) > 10 {
		s.Failures = s.Failures[:10]
	}
	if err := epochCost(ctx, cost, &s, w.From, to); err != nil {
		return s, err
	}
	s.Outcome = outcome(s, acts)
	return s, nil
}

// epochCost sums the epoch's model turns into s, each once (store.SpanTurns).
func epochCost(ctx context.Context, cost *store.SpanTurns, s *Summary, from, to int64) error {
	var models string
	err := cost.Row(ctx, s.Client, s.SessionID, from, to).Scan(&s.Turns, &s.Tokens, &s.CostUSD, &models)
	if err != nil {
		return fmt.Errorf("epoch cost: %w", err)
	}
	for _, m := range strings.Split(models, ",") {
		if m != "" {
			s.Models = append(s.Models, m)
		}
	}
	slices.Sort(s.Models)
	s.CostUSD = math.Round(s.CostUSD*1e6) / 1e6
	return nil
}

func outcome(s Summary, acts []act) string {
	end := map[string]string{"compaction": "compacted", "idle": "went idle", "finalized": "ended"}[s.EndedBy]
	if end == "" {
		end = "ended"
	}
	// The last command with a known result says where the work stood.
	for i := len(acts) - 1; i >= 0; i-- {
		a := acts[i]
		if a.typ != string(event.ActionRunCommand) || !a.success.Valid {
			continue
		}
		if a.success.Bool {
			return fmt.Sprintf("%s after `%s` succeeded", end, clip(normCommand(a.target), 80))
		}
		return fmt.Sprintf("%s after `%s` failed", end, clip(normCommand(a.target), 80))
	}
	if len(s.Changed) > 0 {
		return fmt.Sprintf("%s after changing %d file(s), with no command run after", end, len(s.Changed))
	}
	return end
}

func describe(typ, tool, key string) string {
	switch typ {
	case string(event.ActionRunCommand):
		return fmt.Sprintf("`%s`", clip(key, 80))
	case string(event.ActionEditFile):
		return "editing " + clip(key, 120)
	case string(event.ActionWriteFile):
		return "writing " + clip(key, 120)
	case string(event.ActionReadFile):
		return "reading " + clip(key, 120)
	}
	if tool != "" {
		return fmt.Sprintf("%s %s", tool, clip(key, 80))
	}
	return fmt.Sprintf("%s %s", typ, clip(key, 80))
}

func topFiles(m map[string]int, n int) []File {
	out := make([]File, 0, len(m))
	for p, c := range m {
		if p != "" {
			out = append(out, File{Path: p, Count: c})
		}
	}
	slices.SortFunc(out, func(a, b File) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Path, b.Path))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// normCommand is a command line on one line, spaces collapsed, at most 200 bytes.
func normCommand(c string) string { return clip(strings.Join(strings.Fields(c), " "), 200) }

// commandKind is "test", "build" or "".
func commandKind(c string) string {
	if analysis.IsTestCommand(c) {
		return "test"
	}
	if buildsCode(c) {
		return "build"
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// clip cuts s to at most n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 1
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
