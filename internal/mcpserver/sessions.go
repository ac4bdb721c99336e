package mcpserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Queries on one session walk its rows through actions(session_id, ts). A type condition is
// written +type so that the planner, which has no statistics, never prefers actions(type, ts):
// that index walks every session's actions of the type.

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
	ans := summaryAnswer{Sess: x.ID, Client: x.Client, Project: x.Project, State: x.State, Epoch: x.Epoch, Model: x.Model,
		Started: ago(now, x.First), Last: ago(now, x.Last), Dur: dur(x.Last - x.First), Types: map[string]int{}}
	rows, err := db.QueryContext(ctx, `SELECT type, count(*), coalesce(sum(success = 0), 0) FROM actions
		WHERE session_id = ? GROUP BY type`, x.ID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var typ string
		var n, fails int
		if err := rows.Scan(&typ, &n, &fails); err != nil {
			rows.Close()
			return nil, err
		}
		ans.Types[typ], ans.Acts, ans.Fails = n, ans.Acts+n, ans.Fails+fails
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
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
	rows, err := db.QueryContext(ctx, `SELECT target, count(*), max(ts) FROM actions
		WHERE session_id = ? AND +type IN ('edit_file', 'write_file') AND target != '' GROUP BY target ORDER BY max(ts) DESC`, x.ID)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []fileCount
	total := 0
	for rows.Next() {
		var f fileCount
		var ts int64
		if err := rows.Scan(&f.Path, &f.N, &ts); err != nil {
			return nil, 0, err
		}
		total++
		if len(out) < n {
			f.Path, f.Ago = rel(x.Project, f.Path), ago(now, ts)
			out = append(out, f)
		}
	}
	return out, total, rows.Err()
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
	ans := recoveryAnswer{Sess: x.ID, Client: x.Client, State: x.State, Epoch: x.Epoch, Last: ago(now, x.Last),
		Prompts: []prompt{}, Acts: []act{}}
	var lastCompact sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT count(*), max(ts) FROM actions WHERE session_id = ? AND +type = 'context_compacted'`,
		x.ID).Scan(&ans.Compactions, &lastCompact); err != nil {
		return nil, err
	}
	if lastCompact.Valid {
		ans.Compacted = ago(now, lastCompact.Int64)
	}
	rows, err := db.QueryContext(ctx, `SELECT ts, target FROM actions WHERE session_id = ? AND +type = 'user_prompt'
		ORDER BY ts DESC, id DESC LIMIT 3`, x.ID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p prompt
		var ts int64
		if err := rows.Scan(&ts, &p.Text); err != nil {
			rows.Close()
			return nil, err
		}
		p.Ago, p.Text = ago(now, ts), clip(p.Text, 300)
		ans.Prompts = append(ans.Prompts, p)
	}
	rows.Close()
	if ans.Acts, err = s.actList(ctx, db, x.Project, `SELECT `+actCols+` FROM actions WHERE session_id = ?
		AND +type NOT IN ('user_prompt', 'system_prompt') ORDER BY ts DESC, id DESC LIMIT ?`, x.ID, limit(in.Limit, defLimit)); err != nil {
		return nil, err
	}
	for i := range ans.Acts {
		ans.Acts[i].Sess = ""
	}
	if ans.Files, _, err = editedFiles(ctx, db, now, x, 15); err != nil {
		return nil, err
	}
	fails, err := s.actList(ctx, db, x.Project, `SELECT `+actCols+` FROM actions WHERE session_id = ? AND success = 0
		ORDER BY ts DESC, id DESC LIMIT 20`, x.ID)
	if err != nil {
		return nil, err
	}
	for _, f := range fails {
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

// actCols are the columns actList scans; rows must come in that order.
const actCols = `id, ts, session_id, type, target, success, error, freshness, project`

// actList runs a query selecting actCols and renders its rows for a list: targets relative to the
// project, clipped, like errors. The row's own time stays in the hidden ts for callers that
// need it.
func (s *Server) actList(ctx context.Context, db *dbh, project, query string, args ...any) ([]act, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	now := s.now()
	out := []act{}
	for rows.Next() {
		var a act
		var ts int64
		var sid, target, errText, proj string
		var ok sql.NullBool
		if err := rows.Scan(&a.ID, &ts, &sid, &a.Type, &target, &ok, &errText, &a.Fresh, &proj); err != nil {
			return nil, err
		}
		a.Ago, a.Sess, a.OK, a.Err = ago(now, ts), short(sid), okOf(ok), clip(errText, 100)
		a.Target = clip(rel(proj, target), 160)
		a.ts, a.fullTarget, a.project = ts, target, proj
		out = append(out, a)
	}
	return out, rows.Err()
}

// fixedLater returns the id of the first successful action of the same type on the same target
// after a failure, or 0.
func fixedLater(ctx context.Context, db *dbh, project string, f act) (int64, error) {
	var id int64
	err := db.QueryRowContext(ctx, `SELECT id FROM actions WHERE project = ? AND target = ? AND ts > ? AND +type = ?
		AND success = 1 ORDER BY ts LIMIT 1`, project, f.fullTarget, f.ts, f.Type).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
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
	var a detailAnswer
	var ts int64
	var ok sql.NullBool
	var eventID string
	err := db.QueryRowContext(ctx, `SELECT id, ts, client, session_id, project, type, tool, target, success, error,
		duration_ms, model, agent_id, freshness, content_hash, output_size, event_id FROM actions WHERE id = ?`, in.ID).Scan(
		&a.ID, &ts, &a.Client, &a.Sess, &a.Project, &a.Type, &a.Tool, &a.Target, &ok, &a.Err, &a.Ms, &a.Model, &a.Agent,
		&a.Fresh, &a.Hash, &a.OutSize, &eventID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no action with id %d", in.ID)
	}
	if err != nil {
		return nil, err
	}
	a.Time, a.Ago, a.OK = time.UnixMilli(ts).UTC().Format(time.RFC3339), ago(s.now(), ts), okOf(ok)
	a.Target = rel(a.Project, a.Target)
	a.Hash = clip(a.Hash, 12)
	out, err := output(ctx, db, eventID)
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
	var out string
	err := db.QueryRowContext(ctx, `SELECT output FROM action_outputs WHERE event_id = ?`, eventID).Scan(&out)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return out, err
}

type aroundAnswer struct {
	Sess string `json:"sess"`
	Acts []act  `json:"acts"` // oldest first
}

// around lists a session's actions on both sides of one, in time order, through the
// session index: the anchor and up to Before actions before it, then up to After after it.
func (s *Server) around(ctx context.Context, db *dbh, in aroundArgs) (any, error) {
	var sid string
	var ts, id int64
	if in.ID != 0 {
		err := db.QueryRowContext(ctx, `SELECT session_id, ts, id FROM actions WHERE id = ?`, in.ID).Scan(&sid, &ts, &id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("no action with id %d", in.ID)
		}
		if err != nil {
			return nil, err
		}
	} else {
		x, err := s.sessionOf(ctx, db, in.Session, in.Project)
		if err != nil {
			return nil, err
		}
		sid = x.ID
		err = db.QueryRowContext(ctx, `SELECT ts, id FROM actions WHERE session_id = ? ORDER BY ts DESC, id DESC LIMIT 1`,
			sid).Scan(&ts, &id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notice("no action recorded in session " + sid)
		}
		if err != nil {
			return nil, err
		}
	}
	before, err := s.actList(ctx, db, "", `SELECT `+actCols+` FROM actions WHERE session_id = ? AND ts <= ?
		AND (ts < ? OR id <= ?) ORDER BY ts DESC, id DESC LIMIT ?`, sid, ts, ts, id, limit(in.Before, 5)+1)
	if err != nil {
		return nil, err
	}
	after := []act{}
	if in.ID != 0 {
		if after, err = s.actList(ctx, db, "", `SELECT `+actCols+` FROM actions WHERE session_id = ? AND ts >= ?
			AND (ts > ? OR id > ?) ORDER BY ts, id LIMIT ?`, sid, ts, ts, id, limit(in.After, 5)); err != nil {
			return nil, err
		}
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
	var a stashAnswer
	var ts int64
	err := db.QueryRowContext(ctx, `SELECT stash_id, ts, session_id, mechanism, content FROM compression_stash WHERE stash_id = ?`,
		in.StashID).Scan(&a.StashID, &ts, &a.Session, &a.Mechanism, &a.Content)
	if errors.Is(err, sql.ErrNoRows) || (err != nil && strings.Contains(err.Error(), "no such table")) {
		return nil, fmt.Errorf("no stashed output %q (stashing is [compression] stash = true; retention may have pruned it)", in.StashID)
	}
	if err != nil {
		return nil, err
	}
	a.Time, a.Size = time.UnixMilli(ts).UTC().Format(time.RFC3339), len(a.Content)
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
