package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/observerhq/observer/internal/query"
)

// Limits every list answer follows: a default when the agent names none, and a cap.
const (
	defLimit   = 10
	maxLimit   = 100
	sessPrefix = 8 // characters of a session id shown in lists
)

func limit(n, def int) int {
	switch {
	case n <= 0:
		return def
	case n > maxLimit:
		return maxLimit
	}
	return n
}

// projectOf resolves a tool's project argument: empty means the server's own project; a path is
// the project it belongs to (a subdirectory of a recorded project counts for it); a bare name is
// the most recently active recorded project of that base name.
func (s *Server) projectOf(ctx context.Context, db *dbh, arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		if s.opts.Project == "" {
			return "", errors.New("no project: the server has no working directory project; pass project")
		}
		return s.opts.Project, nil
	}
	if !filepath.IsAbs(arg) {
		p, ok, err := query.ProjectNamed(ctx, db, arg)
		if err == nil && !ok {
			return "", fmt.Errorf("no recorded project named %q: pass its absolute path", arg)
		}
		return p, err
	}
	arg = filepath.Clean(arg)
	// A recorded project that holds the path, nearest first: the store knows projects whose
	// directories may not exist on this machine (or not any more).
	for d := arg; ; d = filepath.Dir(d) {
		if ok, err := query.ProjectRecorded(ctx, db, d); err != nil {
			return "", err
		} else if ok {
			return d, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	// Not recorded: the client's own project when the path lies in it (it may not be recorded
	// yet), else the path itself, which nothing is recorded for. The file system is not searched
	// for a repository root: observer reads nothing outside the client's project on an agent's word.
	if s.opts.Project != "" && within(s.opts.Project, arg) {
		return s.opts.Project, nil
	}
	return arg, nil
}

// session is the session a tool resolved: the read model's row, and its id under the name the
// tools use.
type session struct {
	query.Session
	ID string // Session.SessionID
}

func sessionOfRow(x query.Session) session { return session{Session: x, ID: x.SessionID} }

// notice is an answer rather than a failure: nothing is recorded for what the agent asked about.
// The tool returns its text as a normal result.
type notice string

func (n notice) Error() string { return string(n) }

// sessionOf resolves a tool's session argument (an id or a prefix of one), or, without one, the
// client's own session (Options.Session) unless another project is asked for, else the most
// recently active session of the project argument's project.
func (s *Server) sessionOf(ctx context.Context, db *dbh, arg, projectArg string) (session, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" && strings.TrimSpace(projectArg) == "" && s.opts.Session != "" {
		x, ok, err := query.FindSession(ctx, db, s.opts.Session, "")
		if ok || err != nil {
			return sessionOfRow(x), err
		}
		// Not recorded yet (the watcher has not seen its transcript): the project's latest.
	}
	if arg == "" {
		p, err := s.projectOf(ctx, db, projectArg)
		if err != nil {
			return session{}, err
		}
		x, ok, err := query.LatestSessionOf(ctx, db, p)
		if err == nil && !ok {
			return session{}, notice("no session recorded for project " + p)
		}
		return sessionOfRow(x), err
	}
	x, ok, err := query.FindSession(ctx, db, arg, "")
	if ok || err != nil {
		return sessionOfRow(x), err
	}
	// A prefix.
	found, err := query.SessionsByPrefix(ctx, db, arg, 2)
	if err != nil {
		return session{}, err
	}
	switch {
	case len(found) == 0:
		return session{}, fmt.Errorf("no session %q recorded", arg)
	case len(found) > 1 && found[0].SessionID != found[1].SessionID:
		return session{}, fmt.Errorf("session prefix %q is ambiguous (%s, %s, ...): give more characters", arg, found[0].SessionID, found[1].SessionID)
	}
	return sessionOfRow(found[0]), nil
}

// rel shows a target relative to the project when it lies inside it.
func rel(project, target string) string {
	if project == "" || !filepath.IsAbs(target) {
		return target
	}
	r, err := filepath.Rel(project, target)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return target
	}
	return r
}

// fileForms returns the two ways a file can be recorded as a target: relative to the project
// (the readers' form for files inside it) and absolute (some tools, Codex's shell reads).
func fileForms(project, path string) (relForm, absForm string) {
	path = strings.TrimSpace(path)
	if filepath.IsAbs(path) {
		absForm = filepath.Clean(path)
		return rel(project, absForm), absForm
	}
	relForm = filepath.Clean(path)
	if project != "" {
		absForm = filepath.Join(project, relForm)
	}
	return relForm, absForm
}

// short shortens a session id for lists, keeping what tells sessions apart: the first 8
// characters of a random (v4) UUID; the 48-bit millisecond time that leads a v7 UUID (Codex's),
// since its first 8 characters change only every 65 seconds; and any other id whole.
func short(id string) string {
	if !isUUID(id) {
		return id
	}
	if id[14] == '7' {
		return id[:13]
	}
	return id[:sessPrefix]
}

func isUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, c := range id {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ago renders the time from ts to now (ms) coarsely: agents need "a minute" against "a week",
// not milliseconds.
func ago(now, ts int64) string {
	d := (now - ts) / 1000
	switch {
	case d < 0:
		return "0s"
	case d < 120:
		return fmt.Sprintf("%ds", d)
	case d < 120*60:
		return fmt.Sprintf("%dm", d/60)
	case d < 48*3600:
		return fmt.Sprintf("%dh", d/3600)
	}
	return fmt.Sprintf("%dd", d/86400)
}

// dur renders a duration in ms the same way.
func dur(ms int64) string { return ago(ms, 0) }

// clip keeps at most n bytes of s, cut at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// clipTail keeps the last n bytes of s: test and build output ends with the verdict.
func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

// clipMiddle keeps the head and the tail of s within n bytes: the command's start says what ran,
// its end how it ended.
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := n / 4
	return strings.TrimSuffix(clip(s, head), "…") + fmt.Sprintf("\n…[%d bytes cut]…\n", len(s)-n) +
		strings.TrimPrefix(clipTail(s, n-head), "…")
}
