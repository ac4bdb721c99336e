package dash

// Patterns (/api/patterns): habits found in the sessions.
//
// When the store's patterns table has rows (for the project filter, when one is set; seen within
// the window), they are shown as stored ("source": "stored"). Otherwise the patterns are derived
// on the fly from the window's actions ("source": "derived"), as simple counts:
//   - command_pair: command B run right after command A in a session. Commands are compared by
//     their head (the program and its subcommand: "go test", "npm run", "git status"), since
//     whole command lines rarely repeat. Support: times B followed A; confidence: that over the
//     times A was followed by any command.
//   - co_edit: two files edited (edit_file or write_file) in the same session. Support: sessions
//     editing both; confidence: that over the sessions editing the less edited of the two.
//   - edit_then_test: per project, a run of edits followed by a test command (go test, pytest,
//     npm/yarn/pnpm test, cargo test, jest, vitest, make test, ...) as the next command. Support:
//     edit runs followed by a test; confidence: that over edit runs followed by any command.
//   - hot_file: the files with the most reads, edits and writes. Support: sessions touching the
//     file; confidence: that over the project's sessions that touched any file.
//
// Only patterns seen at least twice are listed, the patternLimit strongest of each kind.

import (
	"cmp"
	"context"
	"database/sql"
	"regexp"
	"slices"
	"strings"
)

const (
	patternLimit      = 25
	maxFilesPerSess   = 60 // co_edit pairs are quadratic in a session's edited files
	minPatternSupport = 2
)

// Pattern is one row of /api/patterns.
type Pattern struct {
	Kind       string  `json:"kind"`
	Project    string  `json:"project"`
	Key        string  `json:"key"`
	Detail     string  `json:"detail"`
	Support    int64   `json:"support"`
	Confidence float64 `json:"confidence"`
	LastSeen   int64   `json:"last_seen"`
}

// Patterns is the answer of /api/patterns.
type Patterns struct {
	Store    bool      `json:"store"`
	Filters  filters   `json:"filters"`
	Source   string    `json:"source"` // stored or derived
	Patterns []Pattern `json:"patterns"`
}

func (s *Server) patternsAPI(ctx context.Context, q *query) (any, error) {
	f := q.filters()
	kind := q.name("kind")
	if err := q.done(); err != nil {
		return nil, err
	}
	p := &Patterns{Filters: f, Source: "derived", Patterns: []Pattern{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return p, err
	}
	p.Store = true
	stored, err := storedPatterns(ctx, db, f)
	if err != nil {
		return nil, err
	}
	if len(stored) > 0 {
		p.Source, p.Patterns = "stored", stored
	} else if p.Patterns, err = derivePatterns(ctx, db, f); err != nil {
		return nil, err
	}
	if kind != "" {
		p.Patterns = slices.DeleteFunc(p.Patterns, func(x Pattern) bool { return x.Kind != kind })
	}
	return p, nil
}

func storedPatterns(ctx context.Context, db *sql.DB, f filters) ([]Pattern, error) {
	c := &conds{}
	if ms := f.sinceMs(); ms > 0 {
		c.add("last_seen >= :since", sql.Named("since", ms))
	}
	if f.Project != "" {
		c.add("project = :project", sql.Named("project", f.Project))
	}
	rows, err := db.QueryContext(ctx, "SELECT kind, project, key, detail, occurrences, confidence, last_seen FROM patterns"+c.sql()+
		" ORDER BY kind, occurrences * confidence DESC LIMIT 500", c.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Pattern
	for rows.Next() {
		var p Pattern
		if err := rows.Scan(&p.Kind, &p.Project, &p.Key, &p.Detail, &p.Support, &p.Confidence, &p.LastSeen); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

var testCmdRe = regexp.MustCompile(`(^|[\s;&|/])(go test|pytest|py\.test|(npm|yarn|pnpm|bun)( run)? test|cargo (test|nextest)|jest|vitest|mocha|rspec|make (test|check)|tox|phpunit|mvn test|gradle test|dotnet test|ctest)\b`)

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

// deriver accumulates the derived patterns over the actions, session by session.
type deriver struct {
	pair, pairFrom map[[2]string]int64 // [project, "A → B"], [project, A]
	pairLast       map[[2]string]int64
	fileSess       map[[2]string]int64 // [project, file]: sessions touching it
	fileLast       map[[2]string]int64
	editSess       map[[2]string]int64 // [project, file]: sessions editing it
	coEdit         map[[3]string]int64 // [project, a, b]: sessions editing both
	projSess       map[string]int64    // project: sessions touching any file
	streaks, tests map[string]int64    // project: edit runs followed by a command / by a test

	// the current session
	lastCmd  string
	editing  bool
	touched  map[string]bool
	edited   map[string]bool
	project  string
	lastSeen int64
}

func (d *deriver) endSession() {
	if len(d.touched) > 0 {
		d.projSess[d.project]++
	}
	for f := range d.touched {
		d.fileSess[[2]string{d.project, f}]++
	}
	files := make([]string, 0, len(d.edited))
	for f := range d.edited {
		d.editSess[[2]string{d.project, f}]++
		files = append(files, f)
	}
	slices.Sort(files)
	files = files[:min(len(files), maxFilesPerSess)]
	for i, a := range files {
		for _, b := range files[i+1:] {
			d.coEdit[[3]string{d.project, a, b}]++
		}
	}
	d.lastCmd, d.editing = "", false
	d.touched, d.edited = map[string]bool{}, map[string]bool{}
}

func (d *deriver) add(project, typ, target string, ts int64) {
	d.project, d.lastSeen = project, ts
	switch typ {
	case "run_command":
		head := commandHead(target)
		if head == "" {
			return
		}
		if d.editing {
			d.streaks[project]++
			if testCmdRe.MatchString(target) {
				d.tests[project]++
			}
			d.editing = false
		}
		if d.lastCmd != "" && d.lastCmd != head {
			k := [2]string{project, d.lastCmd + " → " + head}
			d.pair[k]++
			d.pairLast[k] = ts
			d.pairFrom[[2]string{project, d.lastCmd}]++
		}
		d.lastCmd = head
	case "edit_file", "write_file":
		d.editing = true
		d.edited[target] = true
		d.touched[target] = true
		d.fileLast[[2]string{project, target}] = ts
	case "read_file":
		d.touched[target] = true
		d.fileLast[[2]string{project, target}] = ts
	}
}

func derivePatterns(ctx context.Context, db *sql.DB, f filters) ([]Pattern, error) {
	c := filterConds(f, "ts")
	c.add("type IN ('run_command', 'edit_file', 'write_file', 'read_file')")
	c.add("target != ''")
	rows, err := db.QueryContext(ctx, "SELECT client, session_id, project, type, target, ts FROM actions"+c.sql()+
		" ORDER BY client, session_id, ts, id", c.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d := &deriver{pair: map[[2]string]int64{}, pairFrom: map[[2]string]int64{}, pairLast: map[[2]string]int64{},
		fileSess: map[[2]string]int64{}, fileLast: map[[2]string]int64{}, editSess: map[[2]string]int64{},
		coEdit: map[[3]string]int64{}, projSess: map[string]int64{}, streaks: map[string]int64{}, tests: map[string]int64{},
		touched: map[string]bool{}, edited: map[string]bool{}}
	var curClient, curSess string
	lastTest := map[string]int64{}
	for rows.Next() {
		var cl, sid, proj, typ, target string
		var ts int64
		if err := rows.Scan(&cl, &sid, &proj, &typ, &target, &ts); err != nil {
			return nil, err
		}
		if cl != curClient || sid != curSess {
			d.endSession()
			curClient, curSess = cl, sid
		}
		if typ == "run_command" && testCmdRe.MatchString(target) {
			lastTest[proj] = max(lastTest[proj], ts)
		}
		d.add(proj, typ, target, ts)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	d.endSession()
	return d.patterns(lastTest), nil
}

func (d *deriver) patterns(lastTest map[string]int64) []Pattern {
	var out []Pattern
	top := func(ps []Pattern) {
		slices.SortStableFunc(ps, func(a, b Pattern) int {
			if c := cmp.Compare(b.Support, a.Support); c != 0 {
				return c
			}
			if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
				return c
			}
			return cmp.Compare(a.Key, b.Key)
		})
		out = append(out, ps[:min(len(ps), patternLimit)]...)
	}
	var ps []Pattern
	for k, n := range d.pair {
		if n < minPatternSupport {
			continue
		}
		from := strings.SplitN(k[1], " → ", 2)[0]
		ps = append(ps, Pattern{Kind: "command_pair", Project: k[0], Key: k[1], Support: n,
			Confidence: float64(n) / float64(d.pairFrom[[2]string{k[0], from}]), LastSeen: d.pairLast[k],
			Detail: "run right after " + from})
	}
	top(ps)
	ps = nil
	for k, n := range d.coEdit {
		if n < minPatternSupport {
			continue
		}
		a, b := d.editSess[[2]string{k[0], k[1]}], d.editSess[[2]string{k[0], k[2]}]
		ps = append(ps, Pattern{Kind: "co_edit", Project: k[0], Key: k[1] + " + " + k[2], Support: n,
			Confidence: float64(n) / float64(min(a, b)), LastSeen: max(d.fileLast[[2]string{k[0], k[1]}], d.fileLast[[2]string{k[0], k[2]}]),
			Detail: "edited in the same session"})
	}
	top(ps)
	ps = nil
	for proj, n := range d.tests {
		if n < minPatternSupport {
			continue
		}
		ps = append(ps, Pattern{Kind: "edit_then_test", Project: proj, Key: "edit → test", Support: n,
			Confidence: float64(n) / float64(d.streaks[proj]), LastSeen: lastTest[proj],
			Detail: "edits followed by a test command as the next command"})
	}
	top(ps)
	ps = nil
	for k, n := range d.fileSess {
		if n < minPatternSupport {
			continue
		}
		ps = append(ps, Pattern{Kind: "hot_file", Project: k[0], Key: k[1], Support: n,
			Confidence: float64(n) / float64(d.projSess[k[0]]), LastSeen: d.fileLast[k],
			Detail: "read or edited in many of the project's sessions"})
	}
	top(ps)
	if out == nil {
		out = []Pattern{}
	}
	return out
}
