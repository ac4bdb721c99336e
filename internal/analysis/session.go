// Package analysis turns stored actions into answers: work the agents did twice (stale re-reads,
// repeated commands, files several clients touched), habits (patterns with a confidence that
// decays when they stop being seen) and a score per session.
//
// The writer keeps it current: each batch marks the sessions whose actions changed
// (analysis_dirty, in the batch's transaction) and the writer's analysis loop (Analyzer.Step)
// recomputes those sessions from their actions, then the patterns of their projects, into the
// tables of migration 0006. The dashboard and `observerctl discover|patterns|score|suggest` read
// those tables (Discover, Patterns, Scores), so an answer costs a few thousand rows at most
// whatever the history's size.
//
// Windows select sessions: a session counts in a window when it acted in it (its last action is
// inside), and then with all its findings, since a re-read or a repeat is a property of the session.
package analysis

import (
	"slices"
	"strings"
)

// Definitions of a session's findings and score parts (shown in the dashboard's help and the CLI).
const (
	// A stale re-read is a read that observer-watch classified live as "stale" or "changed
	// elsewhere": the file had changed since the session last saw it. A later read without a
	// classification (history scanned after the fact) counts as an unclassified re-read.
	DefStaleReread        = "a read of a file the session had read before, classified live as changed since it last saw it (stale or changed elsewhere)"
	DefUnclassifiedReread = "a second or later read of the same file in the session, from history without a live classification"
	DefCrossAgent         = "a file read by more than one agent of the session (the main agent and its subagents share the session)"
	DefRepeat             = "a command run again with no edit or write by the session (any file, any of its agents) since its previous identical run"
	DefShared             = "a project's file read, edited or written by more than one client (clients counted over all time)"
	DefErrorRate          = "failed actions over actions whose result is known"
	DefRedundancy         = "stale and unclassified re-reads plus repeated commands, over reads plus commands"
	DefExploration        = "reads, searches and web lookups over all actions: high is a session that mostly looked around"
	DefScore              = "100 × (1 − error rate) × (1 − redundancy), rounded: 100 is a session with no failures and no repeated work"
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

// Reread is one session's reads of one file: listed when some were stale or unclassified
// re-reads, or when more than one agent of the session read it.
type Reread struct {
	Client       string `json:"client"`
	SessionID    string `json:"session_id"`
	Title        string `json:"title"` // the session's
	Project      string `json:"project"`
	Target       string `json:"target"`
	Reads        int64  `json:"reads"`
	Stale        int64  `json:"stale"`        // classified live as changed since last seen
	Unclassified int64  `json:"unclassified"` // later reads without a classification
	Agents       int64  `json:"agents"`       // distinct agents (main + subagents) that read it
	Label        string `json:"label"`
	LastTs       int64  `json:"last_ts"`
}

// Repeat is one session's repeated command.
type Repeat struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	Title     string `json:"title"` // the session's
	Project   string `json:"project"`
	Command   string `json:"command"`
	Runs      int64  `json:"runs"`
	Repeats   int64  `json:"repeats"` // runs with nothing edited since the previous identical run
	LastTs    int64  `json:"last_ts"`
}

// label names the finding: stale, an unclassified re-read or only reads by several agents, and
// whether more than one agent read the file.
func (r Reread) label() string {
	switch {
	case r.Stale == 0 && r.Unclassified == 0:
		return "read by several agents"
	case r.Stale > 0 && r.Agents > 1:
		return "stale, across agents"
	case r.Stale > 0:
		return "stale"
	case r.Agents > 1:
		return "re-read (unclassified), across agents"
	}
	return "re-read (unclassified)"
}

// Session is a session's analysis: counts, findings and score.
type Session struct {
	Client              string  `json:"client"`
	SessionID           string  `json:"session_id"`
	Title               string  `json:"title"`
	Project             string  `json:"project"`
	FirstTs             int64   `json:"first_ts"`
	LastTs              int64   `json:"last_ts"`
	Actions             int64   `json:"actions"`
	Failures            int64   `json:"failures"`
	Completed           int64   `json:"completed"`
	Reads               int64   `json:"reads"`
	Edits               int64   `json:"edits"`
	Commands            int64   `json:"commands"`
	Searches            int64   `json:"searches"`
	Files               int64   `json:"files"`
	Agents              int64   `json:"agents"`
	StaleRereads        int64   `json:"stale_rereads"`
	UnclassifiedRereads int64   `json:"unclassified_rereads"`
	CrossAgentFiles     int64   `json:"cross_agent_files"`
	RepeatedCommands    int64   `json:"repeated_commands"`
	ErrorRate           float64 `json:"error_rate"`
	Redundancy          float64 `json:"redundancy"`
	Exploration         float64 `json:"exploration"`
	Score               int64   `json:"score"`
}

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
		g.r.Label = g.r.label()
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
