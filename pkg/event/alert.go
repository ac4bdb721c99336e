package event

import "time"

// AlertSubjectPrefix is the prefix of the bus subjects that carry alerts: observer.alert.<kind>.
// They are outside the events stream (SubjectPrefix): an alert is stored by the writer that raises
// it, and the bus only tells whoever listens right now.
const AlertSubjectPrefix = "observer.alert"

// AlertBudget is the kind of an alert raised when spending crosses a share of a [budget] limit.
const AlertBudget = "budget"

// Alert is something observer tells the user about once: the writer stores it (one row per kind,
// scope, project, period and threshold) and publishes it on the bus for live views.
type Alert struct {
	ID        int64     `json:"id,omitempty"` // the store's row id; 0 before it is stored
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`              // AlertBudget
	Scope     string    `json:"scope"`             // day, month or project
	Project   string    `json:"project,omitempty"` // scope project: the project's path
	Period    string    `json:"period"`            // the local day starting the period, "2026-12-01"
	Threshold int       `json:"threshold"`         // percent of the limit crossed: 80 or 100
	SpentUSD  float64   `json:"spent_usd"`
	LimitUSD  float64   `json:"limit_usd"`
	Message   string    `json:"message"`
}

// AlertSubject is the subject an alert of kind is published on.
func AlertSubject(kind string) string { return AlertSubjectPrefix + "." + token(kind) }

// AlertLimit is the kind of an alert raised when a plan usage limit window, as the provider
// reports it, reaches [limits] warn_at (Threshold) or rejects requests (Threshold 100). Its Scope
// is the provider and window ("anthropic 5h"), Project the team member ("" for this machine) and
// Period the window's reset (RFC 3339, UTC): once per window and threshold.
const AlertLimit = "limit"
