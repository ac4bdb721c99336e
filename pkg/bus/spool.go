package bus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// Spool is a directory of JSON-lines files holding events that could not be published. Any number
// of processes append to it, each to files of its own; any process connected to the bus drains it.
//
// A file is named <unix-nanos>-<pid>-<seq>.jsonl, so a sorted listing is the order the events were
// spooled in. The appender holds an exclusive flock on its file while it may still write to it, and
// makes the file visible under its .jsonl name only after taking that lock, so a drainer (which
// takes the same lock without blocking) never reads a file that is still being written. Lines that
// do not decode, including a last line cut short, are moved to corrupt/ beside a note of why, and
// never block the rest.
type Spool struct {
	dir    string
	logger *slog.Logger

	mu  sync.Mutex
	f   *os.File
	seq int
}

// ErrCorruptSpool reports that a drain found lines it could not decode; they were kept in corrupt/.
var ErrCorruptSpool = errors.New("corrupt spool lines quarantined")

// OpenSpool makes dir (0700) and returns a spool on it.
func OpenSpool(dir string, logger *slog.Logger) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: create %s: %w", dir, err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Spool{dir: dir, logger: logger}, nil
}

// Dir returns the spool directory.
func (s *Spool) Dir() string { return s.dir }

// Append writes one encoded event as a line of the current file, creating it when needed.
func (s *Spool) Append(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		if err := s.create(); err != nil {
			return err
		}
	}
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	end, serr := s.f.Seek(0, io.SeekEnd)
	if _, err := s.f.Write(line); err != nil {
		// A full disk takes part of a line: cut it off, or the next line would append to it and
		// both be quarantined as corrupt.
		if serr == nil {
			s.f.Truncate(end)
		}
		return fmt.Errorf("spool: write %s: %w", s.f.Name(), err)
	}
	return nil
}

func (s *Spool) create() error {
	s.seq++
	base := fmt.Sprintf("%020d-%d-%d", time.Now().UnixNano(), os.Getpid(), s.seq)
	tmp := filepath.Join(s.dir, base+".partial")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spool: create %s: %w", tmp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("spool: lock %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, base+".jsonl")); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("spool: publish %s: %w", tmp, err)
	}
	s.f = f
	return nil
}

// Rotate closes the current file, so a drain can take it. The next Append starts a new one.
func (s *Spool) Rotate() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeLocked()
}

func (s *Spool) closeLocked() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// HasOpenFile reports whether this spool holds a file open for appending, that is, whether it
// has appended since its last Rotate.
func (s *Spool) HasOpenFile() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f != nil
}

// Close closes the current file. Spooled events stay on disk for a later drain.
func (s *Spool) Close() error { return s.Rotate() }

// Files lists the spool files in the order they were written.
func (s *Spool) Files() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, filepath.Join(s.dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// DrainReport counts what a drain did.
type DrainReport struct {
	Files     int // files fully drained and removed
	Events    int // events handed to publish
	Corrupt   int // lines moved to corrupt/
	Busy      int // files skipped because another process holds them
	Remaining int // files left because publishing failed
}

// Drain publishes every spooled event, oldest file first, removing each file once all its lines
// are published. It stops at the first publish error, leaving that file for the next drain; lines
// already published from it are published again then, which the bus and the writer de-duplicate.
// The error wraps ErrCorruptSpool when lines were quarantined.
func (s *Spool) Drain(ctx context.Context, publish func(ctx context.Context, ev *event.Event, raw []byte) error) (DrainReport, error) {
	var rep DrainReport
	if err := s.Rotate(); err != nil {
		return rep, err
	}
	files, err := s.Files()
	if err != nil {
		return rep, err
	}
	for i, path := range files {
		if ctx.Err() != nil {
			rep.Remaining += len(files) - i
			return rep, ctx.Err()
		}
		n, corrupt, busy, err := s.drainFile(ctx, path, publish)
		rep.Events += n
		rep.Corrupt += corrupt
		switch {
		case busy:
			rep.Busy++
		case err != nil:
			rep.Remaining += len(files) - i
			return rep, err
		default:
			rep.Files++
		}
	}
	if rep.Corrupt > 0 {
		return rep, fmt.Errorf("%w: %d line(s), kept in %s", ErrCorruptSpool, rep.Corrupt, filepath.Join(s.dir, "corrupt"))
	}
	return rep, nil
}

func (s *Spool) drainFile(ctx context.Context, path string, publish func(context.Context, *event.Event, []byte) error) (n, corrupt int, busy bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, true, nil // another drainer finished it
		}
		return 0, 0, false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return 0, 0, true, nil
	}
	if _, err := os.Stat(path); err != nil { // removed between open and lock
		return 0, 0, true, nil
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, rerr := r.ReadBytes('\n')
		if len(line) == 0 && rerr == io.EOF {
			break
		}
		if rerr != nil && rerr != io.EOF {
			return n, corrupt, false, fmt.Errorf("spool: read %s: %w", path, rerr)
		}
		complete := rerr == nil
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		var reason string
		ev, derr := event.Decode(body)
		switch {
		case !complete:
			reason = "truncated last line (no newline)"
		case derr != nil:
			reason = derr.Error()
		}
		if reason != "" {
			corrupt++
			if qerr := s.quarantine(path, lineNo, body, reason); qerr != nil {
				return n, corrupt, false, qerr
			}
			continue
		}
		if err := publish(ctx, &ev, body); err != nil {
			return n, corrupt, false, err
		}
		n++
	}
	if err := os.Remove(path); err != nil {
		return n, corrupt, false, err
	}
	return n, corrupt, false, nil
}

// quarantine keeps a line that could not be decoded in corrupt/<file>, with a note of the reason
// in corrupt/<file>.why, and logs it.
func (s *Spool) quarantine(path string, lineNo int, body []byte, reason string) error {
	dir := filepath.Join(s.dir, "corrupt")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	name := filepath.Join(dir, filepath.Base(path))
	if err := appendFile(name, append(append([]byte{}, body...), '\n')); err != nil {
		return err
	}
	note := filepath.Base(path) + ":" + strconv.Itoa(lineNo) + ": " + reason + "\n"
	if err := appendFile(name+".why", []byte(note)); err != nil {
		return err
	}
	s.logger.Warn("corrupt spool line quarantined", "file", path, "line", lineNo, "reason", reason, "kept_in", name)
	return nil
}

func appendFile(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
