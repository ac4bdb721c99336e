package team

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/scrub"
)

// Level is how much of a member's events leaves its machine.
type Level string

// The share levels.
const (
	// Usage shares tokens, cost, models, durations and counts: every event, with no action
	// target, prompt, output, error text, path or title. Its project is an opaque id
	// (ProjectID), not the path.
	Usage Level = "usage"
	// Actions adds the normalized actions' targets (files, commands, patterns, URLs), without
	// outputs, error text or prompts (nor other prose: subagent instructions, questions, answers,
	// todo lists).
	Actions Level = "actions"
	// Full shares events as they are stored locally (already scrubbed), scrubbed once more.
	Full Level = "full"
)

// Levels lists the share levels, least first.
var Levels = []Level{Usage, Actions, Full}

// ParseLevel checks a share level's name.
func ParseLevel(s string) (Level, error) {
	for _, l := range Levels {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("share level %q: use usage, actions or full", s)
}

// ProjectKey is the key of a member's project ids (ProjectID), derived from the seed in its
// credentials: a secret of the member's that the hub never holds.
func ProjectKey(seed string) []byte {
	sum := sha256.Sum256([]byte("observer team project id\x00" + seed))
	return sum[:]
}

// ProjectID is what a project path becomes below share level actions: "p-" and the first 12 hex
// digits of its HMAC-SHA256 under key (ProjectKey). The same path always gives the same id, so
// the hub still tells a member's projects apart and follows each over time, but it can neither
// read the path nor confirm a guess of it without the member's seed. An empty path stays empty.
func ProjectID(key []byte, path string) string {
	if path == "" {
		return ""
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(path))
	return "p-" + hex.EncodeToString(mac.Sum(nil))[:12]
}

// Strip reduces ev to what level shares, in place. Every event kind is shared at every level (its
// counts and figures are the point); only content goes. Below actions no path of any kind leaves:
// the project becomes ProjectID(key, path), and directories and file names are cleared. The
// envelope's Member is cleared: the hub sets it. Strings that remain are scrubbed again, so a
// secret that reached the local store under an older scrubber does not leave the machine.
func Strip(ev *event.Event, level Level, key []byte) {
	ev.Member = ""
	full, actions := level == Full, level == Actions || level == Full
	if !actions {
		ev.Project = ProjectID(key, ev.Project)
	}
	if a := ev.Action; a != nil {
		// Targets that are text a person or a model wrote, not a file or a command: a prompt, a
		// subagent's instructions, a question, a final answer, a todo list, a system prompt.
		prose := false
		switch a.Type {
		case event.ActionUserPrompt, event.ActionSpawnSubagent, event.ActionAskUser, event.ActionTaskComplete,
			event.ActionTodoUpdate, event.ActionSystemPrompt, event.ActionAPIError:
			prose = true
		}
		if !actions || prose && !full {
			a.Target = ""
		}
		if !full {
			a.Output, a.Error, a.Transcript = "", "", ""
			a.InputHash, a.ContentHash = "", ""
		}
		a.Target, a.Output, a.Error = scrub.String(a.Target), scrub.String(a.Output), scrub.String(a.Error)
	}
	if t := ev.APITurn; t != nil && !full {
		t.ErrorMessage = ""
	}
	if c := ev.Compression; c != nil && !full {
		c.Original, c.StashID = "", ""
	}
	if s := ev.Session; s != nil && !full {
		s.Title, s.TitleByUser = "", false
		if !actions {
			s.Cwd, s.TranscriptPath, s.GitBranch = "", "", ""
		}
	}
	if h := ev.Hook; h != nil && !actions {
		h.Cwd, h.TranscriptPath = "", ""
	}
	if m := ev.MCPCall; m != nil && !full {
		// Like an action's input hash: a digest of content, which a guess can be checked against.
		m.Error, m.InputHash, m.OutputHash = "", "", ""
	}
	if m := ev.Message; m != nil {
		// Not shared below full at all (Shareable); stripped too, should one be asked for.
		if !full {
			m.Text, m.Tool = "", ""
		}
		m.Text = scrub.String(m.Text)
	}
	if ev.Compression != nil {
		ev.Compression.Original = scrub.String(ev.Compression.Original)
	}
	if ev.APITurn != nil {
		ev.APITurn.ErrorMessage = scrub.String(ev.APITurn.ErrorMessage)
	}
}
