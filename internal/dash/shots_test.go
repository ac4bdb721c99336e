package dash

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowser_Shots saves screenshots of the Overview, Sessions and a session's detail at desktop
// (1280 px) and phone (390 px) width, on the corpus store, and of a conversation and search
// results (convStore's), into $OBSERVER_SHOTS (for a review or a
// before/after comparison). Without OBSERVER_SHOTS it skips: the other browser tests check the
// same views.
func TestBrowser_Shots(t *testing.T) {
	dir := os.Getenv("OBSERVER_SHOTS")
	if dir == "" {
		t.Skip("OBSERVER_SHOTS is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := corpusStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: path, Version: "test"})
	conv := startServer(t, Options{StorePath: convStore(t).path, Version: "test"})
	for _, size := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		run(t, b, size.name, chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(1)))
		// The whole page: the viewport made as tall as the page for the capture (a capture beyond
		// the viewport sometimes returns the viewport only).
		full := func(name string) {
			h := run(t, b, "height", chromedp.Evaluate[int64](`document.documentElement.scrollHeight`))
			run(t, b, "tall", chromedp.EmulateViewport(size.w, max(h, size.h), chromedp.EmulateScale(1)))
			png := run(t, b, "capture", chromedp.CaptureScreenshot())
			run(t, b, "back", chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(1)))
			if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b.open(t, srv.URL+"/?window=all", "overview")
		run(t, b, "charts", chromedp.WaitReady(`.uplot`))
		full(size.name + "-overview")
		b.open(t, srv.URL+"/?window=all&tab=sessions&sort=cost", "sessions")
		full(size.name + "-sessions")
		run(t, b, "open the costliest session", chromedp.Evaluate[bool](`document.querySelector('table[data-table="sessions"] tbody tr').click(), true`))
		b.waitReady(t, "sessions")
		run(t, b, "conversation or timeline", chromedp.WaitReady(`[data-pane]:not([hidden]) li`))
		full(size.name + "-session-detail")
		// The detail is long: its first screen on its own too.
		png := run(t, b, "first screen", chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join(dir, size.name+"-session-detail-top.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		// A conversation (convStore's: every kind of message) with its folded parts open, and the
		// search results of "migration".
		b.open(t, conv.URL+"/?tab=sessions&session=s1&sclient=claude-code", "sessions")
		run(t, b, "conversation", chromedp.WaitReady(`[data-conversation] li.cm`))
		run(t, b, "unfold", chromedp.Evaluate[bool](`document.querySelectorAll("[data-conversation] details").forEach((d) => (d.open = true)), true`))
		full(size.name + "-conversation")
		b.open(t, conv.URL+"/?tab=search&q=migration", "search")
		full(size.name + "-search")
	}
}
