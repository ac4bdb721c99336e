package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// A session's title: its earliest recognisable prompt, replaced by a title the client made (the
// newest of those), replaced by one the user gave; batches in any order give the same title. Its
// model, when no session event names one, is that of most of its main-thread usage rows.
func TestStore_SessionTitleAndModel(t *testing.T) {
	s := newWriter(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	prompt := func(key string, m int, text string) event.Event {
		return actionEv(key, at(m), event.Action{Type: event.ActionUserPrompt, Target: text})
	}
	titled := func(key string, m int, title string, user bool) event.Event {
		return sessionEv(key, at(m), event.Session{Title: title, TitleByUser: user})
	}
	usage := func(key string, m int, model, agent string) event.Event {
		e := newEv(event.KindTokenUsage, key, at(m))
		e.TokenUsage = &event.TokenUsage{Model: model, MessageID: key, AgentID: agent, Tokens: event.Tokens{Input: 1}}
		return e
	}
	get := func() (title, source, model string) {
		t.Helper()
		if err := s.DB.QueryRow(`SELECT title, title_source, model FROM sessions WHERE session_id = ?`, testSession).Scan(&title, &source, &model); err != nil {
			t.Fatal(err)
		}
		return
	}
	steps := []struct {
		evs                []event.Event
		title, source, mdl string
	}{
		{[]event.Event{prompt("p5", 5, "/clear"), prompt("p6", 6, "  fix   the <b>flaky</b>\n test  ")}, "fix the flaky test", "prompt", ""},
		{[]event.Event{prompt("p2", 2, "<command-name>/init</command-name>"), prompt("p3", 3, "write the README")}, "write the README", "prompt", ""},
		{[]event.Event{prompt("p1", 1, "[image]"), usage("u1", 1, "haiku", "agent-1"), usage("u2", 2, "opus", ""), usage("u3", 3, "opus", ""), usage("u4", 4, "sonnet", "")}, "write the README", "prompt", "opus"},
		{[]event.Event{titled("c9", 9, "README written", false)}, "README written", "client", "opus"},
		{[]event.Event{titled("c8", 8, "older client title", false), prompt("p0", 0, "the very first")}, "README written", "client", "opus"},
		{[]event.Event{titled("u7", 7, "my readme", true)}, "my readme", "user", "opus"},
		{[]event.Event{titled("c10", 10, "newer client title", false), usage("u5", 5, "sonnet", "")}, "my readme", "user", "opus"},
		{[]event.Event{sessionEv("m", at(11), event.Session{State: event.SessionActive, Model: "gpt-5"})}, "my readme", "user", "gpt-5"},
	}
	for i, st := range steps {
		write(t, s, st.evs, nil)
		if title, source, model := get(); title != st.title || source != st.source || model != st.mdl {
			t.Fatalf("step %d: %q (%s), model %q; want %q (%s), model %q", i, title, source, model, st.title, st.source, st.mdl)
		}
	}
}

func TestCleanTitle(t *testing.T) {
	long := "please refactor the session store so that every reader shares one cursor table and the writer keeps its batches small"
	for in, want := range map[string]string{
		"fix the bug":            "fix the bug",
		"  two\n\nlines\t here ": "two lines here",
		"<command-name>/review</command-name> <command-args>PR 12</command-args>": "/review PR 12",
		"/clear":           "",
		"[image]":          "",
		"":                 "",
		"a < b and c > d":  "a < b and c > d",
		long:               "please refactor the session store so that every reader shares one cursor table…",
		"幫我檢查一下 go.mod 裡面": "幫我檢查一下 go.mod 裡面",
	} {
		got, ok := event.CleanTitle(in)
		if got != want || ok != (want != "") {
			t.Errorf("CleanTitle(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if got, _ := event.CleanTitle(long); len([]rune(got)) > event.TitleRunes {
		t.Errorf("%d runes", len([]rune(got)))
	}
}

// A store from before titles gets them on opening: each session its first recognisable prompt's,
// and a model from its usage rows.
func TestStore_MigrationFillsTitles(t *testing.T) {
	path := t.TempDir() + "/observer.db"
	s := openWriter(t, path)
	p := actionEv("p1", t0, event.Action{Type: event.ActionUserPrompt, Target: "/clear"})
	p2 := actionEv("p2", t0.Add(time.Second), event.Action{Type: event.ActionUserPrompt, Target: "add a --json flag to cost"})
	u := newEv(event.KindTokenUsage, "u1", t0)
	u.TokenUsage = &event.TokenUsage{Model: "claude-sonnet-4-5", MessageID: "m1", Tokens: event.Tokens{Input: 1}}
	write(t, s, []event.Event{p, p2, u}, nil)
	for _, q := range []string{`DROP INDEX actions_prompts`, `ALTER TABLE sessions DROP COLUMN title`,
		`ALTER TABLE sessions DROP COLUMN title_source`, `ALTER TABLE sessions DROP COLUMN title_at`,
		`UPDATE sessions SET model = ''`, `DELETE FROM schema_migrations WHERE version = 11`} {
		if _, err := s.DB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s = openWriter(t, path)
	defer s.Close()
	var title, source, model string
	if err := s.DB.QueryRow(`SELECT title, title_source, model FROM sessions WHERE session_id = ?`, testSession).Scan(&title, &source, &model); err != nil {
		t.Fatal(err)
	}
	if title != "add a --json flag to cost" || source != "prompt" || model != "claude-sonnet-4-5" {
		t.Errorf("after the migration: %q (%s), model %q", title, source, model)
	}
}

func TestResolveSession(t *testing.T) {
	s := newWriter(t)
	for i, id := range []string{"session-624a4a58", "session-624b0000", "abc"} {
		e := actionEv(fmt.Sprint("r", i), t0.Add(time.Duration(i)*time.Second), event.Action{Type: event.ActionUserPrompt, Target: "prompt " + id})
		e.SessionID = id
		write(t, s, []event.Event{e}, nil)
	}
	ctx := context.Background()
	for arg, want := range map[string]string{"session-624a": "session-624a4a58", "abc": "abc", " session-624b ": "session-624b0000"} {
		r, err := store.ResolveSession(ctx, s.DB, arg)
		if err != nil || r.ID != want || r.Title != "prompt "+want {
			t.Errorf("%q: %+v %v, want %s", arg, r, err, want)
		}
	}
	if _, err := store.ResolveSession(ctx, s.DB, "session-62"); err == nil || !strings.Contains(err.Error(), "ambiguous") ||
		!strings.Contains(err.Error(), "session-624a4a58") || !strings.Contains(err.Error(), "prompt session-624b0000") {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := store.ResolveSession(ctx, s.DB, "zzz"); !errors.Is(err, store.ErrNoSession) {
		t.Errorf("unknown: %v", err)
	}
}
