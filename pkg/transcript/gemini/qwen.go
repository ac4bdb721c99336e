package gemini

import (
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
)

// qwenSystem are Qwen Code system subtypes that carry nothing this package reports.
var qwenSystem = map[string]bool{
	"attribution_snapshot": true, "session_source": true, "session_model": true,
	"slash_command": true, "at_command": true, "omni_recall": true, "file_history_snapshot": true,
	"rewind": true, "branch_checkpoint": true, "goal_state": true, "goal_runtime": true, "goal_turn_end": true,
	"turn_result": true, "background_task_completed": true, "realtime_message": true,
	"session_artifact_event": true, "session_artifact_snapshot": true, "session_sources_snapshot": true,
	"user_text_elements": true,
}

// qwen turns one Qwen Code record into events.
func (p *Parser) qwen(r *record, raw []byte) []event.Event {
	if r.SessionID != "" && p.st.SessionID == "" {
		p.st.SessionID = r.SessionID
	}
	if p.src.SessionID != "" && p.src.AgentID == "" {
		p.st.SessionID = p.src.SessionID // the file name is the session
	}
	p.setCwd(r.Cwd)
	t, ok := p.time(r.Timestamp)
	if !ok {
		p.stats.CountUnknown("(no timestamp)")
		return nil
	}
	var evs []event.Event
	if !p.st.Started && !p.isSubagent() {
		p.st.Started = true
		ev := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.idSession(), "started"), t)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: r.Cwd, GitBranch: r.GitBranch,
			TranscriptPath: p.src.Path, StartedAt: t}
		evs = append(evs, ev)
	}
	switch r.Type {
	case "user":
		return append(evs, p.qwenUser(r, t)...)
	case "assistant":
		return append(evs, p.qwenAssistant(r, t)...)
	case "tool_result":
		return append(evs, p.qwenResults(r, t)...)
	case "system":
		return append(evs, p.qwenSystem(r, t)...)
	}
	p.stats.CountUnknown(firstNonEmpty(r.Type, "(no type)"))
	return evs
}

// payload returns one member of a record's systemPayload.
func (r *record) payload(key string) []byte {
	var out []byte
	if len(r.SystemPayload) > 0 && r.SystemPayload[0] == '{' {
		jsonscan.Members(r.SystemPayload, func(k, v []byte) bool {
			if jsonscan.Key(k, key) {
				out = v
			}
			return out == nil
		})
	}
	return out
}

// qwenUser is a prompt: a record the user typed (no subtype, or typed during a turn).
func (p *Parser) qwenUser(r *record, t time.Time) []event.Event {
	if r.Subtype != "" && r.Subtype != "mid_turn_user_message" {
		return nil // notifications, cron prompts
	}
	ps := &r.Content
	text := strings.TrimSpace(ps.text.String())
	if text == "" && len(ps.responses) > 0 {
		return nil
	}
	target := firstNonEmpty(strings.TrimSpace(jsonscan.Str(r.payload("displayText"))), text)
	if target == "" && ps.images > 0 {
		target = "[image]"
	}
	if target == "" {
		return nil
	}
	return []event.Event{p.messageAction(r.UUID, t, &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(target)}),
		p.userText(r.UUID, target, t)}
}

// qwenAssistant reports an assistant record's model, usage and tool calls.
func (p *Parser) qwenAssistant(r *record, t time.Time) []event.Event {
	evs := append(p.modelEvent(r.Model, t),
		p.replyMessages(r.UUID, r.Model, r.Content.thoughts.String(), r.Content.text.String(), t)...)
	if u, ok := readUsage(r.UsageMetadata); ok && r.UUID != "" {
		evs = append(evs, p.usageEvent(r.UUID, r.Model, u.tokens(u.candidates < u.thoughts), t))
	}
	for i, fc := range r.Content.calls {
		id, name, in := fc.id, fc.name, fc.args
		if name == "" {
			continue
		}
		if id == "" {
			id = r.UUID + "#" + strconv.Itoa(i)
		}
		a := &event.Action{Type: ToolType(name), Tool: name, Target: clipTarget(p.target(name, in)), ToolUseID: id,
			MessageID: r.UUID, AgentID: p.src.AgentID, InputHash: hashInput(in), Model: r.Model, Transcript: p.src.Path}
		p.st.Pending.Replace(pending{ID: id, Type: a.Type, Tool: name, Target: transcript.Memo(a.Target), Msg: r.UUID, Model: r.Model, Time: t.UnixNano()}, maxPending)
		ev := p.newEvent(event.KindAction, p.actionID(id), t)
		ev.Action = a
		evs = append(evs, ev, p.callMessage(r.UUID, r.Model, id, id, name, in, i, t))
	}
	return evs
}

// qwenResults pairs a tool_result record's function responses with their calls.
func (p *Parser) qwenResults(r *record, t time.Time) []event.Event {
	var callID, status string
	var display []byte
	if len(r.ToolCallResult) > 0 && r.ToolCallResult[0] == '{' {
		jsonscan.Members(r.ToolCallResult, func(k, v []byte) bool {
			switch string(k[1 : len(k)-1]) {
			case "callId":
				callID = jsonscan.Str(v)
			case "status":
				status = jsonscan.Str(v)
			case "resultDisplay":
				display = v
			}
			return true
		})
	}
	var evs []event.Event
	emit := func(id, name string, res result) {
		if id == "" {
			return
		}
		a := &event.Action{Type: event.ActionUnknown, Tool: name, ToolUseID: id, AgentID: p.src.AgentID, Transcript: p.src.Path}
		if pc, ok := p.st.Pending.Take(id); ok {
			a.Type, a.Tool, a.Target, a.MessageID, a.Model = pc.Type, pc.Tool, string(pc.Target), pc.Msg, pc.Model
			if d := t.UnixNano() - pc.Time; d >= 0 && pc.Time != 0 {
				a.DurationMs = d / int64(time.Millisecond)
			}
		} else if name != "" {
			a.Type = ToolType(name)
		}
		res.orDisplay(display)
		st := status
		if st == "" {
			st = "success"
			if res.err != "" {
				st = "error"
			}
		}
		p.settle(a, st, &res)
		ev := p.newEvent(event.KindAction, p.actionID(id), t)
		ev.Action = a
		evs = append(evs, ev)
	}
	for i, r := range r.Content.responses {
		id := r.id
		if id == "" && i == 0 {
			id = callID
		}
		emit(id, r.name, r.res)
	}
	if len(r.Content.responses) == 0 && callID != "" {
		emit(callID, "", result{})
	}
	return evs
}

// qwenSystem handles system records: compactions, API errors, the parent of a branched session.
func (p *Parser) qwenSystem(r *record, t time.Time) []event.Event {
	switch r.Subtype {
	case "chat_compression":
		p.st.Epoch++
		act := p.messageAction(r.UUID, t, &event.Action{Type: event.ActionContextCompacted, Tool: r.Subtype})
		ses := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.idSession(), "epoch",
			strconv.Itoa(p.st.Epoch)), t)
		ses.Session = &event.Session{State: event.SessionActive, Epoch: p.st.Epoch, TranscriptPath: p.src.Path}
		return []event.Event{act, ses}
	case "ui_telemetry":
		var name, msg, model string
		var status []byte
		jsonscan.Members(r.payload("uiEvent"), func(k, v []byte) bool {
			switch string(k[1 : len(k)-1]) {
			case "event.name":
				name = jsonscan.Str(v)
			case "error_message", "error":
				msg = firstNonEmpty(msg, jsonscan.Str(v))
			case "status_code":
				status = v
			case "model":
				model = jsonscan.Str(v)
			}
			return true
		})
		if name != "qwen-code.api_error" {
			return nil
		}
		if s := string(status); s != "" && s != "null" && !strings.Contains(msg, s) {
			msg = strings.TrimSpace(strings.Trim(s, `"`) + " " + msg)
		}
		return []event.Event{p.messageAction(r.UUID, t, &event.Action{Type: event.ActionAPIError, Model: model,
			Error: clipError(msg)})}
	case "custom_title":
		// The title the user gave (/rename <name>, titleSource "manual", or none before the
		// field existed) or the one Qwen Code generated ("auto"); written again at every
		// lifecycle event and every 32 KB, reported when it changes.
		title := jsonscan.Str(r.payload("customTitle"))
		return p.title(title, jsonscan.Str(r.payload("titleSource")) != "auto", t)
	case "parent_session":
		parent := jsonscan.Str(r.payload("parentSessionId"))
		if parent == "" || p.isSubagent() {
			return nil
		}
		ev := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.idSession(), "parent"), t)
		ev.Session = &event.Session{State: event.SessionActive, ParentSessionID: parent, TranscriptPath: p.src.Path}
		return []event.Event{ev}
	}
	if !qwenSystem[r.Subtype] {
		p.stats.CountUnknown("system/" + r.Subtype)
	}
	return nil
}
