package event

import "fmt"

// Message is one message of a session's conversation as the client's record holds it: the user's
// prompt, the assistant's reply, its thinking (kept apart), a tool call, or a compaction summary.
// Text is scrubbed like every other string. A tool call's message places the call in the
// conversation: its Text is what the call's action targets (the command, the file, the pattern),
// and the call's result is the action's output (action_outputs), joined by ToolUseID, so an
// output is stored once.
type Message struct {
	// Role is one of the Role* constants.
	Role string `json:"role"`
	Text string `json:"text,omitempty"`
	// Seq orders the messages of one record that share a time: the line's number in its file
	// times 64 plus the block's index in the line, or any number that grows along the record.
	Seq int64 `json:"seq"`
	// MessageID is the client's or provider's id of the message the text is part of (several
	// blocks of one assistant message share it).
	MessageID string `json:"message_id,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"` // a tool call's id, as its action has it
	Tool      string `json:"tool,omitempty"`        // a tool call's tool, as the client names it
	// AgentID is the subagent whose conversation this is ("" for the session's own); Sidechain
	// marks a subagent's message in the parent's record.
	AgentID   string `json:"agent_id,omitempty"`
	Sidechain bool   `json:"sidechain,omitempty"`
	Model     string `json:"model,omitempty"`
}

// The roles of a Message.
const (
	RoleUser      = "user"      // a prompt the user typed (or a slash command)
	RoleAssistant = "assistant" // the assistant's reply text
	RoleThinking  = "thinking"  // the assistant's reasoning, where the client records it
	RoleToolCall  = "tool_call" // a tool call, in its place among the messages
	RoleSummary   = "summary"   // a compaction summary: the context the next epoch starts from
)

// MessageRoles lists the roles, in the order a conversation is explained in.
var MessageRoles = []string{RoleUser, RoleAssistant, RoleThinking, RoleToolCall, RoleSummary}

// Validate checks a message's role and that it has something to show.
func (m *Message) Validate() error {
	switch m.Role {
	case RoleUser, RoleAssistant, RoleThinking, RoleSummary:
		if m.Text == "" {
			return fmt.Errorf("%w: %s message without text", ErrPayload, m.Role)
		}
	case RoleToolCall:
		if m.Tool == "" && m.ToolUseID == "" {
			return fmt.Errorf("%w: tool call message without tool or id", ErrPayload)
		}
	default:
		return fmt.Errorf("%w: message role %q", ErrPayload, m.Role)
	}
	return nil
}
