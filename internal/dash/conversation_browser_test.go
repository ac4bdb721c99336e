package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/observerhq/observer/pkg/event"
)

// convRow is a message as the page shows it.
type convRow struct {
	ID, Role, Who, Text, Usage string
	Sub, Failed, Hl            bool
	Open                       []bool // its <details>' open states, in order
	Visible                    bool   // within the viewport
}

const convRows = `JSON.stringify([...document.querySelectorAll("[data-conversation] li.cm")].map((li) => {
  const r = li.getBoundingClientRect();
  return { ID: li.dataset.id, Role: li.dataset.role, Who: li.querySelector(".who").textContent,
    Text: (li.querySelector(":scope > .text, :scope > pre.call, :scope > details > .text") || { textContent: "" }).textContent,
    Usage: (li.querySelector(".usage") || { textContent: "" }).textContent, Sub: !!li.closest(".subagent"),
    Failed: li.classList.contains("failed"), Hl: li.classList.contains("hl"),
    Open: [...li.querySelectorAll(":scope > details")].map((d) => d.open),
    Visible: r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0 };
}))`

func convRowsOf(t *testing.T, b *browser) []convRow {
	t.Helper()
	var rows []convRow
	if err := json.Unmarshal([]byte(run(t, b, "conversation rows", chromedp.Evaluate[string](convRows))), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestBrowser_Conversation: a session with messages opens on its conversation, in order: the
// prompt, thinking folded, the reply with its turn's tokens and cost, the tool calls with their
// results (a short output open, a long one folded, the failed read marked with its error), the
// subagent's messages grouped and folded under their place, the compaction summary marked as an
// epoch boundary, markup shown as text. #m<id> scrolls to a message (loading the pages before it)
// and highlights it; scrolling to the end loads the next page; a session without messages opens on
// its timeline. At phone width nothing scrolls sideways.
func TestBrowser_Conversation(t *testing.T) {
	f := convStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: f.path, Version: "test"})
	dir := artifactDir(t)
	open := func(t *testing.T, query string) {
		t.Helper()
		b.open(t, srv.URL+"/?tab=sessions&"+query, "sessions")
		run(t, b, "conversation", chromedp.WaitReady(`[data-conversation] li.cm`))
	}

	open(t, "session=s1&sclient=claude-code")
	if sel := run(t, b, "view", chromedp.Evaluate[string](`document.querySelector('button[data-sview][aria-selected="true"]').dataset.sview`)); sel != "conversation" {
		t.Errorf("the view shown is %q", sel)
	}
	rows := convRowsOf(t, b)
	if len(rows) != len(convOrder) {
		t.Fatalf("%d messages on the page: %+v", len(rows), rows)
	}
	for i, w := range convOrder {
		if rows[i].Role != w.role || rows[i].ID != fmt.Sprint(f.ids[w.id]) {
			t.Errorf("message %d: %s #%s, want %s #%d", i, rows[i].Role, rows[i].ID, w.role, f.ids[w.id])
		}
	}
	byID := map[string]convRow{}
	for i, w := range convOrder {
		byID[w.id] = rows[i]
	}
	if r := byID["m2"]; len(r.Open) != 1 || r.Open[0] {
		t.Errorf("thinking is not folded: %+v", r)
	}
	if r := byID["m2"]; r.Usage != "30 tok · $0.2500" || byID["m3"].Usage != "" {
		t.Errorf("msg_a's tokens and cost beside its first block: %q, then %q", r.Usage, byID["m3"].Usage)
	}
	if r := byID["m12"]; r.Usage != "70 tok · $0.5000" {
		t.Errorf("the last reply's usage %q", r.Usage)
	}
	if r := byID["m4"]; r.Who != "Bash" || r.Text != "grep -rn advisory_lock internal/" || len(r.Open) != 1 || !r.Open[0] {
		t.Errorf("the grep call %+v", r)
	}
	if out := run(t, b, "grep output", chromedp.Text(fmt.Sprintf(`#m%d [data-part="output"] pre`, f.ids["m4"]))); out != "internal/db/migrate.go:42: pg_advisory_lock(7)" {
		t.Errorf("the grep's output %q", out)
	}
	if r := byID["m5"]; !r.Failed || !strings.Contains(run(t, b, "error", chromedp.Text(fmt.Sprintf(`#m%d [data-part="error"]`, f.ids["m5"]))), "file does not exist") {
		t.Errorf("the failed read %+v", r)
	}
	if r := byID["m6"]; len(r.Open) != 1 || r.Open[0] {
		t.Errorf("the long output is not folded: %+v", r)
	}
	if label := run(t, b, "long output", chromedp.Text(fmt.Sprintf(`#m%d [data-part="output"] summary`, f.ids["m6"]))); !strings.Contains(label, "80 lines") {
		t.Errorf("the long output's label %q", label)
	}
	if !byID["m8"].Sub || !byID["m9"].Sub || byID["m7"].Sub || byID["m10"].Sub {
		t.Errorf("subagent grouping: %+v %+v %+v %+v", byID["m7"], byID["m8"], byID["m9"], byID["m10"])
	}
	group := run(t, b, "subagent group", chromedp.Evaluate[string](`(() => { const g = document.querySelectorAll("[data-conversation] > li.subagent"); return g.length + " " + g[0].dataset.agent + " " + g[0].querySelector("details").open + " " + g[0].querySelector("summary").textContent })()`))
	if group != "1 agent-1 false Subagent agent-1 · 2 messages" {
		t.Errorf("subagent group %q", group)
	}
	if n := run(t, b, "epoch", chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll("#m%d [data-epoch-boundary]").length`, f.ids["m10"]))); n != 1 {
		t.Error("the compaction summary is not marked as an epoch boundary")
	}
	if r := byID["m11"]; r.Text != "<img src=x onerror=alert(1)> is that <b>all</b>?" {
		t.Errorf("the markup prompt shows as %q", r.Text)
	}
	if n := run(t, b, "injected", chromedp.Evaluate[int](`document.querySelectorAll("#view img, .cm b").length`)); n != 0 {
		t.Errorf("stored text became markup: %d elements", n)
	}
	if href := run(t, b, "anchor", chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector("#m%d .anchor").getAttribute("href")`, f.ids["m3"]))); href != fmt.Sprintf("#m%d", f.ids["m3"]) {
		t.Errorf("the message's link %q", href)
	}
	b.screenshot(t, dir, "conversation")

	// #m<id> of a subagent's message: the group opens, the message is in view and highlighted.
	open(t, fmt.Sprintf("session=s1&sclient=claude-code#m%d", f.ids["m9"]))
	run(t, b, "highlighted", chromedp.Poll[bool](`!!document.querySelector(".cm.hl")`, chromedp.WithPollingTimeout(5*time.Second)))
	for i, r := range convRowsOf(t, b) {
		if want := convOrder[i].id == "m9"; r.Hl != want || want && !r.Visible {
			t.Errorf("message %s: highlighted %v, in view %v", convOrder[i].id, r.Hl, r.Visible)
		}
	}
	// Clicking a message's # link moves the highlight there.
	run(t, b, "click an anchor", chromedp.Click(fmt.Sprintf(`#m%d .anchor`, f.ids["m4"])))
	run(t, b, "moved", chromedp.Poll[bool](fmt.Sprintf(`!!document.querySelector("#m%d")?.classList.contains("hl") && document.querySelectorAll(".cm.hl").length === 1`, f.ids["m4"]), chromedp.WithPollingTimeout(5*time.Second)))

	// A long conversation: #m<id> on its third page loads the pages before it.
	target := f.ids["s4#215"]
	open(t, fmt.Sprintf("session=s4&sclient=claude-code#m%d", target))
	run(t, b, "highlighted", chromedp.Poll[bool](fmt.Sprintf(`(() => { const el = document.querySelector("#m%d"); if (!el || !el.classList.contains("hl")) return false; const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight })()`, target), chromedp.WithPollingTimeout(5*time.Second)))
	if n := run(t, b, "loaded", chromedp.Evaluate[int](`document.querySelectorAll("[data-conversation] li.cm").length`)); n != 230 {
		t.Errorf("%d messages loaded to reach the 216th", n)
	}
	// Without a hash, a page of 100; scrolling to its end brings the next.
	open(t, "session=s4&sclient=claude-code")
	if n := run(t, b, "first page", chromedp.Evaluate[int](`document.querySelectorAll("[data-conversation] li.cm").length`)); n != 100 {
		t.Errorf("first page: %d messages", n)
	}
	run(t, b, "scroll", chromedp.Evaluate[bool](`window.scrollTo(0, document.documentElement.scrollHeight), true`))
	run(t, b, "second page", chromedp.Poll[bool](`document.querySelectorAll("[data-conversation] li.cm").length === 200`, chromedp.WithPollingTimeout(5*time.Second)))

	// A session without messages opens on its timeline.
	b.open(t, srv.URL+"/?tab=sessions&session=s3&sclient=claude-code", "sessions")
	run(t, b, "timeline", chromedp.WaitReady(`[data-timeline] li`))
	if shown := run(t, b, "panes", chromedp.Evaluate[string](`[...document.querySelectorAll("[data-pane]")].filter((p) => !p.hidden).map((p) => p.dataset.pane).join()`)); shown != "timeline" {
		t.Errorf("s3 shows %q", shown)
	}
	// And back: the switch shows the conversation, empty, saying so.
	run(t, b, "switch", chromedp.Click(`button[data-sview="conversation"]`))
	run(t, b, "empty conversation", chromedp.WaitVisible(`[data-conversation] li.none`))

	// Phone width: no sideways scroll, the long command and output wrapped.
	run(t, b, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	defer run(t, b, "desktop", chromedp.EmulateViewport(1280, 900))
	open(t, "session=s1&sclient=claude-code")
	run(t, b, "open the folded", chromedp.Evaluate[bool](`document.querySelectorAll("[data-conversation] details").forEach((d) => (d.open = true)), true`))
	if w := run(t, b, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
		t.Errorf("the conversation at phone width: the page is %d px wider than the screen", w)
	}
	if wide := run(t, b, "wide messages", chromedp.Evaluate[string](`[...document.querySelectorAll("[data-conversation] li.cm")].filter((li) => li.getBoundingClientRect().right > window.innerWidth + 0.5).map((li) => li.id).join()`)); wide != "" {
		t.Errorf("messages beyond the screen: %s", wide)
	}
	run(t, b, "collapse again", chromedp.Evaluate[bool](`document.querySelectorAll("[data-conversation] details").forEach((d) => (d.open = d.matches("[data-part=output]") && d.closest("li").id === "m`+fmt.Sprint(f.ids["m4"])+`")), true`))
	run(t, b, "to the conversation", chromedp.Evaluate[bool](`document.getElementById("conversation").scrollIntoView(), true`))
	b.screenshot(t, dir, "phone-conversation")
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// pressSlash types "/" as a keyboard does: one keyDown carrying its text (whose default, the
// character, a handler can prevent), then keyUp.
func pressSlash(t *testing.T, b *browser) {
	t.Helper()
	run(t, b, "press /", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, k := range []input.DispatchKeyEventParams{
			{Type: input.DispatchKeyEventTypeKeyDown, Key: "/", Code: "Slash", Text: "/", UnmodifiedText: "/", WindowsVirtualKeyCode: 191},
			{Type: input.DispatchKeyEventTypeKeyUp, Key: "/", Code: "Slash", WindowsVirtualKeyCode: 191},
		} {
			if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, k); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestBrowser_Search: "/" focuses the header's search box (not while typing in a field), Enter
// shows the sessions that match with the matched words marked (as text), the kind chips and the
// order narrow and reorder them with the page's filters applied, and a match opens its session's
// conversation at the message, highlighted.
func TestBrowser_Search(t *testing.T) {
	f := convStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: f.path, Version: "test"})
	dir := artifactDir(t)
	b.open(t, srv.URL+"/?window=all", "overview")
	pressSlash(t, b)
	if id := run(t, b, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); id != "q" {
		t.Fatalf("after / the focus is on %q", id)
	}
	if v := run(t, b, "value", chromedp.Evaluate[string](`document.getElementById("q").value`)); v != "" {
		t.Errorf("the / was typed into the box: %q", v)
	}
	run(t, b, "type", chromedp.SendKeys(`#q`, "migration lock\r"))
	b.waitReady(t, "search")
	type result struct {
		Session, Client string
		Kinds           []string
		Marks           []string
		Links           []string
	}
	results := func() []result {
		var rs []result
		js := `JSON.stringify([...document.querySelectorAll("[data-results] > li")].map((li) => ({ Session: li.dataset.session, Client: li.dataset.client,
		  Kinds: [...li.querySelectorAll(".match")].map((m) => m.dataset.kind),
		  Marks: [...li.querySelectorAll(".match mark")].map((m) => m.textContent.toLowerCase()),
		  Links: [...li.querySelectorAll(".match a.snippet")].map((a) => a.getAttribute("href")) })))`
		if err := json.Unmarshal([]byte(run(t, b, "results", chromedp.Evaluate[string](js))), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	rs := results()
	if len(rs) != 1 || rs[0].Session != "s1" || len(rs[0].Marks) < 2 {
		t.Fatalf("results %+v", rs)
	}
	for _, m := range rs[0].Marks {
		if m != "migration" && m != "lock" {
			t.Errorf("marked %q", m)
		}
	}
	for _, l := range rs[0].Links {
		if !strings.Contains(l, "session=s1") || !strings.Contains(l, "sclient=claude-code") || !strings.Contains(l, "#m") {
			t.Errorf("link %q", l)
		}
	}
	loc := run(t, b, "location", chromedp.Location())
	if !strings.Contains(loc, "tab=search") || !strings.Contains(loc, "q=migration+lock") {
		t.Errorf("the results are not a deep link: %s", loc)
	}
	b.screenshot(t, dir, "search")

	// "migration": both sessions; the prompt chip keeps prompts; newest first puts s1 first; the
	// page's client filter keeps codex's.
	b.open(t, srv.URL+"/?tab=search&q=migration", "search")
	if rs := results(); len(rs) != 2 {
		t.Fatalf("migration: %+v", rs)
	}
	run(t, b, "prompts", chromedp.Click(`button.chip[data-kind="prompt"]`))
	b.waitReady(t, "search")
	for _, r := range results() {
		if strings.Join(r.Kinds, ",") != "prompt" {
			t.Errorf("prompts only: %+v", r)
		}
	}
	if on := run(t, b, "chip", chromedp.Evaluate[string](`[...document.querySelectorAll("button.chip.on")].map((c) => c.dataset.kind).join()`)); on != "prompt" {
		t.Errorf("chips on: %q", on)
	}
	run(t, b, "newest", chromedp.Click(`button[data-order="newest"]`))
	b.waitReady(t, "search")
	if rs := results(); len(rs) != 2 || rs[0].Session != "s1" || rs[1].Session != "s2" {
		t.Errorf("newest first: %+v", rs)
	}
	b.open(t, srv.URL+"/?tab=search&q=migration&client=codex", "search")
	if rs := results(); len(rs) != 1 || rs[0].Session != "s2" {
		t.Errorf("client codex: %+v", rs)
	}

	// "/" while typing in a field is typed.
	run(t, b, "type a slash", chromedp.SendKeys(`#q`, "/x"))
	if v := run(t, b, "value", chromedp.Evaluate[string](`document.getElementById("q").value`)); v != "migration/x" {
		t.Errorf("typing / in the box gave %q", v)
	}

	// A match opens the conversation at its message.
	b.open(t, srv.URL+"/?tab=search&q=advisory_lock&kind=command", "search")
	run(t, b, "open the match", chromedp.Click(`[data-results] .match a.snippet`))
	b.waitReady(t, "sessions")
	want := f.ids["m4"]
	run(t, b, "at the message", chromedp.Poll[bool](fmt.Sprintf(`(() => { const el = document.querySelector("#m%d"); if (!el || !el.classList.contains("hl")) return false; const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight })()`, want), chromedp.WithPollingTimeout(5*time.Second)))
	if loc := run(t, b, "location", chromedp.Location()); !strings.HasSuffix(loc, fmt.Sprintf("#m%d", want)) {
		t.Errorf("location %s", loc)
	}
	// Back: the results again.
	run(t, b, "back", chromedp.NavigateBack())
	b.waitReady(t, "search")

	// Phone width: the box on its own row, the results without sideways scroll.
	run(t, b, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	defer run(t, b, "desktop", chromedp.EmulateViewport(1280, 900))
	b.open(t, srv.URL+"/?tab=search&q=migration", "search")
	if w := run(t, b, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
		t.Errorf("search results at phone width: the page is %d px wider than the screen", w)
	}
	b.screenshot(t, dir, "phone-search")
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestBrowser_ConversationLive: an open conversation follows the store: a message the writer
// stores from the bus is appended without a reload, the messages on screen staying as they were
// (the same elements, the folded thinking the user opened still open).
func TestBrowser_ConversationLive(t *testing.T) {
	pub, srv, st := liveSuite(t)
	b := newBrowser(t)
	now := time.Now()
	msg := func(role, text string, seq int64, at time.Time) *event.Event {
		ev := event.New(event.KindMessage, "test")
		ev.ID, ev.Time, ev.Client, ev.SessionID, ev.Project = event.RandomID(), at.UTC(), "claude-code", "conv-live", liveProject
		ev.Message = &event.Message{Role: role, Text: text, Seq: seq}
		return &ev
	}
	publish(t, pub, msg("user", "rename the flag", 64, now.Add(-2*time.Second)), msg("thinking", "the flag is in main.go", 128, now.Add(-time.Second)))
	waitRows(t, st, "messages", 2)
	b.open(t, srv.URL+"/?tab=sessions&session=conv-live&sclient=claude-code", "sessions")
	run(t, b, "conversation", chromedp.WaitReady(`[data-conversation] li.cm`))
	run(t, b, "open the thinking", chromedp.Evaluate[bool](`(() => { const d = document.querySelector("[data-conversation] details.thinking"); d.open = true; d.marked = true; return d.open })()`))
	following(t, srv, 1)
	start := time.Now()
	publish(t, pub, msg("assistant", "Renamed --old to --new.", 192, now))
	took := waitFor(t, b, "the new reply", `[...document.querySelectorAll("[data-conversation] li.cm")].some((li) => li.textContent.includes("Renamed --old to --new."))`, start, 30*time.Second)
	t.Logf("bus → conversation: %v", took)
	if kept := run(t, b, "kept", chromedp.Evaluate[bool](`(() => { const d = document.querySelector("[data-conversation] details.thinking"); return d.open && d.marked === true && document.querySelectorAll("[data-conversation] li.cm").length === 3 })()`)); !kept {
		t.Error("the live update rebuilt the conversation or closed what the user opened")
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
