package proxy

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
	"strings"
	"sync"
	"syscall"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/observerhq/observer/pkg/event"
)

// journal is the proxy's write-ahead record of the events it has queued and not yet handed to the
// publisher: a proxy killed with kill -9 leaves it behind, and the next proxy on the same home
// publishes what it holds (see replayJournals).
//
// Each event is appended, as its JSON line, before it is queued: one write per turn (a turn and its
// compression events go together), without fsync. A kill leaves the written lines in the page
// cache, where the next process reads them; an OS crash or a power cut can lose the last ones,
// which the journal does not try to survive. The journal holds what the proxy would publish, so
// only scrubbed events, and never a request header.
//
// The journal is a series of segment files, <dir>/<pid>-<start nanos>-<seq>.jsonl. A segment
// counts the events written to it and not yet handed to the publisher (acked by the bus or spooled
// by its client, or refused); when that count falls to zero the current segment is truncated and
// an older one removed, so the journal holds at most what is queued, plus one segment's worth of
// published lines under steady load. A segment past journalSegmentBytes is set aside and a new
// one started.
//
// The process holds an exclusive flock on each of its segments for as long as it may write to
// it, and makes a segment visible under its .jsonl name only after taking that lock: a segment
// whose lock can be taken belongs to a process that is gone.
type journal struct {
	dir    string
	base   string
	logger *slog.Logger
	maxSeg int64

	mu      sync.Mutex
	cur     *segment
	segs    []*segment // every open segment, cur last
	seq     int
	closed  bool
	failing bool // the last write failed; logged once until one succeeds
}

// segment is one file of the journal.
type segment struct {
	f    *os.File
	path string
	size int64
	// pending counts the events written here that the publisher has not yet returned from.
	pending int
}

// journalSegmentBytes is the size past which a segment is set aside for a new one.
const journalSegmentBytes = 4 << 20

// openJournal makes dir (0700), takes the segments left there by processes that are gone (each
// returned open and locked, for replayJournals) and starts a journal of this process's own.
func openJournal(dir string, logger *slog.Logger) (*journal, []*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("journal: create %s: %w", dir, err)
	}
	orphans, err := orphanSegments(dir, logger)
	if err != nil {
		return nil, nil, err
	}
	j := &journal{dir: dir, base: fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()), logger: logger,
		maxSeg: journalSegmentBytes}
	if err := j.rotateLocked(); err != nil {
		for _, f := range orphans {
			f.Close()
		}
		return nil, nil, err
	}
	return j, orphans, nil
}

// orphanSegments returns the segments of dir no live process holds, oldest first, each open and
// locked. A .partial file over a minute old (a process killed between creating a segment and
// naming it; a younger one may be a starting proxy's, not yet locked) is removed.
func orphanSegments(dir string, logger *slog.Logger) ([]*os.File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: list %s: %w", dir, err)
	}
	var out []*os.File
	for _, e := range ents {
		name := e.Name()
		partial := strings.HasSuffix(name, ".partial")
		if !e.Type().IsRegular() || !(partial || strings.HasSuffix(name, ".jsonl")) {
			continue
		}
		if info, err := e.Info(); partial && (err != nil || time.Since(info.ModTime()) < time.Minute) {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if err != nil {
			continue // removed meanwhile by its owner
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close() // a live proxy's
			continue
		}
		if _, err := os.Stat(path); err != nil { // its owner removed it between open and lock
			f.Close()
			continue
		}
		if partial {
			os.Remove(path)
			f.Close()
			continue
		}
		out = append(out, f)
	}
	// Names sort by pid first; order by start time, then segment, so a proxy's events replay in
	// the order it wrote them.
	sort.Slice(out, func(a, b int) bool { return segmentOrder(out[a].Name()) < segmentOrder(out[b].Name()) })
	if len(out) > 0 {
		logger.Info("journals of a proxy that stopped without publishing them", "files", len(out), "dir", dir)
	}
	return out, nil
}

// segmentOrder is a segment's start time and sequence number, zero-padded to sort as text.
func segmentOrder(path string) string {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(path), ".jsonl"), "-")
	if len(parts) != 3 {
		return filepath.Base(path)
	}
	return fmt.Sprintf("%020s-%010s-%s", parts[1], parts[2], parts[0])
}

// rotateLocked starts a new segment; the current one, if any, stays open until its events are
// published.
func (j *journal) rotateLocked() error {
	j.seq++
	name := fmt.Sprintf("%s-%d", j.base, j.seq)
	tmp := filepath.Join(j.dir, name+".partial")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: create %s: %w", tmp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal: lock %s: %w", tmp, err)
	}
	path := filepath.Join(j.dir, name+".jsonl")
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal: name %s: %w", path, err)
	}
	j.cur = &segment{f: f, path: path}
	j.segs = append(j.segs, j.cur)
	return nil
}

var journalBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// write appends a turn's compression events and the turn to the journal in one write and returns
// the segment that holds them, nil when they could not be written (they are still published; the
// failure is logged).
func (j *journal) write(comps []event.Event, turn *event.Event) *segment {
	if j == nil {
		return nil
	}
	buf := journalBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 64<<10 {
			journalBuffers.Put(buf)
		}
	}()
	buf.Reset()
	// github.com/goccy/go-json writes the same JSON as encoding/json, 3-4x faster (pkg/bus's
	// codec, tested there): the journal is written on the client's path.
	enc := gojson.NewEncoder(buf)
	for i := range comps {
		if err := enc.Encode(&comps[i]); err != nil {
			j.logger.Error("compression event not journaled", "id", comps[i].ID, "err", err)
			return nil
		}
	}
	if err := enc.Encode(turn); err != nil {
		j.logger.Error("api turn not journaled", "id", turn.ID, "err", err)
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	if j.cur == nil || j.cur.size >= j.maxSeg {
		if err := j.rotateLocked(); err != nil {
			j.failed(err)
			return nil
		}
	}
	s := j.cur
	n, err := s.f.Write(buf.Bytes())
	if err != nil {
		if n > 0 {
			// A line cut short would spoil the next one: take it back.
			s.f.Truncate(s.size)
		}
		j.failed(fmt.Errorf("journal: write %s: %w", s.path, err))
		return nil
	}
	if j.failing {
		j.failing = false
		j.logger.Info("the proxy's journal is written again", "file", s.path)
	}
	s.size += int64(n)
	s.pending += len(comps) + 1
	return s
}

func (j *journal) failed(err error) {
	if !j.failing {
		j.failing = true
		j.logger.Error("the proxy's journal cannot be written: turns queued now are lost if the proxy is killed before it publishes them",
			"err", err)
	}
}

// published says that the publisher has returned from the events of segs (one entry per event,
// nil for an event not journaled). A segment none of whose events waits any more is truncated when
// it is the current one, removed otherwise.
func (j *journal) published(segs ...*segment) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	drained := false
	for _, s := range segs {
		if s != nil {
			s.pending--
			drained = drained || s.pending == 0
		}
	}
	if !drained {
		return
	}
	keep := j.segs[:0]
	for _, s := range j.segs {
		switch {
		case s.pending > 0:
		case s == j.cur:
			if s.size > 0 {
				if err := s.f.Truncate(0); err != nil {
					j.logger.Warn("the proxy's journal was not emptied", "file", s.path, "err", err)
				} else {
					s.size = 0
				}
			}
		default:
			os.Remove(s.path)
			s.f.Close()
			continue
		}
		keep = append(keep, s)
	}
	clear(j.segs[len(keep):])
	j.segs = keep
}

// close removes the segments whose events were all published and closes the journal; one still
// holding events (a publisher that never returned) stays for the next proxy.
func (j *journal) close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	j.closed = true
	for _, s := range j.segs {
		if s.pending == 0 {
			os.Remove(s.path)
		}
		s.f.Close()
	}
	j.segs, j.cur = nil, nil
}

// replayJournals publishes the events of the segments a gone proxy left (see openJournal), oldest
// first, and removes each segment once all its events are published. A segment whose events could
// not all be published stays for the next start; those published are published again then, which
// the bus (its duplicate window) and the writer (idempotent on the event id) make harmless. Lines
// that do not decode (a last line cut short by the kill) are skipped and counted in the log.
func (p *Proxy) replayJournals(files []*os.File) {
	bp, batching := p.cfg.Publisher.(BatchPublisher)
	var events, bad, kept int
	for _, f := range files {
		n, skipped, err := replaySegment(f, func(evs []event.Event) error {
			if batching {
				_, err := bp.PublishBatch(context.Background(), evs)
				return err
			}
			for i := range evs {
				if _, err := p.cfg.Publisher.Publish(context.Background(), &evs[i]); err != nil {
					return err
				}
			}
			return nil
		})
		events, bad = events+n, bad+skipped
		if err != nil {
			kept++
			p.logger.Error("a journal of a stopped proxy was not published; it stays for the next start",
				"file", f.Name(), "err", err)
		} else {
			os.Remove(f.Name())
		}
		f.Close()
	}
	if len(files) > 0 {
		p.logger.Info("published the turns a stopped proxy had journaled", "events", events, "files", len(files)-kept,
			"unreadable_lines", bad)
	}
}

// replaySegment reads a segment's events and hands them to publish in batches of up to 256. It
// returns how many were published and how many lines did not decode.
func replaySegment(f *os.File, publish func([]event.Event) error) (n, bad int, err error) {
	r := bufio.NewReaderSize(f, 64<<10)
	batch := make([]event.Event, 0, 256)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := publish(batch); err != nil {
			return err
		}
		n += len(batch)
		batch = batch[:0]
		return nil
	}
	for {
		line, rerr := r.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return n, bad, fmt.Errorf("read %s: %w", f.Name(), rerr)
		}
		if body := bytes.TrimSpace(line); len(body) > 0 {
			ev, derr := event.Decode(body)
			if derr != nil || rerr == io.EOF { // a last line without its newline was cut short
				bad++
			} else {
				batch = append(batch, ev)
			}
		}
		if len(batch) == cap(batch) || rerr == io.EOF {
			if err := flush(); err != nil {
				return n, bad, err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return n, bad, nil
		}
	}
}
