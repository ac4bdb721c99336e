package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolTypes maps Gemini CLI's and Qwen Code's built-in tools to the taxonomy.
var toolTypes = map[string]event.ActionType{
	"read_file":             event.ActionReadFile,
	"read_many_files":       event.ActionReadFile,
	"write_file":            event.ActionWriteFile,
	"replace":               event.ActionEditFile,
	"edit":                  event.ActionEditFile,
	"notebook_edit":         event.ActionEditFile,
	"run_shell_command":     event.ActionRunCommand,
	"exec":                  event.ActionRunCommand,
	"grep_search":           event.ActionSearchText,
	"search_file_content":   event.ActionSearchText,
	"grep":                  event.ActionSearchText,
	"glob":                  event.ActionSearchFiles,
	"list_directory":        event.ActionSearchFiles,
	"ls":                    event.ActionSearchFiles,
	"google_web_search":     event.ActionWebSearch,
	"web_search":            event.ActionWebSearch,
	"web_fetch":             event.ActionWebFetch,
	"write_todos":           event.ActionTodoUpdate,
	"todo_write":            event.ActionTodoUpdate,
	"task_create":           event.ActionTodoUpdate,
	"task_update":           event.ActionTodoUpdate,
	"task_list":             event.ActionTodoUpdate,
	"invoke_agent":          event.ActionSpawnSubagent,
	"delegate_to_agent":     event.ActionSpawnSubagent,
	"codebase_investigator": event.ActionSpawnSubagent,
	"agent":                 event.ActionSpawnSubagent,
	"create_sub_session":    event.ActionSpawnSubagent,
	"ask_user":              event.ActionAskUser,
	"ask_user_question":     event.ActionAskUser,
	"complete_task":         event.ActionTaskComplete,
	"read_mcp_resource":     event.ActionMCPCall,
	"list_mcp_resources":    event.ActionMCPCall,
}

// ToolType returns the normalized type of a Gemini CLI or Qwen Code tool name.
func ToolType(name string) event.ActionType {
	if t, ok := toolTypes[name]; ok {
		return t
	}
	switch {
	case strings.HasPrefix(name, "tracker_"):
		return event.ActionTodoUpdate
	case strings.HasPrefix(name, "mcp_") && len(name) > len("mcp_"),
		strings.Contains(name, "__") && !strings.HasPrefix(name, "__"):
		// mcp_<server>_<tool> (Gemini CLI), mcp__<server>__<tool> (Qwen Code), and
		// <server>__<tool>, the name older Gemini CLI gave an MCP tool whose name clashed.
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// args is the part of a tool call's arguments that names its target.
type args struct {
	File, Path, Dir, Command, Pattern, Query, URL, Prompt string
	Agent, Objective, Description, Question, FirstPath    string
	Title                                                 string
}

// readArgs reads the arguments that name a target, and nothing else of them (a write_file's
// content, a replace's strings).
func readArgs(raw []byte) (args, bool) {
	var in args
	if len(raw) == 0 || raw[0] != '{' {
		return in, false
	}
	err := jsonscan.Members(raw, func(k, v []byte) bool {
		str := func() string { s, _, _ := jsonscan.StringPrefix(v, 4096); return s }
		switch string(k[1 : len(k)-1]) {
		case "file_path", "absolute_path", "notebook_path":
			in.File = firstNonEmpty(in.File, str())
		case "path":
			in.Path = str()
		case "dir_path", "directory":
			in.Dir = str()
		case "command":
			in.Command = str()
		case "pattern":
			in.Pattern = str()
		case "query":
			in.Query = str()
		case "url":
			in.URL = str()
		case "prompt":
			in.Prompt = str()
		case "agent_name", "subagent_type":
			in.Agent = str()
		case "objective", "task":
			in.Objective = str()
		case "description":
			in.Description = str()
		case "question":
			in.Question = str()
		case "title":
			in.Title = str()
		case "questions":
			jsonscan.Elements(v, func(q []byte) bool {
				jsonscan.Members(q, func(k, v []byte) bool {
					if jsonscan.Key(k, "question") {
						in.Question = jsonscan.Str(v)
					}
					return in.Question == ""
				})
				return in.Question == ""
			})
		case "paths", "file_paths":
			jsonscan.Elements(v, func(f []byte) bool {
				in.FirstPath = jsonscan.Str(f)
				return in.FirstPath == ""
			})
		}
		return true
	})
	return in, err == nil
}

var urlIn = regexp.MustCompile(`https?://[^\s"'<>)\]]+`)

// target returns what a tool call acts on, before scrubbing and clipping.
func (p *Parser) target(name string, raw []byte) string {
	in, ok := readArgs(raw)
	if !ok {
		return ""
	}
	in.Dir = firstNonEmpty(in.Dir, in.Path)
	switch ToolType(name) {
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile:
		return p.relPath(firstNonEmpty(in.File, in.Path, in.FirstPath))
	case event.ActionRunCommand:
		return in.Command
	case event.ActionSearchText, event.ActionSearchFiles:
		if in.Pattern == "" {
			return p.relPath(in.Dir)
		}
		if in.Dir != "" {
			return in.Pattern + " in " + p.relPath(in.Dir)
		}
		return in.Pattern
	case event.ActionWebSearch:
		return in.Query
	case event.ActionWebFetch:
		return firstNonEmpty(in.URL, urlIn.FindString(in.Prompt))
	case event.ActionSpawnSubagent:
		task := firstNonEmpty(in.Description, in.Objective, in.Prompt)
		if in.Agent != "" && task != "" {
			return in.Agent + ": " + task
		}
		return firstNonEmpty(in.Agent, task)
	case event.ActionAskUser:
		return in.Question
	case event.ActionTodoUpdate:
		return ""
	}
	if f := firstNonEmpty(in.File, in.Path, in.Dir); f != "" {
		return p.relPath(f)
	}
	return firstNonEmpty(in.URL, in.Query, in.Command, in.Pattern, in.Title)
}

func hashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// call is one entry of a Gemini CLI model message's toolCalls, its result read on the way.
type call struct {
	ID, Name, Status string
	Args, Display    []byte
	Time             []byte
	Result           []byte // raw
	res              result
}

// walkCall reads one toolCalls entry.
func walkCall(d []byte, at int, c *call) (int, error) {
	if d[at] != '{' {
		return -1, nil
	}
	str := func(i int, dst *string) (int, error) {
		v, end, err := value(d, i)
		*dst = jsonscan.Str(v)
		return end, err
	}
	raw := func(i int, dst *[]byte) (int, error) {
		v, end, err := value(d, i)
		*dst = v
		return end, err
	}
	return jsonscan.WalkObject(d, at, func(k []byte, i int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "id":
			return str(i, &c.ID)
		case "name":
			return str(i, &c.Name)
		case "status":
			return str(i, &c.Status)
		case "args":
			return raw(i, &c.Args)
		case "resultDisplay":
			return raw(i, &c.Display)
		case "timestamp":
			return raw(i, &c.Time)
		case "result":
			var ps parts
			end, err := walkParts(d, i, &ps)
			if err != nil {
				return 0, err
			}
			c.Result = d[i:end]
			c.res = ps.result()
			return end, nil
		}
		return -1, nil
	})
}

// geminiCall is a Gemini CLI tool call with its result: one action.
func (p *Parser) geminiCall(m *record, i int, c *call, msgTime time.Time) event.Event {
	a := &event.Action{Type: ToolType(c.Name), Tool: c.Name, Target: clipTarget(p.target(c.Name, c.Args)),
		ToolUseID: c.ID, MessageID: m.ID, AgentID: p.src.AgentID, InputHash: hashInput(c.Args), Model: m.Model,
		Transcript: p.src.Path}
	res := c.res
	res.orDisplay(c.Display)
	if a.Type == event.ActionRunCommand {
		res.exit = exitIn(c.Result)
	}
	p.settle(a, c.Status, &res)
	if s := jsonscan.Str(c.Time); s != "" && a.Success != nil {
		if t, ok := transcript.ParseTime(s); ok {
			if d := t.Sub(msgTime); d >= 0 && d < 24*time.Hour {
				a.DurationMs = d.Milliseconds()
			}
		}
	}
	key := c.ID
	if key == "" {
		key = m.ID + "#" + strconv.Itoa(i)
	}
	ev := p.newEvent(event.KindAction, p.actionID(key), msgTime)
	ev.Action = a
	return ev
}

// settle sets a call's outcome from its status and result: success, error or cancelled (anything
// else: not known yet). A run_shell_command whose output reports a non-zero exit code failed.
func (p *Parser) settle(a *event.Action, status string, res *result) {
	var ok bool
	switch status {
	case "success":
		ok = !(a.Type == event.ActionRunCommand && res.exit != 0)
		if !ok {
			a.Error = clipError(firstNonEmpty(res.err, res.text))
		}
	case "error":
		a.Error = clipError(firstNonEmpty(res.err, res.text, "error"))
	case "cancelled", "canceled":
		a.Error = clipError(firstNonEmpty(res.err, "cancelled"))
	default:
		return
	}
	a.Success = &ok
	a.Output = clipOutput(firstNonEmpty(res.text, res.err))
	a.OutputSize = res.size
}

// result is what a function response (or a resultDisplay) says.
type result struct {
	text string // the output's start, at most resultBudget bytes
	err  string // the response's error, at most resultBudget bytes
	size int64  // the full size of output and error
	exit int64  // a shell's "Exit Code: N", 0 when none
}

// resultBudget is how much of a result's text is decoded: the output kept, and the margin Clip
// scrubs beyond it.
const resultBudget = maxOutput + 1024

// resultBuilder gathers a result's output and error as they are walked.
type resultBuilder struct {
	text, errs strings.Builder
	size       int64
}

func (b *resultBuilder) add(sb *strings.Builder, v []byte) {
	s, size, ok := jsonscan.StringPrefix(v, max(resultBudget-sb.Len(), 0))
	if !ok {
		s, size = transcript.CutBytes(string(v), max(resultBudget-sb.Len(), 0)), int64(len(v))
	}
	if sb.Len() > 0 {
		sb.WriteByte('\n')
		b.size++
	}
	sb.WriteString(s)
	b.size += size
}

func (b *resultBuilder) result() result {
	return result{text: transcript.CutBytes(b.text.String(), resultBudget),
		err: transcript.CutBytes(b.errs.String(), resultBudget), size: b.size}
}

// walkResponse reads a function response's response: its output (output, content, llmContent)
// and error (a string, or an object's message); a response with neither is its own text.
func (b *resultBuilder) walkResponse(d []byte, at int) (int, error) {
	if d[at] != '{' {
		v, end, err := value(d, at)
		if err == nil && !jsonscan.Null(v) {
			b.add(&b.text, v)
		}
		return end, err
	}
	found := false
	end, err := jsonscan.WalkObject(d, at, func(k []byte, i int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "output", "content", "llmContent":
			v, end, err := value(d, i)
			if err == nil && v[0] == '"' {
				b.add(&b.text, v)
				found = true
			}
			return end, err
		case "error":
			found = true
			if d[i] == '{' {
				return jsonscan.WalkObject(d, i, func(k []byte, j int) (int, error) {
					if !keyIs(k, "message") {
						return -1, nil
					}
					v, end, err := value(d, j)
					if err == nil {
						b.add(&b.errs, v)
					}
					return end, err
				})
			}
			v, end, err := value(d, i)
			if err == nil && !jsonscan.Null(v) {
				b.add(&b.errs, v)
			}
			return end, err
		}
		return -1, nil
	})
	if err == nil && !found {
		b.add(&b.text, d[at:end])
	}
	return end, err
}

// result joins what a call's result parts said: the function responses' outputs and errors, the
// text parts, an image as "[image]".
func (ps *parts) result() result {
	if len(ps.responses) == 1 && ps.text.Len() == 0 && ps.images == 0 {
		return ps.responses[0].res
	}
	var b resultBuilder
	join := func(sb *strings.Builder, s string) {
		if s == "" {
			return
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(s)
	}
	for _, r := range ps.responses {
		join(&b.text, r.res.text)
		join(&b.errs, r.res.err)
		b.size += r.res.size
	}
	if t := ps.text.String(); t != "" {
		join(&b.text, t)
		b.size += int64(len(t))
	}
	for range ps.images {
		join(&b.text, "[image]")
		b.size += int64(len("[image]"))
	}
	return b.result()
}

// orDisplay takes the resultDisplay text when the result itself said nothing.
func (r *result) orDisplay(display []byte) {
	if r.text != "" || r.err != "" || len(display) == 0 || display[0] != '"' {
		return
	}
	var b resultBuilder
	b.add(&b.text, display)
	*r = b.result()
}

var exitCode = []byte("Exit Code: ")

// exitIn reads the last "Exit Code: N" a shell's result reports (Gemini CLI writes it after the
// output when the command failed).
func exitIn(raw []byte) int64 {
	i := bytes.LastIndex(raw, exitCode)
	if i < 0 {
		return 0
	}
	j := i + len(exitCode)
	k := j
	for k < len(raw) && (raw[k] == '-' && k == j || raw[k] >= '0' && raw[k] <= '9') {
		k++
	}
	n, _ := strconv.ParseInt(string(raw[j:k]), 10, 64)
	return n
}
