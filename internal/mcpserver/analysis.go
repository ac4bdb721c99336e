package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/query"
)

type hit struct {
	act
	Snip string `json:"snip"`
}

type searchAnswer struct {
	Hits []hit  `json:"hits"`
	More string `json:"more,omitempty"` // set when the search stopped at maxSearchScan
}

// maxSearchScan bounds the matching outputs (of all projects, newest first) a project-scoped
// search examines. Each costs two index lookups to learn its project, so a word common in other
// projects and rare in this one would otherwise walk tens of thousands of them (60 ms and more on
// the benchmark store); past the bound the answer says so, and more words narrow the search.
const maxSearchScan = 1000

// search runs the full-text index over tool outputs newest first (query.SearchOutputs), keeping
// the project's, among the newest maxSearchScan matches, each with a snippet marked in Go (see
// markTerms: FTS5's snippet() is quadratic in the matches). The index is built by the writer in
// batches, so the last seconds of output may not be searchable yet.
func (s *Server) search(ctx context.Context, db *dbh, in searchArgs) (any, error) {
	switch strings.TrimSpace(in.In) {
	case "", "outputs":
	case "chat":
		return s.searchConversations(ctx, db, in)
	default:
		return nil, fmt.Errorf("in %q: outputs (the default) or chat", in.In)
	}
	fq, terms, err := parseQuery(in.Query)
	if err != nil {
		return nil, err
	}
	if fq == "" {
		return nil, errors.New("query is empty")
	}
	n := limit(in.Limit, defLimit)
	q := query.OutputSearch{Match: fq, AllProjects: strings.TrimSpace(in.Project) == "*", Scan: maxSearchScan, Prefix: maxSnipScan, Limit: n}
	if !q.AllProjects {
		if q.Project, err = s.projectOf(ctx, db, in.Project); err != nil {
			return nil, err
		}
	}
	found, bound, err := query.SearchOutputs(ctx, db, q)
	if err != nil {
		return nil, err
	}
	now := s.now()
	ans := searchAnswer{Hits: []hit{}}
	for _, f := range found {
		var h hit
		h.ID, h.Type = f.ID, f.Type
		h.Ago, h.Sess, h.Target = ago(now, f.TS), short(f.SessionID), clip(rel(f.Project, f.Target), 120)
		marks, _ := markTerms(f.Output, terms)
		h.Snip = strings.Join(strings.Fields(snippet(f.Output, marks, snipBytes)), " ")
		ans.Hits = append(ans.Hits, h)
	}
	stopped := bound > 0 && len(ans.Hits) < n
	if stopped {
		ans.More = "searched the newest " + strconv.Itoa(maxSearchScan) + " matching outputs of all projects; add words to narrow"
	}
	if len(ans.Hits) == 0 && !stopped {
		where := "in " + q.Project
		if q.Project == "" {
			where = "in any project"
		}
		return nil, notice("no tool output matches " + fq + " " + where)
	}
	return ans, nil
}

type pattern struct {
	Kind   string  `json:"kind"`
	Key    string  `json:"key"`
	Detail string  `json:"detail,omitempty"`
	Conf   float64 `json:"conf"`
	N      int     `json:"n"`
	Ago    string  `json:"ago"`
}

type fileUse struct {
	Path  string `json:"path"`
	N     int    `json:"n"`
	Edits int    `json:"edits"`
}

type cmdUse struct {
	Cmd   string `json:"cmd"`
	N     int    `json:"n"`
	Fails int    `json:"fails"`
}

type patternsAnswer struct {
	Project  string    `json:"project"`
	Patterns []pattern `json:"patterns,omitempty"` // from the patterns table, when an analysis filled it
	Days     int       `json:"days,omitempty"`     // the window the lists below are derived from
	Files    []fileUse `json:"files,omitempty"`    // most read, edited or written
	Cmds     []cmdUse  `json:"cmds,omitempty"`     // most run
	Failing  []cmdUse  `json:"failing,omitempty"`  // most failed
}

// patterns answers from the patterns table when it has rows for the project (query.StoredPatterns),
// else derives the project's habits from its actions of the last days (query.ProjectHabits;
// default 7: a month of a busy project is 40 ms of grouping on the benchmark store, a week under
// 10).
func (s *Server) patterns(ctx context.Context, db *dbh, in patternArgs) (any, error) {
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	n := limit(in.Limit, 8)
	now := s.now()
	ans := patternsAnswer{Project: proj}
	stored, err := query.StoredPatterns(ctx, db, proj, n)
	if err != nil {
		return nil, err
	}
	for _, sp := range stored {
		ans.Patterns = append(ans.Patterns, pattern{Kind: sp.Kind, Key: sp.Key, Detail: clip(sp.Detail, 200), Conf: sp.Ratio,
			N: int(sp.Support), Ago: ago(now, sp.LastSeen)})
	}
	if len(ans.Patterns) > 0 {
		return ans, nil
	}

	ans.Days = daysOf(in.Days)
	since := now - int64(ans.Days)*86400000
	h, err := query.ProjectHabits(ctx, db, proj, since, n)
	if err != nil {
		return nil, err
	}
	for _, f := range h.Files {
		ans.Files = append(ans.Files, fileUse{Path: clip(rel(proj, f.Path), 160), N: f.N, Edits: f.Edits})
	}
	for _, c := range h.Cmds {
		ans.Cmds = append(ans.Cmds, cmdUse{Cmd: clip(c.Cmd, 120), N: c.N, Fails: c.Fails})
	}
	for _, c := range h.Failing {
		ans.Failing = append(ans.Failing, cmdUse{Cmd: clip(c.Cmd, 120), N: c.N, Fails: c.Fails})
	}
	if len(ans.Files) == 0 && len(ans.Cmds) == 0 {
		return nil, notice("nothing recorded in " + proj + " in the last " + strconv.Itoa(ans.Days) + " days")
	}
	return ans, nil
}

// maxDays caps a days argument (the answer says the days it covers): a window is a range of
// the project's index, and a larger number would overflow the milliseconds it is counted in.
const maxDays = 366

// daysOf returns a days argument: 7 by default, at most maxDays.
func daysOf(n int) int {
	switch {
	case n <= 0:
		return 7
	case n > maxDays:
		return maxDays
	}
	return n
}

// costFig is a cost summary, in query.Cost's figures, shortened for the agent.
type costFig struct {
	USD        float64     `json:"usd"`
	Turns      int64       `json:"turns"`
	In         int64       `json:"in"`
	Out        int64       `json:"out"`
	CacheRead  int64       `json:"cache_read"`
	CacheWrite int64       `json:"cache_write"`
	Proxy      int64       `json:"proxy,omitempty"`  // turns measured by the proxy (exact); the rest from transcripts
	Models     []modelCost `json:"models,omitempty"` // when more than one model
}

type modelCost struct {
	Model string  `json:"model"`
	USD   float64 `json:"usd"`
	Turns int64   `json:"turns"`
}

// usd rounds to a hundredth of a cent.
func usd(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// scopedCost sums a scoped cost's models (query.SessionSpend, query.ProjectSpend: every model
// turn once, as query.Cost counts them, TestScopedCost_EqualsCostRun checks) into a costFig.
func scopedCost(models []query.ModelSpend, err error) (costFig, error) {
	var c costFig
	if err != nil {
		return c, err
	}
	for _, m := range models {
		c.USD += m.CostUSD
		c.Turns += m.Turns
		c.In, c.Out, c.CacheRead, c.CacheWrite, c.Proxy = c.In+m.InputTokens, c.Out+m.OutputTokens, c.CacheRead+m.CacheReadTokens,
			c.CacheWrite+m.CacheCreationTokens, c.Proxy+m.ProxyTurns
		c.Models = append(c.Models, modelCost{Model: m.Model, USD: usd(m.CostUSD), Turns: m.Turns})
	}
	c.USD = usd(c.USD)
	if len(c.Models) < 2 {
		c.Models = nil
	}
	return c, nil
}

// sessionCost is one session's cost, all of it.
func sessionCost(ctx context.Context, db *dbh, x session) (costFig, error) {
	return scopedCost(query.SessionSpend(ctx, db, x.ID))
}

// projectCost is the cost of the project's sessions since since (ms): a turn counts for the
// project of its session, which also places the proxy's turns (the proxy does not know the
// project).
func projectCost(ctx context.Context, db *dbh, proj string, since int64) (costFig, error) {
	return scopedCost(query.ProjectSpend(ctx, db, proj, since))
}

type costAnswer struct {
	Sess    string `json:"sess,omitempty"`
	Project string `json:"project,omitempty"`
	Days    int    `json:"days,omitempty"`
	costFig
}

// costSummary reports a session's cost when one is named, else the project's over the last days.
func (s *Server) costSummary(ctx context.Context, db *dbh, in costArgs) (any, error) {
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		c, err := sessionCost(ctx, db, x)
		if err != nil {
			return nil, err
		}
		if c.Turns == 0 {
			return nil, notice("no model turn recorded for session " + x.ID)
		}
		return costAnswer{Sess: x.ID, costFig: c}, nil
	}
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	days := daysOf(in.Days)
	c, err := projectCost(ctx, db, proj, s.opts.Now().Add(-time.Duration(days)*24*time.Hour).UnixMilli())
	if err != nil {
		return nil, err
	}
	if c.Turns == 0 {
		return nil, notice("no model turn recorded for " + proj + " in the last " + strconv.Itoa(days) + " days")
	}
	return costAnswer{Project: proj, Days: days, costFig: c}, nil
}

type redundant struct {
	Target string `json:"target"`
	N      int    `json:"n"`     // redundant repeats
	Bytes  int64  `json:"bytes"` // their output
}

type redundancyAnswer struct {
	Sess   string      `json:"sess"`
	Reads  []redundant `json:"reads"`
	Cmds   []redundant `json:"cmds"`
	Bytes  int64       `json:"bytes"`      // output of every redundant repeat
	Tokens int64       `json:"tokens_est"` // bytes/4
}

// maxRedundancyActions bounds the actions a report reads: the newest of a very long session.
const maxRedundancyActions = 20000

// redundancy replays a session's actions in order and counts:
//   - a read of a file the session had read before, unchanged since: same content hash when both
//     reads were hashed (live sessions), else no edit or write of the file and no command at all
//     in between (a command may have changed it);
//   - a command run again with no edit or write of any file since its previous run, whether
//     either run failed or not (rerunning a failed command unchanged repeats its failure).
func (s *Server) redundancy(ctx context.Context, db *dbh, in listArgs) (any, error) {
	x, err := s.sessionOf(ctx, db, in.Session, in.Project)
	if err != nil {
		return nil, err
	}
	steps, err := query.ReplaySteps(ctx, db, x.ID, maxRedundancyActions)
	if err != nil {
		return nil, err
	}

	type fileSeen struct {
		hash        string
		writes, cmd int // edit and command counters when last read
	}
	files := map[string]fileSeen{}
	writesOf := map[string]int{} // edits and writes per file so far
	lastRun := map[string]int{}  // total edits when a command last ran
	cmds, edits := 0, 0
	reads, reruns := map[string]*redundant{}, map[string]*redundant{}
	count := func(m map[string]*redundant, target string, size int64) {
		r := m[target]
		if r == nil {
			r = &redundant{Target: rel(x.Project, target)}
			m[target] = r
		}
		r.N++
		r.Bytes += size
	}
	for i := len(steps) - 1; i >= 0; i-- {
		st := steps[i]
		if st.Target == "" || !st.OK && st.Type != "run_command" {
			continue // a failed read saw nothing, a failed edit changed nothing; a failed command still ran
		}
		switch st.Type {
		case "read_file":
			if f, seen := files[st.Target]; seen {
				same := f.hash == st.Hash
				if f.hash == "" || st.Hash == "" {
					same = f.writes == writesOf[st.Target] && f.cmd == cmds
				}
				if same {
					count(reads, st.Target, st.Size)
				}
			}
			files[st.Target] = fileSeen{hash: st.Hash, writes: writesOf[st.Target], cmd: cmds}
		case "edit_file", "write_file":
			writesOf[st.Target]++
			edits++
		case "run_command":
			if at, ran := lastRun[st.Target]; ran && at == edits {
				count(reruns, st.Target, st.Size)
			}
			lastRun[st.Target] = edits
			cmds++
		}
	}
	ans := redundancyAnswer{Sess: x.ID}
	n := limit(in.Limit, defLimit)
	ans.Reads, ans.Bytes = topRedundant(reads, n, 160, ans.Bytes)
	ans.Cmds, ans.Bytes = topRedundant(reruns, n, 120, ans.Bytes)
	ans.Tokens = ans.Bytes / 4
	return ans, nil
}

// topRedundant sorts by bytes, keeps n, and adds every entry's bytes to total.
func topRedundant(m map[string]*redundant, n, width int, total int64) ([]redundant, int64) {
	out := make([]redundant, 0, len(m))
	for _, r := range m {
		total += r.Bytes
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Target < out[j].Target
	})
	if len(out) > n {
		out = out[:n]
	}
	for i := range out {
		out[i].Target = clip(out[i].Target, width)
	}
	return out, total
}
