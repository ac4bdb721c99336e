package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

// The browser tests drive the real page in headless Chromium (chromedp): every tab renders
// without a console error, the totals on screen are query.Cost's, an event published on the bus
// shows on the Live tab within a second. Screenshots of every tab go to $OBSERVER_ARTIFACTS/dash
// when set, else to the test's temporary directory. Without Chromium the tests skip, unless
// OBSERVER_REQUIRE_CLIENTS=1 (CI), where they fail.

// chromiumPath finds a Chromium or Chrome on PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is one headless Chromium tab whose console is recorded.
type browser struct {
	ctx context.Context
	mu  sync.Mutex
	log []chromedp.ConsoleMessage
}

func newBrowser(tb testing.TB) *browser {
	tb.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("OBSERVER_REQUIRE_CLIENTS") == "1" {
			tb.Fatal("no chromium on PATH, and OBSERVER_REQUIRE_CLIENTS=1 makes the browser tests mandatory (apt-get install chromium)")
		}
		tb.Skip("no chromium on PATH: install Debian's chromium to run the dashboard's browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.UserDataDir(tb.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser on a context without a timeout
		tb.Fatalf("start %s: %v", path, err)
	}
	b := &browser{ctx: ctx}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.log = append(b.log, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// errors returns the console errors and uncaught exceptions so far, each with where it came from.
func (b *browser) errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.log {
		if m.Type == "error" || m.IsException() {
			// The URL says which request failed ("Failed to load resource" names none).
			out = append(out, m.String()+" ("+m.URL+")")
		}
	}
	return out
}

// run runs one action with a time limit (the browser itself lives on): a guard against a hung
// browser, not a measure of speed.
func run[T any](tb testing.TB, b *browser, what string, a chromedp.Action[T]) T {
	tb.Helper()
	return runFor(tb, b, what, 15*time.Second, a)
}

// runFor is run with another limit.
func runFor[T any](tb testing.TB, b *browser, what string, limit time.Duration, a chromedp.Action[T]) T {
	tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, limit)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tb.Fatalf("%s: %v (console: %v)", what, err, b.errors())
	}
	return v
}

// open navigates to the page and waits until the tab has rendered.
func (b *browser) open(tb testing.TB, url, tab string) {
	tb.Helper()
	run(tb, b, "navigate "+url, chromedp.Navigate(url))
	b.waitReady(tb, tab)
}

func (b *browser) waitReady(tb testing.TB, tab string) {
	tb.Helper()
	run(tb, b, "render "+tab, chromedp.WaitReady(fmt.Sprintf(`#view[data-ready="%s"]`, tab)))
	if banner := run(tb, b, "banner", chromedp.Evaluate[string](`document.getElementById("banner").hidden ? "" : document.getElementById("banner").textContent`)); banner != "" {
		tb.Fatalf("tab %s shows an error: %s", tab, banner)
	}
	// A value the script failed to compute shows as null, undefined or NaN somewhere in the text.
	if bad := run(tb, b, "broken values", chromedp.Evaluate[string](brokenText)); bad != "" {
		tb.Fatalf("tab %s shows a broken value: %s", tab, bad)
	}
}

const brokenText = `(() => {
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = w.nextNode()); ) {
    if (/(^|[^A-Za-z_])(null|undefined|NaN)([^A-Za-z_]|$)/.test(n.textContent) && !n.parentElement.closest("pre, .mono, .wrap, [data-kind], .conv, .results")) {
      return n.parentElement.tagName + ": " + n.textContent.slice(0, 120);
    }
  }
  return "";
})()`

func artifactDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if a := os.Getenv("OBSERVER_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "dash")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func (b *browser) screenshot(tb testing.TB, dir, name string) {
	tb.Helper()
	// A whole page at twice the phone's pixels took over 15 s on a loaded 2-core machine (CI,
	// with other packages' tests beside it).
	png := runFor(tb, b, "screenshot", time.Minute, chromedp.FullScreenshot(100))
	if len(png) < 1000 {
		tb.Fatalf("screenshot %s: %d bytes", name, len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// phoneLayout lists what is wrong with the page at phone width: a table whose Cost column (header
// or first row) is not within the screen and its table's visible box, a model name squeezed to a
// few characters per line. Empty when all is well.
const phoneLayout = `JSON.stringify((() => {
  const bad = [], vw = window.innerWidth;
  const inside = (r, box) => r.width > 0 && r.left >= Math.max(0, box.left) - 0.5 && r.right <= Math.min(vw, box.right) + 0.5;
  const tables = [...document.querySelectorAll("#view table[data-table]")].filter((t) => t.dataset.table !== "heatmap");
  let costs = 0;
  for (const t of tables) {
    const ths = [...t.querySelectorAll("thead th")];
    const i = ths.findIndex((th) => th.textContent === "Cost");
    if (i < 0) continue;
    costs++;
    const box = t.closest(".table-wrap").getBoundingClientRect();
    const cells = [ths[i], t.querySelector("tbody tr").children[i]];
    for (const c of cells) if (!inside(c.getBoundingClientRect(), box)) bad.push(t.dataset.table + ": the cost column is off screen at " + JSON.stringify(c.getBoundingClientRect()));
  }
  if (!costs && document.querySelector("#view table")) bad.push("no table has a Cost column");
  for (const t of tables) {
    const i = [...t.querySelectorAll("thead th")].findIndex((th) => th.textContent === "Model");
    if (i < 0) continue;
    for (const tr of t.querySelectorAll("tbody tr")) {
      const td = tr.children[i], name = td.firstElementChild || td;
      const range = document.createRange();
      range.selectNodeContents(name);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      if (td.getBoundingClientRect().width < 70 || lines > 4) bad.push("model " + name.textContent + " squeezed: " + Math.round(td.getBoundingClientRect().width) + " px, " + lines + " lines");
    }
  }
  return bad;
})())`

// costliestSession is the id of the corpus's costliest session.
func costliestSession(tb testing.TB, st *store.Store) string {
	tb.Helper()
	var id string
	if err := st.DB.QueryRow(`SELECT session_id FROM token_usage GROUP BY session_id ORDER BY sum(cost_usd) DESC LIMIT 1`).Scan(&id); err != nil {
		tb.Fatal(err)
	}
	return id
}

// usd formats dollars as the page does.
func usd(x float64) string {
	digits := 2
	if x != 0 && math.Abs(x) < 1 {
		digits = 4
	}
	s := strconv.FormatFloat(x, 'f', digits, 64)
	whole, frac, _ := strings.Cut(s, ".")
	return "$" + group(whole) + "." + frac
}

// group puts thousands separators into an integer, as the page does (en-US).
func group(s string) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

var tabs = []string{"overview", "cost", "sessions", "actions", "live", "analysis", "tools", "compression", "discovery", "patterns", "memory", "settings"}

// TestBrowser_CompressionSavings: the Compression tab shows the tokens and dollars the proxy's
// decisions saved, and one row per mechanism and model.
func TestBrowser_CompressionSavings(t *testing.T) {
	path := compressionStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: path, Version: "test"})
	b.open(t, srv.URL+"/?window=all&tab=compression", "compression")
	run(t, b, "cards", chromedp.Poll[bool](`document.querySelector('[data-metric="compression_usd"] .value') !== null`, chromedp.WithPollingTimeout(5*time.Second)))
	usd := run(t, b, "usd", chromedp.Evaluate[string](`document.querySelector('[data-metric="compression_usd"] .value').dataset.value`))
	tokens := run(t, b, "tokens", chromedp.Evaluate[string](`document.querySelector('[data-metric="compression_tokens"] .value').dataset.value`))
	rows := run(t, b, "rows", chromedp.Evaluate[int](`document.querySelectorAll('table[data-table="compression"] tbody tr').length`))
	if usd != "0.75" || tokens != "400" || rows != 2 {
		t.Errorf("the tab shows $%s saved, %s tokens, %d rows; want 0.75, 400 (1,600 bytes / 4), 2", usd, tokens, rows)
	}
	b.screenshot(t, artifactDir(t), "compression-savings")
}

// TestBrowser_SessionPaths: the Sessions table shows, in its "Seen by" column, a chip per capture
// path that saw each session, and so does a session's detail; the column's ? opens the definition.
func TestBrowser_SessionPaths(t *testing.T) {
	path := pathsStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: path, Version: "test"})
	b.open(t, srv.URL+"/?window=all&tab=sessions", "sessions")
	run(t, b, "rows", chromedp.Poll[bool](`document.querySelectorAll('table[data-table="sessions"] tbody tr').length === 6`, chromedp.WithPollingTimeout(5*time.Second)))
	// Each row's chips, by the session id in its first cell's title.
	got := map[string]string{}
	js := `JSON.stringify(Object.fromEntries([...document.querySelectorAll('table[data-table="sessions"] tbody tr')].map((tr) =>
	  [tr.querySelector("td.session").title, [...tr.querySelectorAll(".paths .pill")].map((c) => c.textContent).join(" ")])))`
	if err := json.Unmarshal([]byte(run(t, b, "chips", chromedp.Evaluate[string](js))), &got); err != nil {
		t.Fatal(err)
	}
	for id, want := range pathsSessions {
		if got[id] != strings.Join(want, " ") {
			t.Errorf("%s: chips %q, want %q", id, got[id], strings.Join(want, " "))
		}
	}
	if th := run(t, b, "header", chromedp.Evaluate[bool](`[...document.querySelectorAll('table[data-table="sessions"] thead th')].some((th) => th.textContent.startsWith("Seen by"))`)); !th {
		t.Error("no Seen by column")
	}
	b.screenshot(t, artifactDir(t), "sessions-paths")
	run(t, b, "click the Seen by ?", chromedp.Click(`table[data-table="sessions"] thead th .q`))
	if hl := run(t, b, "highlighted", chromedp.Text(`#help dt.hl`)); hl != "Capture paths" {
		t.Errorf("the Seen by ? highlights %q", hl)
	}
	run(t, b, "close", chromedp.KeyEvent("\x1b"))

	b.open(t, srv.URL+"/?window=all&tab=sessions&session=s-all&sclient=claude-code", "sessions")
	chips := run(t, b, "detail chips", chromedp.Evaluate[string](`[...document.querySelectorAll('[data-session-paths] .pill')].map((c) => c.textContent).join(" ")`))
	if chips != "proxy records hooks otlp" {
		t.Errorf("detail of s-all: chips %q", chips)
	}
	b.screenshot(t, artifactDir(t), "session-detail-paths")
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestBrowser_Team: on a team hub's store the Team tab appears and lists the three members,
// highest cost first, with their dollars; compare-by project lists each member's projects;
// clicking a member shows its figures on the Overview, and the member filter says whose they are.
// A single user's store has no Team tab and no member filter.
// memberFilterVisible says whether the member filter takes up room on the page (not only whether
// its hidden attribute is set).
const memberFilterVisible = `(() => { const l = document.getElementById("f-member-label"); return l.getClientRects().length > 0 && getComputedStyle(l).display !== "none" })()`

func TestBrowser_Team(t *testing.T) {
	path := teamStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: path, Version: "test"})
	dir := artifactDir(t)
	b.open(t, srv.URL+"/?window=all", "overview")
	run(t, b, "team tab", chromedp.Poll[bool](`!!document.querySelector('#tabs a[data-tab="team"]') && !document.getElementById("f-member-label").hidden`, chromedp.WithPollingTimeout(5*time.Second)))
	if visible := run(t, b, "member filter visible", chromedp.Evaluate[bool](memberFilterVisible)); !visible {
		t.Error("with team members the member filter is not on screen")
	}
	if opts := run(t, b, "member filter", chromedp.Evaluate[string](`[...document.querySelectorAll("#f-member option")].map((o) => o.value).join(",")`)); opts != ",alice,bob,carol" {
		t.Errorf("member filter options %q", opts)
	}
	run(t, b, "open the team tab", chromedp.Click(`#tabs a[data-tab="team"]`))
	b.waitReady(t, "team")
	run(t, b, "members", chromedp.Poll[bool](`document.querySelectorAll('table[data-table="members"] tbody tr').length === 3`, chromedp.WithPollingTimeout(5*time.Second)))
	var rows [][]string
	js := `JSON.stringify([...document.querySelectorAll('table[data-table="members"] tbody tr')].map((tr) => {
	  const th = [...tr.closest("table").querySelectorAll("thead th")].map((th) => th.textContent);
	  const cell = (label) => tr.children[th.findIndex((t) => t.startsWith(label))].textContent;
	  return [tr.querySelector("td strong").textContent, cell("Hosts"), cell("Sessions"), cell("Actions"), cell("Failure rate"), cell("Cost")];
	}))`
	if err := json.Unmarshal([]byte(run(t, b, "member rows", chromedp.Evaluate[string](js))), &rows); err != nil {
		t.Fatal(err)
	}
	// All time: alice's session of ten days ago counts, and puts her first.
	want := [][]string{
		{"alice", "alice-mbp", "3", "3", "33.3%", usd(103.5)},
		{"bob", "bob-linux", "1", "1", "0.0%", usd(4.5)},
		{"carol", "carol-desk, carol-laptop", "2", "2", "100.0%", usd(0.25)},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("members table %q, want %q", rows, want)
	}
	b.screenshot(t, dir, "team")

	run(t, b, "compare by project", chromedp.Evaluate[bool](`(() => { const s = document.getElementById("team-by"); s.value = "project"; s.dispatchEvent(new Event("change")); return true })()`))
	b.waitReady(t, "team")
	run(t, b, "compare rows", chromedp.Poll[bool](`document.querySelectorAll('table[data-table="member-compare"] tbody tr').length === 6`, chromedp.WithPollingTimeout(5*time.Second)))
	if loc := run(t, b, "location", chromedp.Location()); !strings.Contains(loc, "by=project") {
		t.Errorf("compare-by is not in the URL: %s", loc)
	}
	b.screenshot(t, dir, "team-by-project")

	run(t, b, "click carol", chromedp.Click(`table[data-table="members"] tbody tr:nth-child(3)`))
	b.waitReady(t, "overview")
	run(t, b, "carol's overview", chromedp.Poll[bool](`document.querySelector('[data-metric="actions"] .value')?.dataset.value === "2"`, chromedp.WithPollingTimeout(5*time.Second)))
	if cost := run(t, b, "cost", chromedp.Evaluate[string](`document.querySelector('[data-metric="cost"] .value').dataset.value`)); cost != "0.25" {
		t.Errorf("carol's overview: cost %s, want 0.25", cost)
	}
	if sel := run(t, b, "filter", chromedp.Evaluate[string](`document.getElementById("f-member").value`)); sel != "carol" {
		t.Errorf("member filter %q after clicking carol", sel)
	}

	single := startServer(t, Options{StorePath: pathsStore(t), Version: "test"})
	b.open(t, single.URL+"/?window=all", "overview")
	run(t, b, "filters loaded", chromedp.Poll[bool](`document.querySelectorAll("#f-project option").length > 1`, chromedp.WithPollingTimeout(5*time.Second)))
	if shown := run(t, b, "no team", chromedp.Evaluate[bool](`!!document.querySelector('#tabs a[data-tab="team"]') || !document.getElementById("f-member-label").hidden`)); shown {
		t.Error("a store without members shows the Team tab or the member filter")
	}
	// Hidden is not enough: a stylesheet rule can still display the element. The page must not show it.
	if visible := run(t, b, "member filter visible", chromedp.Evaluate[bool](memberFilterVisible)); visible {
		t.Error(`with team mode off the page shows the "Member: all members" filter`)
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestBrowser drives the dashboard on the corpus store in headless Chromium.
func TestBrowser(t *testing.T) {
	path := corpusStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: path, Version: "test"})
	pub := liveBus(t, srv.Server)
	st := openReader(t, path)
	dir := artifactDir(t)
	t.Logf("screenshots in %s", dir)

	t.Run("EveryTabRenders", func(t *testing.T) {
		for _, tab := range tabs {
			b.open(t, srv.URL+"/?window=all&tab="+tab, tab)
			var check string
			switch tab {
			case "overview", "cost":
				check = `document.querySelectorAll('[data-metric="cost"] .value').length === 1 && document.querySelectorAll(".uplot").length > 0`
			case "sessions":
				check = `document.querySelectorAll('table[data-table="sessions"] tbody tr').length > 0`
			case "actions":
				check = `document.querySelectorAll('table[data-table="actions"] tbody tr').length === 100`
			case "tools":
				check = `document.querySelectorAll('table[data-table="tools"] tbody tr').length > 0 && document.querySelectorAll(".uplot").length === 1`
			case "compression":
				// The corpus has no proxy traffic: the tab says so rather than show zeros as data.
				check = `!!document.querySelector('[data-empty="compression"]') && document.querySelector('[data-metric="compressions"] .value').textContent === "0"`
			case "analysis":
				check = `document.querySelectorAll('[data-metric="per_turn"] .value').length === 1 && document.querySelectorAll('table[data-table="expensive"] tbody tr').length > 0 && document.querySelectorAll('table[data-table="expensive"] a.sess-title').length > 0 && document.querySelectorAll('table[data-table="heatmap"] td.cell').length === 168`
			case "discovery":
				check = `document.querySelectorAll('[data-metric="repeated_commands"] .value').length === 1 && document.querySelectorAll('table[data-table="rereads"] tbody tr').length > 0 && document.querySelectorAll('table[data-table="repeats"] tbody tr').length > 0`
			case "patterns":
				check = `document.querySelector('[data-source="analysis"]') !== null && document.querySelectorAll('table[data-table^="patterns-"] tbody tr').length > 0`
			case "memory":
				// The corpus store here has no memory loop run over it: the tab says so.
				check = `!!document.querySelector('[data-empty="memory"]')`
			case "settings":
				check = `document.getElementById("config-text") !== null && document.getElementById("settings-save") !== null && document.querySelectorAll('table[data-table="price-builtin"] tbody tr').length > 0 && document.getElementById("price-source").textContent.includes("the built-in table dated 20")`
			case "live":
				check = `document.getElementById("live-status").textContent === "following the bus"`
			default:
				t.Fatalf("no content check for tab %s", tab)
			}
			run(t, b, tab+" content", chromedp.Poll[bool](check, chromedp.WithPollingTimeout(5*time.Second)))
			b.screenshot(t, dir, tab)
		}
	})

	t.Run("HelpDrawer", func(t *testing.T) {
		b.open(t, srv.URL+"/?window=all", "overview")
		run(t, b, "press ?", chromedp.KeyEvent("?"))
		n := run(t, b, "definitions", chromedp.Evaluate[int](`document.getElementById("help").hidden ? -1 : document.querySelectorAll("#help dt").length`))
		if n < 10 {
			t.Fatalf("the help drawer shows %d definitions after ?", n)
		}
		// Every ? button beside a figure opens its own definition.
		run(t, b, "close", chromedp.KeyEvent("\x1b"))
		run(t, b, "click the cost ?", chromedp.Click(`[data-metric="cost"] .q`))
		if hl := run(t, b, "highlighted", chromedp.Text(`#help dt.hl`)); hl != "Cost" {
			t.Fatalf("the cost ? highlights %q", hl)
		}
	})

	t.Run("SettingsSave", func(t *testing.T) {
		cfgPath := filepath.Join(filepath.Dir(path), "config.toml")
		before, _ := os.ReadFile(cfgPath)
		b.open(t, srv.URL+"/?tab=settings", "settings")
		save := func(content string) string {
			js := fmt.Sprintf(`(() => { document.getElementById("config-text").value = %q; document.getElementById("settings-msg").textContent = ""; document.getElementById("settings-save").click(); return true })()`, content)
			run(t, b, "save", chromedp.Evaluate[bool](js))
			run(t, b, "saved", chromedp.Poll[bool](`/^(Saved|Not saved)/.test(document.getElementById("settings-msg").textContent)`, chromedp.WithPollingTimeout(5*time.Second)))
			return run(t, b, "message", chromedp.Evaluate[string](`document.getElementById("settings-msg").textContent`))
		}
		// The refused save's 400 is the one console error this test expects: Chromium logs every
		// non-2xx fetch. Any other error in the meantime still fails the test.
		b.mu.Lock()
		mark := len(b.log)
		b.mu.Unlock()
		if msg := save("[dash\naddr = 1"); !strings.HasPrefix(msg, "Not saved: config "+cfgPath) {
			t.Errorf("invalid TOML: %q", msg)
		}
		b.mu.Lock()
		for i := mark; i < len(b.log); i++ {
			if strings.Contains(b.log[i].String(), "status of 400") {
				b.log = append(b.log[:i], b.log[i+1:]...)
				break
			}
		}
		b.mu.Unlock()
		if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
			t.Errorf("an invalid save changed %s", cfgPath)
		}
		b.screenshot(t, dir, "settings-invalid")
		valid := "[dash]\naddr = \"127.0.0.1:8081\"\n"
		if msg := save(valid); !strings.HasPrefix(msg, "Saved.") {
			t.Errorf("valid save: %q", msg)
		}
		if after, _ := os.ReadFile(cfgPath); string(after) != "[dash]\naddr = \"127.0.0.1:8081\"\n" {
			t.Errorf("after a valid save %s holds %q", cfgPath, after)
		}
	})

	t.Run("SessionDetailTimeline", func(t *testing.T) {
		b.open(t, srv.URL+"/?window=all&tab=sessions&sort=cost", "sessions")
		run(t, b, "open the costliest session", chromedp.Click(`table[data-table="sessions"] tbody tr`))
		b.waitReady(t, "sessions")
		// The conversation is shown first when the session has messages; the timeline is a click away.
		run(t, b, "switch to the timeline", chromedp.Click(`button[data-sview="timeline"]`))
		run(t, b, "timeline", chromedp.WaitReady(`[data-timeline] li details`))
		loc := run(t, b, "location", chromedp.Location())
		if !strings.Contains(loc, "session=") || !strings.Contains(loc, "sview=timeline") {
			t.Fatalf("the detail view is not a deep link: %s", loc)
		}
		run(t, b, "expand a tool call", chromedp.Click(`[data-timeline] li details summary`))
		if open := run(t, b, "expanded", chromedp.Evaluate[bool](`document.querySelector("[data-timeline] li details").open`)); !open {
			t.Fatal("the tool call did not expand")
		}
		b.screenshot(t, dir, "session-detail")
		// The deep link renders the same view on its own.
		b.open(t, loc, "sessions")
		run(t, b, "timeline after reload", chromedp.WaitReady(`[data-timeline] li`))
	})

	t.Run("TotalsEqualCostRun", func(t *testing.T) {
		for _, c := range []struct{ tab, query string }{
			{"overview", "window=all"}, {"cost", "window=all"}, {"overview", "window=3650d"}, {"cost", "window=all&client=codex"},
		} {
			b.open(t, srv.URL+"/?tab="+c.tab+"&"+c.query, c.tab)
			f := filters{Client: map[bool]string{true: "codex"}[strings.Contains(c.query, "client=codex")]}
			if strings.Contains(c.query, "3650d") {
				f.Since, _ = parseWindow("3650d", time.Now())
			}
			rows, want, err := costRows(context.Background(), st.DB, f)
			if err != nil {
				t.Fatal(err)
			}
			if f.Client == "" {
				rep, err := query.Cost(context.Background(), st.DB, query.CostQuery{Filter: query.Filter{Since: f.Since}})
				if err != nil {
					t.Fatal(err)
				}
				want = rep.Total
			} else if len(rows) == 0 {
				t.Fatal("no codex rows in the corpus")
			}
			for metric, w := range map[string]string{
				"cost": usd(want.CostUSD), "input_tokens": group(fmt.Sprint(want.InputTokens)), "output_tokens": group(fmt.Sprint(want.OutputTokens)),
				"cache_read_tokens": group(fmt.Sprint(want.CacheReadTokens)), "cache_creation_tokens": group(fmt.Sprint(want.CacheCreationTokens)),
				"turns": group(fmt.Sprint(want.Turns)),
			} {
				got := run(t, b, metric, chromedp.Text(fmt.Sprintf(`[data-metric="%s"] .value`, metric)))
				if got != w {
					t.Errorf("%s %s: %s shows %q, query.Cost says %q", c.tab, c.query, metric, got, w)
				}
			}
			raw := run(t, b, "raw cost", chromedp.Evaluate[string](`document.querySelector('[data-metric="cost"] .value').dataset.value`))
			if v, err := strconv.ParseFloat(raw, 64); err != nil || math.Abs(v-want.CostUSD) > 1e-6 {
				t.Errorf("%s %s: cost %q, query.Cost says %.9f", c.tab, c.query, raw, want.CostUSD)
			}
		}
	})

	t.Run("LiveEventWithinASecond", func(t *testing.T) {
		b.open(t, srv.URL+"/?tab=live", "live")
		run(t, b, "live connected", chromedp.Poll[bool](`document.getElementById("live-status").textContent === "following the bus"`, chromedp.WithPollingTimeout(5*time.Second)))
		ev := testAction("claude-code", "live-session", "make test", false)
		start := time.Now()
		if _, err := pub.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		defer cancel()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`!!document.querySelector('#live-list li[data-id="%s"]')`, ev.ID), chromedp.WithPollingInterval(5*time.Millisecond))); err != nil {
			t.Fatalf("the event never showed: %v", err)
		}
		took := time.Since(start)
		t.Logf("bus to Live tab: %v", took)
		text := run(t, b, "row", chromedp.Text(fmt.Sprintf(`#live-list li[data-id="%s"]`, ev.ID)))
		if !strings.Contains(text, "make test") || !strings.Contains(text, "FAILED") {
			t.Errorf("live row %q lacks the command or its failure", text)
		}
		b.screenshot(t, dir, "live-event")
	})

	t.Run("AxisLabels", func(t *testing.T) {
		// Days over all time, dollars up to several: "$" labels, "Jun 8" days with the year under
		// the first, nothing cut at the chart's edge.
		for _, tab := range []string{"overview", "cost"} {
			b.open(t, srv.URL+"/?window=all&tab="+tab, tab)
			checkAxes(t, b, false)
		}
	})

	t.Run("PhoneAndDark", func(t *testing.T) {
		run(t, b, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		for _, page := range []struct{ name, query, tab string }{
			{"overview", "window=all", "overview"},
			{"sessions", "window=all&tab=sessions&sort=cost", "sessions"},
			{"session-detail", "window=all&tab=sessions&session=" + costliestSession(t, st), "sessions"},
		} {
			b.open(t, srv.URL+"/?"+page.query, page.tab)
			// The page itself does not scroll sideways; every table's cost column is on screen.
			if w := run(t, b, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
				t.Errorf("%s at phone width: the page is %d px wider than the screen", page.name, w)
			}
			var bad []string
			if err := json.Unmarshal([]byte(run(t, b, "phone layout", chromedp.Evaluate[string](phoneLayout))), &bad); err != nil {
				t.Fatal(err)
			}
			for _, p := range bad {
				t.Errorf("%s at phone width: %s", page.name, p)
			}
			b.screenshot(t, dir, "phone-"+page.name)
		}
		// No tab makes the page scroll sideways (wide tables scroll in their own box).
		for _, tab := range tabs {
			b.open(t, srv.URL+"/?window=all&tab="+tab, tab)
			if w := run(t, b, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
				t.Errorf("%s at phone width: the page is %d px wider than the screen", tab, w)
			}
		}
		run(t, b, "desktop", chromedp.EmulateViewport(1280, 900))
		light := run(t, b, "light", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
			t.Fatal(err)
		}
		b.open(t, srv.URL+"/?window=all", "overview")
		dark := run(t, b, "dark", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
		if dark == light {
			t.Errorf("dark scheme background %s is the light one", dark)
		}
		b.screenshot(t, dir, "overview-dark")
		chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	})

	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestBrowser_Memory: a session's detail shows the summary of each ended epoch, newest first, and
// says when its current epoch is still going; the Memory tab shows a project's observations with
// the actions they rest on (each opening its session), and its project selector switches project.
func TestBrowser_Memory(t *testing.T) {
	path := memoryStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: path, Version: "test"})
	dir := artifactDir(t)
	type shown struct{ Epoch, Source, Head, Text string }
	summaries := func() []shown {
		var out []shown
		js := `JSON.stringify([...document.querySelectorAll("[data-summary]")].map((a) => ({Epoch: a.dataset.epoch,
		  Source: a.querySelector(".pill").textContent, Head: a.querySelector(".summary-head").textContent, Text: a.querySelector(".summary-text").textContent})))`
		if err := json.Unmarshal([]byte(run(t, b, "summaries", chromedp.Evaluate[string](js))), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	b.open(t, srv.URL+"/?window=all&tab=sessions&session=m-done&sclient=claude-code", "sessions")
	got := summaries()
	if len(got) != 2 || got[0].Epoch != "1" || got[1].Epoch != "0" {
		t.Fatalf("m-done shows summaries %+v, want epoch 1 then epoch 0", got)
	}
	for i, want := range []struct{ goal, ended, cost string }{
		{"Goal: now the checkout", "session ended", usd(0.5) + " in 1 turn"},
		{"Goal: add the cart endpoint", "compacted", usd(0.25) + " in 1 turn"},
	} {
		s := got[i]
		if s.Source != "extractive" || !strings.Contains(s.Text, want.goal) || !strings.Contains(s.Head, want.ended) || !strings.Contains(s.Head, want.cost) {
			t.Errorf("epoch %s: %q %q\n%s", s.Epoch, s.Source, s.Head, s.Text)
		}
	}
	if pending := run(t, b, "pending", chromedp.Evaluate[bool](`!!document.querySelector("[data-summary-pending]")`)); pending {
		t.Error("a finalized session says an epoch is in progress")
	}
	b.screenshot(t, dir, "session-summaries")

	b.open(t, srv.URL+"/?window=all&tab=sessions&session=m-active&sclient=claude-code", "sessions")
	got = summaries()
	if len(got) != 1 || got[0].Epoch != "0" || !strings.Contains(got[0].Text, "Goal: refactor the cart") || strings.Contains(got[0].Text, memActiveMarker) {
		t.Errorf("m-active shows summaries %+v, want epoch 0's alone", got)
	}
	if p := run(t, b, "pending", chromedp.Evaluate[string](`document.querySelector("[data-summary-pending]")?.dataset.summaryPending || ""`)); p != "1" {
		t.Errorf("m-active: the page does not say epoch 1 is in progress (%q)", p)
	}

	b.open(t, srv.URL+"/?window=all&tab=memory&project="+url.QueryEscape(memShop), "memory")
	var rows [][]string
	js := `JSON.stringify([...document.querySelectorAll('table[data-table="observations"] tbody tr')].map((tr) => {
	  const th = [...tr.closest("table").querySelectorAll("thead th")].map((th) => th.textContent);
	  const cell = (label) => tr.children[th.indexOf(label)].textContent;
	  return [tr.querySelector("td div").textContent, cell("Support"), cell("Confidence"), String(tr.querySelectorAll("li[data-evidence]").length)];
	}))`
	if err := json.Unmarshal([]byte(run(t, b, "observations", chromedp.Evaluate[string](js))), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("the shop's observations: %q, want 5", rows)
	}
	row := slices.IndexFunc(rows, func(r []string) bool { return r[0] == "tests run with `go test ./...`" })
	if row < 0 || !slices.Equal(rows[row][1:], []string{"3", "75%", "3"}) {
		t.Fatalf("the go test observation: %q", rows)
	}
	if n := run(t, b, "last sessions", chromedp.Evaluate[int](`document.querySelectorAll("[data-summary]").length`)); n != 3 {
		t.Errorf("%d last sessions' summaries, want 3", n)
	}
	// Its evidence opens in place; each action links to its session.
	sel := fmt.Sprintf(`table[data-table="observations"] tbody tr:nth-child(%d)`, row+1)
	run(t, b, "open the evidence", chromedp.Click(sel+` details.evidence summary`))
	ev := run(t, b, "evidence", chromedp.Evaluate[string](`[...document.querySelectorAll('`+sel+` li[data-evidence]')].map((li) => li.querySelector("a").title + " " + li.querySelector(".target").textContent).join(", ")`))
	if ev != "m-active go test ./..., m-idle go test ./..., m-done go test ./..." {
		t.Errorf("evidence %q", ev)
	}
	b.screenshot(t, dir, "memory")
	run(t, b, "open an evidence session", chromedp.Click(sel+` li[data-evidence] a`))
	b.waitReady(t, "sessions")
	if loc := run(t, b, "location", chromedp.Location()); !strings.Contains(loc, "session=m-active") {
		t.Errorf("the evidence link went to %s", loc)
	}

	// The selector lists the projects with observations, and switches.
	b.open(t, srv.URL+"/?window=all&tab=memory&project="+url.QueryEscape(memShop), "memory")
	if opts := run(t, b, "projects", chromedp.Evaluate[string](`[...document.querySelectorAll("#m-project option")].map((o) => o.value).join(",")`)); opts != ","+memBlog+","+memShop {
		t.Errorf("project selector %q", opts)
	}
	run(t, b, "choose the blog", chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const s = document.getElementById("m-project"); s.value = %q; s.dispatchEvent(new Event("change")); return true })()`, memBlog)))
	b.waitReady(t, "memory")
	if text := run(t, b, "blog", chromedp.Evaluate[string](`[...document.querySelectorAll('table[data-table="observations"] tbody tr td:first-child > div:first-child')].map((d) => d.textContent).join(", ")`)); text != "tests run with `pytest -x`" {
		t.Errorf("the blog's observations: %q", text)
	}
	if f := run(t, b, "project filter", chromedp.Evaluate[string](`document.getElementById("f-project").value`)); f != memBlog {
		t.Errorf("the project filter says %q after choosing the blog", f)
	}

	// All projects, at phone width: the page does not scroll sideways.
	run(t, b, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	b.open(t, srv.URL+"/?window=all&tab=memory", "memory")
	if n := run(t, b, "rows", chromedp.Evaluate[int](`document.querySelectorAll('table[data-table="observations"] tbody tr').length`)); n != 6 {
		t.Errorf("all projects: %d observations, want 6", n)
	}
	if w := run(t, b, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
		t.Errorf("memory at phone width: the page is %d px wider than the screen", w)
	}
	b.screenshot(t, dir, "phone-memory")
	run(t, b, "desktop", chromedp.EmulateViewport(1280, 900))
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
