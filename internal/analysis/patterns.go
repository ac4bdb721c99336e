package analysis

// Patterns: habits found in a project's sessions, recomputed per project by the writer's analysis
// loop (at most once per Analyzer.PatternEvery while the project's sessions change) into the
// patterns table.
//
//   - command_pair: command B run right after command A in a session. Commands are compared by
//     their head (the program and its subcommand: "go test", "npm run", "git status"), since
//     whole command lines rarely repeat. Support: times B followed A; ratio: that over the
//     times A was followed by any command.
//   - co_edit: two files edited (edit_file or write_file) in the same session. Support: sessions
//     editing both; ratio: that over the sessions editing the less edited of the two.
//   - edit_then_test: a run of edits followed by a test command (go test, pytest, npm/yarn/pnpm
//     test, cargo test, jest, vitest, make test, ...) as the next command. Support: edit runs
//     followed by a test; ratio: that over edit runs followed by any command.
//   - hot_file: a file read, edited or written in many sessions. Support: sessions touching the
//     file; ratio: that over the project's sessions that touched any file.
//
// Confidence decays: it is the ratio times 2^(−age/query.HalfLife), the age being the time since the
// pattern was last seen, so a habit the agents dropped fades out. Only patterns seen at least
// twice are kept, the storedPerKind strongest of each kind per project.

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

const (
	storedPerKind     = 50
	maxFilesPerSess   = 60 // co_edit pairs are quadratic in a session's edited files
	minPatternSupport = 2
)

// Pattern is one habit of a project, as the analysis stores it and internal/query reads it
// (query.Decay gives its confidence).
type Pattern = query.Pattern

// testCommandRe matches a command line that runs tests.
var testCommandRe = regexp.MustCompile(`(^|[\s;&|/])(go test|pytest|py\.test|(npm|yarn|pnpm|bun)( run)? test|cargo (test|nextest)|jest|vitest|mocha|rspec|make (test|check)|tox|phpunit|mvn test|gradle test|dotnet test|ctest)\b`)

// testWords holds, for each command testCommandRe matches, a word the command contains. Most
// commands contain none of them, and looking for them costs a fraction of the expression's run
// (which tries its alternatives at every byte: a command can be a whole script).
var testWords = []string{"test", "jest", "mocha", "rspec", "check", "tox", "phpunit"}

// runsTests reports whether cmd runs tests (testCommandRe), looking for testWords first.
func runsTests(cmd string) bool {
	return slices.ContainsFunc(testWords, func(w string) bool { return strings.Contains(cmd, w) }) &&
		testCommandRe.MatchString(cmd)
}

// subcommandRe is a word that reads as a subcommand ("test", "run"), not a flag or a path.
var subcommandRe = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// commandHead is a command's program and subcommand: "go test ./..." is "go test".
func commandHead(cmd string) string {
	fields := strings.Fields(cmd)
	if len(fields) == 0 {
		return ""
	}
	head := fields[0]
	if len(fields) > 1 && subcommandRe.MatchString(fields[1]) {
		head += " " + fields[1]
	}
	return head
}

// deriver accumulates one project's patterns, session by session.
type deriver struct {
	pair, pairFrom map[string]int64 // "A → B", A
	pairLast       map[string]int64
	fileSess       map[string]int64 // file: sessions touching it
	fileLast       map[string]int64
	editSess       map[string]int64    // file: sessions editing it
	coEdit         map[[2]string]int64 // [a, b]: sessions editing both
	coEditLast     map[[2]string]int64
	projSess       int64 // sessions touching any file
	streaks, tests int64 // edit runs followed by a command / by a test
	lastTest       int64

	// the current session
	lastCmd string
	editing bool
	touched map[string]bool
	edited  map[string]int64 // file → last edit time
}

func newDeriver() *deriver {
	return &deriver{pair: map[string]int64{}, pairFrom: map[string]int64{}, pairLast: map[string]int64{},
		fileSess: map[string]int64{}, fileLast: map[string]int64{}, editSess: map[string]int64{},
		coEdit: map[[2]string]int64{}, coEditLast: map[[2]string]int64{},
		touched: map[string]bool{}, edited: map[string]int64{}}
}

func (d *deriver) endSession() {
	if len(d.touched) > 0 {
		d.projSess++
	}
	for f := range d.touched {
		d.fileSess[f]++
	}
	files := make([]string, 0, len(d.edited))
	for f := range d.edited {
		d.editSess[f]++
		files = append(files, f)
	}
	slices.Sort(files)
	files = files[:min(len(files), maxFilesPerSess)]
	for i, a := range files {
		for _, b := range files[i+1:] {
			k := [2]string{a, b}
			d.coEdit[k]++
			d.coEditLast[k] = max(d.coEditLast[k], d.edited[a], d.edited[b])
		}
	}
	d.lastCmd, d.editing = "", false
	clear(d.touched)
	clear(d.edited)
}

func (d *deriver) add(typ, target string, ts int64) {
	switch typ {
	case "run_command":
		head := commandHead(target)
		if head == "" {
			return
		}
		isTest := runsTests(target)
		if isTest {
			d.lastTest = max(d.lastTest, ts)
		}
		if d.editing {
			d.streaks++
			if isTest {
				d.tests++
			}
			d.editing = false
		}
		if d.lastCmd != "" && d.lastCmd != head {
			k := d.lastCmd + " → " + head
			d.pair[k]++
			d.pairLast[k] = max(d.pairLast[k], ts)
			d.pairFrom[d.lastCmd]++
		}
		d.lastCmd = head
	case "edit_file", "write_file":
		d.editing = true
		d.edited[target] = max(d.edited[target], ts)
		d.touched[target] = true
		d.fileLast[target] = max(d.fileLast[target], ts)
	case "read_file":
		d.touched[target] = true
		d.fileLast[target] = max(d.fileLast[target], ts)
	}
}

// patterns lists the project's patterns with support of at least minPatternSupport, the
// storedPerKind strongest of each kind; Confidence is left to the reader (it decays).
func (d *deriver) patterns(project string) []Pattern {
	var out []Pattern
	top := func(ps []Pattern) {
		slices.SortStableFunc(ps, func(a, b Pattern) int {
			if c := cmp.Compare(b.Support, a.Support); c != 0 {
				return c
			}
			if c := cmp.Compare(b.Ratio, a.Ratio); c != 0 {
				return c
			}
			return cmp.Compare(a.Key, b.Key)
		})
		out = append(out, ps[:min(len(ps), storedPerKind)]...)
	}
	var ps []Pattern
	for k, n := range d.pair {
		if n < minPatternSupport {
			continue
		}
		from := strings.SplitN(k, " → ", 2)[0]
		ps = append(ps, Pattern{Kind: "command_pair", Project: project, Key: k, Support: n,
			Ratio: float64(n) / float64(d.pairFrom[from]), LastSeen: d.pairLast[k], Detail: "run right after " + from})
	}
	top(ps)
	ps = nil
	for k, n := range d.coEdit {
		if n < minPatternSupport {
			continue
		}
		a, b := d.editSess[k[0]], d.editSess[k[1]]
		ps = append(ps, Pattern{Kind: "co_edit", Project: project, Key: k[0] + " + " + k[1], Support: n,
			Ratio: float64(n) / float64(min(a, b)), LastSeen: d.coEditLast[k], Detail: "edited in the same session"})
	}
	top(ps)
	if d.tests >= minPatternSupport {
		out = append(out, Pattern{Kind: "edit_then_test", Project: project, Key: "edit → test", Support: d.tests,
			Ratio: float64(d.tests) / float64(d.streaks), LastSeen: d.lastTest,
			Detail: "edits followed by a test command as the next command"})
	}
	ps = nil
	for f, n := range d.fileSess {
		if n < minPatternSupport {
			continue
		}
		ps = append(ps, Pattern{Kind: "hot_file", Project: project, Key: f, Support: n,
			Ratio: float64(n) / float64(d.projSess), LastSeen: d.fileLast[f],
			Detail: "read or edited in many of the project's sessions"})
	}
	top(ps)
	return out
}

// projectPatterns recomputes the projects' patterns from their actions: each read and derived
// where the analysis reads, then all written in one transaction of the writer's connection (which
// the full-text index's catch-up holds a while at a time: one wait, not one per project).
func (a *Analyzer) projectPatterns(ctx context.Context, projects []string) error {
	type derived struct {
		project  string
		patterns []store.Pattern
		started  int64
	}
	var all []derived
	for _, pr := range projects {
		if err := ctx.Err(); err != nil {
			return err
		}
		ps, started, err := a.derivePatterns(ctx, pr)
		if err != nil {
			return fmt.Errorf("patterns of %s: %w", pr, err)
		}
		all = append(all, derived{pr, ps, started})
	}
	if len(all) == 0 {
		return nil
	}
	tx, err := a.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Sessions are analysed on this same loop, so no mark can come in between the reads and here.
	for _, d := range all {
		if err := store.ReplacePatterns(ctx, tx, d.project, d.patterns, d.started); err != nil {
			return fmt.Errorf("patterns of %s: %w", d.project, err)
		}
	}
	return tx.Commit()
}

// derivePatterns reads one project's actions and derives its patterns; started is when it began.
func (a *Analyzer) derivePatterns(ctx context.Context, project string) (_ []store.Pattern, started int64, _ error) {
	started = a.now().UnixMilli()
	rows, err := a.reader().QueryContext(ctx, `SELECT client, session_id, type, target, ts FROM actions
		WHERE project = ? AND type IN ('run_command', 'edit_file', 'write_file', 'read_file') AND target != ''
		ORDER BY client, session_id, ts, id`, project)
	if err != nil {
		return nil, 0, err
	}
	d := newDeriver()
	var curClient, curSess string
	for rows.Next() {
		var cl, sid, typ, target string
		var ts int64
		if err := rows.Scan(&cl, &sid, &typ, &target, &ts); err != nil {
			rows.Close()
			return nil, 0, err
		}
		if cl != curClient || sid != curSess {
			d.endSession()
			curClient, curSess = cl, sid
		}
		d.add(typ, target, ts)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	d.endSession()
	ps := d.patterns(project)
	stored := make([]store.Pattern, len(ps))
	for i, p := range ps {
		stored[i] = store.Pattern{Kind: p.Kind, Key: p.Key, Detail: p.Detail, Confidence: p.Ratio, Occurrences: p.Support, LastSeen: p.LastSeen}
	}
	return stored, started, nil
}

// IsTestCommand reports whether a command line runs tests (go test, pytest, npm test, ...).
func IsTestCommand(cmd string) bool { return runsTests(cmd) }

// CommandHead is a command's program and subcommand: "go test ./..." is "go test".
func CommandHead(cmd string) string { return commandHead(cmd) }
