// Package freshness classifies what an agent's file reads saw, while observer-watch follows its
// session live, from content hashes of the files on disk.
//
// # What is hashed
//
// When observer-watch reads the result of a read_file, edit_file or write_file action (a tool call
// whose Success is known) whose time is within LiveWithin of the wall clock, it hashes the file
// the action names: the target joined to the event's project root (targets are relative to it),
// or the target itself when absolute. The hash is sha256 over the content, hex; a file larger than
// MaxHashBytes is hashed over its first MaxHashBytes, its size and its modification time, so a
// change past the cap still shows through the size or the time (and a mere touch of such a file
// reads as a change). The hash and the size go on the action (ContentHash, ContentSize), and the
// writer keeps the last one per project, path and session in file_state. History (`observerctl
// scan`, or records older than LiveWithin, such as a cold start's backlog) is never hashed: the
// file on disk now says nothing about what a read saw then.
//
// The hash is taken when the watcher sees the result, up to a poll interval (half a second) after
// the tool ran: a change within that window is attributed to the read. Two reads of a file in the
// same batch (a watcher catching up) see the same content.
//
// # Classes of a read_file result (Action.Freshness)
//
// Per session and file, the tracker remembers the hash of the session's previous read, the hash
// its own last successful edit or write of the file left (taken when that result was seen), which
// of the two came last ("last seen": the content the session last saw), and how many run_command
// events the session had at that point. A read is then, in this order:
//
//   - missing: the file is not on disk, or the read failed saying the file does not exist ("does
//     not exist", "no such file", "not found");
//   - fresh: the session never read, edited nor wrote the file before (its first read);
//   - changed_by_agent: the content differs from the session's previous read, and equals what the
//     session's own edit or write of the file, made after that read, left on disk;
//   - fresh: the content equals what the session last saw (its previous read, or its own edit or
//     write if that came later);
//   - stale: the content changed since the session last saw it, and the session ran commands
//     (run_command: sed, a formatter, git checkout, a build) in between: re-read after the file
//     changed in the session by other means than its edit tools;
//   - changed_elsewhere: the content changed since the session last saw it, and the session neither
//     edited the file nor ran any command in between: the user or another process changed it.
//
// A read that failed for another reason (too large, permission denied) has no class and changes
// nothing, since the agent saw no content; so has a read whose target cannot be resolved (no
// project, a target clipped by the reader) or is not a regular file. A failed edit or write
// changes nothing either.
//
// What a session has seen lives in the watcher's memory only, for SessionTTL after the session's
// last action: after a watcher restart, or a longer pause, a session's next read of a file counts
// as its first (file_state in the store keeps the last hash for queries, not for this). A Tracker
// is not safe for concurrent use.
package freshness

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
)

// MaxHashBytes is the most of a file that is hashed; see the package documentation.
const MaxHashBytes = 32 << 20

// LiveWithin is how close to the wall clock a result's time must be for the file on disk to stand
// for what the action saw or left.
const LiveWithin = 2 * time.Minute

// SessionTTL is how long what a session has seen is kept after its last classified action.
const SessionTTL = 24 * time.Hour

// maxTarget is the length (in runes) at which the transcript readers clip targets: a target that
// long may be a clipped path and is not resolved.
const maxTarget = 500

// Tracker remembers, per session and file, what the session saw, and classifies reads.
type Tracker struct {
	// Now is the wall clock; default time.Now.
	Now func() time.Time

	sessions map[skey]*session
	pruned   time.Time
}

type skey struct{ client, id string }

type session struct {
	commands int // run_command events seen
	seq      int // the order of the session's observations
	files    map[string]file
	used     time.Time
}

// file is what a session saw of one file. Hashes are "" for a file that was missing.
type file struct {
	read, own         string
	readSeq, ownSeq   int // 0: never read, never edited
	seen              string
	commandsWhenSeen  int
	hasRead, hasOwned bool
}

// New returns an empty tracker.
func New() *Tracker { return &Tracker{Now: time.Now, sessions: map[skey]*session{}} }

// Annotate classifies the live read_file results among evs and hashes the files of live
// read_file, edit_file and write_file results, setting Freshness, ContentHash and ContentSize on
// their actions in place. What the events teach the tracker is kept only when commit is called:
// call it once the events are published, so that events read again after a failed publication are
// classified against the same memory.
func (t *Tracker) Annotate(evs []event.Event) (commit func()) {
	now := t.now()
	pending := map[skey]*session{}
	for i := range evs {
		ev := &evs[i]
		if ev.Kind != event.KindAction || ev.Action == nil || ev.SessionID == "" {
			continue
		}
		k := skey{ev.Client, ev.SessionID}
		s := pending[k]
		if s == nil {
			s = t.copyOf(k)
			pending[k] = s
		}
		s.observe(ev, now)
	}
	return func() {
		for k, s := range pending {
			t.sessions[k] = s
		}
		t.prune(now)
	}
}

func (t *Tracker) now() time.Time {
	if t.Now == nil {
		return time.Now()
	}
	return t.Now()
}

func (t *Tracker) copyOf(k skey) *session {
	if t.sessions == nil {
		t.sessions = map[skey]*session{}
	}
	if s := t.sessions[k]; s != nil {
		c := *s
		c.files = make(map[string]file, len(s.files))
		for p, f := range s.files {
			c.files[p] = f
		}
		return &c
	}
	return &session{files: map[string]file{}}
}

// prune forgets sessions unused for SessionTTL, at most once a minute.
func (t *Tracker) prune(now time.Time) {
	if now.Sub(t.pruned) < time.Minute {
		return
	}
	t.pruned = now
	for k, s := range t.sessions {
		if now.Sub(s.used) > SessionTTL {
			delete(t.sessions, k)
		}
	}
}

// observe takes one action event of the session.
func (s *session) observe(ev *event.Event, now time.Time) {
	a := ev.Action
	s.used = now
	if a.Type == event.ActionRunCommand {
		// Call and result both count: only "did the count move" matters.
		s.commands++
		return
	}
	if a.Type != event.ActionReadFile && a.Type != event.ActionEditFile && a.Type != event.ActionWriteFile {
		return
	}
	if a.Success == nil || !live(ev.Time, now) {
		return
	}
	path := Resolve(ev.Project, a.Target)
	if path == "" {
		return
	}
	if a.Type == event.ActionReadFile {
		s.read(a, path)
	} else if *a.Success {
		s.edited(a, path)
	}
}

func live(at, now time.Time) bool {
	d := now.Sub(at)
	return d <= LiveWithin && d >= -LiveWithin
}

// Resolve returns the file an action's target names: the target when absolute, else joined to the
// project root; "" when it cannot tell.
func Resolve(project, target string) string {
	if target == "" || utf8.RuneCountInString(target) >= maxTarget {
		return ""
	}
	if filepath.IsAbs(target) {
		return filepath.Clean(target)
	}
	if project == "" || !filepath.IsAbs(project) {
		return ""
	}
	return filepath.Join(project, target)
}

func (s *session) read(a *event.Action, path string) {
	notFound := !*a.Success && NotFound(a.Error)
	if !*a.Success && !notFound {
		return
	}
	hash, size, err := HashFile(path)
	missing := notFound || errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return
	}
	if missing {
		hash, size = "", 0
	}
	f := s.files[path]
	s.seq++
	a.Freshness = classify(f, hash, missing, s.commands)
	a.ContentHash, a.ContentSize = hash, size
	f.read, f.readSeq, f.hasRead = hash, s.seq, true
	f.seen, f.commandsWhenSeen = hash, s.commands
	s.files[path] = f
}

// classify applies the rules of the package documentation, in their order.
func classify(f file, hash string, missing bool, commands int) string {
	switch {
	case missing:
		return event.FreshnessMissing
	case !f.hasRead && !f.hasOwned:
		return event.FreshnessFresh
	case f.hasRead && hash != f.read && f.hasOwned && f.ownSeq > f.readSeq && hash == f.own:
		return event.FreshnessChangedByAgent
	case hash == f.seen:
		return event.FreshnessFresh
	case commands != f.commandsWhenSeen:
		return event.FreshnessStale
	default:
		return event.FreshnessChangedElsewhere
	}
}

func (s *session) edited(a *event.Action, path string) {
	hash, size, err := HashFile(path)
	if err != nil {
		return
	}
	a.ContentHash, a.ContentSize = hash, size
	f := s.files[path]
	s.seq++
	f.own, f.ownSeq, f.hasOwned = hash, s.seq, true
	f.seen, f.commandsWhenSeen = hash, s.commands
	s.files[path] = f
}

// NotFound reports whether a failed read's error says the file does not exist.
func NotFound(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "does not exist") || strings.Contains(m, "no such file") || strings.Contains(m, "not found")
}

// HashFile returns the hex sha256 of a regular file's content and its size, following the
// package's size cap. A missing file is an error wrapping fs.ErrNotExist.
func HashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("hash %s: not a regular file", path)
	}
	h := sha256.New()
	n, err := io.CopyN(h, f, MaxHashBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", 0, fmt.Errorf("hash %s: %w", path, err)
	}
	size := fi.Size()
	if n == MaxHashBytes && size > MaxHashBytes {
		var tail [16]byte
		binary.BigEndian.PutUint64(tail[:8], uint64(size))
		binary.BigEndian.PutUint64(tail[8:], uint64(fi.ModTime().UnixNano()))
		h.Write(tail[:])
	} else {
		size = n
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}
