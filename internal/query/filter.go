package query

import "time"

// Filter selects the rows a read covers. The zero Filter is everything.
type Filter struct {
	Since     time.Time // zero: from the start
	Until     time.Time // exclusive; zero: up to now and beyond
	Project   string    // empty: every project; a proxy turn's project is its session's
	Client    string    // empty: every client
	SessionID string    // empty: every session
	// SessionIDs, when set, keeps only these sessions (a dashboard page of them).
	SessionIDs []string
	// Member, on a team hub's store, keeps one member's rows: the member column of each row (the
	// name the hub verified when it received it), never its session's. "" is every member; a
	// single user's store has only rows of member "".
	Member string
}
