package aider

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestMain runs the tests in a zone one hour east of UTC, so that reading aider's local times is
// tested, whatever the machine's zone.
func TestMain(m *testing.M) {
	time.Local = time.FixedZone("UTC+1", 3600)
	os.Exit(m.Run())
}

// line is one line as internal/ingest hands it: its offset, without its line end.
type line struct {
	off  int64
	body []byte
}

// lines splits a file the way internal/ingest reads it: complete lines only, "\r" dropped, blank
// lines skipped.
func lines(data []byte) []line {
	var out []line
	var off int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // no newline yet: not read
		}
		body := bytes.TrimSuffix(data[:i], []byte("\r"))
		if len(body) > 0 {
			out = append(out, line{off, body})
		}
		off += int64(i + 1)
		data = data[i+1:]
	}
	return out
}

// feed hands lines to p and returns the events, failing on an event that does not validate.
func feed(tb testing.TB, p transcript.Parser, ls []line) []event.Event {
	tb.Helper()
	var out []event.Event
	for _, l := range ls {
		evs, _ := p.Record(l.off, l.body)
		transcripttest.CheckEvents(tb, evs)
		out = append(out, evs...)
	}
	return out
}

// copyRepo copies testdata/repo (the hand-written files) to a temporary directory and returns
// the chat history's path there.
func copyRepo(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, name := range []string{ChatHistoryFile, InputHistoryFile} {
		data, err := os.ReadFile(filepath.Join("testdata", "repo", name))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return filepath.Join(dir, ChatHistoryFile)
}

// parseFile reads a whole file with a fresh parser of a.
func parseFile(tb testing.TB, a *Adapter, path string) ([]event.Event, *Parser) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	p := newParser(a, transcript.Source{Client: Client, Path: path}, nil)
	return feed(tb, p, lines(data)), p
}

// views is what the golden file keeps of events: the session by its order, not the ids, projects
// and working directories, which depend on the temporary directory.
func views(evs []event.Event) []transcripttest.View {
	order := map[string]string{}
	out := transcripttest.Views(evs, time.RFC3339Nano)
	for i := range out {
		v := &out[i]
		if _, ok := order[v.Session]; !ok {
			order[v.Session] = "s" + strconv.Itoa(len(order)+1)
		}
		v.ID, v.Project, v.Session = "", "", order[v.Session]
		if v.State != nil {
			v.State.Cwd = ""
		}
	}
	return out
}
