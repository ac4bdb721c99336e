package gptme

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolUse is one tool call read from an assistant's text.
type toolUse struct {
	name   string         // the tool (the code block's language, or the tool-format name)
	callID string         // the tool format's call id; "" in the markdown format
	args   []string       // a code block's arguments after its language (a path)
	code   string         // a code block's content
	kw     map[string]any // the tool format's JSON arguments
	raw    string         // the call as written, for its input hash
}

// blockTools are the code block languages that are tool calls in the markdown format: gptme's
// tools' block types (shell, ipython and py, save, append, patch, tmux).
var blockTools = map[string]bool{"shell": true, "ipython": true, "py": true, "save": true, "append": true, "patch": true, "tmux": true}

// toolCall matches the start of a tool-format call: @<tool>(<call id>): {.
var toolCall = regexp.MustCompile(`(?m)^@(\w+)\(([\w\-:.]+)\):[ \t]*\{`)

// toolUses reads the tool calls of an assistant's text: tool-format calls when it has any, else
// the markdown format's code blocks.
func toolUses(text string) []toolUse {
	var out []toolUse
	for _, m := range toolCall.FindAllStringSubmatchIndex(text, maxTools) {
		start := m[1] - 1 // the opening brace
		end := jsonEnd(text, start)
		if end < 0 {
			continue // not complete yet
		}
		raw := text[start:end]
		var kw map[string]any
		_ = json.Unmarshal([]byte(raw), &kw)
		out = append(out, toolUse{name: text[m[2]:m[3]], callID: text[m[4]:m[5]], kw: kw, raw: raw})
	}
	if len(out) > 0 {
		return out
	}
	return markdownTools(text)
}

// jsonEnd returns the index just past the JSON object starting at start, or -1 when it does
// not end.
func jsonEnd(s string, start int) int {
	depth := 0
	inString, escape := false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case escape:
			escape = false
		case c == '\\' && inString:
			escape = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// markdownTools reads the complete fenced code blocks of a text whose language is a tool's
// (nested fences, such as a saved Markdown file's, belong to the block they are in).
func markdownTools(text string) []toolUse {
	lines := strings.Split(text, "\n")
	var out []toolUse
	for i := 0; i < len(lines) && len(out) < maxTools; i++ {
		l := strings.TrimRight(lines[i], "\r")
		if !strings.HasPrefix(l, "```") {
			continue
		}
		info := strings.TrimSpace(strings.TrimLeft(l, "`"))
		depth, end := 0, -1
		for j := i + 1; j < len(lines); j++ {
			t := strings.TrimRight(lines[j], "\r")
			if !strings.HasPrefix(t, "```") {
				continue
			}
			if strings.TrimSpace(strings.TrimLeft(t, "`")) != "" {
				depth++
			} else if depth == 0 {
				end = j
				break
			} else {
				depth--
			}
		}
		if end < 0 {
			break // not complete yet
		}
		fields := strings.Fields(info)
		if len(fields) > 0 && blockTools[fields[0]] {
			out = append(out, toolUse{name: fields[0], args: fields[1:], code: strings.Join(lines[i+1:end], "\n"),
				raw: strings.Join(lines[i:end+1], "\n")})
		}
		i = end
	}
	return out
}

// toolOf maps a tool call to its action type and target (see the package doc).
func (r *reader) toolOf(tu toolUse) (event.ActionType, string) {
	switch tu.name {
	case "shell", "tmux":
		return event.ActionRunCommand, transcript.FirstNonEmpty(strings.TrimSpace(tu.code), transcript.Arg(tu.kw, "command"), strings.Join(tu.args, " "))
	case "ipython", "py":
		return event.ActionRunCommand, firstLine(transcript.FirstNonEmpty(tu.code, transcript.Arg(tu.kw, "code")))
	case "save":
		return event.ActionWriteFile, r.relPath(pathArg(tu))
	case "append", "patch":
		return event.ActionEditFile, r.relPath(pathArg(tu))
	}
	return event.ActionUnknown, ""
}

// pathArg is a file tool's path: the code block's argument, or the tool format's path.
func pathArg(tu toolUse) string {
	if len(tu.args) > 0 {
		return strings.Join(tu.args, " ")
	}
	return transcript.Arg(tu.kw, "path", "file", "filename")
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
