package event

import (
	"fmt"
	"strings"
	"time"
)

// Limit is a provider's own figure of one window of a plan's usage limit, as it answered a
// request (observer-proxy reads the response's headers) or as a client recorded it (Codex's
// rollouts): how much of the window is used, whether requests are still allowed, and when the
// window resets. Nothing in it names the account.
type Limit struct {
	// Provider is the API that answered: anthropic or openai.
	Provider string `json:"provider"`
	// Window names the window: 5h and 7d for the five-hour and weekly windows, a provider's own
	// further windows after them (Anthropic's 7d_opus, 7d_sonnet, overage; a Codex limit family
	// as 5h_<family>).
	Window string `json:"window"`
	// WindowMinutes is the window's length when the provider says it or the name implies it.
	WindowMinutes int `json:"window_minutes,omitempty"`
	// UsedPercent is how much of the window is used, 0..100 (Anthropic's utilization times 100).
	UsedPercent float64 `json:"used_percent"`
	// Status is the provider's word for the window: allowed, allowed_warning or rejected; "" when
	// it gives none.
	Status string `json:"status,omitempty"`
	// ResetsAt is when the window resets; zero when not given.
	ResetsAt time.Time `json:"resets_at,omitzero"`
	// Plan is the plan type where the provider gives it (Codex: plus, pro, ...).
	Plan string `json:"plan,omitempty"`
}

// The limit statuses observer keeps (a provider's other words are kept as they are).
const (
	LimitAllowed  = "allowed"
	LimitWarning  = "allowed_warning"
	LimitRejected = "rejected"
)

// Validate checks what a stored snapshot needs.
func (l *Limit) Validate() error {
	switch {
	case l.Provider == "":
		return fmt.Errorf("%w: limit without provider", ErrPayload)
	case l.Window == "":
		return fmt.Errorf("%w: limit without window", ErrPayload)
	case l.UsedPercent < 0 || l.UsedPercent > 1000 || l.UsedPercent != l.UsedPercent:
		return fmt.Errorf("%w: limit used_percent %v out of range", ErrPayload, l.UsedPercent)
	}
	return nil
}

// LimitWindow names a window of minutes length ("5h", "7d", "90m"), with family after it when
// given ("5h_spark"): the names Limit.Window uses for windows a provider gives by length. A window
// of no known length is called unnamed (Codex's slot: primary, secondary).
func LimitWindow(minutes int, family, unnamed string) string {
	var name string
	switch {
	case minutes <= 0:
		name = unnamed
	case minutes%1440 == 0:
		name = fmt.Sprintf("%dd", minutes/1440)
	case minutes%60 == 0:
		name = fmt.Sprintf("%dh", minutes/60)
	default:
		name = fmt.Sprintf("%dm", minutes)
	}
	if family = strings.ToLower(strings.TrimSpace(family)); family != "" {
		name += "_" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
				return r
			}
			return '_'
		}, family)
	}
	return name
}

// LimitMinutes is the length of a window named as Anthropic names them (5h, 7d, 7d_opus): the
// number and unit it starts with; 0 when the name does not start with one.
func LimitMinutes(window string) int {
	n, i := 0, 0
	for i < len(window) && window[i] >= '0' && window[i] <= '9' {
		n = n*10 + int(window[i]-'0')
		i++
	}
	if i == 0 || i == len(window) {
		return 0
	}
	switch window[i] {
	case 'm':
		return n
	case 'h':
		return n * 60
	case 'd':
		return n * 1440
	}
	return 0
}
