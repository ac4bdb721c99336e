package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/pkg/event"
)

// The checks and the report of TestChaos.

// chaosProcs are the processes sampled, in report order; "supervisor" hosts the bus.
var chaosProcs = []string{"supervisor", "writer", "proxy", "watch", "dash"}

type procSample struct {
	pid        int
	rssKB, fds int64
	threads    int64
	ok         bool
}

type sampleRow struct {
	label string
	at    time.Duration
	procs map[string]procSample
}

// sample reads RSS, open files and threads of every process from /proc.
func (r *chaosRun) sample(label string) {
	st, _ := r.status()
	pids := map[string]int{"supervisor": st.PID}
	for _, c := range st.Components {
		pids[c.Name] = c.PID
	}
	row := sampleRow{label: label, at: time.Since(r.start), procs: map[string]procSample{}}
	for name, pid := range pids {
		if pid == 0 {
			continue
		}
		row.procs[name] = readProc(pid)
	}
	r.mu.Lock()
	r.samples = append(r.samples, row)
	r.mu.Unlock()
	if label == "" {
		var b strings.Builder
		for _, name := range chaosProcs {
			if p := row.procs[name]; p.ok {
				fmt.Fprintf(&b, " %s %.0fMB/%dfd", name, float64(p.rssKB)/1024, p.fds)
			}
		}
		r.t.Logf("+%v:%s", row.at.Round(time.Second), b.String())
	}
}

func readProc(pid int) procSample {
	p := procSample{pid: pid}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			p.rssKB, _ = strconv.ParseInt(f[1], 10, 64)
		case "Threads:":
			p.threads, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return p
	}
	p.fds, p.ok = int64(len(fds)), true
	return p
}

func (r *chaosRun) sampler(ctx context.Context) {
	tick := time.NewTicker(r.cfg.sample)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.sample("")
		}
	}
}

// producerRow is one line of the events table.
type producerRow struct {
	name                                  string
	produced, stored, duplicated, missing int
	allowed                               int    // lost with a killed proxy: allowed, counted apart
	note                                  string // what "allowed" holds, details of misses
}

type chaosReport struct {
	rows     []producerRow
	failures []string
	notes    []string
	restarts map[string]int
}

func (rep *chaosReport) failf(format string, args ...any) {
	rep.failures = append(rep.failures, fmt.Sprintf(format, args...))
}

// counts runs a "key, count" query into a map.
func counts(db *sql.DB, query string) (map[string]int, error) {
	rows, err := db.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		m[k] = n
	}
	return m, rows.Err()
}

// tally compares a ledger with the stored counts per key.
func tally(name string, keys []string, stored map[string]int) (producerRow, []string) {
	row := producerRow{name: name, produced: len(keys)}
	var missing []string
	for _, k := range keys {
		switch n := stored[k]; {
		case n == 0:
			row.missing++
			missing = append(missing, k)
		case n == 1:
			row.stored++
		default:
			row.stored++
			row.duplicated++
		}
	}
	return row, missing
}

func (r *chaosRun) check() *chaosReport {
	rep := &chaosReport{restarts: map[string]int{}}
	db := r.s.db()
	must := func(m map[string]int, err error) map[string]int {
		if err != nil {
			rep.failf("query: %v", err)
		}
		return m
	}
	add := func(row producerRow, missing []string) {
		if row.duplicated > 0 || row.missing > 0 {
			rep.failf("%s: %d of %d produced are missing (first %v), %d stored more than once", row.name, row.missing, row.produced,
				missing[:min(len(missing), 5)], row.duplicated)
		}
		rep.rows = append(rep.rows, row)
	}

	// Proxy: what the fake API served, each exactly one api_turn.
	turns := must(counts(db, "SELECT message_id, count(*) FROM api_turns WHERE message_id != '' GROUP BY message_id"))
	served := map[string]bool{}
	for _, group := range []string{"synthetic", "claude", "codex"} {
		row := producerRow{name: "proxy: " + group + " requests"}
		var missing, inFlight []string
		diskLost := 0
		for _, req := range r.fake.Requests() {
			if req.Method != "POST" || req.ResponseID == "" || req.Status != 200 {
				continue
			}
			served[req.ResponseID] = true
			g := "synthetic"
			if !strings.HasPrefix(req.SessionID, "chaos-proxy-") {
				g = "codex"
				if req.Provider == fakeapi.ProviderAnthropic {
					g = "claude"
				}
			}
			if g != group {
				continue
			}
			row.produced++
			switch n := turns[req.ResponseID]; {
			case n == 1:
				row.stored++
			case n > 1:
				row.stored++
				row.duplicated++
			default:
				if r.faults.allowTurn(req) {
					// Served while the disk was full and counted by the proxy: checked against its
					// count by faultRun.check.
					row.allowed++
					diskLost++
				} else if k, ok := r.proxyKilledWithin(req.Time, 2*time.Second); ok && !r.answeredWhole(req.ResponseID) {
					// Killed before the client had the whole response: the turn may die with the
					// proxy. One the client read whole was journaled first (pkg/proxy), so the
					// next proxy publishes it: that one is never allowed missing.
					row.allowed++
					inFlight = append(inFlight, fmt.Sprintf("%s served %v before the kill", req.ResponseID, k.Sub(req.Time).Round(time.Millisecond)))
					if req.Time.After(k) {
						inFlight[len(inFlight)-1] = fmt.Sprintf("%s served %v after the kill (the proxy still dying)", req.ResponseID, req.Time.Sub(k).Round(time.Millisecond))
					}
				} else {
					row.missing++
					why := ""
					if ok {
						why = fmt.Sprintf(", read whole by the client before the proxy was killed %v later", k.Sub(req.Time).Round(time.Millisecond))
					}
					missing = append(missing, fmt.Sprintf("%s (served at +%v, %s%s)", req.ResponseID, req.Time.Sub(r.start).Round(time.Millisecond), req.Path, why))
				}
			}
		}
		if n := row.allowed - diskLost; n > 0 {
			row.note = fmt.Sprintf("%d lost with the killed proxy before the client had them whole: %v", n, inFlight[:min(len(inFlight), 3)])
		}
		if diskLost > 0 {
			row.note = strings.TrimPrefix(row.note+fmt.Sprintf("; %d served while the disk was full and not recorded", diskLost), "; ")
		}
		add(row, missing)
	}
	// The synthetic client read every answer from a served response.
	r.proxy.mu.Lock()
	for id := range r.proxy.answered {
		if !served[id] {
			rep.failf("the client read %s, which the fake API did not record serving", id)
		}
	}
	r.proxy.mu.Unlock()
	var stray []string
	for id := range turns {
		if strings.Contains(id, "_fake_") && !served[id] {
			stray = append(stray, id)
		}
	}
	if len(stray) > 0 {
		rep.failf("%d api_turns for no response the fake API served: %v", len(stray), stray[:min(len(stray), 5)])
	}

	// Synthetic transcripts: prompts, tool calls (with their results merged), usage.
	l := &r.lines
	l.mu.Lock()
	prompts := must(counts(db, "SELECT target, count(*) FROM actions WHERE type = 'user_prompt' AND target LIKE 'chaos prompt %' GROUP BY target"))
	add(tally("watch: synthetic prompts", l.prompts, prompts))
	tools := must(counts(db, "SELECT tool_use_id, count(*) FROM actions WHERE tool_use_id LIKE 'toolu_chaos_%' GROUP BY tool_use_id"))
	add(tally("watch: synthetic tool calls", l.tools, tools))
	usage := must(counts(db, "SELECT message_id, count(*) FROM token_usage WHERE message_id LIKE 'msg_chaos_%' GROUP BY message_id"))
	add(tally("watch: synthetic usage", l.msgs, usage))
	var ids []string
	for _, p := range l.prompts {
		n, _ := strconv.Atoi(strings.TrimPrefix(p, "chaos prompt "))
		ids = append(ids, event.ID("claude-code", "action", fmt.Sprintf("chaos-%d-0", n)))
	}
	l.mu.Unlock()
	byID := must(counts(db, "SELECT event_id, 1 FROM actions WHERE type = 'user_prompt' AND target LIKE 'chaos prompt %'"))
	if row, missing := tally("", ids, byID); row.missing > 0 {
		rep.failf("%d synthetic prompts stored under another event id than their line's uuid: %v", row.missing, missing[:min(len(missing), 3)])
	}
	if n := countOf(db, "SELECT count(*) FROM actions WHERE tool_use_id LIKE 'toolu_chaos_%' AND (success IS NULL OR success != 1)"); n > 0 {
		rep.failf("%d synthetic tool calls without their result merged", n)
	}

	// Real Claude Code transcripts on disk: each message's usage once, each tool call once.
	msgs, calls := claudeTranscriptIDs(filepath.Join(r.clientHome, ".claude", "projects"))
	if len(msgs) > 0 {
		fakeUsage := must(counts(db, "SELECT message_id, count(*) FROM token_usage WHERE message_id LIKE 'msg_fake_%' GROUP BY message_id"))
		add(tally("watch: claude transcripts usage", msgs, fakeUsage))
		fakeCalls := must(counts(db, "SELECT tool_use_id, count(*) FROM actions WHERE client = 'claude-code' AND tool_use_id LIKE 'toolu_fake_%' GROUP BY tool_use_id"))
		add(tally("watch: claude transcripts tool calls", calls, fakeCalls))
	}

	// Hooks.
	r.hooks.mu.Lock()
	hooks := must(counts(db, "SELECT tool_use_id, count(*) FROM hook_events WHERE tool_use_id LIKE 'chaos-%' GROUP BY tool_use_id"))
	add(tally("hooks", r.hooks.ok, hooks))
	r.hooks.mu.Unlock()

	// MCP calls through wrap.
	r.mcp.mu.Lock()
	var keys []string
	for _, k := range r.mcp.answered {
		keys = append(keys, k.session+"/"+k.request)
	}
	mcp := must(counts(db, "SELECT session_id || '/' || request_id, count(*) FROM mcp_calls WHERE session_id LIKE 'chaos-mcp-%' GROUP BY 1"))
	row, missing := tally("mcp wrap", keys, mcp)
	row.note = fmt.Sprintf("%d wrap processes", r.mcp.wraps)
	if r.faults != nil {
		row, missing = r.faults.allowMCP(row, missing, r.mcp.runs, rep)
	}
	add(row, missing)
	r.mcp.mu.Unlock()

	// Client errors: during proxy down time are allowed, others are not.
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.proxy.errsOther); n > 0 {
		rep.failf("%d proxy requests failed outside the proxy's down time: %v", n, r.proxy.errsOther[:min(n, 5)])
	}
	for name, c := range r.clientRuns {
		if n := len(c.errsOther); n > 0 {
			rep.failf("%d %s runs failed outside the proxy's down time: %v", n, name, c.errsOther[:min(n, 3)])
		}
	}
	var hookErrs []string
	for _, f := range r.hooks.failed {
		if !r.faults.allowHook(f) {
			hookErrs = append(hookErrs, f.msg)
		}
	}
	if n := len(hookErrs); n > 0 {
		rep.failf("%d hook calls failed: %v", n, hookErrs[:min(n, 5)])
	}
	if n := len(r.mcp.failed); n > 0 {
		rep.failf("%d MCP failures: %v", n, r.mcp.failed[:min(n, 5)])
	}
	for _, k := range r.kills {
		if k.err != "" {
			rep.failf("kill of %s (pid %d) at +%v: %s", k.comp, k.pid, k.at.Sub(r.start).Round(time.Millisecond), k.err)
		}
	}
	return rep
}

// answeredWhole reports whether the synthetic client read the response whole (to its end, without
// an error).
func (r *chaosRun) answeredWhole(id string) bool {
	r.proxy.mu.Lock()
	defer r.proxy.mu.Unlock()
	_, ok := r.proxy.answered[id]
	return ok
}

func countOf(db *sql.DB, query string) int {
	var n int
	db.QueryRow(query).Scan(&n)
	return n
}

// claudeTranscriptIDs returns the message ids (of assistant lines with usage) and the tool_use
// ids found in the real Claude Code transcripts under root (the synthetic ones excepted).
func claudeTranscriptIDs(root string) (msgs, calls []string) {
	seenM, seenC := map[string]bool{}, map[string]bool{}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") || strings.Contains(path, "-tmp-chaosproj") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var l struct {
				Type    string `json:"type"`
				Message struct {
					ID      string          `json:"id"`
					Model   string          `json:"model"`
					Usage   json.RawMessage `json:"usage"`
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "assistant" {
				continue
			}
			if l.Message.ID != "" && l.Message.Model != "<synthetic>" && len(l.Message.Usage) > 0 && !seenM[l.Message.ID] {
				seenM[l.Message.ID] = true
				msgs = append(msgs, l.Message.ID)
			}
			var blocks []struct{ Type, ID string }
			json.Unmarshal(l.Message.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "tool_use" && !seenC[b.ID] {
					seenC[b.ID] = true
					calls = append(calls, b.ID)
				}
			}
		}
		return nil
	})
	return msgs, calls
}

// String renders the report: events per producer, kills, client errors, resources.
func (rep *chaosReport) String(r *chaosRun) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "== chaos report: mode %s, load %v, %.0f proxy req/s, kill every %v, seed %d, wall %v\n",
		r.cfg.mode, r.cfg.load, r.cfg.rate, r.cfg.killEvery, r.cfg.seed, time.Since(r.start).Round(time.Second))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	allowed := "lost w/ killed proxy"
	if r.faults != nil {
		allowed = "not recorded: disk full"
	}
	fmt.Fprintf(w, "producer\tproduced\tstored\tduplicated\tmissing\t%s\t\n", allowed)
	for _, row := range rep.rows {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t\n", row.name, row.produced, row.stored, row.duplicated, row.missing, row.allowed)
	}
	w.Flush()
	for _, row := range rep.rows {
		if row.note != "" {
			fmt.Fprintf(&b, "  %s: %s\n", row.name, row.note)
		}
	}

	b.WriteString("\n== kills\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "component\tkills\trestarts seen\trecovery avg\trecovery max\t")
	for _, name := range chaosProcs {
		var sum, most time.Duration
		n := 0
		for _, k := range r.kills {
			if k.comp == name && k.err == "" {
				sum += k.recovered
				most = max(most, k.recovered)
				n++
			}
		}
		avg := time.Duration(0)
		if n > 0 {
			avg = sum / time.Duration(n)
		}
		restarts := "-"
		if name != "supervisor" {
			restarts = strconv.Itoa(rep.restarts[name])
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%v\t%v\t\n", name, r.killsBy[name], restarts, avg.Round(10*time.Millisecond), most.Round(10*time.Millisecond))
	}
	w.Flush()
	var down time.Duration
	for _, d := range r.downs {
		if !d.to.IsZero() {
			down += d.to.Sub(d.from)
		}
	}
	fmt.Fprintf(&b, "proxy down %d times, %v in all:", len(r.downs), down.Round(10*time.Millisecond))
	for _, d := range r.downs {
		fmt.Fprintf(&b, " +%v..+%v", d.from.Sub(r.start).Round(time.Millisecond), d.to.Sub(r.start).Round(time.Millisecond))
	}
	b.WriteString("\n")

	if r.faults != nil {
		r.faults.report(&b, r)
	}

	b.WriteString("\n== client errors\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "client\trequests\tok\terrors during proxy down\tother errors\t")
	fmt.Fprintf(w, "proxy load (synthetic)\t%d\t%d\t%d\t%d\t\n", r.proxy.sent, len(r.proxy.answered), len(r.proxy.errsDown), len(r.proxy.errsOther))
	for _, name := range []string{"claude", "codex"} {
		if c := r.clientRuns[name]; c != nil {
			fmt.Fprintf(w, "%s (runs)\t%d\t%d\t%d\t%d\t\n", name, c.runs, c.ok, len(c.errsDown), len(c.errsOther))
		}
	}
	fmt.Fprintf(w, "observerctl hook\t%d\t%d\t-\t%d\t\n", len(r.hooks.ok)+len(r.hooks.failed), len(r.hooks.ok), len(r.hooks.failed))
	fmt.Fprintf(w, "mcp tools/call\t%d\t%d\t-\t%d\t\n", len(r.mcp.answered), len(r.mcp.answered), len(r.mcp.failed))
	w.Flush()
	if r.proxy.skipped > 0 {
		fmt.Fprintf(&b, "proxy load: %d ticks skipped with 128 requests in flight\n", r.proxy.skipped)
	}
	if len(r.proxy.errsDown) > 0 {
		fmt.Fprintf(&b, "proxy errors during down time, first: %v\n", r.proxy.errsDown[:min(3, len(r.proxy.errsDown))])
	}

	b.WriteString("\n== resources per process (RSS MB / open fds / threads)\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "at\t")
	for _, name := range chaosProcs {
		fmt.Fprintf(w, "%s\t", name)
	}
	fmt.Fprintln(w)
	for _, row := range r.samples {
		label := "+" + row.at.Round(time.Second).String()
		if row.label != "" {
			label = row.label + " " + label
		}
		fmt.Fprintf(w, "%s\t", label)
		for _, name := range chaosProcs {
			if p, ok := row.procs[name]; ok && p.ok {
				fmt.Fprintf(w, "%.1f / %d / %d\t", float64(p.rssKB)/1024, p.fds, p.threads)
			} else {
				fmt.Fprint(w, "-\t")
			}
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	if len(r.samples) >= 2 {
		first, last := r.samples[0], r.samples[len(r.samples)-1]
		b.WriteString("RSS start -> end:")
		for _, name := range chaosProcs {
			fmt.Fprintf(&b, " %s %.1f -> %.1f MB;", name, float64(first.procs[name].rssKB)/1024, float64(last.procs[name].rssKB)/1024)
		}
		b.WriteString("\n")
	}

	if len(rep.failures) == 0 {
		b.WriteString("\nRESULT: ok\n")
	} else {
		fmt.Fprintf(&b, "\nRESULT: %d failures\n", len(rep.failures))
		for _, f := range rep.failures {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	return b.String()
}
