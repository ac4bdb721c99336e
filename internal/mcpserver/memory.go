package mcpserver

import (
	"context"
	"time"

	"github.com/observerhq/observer/internal/query"
)

const toolMemory = "get_project_memory"

type memoryArgs struct {
	Project string `json:"project,omitempty"`
}

type memoryAnswer struct {
	Project string `json:"project"`
	Memory  string `json:"memory"`
}

// projectMemory is what the project's past sessions taught (internal/memory), in a few hundred
// tokens: its strongest observations and its last sessions' goals and outcomes.
func (s *Server) projectMemory(ctx context.Context, db *dbh, in memoryArgs) (any, error) {
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	text, err := query.MemoryBrief(ctx, db, proj, time.UnixMilli(s.now()))
	if err != nil {
		return nil, err
	}
	return memoryAnswer{Project: proj, Memory: text}, nil
}
