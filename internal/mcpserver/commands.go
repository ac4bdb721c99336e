package mcpserver

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unicode/utf8"
)

// testCommands are the substrings that make a command a test run. A command that only mentions
// one (grep "go test" Makefile) counts too; the answer shows the command, so the agent can tell.
var testCommands = []string{
	"go test", "gotestsum", "pytest", "py.test", "unittest", "npm test", "npm run test", "yarn test", "pnpm test",
	"pnpm run test", "bun test", "jest", "vitest", "mocha", "cargo test", "cargo nextest", "mvn test", "gradle test",
	"gradlew test", "make test", "rspec", "phpunit", "dotnet test", "mix test", "deno test", "ctest",
}

// testCond is the SQL condition on target matching testCommands, with its arguments.
func testCond() (string, []any) {
	conds := make([]string, len(testCommands))
	args := make([]any, len(testCommands))
	for i, c := range testCommands {
		conds[i], args[i] = "target LIKE ?", "%"+c+"%"
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}

type testAnswer struct {
	act
	Ms  int64  `json:"ms,omitempty"`
	Out string `json:"out,omitempty"`
}

// lastTest walks the project's commands newest first (actions(project, type, ts)), or the
// session's, until one looks like a test run.
func (s *Server) lastTest(ctx context.Context, db *dbh, in testArgs) (any, error) {
	cond, condArgs := testCond()
	var where string
	var args []any
	var proj string
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		proj, where, args = x.Project, `session_id = ? AND +type = 'run_command'`, []any{x.ID}
	} else {
		p, err := s.projectOf(ctx, db, in.Project)
		if err != nil {
			return nil, err
		}
		proj, where, args = p, `project = ? AND type = 'run_command'`, []any{p}
	}
	var ms int64
	var eventID string
	acts, err := s.actList(ctx, db, proj, `SELECT `+actCols+` FROM actions WHERE `+where+` AND `+cond+
		` ORDER BY ts DESC, id DESC LIMIT 1`, append(args, condArgs...)...)
	if err != nil {
		return nil, err
	}
	if len(acts) == 0 {
		return nil, notice("no test run recorded in " + proj)
	}
	a := acts[0]
	if err := db.QueryRowContext(ctx, `SELECT duration_ms, event_id FROM actions WHERE id = ?`, a.ID).Scan(&ms, &eventID); err != nil {
		return nil, err
	}
	out, err := output(ctx, db, eventID)
	if err != nil {
		return nil, err
	}
	a.Target, a.Err = clip(a.fullTarget, 300), clip(a.Err, 300)
	return testAnswer{act: a, Ms: ms, Out: clipMiddle(out, limitBytes(in.Max, 1500))}, nil
}

type failure struct {
	act
	Prev  string `json:"prev,omitempty"`  // the step before it in its session
	Fixed int64  `json:"fixed,omitempty"` // the id of a later success of the same step
	Out   string `json:"out,omitempty"`   // the end of its output
}

type failContext struct {
	Ago     string `json:"ago"`
	Sess    string `json:"sess"`
	Kind    string `json:"kind"`
	Target  string `json:"target,omitempty"`
	Err     string `json:"err,omitempty"`
	Context string `json:"context,omitempty"`
}

type failuresAnswer struct {
	N     int           `json:"n"` // failures recorded in the scope
	Fails []failure     `json:"fails"`
	Ctx   []failContext `json:"ctx,omitempty"` // analyses from the failure_context table, when filled
}

// failures lists the newest failed actions of the project (its failures index) or of a session.
func (s *Server) failures(ctx context.Context, db *dbh, in listArgs) (any, error) {
	n := limit(in.Limit, 5)
	var ans failuresAnswer
	var err error
	var proj string
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		proj = x.Project
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE session_id = ? AND success = 0`, x.ID).Scan(&ans.N); err != nil {
			return nil, err
		}
		if ans.Fails, err = s.failureList(ctx, db, `SELECT `+actCols+` FROM actions WHERE session_id = ? AND success = 0
			ORDER BY ts DESC, id DESC LIMIT ?`, x.ID, n); err != nil {
			return nil, err
		}
	} else {
		if proj, err = s.projectOf(ctx, db, in.Project); err != nil {
			return nil, err
		}
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE project = ? AND success = 0`, proj).Scan(&ans.N); err != nil {
			return nil, err
		}
		if ans.Fails, err = s.failureList(ctx, db, `SELECT `+actCols+` FROM actions WHERE project = ? AND success = 0
			ORDER BY ts DESC, id DESC LIMIT ?`, proj, n); err != nil {
			return nil, err
		}
	}
	if ans.Ctx, err = s.failureContext(ctx, db, proj, n); err != nil {
		return nil, err
	}
	if ans.N == 0 && len(ans.Ctx) == 0 {
		return nil, notice("no failure recorded in " + proj)
	}
	return ans, nil
}

func (s *Server) failureList(ctx context.Context, db *dbh, query string, args ...any) ([]failure, error) {
	acts, err := s.actList(ctx, db, "", query, args...)
	if err != nil {
		return nil, err
	}
	out := make([]failure, 0, len(acts))
	for _, a := range acts {
		f := failure{act: a}
		f.Err = clip(a.Err, 300)
		if f.Fixed, err = fixedLater(ctx, db, a.project, a); err != nil {
			return nil, err
		}
		var typ, target, eventID string
		err := db.QueryRowContext(ctx, `SELECT type, target FROM actions WHERE session_id = (SELECT session_id FROM actions WHERE id = ?1)
			AND ts <= ?2 AND (ts < ?2 OR id < ?1) ORDER BY ts DESC, id DESC LIMIT 1`, a.ID, a.ts).Scan(&typ, &target)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if typ != "" {
			f.Prev = clip(strings.TrimSpace(typ+" "+rel(a.project, target)), 120)
		}
		if err := db.QueryRowContext(ctx, `SELECT event_id FROM actions WHERE id = ?`, a.ID).Scan(&eventID); err != nil {
			return nil, err
		}
		o, err := output(ctx, db, eventID)
		if err != nil {
			return nil, err
		}
		f.Out = clipTail(strings.TrimSpace(o), 400)
		out = append(out, f)
	}
	return out, nil
}

// failureContext reads the failure_context table, which a later analysis fills; empty until then.
func (s *Server) failureContext(ctx context.Context, db *dbh, proj string, n int) ([]failContext, error) {
	rows, err := db.QueryContext(ctx, `SELECT ts, session_id, kind, target, error, context FROM failure_context
		WHERE project = ? ORDER BY ts DESC, id DESC LIMIT ?`, proj, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []failContext
	now := s.now()
	for rows.Next() {
		var c failContext
		var ts int64
		var sid string
		if err := rows.Scan(&ts, &sid, &c.Kind, &c.Target, &c.Err, &c.Context); err != nil {
			return nil, err
		}
		c.Ago, c.Sess, c.Target = ago(now, ts), short(sid), rel(proj, c.Target)
		c.Err, c.Context = clip(c.Err, 300), clip(c.Context, 600)
		out = append(out, c)
	}
	return out, rows.Err()
}

type cmdAnswer struct {
	Cmd   string   `json:"cmd"`
	Last  *act     `json:"last"`
	Ms    int64    `json:"ms,omitempty"`
	Runs  int      `json:"runs"`  // recorded runs of this command in the project
	Fresh bool     `json:"fresh"` // no edit or write recorded in the project since the last run
	Edits int      `json:"edits"` // edits and writes since the last run
	Files []string `json:"files,omitempty"`
	Cmds  int      `json:"cmds_since"` // other commands run since, which may have changed files too
	Out   string   `json:"out,omitempty"`
}

// commandFreshness finds the command's last run in the project (exactly, else the newest command
// that starts with it) and counts what the project's agents changed after it (the edits are
// selected in a materialized CTE for the reason patterns gives).
func (s *Server) commandFreshness(ctx context.Context, db *dbh, in commandArgs) (any, error) {
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	cmd := strings.TrimSpace(in.Command)
	if cmd == "" {
		return nil, errors.New("command is empty")
	}
	sessCond, args := "", []any{proj, cmd}
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		sessCond = ` AND session_id = ?`
		args = append(args, x.ID)
	}
	last, err := s.actList(ctx, db, proj, `SELECT `+actCols+` FROM actions WHERE project = ? AND target = ?
		AND +type = 'run_command'`+sessCond+` ORDER BY ts DESC, id DESC LIMIT 1`, args...)
	if err != nil {
		return nil, err
	}
	if len(last) == 0 {
		prefixArgs := append([]any{proj, cmd, cmd + string(utf8.MaxRune)}, args[2:]...)
		if last, err = s.actList(ctx, db, proj, `SELECT `+actCols+` FROM actions WHERE project = ? AND target >= ? AND target < ?
			AND +type = 'run_command'`+sessCond+` ORDER BY ts DESC, id DESC LIMIT 1`, prefixArgs...); err != nil {
			return nil, err
		}
	}
	if len(last) == 0 {
		return nil, notice("command never recorded in " + proj + ": " + clip(cmd, 200))
	}
	a := last[0]
	ans := cmdAnswer{Cmd: clip(a.fullTarget, 300), Last: &a}
	a.Target, a.Err = "", clip(a.Err, 200)
	var eventID string
	if err := db.QueryRowContext(ctx, `SELECT duration_ms, event_id FROM actions WHERE id = ?`, a.ID).Scan(&ans.Ms, &eventID); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE project = ? AND target = ? AND +type = 'run_command'`,
		proj, a.fullTarget).Scan(&ans.Runs); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `WITH r AS MATERIALIZED (SELECT target, ts FROM actions WHERE project = ?
		AND type IN ('edit_file', 'write_file') AND ts > ?)
		SELECT target, count(*) FROM r GROUP BY target ORDER BY max(ts) DESC`, proj, a.ts)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var target string
		var n int
		if err := rows.Scan(&target, &n); err != nil {
			rows.Close()
			return nil, err
		}
		ans.Edits += n
		if len(ans.Files) < 10 {
			ans.Files = append(ans.Files, rel(proj, target))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE project = ? AND type = 'run_command' AND ts > ?`,
		proj, a.ts).Scan(&ans.Cmds); err != nil {
		return nil, err
	}
	ans.Fresh = ans.Edits == 0
	out, err := output(ctx, db, eventID)
	if err != nil {
		return nil, err
	}
	ans.Out = clipTail(strings.TrimSpace(out), 400)
	return ans, nil
}
