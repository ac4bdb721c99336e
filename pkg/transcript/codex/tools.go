package codex

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// responseItem is a model input or output item (OpenAI Responses API items, as Codex stores them).
type responseItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	Output    json.RawMessage `json:"output"`
	Status    string          `json:"status"`
	Action    json.RawMessage `json:"action"`
	Summary   json.RawMessage `json:"summary"`
}

func (p *Parser) responseItem(raw json.RawMessage, t time.Time, hasTime bool) ([]event.Event, error) {
	var it responseItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, malformed("response_item: %v", err)
	}
	switch it.Type {
	case "message":
		if it.Role == "assistant" {
			p.st.SinceUsage = true
		}
		return p.message(&it, t, hasTime)
	case "reasoning":
		p.st.SinceUsage = true
		return p.reasoning(&it, t, hasTime)
	case "ghost_snapshot", "compaction", "other":
		return nil, nil
	case "function_call", "custom_tool_call", "local_shell_call":
		p.st.SinceUsage = true
		if err := needTime(hasTime, it.Type); err != nil {
			return nil, err
		}
		return p.call(&it, t), nil
	case "function_call_output", "custom_tool_call_output":
		if err := needTime(hasTime, it.Type); err != nil {
			return nil, err
		}
		return p.output(&it, t), nil
	case "web_search_call":
		p.st.SinceUsage = true
		if err := needTime(hasTime, it.Type); err != nil {
			return nil, err
		}
		return p.webSearch(&it, t), nil
	default:
		p.stats.CountUnknown("response_item/" + it.Type)
		return nil, nil
	}
}

// message yields the assistant's reply, and a user prompt (action and message) only in the bare
// format; the envelope format reports prompts from event_msg user_message. Injected context is
// never a prompt; developer and system messages are instructions.
func (p *Parser) message(it *responseItem, t time.Time, hasTime bool) ([]event.Event, error) {
	if it.Role == "assistant" {
		return p.assistant(it, t, hasTime)
	}
	if it.Role != "user" {
		return nil, nil
	}
	text := contentText(it.Content)
	if p.st.Cwd == "" {
		if cwd := envCwd(text); cwd != "" {
			p.st.Cwd = cwd
		}
	}
	if !p.st.Legacy || isPreamble(text) || strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if err := needTime(hasTime, "message"); err != nil {
		return nil, err
	}
	k := p.contentKey("user_prompt", text)
	return append([]event.Event{p.action(k.id(event.KindAction), t,
		&event.Action{Type: event.ActionUserPrompt, Target: clipTarget(promptText(text))})},
		p.userMessage(k, text, it.ID, t)...), nil
}

// contentText joins the text parts of a message's content.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		return jsonText(raw)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range parts {
		if c.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// preambles open the messages Codex injects with the user role: project docs, environment,
// user instructions, permissions, skills.
var preambles = []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
	"<INSTRUCTIONS>", "<permissions instructions>", "<user_shell_command>", "<skill>", "<turn_aborted>",
	"<subagent_notification>", "# Context from my IDE setup:\n\n## Active file"}

func isPreamble(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range preambles {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

var cwdTag = regexp.MustCompile(`<cwd>([^<\n]+)</cwd>`)

func envCwd(s string) string {
	if !strings.Contains(s, "<environment_context>") {
		return ""
	}
	if m := cwdTag.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// ---------------------------------------------------------------------------------------------
// Calls

// callInfo is what a tool call is, in observer's taxonomy.
type callInfo struct {
	typ      event.ActionType
	target   string
	cmd      string // an exec call read as a file read or a patch: the command it ran
	execCall string // write_stdin: the exec call whose process it writes to
}

func (p *Parser) call(it *responseItem, t time.Time) []event.Event {
	name := it.Name
	args := jsonText(it.Arguments)
	if it.Type == "custom_tool_call" {
		args = jsonText(it.Input)
	}
	if it.Type == "local_shell_call" {
		name = "local_shell"
		args = string(it.Action)
	}
	if ns := it.Namespace; ns != "" && !strings.HasPrefix(name, ns) {
		// Newer Codex puts the MCP server in a namespace ("mcp__node_repl__" + "js"); other
		// namespaces hold the app's own dynamic tools.
		if strings.HasPrefix(ns, "mcp__") {
			name = strings.TrimSuffix(ns, "__") + "__" + name
		} else {
			name = ns + "." + name
		}
	}
	info := p.classify(name, args, it.Type == "custom_tool_call")
	callID := it.CallID
	if callID == "" {
		callID = it.ID
	}
	a := &event.Action{Type: info.typ, Tool: name, Target: clipTarget(info.target), ToolUseID: callID,
		InputHash: hashInput(args)}
	var id, msgID string
	if callID != "" {
		id, msgID = p.callID(callID), p.callMessageID(callID)
		p.addPending(pending{CallID: callID, Type: info.typ, Tool: name, Target: transcript.Memo(a.Target), Time: t.UnixNano(),
			Cmd: transcript.Memo(clipTarget(info.cmd)), Exec: info.execCall})
	} else {
		k := p.contentKey("call", name+"\x00"+args)
		id, msgID = k.id(event.KindAction), k.id(event.KindMessage)
	}
	if it.Type == "local_shell_call" && it.Status != "" && it.Status != "completed" && it.Status != "in_progress" {
		f := false
		a.Success = &f
	}
	return append([]event.Event{p.action(id, t, a)}, p.callMessage(msgID, it, a, t)...)
}

func hashInput(args string) string {
	if args == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(args))
	return hex.EncodeToString(sum[:8])
}

var execTools = map[string]bool{"shell": true, "container.exec": true, "local_shell": true, "shell_command": true,
	"exec_command": true, "exec": true, "unified_exec": true}

// classify maps a tool call to an action type and target.
func (p *Parser) classify(name, args string, freeform bool) callInfo {
	switch {
	case execTools[name]:
		argv, script, workdir := commandOf(args, freeform)
		if patch, ok := shellPatch(argv, script); ok {
			typ, file := patchInfo(patch)
			return callInfo{typ: typ, target: p.relPath(file, workdir), cmd: "apply_patch"}
		}
		if file, ok := readOnly(script); ok {
			return callInfo{typ: event.ActionReadFile, target: p.relPath(file, workdir), cmd: script}
		}
		return callInfo{typ: event.ActionRunCommand, target: script}
	case name == "write_stdin":
		var a struct {
			SessionID json.RawMessage `json:"session_id"`
			Chars     string          `json:"chars"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		info := callInfo{typ: event.ActionRunCommand, target: a.Chars}
		if sid := jsonText(a.SessionID); sid != "" {
			if callID, ok := getKV(p.st.ExecSessions, sid); ok {
				info.execCall = callID
				if pc := p.findPending(callID); pc != nil {
					info.target = firstNonEmpty(string(pc.Cmd), string(pc.Target))
				}
			}
		}
		return info
	case name == "apply_patch":
		patch := args
		if !freeform {
			var a struct {
				Input string `json:"input"`
				Patch string `json:"patch"`
			}
			if json.Unmarshal([]byte(args), &a) == nil {
				patch = a.Input + a.Patch
			}
		}
		typ, file := patchInfo(patch)
		return callInfo{typ: typ, target: p.relPath(file, "")}
	case name == "update_plan":
		return callInfo{typ: event.ActionTodoUpdate}
	case name == "view_image":
		var a struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		return callInfo{typ: event.ActionReadFile, target: p.relPath(a.Path, "")}
	case name == "web_search" || name == "web_search_preview":
		var a struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		return callInfo{typ: event.ActionWebSearch, target: a.Query}
	case isMCP(name):
		return callInfo{typ: event.ActionMCPCall}
	default:
		return callInfo{typ: event.ActionUnknown}
	}
}

// isMCP recognizes MCP tool names: Codex qualifies them as <server>__<tool> (newer versions with an
// mcp__ prefix).
func isMCP(name string) bool {
	return strings.HasPrefix(name, "mcp__") || strings.HasPrefix(name, "mcp.") ||
		(strings.Contains(name, "__") && !strings.HasPrefix(name, "__") && !strings.HasSuffix(name, "__"))
}

// commandOf extracts the command of an exec-like call: its argv (when given as one), the command
// as a user would type it (a `bash -lc` wrapper removed), and the working directory.
func commandOf(args string, freeform bool) (argv []string, script, workdir string) {
	if freeform {
		return nil, strings.TrimSpace(args), ""
	}
	var a struct {
		Command  json.RawMessage `json:"command"`
		Cmd      json.RawMessage `json:"cmd"`
		Workdir  string          `json:"workdir"`
		WorkDir2 string          `json:"working_directory"`
		Cwd      string          `json:"cwd"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return nil, strings.TrimSpace(args), ""
	}
	workdir = firstNonEmpty(a.Workdir, a.WorkDir2, a.Cwd)
	raw := a.Command
	if len(raw) == 0 || string(raw) == "null" {
		raw = a.Cmd
	}
	argv, script = commandValue(raw)
	return argv, script, workdir
}

// commandValue reads a command given as a string or an argv array.
func commandValue(raw json.RawMessage) ([]string, string) {
	if len(raw) == 0 {
		return nil, ""
	}
	if raw[0] == '[' {
		var argv []string
		if json.Unmarshal(raw, &argv) != nil {
			return nil, ""
		}
		return argv, argvScript(argv)
	}
	return nil, strings.TrimSpace(jsonText(raw))
}

// argvScript returns the script of a shell wrapper (["bash", "-lc", "ls"] -> "ls"), or the argv
// joined and quoted.
func argvScript(argv []string) string {
	if len(argv) >= 3 {
		switch path.Base(strings.ReplaceAll(argv[0], `\`, "/")) {
		case "bash", "sh", "zsh", "dash", "fish", "ksh", "bash.exe", "pwsh", "powershell", "powershell.exe", "cmd.exe":
			for i := 1; i < len(argv)-1; i++ {
				if f := argv[i]; f == "-c" || f == "-lc" || f == "-ic" || f == "-Command" || f == "/c" || f == "-l" && argv[i+1] == "-c" {
					if f == "-l" {
						i++
					}
					if i+1 < len(argv) {
						return strings.TrimSpace(strings.Join(argv[i+1:], " "))
					}
				}
			}
		}
	}
	parts := make([]string, len(argv))
	for i, s := range argv {
		if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`|&;<>()*?[]{}") {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		parts[i] = s
	}
	return strings.Join(parts, " ")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// shellPatch recognizes apply_patch run through the shell, which Codex intercepts: the argv
// ["apply_patch", patch] or a script `apply_patch <<'EOF' ... EOF` (optionally after `cd dir &&`).
func shellPatch(argv []string, script string) (string, bool) {
	if len(argv) == 2 && (argv[0] == "apply_patch" || argv[0] == "applypatch") {
		return argv[1], true
	}
	s := strings.TrimSpace(script)
	if strings.HasPrefix(s, "cd ") {
		if i := strings.Index(s, "&&"); i > 0 {
			s = strings.TrimSpace(s[i+2:])
		}
	}
	if !strings.HasPrefix(s, "apply_patch") && !strings.HasPrefix(s, "applypatch") {
		return "", false
	}
	i := strings.Index(s, "*** Begin Patch")
	if i < 0 {
		return "", false
	}
	return s[i:], true
}

// patchInfo returns what a patch does (write_file when it only adds files) and its first file.
func patchInfo(patch string) (event.ActionType, string) {
	first := ""
	adds, others := 0, 0
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, op := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: "} {
			if f, ok := strings.CutPrefix(line, op); ok {
				if first == "" {
					first = strings.TrimSpace(f)
				}
				if op == "*** Add File: " {
					adds++
				} else {
					others++
				}
			}
		}
	}
	if adds > 0 && others == 0 {
		return event.ActionWriteFile, first
	}
	return event.ActionEditFile, first
}

var sedPrint = regexp.MustCompile(`^[0-9$]+(,[0-9$+]+)?p$`)

// readOnly recognizes a single plain command that only prints files (cat, head, tail, nl,
// sed -n 'N,Mp') and returns its first file. Anything with a pipe, redirect, chain, substitution or
// glob is a command.
func readOnly(script string) (string, bool) {
	if script == "" || strings.ContainsAny(script, "|&;<>`$(){}*?\n") {
		return "", false
	}
	tok, ok := shellWords(script)
	if !ok || len(tok) < 2 {
		return "", false
	}
	var files []string
	switch path.Base(tok[0]) {
	case "cat":
		for _, a := range tok[1:] {
			if !strings.HasPrefix(a, "-") {
				files = append(files, a)
			}
		}
	case "head", "tail":
		for i := 1; i < len(tok); i++ {
			a := tok[i]
			switch {
			case a == "-n" || a == "-c":
				i++
			case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			default:
				files = append(files, a)
			}
		}
	case "nl":
		for i := 1; i < len(tok); i++ {
			a := tok[i]
			switch {
			case len(a) == 2 && strings.Contains("bnwsvi", a[1:]) && a[0] == '-':
				i++
			case strings.HasPrefix(a, "-"):
			default:
				files = append(files, a)
			}
		}
	case "sed":
		i := 1
		if i < len(tok) && tok[i] == "-n" {
			i++
		} else {
			return "", false
		}
		if i < len(tok) && tok[i] == "-e" {
			i++
		}
		if i >= len(tok) || !sedPrint.MatchString(tok[i]) {
			return "", false
		}
		for _, a := range tok[i+1:] {
			if strings.HasPrefix(a, "-") {
				return "", false
			}
			files = append(files, a)
		}
	default:
		return "", false
	}
	if len(files) == 0 {
		return "", false
	}
	return files[0], true
}

// shellWords splits a simple command line on blanks, honouring quotes and backslashes.
func shellWords(s string) ([]string, bool) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
					cur.WriteByte(s[j])
					continue
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, false
			}
			i = j
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, true
}

// relPath makes a file path relative to the project root when it lies inside it.
func (p *Parser) relPath(file, workdir string) string {
	file = strings.TrimSpace(file)
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		base := firstNonEmpty(workdir, p.st.Cwd)
		if base == "" || !filepath.IsAbs(base) {
			return filepath.Clean(file)
		}
		file = filepath.Join(base, file)
	}
	file = filepath.Clean(file)
	if root := p.project(); root != "" {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return file
}

// ---------------------------------------------------------------------------------------------
// Pending calls

func (p *Parser) addPending(pc pending) {
	for i := range p.st.Pending {
		if p.st.Pending[i].CallID == pc.CallID {
			p.st.Pending[i] = pc
			return
		}
	}
	p.st.Pending = append(p.st.Pending, pc)
	if len(p.st.Pending) > maxPending {
		// Evict settled calls first, then the oldest.
		for i := range p.st.Pending {
			if p.st.Pending[i].Done {
				p.st.Pending = append(p.st.Pending[:i], p.st.Pending[i+1:]...)
				return
			}
		}
		p.st.Pending = p.st.Pending[1:]
	}
}

func (p *Parser) findPending(callID string) *pending {
	for i := range p.st.Pending {
		if p.st.Pending[i].CallID == callID {
			return &p.st.Pending[i]
		}
	}
	return nil
}

// markDone records that a call has its final result; a settled call is evicted first.
func (p *Parser) markDone(callID string) {
	if pc := p.findPending(callID); pc != nil {
		pc.Done = true
	}
}

func (p *Parser) dropPending(callID string) {
	for i := range p.st.Pending {
		if p.st.Pending[i].CallID == callID {
			p.st.Pending = append(p.st.Pending[:i], p.st.Pending[i+1:]...)
			return
		}
	}
}

// resultAction starts the result event of call callID, carrying the call's type, tool and target.
func (p *Parser) resultAction(callID string, fallback event.ActionType, tool string) (*event.Action, *pending) {
	a := &event.Action{Type: fallback, Tool: tool, ToolUseID: callID}
	pc := p.findPending(callID)
	if pc != nil {
		a.Type, a.Tool, a.Target = pc.Type, pc.Tool, string(pc.Target)
	}
	return a, pc
}

// ---------------------------------------------------------------------------------------------
// Results

// outcome is what a tool's output says.
type outcome struct {
	success  *bool
	exitCode *int64
	body     string // the output without Codex's framing
	duration int64  // ms, 0 when unknown
	running  string // unified exec: the process is still running, with this session id
}

var (
	exitedRe  = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)\s*$`)
	runningRe = regexp.MustCompile(`(?m)^Process running with session ID (\S+)\s*$`)
	exitCode  = regexp.MustCompile(`(?m)^Exit code: (-?\d+)\s*$`)
	wallTime  = regexp.MustCompile(`(?m)^Wall time: ([0-9.]+) seconds?\s*$`)
)

// failurePrefixes open text outputs that report a failed tool call.
var failurePrefixes = []string{"error", "failed", "failure", "patch rejected", "write_stdin failed",
	"execution error", "exec command rejected", "unsupported call", "unknown tool", "aborted",
	"apply_patch verification failed", "invalid patch", "command timed out", "sandbox error",
	"permission denied", "tool call failed", "unsupported custom tool call", "unable to"}

func boolPtr(b bool) *bool { return &b }

// parseOutput reads a function_call_output's output: a string, content items, or an object.
func parseOutput(raw json.RawMessage) outcome {
	if len(raw) == 0 || string(raw) == "null" {
		return outcome{}
	}
	var text string
	var flag *bool
	switch raw[0] {
	case '"':
		text = jsonText(raw)
	case '[':
		text = contentText(raw)
	case '{':
		var o struct {
			Content json.RawMessage `json:"content"`
			Success *bool           `json:"success"`
		}
		if json.Unmarshal(raw, &o) == nil && len(o.Content) > 0 {
			text, flag = contentText(o.Content), o.Success
		} else {
			text = string(raw)
		}
	default:
		text = string(raw)
	}
	out := parseText(text)
	if flag != nil && out.exitCode == nil {
		out.success = flag
	}
	return out
}

func parseText(text string) outcome {
	var out outcome
	trimmed := strings.TrimSpace(text)
	// Shell JSON: {"output": "...", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}.
	if strings.HasPrefix(trimmed, "{") {
		var j struct {
			Output   *string `json:"output"`
			Metadata *struct {
				ExitCode        json.RawMessage `json:"exit_code"`
				DurationSeconds json.RawMessage `json:"duration_seconds"`
			} `json:"metadata"`
			IsError *bool           `json:"isError"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal([]byte(trimmed), &j) == nil {
			switch {
			case j.Output != nil && j.Metadata != nil:
				out.body = *j.Output
				if c, ok := jsonInt(j.Metadata.ExitCode); ok {
					out.exitCode = &c
					out.success = boolPtr(c == 0)
				}
				out.duration, _ = jsonDurationMs(j.Metadata.DurationSeconds)
				return out
			case j.IsError != nil:
				out.body = text
				out.success = boolPtr(!*j.IsError)
				return out
			}
		}
	}
	// Unified exec: Chunk ID / Wall time / Process exited with code N | Process running ... / Output:
	header, body, framed := strings.Cut(text, "\nOutput:\n")
	if !framed && strings.HasSuffix(text, "\nOutput:") {
		header, framed = strings.TrimSuffix(text, "\nOutput:"), true
	}
	if framed && (strings.Contains(header, "Wall time:") || strings.Contains(header, "Exit code:") ||
		strings.Contains(header, "Process ")) {
		out.body = body
		if m := runningRe.FindStringSubmatch(header); m != nil {
			out.running = m[1]
			return out
		}
		m := exitedRe.FindStringSubmatch(header)
		if m == nil {
			m = exitCode.FindStringSubmatch(header)
		}
		if m != nil {
			if c, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				out.exitCode = &c
				out.success = boolPtr(c == 0)
			}
		}
		if w := wallTime.FindStringSubmatch(header); w != nil && out.exitCode != nil {
			if f, err := strconv.ParseFloat(w[1], 64); err == nil {
				out.duration, _ = clampMs(f * 1000)
			}
		}
		if out.success == nil {
			out.success = boolPtr(true)
		}
		return out
	}
	out.body = text
	lower := strings.ToLower(trimmed)
	for _, pre := range failurePrefixes {
		if strings.HasPrefix(lower, pre) {
			out.success = boolPtr(false)
			return out
		}
	}
	out.success = boolPtr(true)
	return out
}

// output is a function_call_output or custom_tool_call_output.
func (p *Parser) output(it *responseItem, t time.Time) []event.Event {
	callID := it.CallID
	if callID == "" {
		return nil
	}
	a, pc := p.resultAction(callID, event.ActionUnknown, "")
	o := parseOutput(it.Output)
	evs := []event.Event{}
	if o.running != "" {
		// Unified exec: the command goes on in a process that write_stdin polls; its result comes
		// with exec_command_end or with the poll that sees it exit.
		if pc == nil || pc.Tool != "write_stdin" {
			p.st.ExecSessions = putKV(p.st.ExecSessions, o.running, callID)
		} else {
			a.Success = boolPtr(true) // the poll worked; the process goes on
		}
		a.Output = clipOutput(o.body)
		a.OutputSize = int64(len(o.body))
		return append(evs, p.action(p.callID(callID), t, a))
	}
	p.settle(a, pc, &o, t)
	evs = append(evs, p.action(p.callID(callID), t, a))
	if pc != nil && pc.Tool == "write_stdin" && o.exitCode != nil {
		// The poll saw the process exit: settle the exec call that started it.
		if execCall := p.findPending(pc.Exec); pc.Exec != "" && execCall != nil && !execCall.Done {
			ea := &event.Action{Type: execCall.Type, Tool: execCall.Tool, Target: string(execCall.Target),
				ToolUseID: execCall.CallID, Success: o.success}
			if !*o.success {
				ea.Error = errorText(o.body, *o.exitCode)
			}
			if execCall.Time > 0 && t.UnixNano() >= execCall.Time {
				ea.DurationMs = (t.UnixNano() - execCall.Time) / 1e6
			}
			evs = append(evs, p.action(p.callID(execCall.CallID), t, ea))
			execCall.Done = true
		}
		// The write itself succeeded, whatever the process's exit code.
		a.Success, a.Error = boolPtr(true), ""
	}
	if pc != nil {
		pc.Done = true
		if !execTools[pc.Tool] && pc.Tool != "apply_patch" {
			p.dropPending(callID)
		}
	}
	return evs
}

// settle fills a result action from an outcome.
func (p *Parser) settle(a *event.Action, pc *pending, o *outcome, t time.Time) {
	a.Success = o.success
	a.Output = clipOutput(o.body)
	a.OutputSize = int64(len(o.body))
	if o.success != nil && !*o.success {
		code := int64(1)
		if o.exitCode != nil {
			code = *o.exitCode
		}
		a.Error = errorText(o.body, code)
	}
	a.DurationMs = o.duration
	if a.DurationMs == 0 && pc != nil && pc.Time > 0 && t.UnixNano() >= pc.Time && o.success != nil &&
		(o.exitCode != nil || !execTools[pc.Tool]) {
		a.DurationMs = (t.UnixNano() - pc.Time) / 1e6
	}
}

func errorText(body string, code int64) string {
	if strings.TrimSpace(body) == "" {
		return "exit code " + strconv.FormatInt(code, 10)
	}
	return clipError(body)
}

// execEnd is the end of a command: exit code, duration and output.
func (p *Parser) execEnd(e *eventMsg, t time.Time, hasTime bool) ([]event.Event, error) {
	if e.CallID == "" {
		return nil, nil
	}
	if err := needTime(hasTime, "exec_command_end"); err != nil {
		return nil, err
	}
	a, pc := p.resultAction(e.CallID, event.ActionRunCommand, "")
	if pc == nil {
		argv, script := commandValue(e.Command)
		if patch, ok := shellPatch(argv, script); ok {
			var file string
			a.Type, file = patchInfo(patch)
			a.Target = clipTarget(p.relPath(file, e.Cwd))
		} else if file, ok := readOnly(script); ok {
			a.Type, a.Target = event.ActionReadFile, clipTarget(p.relPath(file, e.Cwd))
		} else {
			a.Target = clipTarget(script)
		}
	}
	body := firstNonEmpty(e.AggregatedOutput, joinOutput(e.Stdout, e.Stderr), e.FormattedOutput)
	a.Output, a.OutputSize = clipOutput(body), int64(len(body))
	if code, ok := jsonInt(e.ExitCode); ok {
		a.Success = boolPtr(code == 0)
		if code != 0 {
			a.Error = errorText(firstNonEmpty(e.Stderr, body), code)
		}
	}
	a.DurationMs, _ = jsonDurationMs(e.Duration)
	p.markDone(e.CallID)
	return []event.Event{p.action(p.callID(e.CallID), t, a)}, nil
}

func joinOutput(stdout, stderr string) string {
	if stdout != "" && stderr != "" {
		return stdout + "\n" + stderr
	}
	return stdout + stderr
}

// patchEnd is the end of an apply_patch: success and the files changed.
func (p *Parser) patchEnd(e *eventMsg, t time.Time, hasTime bool) ([]event.Event, error) {
	if e.CallID == "" {
		return nil, nil
	}
	if err := needTime(hasTime, "patch_apply_end"); err != nil {
		return nil, err
	}
	a, pc := p.resultAction(e.CallID, event.ActionEditFile, "apply_patch")
	if pc == nil {
		var changes map[string]struct {
			Type string `json:"type"`
		}
		if len(e.Changes) > 0 && e.Changes[0] == '{' && json.Unmarshal(e.Changes, &changes) == nil && len(changes) > 0 {
			files := make([]string, 0, len(changes))
			adds := 0
			for f, c := range changes {
				files = append(files, f)
				if c.Type == "add" {
					adds++
				}
			}
			sort.Strings(files)
			a.Target = clipTarget(p.relPath(files[0], ""))
			if adds == len(changes) {
				a.Type = event.ActionWriteFile
			}
		}
	}
	body := joinOutput(e.Stdout, e.Stderr)
	a.Output, a.OutputSize = clipOutput(body), int64(len(body))
	if e.Success != nil {
		a.Success = boolPtr(*e.Success)
		if !*e.Success {
			a.Error = errorText(firstNonEmpty(e.Stderr, body), 1)
		}
	}
	p.markDone(e.CallID)
	return []event.Event{p.action(p.callID(e.CallID), t, a)}, nil
}

// mcpEnd is the end of an MCP tool call.
func (p *Parser) mcpEnd(e *eventMsg, t time.Time, hasTime bool) ([]event.Event, error) {
	if e.CallID == "" {
		return nil, nil
	}
	if err := needTime(hasTime, "mcp_tool_call_end"); err != nil {
		return nil, err
	}
	tool := ""
	if e.Invocation != nil {
		tool = e.Invocation.Server + "__" + e.Invocation.Tool
	}
	a, _ := p.resultAction(e.CallID, event.ActionMCPCall, tool)
	var r struct {
		Ok  json.RawMessage `json:"Ok"`
		Err json.RawMessage `json:"Err"`
	}
	if len(e.Result) > 0 && e.Result[0] == '{' && json.Unmarshal(e.Result, &r) == nil {
		switch {
		case len(r.Err) > 0 && string(r.Err) != "null":
			a.Success, a.Error = boolPtr(false), clipError(jsonText(r.Err))
		case len(r.Ok) > 0:
			var ok struct {
				Content json.RawMessage `json:"content"`
				IsError bool            `json:"isError"`
			}
			_ = json.Unmarshal(r.Ok, &ok)
			body := contentText(ok.Content)
			a.Output, a.OutputSize = clipOutput(body), int64(len(body))
			a.Success = boolPtr(!ok.IsError)
			if ok.IsError {
				a.Error = clipError(body)
			}
		}
	}
	a.DurationMs, _ = jsonDurationMs(e.Duration)
	p.markDone(e.CallID)
	return []event.Event{p.action(p.callID(e.CallID), t, a)}, nil
}

// webSearch is a hosted web search the model ran: a search (query), or a page it opened or searched.
func (p *Parser) webSearch(it *responseItem, t time.Time) []event.Event {
	var act struct {
		Type    string `json:"type"`
		Query   string `json:"query"`
		URL     string `json:"url"`
		Pattern string `json:"pattern"`
	}
	if len(it.Action) > 0 && it.Action[0] == '{' {
		_ = json.Unmarshal(it.Action, &act)
	}
	a := &event.Action{Type: event.ActionWebSearch, Tool: "web_search", Target: clipTarget(act.Query)}
	if act.Type == "open_page" || act.Type == "find_in_page" || (act.Query == "" && act.URL != "") {
		a.Type, a.Target = event.ActionWebFetch, clipTarget(act.URL)
	}
	switch it.Status {
	case "completed":
		a.Success = boolPtr(true)
	case "failed", "incomplete":
		a.Success = boolPtr(false)
		a.Error = it.Status
	}
	callID := firstNonEmpty(it.CallID, it.ID)
	if callID == "" && act.Query != "" {
		callID, _ = getKV(p.st.WebSearches, shortHash(act.Query))
	}
	var id, msgID string
	if callID != "" {
		a.ToolUseID = callID
		id, msgID = p.callID(callID), p.callMessageID(callID)
	} else {
		k := p.contentKey("web_search", string(it.Action))
		id, msgID = k.id(event.KindAction), k.id(event.KindMessage)
	}
	return append([]event.Event{p.action(id, t, a)}, p.callMessage(msgID, it, a, t)...)
}

// ---------------------------------------------------------------------------------------------
// Scrubbing and limits

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return clipBytes(s, maxError) }

func clipOutput(s string) string { return clipBytes(s, maxOutput) }

func clipBytes(s string, max int) string { return transcript.Clip(s, max) }

func cutRunes(s string, n int) string { return transcript.CutRunes(s, n) }

func cutBytes(s string, n int) string { return transcript.CutBytes(s, n) }
