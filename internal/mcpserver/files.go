package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/internal/freshness"
	"github.com/observerhq/observer/internal/query"
)

// act is one action in a list answer.
type act struct {
	ID     int64  `json:"id"`
	Ago    string `json:"ago,omitempty"`
	Sess   string `json:"sess,omitempty"`
	Type   string `json:"type,omitempty"`
	Target string `json:"target,omitempty"`
	OK     *bool  `json:"ok,omitempty"`
	Err    string `json:"err,omitempty"`
	Fresh  string `json:"fresh,omitempty"` // the watcher's class of a live read
	At     bool   `json:"at,omitempty"`    // the action list_actions_around was asked about

	ts                  int64 // kept for follow-up queries, not shown
	fullTarget, project string
}

// mtimeSlack: an action's time is its call's, a little before the tool touched the file, so a
// modification time up to this much later is the action's own.
const mtimeSlack = 2000

type freshAnswer struct {
	Path     string `json:"path"`
	State    string `json:"state"`        // fresh, changed, missing, unseen
	By       string `json:"by,omitempty"` // hash: content compared; mtime: only the modification time
	Size     int64  `json:"size,omitempty"`
	Modified string `json:"modified,omitempty"` // the file's modification time, as an age
	Seen     *act   `json:"seen,omitempty"`     // the last content hash recorded
	Read     *act   `json:"read,omitempty"`     // the last read
	Write    *act   `json:"write,omitempty"`    // the last edit or write
	Note     string `json:"note,omitempty"`
}

// fileFreshness compares the file on disk with what the store last recorded of it: the content
// hash observer-watch took at the last live read, edit or write (file_state), else, for history
// read without hashes, the modification time against the last recorded read or write.
func (s *Server) fileFreshness(ctx context.Context, db *dbh, in fileArgs) (any, error) {
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	sess := ""
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		sess = x.ID
	}
	relF, absF, realF, err := s.fileIn(ctx, db, proj, in.Path)
	if err != nil {
		return nil, err
	}
	now := s.now()
	ans := freshAnswer{Path: relF}
	file := query.FileRef{Project: proj, Rel: relF, Abs: absF}
	read, readTS, err := lastOn(ctx, db, now, file, []string{"read_file"}, sess)
	if err != nil {
		return nil, err
	}
	write, writeTS, err := lastOn(ctx, db, now, file, []string{"edit_file", "write_file"}, sess)
	if err != nil {
		return nil, err
	}
	ans.Read, ans.Write = read, write

	seen, hasSeen, err := query.LastFileState(ctx, db, file, sess)
	if err != nil {
		return nil, err
	}
	seenHash := seen.Hash
	if hasSeen {
		ans.Seen = &act{Ago: ago(now, seen.SeenAt), Sess: short(seen.SessionID)}
	}

	// The resolved path: what was decided on is what is read.
	fi, statErr := os.Stat(realF)
	switch {
	case errors.Is(statErr, fs.ErrNotExist):
		ans.State = "missing"
		return ans, nil
	case statErr != nil:
		return nil, statErr
	}
	ans.Size, ans.Modified = fi.Size(), ago(now, fi.ModTime().UnixMilli())
	switch {
	case hasSeen && seenHash != "":
		hash, _, err := freshness.HashFile(realF)
		if err != nil {
			return nil, err
		}
		ans.State, ans.By = "changed", "hash"
		if hash == seenHash {
			ans.State = "fresh"
		}
	case hasSeen: // recorded as missing, on disk now
		ans.State, ans.By = "changed", "hash"
	case read != nil || write != nil:
		ans.State, ans.By = "fresh", "mtime"
		if fi.ModTime().UnixMilli() > max(readTS, writeTS)+mtimeSlack {
			ans.State = "changed"
		}
	default:
		ans.State, ans.Note = "unseen", "no recorded session read or wrote it"
	}
	return ans, nil
}

// lastOn returns the newest action of the given types on a file.
func lastOn(ctx context.Context, db *dbh, now int64, file query.FileRef, types []string, sess string) (*act, int64, error) {
	r, ok, err := query.LastActionOn(ctx, db, file, types, sess)
	if err != nil || !ok {
		return nil, 0, err
	}
	a := act{ID: r.ID, Type: r.Type}
	a.Ago, a.Sess, a.OK = ago(now, r.TS), short(r.SessionID), r.Success
	if len(types) == 1 {
		a.Type = "" // the field name says it
	}
	return &a, r.TS, nil
}

type historyAnswer struct {
	Path string `json:"path"`
	N    int    `json:"n"` // all recorded actions on the file; acts holds the newest
	Acts []act  `json:"acts"`
}

func (s *Server) fileHistory(ctx context.Context, db *dbh, in historyArgs) (any, error) {
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	relF, absF, _, err := s.fileIn(ctx, db, proj, in.Path)
	if err != nil {
		return nil, err
	}
	ans := historyAnswer{Path: relF, Acts: []act{}}
	file := query.FileRef{Project: proj, Rel: relF, Abs: absF}
	if ans.N, err = query.CountFileActions(ctx, db, file); err != nil {
		return nil, err
	}
	rows, err := query.FileActions(ctx, db, file, limit(in.Limit, 20))
	if err != nil {
		return nil, err
	}
	now := s.now()
	for _, r := range rows {
		a := act{ID: r.ID, Type: r.Type, Fresh: r.Freshness}
		a.Ago, a.Sess, a.OK, a.Err = ago(now, r.TS), short(r.SessionID), r.Success, clip(r.Error, 120)
		ans.Acts = append(ans.Acts, a)
	}
	return ans, nil
}

// maxLinks bounds the symbolic links resolve follows, as the kernel's ELOOP does.
const maxLinks = 40

// fileIn resolves a tool's file argument (relative to the project, or absolute) and decides
// whether the tool may answer for it: only for a file inside the project, whose root must be the
// client's own project or one observer recorded, and not the file system root, and never for a
// file in observer's home (its bus token, its store). The decision is taken on the path with `..` and every symbolic link resolved
// (realF), on both sides, so that neither a link inside the project nor a project argument naming
// any directory reaches a file outside it. Without this an agent could learn through observer the
// size and age of any file the server can stat, /etc/shadow or bus.token, which its client would
// not show it. relF and absF are the forms the store records the file under.
func (s *Server) fileIn(ctx context.Context, db *dbh, proj, path string) (relF, absF, realF string, err error) {
	relF, absF = fileForms(proj, path)
	if absF == "" {
		return "", "", "", errors.New("path is relative and the project is unknown: pass an absolute path")
	}
	if proj != s.opts.Project {
		ok, err := query.ProjectRecorded(ctx, db, proj)
		if err != nil {
			return "", "", "", err
		}
		if !ok {
			return "", "", "", fmt.Errorf("project %s is not recorded by observer: file tools answer for files of the client's project or of a recorded one", proj)
		}
	}
	realF, err = resolve(absF)
	if err != nil {
		return "", "", "", fmt.Errorf("path %s: %w", path, err)
	}
	realProj, err := resolve(proj)
	if err != nil {
		return "", "", "", fmt.Errorf("project %s: %w", proj, err)
	}
	if filepath.Dir(realProj) == realProj {
		// A client that spawns its servers in / (some desktop clients do) has no project.
		return "", "", "", fmt.Errorf("the project is the file system root %s: file tools answer for files of a project; pass project", realProj)
	}
	if !within(realProj, realF) {
		return "", "", "", fmt.Errorf("path %s is outside the project %s: file tools answer for files inside the project only", path, proj)
	}
	home := filepath.Clean(s.opts.Home)
	realHome, err := resolve(home)
	if err != nil {
		return "", "", "", err
	}
	if within(home, absF) || within(realHome, realF) {
		return "", "", "", fmt.Errorf("path %s is in observer's home %s: observer does not answer for its own files", path, home)
	}
	return relF, absF, realF, nil
}

// within reports whether path is root or lies below it; both are clean and absolute.
func within(root, path string) bool {
	r, err := filepath.Rel(root, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../") && !filepath.IsAbs(r)
}

// resolve returns the absolute path p with every symbolic link resolved, like
// filepath.EvalSymlinks, except that the file need not exist: the missing part is appended to its
// longest existing prefix, and a dangling link is followed to where it points.
func resolve(p string) (string, error) {
	p = filepath.Clean(p)
	rest := ""
	for links := 0; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if target, lerr := os.Readlink(p); lerr == nil { // a dangling link: follow it
			if links++; links > maxLinks {
				return "", errors.New("too many levels of symbolic links")
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			p = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), nil
		}
		rest, p = filepath.Join(filepath.Base(p), rest), parent
	}
}
