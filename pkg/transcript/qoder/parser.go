package qoder

import (
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/ccshape"
)

// Component is the source stamped on every event.
const Component = ccshape.Component

// Parser reads one transcript.
type Parser = ccshape.Parser[record, *record]

var _ transcript.Parser = (*Parser)(nil)

// record is one line: Claude Code's fields, and those of Qoder's own record types.
type record struct {
	ccshape.Record
	Model       string `json:"model"`
	AITitle     string `json:"aiTitle"`
	CustomTitle string `json:"customTitle"`
}

// config is what Qoder's records read differently from the others in Claude Code's shape: its
// tool names and its own record types. Its tool results are Claude Code's, and a subagent's
// transcript belongs to the session of its directory (the Source says which).
var config = ccshape.Config[*record]{
	Client: Client,
	Tool:   toolOf,
	Other:  other,
}

// other reads Qoder's own record types: the runtime config names the model, the titles are
// Qoder's and the user's; the others known carry nothing this reader reports.
func other(r *record) (ccshape.Meta, bool) {
	switch r.Type {
	case "runtime-config":
		return ccshape.Meta{Model: r.Model}, true
	case "ai-title":
		return ccshape.Meta{Title: r.AITitle}, true
	case "custom-title":
		return ccshape.Meta{Title: r.CustomTitle, TitleByUser: true}, true
	case "last-prompt", "file-history-snapshot", "queue-operation", "progress":
		return ccshape.Meta{}, true
	}
	return ccshape.Meta{}, false
}
