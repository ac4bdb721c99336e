package ingest

import "time"

// ScanRequest asks the running watcher, which owns the cursors, for a pass over the history on
// behalf of `observerctl scan` or `backfill` (bus.ScanSubject): the adapters of Client (all when
// empty) and the files modified since Since (all when zero).
type ScanRequest struct {
	Client string    `json:"client,omitempty"`
	Since  time.Time `json:"since,omitzero"`
}

// ScanUpdate is the watcher's answer to a ScanRequest: progress as it reads, then one update with
// the Summary (or the Error) that ends it.
type ScanUpdate struct {
	Progress *Progress `json:"progress,omitempty"`
	Summary  *Summary  `json:"summary,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Done reports whether u is the last update of its pass.
func (u ScanUpdate) Done() bool { return u.Summary != nil || u.Error != "" }
