// Package analysis turns stored actions into answers: work the agents did twice (stale re-reads,
// repeated commands, files several clients touched), habits (patterns with a confidence that
// decays when they stop being seen) and a score per session.
//
// The writer keeps it current: each batch marks the sessions whose actions changed
// (analysis_dirty, in the batch's transaction) and the writer's analysis loop (Analyzer.Step)
// recomputes those sessions from their actions, then the patterns of their projects, into the
// tables of migration 0006. The read model (internal/query: Discover, Patterns, Scores) reads
// those tables for the dashboard and `observerctl discover|patterns|score|suggest`, so an answer
// costs a few thousand rows at most whatever the history's size; the findings' and the score's
// definitions are there (query.DefStaleReread, ...).
//
// Windows select sessions: a session counts in a window when it acted in it (its last action is
// inside), and then with all its findings, since a re-read or a repeat is a property of the session.
package analysis

import (
	"slices"
	"strings"

	"github.com/observerhq/observer/internal/query"
)

// Action is what the analysis reads of one action, in time order within a session.
type Action struct {
	Ts        int64
	Project   string
	Type      string
	Target    string
	AgentID   string
	Freshness string
	Success   *bool
}

// Reread, Repeat and Session are the rows the analysis writes and internal/query reads back.
type (
	Reread  = query.Reread
	Repeat  = query.Repeat
	Session = query.SessionScore
)

// isFile reports whether an action type touches a file by its target.
func isFile(typ string) bool { return typ == "read_file" || typ == "edit_file" || typ == "write_file" }

// AnalyseSession computes a session's findings from its actions in time order.
func AnalyseSession(client, sessionID string, acts []Action) (Session, []Reread, []Repeat) {
	s := Session{Client: client, SessionID: sessionID}
	type readAgg struct {
		r      Reread
		agents map[string]bool
	}
	reads := map[string]*readAgg{}
	var readOrder []string
	repeats := map[string]*Repeat{}
	var repOrder []string
	lastRun := map[string]int{} // command → the session's edit count when it last ran
	edits := 0
	files := map[string]bool{}
	agents := map[string]bool{}
	projects := map[string]int{}
	for i, a := range acts {
		if i == 0 || a.Ts < s.FirstTs {
			s.FirstTs = a.Ts
		}
		s.LastTs = max(s.LastTs, a.Ts)
		s.Actions++
		agents[a.AgentID] = true
		if a.Project != "" {
			projects[a.Project]++
		}
		if a.Success != nil {
			s.Completed++
			if !*a.Success {
				s.Failures++
			}
		}
		if isFile(a.Type) && a.Target != "" {
			files[a.Target] = true
		}
		switch {
		case a.Type == "read_file":
			s.Reads++
			if a.Target == "" {
				continue
			}
			g := reads[a.Target]
			if g == nil {
				g = &readAgg{r: Reread{Client: client, SessionID: sessionID, Project: a.Project, Target: a.Target},
					agents: map[string]bool{}}
				reads[a.Target] = g
				readOrder = append(readOrder, a.Target)
			}
			g.r.Reads++
			g.r.LastTs = max(g.r.LastTs, a.Ts)
			g.agents[a.AgentID] = true
			switch {
			case a.Freshness == "stale" || a.Freshness == "changed_elsewhere":
				g.r.Stale++
			case a.Freshness == "" && g.r.Reads > 1:
				g.r.Unclassified++
			}
		case a.Type == "edit_file" || a.Type == "write_file":
			s.Edits++
			edits++
		case a.Type == "run_command":
			s.Commands++
			if a.Target == "" {
				continue
			}
			r := repeats[a.Target]
			if r == nil {
				r = &Repeat{Client: client, SessionID: sessionID, Project: a.Project, Command: a.Target}
				repeats[a.Target] = r
				repOrder = append(repOrder, a.Target)
			}
			r.Runs++
			if e, seen := lastRun[a.Target]; seen && e == edits {
				r.Repeats++
				r.LastTs = a.Ts
			}
			lastRun[a.Target] = edits
		case strings.HasPrefix(a.Type, "search_") || strings.HasPrefix(a.Type, "web_"):
			s.Searches++
		}
	}
	// The session's project is the one most of its actions name (ties: the greater path).
	best := -1
	for p, n := range projects {
		if n > best || (n == best && p > s.Project) {
			s.Project, best = p, n
		}
	}
	s.Files, s.Agents = int64(len(files)), int64(len(agents))
	var rr []Reread
	for _, t := range readOrder {
		g := reads[t]
		g.r.Agents = int64(len(g.agents))
		if g.r.Stale == 0 && g.r.Unclassified == 0 && g.r.Agents < 2 {
			continue
		}
		g.r.Label = g.r.Finding()
		if g.r.Agents > 1 {
			s.CrossAgentFiles++
		}
		s.StaleRereads += g.r.Stale
		s.UnclassifiedRereads += g.r.Unclassified
		rr = append(rr, g.r)
	}
	var rp []Repeat
	for _, c := range repOrder {
		if r := repeats[c]; r.Repeats > 0 {
			s.RepeatedCommands += r.Repeats
			rp = append(rp, *r)
		}
	}
	s.ErrorRate = ratio(s.Failures, s.Completed)
	s.Redundancy = ratio(s.StaleRereads+s.UnclassifiedRereads+s.RepeatedCommands, s.Reads+s.Commands)
	s.Exploration = ratio(s.Reads+s.Searches, s.Actions)
	s.Score = int64(100*(1-s.ErrorRate)*(1-s.Redundancy) + 0.5)
	slices.SortStableFunc(rr, func(a, b Reread) int { return strings.Compare(a.Target, b.Target) })
	return s, rr, rp
}

func ratio(n, d int64) float64 {
	if d <= 0 {
		return 0
	}
	return min(1, float64(n)/float64(d))
}
