package query

// Session is one row of the store's sessions table, as every surface shows it. Surfaces that add
// figures to it (the dashboard's actions, failures, tokens, dollars) embed it.
type Session struct {
	Client          string `json:"client"`
	SessionID       string `json:"session_id"`
	Title           string `json:"title"` // the client's title, else the first prompt ("" when neither)
	Project         string `json:"project"`
	FirstSeen       int64  `json:"first_seen"` // ms
	LastSeen        int64  `json:"last_seen"`  // ms
	State           string `json:"state"`
	Model           string `json:"model,omitempty"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	Epoch           int64  `json:"epoch"`
	Events          int64  `json:"events"`
	TranscriptPath  string `json:"transcript_path,omitempty"`
}

// sessionCols are the columns scanSession reads, in its order.
const sessionCols = "client, session_id, project, first_seen, last_seen, state, model, parent_session_id, epoch, events, transcript_path, title"

// scanSession reads a row of sessionCols.
func scanSession(sc interface{ Scan(...any) error }) (Session, error) {
	var s Session
	err := sc.Scan(&s.Client, &s.SessionID, &s.Project, &s.FirstSeen, &s.LastSeen, &s.State, &s.Model, &s.ParentSessionID,
		&s.Epoch, &s.Events, &s.TranscriptPath, &s.Title)
	return s, err
}
