// Package ingest reads transcript files through their adapters and publishes the events, keeping a
// cursor per file so that nothing is read twice and a stopped run resumes where it left off.
//
// Guarantees: only newline-terminated lines are read (a line still being written waits for its
// newline); a file's cursor moves past a line only after the events of that line were
// acknowledged by the bus (or spooled to disk); a file that was rewritten is read again from its
// start, and the deterministic event ids make that harmless. Malformed lines are counted and
// skipped; a line longer than MaxLine is skipped whole, and reported with its size (LongLines).
//
// Rewritten files: a cursor keeps, beside its offset, the file's inode, size and modification time
// and two fingerprints: a hash of the file's first bytes (up to fingerprintBytes) and one of the
// bytes just before the offset. A file whose size or modification time differs from its cursor's
// has both checked before it is read on: one that shrank below its cursor, was replaced (another
// inode) or whose fingerprinted bytes changed (truncated and written again longer, or rewritten
// at the same size) is read again from its start and named in Summary.Rewritten; one that only
// grew is read on from its cursor. A rewrite that keeps both fingerprinted ranges and the size,
// within one tick of the file system's clock, goes unnoticed: that would take hashing the whole
// file at every change. Cursors written before fingerprints are trusted as they are.
//
// A Document source (one JSON document rewritten in place, see package transcript) is read whole
// whenever its size or modification time differs from its cursor's, and only when the file's size
// and modification time were the same before and after the read (a document being written while
// it is read waits for the next pass). Its cursor keeps the parser's state across a replacement,
// since that state names what was emitted, not where.
//
// A Database source (a client's SQLite database, see package transcript) is polled through its
// parser whenever the database's or its -wal file's size or modification time differs from its
// cursor's; the cursor keeps the parser's watermark as its state, and moves only once the events
// of the poll were acknowledged. A poll that fails (the database locked) moves nothing and is
// tried again at the next pass. A parser that streams (transcript.StreamPoller) has its events
// published in batches of BatchSize as it reads, so a pass over a large database holds a few
// batches, not all its rows and events. The Scanner remembers the databases its last poll of
// could not read (Unreadable: a corrupt file, permission denied, locked past the busy timeout, a
// schema the reader does not know) until a poll of them succeeds or they are gone, for a
// long-running watcher to report.
package ingest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
)

// MaxLine is the longest line read; longer ones are counted as malformed, skipped, and reported
// in Summary.LongLines.
const MaxLine = 64 << 20

// fingerprintBytes is how many bytes of a line file each of its cursor's fingerprints covers.
const fingerprintBytes = 4 << 10

// Cursor is how far one file has been read.
type Cursor struct {
	Offset    int64           `json:"offset"`
	Size      int64           `json:"size"`
	Inode     uint64          `json:"inode"`
	MTime     int64           `json:"mtime,omitempty"` // the file's modification time (unix ns) when read
	State     json.RawMessage `json:"state,omitempty"`
	Lines     int64           `json:"lines"`
	Malformed int64           `json:"malformed"`
	// Head and Edge are a line file's fingerprints (see the package doc): hashes of its first
	// min(Offset, fingerprintBytes) bytes and of the as many bytes that end at Offset.
	Head string `json:"head,omitempty"`
	Edge string `json:"edge,omitempty"`
}

// Cursors are every file's cursor, kept in a JSON file (0600) that one process at a time owns.
type Cursors struct {
	path  string
	lock  *os.File
	mu    sync.Mutex // m is read by the scan and written by its publishing goroutine
	m     map[string]*Cursor
	dirty bool // m changed since it was loaded or saved
}

func (c *Cursors) get(path string) *Cursor {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[path]
}

func (c *Cursors) set(path string, cur *Cursor) {
	c.mu.Lock()
	c.m[path] = cur
	c.dirty = true
	c.mu.Unlock()
}

// ErrBusy reports that another process (the watcher, another scan) owns the cursors.
var ErrBusy = errors.New("transcripts are being read by another observer process")

// OpenCursors takes the cursors file's lock and loads it.
func OpenCursors(path string) (*Cursors, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("%w (lock %s)", ErrBusy, path+".lock")
	}
	c := &Cursors{path: path, lock: lock, m: map[string]*Cursor{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		lock.Close()
		return nil, err
	default:
		if m, err := decodeCursors(data); err == nil {
			c.m = m
		}
		// A damaged cursor file costs a re-read, never data: ids are deterministic.
	}
	return c, nil
}

// decodeCursors reads the cursors file. It is read at every start of a scan and can hold a MB of
// parser states, which stay raw: encoding/json took most of a no-op scan's time over it.
func decodeCursors(data []byte) (map[string]*Cursor, error) {
	m := map[string]*Cursor{}
	var bad error
	err := jsonscan.Members(data, func(k, v []byte) bool {
		path, ok := jsonscan.String(k)
		if !ok {
			bad = jsonscan.ErrSyntax
			return false
		}
		c := &Cursor{}
		err := jsonscan.Members(v, func(k, v []byte) bool {
			var ok bool
			switch {
			case jsonscan.Key(k, "offset"):
				c.Offset, ok = jsonscan.Int(v)
			case jsonscan.Key(k, "size"):
				c.Size, ok = jsonscan.Int(v)
			case jsonscan.Key(k, "inode"):
				var n int64
				n, ok = jsonscan.Int(v)
				if !ok { // above 2^63
					u, err := strconv.ParseUint(string(v), 10, 64)
					n, ok = int64(u), err == nil
				}
				c.Inode = uint64(n)
			case jsonscan.Key(k, "lines"):
				c.Lines, ok = jsonscan.Int(v)
			case jsonscan.Key(k, "mtime"):
				c.MTime, ok = jsonscan.Int(v)
			case jsonscan.Key(k, "malformed"):
				c.Malformed, ok = jsonscan.Int(v)
			case jsonscan.Key(k, "state"):
				c.State, ok = bytes.Clone(v), true
			case jsonscan.Key(k, "head"):
				c.Head, ok = jsonscan.String(v)
			case jsonscan.Key(k, "edge"):
				c.Edge, ok = jsonscan.String(v)
			default:
				ok = true
			}
			if !ok {
				bad = fmt.Errorf("cursor of %s: bad %s", path, k)
			}
			return ok
		})
		if err != nil {
			bad = err
		}
		m[path] = c
		return bad == nil
	})
	return m, cmp.Or(bad, err)
}

// Save writes the cursors atomically, if they changed. Cursors read without their lock
// (ReadCursors) are never written.
func (c *Cursors) Save() error {
	if c.lock == nil {
		return errors.New("cursors read without their lock are not saved")
	}
	c.mu.Lock()
	if !c.dirty {
		c.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(c.m)
	c.dirty = false
	c.mu.Unlock()
	if err == nil {
		err = atomicfile.Write(c.path, data, 0o600)
	}
	if err != nil {
		c.mu.Lock()
		c.dirty = true
		c.mu.Unlock()
	}
	return err
}

// Close releases the lock.
func (c *Cursors) Close() error {
	if c.lock == nil {
		return nil
	}
	return c.lock.Close()
}

// ReadCursors loads the cursors without their lock, for a dry run while another process owns them:
// a snapshot that Save refuses to write.
func ReadCursors(path string) (*Cursors, error) {
	c := &Cursors{path: path, m: map[string]*Cursor{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if m, err := decodeCursors(data); err == nil {
			c.m = m
		}
	}
	return c, nil
}

// Publisher takes batches of events and returns once they are acknowledged or spooled.
type Publisher interface {
	PublishBatch(ctx context.Context, evs []event.Event) (spooled int, err error)
}

// BacklogPublisher is a Publisher that can mark a backlog (bus.BacklogHeader): a pass that reads
// at least Scanner.BacklogBytes of new lines publishes its batches with PublishBacklog, the last
// one with last set, so that the writer stores them as a backlog from the first and catches up as
// soon as it has stored the last, rather than finding both out from the bus.
type BacklogPublisher interface {
	Publisher
	PublishBacklog(ctx context.Context, evs []event.Event, last bool) (spooled int, err error)
}

// DefaultBacklogBytes is Scanner.BacklogBytes' default: about 1,600 events of Claude Code's, a
// few batches of the writer's.
const DefaultBacklogBytes = 4 << 20

// Progress is reported while a scan runs.
type Progress struct {
	Files     int   `json:"files"`
	FilesDone int   `json:"files_done"`
	Bytes     int64 `json:"bytes"`
	BytesDone int64 `json:"bytes_done"`
}

// Summary is what a scan did.
type Summary struct {
	Files     int              `json:"files"`      // files considered
	Read      int              `json:"files_read"` // files with new lines
	Lines     int64            `json:"lines"`
	Events    int64            `json:"events"`
	Malformed int64            `json:"malformed"`
	Unknown   map[string]int64 `json:"unknown_types,omitempty"`
	Bytes     int64            `json:"bytes"`
	Seconds   float64          `json:"seconds"` // reading, until every event was handed on
	// TotalSeconds is the command's own work from its start until what it read is stored, indexed
	// and analysed, when it hosted the writer (scan, backfill with nothing running); 0 otherwise.
	TotalSeconds float64  `json:"total_seconds,omitempty"`
	Errors       []string `json:"errors,omitempty"`
	// MalformedFiles names the files that gave malformed lines in this scan.
	MalformedFiles map[string]MalformedFile `json:"malformed_files,omitempty"`
	// LongLines are the lines this scan skipped for being longer than the line limit (counted
	// among the malformed), the first maxLongLines of them.
	LongLines []LongLine `json:"long_lines,omitempty"`
	// Rewritten names the files this scan read again from their start, and why (see the package doc).
	Rewritten map[string]string `json:"rewritten,omitempty"`
}

// MalformedFile is one file's malformed lines: those this scan read, and all its lines read so far
// that were malformed (the count its cursor keeps, so a re-read after a crash does not inflate it).
type MalformedFile struct {
	Lines int64 `json:"lines"`
	Total int64 `json:"total"`
}

// LongLine is a line (or a Document) skipped for being longer than the line limit.
type LongLine struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"` // where the line starts
	Bytes  int64  `json:"bytes"`  // its length, newline included
	Limit  int64  `json:"limit"`  // the line limit it passed
}

// maxLongLines bounds Summary.LongLines.
const maxLongLines = 100

// String says what happened to the line.
func (l LongLine) String() string {
	return fmt.Sprintf("line of %d bytes at offset %d passes the %s line limit, skipped", l.Bytes, l.Offset, sizeText(l.Limit))
}

// sizeText writes n bytes as MiB or KiB when it is a whole number of them.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}

// noteLongLine records a line skipped for its length.
func (sum *Summary) noteLongLine(path string, off, n, limit int64) {
	if len(sum.LongLines) < maxLongLines {
		sum.LongLines = append(sum.LongLines, LongLine{File: path, Offset: off, Bytes: n, Limit: limit})
	}
}

// noteRewritten records a file read again from its start.
func (sum *Summary) noteRewritten(path, why string) {
	if sum.Rewritten == nil {
		sum.Rewritten = map[string]string{}
	}
	sum.Rewritten[path] = why
}

// noteMalformed records a file's malformed lines of this scan, if any.
func (sum *Summary) noteMalformed(path string, lines, total int64) {
	if lines <= 0 {
		return
	}
	if sum.MalformedFiles == nil {
		sum.MalformedFiles = map[string]MalformedFile{}
	}
	sum.MalformedFiles[path] = MalformedFile{Lines: lines, Total: total}
}

// Scanner reads the adapters' files.
type Scanner struct {
	Adapters  []transcript.Adapter
	Cursors   *Cursors
	Publisher Publisher // nil with DryRun, or when Connect makes it
	// Connect, when set and Publisher is nil, makes the publisher the first time there is something
	// to publish: a scan with nothing new never starts a bus.
	Connect   func() (Publisher, error)
	DryRun    bool      // parse and count, publish nothing, move no cursor
	Since     time.Time // skip files not modified since
	Progress  func(Progress)
	BatchSize int
	// Gather, when set, bounds the batches waiting to be published in events rather than in
	// batches (pipeDepth of them), and a publication gathers up to Gather events of them
	// (BatchSize otherwise): for a publisher that stores each publication in one transaction
	// (a scan's own writer, writer.Direct). A file's last batch is often a few dozen events:
	// eight of them made a transaction of 1,300 events on average over the benchmark history.
	Gather  int
	MaxLine int64 // default MaxLine
	// BacklogBytes is how many bytes of new lines (in line files; a database or a document is
	// not counted, its size says nothing of what changed) a pass must have to read for its
	// batches to go out as a backlog, when the Publisher is a BacklogPublisher. Zero means
	// DefaultBacklogBytes; negative, never.
	BacklogBytes int64

	dirs       map[string]bool       // directories holding the files the last Scan found
	pipe       *pipe                 // publishes the batches of the running Scan
	unreadable map[string]Unreadable // by path: the databases whose last poll failed
}

// Unreadable is a database source whose last poll failed.
type Unreadable struct {
	Client, Path string
	Err          string // the error, without the "read PATH: " that sqliteread adds
}

// String says it the way a component's health lists it: "opencode: cannot read PATH: ERROR".
func (u Unreadable) String() string {
	return fmt.Sprintf("%s: cannot read %s: %s", u.Client, u.Path, u.Err)
}

// Unreadable lists, by path, the databases this Scanner's last poll of could not read and that
// its last Scan still found. Call it between Scans, not during one.
func (s *Scanner) Unreadable() []Unreadable {
	out := make([]Unreadable, 0, len(s.unreadable))
	for _, u := range s.unreadable {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// noteDatabase records the outcome of a database's poll.
func (s *Scanner) noteDatabase(client string, src transcript.Source, err error) {
	if err == nil {
		delete(s.unreadable, src.Path)
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	if s.unreadable == nil {
		s.unreadable = map[string]Unreadable{}
	}
	msg := strings.TrimPrefix(err.Error(), "read "+src.Path+": ")
	s.unreadable[src.Path] = Unreadable{Client: client, Path: src.Path, Err: msg}
}

// Dirs lists the directories that held transcript files at the last Scan, for a watcher to watch.
func (s *Scanner) Dirs() []string {
	out := make([]string, 0, len(s.dirs))
	for d := range s.dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

type job struct {
	src   transcript.Source
	ad    transcript.Adapter
	size  int64
	ino   uint64
	mtime int64 // unix ns; of a Database, the later of the file's and its -wal's
}

// Scan reads every file once, from its cursor to its last complete line.
func (s *Scanner) Scan(ctx context.Context) (Summary, error) {
	start := time.Now()
	sum := Summary{Unknown: map[string]int64{}}
	if s.BatchSize <= 0 {
		s.BatchSize = 2000
	}
	if s.MaxLine <= 0 {
		s.MaxLine = MaxLine
	}
	var jobs []job
	var total, lines int64 // bytes to read, and of them new lines of line files
	s.dirs = map[string]bool{}
	found := map[string]bool{}
	defer func() {
		for path := range s.unreadable {
			if !found[path] {
				delete(s.unreadable, path)
			}
		}
	}()
	for _, ad := range s.Adapters {
		srcs, err := ad.Discover()
		if err != nil {
			sum.Errors = append(sum.Errors, fmt.Sprintf("%s: %v", ad.Client(), err))
			continue
		}
		for _, src := range srcs {
			s.dirs[filepath.Dir(src.Path)] = true
			found[src.Path] = true
			fi, err := os.Stat(src.Path)
			if err != nil {
				continue
			}
			size, mtime := fi.Size(), fi.ModTime()
			if src.Database {
				size, mtime = databaseStat(src.Path, fi)
			}
			if !s.Since.IsZero() && mtime.Before(s.Since) {
				continue
			}
			var ino uint64
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				ino = uint64(st.Ino)
			}
			sum.Files++
			cur := s.Cursors.get(src.Path)
			whole := src.Document || src.Database
			// A line file's cursor from before fingerprints has no time of its own.
			sameTime := cur != nil && (cur.MTime == mtime.UnixNano() || !whole && cur.MTime == 0 && cur.Head == "")
			if cur != nil && cur.Inode == ino && cur.Offset == size && sameTime {
				continue // nothing new: the common case of a re-scan costs a stat
			}
			jobs = append(jobs, job{src: src, ad: ad, size: size, ino: ino, mtime: mtime.UnixNano()})
			fresh := size
			if cur != nil && cur.Inode == ino && cur.Offset <= size && !whole {
				fresh -= cur.Offset
			}
			total += fresh
			if !whole {
				lines += fresh
			}
		}
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].src.Path < jobs[j].src.Path })
	if len(jobs) > 0 && !s.DryRun && s.Publisher == nil && s.Connect != nil {
		pub, err := s.Connect()
		if err != nil {
			return sum, err
		}
		s.Publisher = pub
	}
	if !s.DryRun && len(jobs) > 0 {
		var backlog BacklogPublisher
		if bp, ok := s.Publisher.(BacklogPublisher); ok && s.BacklogBytes >= 0 && lines >= cmp.Or(s.BacklogBytes, DefaultBacklogBytes) {
			backlog = bp
		}
		s.pipe = startPipe(ctx, s.Publisher, backlog, s.Cursors, cmp.Or(s.Gather, s.BatchSize), s.Gather)
	}
	p := Progress{Files: len(jobs), Bytes: total}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		n, err := s.scanFile(ctx, j, &sum, &p)
		if err != nil {
			sum.Errors = append(sum.Errors, fmt.Sprintf("%s: %v", j.src.Path, err))
			if errors.Is(err, context.Canceled) {
				break
			}
		}
		if n > 0 {
			sum.Read++
		}
		p.FilesDone++
		if s.Progress != nil {
			s.Progress(p)
		}
	}
	if s.pipe != nil {
		if err := s.pipe.close(); err != nil && !errors.Is(err, context.Canceled) {
			sum.Errors = append(sum.Errors, fmt.Sprintf("publish: %v", err))
		}
		s.pipe = nil
	}
	if !s.DryRun {
		if err := s.Cursors.Save(); err != nil {
			return sum, err
		}
	}
	sum.Seconds = time.Since(start).Seconds()
	if len(sum.Unknown) == 0 {
		sum.Unknown = nil
	}
	return sum, ctx.Err()
}

// lineReaders are the line readers of scanFile, 1 MiB each: one per file read at a time, not one per
// file (a cold scan reads hundreds of files, and a buffer each was most of what it allocated).
var lineReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<20) }}

func (s *Scanner) scanFile(ctx context.Context, j job, sum *Summary, p *Progress) (int64, error) {
	if j.src.Document {
		return s.scanDocument(ctx, j, sum, p)
	}
	if j.src.Database {
		return s.scanDatabase(ctx, j, sum, p)
	}
	f, err := os.Open(j.src.Path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	// head and edge are the file's bytes that the cursor's fingerprints cover, checked.
	var head, edge []byte
	cur := s.Cursors.get(j.src.Path)
	rewritten := ""
	switch {
	case cur == nil:
	case cur.Inode != j.ino:
		rewritten = "replaced by another file"
	case cur.Offset > j.size:
		rewritten = fmt.Sprintf("shorter (%d bytes) than what was read of it (%d)", j.size, cur.Offset)
	default:
		if head, edge, rewritten, err = checkFingerprints(f, cur); err != nil {
			return 0, err
		}
	}
	if cur == nil || rewritten != "" {
		if rewritten != "" {
			sum.noteRewritten(j.src.Path, rewritten)
		}
		cur, head, edge = &Cursor{Inode: j.ino}, nil, nil // from the start
	}
	work := *cur
	defer func() { sum.noteMalformed(j.src.Path, work.Malformed-cur.Malformed, work.Malformed) }()
	parser, err := j.ad.NewParser(j.src, work.State)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(work.Offset, io.SeekStart); err != nil {
		return 0, err
	}
	// A pass reads up to the size the file had when the pass began: a file growing faster than it
	// is published cannot keep one pass (and the cursors it saves at its end) going forever.
	r := lineReaders.Get().(*bufio.Reader)
	defer func() { r.Reset(nil); lineReaders.Put(r) }()
	r.Reset(io.LimitReader(f, j.size-work.Offset))
	var batch []event.Event
	off := work.Offset
	// The new cursor's fingerprints are of the bytes read, not read again: a file rewritten while
	// this pass reads it must not match them.
	headBuf := append(make([]byte, 0, fingerprintBytes), head...)
	edgeBuf := append(make([]byte, 0, 8*fingerprintBytes), edge...)
	var pendTail []byte // the last bytes of the current line's chunks so far
	flush := func() error {
		sum.Events += int64(len(batch))
		work.Offset, work.Size, work.MTime, work.State = off, j.size, j.mtime, parser.State()
		work.Head = fingerprint(headBuf[:min(int64(len(headBuf)), off)])
		work.Edge = fingerprint(edgeBuf[int64(len(edgeBuf))-min(int64(len(edgeBuf)), off, fingerprintBytes):])
		if s.DryRun {
			batch = batch[:0]
			return nil
		}
		// The pipe publishes the batch while the next one is read, and moves the cursor to off
		// once the bus has acknowledged everything up to it.
		c := work
		err := s.pipe.send(ctx, pubJob{path: j.src.Path, events: batch, cursor: &c})
		batch = nil
		return err
	}
	var read int64
	var long []byte   // the start of a line longer than the read buffer
	var partial int64 // bytes of the current line consumed so far
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if n := min(len(chunk), fingerprintBytes-len(headBuf)); n > 0 {
			headBuf = append(headBuf, chunk[:n]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			pendTail = lastBytes(append(pendTail, lastBytes(chunk, fingerprintBytes)...), fingerprintBytes)
			partial += int64(len(chunk))
			if !tooLong && partial <= s.MaxLine {
				long = append(long, chunk...)
			} else {
				tooLong, long = true, nil
			}
			continue
		}
		if err != nil { // io.EOF: what is left has no newline yet and waits for it
			break
		}
		lineLen := partial + int64(len(chunk))
		line := chunk
		if partial > 0 {
			line = append(long, chunk...)
		}
		wasTooLong := tooLong || lineLen > s.MaxLine
		long, partial, tooLong = nil, 0, false
		edgeBuf = append(append(edgeBuf, pendTail...), lastBytes(chunk, fingerprintBytes)...)
		if len(edgeBuf) > 6*fingerprintBytes { // a line adds at most 2*fingerprintBytes
			edgeBuf = append(edgeBuf[:0], lastBytes(edgeBuf, fingerprintBytes)...)
		}
		pendTail = pendTail[:0]
		off += lineLen
		read += lineLen
		p.BytesDone += lineLen
		work.Lines++
		sum.Lines++
		sum.Bytes += lineLen
		if wasTooLong {
			work.Malformed++
			sum.Malformed++
			sum.noteLongLine(j.src.Path, off-lineLen, lineLen, s.MaxLine)
			continue
		}
		body := line[:len(line)-1]
		if len(body) > 0 && body[len(body)-1] == '\r' {
			body = body[:len(body)-1]
		}
		if len(body) == 0 {
			continue
		}
		evs, perr := parser.Record(off-lineLen, body)
		if perr != nil {
			work.Malformed++
			sum.Malformed++
		}
		batch = append(batch, evs...)
		if len(batch) >= s.BatchSize {
			if err := flush(); err != nil {
				return read, err
			}
			if s.Progress != nil {
				s.Progress(*p)
			}
		}
	}
	if err := flush(); err != nil {
		return read, err
	}
	for k, v := range parser.Stats().Unknown {
		sum.Unknown[k] += v
	}
	return read, nil
}

// checkFingerprints reads the bytes of f that cur's fingerprints cover and says how they differ
// from them ("" when they match). A cursor without fingerprints (from before them) is trusted, and
// the bytes are returned for the new cursor's.
func checkFingerprints(f *os.File, cur *Cursor) (head, edge []byte, changed string, err error) {
	n := min(cur.Offset, fingerprintBytes)
	if n == 0 {
		return nil, nil, "", nil
	}
	head, edge = make([]byte, n), make([]byte, n)
	_, err = f.ReadAt(head, 0)
	if err == nil {
		_, err = f.ReadAt(edge, cur.Offset-n)
	}
	switch {
	case errors.Is(err, io.EOF): // cut since it was stat'ed
		return nil, nil, fmt.Sprintf("shorter than what was read of it (%d bytes)", cur.Offset), nil
	case err != nil:
		return nil, nil, "", err
	case cur.Head == "" && cur.Edge == "":
	case fingerprint(head) != cur.Head:
		changed = fmt.Sprintf("its first %d bytes changed", n)
	case fingerprint(edge) != cur.Edge:
		changed = fmt.Sprintf("the %d bytes before offset %d, where it had been read to, changed", n, cur.Offset)
	}
	return head, edge, changed, nil
}

// fingerprint is a hash of b, "" for no bytes.
func fingerprint(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// lastBytes returns the last n bytes of b (b when shorter).
func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// scanDocument reads a Document source whole and hands it to its parser as one record, from the
// state its cursor kept (see the package doc). A document that changes while it is read is tried
// again a few times, then left to the next pass.
func (s *Scanner) scanDocument(ctx context.Context, j job, sum *Summary, p *Progress) (int64, error) {
	work := Cursor{Inode: j.ino}
	cur := s.Cursors.get(j.src.Path)
	if cur != nil {
		work = *cur
		work.Inode = j.ino
	}
	start := work.Malformed
	defer func() { sum.noteMalformed(j.src.Path, work.Malformed-start, work.Malformed) }()
	data, size, mtime, err := readStable(ctx, j.src.Path, s.MaxLine)
	if errors.Is(err, errChanging) {
		return 0, nil // it changed while read: the next pass reads it (a watcher is woken by the change)
	}
	if err != nil {
		return 0, err
	}
	parser, err := j.ad.NewParser(j.src, work.State)
	if err != nil {
		return 0, err
	}
	work.Lines++
	sum.Lines++
	sum.Bytes += size
	p.BytesDone += size
	var evs []event.Event
	if data == nil { // longer than MaxLine
		work.Malformed++
		sum.Malformed++
		sum.noteLongLine(j.src.Path, 0, size, s.MaxLine)
	} else if evs, err = parser.Record(0, data); err != nil {
		work.Malformed++ // half-written or damaged: the state stays, the next change reads it again
		sum.Malformed++
	}
	for k, v := range parser.Stats().Unknown {
		sum.Unknown[k] += v
	}
	sum.Events += int64(len(evs))
	work.Offset, work.Size, work.MTime, work.State = size, size, mtime, parser.State()
	if s.DryRun {
		return size, nil
	}
	for len(evs) > s.BatchSize {
		// The cursor moves with the last batch only: a failure before it reads the document again.
		if err := s.pipe.send(ctx, pubJob{path: j.src.Path, events: evs[:s.BatchSize]}); err != nil {
			return size, err
		}
		evs = evs[s.BatchSize:]
	}
	c := work
	return size, s.pipe.send(ctx, pubJob{path: j.src.Path, events: evs, cursor: &c})
}

// databaseStat returns what tells a Database source changed: its size plus its -wal file's, and
// the later of their modification times (a client in WAL mode writes to the -wal file; the
// database itself changes only at checkpoints).
func databaseStat(path string, fi os.FileInfo) (int64, time.Time) {
	size, mtime := fi.Size(), fi.ModTime()
	if w, err := os.Stat(path + "-wal"); err == nil {
		size += w.Size()
		if w.ModTime().After(mtime) {
			mtime = w.ModTime()
		}
	}
	return size, mtime
}

// scanDatabase polls a Database source from the watermark its cursor keeps (see package
// transcript). A failed poll (the database locked past its busy timeout) moves nothing: the next
// pass polls again from the same watermark. A StreamPoller's events are published in batches of
// BatchSize as it reads; the cursor moves with an empty batch after the last one.
func (s *Scanner) scanDatabase(ctx context.Context, j job, sum *Summary, p *Progress) (int64, error) {
	work := Cursor{Inode: j.ino}
	if cur := s.Cursors.get(j.src.Path); cur != nil {
		work = *cur
		work.Inode = j.ino
	}
	start := work.Malformed
	defer func() { sum.noteMalformed(j.src.Path, work.Malformed-start, work.Malformed) }()
	parser, err := j.ad.NewParser(j.src, work.State)
	if err != nil {
		return 0, err
	}
	poller, ok := parser.(transcript.Poller)
	if !ok {
		return 0, fmt.Errorf("the %s reader cannot poll a database", j.ad.Client())
	}
	var evs []event.Event
	if sp, ok := poller.(transcript.StreamPoller); ok {
		// The events go to the bus in batches as the rows are read: a pass over a large database
		// holds a batch or two, not all its events (issue 29: 1.35 GB on a 341 MB database).
		var n int64
		var pubErr error
		err = sp.PollEach(ctx, s.BatchSize, func(batch []event.Event) error {
			n += int64(len(batch))
			if s.DryRun {
				return nil
			}
			pubErr = s.pipe.send(ctx, pubJob{path: j.src.Path, events: batch})
			return pubErr
		})
		sum.Events += n
		if pubErr != nil {
			return 0, pubErr // the database was readable
		}
	} else {
		evs, err = poller.Poll(ctx)
		sum.Events += int64(len(evs))
	}
	s.noteDatabase(j.ad.Client(), j.src, err)
	if err != nil {
		return 0, err
	}
	st := parser.Stats()
	work.Lines += st.Lines
	work.Malformed += st.Malformed
	sum.Lines += st.Lines
	sum.Malformed += st.Malformed
	sum.Bytes += j.size
	p.BytesDone += j.size
	for k, v := range st.Unknown {
		sum.Unknown[k] += v
	}
	work.Offset, work.Size, work.MTime, work.State = j.size, j.size, j.mtime, parser.State()
	if s.DryRun {
		return j.size, nil
	}
	for len(evs) > s.BatchSize {
		// The cursor moves with the last batch only: a failure before it polls the same rows again.
		if err := s.pipe.send(ctx, pubJob{path: j.src.Path, events: evs[:s.BatchSize]}); err != nil {
			return j.size, err
		}
		evs = evs[s.BatchSize:]
	}
	c := work
	return j.size, s.pipe.send(ctx, pubJob{path: j.src.Path, events: evs, cursor: &c})
}

// errChanging reports a document whose size or modification time changed while it was read.
var errChanging = errors.New("document changed while read")

// readStable reads a whole file, checking that its size and modification time were the same
// before and after the read, a few times over a short while. data is nil (with the size) when the
// file is longer than max.
func readStable(ctx context.Context, path string, max int64) (data []byte, size, mtime int64, err error) {
	for try := range 4 {
		if try > 0 {
			select {
			case <-ctx.Done():
				return nil, 0, 0, ctx.Err()
			case <-time.After(time.Duration(try) * 25 * time.Millisecond):
			}
		}
		data, size, mtime, err = readOnce(path, max)
		if !errors.Is(err, errChanging) {
			return data, size, mtime, err
		}
	}
	return nil, 0, 0, err
}

func readOnce(path string, max int64) (data []byte, size, mtime int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	size, mtime = before.Size(), before.ModTime().UnixNano()
	if size <= max {
		data = make([]byte, 0, size+1) // +1: a file that grew shows as longer than its size
		for err == nil && len(data) < cap(data) {
			var n int
			n, err = f.Read(data[len(data):cap(data)])
			data = data[:len(data)+n]
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, 0, err
		}
	}
	after, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	if after.Size() != size || after.ModTime().UnixNano() != mtime || data != nil && int64(len(data)) != size {
		return nil, 0, 0, errChanging
	}
	return data, size, mtime, nil
}

// pipe publishes a scan's batches in order on its own goroutine, so that reading the next batch
// overlaps waiting for the bus (or the writer) to acknowledge the last one. Batches that queued
// meanwhile go out together while they hold fewer than the scan's BatchSize events (Gather, when
// set): a history of many small files is then not one publication, or one transaction of a
// scan's own writer, per file. Up to pipeDepth batches wait, or with Gather set up to Gather
// events in as many batches as they make. A file's cursor moves only
// after the batch that ends at it was acknowledged; after a failure nothing more is published and
// no cursor moves, so the next scan reads from the last acknowledged line. A backlog (a pass with
// a BacklogPublisher) is published one batch behind the reading, so that its last batch is known
// as the last when it goes out: the pipe holds each batch until the next one is ready.
type pipe struct {
	jobs   chan pubJob
	room   *semaphore.Weighted // the events that may wait in jobs (Gather), or nil
	max    int64               // room's size
	done   chan struct{}
	err    error // set by the goroutine before done closes; failed reports it early
	failed atomic.Bool
}

type pubJob struct {
	path   string
	events []event.Event
	cursor *Cursor // where the file's cursor moves once events are acknowledged; nil: it stays
}

// pipeDepth is how many batches may wait for the bus while the scan reads on.
const pipeDepth = 8

// gatherJobs is how many batches may wait with Gather set (each can be as small as a file's last):
// their events are what is bounded.
const gatherJobs = 256

// startPipe starts publishing a pass's batches with pub, or with backlog, when set, as a backlog.
// Batches waiting go out together up to coalesce events. Up to pipeDepth batches wait, or with
// gather set, batches of up to gather events in all.
func startPipe(ctx context.Context, pub Publisher, backlog BacklogPublisher, cur *Cursors, coalesce, gather int) *pipe {
	p := &pipe{jobs: make(chan pubJob, pipeDepth), done: make(chan struct{})}
	if gather > 0 {
		p.jobs = make(chan pubJob, gatherJobs)
		p.room, p.max = semaphore.NewWeighted(int64(gather)), int64(gather)
	}
	// publish sends one batch and then moves the cursors of its jobs.
	publish := func(batch []event.Event, group []pubJob, last bool) {
		if p.err != nil {
			return
		}
		if len(batch) > 0 {
			var err error
			if backlog != nil {
				_, err = backlog.PublishBacklog(ctx, batch, last)
			} else {
				_, err = pub.PublishBatch(ctx, batch)
			}
			if err != nil {
				p.err = err
				p.failed.Store(true)
				return
			}
		}
		for _, g := range group {
			if g.cursor != nil {
				cur.set(g.path, g.cursor)
			}
		}
	}
	go func() {
		defer close(p.done)
		// The batch held back (a backlog's), with the jobs whose cursors wait for it.
		var held []event.Event
		var heldJobs []pubJob
		for j := range p.jobs {
			p.give(j)
			if p.err != nil {
				continue
			}
			group := []pubJob{j}
			n := len(j.events)
		gather:
			for n < coalesce {
				select {
				case more, ok := <-p.jobs:
					if !ok {
						break gather
					}
					p.give(more)
					group = append(group, more)
					n += len(more.events)
				default:
					break gather
				}
			}
			batch := j.events
			if len(group) > 1 {
				// A slice of its own: a publisher may keep what it was handed.
				batch = make([]event.Event, 0, n)
				for _, g := range group {
					batch = append(batch, g.events...)
				}
			}
			switch {
			case backlog == nil:
				publish(batch, group, false)
			case len(batch) == 0 && held != nil:
				heldJobs = append(heldJobs, group...) // cursors behind the held batch
			case len(batch) == 0:
				publish(nil, group, false)
			default:
				if held != nil {
					publish(held, heldJobs, false)
				}
				held, heldJobs = batch, group
			}
		}
		if held != nil {
			publish(held, heldJobs, true)
		}
	}()
	return p
}

// send queues a batch; it reports a failure of an earlier one.
func (p *pipe) send(ctx context.Context, j pubJob) error {
	if p.failed.Load() {
		return errors.New("publishing stopped after an error")
	}
	if err := p.take(ctx, j); err != nil {
		return err
	}
	select {
	case p.jobs <- j:
		return nil
	case <-ctx.Done():
		p.give(j)
		return ctx.Err()
	}
}

// take waits for room for j's events (with Gather set), give hands it back once j was taken out
// of the queue. A job takes its events (a cursor alone one), at most the whole room.
func (p *pipe) take(ctx context.Context, j pubJob) error {
	if p.room == nil {
		return nil
	}
	return p.room.Acquire(ctx, p.weight(j))
}

func (p *pipe) give(j pubJob) {
	if p.room != nil {
		p.room.Release(p.weight(j))
	}
}

func (p *pipe) weight(j pubJob) int64 {
	return min(max(int64(len(j.events)), 1), p.max)
}

// close waits for every queued batch and returns the first error.
func (p *pipe) close() error {
	close(p.jobs)
	<-p.done
	return p.err
}
