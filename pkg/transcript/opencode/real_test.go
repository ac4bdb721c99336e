package opencode

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// TestRealDatabases reads databases written by the real clients (OpenCode 1.18.33 and Kilo CLI
// 7.7.7, `run "list the files" -m fake/gpt-5.2` against observer-fakeapi, whose chat usage is
// prompt_tokens 1120 with 1000 cached and completion_tokens 45 with 10 reasoning; the model called
// apply_patch with no arguments, which failed), reduced to the four tables this reader uses.
func TestRealDatabases(t *testing.T) {
	// OpenCode's title request got the fake API's text, which it made the session's title; the
	// Kilo run ended before its title request did, leaving the placeholder, which is no title.
	for _, c := range []struct {
		file  string
		a     *Adapter
		title string
	}{{"opencode-1.18.33.db", New(nil), "This is the observer fake API."}, {"kilo-7.7.7.db", NewKilo(nil), ""}} {
		t.Run(c.file, func(t *testing.T) {
			path := copyFile(t, filepath.Join("testdata", c.file))
			evs, state, _ := poll(t, c.a, path, nil)
			got := sumUp(evs)
			// Two requests (the tool call, the final text), each 120 net input, 35 + 10 output, 1000
			// cache reads; the session-title request writes no message.
			want := event.Tokens{Input: 240, Output: 90, Reasoning: 20, CacheRead: 2000}
			if got.Sessions != 1 || got.Usages != 2 || got.Tokens != want {
				t.Errorf("got %+v, want 1 session, 2 usages, %+v", got, want)
			}
			if want := []string{c.title}; c.title == "" && len(got.Titles) != 0 || c.title != "" && !slices.Equal(got.Titles, want) {
				t.Errorf("titles %q, want %q", got.Titles, c.title)
			}
			if got.Types[event.ActionUserPrompt] != 1 || got.Types[event.ActionEditFile] != 1 {
				t.Errorf("actions %v, want a user_prompt and an edit_file (apply_patch)", got.Types)
			}
			for _, e := range evs {
				if e.Kind == event.KindAction && e.Action.Tool == "apply_patch" {
					if e.Action.Success == nil || *e.Action.Success || e.Action.Error == "" {
						t.Errorf("apply_patch: success %v error %q, want a failure", e.Action.Success, e.Action.Error)
					}
				}
				if e.Kind == event.KindTokenUsage && e.TokenUsage.Model != "gpt-5.2" {
					t.Errorf("usage model %q", e.TokenUsage.Model)
				}
				if len(e.SessionID) < 4 || e.SessionID[:4] != "ses_" {
					t.Errorf("session id %q, want the client's ses_...", e.SessionID)
				}
			}
			again, _, _ := poll(t, c.a, path, state)
			if len(again) != 0 {
				t.Errorf("second pass: %d events", len(again))
			}
			// Read as immutable (no -wal file): nothing created beside the database.
			if files := transcripttest.DirFiles(t, filepath.Dir(path)); !slices.Equal(files, []string{c.file}) {
				t.Errorf("files beside the database: %v", files)
			}
		})
	}
}
