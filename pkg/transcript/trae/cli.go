package trae

import (
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// cliParser reads a TRAE CLI rollout with package codex's parser and relabels its events (see the
// package doc).
type cliParser struct {
	transcript.Parser
}

// Record parses one rollout line as Codex does; its events carry client "trae".
func (p *cliParser) Record(off int64, line []byte) ([]event.Event, error) {
	evs, err := p.Parser.Record(off, line)
	for i := range evs {
		evs[i].Client = Client
	}
	return evs, err
}
