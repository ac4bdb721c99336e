package event

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// TitleRunes is the longest title SessionTitle gives, in characters.
const TitleRunes = 80

// CleanTitle makes a session title from a prompt: markup tags dropped, whitespace collapsed to
// single spaces, cut at a word boundary to TitleRunes characters with "…". ok is false for a
// prompt that says nothing a person would recognise a session by: empty, a bare slash command
// ("/clear", "/init"), an image placeholder, or a client's own interruption marker.
func CleanTitle(prompt string) (title string, ok bool) {
	s := stripTags(prompt)
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	switch {
	case s == "", s == "[image]", strings.HasPrefix(s, "[Request interrupted"):
		return "", false
	case strings.HasPrefix(s, "/") && !strings.Contains(s, " "):
		return "", false
	}
	if utf8.RuneCountInString(s) <= TitleRunes {
		return s, true
	}
	r := []rune(s)[:TitleRunes-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > TitleRunes/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:-") + "…", true
}

// CommandTitle makes a session title from a prompt that is a bare slash command ("/init"), the
// way the client's own session list names a session begun with one: the command. It is the title
// of a session only while none of its prompts gives one (CleanTitle). ok is false for anything
// else, and for the commands that only steer the client (/clear, /compact, /resume, /model, ...),
// which say nothing of the work.
func CommandTitle(prompt string) (title string, ok bool) {
	s := strings.Join(strings.FieldsFunc(stripTags(prompt), unicode.IsSpace), " ")
	if len(s) < 2 || s[0] != '/' || strings.Contains(s, " ") || utf8.RuneCountInString(s) > TitleRunes {
		return "", false
	}
	if _, steer := steeringCommands[strings.ToLower(s[1:])]; steer {
		return "", false
	}
	return s, true
}

// steeringCommands are the slash commands (Claude Code's, Codex's, Gemini CLI's) that manage the
// client or the session rather than ask for work.
var steeringCommands = map[string]struct{}{
	"clear": {}, "compact": {}, "exit": {}, "quit": {}, "resume": {}, "continue": {}, "new": {},
	"login": {}, "logout": {}, "status": {}, "cost": {}, "usage": {}, "stats": {}, "context": {},
	"config": {}, "settings": {}, "model": {}, "help": {}, "doctor": {}, "permissions": {},
	"approvals": {}, "hooks": {}, "mcp": {}, "ide": {}, "vim": {}, "theme": {}, "terminal-setup": {},
	"privacy-settings": {}, "upgrade": {}, "release-notes": {}, "feedback": {}, "bug": {},
	"statusline": {}, "output-style": {}, "rewind": {}, "export": {}, "add-dir": {}, "fast": {},
	"rename": {},
}

// stripTags removes <tag> and </tag> markers (the XML-like wrappers clients put around commands,
// reminders and attachments), keeping the text between them.
func stripTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '>')
		name := ""
		if j > 0 {
			name = strings.TrimPrefix(s[i+1:i+j], "/")
		}
		if j < 0 || !isTagName(name) {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteByte(' ')
		s = s[i+j+1:]
	}
	return b.String()
}

func isTagName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, c := range s {
		if !(c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
