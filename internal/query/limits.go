package query

import (
	"context"

	"fmt"
	"math"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// Limit is the latest figure the provider gave for one window of a plan's usage limit (what
// `observerctl limits --json` prints, one per provider, window and team member), with the burn
// rate over the window so far and a forecast. Every figure here is the provider's own, measured;
// nothing is estimated.
type Limit struct {
	Provider      string    `json:"provider"`
	Window        string    `json:"window"`
	WindowMinutes int       `json:"window_minutes,omitempty"`
	UsedPercent   float64   `json:"used_percent"`
	Status        string    `json:"status,omitempty"`
	ResetsAt      time.Time `json:"resets_at,omitzero"`
	// ResetsIn is the time from now to ResetsAt, "2 h 13 min" ("" once passed or unknown).
	ResetsIn string `json:"resets_in,omitempty"`
	Plan     string `json:"plan,omitempty"`
	Client   string `json:"client,omitempty"` // the client whose request or record gave the figure
	Source   string `json:"source"`           // observer-proxy (a response's headers) or the reader of a client's record
	Member   string `json:"member,omitempty"` // a team hub's member ("": this machine)
	// FirstSeen and SeenAt bound when the provider gave these figures.
	FirstSeen time.Time `json:"first_seen"`
	SeenAt    time.Time `json:"seen_at"`
	// Reset says the window has reset since the figure was seen: it no longer holds, and none
	// newer has come.
	Reset bool `json:"reset,omitempty"`
	// BurnPerHour is the share of the window used per hour over the window so far (from its start,
	// ResetsAt less its length, to SeenAt); 0 when the window's start is not known.
	BurnPerHour float64        `json:"burn_percent_per_hour"`
	Forecast    *LimitForecast `json:"forecast,omitempty"`
}

// LimitForecast says when, at the window's burn rate so far, its limit is reached.
type LimitForecast struct {
	// ReachedAt is when the used share reaches 100% at the current rate, when that is before the
	// reset; zero otherwise.
	ReachedAt time.Time `json:"reached_at,omitzero"`
	// BeforeReset says the limit is reached before the window resets (or already is).
	BeforeReset bool `json:"before_reset"`
	// Text says it in words: "limit reached", "at 14:05", "not before the reset".
	Text string `json:"text"`
}

// LimitPoint is one snapshot of a window's history: from FirstSeen to SeenAt the provider said
// UsedPercent.
type LimitPoint struct {
	Provider    string    `json:"provider"`
	Window      string    `json:"window"`
	Member      string    `json:"member,omitempty"`
	UsedPercent float64   `json:"used_percent"`
	Status      string    `json:"status,omitempty"`
	ResetsAt    time.Time `json:"resets_at,omitzero"`
	FirstSeen   time.Time `json:"first_seen"`
	SeenAt      time.Time `json:"seen_at"`
}

// Limits is the latest figure of every window the providers ever gave, ordered by provider,
// member, window length and name, each with its burn rate and forecast at now.
func Limits(ctx context.Context, db Querier, now time.Time) ([]Limit, error) {
	if ok, err := hasTable(ctx, db, "limit_snapshots"); err != nil || !ok {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT provider, window, window_minutes, used_pct, status, resets_at, plan, client,
		source, member, ts, last_seen FROM (
			SELECT *, row_number() OVER (PARTITION BY provider, window, member ORDER BY last_seen DESC, id DESC) AS n
			FROM limit_snapshots)
		WHERE n = 1 ORDER BY provider, member, window_minutes = 0, window_minutes, window`)
	if err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	defer rows.Close()
	var out []Limit
	for rows.Next() {
		var l Limit
		var resets, first, seen int64
		if err := rows.Scan(&l.Provider, &l.Window, &l.WindowMinutes, &l.UsedPercent, &l.Status, &resets, &l.Plan, &l.Client,
			&l.Source, &l.Member, &first, &seen); err != nil {
			return nil, err
		}
		if resets > 0 {
			l.ResetsAt = time.UnixMilli(resets).UTC()
		}
		l.FirstSeen, l.SeenAt = time.UnixMilli(first).UTC(), time.UnixMilli(seen).UTC()
		l.assess(now)
		out = append(out, l)
	}
	return out, rows.Err()
}

// assess fills in what follows from the figures at now: the time to the reset, the burn rate and
// the forecast.
func (l *Limit) assess(now time.Time) {
	if !l.ResetsAt.IsZero() {
		if now.Before(l.ResetsAt) {
			l.ResetsIn = Until(l.ResetsAt.Sub(now))
		} else {
			l.Reset = true
			return // the figure no longer holds: no rate, no forecast
		}
	}
	if l.WindowMinutes > 0 && !l.ResetsAt.IsZero() {
		start := l.ResetsAt.Add(-time.Duration(l.WindowMinutes) * time.Minute)
		if h := l.SeenAt.Sub(start).Hours(); h > 0 {
			l.BurnPerHour = math.Round(l.UsedPercent/h*100) / 100
		}
	}
	l.Forecast = forecast(l.UsedPercent, l.Status, l.BurnPerHour, l.SeenAt, l.ResetsAt)
}

// forecast is when used (percent, at seen) reaches 100 at rate percent an hour, against the reset.
func forecast(used float64, status string, rate float64, seen, reset time.Time) *LimitForecast {
	switch {
	case used >= 100 || status == event.LimitRejected:
		return &LimitForecast{BeforeReset: true, Text: "limit reached"}
	case rate <= 0:
		if reset.IsZero() {
			return nil
		}
		return &LimitForecast{Text: "not before the reset"}
	}
	at := seen.Add(time.Duration((100 - used) / rate * float64(time.Hour))).Truncate(time.Second)
	if !reset.IsZero() && !at.Before(reset) {
		return &LimitForecast{Text: "not before the reset"}
	}
	return &LimitForecast{ReachedAt: at.UTC(), BeforeReset: true, Text: "at " + at.Local().Format("15:04")}
}

// Until says a duration as people read a countdown: "2 h 13 min", "45 min", "3 d 4 h", "<1 min".
func Until(d time.Duration) string {
	m := int64(d / time.Minute)
	switch {
	case m < 1:
		return "<1 min"
	case m < 60:
		return fmt.Sprintf("%d min", m)
	case m < 48*60:
		if m%60 == 0 {
			return fmt.Sprintf("%d h", m/60)
		}
		return fmt.Sprintf("%d h %d min", m/60, m%60)
	}
	d2, h := m/(24*60), m%(24*60)/60
	if h == 0 {
		return fmt.Sprintf("%d d", d2)
	}
	return fmt.Sprintf("%d d %d h", d2, h)
}

// LimitHistory is every snapshot seen since since (ms window: any snapshot still seen after it),
// oldest first: the utilization of each window over time.
func LimitHistory(ctx context.Context, db Querier, since time.Time) ([]LimitPoint, error) {
	if ok, err := hasTable(ctx, db, "limit_snapshots"); err != nil || !ok {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT provider, window, member, used_pct, status, resets_at, ts, last_seen
		FROM limit_snapshots WHERE last_seen >= ? ORDER BY ts, id`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("limit history: %w", err)
	}
	defer rows.Close()
	out := []LimitPoint{}
	for rows.Next() {
		var p LimitPoint
		var resets, first, seen int64
		if err := rows.Scan(&p.Provider, &p.Window, &p.Member, &p.UsedPercent, &p.Status, &resets, &first, &seen); err != nil {
			return nil, err
		}
		if resets > 0 {
			p.ResetsAt = time.UnixMilli(resets).UTC()
		}
		p.FirstSeen, p.SeenAt = time.UnixMilli(first).UTC(), time.UnixMilli(seen).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// EstimatedBlocksNote marks the token-based 5-hour blocks shown in place of a provider's figures
// (ActiveBlocks): observer's estimate, never the provider's measure.
const EstimatedBlocksNote = "estimated from token counts (5-hour blocks): no provider figure was ever seen"
