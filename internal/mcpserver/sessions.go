package mcpserver

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/internal/query"
)

type fileCount struct {
	Path string `json:"path"`
	N    int    `json:"n"`
	Ago  string `json:"ago,omitempty"`
}

type summaryAnswer struct {
	Sess    string         `json:"sess"`
	Client  string         `json:"client"`
	Project string         `json:"project,omitempty"`
	State   string         `json:"state"`
	Epoch   int            `json:"epoch,omitempty"` // compactions so far
	Model   string         `json:"model,omitempty"`
	Started string         `json:"started"`
	Last    string         `json:"last"`
	Dur     string         `json:"dur"`
	Acts    int            `json:"acts"`
	Types   map[string]int `json:"types"`
	Fails   int            `json:"fails"`
	Edited  int            `json:"edited"` // distinct files edited or written
	Files   []fileCount    `json:"files,omitempty"`
	Cost    *costFig       `json:"cost,omitempty"`
}

func (s *Server) sessionSummary(ctx context.Context, db *dbh, in scopeArgs) (any, error) {
	x, err := s.sessionOf(ctx, db, in.Session, in.Project)
	if err != nil {
		return nil, err
	}
	now := s.now()
	ans := summaryAnswer{Sess: x.ID, Client: x.Client, Project: x.Project, State: x.State, Epoch: int(x.Epoch), Model: x.Model,
		Started: ago(now, x.FirstSeen), Last: ago(now, x.LastSeen), Dur: dur(x.LastSeen - x.FirstSeen), Types: map[string]int{}}
	counts, err := query.SessionTypeCounts(ctx, db, x.ID)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		n, fails := int(c.Actions), int(c.Failures)
		ans.Types[c.Type], ans.Acts, ans.Fails = n, ans.Acts+n, ans.Fails+fails
	}
	if ans.Files, ans.Edited, err = editedFiles(ctx, db, now, x, 10); err != nil {
		return nil, err
	}
	if c, err := sessionCost(ctx, db, x); err != nil {
		return nil, err
	} else if c.Turns > 0 {
		ans.Cost = &c
	}
	return ans, nil
}

// editedFiles lists the files a session edited or wrote, the most recently touched first, with
// the number of distinct files.
func editedFiles(ctx context.Context, db *dbh, now int64, x session, n int) ([]fileCount, int, error) {
	edits, err := query.EditedFiles(ctx, db, x.ID)
	if err != nil {
		return nil, 0, err
	}
	var out []fileCount
	for _, e := range edits {
		if len(out) < n {
			out = append(out, fileCount{Path: rel(x.Project, e.Path), N: e.N, Ago: ago(now, e.Last)})
		}
	}
	return out, len(edits), nil
}

type prompt struct {
	Ago  string `json:"ago"`
	Text string `json:"text"`
}

type recoveryAnswer struct {
	Sess        string      `json:"sess"`
	Client      string      `json:"client"`
	State       string      `json:"state"`
	Epoch       int         `json:"epoch,omitempty"`
	Last        string      `json:"last"`
	Compactions int         `json:"compactions,omitempty"`
	Compacted   string      `json:"compacted,omitempty"` // the last compaction, as an age
	Prompts     []prompt    `json:"prompts"`             // the last ones, newest first
	Acts        []act       `json:"acts"`                // the last actions, newest first
	Files       []fileCount `json:"files,omitempty"`     // edited or written, latest first
	Open        []act       `json:"open,omitempty"`      // failures no later success of the same step fixed
}

func (s *Server) recovery(ctx context.Context, db *dbh, in listArgs) (any, error) {
	x, err := s.sessionOf(ctx, db, in.Session, in.Project)
	if err != nil {
		return nil, err
	}
	now := s.now()
	ans := recoveryAnswer{Sess: x.ID, Client: x.Client, State: x.State, Epoch: int(x.Epoch), Last: ago(now, x.LastSeen),
		Prompts: []prompt{}, Acts: []act{}}
	var lastCompact int64
	if ans.Compactions, lastCompact, err = query.Compactions(ctx, db, x.ID); err != nil {
		return nil, err
	}
	if ans.Compactions > 0 {
		ans.Compacted = ago(now, lastCompact)
	}
	prompts, err := query.LastPrompts(ctx, db, x.ID, 3)
	if err != nil {
		return nil, err
	}
	for _, p := range prompts {
		ans.Prompts = append(ans.Prompts, prompt{Ago: ago(now, p.TS), Text: clip(p.Text, 300)})
	}
	recent, err := query.RecentActions(ctx, db, x.ID, limit(in.Limit, defLimit))
	if err != nil {
		return nil, err
	}
	ans.Acts = s.actList(recent)
	for i := range ans.Acts {
		ans.Acts[i].Sess = ""
	}
	if ans.Files, _, err = editedFiles(ctx, db, now, x, 15); err != nil {
		return nil, err
	}
	failed, err := query.FailedActions(ctx, db, query.ActionScope{SessionID: x.ID}, 20)
	if err != nil {
		return nil, err
	}
	for _, f := range s.actList(failed) {
		fixed, err := fixedLater(ctx, db, x.Project, f)
		if err != nil {
			return nil, err
		}
		if fixed == 0 && len(ans.Open) < 5 {
			f.Sess, f.Err = "", clip(f.Err, 160)
			ans.Open = append(ans.Open, f)
		}
	}
	return ans, nil
}

// actList renders the read model's action rows for a list: targets relative to the project,
// clipped, like errors. The row's own time stays in the hidden ts for callers that need it.
func (s *Server) actList(rows []query.ActionRow) []act {
	now := s.now()
	out := []act{}
	for _, r := range rows {
		a := act{ID: r.ID, Type: r.Type, Fresh: r.Freshness}
		a.Ago, a.Sess, a.OK, a.Err = ago(now, r.TS), short(r.SessionID), r.Success, clip(r.Error, 100)
		a.Target = clip(rel(r.Project, r.Target), 160)
		a.ts, a.fullTarget, a.project = r.TS, r.Target, r.Project
		out = append(out, a)
	}
	return out
}

// fixedLater returns the id of the first successful action of the same type on the same target
// after a failure, or 0.
func fixedLater(ctx context.Context, db *dbh, project string, f act) (int64, error) {
	return query.FixedLater(ctx, db, project, f.fullTarget, f.ts, f.Type)
}

type detailAnswer struct {
	ID      int64  `json:"id"`
	Time    string `json:"time"`
	Ago     string `json:"ago"`
	Client  string `json:"client"`
	Sess    string `json:"sess"`
	Project string `json:"project,omitempty"`
	Type    string `json:"type"`
	Tool    string `json:"tool,omitempty"`
	Target  string `json:"target,omitempty"`
	OK      *bool  `json:"ok,omitempty"`
	Err     string `json:"err,omitempty"`
	Ms      int64  `json:"ms,omitempty"`
	Model   string `json:"model,omitempty"`
	Agent   string `json:"agent,omitempty"` // the subagent that acted
	Fresh   string `json:"fresh,omitempty"`
	Hash    string `json:"hash,omitempty"` // of the file the action left, shortened
	OutSize int64  `json:"out_size,omitempty"`
	Out     string `json:"out,omitempty"`
}

func (s *Server) actionDetails(ctx context.Context, db *dbh, in detailArgs) (any, error) {
	d, ok, err := query.ActionDetailOf(ctx, db, in.ID)
	if err == nil && !ok {
		return nil, fmt.Errorf("no action with id %d", in.ID)
	}
	if err != nil {
		return nil, err
	}
	a := detailAnswer{ID: d.ID, Client: d.Client, Sess: d.SessionID, Project: d.Project, Type: d.Type, Tool: d.Tool, Target: d.Target,
		Err: d.Error, Ms: d.DurationMs, Model: d.Model, Agent: d.AgentID, Fresh: d.Freshness, Hash: d.Hash, OutSize: d.OutputSize}
	a.Time, a.Ago, a.OK = time.UnixMilli(d.TS).UTC().Format(time.RFC3339), ago(s.now(), d.TS), d.Success
	a.Target = rel(a.Project, a.Target)
	a.Hash = clip(a.Hash, 12)
	out, err := output(ctx, db, d.EventID)
	if err != nil {
		return nil, err
	}
	a.Out = clipMiddle(out, limitBytes(in.Max, 4000))
	return a, nil
}

// limitBytes is limit for output sizes: a default, and a cap of 64 KB.
func limitBytes(n, def int) int {
	switch {
	case n <= 0:
		return def
	case n > 64<<10:
		return 64 << 10
	}
	return n
}

// output returns an action's stored tool output ("" when none was kept).
func output(ctx context.Context, db *dbh, eventID string) (string, error) {
	return query.ToolOutput(ctx, db, eventID)
}

type aroundAnswer struct {
	Sess string `json:"sess"`
	Acts []act  `json:"acts"` // oldest first
}

// around lists a session's actions on both sides of one, in time order, through the
// session index: the anchor and up to Before actions before it, then up to After after it.
func (s *Server) around(ctx context.Context, db *dbh, in aroundArgs) (any, error) {
	var at query.ActionPlace
	if in.ID != 0 {
		p, ok, err := query.ActionPlaceOf(ctx, db, in.ID)
		if err == nil && !ok {
			return nil, fmt.Errorf("no action with id %d", in.ID)
		}
		if err != nil {
			return nil, err
		}
		at = p
	} else {
		x, err := s.sessionOf(ctx, db, in.Session, in.Project)
		if err != nil {
			return nil, err
		}
		p, ok, err := query.LastActionOf(ctx, db, x.ID)
		if err == nil && !ok {
			return nil, notice("no action recorded in session " + x.ID)
		}
		if err != nil {
			return nil, err
		}
		at = p
	}
	sid, id := at.SessionID, at.ID
	upTo, err := query.ActionsUpTo(ctx, db, sid, at.TS, id, limit(in.Before, 5)+1)
	if err != nil {
		return nil, err
	}
	before := s.actList(upTo)
	after := []act{}
	if in.ID != 0 {
		rows, err := query.ActionsAfter(ctx, db, sid, at.TS, id, limit(in.After, 5))
		if err != nil {
			return nil, err
		}
		after = s.actList(rows)
	}
	ans := aroundAnswer{Sess: sid, Acts: make([]act, 0, len(before)+len(after))}
	for i := len(before) - 1; i >= 0; i-- {
		ans.Acts = append(ans.Acts, before[i])
	}
	ans.Acts = append(ans.Acts, after...)
	for i := range ans.Acts {
		ans.Acts[i].Sess = ""
		ans.Acts[i].At = ans.Acts[i].ID == id
	}
	return ans, nil
}

// stashAnswer is one page of a stashed original.
type stashAnswer struct {
	StashID   string `json:"stash_id"`
	Mechanism string `json:"mechanism"`
	Session   string `json:"session,omitempty"`
	Time      string `json:"time"`
	Size      int    `json:"size"`
	Offset    int    `json:"offset"`
	Content   string `json:"content"`
	// Next is the offset of the rest, when the page did not hold all of it.
	Next int `json:"next,omitempty"`
}

// stashed returns the original of a tool output the proxy compressed ([compression] stash),
// a page of at most max_bytes (16 KB by default, 64 KB at most) from offset.
func (s *Server) stashed(ctx context.Context, db *dbh, in stashArgs) (any, error) {
	st, ok, err := query.StashedOutput(ctx, db, in.StashID)
	if err == nil && !ok {
		return nil, fmt.Errorf("no stashed output %q (stashing is [compression] stash = true; retention may have pruned it)", in.StashID)
	}
	if err != nil {
		return nil, err
	}
	a := stashAnswer{StashID: st.StashID, Session: st.SessionID, Mechanism: st.Mechanism, Content: st.Content}
	a.Time, a.Size = time.UnixMilli(st.TS).UTC().Format(time.RFC3339), len(a.Content)
	if in.Offset < 0 || in.Offset > a.Size {
		return nil, fmt.Errorf("offset %d is outside the original (%d bytes)", in.Offset, a.Size)
	}
	for in.Offset > 0 && in.Offset < a.Size && !utf8.RuneStart(a.Content[in.Offset]) {
		in.Offset-- // never start a page inside a character
	}
	a.Offset = in.Offset
	end := min(a.Size, in.Offset+limitBytes(in.Max, 16<<10))
	for end < a.Size && end > in.Offset && !utf8.RuneStart(a.Content[end]) {
		end--
	}
	if end < a.Size {
		a.Next = end
	}
	a.Content = a.Content[in.Offset:end]
	return a, nil
}
