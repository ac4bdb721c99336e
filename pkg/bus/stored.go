package bus

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
)

// StoredSubject carries the writer's word that the store changed: published after each commit
// (StoredNote), on a core subject outside the events stream, so nothing keeps it and a reader that
// was away misses it. Readers that show the store (the dashboard) re-read when it comes: an
// event's own message on the events stream arrives when it is published, before the writer has
// committed it, so re-reading then could miss it.
const StoredSubject = "observer.stored"

// StoredListMax caps each list of a StoredNote; a value beyond it is left out and Many set, which
// means "any client, project or session".
const StoredListMax = 32

// StoredNote says what a commit changed: for a batch of events, how many rows were new, and the
// distinct kinds, clients, projects and sessions of its events; for the writer's own work, which
// derived tables it rewrote (the analysis, repriced costs).
type StoredNote struct {
	Time     time.Time `json:"time"`
	Events   int       `json:"events,omitempty"` // events stored for the first time
	Kinds    []string  `json:"kinds,omitempty"`
	Clients  []string  `json:"clients,omitempty"`
	Projects []string  `json:"projects,omitempty"`
	Sessions []string  `json:"sessions,omitempty"`
	Many     bool      `json:"many,omitempty"`     // a list of clients, projects or sessions reached StoredListMax: any value may have changed
	Analysis bool      `json:"analysis,omitempty"` // the analysis tables (scores, findings, patterns) changed
	Repriced bool      `json:"repriced,omitempty"` // stored costs were recomputed
}

// Add records one event's kind, client, project and session in the note.
func (n *StoredNote) Add(kind, client, project, session string) {
	n.Kinds = addCapped(n.Kinds, kind, &n.Many)
	n.Clients = addCapped(n.Clients, client, &n.Many)
	n.Projects = addCapped(n.Projects, project, &n.Many)
	n.Sessions = addCapped(n.Sessions, session, &n.Many)
}

// Merge adds o's changes to n.
func (n *StoredNote) Merge(o StoredNote) {
	if o.Time.After(n.Time) {
		n.Time = o.Time
	}
	n.Events += o.Events
	n.Many = n.Many || o.Many
	n.Analysis = n.Analysis || o.Analysis
	n.Repriced = n.Repriced || o.Repriced
	for _, v := range o.Kinds {
		n.Kinds = addCapped(n.Kinds, v, &n.Many)
	}
	for _, v := range o.Clients {
		n.Clients = addCapped(n.Clients, v, &n.Many)
	}
	for _, v := range o.Projects {
		n.Projects = addCapped(n.Projects, v, &n.Many)
	}
	for _, v := range o.Sessions {
		n.Sessions = addCapped(n.Sessions, v, &n.Many)
	}
}

// addCapped adds v to the set list, unless v is empty or the list is full (then it sets *many).
// Kinds are few, so only the other lists reach the cap in practice.
func addCapped(list []string, v string, many *bool) []string {
	if v == "" || slices.Contains(list, v) {
		return list
	}
	if len(list) >= StoredListMax {
		*many = true
		return list
	}
	return append(list, v)
}

// PublishStored sends a note on StoredSubject. It does not wait for anyone (a lost note delays a
// reader's refresh until the next one).
func (c *Client) PublishStored(n StoredNote) error {
	if n.Time.IsZero() {
		n.Time = time.Now().UTC()
	}
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return c.nc.Publish(StoredSubject, data)
}

// SubscribeStored delivers every note published from now on, in order, on one goroutine.
func (c *Client) SubscribeStored(fn func(StoredNote)) (*Subscription, error) {
	sub, err := c.nc.Subscribe(StoredSubject, func(m *nats.Msg) {
		var n StoredNote
		if json.Unmarshal(m.Data, &n) == nil {
			fn(n)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := c.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	return &Subscription{sub: sub}, nil
}
