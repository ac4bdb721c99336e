// Package team is observer's team mode: many members' machines, one view on a hub.
//
// It is NATS, not a protocol of observer's. A member's embedded bus joins the hub's NATS server as
// a leafnode (TLS, one nkey per member); the hub's JetStream mirrors each member's share stream
// across the leafnode, and gathers the mirrors into one team stream that the hub's writer stores.
// A member that is offline keeps its events in its share stream; the mirror takes them up where it
// left off when the member is back, and again after the hub restarts. The mirror reads through a
// durable push consumer the member keeps for it ("hub", acks by flow control: JetStream's durable
// sourcing), which delivers as soon as the leafnode is back; a mirror's own consumer would wait for
// its next retry, up to minutes after a long absence.
//
//	member bus:  OBSERVER ──sharer (share level, scrub)──> TEAM_OUT (share.<kind>.<client>)
//	                                                          │ consumer "hub" over the leafnode,
//	                                                          │ JetStream domain m-<member>
//	hub:         TEAM_<member> (mirror) ──source, share.> → team.<member>.>──> TEAM ──> writer
//
// Identity: a member authenticates with its nkey, under its own name: the hub admits a key only
// when its leafnode's server name is LeafName of the member the key is registered to (NATS replaces
// a leafnode with the next of the same name, so another name would let one member cut another
// off). The hub lets its leafnode publish only under deliver.<member>.> (its mirror's deliveries)
// and the replies to the hub's requests about its own mirror's consumer (scoped reply subjects
// that name the member's domain, so no answer to a request the hub made of another member or of
// itself), and receive only its own domain's JetStream API. The member name the hub stores comes
// from the hub's own stream names (team.<member>. is given by the hub's source of TEAM_<member>),
// never from an event, so a member cannot publish as another.
//
// Privacy: the sharer applies the member's share level (Strip) and the secret scrubber before an
// event enters TEAM_OUT; nothing else leaves the machine.
//
// Binding: TEAM_OUT records the hub (its CA's fingerprint, else its URLs) and the member it holds
// events for. Pointed at another hub or identity, the member drops what the old one did not take
// yet (its own store keeps everything), unless [team] carry_pending asks to deliver it to the new
// one (then only what the old hub had not confirmed goes).
package team

import (
	"fmt"
	"regexp"

	"github.com/observerhq/observer/pkg/event"
)

// Stream, consumer and subject names.
const (
	HubDomain      = "hub"      // the hub's JetStream domain
	TeamStream     = "TEAM"     // the hub's stream of every member's events
	WriterConsumer = "writer"   // the hub writer's durable consumer on TeamStream
	ShareStream    = "TEAM_OUT" // a member's stream of what it shares
	ShareConsumer  = "team"     // the member sharer's durable consumer on the observer stream
	HubConsumer    = "hub"      // the hub mirror's durable consumer on a member's share stream
	shareSubjects  = "share.>"
	teamPrefix     = "team."
)

// MemberDomain is a member's JetStream domain: the hub reaches its share stream through
// $JS.<domain>.API.
func MemberDomain(member string) string { return "m-" + member }

// LeafName is the server name of a member's share server, which its leafnode presents to the hub.
// The hub admits a key only under its own member's name (hubAuth.Check): NATS replaces a leafnode
// with the next one of the same name, so a name claimed with another key would cut the member off.
func LeafName(member string) string { return "observer-" + MemberDomain(member) }

// MirrorStream is the hub's mirror of a member's share stream.
func MirrorStream(member string) string { return "TEAM_" + member }

func deliverPrefix(member string) string { return "deliver." + member }

// DeliverSubject is where a member's share stream delivers to the hub's mirror.
func DeliverSubject(member string) string { return deliverPrefix(member) + "." + HubConsumer }

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// ValidName checks a member name: lower-case letters, digits, '-' and '_', at most 32, starting
// with a letter or digit. It becomes part of subjects, stream names and the JetStream domain.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("member name %q: use 1 to 32 lower-case letters, digits, '-' or '_', starting with a letter or digit", name)
	}
	return nil
}

// MemberOf returns the member a hub's team-stream subject belongs to
// (team.<member>.<kind>.<client>), or "" when the subject is not one.
func MemberOf(subject string) string {
	if len(subject) <= len(teamPrefix) || subject[:len(teamPrefix)] != teamPrefix {
		return ""
	}
	rest := subject[len(teamPrefix):]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '.' {
			if ValidName(rest[:i]) != nil {
				return ""
			}
			return rest[:i]
		}
	}
	return ""
}

// Attribute makes ev, received by a hub under subject, the event of the member the subject names:
// Member is set from the subject (never from the event), and the ids the store keys on are
// prefixed with the member (event ids "<member>/…", session ids "<member>:…"), so one member's
// events and sessions can never merge into another's.
func Attribute(ev *event.Event, subject string) error {
	member := MemberOf(subject)
	if member == "" {
		return fmt.Errorf("not a member's subject: %q", subject)
	}
	ev.Member = member
	ev.ID = member + "/" + ev.ID
	// Sessions too: two members' clients may use the same session id (or one may send another's),
	// and the store keys sessions, their rollups and summaries on it. ':' keeps the id one path
	// segment in the dashboard's URLs.
	if ev.SessionID != "" {
		ev.SessionID = member + ":" + ev.SessionID
	}
	if s := ev.Session; s != nil && s.ParentSessionID != "" {
		s.ParentSessionID = member + ":" + s.ParentSessionID
	}
	if c := ev.Compression; c != nil && c.TurnID != "" {
		c.TurnID = member + "/" + c.TurnID
	}
	if c := ev.Compression; c != nil && c.StashID != "" {
		c.StashID = member + "/" + c.StashID
	}
	return nil
}
