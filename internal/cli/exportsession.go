package cli

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/scrub"
	"github.com/observerhq/observer/pkg/store"
)

// exportOutputMax is where an exported tool output is cut.
const exportOutputMax = 20000

// runExportSession writes one session's conversation (observerctl export --session ID).
func runExportSession(c *cli.Context, e *env) error {
	format := c.String("format")
	if !c.IsSet("format") {
		format = "md"
	}
	if format != "md" && format != "html" && format != "json" {
		return usageErr("--format %q with --session: choose md, html or json", format)
	}
	for _, f := range []string{"table", "since", "until", "project", "client"} {
		if c.IsSet(f) {
			return usageErr("--%s does not apply with --session", f)
		}
	}
	st, err := openReadStore(c.Context, e)
	if err != nil {
		return err
	}
	defer st.Close()
	ref, err := store.ResolveSession(c.Context, st.DB, c.String("session"))
	if err != nil {
		if errors.Is(err, store.ErrNoSession) {
			return withCode(ExitUnavailable, err)
		}
		return withCode(ExitUsage, err)
	}
	sess, _, err := query.FindSession(c.Context, st.DB, ref.ID, ref.Client)
	if err != nil {
		return err
	}
	page, err := query.Conversation(c.Context, st.DB, query.ConversationQuery{Client: ref.Client, SessionID: ref.ID, MaxOutput: exportOutputMax})
	if err != nil {
		return err
	}
	for i := range page.Items {
		it := &page.Items[i]
		it.Text, it.Output, it.Error = scrub.String(it.Text), scrub.String(it.Output), scrub.String(it.Error)
	}
	path := c.String("output")
	err = writeOutput(e.stdout, path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		switch format {
		case "md":
			writeConversationMarkdown(bw, sess, page.Items)
		case "html":
			writeConversationHTML(bw, sess, page.Items)
		default:
			writeJSON(bw, struct {
				Session  query.Session            `json:"session"`
				Messages []query.ConversationItem `json:"messages"`
			}{sess, page.Items})
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("export session %s: %w", ref.ID, err)
	}
	if path != "" {
		fmt.Fprintf(e.stdout, "exported %d message(s) of session %s to %s\n", len(page.Items), ref.ID, path)
	}
	return nil
}

// roleTitle is how an export heads a message of each role.
var roleTitle = map[string]string{"user": "User", "assistant": "Assistant", "thinking": "Thinking", "tool_call": "Tool call",
	"summary": "Compaction summary"}

func usageLine(u *query.TurnUsage) string {
	if u == nil {
		return ""
	}
	src := "transcript"
	if u.Proxy {
		src = "proxy"
	}
	return fmt.Sprintf("%d in · %d out · %d cache read · %d cache write · $%.4f (%s)", u.InputTokens, u.OutputTokens,
		u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD, src)
}

func sessionHeading(s query.Session) string {
	if s.Title != "" {
		return s.Title
	}
	return "Session " + s.SessionID
}

// writeConversationMarkdown writes the conversation as Markdown: a heading per message, tool
// inputs and outputs in fenced blocks, thinking as a quote.
func writeConversationMarkdown(w io.Writer, s query.Session, items []query.ConversationItem) {
	fmt.Fprintf(w, "# %s\n\n", oneLineMD(sessionHeading(s)))
	fmt.Fprintf(w, "- client: %s\n- session: %s\n", s.Client, s.SessionID)
	if s.Project != "" {
		fmt.Fprintf(w, "- project: %s\n", s.Project)
	}
	if s.FirstSeen > 0 {
		fmt.Fprintf(w, "- from %s to %s\n", mdTime(s.FirstSeen), mdTime(s.LastSeen))
	}
	fmt.Fprintf(w, "- %d messages\n", len(items))
	for _, it := range items {
		head := roleTitle[it.Role]
		if it.Role == "tool_call" && it.Tool != "" {
			head += ": " + it.Tool
		}
		if it.AgentID != "" {
			head += " (subagent " + it.AgentID + ")"
		}
		fmt.Fprintf(w, "\n## %s <a id=\"m%d\"></a>\n\n_%s", head, it.ID, mdTime(it.T))
		if it.Model != "" {
			fmt.Fprintf(w, " · %s", it.Model)
		}
		if u := usageLine(it.Usage); u != "" {
			fmt.Fprintf(w, " · %s", u)
		}
		fmt.Fprint(w, "_\n\n")
		switch it.Role {
		case "thinking":
			for _, line := range strings.Split(strings.TrimRight(it.Text, "\n"), "\n") {
				fmt.Fprintf(w, "> %s\n", line)
			}
		case "tool_call":
			fmt.Fprintf(w, "%s\n", fence(it.Text))
			switch {
			case it.Success != nil && !*it.Success:
				fmt.Fprintf(w, "\nFailed")
				if it.Error != "" {
					fmt.Fprintf(w, ": %s", oneLineMD(it.Error))
				}
				fmt.Fprintln(w)
			}
			if it.Output != "" {
				cut := ""
				if it.OutputTruncated {
					cut = fmt.Sprintf(" (first %d of %d bytes)", len(it.Output), it.OutputSize)
				}
				fmt.Fprintf(w, "\nOutput%s:\n\n%s\n", cut, fence(it.Output))
			}
		default:
			fmt.Fprintf(w, "%s\n", strings.TrimRight(it.Text, "\n"))
		}
	}
}

// fence puts s in a fenced code block longer than any run of backticks it holds.
func fence(s string) string {
	n := 3
	for run, i := 0, 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

func oneLineMD(s string) string { return strings.Join(strings.Fields(s), " ") }

func mdTime(ms int64) string { return time.UnixMilli(ms).Local().Format("2006-01-02 15:04:05") }

// writeConversationHTML writes one self-contained page: inline style, no script, nothing loaded
// from elsewhere; thinking and long outputs in <details>.
func writeConversationHTML(w io.Writer, s query.Session, items []query.ConversationItem) {
	esc := html.EscapeString
	fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>%s</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:0 auto;padding:1em;color:#1d2127;background:#fff}
h1{font-size:1.3em}.meta{color:#5b636e;font-size:.85em}
.m{border-left:3px solid #c9ced6;padding:.3em .8em;margin:1em 0}
.user{border-color:#2f6fdb;background:#f3f7fe}.assistant{border-color:#2a9d62}.thinking{border-color:#b58b2a;color:#5b636e}
.tool_call{border-color:#8a63d2}.summary{border-color:#d2553c;background:#fdf4f2}
.who{font-weight:600}.t{color:#5b636e;font-size:.8em;margin-left:.5em}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f7f9;padding:.5em;border-radius:4px;font-size:.85em}
.text{white-space:pre-wrap;word-break:break-word}.fail{color:#c0392b}
@media (prefers-color-scheme: dark){body{background:#16181c;color:#e3e6ea}pre{background:#23262c}.user{background:#1b2433}.summary{background:#2e1f1c}}
</style></head><body>
<h1>%s</h1>
<p class="meta">%s · session %s`, esc(sessionHeading(s)), esc(sessionHeading(s)), esc(s.Client), esc(s.SessionID))
	if s.Project != "" {
		fmt.Fprintf(w, " · %s", esc(s.Project))
	}
	if s.FirstSeen > 0 {
		fmt.Fprintf(w, " · %s – %s", esc(mdTime(s.FirstSeen)), esc(mdTime(s.LastSeen)))
	}
	fmt.Fprintf(w, " · %d messages</p>\n", len(items))
	for _, it := range items {
		head := roleTitle[it.Role]
		if it.Role == "tool_call" && it.Tool != "" {
			head += ": " + it.Tool
		}
		if it.AgentID != "" {
			head += " (subagent " + it.AgentID + ")"
		}
		fmt.Fprintf(w, `<div class="m %s" id="m%d"><div><a class="who" href="#m%d">%s</a><span class="t">%s`, esc(it.Role), it.ID, it.ID,
			esc(head), esc(mdTime(it.T)))
		if it.Model != "" {
			fmt.Fprintf(w, " · %s", esc(it.Model))
		}
		if u := usageLine(it.Usage); u != "" {
			fmt.Fprintf(w, " · %s", esc(u))
		}
		fmt.Fprint(w, "</span></div>\n")
		switch it.Role {
		case "thinking":
			fmt.Fprintf(w, "<details><summary>thinking</summary><div class=\"text\">%s</div></details>", esc(it.Text))
		case "tool_call":
			fmt.Fprintf(w, "<pre>%s</pre>", esc(it.Text))
			if it.Success != nil && !*it.Success {
				fmt.Fprintf(w, "<div class=\"fail\">failed%s</div>", esc(map[bool]string{true: ": " + it.Error, false: ""}[it.Error != ""]))
			}
			if it.Output != "" {
				open := ""
				if len(it.Output) <= 600 && !it.OutputTruncated {
					open = " open"
				}
				label := fmt.Sprintf("output (%d bytes)", max(it.OutputSize, int64(len(it.Output))))
				if it.OutputTruncated {
					label += fmt.Sprintf(", first %d shown", len(it.Output))
				}
				fmt.Fprintf(w, "<details%s><summary>%s</summary><pre>%s</pre></details>", open, esc(label), esc(it.Output))
			}
		default:
			fmt.Fprintf(w, "<div class=\"text\">%s</div>", esc(it.Text))
		}
		fmt.Fprint(w, "</div>\n")
	}
	fmt.Fprint(w, "</body></html>\n")
}
