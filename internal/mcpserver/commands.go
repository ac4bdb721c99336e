package mcpserver

import (
	"context"
	"errors"
	"strings"

	"github.com/observerhq/observer/internal/query"
)

// testCommands are the substrings that make a command a test run. A command that only mentions
// one (grep "go test" Makefile) counts too; the answer shows the command, so the agent can tell.
var testCommands = []string{
	"go test", "gotestsum", "pytest", "py.test", "unittest", "npm test", "npm run test", "yarn test", "pnpm test",
	"pnpm run test", "bun test", "jest", "vitest", "mocha", "cargo test", "cargo nextest", "mvn test", "gradle test",
	"gradlew test", "make test", "rspec", "phpunit", "dotnet test", "mix test", "deno test", "ctest",
}

type testAnswer struct {
	act
	Ms  int64  `json:"ms,omitempty"`
	Out string `json:"out,omitempty"`
}

// lastTest walks the project's commands newest first (actions(project, type, ts)), or the
// session's, until one looks like a test run.
func (s *Server) lastTest(ctx context.Context, db *dbh, in testArgs) (any, error) {
	var scope query.ActionScope
	var proj string
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		proj, scope = x.Project, query.ActionScope{SessionID: x.ID}
	} else {
		p, err := s.projectOf(ctx, db, in.Project)
		if err != nil {
			return nil, err
		}
		proj, scope = p, query.ActionScope{Project: p}
	}
	run, ok, err := query.LastTestRun(ctx, db, scope, testCommands)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notice("no test run recorded in " + proj)
	}
	a := s.actList([]query.ActionRow{run})[0]
	ms, eventID, err := query.ActionRun(ctx, db, a.ID)
	if err != nil {
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
		if ans.N, ans.Fails, err = s.failureList(ctx, db, query.ActionScope{SessionID: x.ID}, n); err != nil {
			return nil, err
		}
	} else {
		if proj, err = s.projectOf(ctx, db, in.Project); err != nil {
			return nil, err
		}
		if ans.N, ans.Fails, err = s.failureList(ctx, db, query.ActionScope{Project: proj}, n); err != nil {
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

// failureList counts the failures of a session or a project and lists the newest n, each with
// the step before it, its fix and the end of its output.
func (s *Server) failureList(ctx context.Context, db *dbh, scope query.ActionScope, n int) (int, []failure, error) {
	total, err := query.CountFailed(ctx, db, scope)
	if err != nil {
		return 0, nil, err
	}
	rows, err := query.FailedActions(ctx, db, scope, n)
	if err != nil {
		return 0, nil, err
	}
	acts := s.actList(rows)
	out := make([]failure, 0, len(acts))
	for _, a := range acts {
		f := failure{act: a}
		f.Err = clip(a.Err, 300)
		if f.Fixed, err = fixedLater(ctx, db, a.project, a); err != nil {
			return 0, nil, err
		}
		typ, target, err := query.PrevAction(ctx, db, a.ID, a.ts)
		if err != nil {
			return 0, nil, err
		}
		if typ != "" {
			f.Prev = clip(strings.TrimSpace(typ+" "+rel(a.project, target)), 120)
		}
		eventID, err := query.ActionEventID(ctx, db, a.ID)
		if err != nil {
			return 0, nil, err
		}
		o, err := output(ctx, db, eventID)
		if err != nil {
			return 0, nil, err
		}
		f.Out = clipTail(strings.TrimSpace(o), 400)
		out = append(out, f)
	}
	return total, out, nil
}

// failureContext reads the failure_context table, which a later analysis fills; empty until then.
func (s *Server) failureContext(ctx context.Context, db *dbh, proj string, n int) ([]failContext, error) {
	rows, err := query.FailureContexts(ctx, db, proj, n)
	if err != nil {
		return nil, err
	}
	var out []failContext
	now := s.now()
	for _, r := range rows {
		c := failContext{Kind: r.Kind}
		c.Ago, c.Sess, c.Target = ago(now, r.TS), short(r.SessionID), rel(proj, r.Target)
		c.Err, c.Context = clip(r.Error, 300), clip(r.Context, 600)
		out = append(out, c)
	}
	return out, nil
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
	sess := ""
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		sess = x.ID
	}
	run, ok, err := query.LastCommandRun(ctx, db, proj, cmd, sess, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		if run, ok, err = query.LastCommandRun(ctx, db, proj, cmd, sess, true); err != nil {
			return nil, err
		}
	}
	if !ok {
		return nil, notice("command never recorded in " + proj + ": " + clip(cmd, 200))
	}
	a := s.actList([]query.ActionRow{run})[0]
	ans := cmdAnswer{Cmd: clip(a.fullTarget, 300), Last: &a}
	a.Target, a.Err = "", clip(a.Err, 200)
	var eventID string
	if ans.Ms, eventID, err = query.ActionRun(ctx, db, a.ID); err != nil {
		return nil, err
	}
	if ans.Runs, err = query.CommandRuns(ctx, db, proj, a.fullTarget); err != nil {
		return nil, err
	}
	edits, err := query.EditsSince(ctx, db, proj, a.ts)
	if err != nil {
		return nil, err
	}
	for _, e := range edits {
		ans.Edits += e.N
		if len(ans.Files) < 10 {
			ans.Files = append(ans.Files, rel(proj, e.Path))
		}
	}
	if ans.Cmds, err = query.CommandsSince(ctx, db, proj, a.ts); err != nil {
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
