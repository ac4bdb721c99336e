package memory

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// The observation kinds (internal/query defines them, with the rows it reads back).
const (
	KindTestCommand    = query.KindTestCommand
	KindBuildCommand   = query.KindBuildCommand
	KindFailingCommand = query.KindFailingCommand
	KindCoChange       = query.KindCoChange
	KindChangeArea     = query.KindChangeArea
)

var buildRe = regexp.MustCompile(`(^|[\s;&|/])(go build|go vet|make( [a-z][a-z0-9_-]*)?$|make build|(npm|yarn|pnpm|bun)( run)? build|cargo (build|check)|tsc\b|mvn (package|compile|install)|gradle (build|assemble)|dotnet build|cmake --build|ninja\b|bazel build)`)

// buildWords holds, for each command buildRe matches, a word the command contains: the expression
// runs only on a command holding one (as analysis.IsTestCommand does with its own).
var buildWords = []string{"build", "vet", "make", "check", "tsc", "mvn", "gradle", "ninja"}

// buildsCode reports whether cmd builds or checks code (buildRe).
func buildsCode(cmd string) bool {
	return slices.ContainsFunc(buildWords, func(w string) bool { return strings.Contains(cmd, w) }) && buildRe.MatchString(cmd)
}

// Observation and Evidence are the rows the memory loop writes and internal/query reads back.
type (
	Observation = query.Observation
	Evidence    = query.Evidence
)

// maxEvidence is how many actions an observation keeps as evidence (the newest).
const maxEvidence = 5

// obs accumulates one observation across a project's sessions.
type obs struct {
	kind, key, text string
	support, contra int
	first, last     int64
	evidence        []Evidence // the newest maxEvidence, oldest first
	evTS            []int64    // their times
	// A test command's runs: whether the command itself ran (whole), and the newest of the
	// narrower runs that count for it (one file, one test: TestCommand).
	whole    bool
	narrow   string
	narrowAt int64
}

func (o *obs) confirm(ts int64, ev Evidence) {
	o.support++
	if o.first == 0 || ts < o.first {
		o.first = ts
	}
	o.last = max(o.last, ts)
	// Keep the newest few, in time order (sessions come in id order, not time order).
	i, _ := slices.BinarySearch(o.evTS, ts)
	o.evTS = slices.Insert(o.evTS, i, ts)
	o.evidence = slices.Insert(o.evidence, i, ev)
	if len(o.evidence) > maxEvidence {
		o.evTS, o.evidence = o.evTS[1:], o.evidence[1:]
	}
}

// sessAct is an action of the project, as Observe reads it.
type sessAct struct {
	client, session, id, typ, target string
	ts                               int64
	success                          sql.NullBool
}

// Derive computes a project's observations from its actions (ordered by session, then time).
func Derive(acts []sessAct) []*obs {
	found := map[string]*obs{}
	get := func(kind, key, text string) *obs {
		k := kind + "\x00" + key
		o := found[k]
		if o == nil {
			o = &obs{kind: kind, key: key, text: text}
			found[k] = o
		}
		return o
	}
	// Per session: each command's runs (ok, failed, last ok event), the files changed.
	type cmdRuns struct {
		ok, failed int
		okID       string
		failID     string
		okAt, last int64
	}
	sessions := 0
	areaSess := map[string]int{}
	for i := 0; i < len(acts); {
		j := i
		for j < len(acts) && acts[j].client == acts[i].client && acts[j].session == acts[i].session {
			j++
		}
		sess := acts[i:j]
		i = j
		cmds := map[string]*cmdRuns{}
		changed := map[string]sessAct{}
		for _, a := range sess {
			switch a.typ {
			case string(event.ActionRunCommand):
				c := normCommand(a.target)
				r := cmds[c]
				if r == nil {
					r = &cmdRuns{}
					cmds[c] = r
				}
				r.last = a.ts
				if a.success.Valid && a.success.Bool {
					r.ok++
					r.okID, r.okAt = a.id, a.ts
				} else if a.success.Valid {
					r.failed++
					r.failID = a.id
				}
			case string(event.ActionEditFile), string(event.ActionWriteFile):
				if a.success.Valid && !a.success.Bool || a.target == "" {
					continue
				}
				changed[a.target] = a
			}
		}
		ev := func(id string) Evidence {
			return Evidence{Client: sess[0].client, SessionID: sess[0].session, EventID: id}
		}
		// A test command's runs in the session: its own and its narrower ones (TestCommand).
		tests := map[string]*cmdRuns{}
		for c, r := range cmds {
			switch commandKind(c) {
			case "build":
				o := get(KindBuildCommand, c, fmt.Sprintf("builds with `%s`", c))
				if r.ok > 0 {
					o.confirm(r.last, ev(r.okID))
				} else if r.failed > 0 && o.support > 0 {
					o.contra++ // it never worked in this session
				}
			case "test":
				key := TestCommand(c)
				o := get(KindTestCommand, key, "")
				if c == key {
					o.whole = true
				} else if r.last > o.narrowAt || r.last == o.narrowAt && c < o.narrow {
					o.narrow, o.narrowAt = c, r.last
				}
				t := tests[key]
				if t == nil {
					t = &cmdRuns{}
					tests[key] = t
				}
				t.failed += r.failed
				t.last = max(t.last, r.last)
				if r.ok > 0 {
					t.ok += r.ok
					if r.okAt > t.okAt || r.okAt == t.okAt && r.okID > t.okID {
						t.okID, t.okAt = r.okID, r.okAt
					}
				}
			}
			if r.failed > 0 || r.ok > 0 {
				o := get(KindFailingCommand, c, fmt.Sprintf("`%s` fails", c))
				if r.ok == 0 {
					o.confirm(r.last, ev(r.failID))
				} else {
					o.contra++
				}
			}
		}
		for key, r := range tests {
			o := get(KindTestCommand, key, "")
			if r.ok > 0 {
				o.confirm(r.last, ev(r.okID))
			} else if r.failed > 0 && o.support > 0 {
				o.contra++ // it never worked in this session
			}
		}
		files := make([]string, 0, len(changed))
		for f := range changed {
			files = append(files, f)
		}
		slices.Sort(files)
		if len(files) > 40 {
			files = files[:40] // pairs are quadratic in a session's changed files
		}
		for x := 0; x < len(files); x++ {
			for y := x + 1; y < len(files); y++ {
				a, b := changed[files[x]], changed[files[y]]
				o := get(KindCoChange, files[x]+" + "+files[y], fmt.Sprintf("%s and %s change together", files[x], files[y]))
				o.confirm(max(a.ts, b.ts), ev(b.id))
			}
		}
		if len(changed) > 0 {
			sessions++
			areas := map[string]sessAct{}
			for f, a := range changed {
				areas[area(f)] = a
			}
			for ar, a := range areas {
				areaSess[ar]++
				o := get(KindChangeArea, ar, fmt.Sprintf("changes happen in %s", ar))
				o.confirm(a.ts, ev(a.id))
			}
		}
	}
	var out []*obs
	for _, o := range found {
		switch o.kind {
		case KindFailingCommand:
			// Only a command that failed in two sessions or more, and never worked since.
			if o.support < 2 {
				continue
			}
			o.text = fmt.Sprintf("`%s` fails (in %d sessions)", o.key, o.support)
		case KindCoChange:
			if o.support < 2 {
				continue
			}
		case KindTestCommand:
			o.text = fmt.Sprintf("tests run with `%s`", o.key)
			if !o.whole && o.narrow != "" {
				o.text += fmt.Sprintf(" (seen only narrowed to some tests, as `%s`)", clip(o.narrow, 120))
			}
		case KindChangeArea:
			// An area most sessions that change files change: the others contradict it.
			o.contra = sessions - o.support
			if o.support < 2 || o.support*2 < sessions {
				continue
			}
			o.text = fmt.Sprintf("changes happen in %s (%d of %d sessions that changed files)", o.key, o.support, sessions)
		}
		if o.support == 0 {
			continue
		}
		out = append(out, o)
	}
	// The strongest perKind of each kind: a project with many files has many pairs that changed
	// together by chance.
	slices.SortFunc(out, func(a, b *obs) int {
		return cmp.Or(strings.Compare(a.kind, b.kind), cmp.Compare(b.support, a.support), cmp.Compare(b.last, a.last), strings.Compare(a.key, b.key))
	})
	kept := out[:0]
	n := 0
	for i, o := range out {
		if i > 0 && o.kind != out[i-1].kind {
			n = 0
		}
		if n < perKind {
			kept = append(kept, o)
		}
		n++
	}
	slices.SortFunc(kept, func(a, b *obs) int { return cmp.Or(strings.Compare(a.kind, b.kind), strings.Compare(a.key, b.key)) })
	return kept
}

// perKind is how many observations of each kind a project keeps, the best supported.
const perKind = 50

// area is the directory a file's change lands in: its first two directories ("services/api").
func area(file string) string {
	dir := path.Dir(strings.TrimPrefix(file, "./"))
	if dir == "." || dir == "/" || dir == "" {
		return "the project root"
	}
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return strings.Join(parts, "/")
}

// Observe recomputes a project's observations from all its actions (read on rdb) and writes them
// (on wdb) in one transaction: new ones added, changed ones updated, ones no longer found
// removed; forgotten ones stay forgotten.
func Observe(ctx context.Context, rdb, wdb *sql.DB, project string, now time.Time) (int, error) {
	rows, err := rdb.QueryContext(ctx, `SELECT client, session_id, event_id, type, target, ts, success FROM actions
		WHERE project = ? AND type IN ('run_command', 'edit_file', 'write_file') AND agent_id = '' AND sidechain = 0
		ORDER BY client, session_id, ts, id`, project)
	if err != nil {
		return 0, err
	}
	var acts []sessAct
	for rows.Next() {
		var a sessAct
		if err := rows.Scan(&a.client, &a.session, &a.id, &a.typ, &a.target, &a.ts, &a.success); err != nil {
			rows.Close()
			return 0, err
		}
		acts = append(acts, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	found := Derive(acts)
	tx, err := wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	stored := make([]store.Observation, len(found))
	for i, o := range found {
		evidence, _ := json.Marshal(o.evidence)
		stored[i] = store.Observation{Kind: o.kind, Key: o.key, Text: o.text, Support: o.support, Contradictions: o.contra,
			Confidence: query.Confidence(o.support, o.contra, o.last, now), FirstSeen: o.first, LastSeen: o.last,
			Evidence: string(evidence)}
	}
	if err := store.ReplaceObservations(ctx, tx, project, stored, now.UnixMilli()); err != nil {
		return 0, err
	}
	return len(found), tx.Commit()
}
