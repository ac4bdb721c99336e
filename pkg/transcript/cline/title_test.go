package cline

import (
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// The CLI's metadata.title is the first line of the prompt (the real cline 3.0.65 wrote "list the
// files here" for the prompt "list the files here\nand say hi"), which is no title of its own;
// one that differs (a session imported from another tool, a fork) is the client's title, reported
// at the session's start.
func TestParser_CLITitle(t *testing.T) {
	meta := func(prompt, title string) string {
		return `{"session_id":"s1","started_at":"2026-12-01T17:41:46.281Z","cwd":"/home/ann/proj","prompt":` + prompt +
			`,"metadata":{"title":` + title + `}}`
	}
	for _, c := range []struct {
		name, prompt, title, want string
	}{
		{"first line", `"list the files here\nand say hi"`, `"list the files here"`, ""},
		{"wrapped", `"<user_input mode=\"act\">fix the build</user_input>"`, `"fix the build"`, ""},
		{"wrapped on its own line", `"<user_input mode=\"act\">\nfix the build\nnow</user_input>"`, `"fix the build"`, ""},
		{"imported", `"<user_input mode=\"act\">fix the build</user_input>"`, `"Auth refactor (from Claude Code)"`, "Auth refactor (from Claude Code)"},
		{"no title", `"fix the build"`, `null`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := cliSession(t, t.TempDir(), "s1", doc(msgUser), meta(c.prompt, c.title))
			evs, _ := parseSource(t, New(nil), src, nil)
			var titles []event.Event
			for _, e := range evs {
				if e.Session != nil && e.Session.Title != "" {
					titles = append(titles, e)
				}
			}
			if c.want == "" {
				if len(titles) != 0 {
					t.Errorf("titles %+v, want none", titles)
				}
				return
			}
			if len(titles) != 1 || titles[0].Session.Title != c.want || titles[0].Session.TitleByUser || titles[0].Session.State != "" ||
				!titles[0].Time.Equal(time.Date(2026, 12, 1, 17, 41, 46, 281e6, time.UTC)) || titles[0].SessionID != "s1" {
				t.Errorf("titles %+v", titles)
			}
		})
	}
}
