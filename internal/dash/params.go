package dash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/observerhq/observer/internal/query"
)

// Limits on what a request may ask; beyond them it is a 400, not a slow query.
const (
	maxQueryBytes = 4096
	maxValueBytes = 1024
	maxWindow     = 10 * 365 * 24 * time.Hour
	maxPageSize   = 500
	maxOffset     = 1_000_000
)

// DefaultWindow is the window of a request that names none.
const DefaultWindow = "all"

// apiError is an answer other than 200, with its reason for the user.
type apiError struct {
	Status int
	Param  string
	Msg    string
}

func (e *apiError) Error() string { return e.Msg }

func badParam(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Param: param, Msg: param + ": " + fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Msg: fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, status int, param, msg string) {
	body := map[string]string{"error": msg}
	if param != "" {
		body["param"] = param
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// reqParams reads a request's parameters, each checked once, and remembers which it read so that an
// unknown one is reported rather than ignored (a typo would otherwise silently show everything).
type reqParams struct {
	r    *http.Request
	vals url.Values
	used map[string]bool
	now  time.Time
	err  *apiError
}

type apiFunc func(ctx context.Context, q *reqParams) (any, error)

// api turns fn into a handler: parameters parsed and limited, errors as JSON with their status.
func (s *Server) api(fn apiFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.RawQuery) > maxQueryBytes {
			writeError(w, http.StatusBadRequest, "", fmt.Sprintf("query string longer than %d bytes", maxQueryBytes))
			return
		}
		vals, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeError(w, http.StatusBadRequest, "", "malformed query string: "+err.Error())
			return
		}
		// The number of the last store-change tick (live.go) sent before this answer was read: the
		// answer holds every change up to it, so the page knows whether a tick it hears of later
		// is news.
		w.Header().Set("X-Observer-Changes", strconv.FormatInt(s.live.seq.Load(), 10))
		q := &reqParams{r: r, vals: vals, used: map[string]bool{}, now: s.opts.Now()}
		res, err := fn(r.Context(), q)
		if err == nil {
			err = q.done()
		}
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			writeError(w, ae.Status, ae.Param, ae.Msg)
		case err != nil && r.Context().Err() != nil:
			// The browser went away; nobody reads the answer.
		case err != nil:
			s.logger.Error("dashboard query failed", "path", r.URL.Path, "err", err)
			writeError(w, http.StatusInternalServerError, "", "query failed: "+err.Error())
		default:
			writeJSON(w, http.StatusOK, res)
		}
	}
}

// done reports the first bad parameter, or an unknown one.
func (q *reqParams) done() error {
	if q.err != nil {
		return q.err
	}
	for k := range q.vals {
		if !q.used[k] {
			return badParam(k, "unknown parameter")
		}
	}
	return nil
}

func (q *reqParams) fail(e *apiError) {
	if q.err == nil {
		q.err = e
	}
}

// str returns the single value of name ("" when absent), checked for size, UTF-8 and control
// characters.
func (q *reqParams) str(name string) string {
	q.used[name] = true
	vs := q.vals[name]
	if len(vs) == 0 {
		return ""
	}
	if len(vs) > 1 {
		q.fail(badParam(name, "given %d times", len(vs)))
		return ""
	}
	return q.checkText(name, vs[0])
}

func (q *reqParams) checkText(name, v string) string {
	switch {
	case len(v) > maxValueBytes:
		q.fail(badParam(name, "longer than %d bytes", maxValueBytes))
		return ""
	case !utf8.ValidString(v):
		q.fail(badParam(name, "not valid UTF-8"))
		return ""
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		q.fail(badParam(name, "contains control characters"))
		return ""
	}
	return v
}

var clientRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// name returns a value that must look like an identifier (a client, a kind, a type).
func (q *reqParams) name(param string) string {
	v := q.str(param)
	if v != "" && !clientRe.MatchString(v) {
		q.fail(badParam(param, "%q is not a name (lower-case letters, digits, '.', '_', '-')", v))
		return ""
	}
	return v
}

// intParam returns an integer in [lo, hi], def when absent.
func (q *reqParams) intParam(name string, def, lo, hi int) int {
	v := q.str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		q.fail(badParam(name, "want an integer from %d to %d, got %q", lo, hi, v))
		return def
	}
	return n
}

// boolParam reads 1/0/true/false.
func (q *reqParams) boolParam(name string) bool {
	v := q.str(name)
	switch v {
	case "", "0", "false":
		return false
	case "1", "true":
		return true
	}
	q.fail(badParam(name, "want 1 or 0, got %q", v))
	return false
}

// pathID returns the {id} path segment, checked like any parameter.
func (q *reqParams) pathID() string {
	id := q.r.PathValue("id")
	if id == "" {
		q.fail(badParam("id", "empty"))
	}
	return q.checkText("id", id)
}

// filters are the window, project and client every endpoint takes, and the team member the
// endpoints that read a team hub's members take (teamFilters).
type filters struct {
	Window  string    `json:"window"`
	Since   time.Time `json:"since,omitzero"` // zero: all time
	Project string    `json:"project,omitempty"`
	Client  string    `json:"client,omitempty"`
	Member  string    `json:"member,omitempty"`
}

// sinceMs is the window's start in ms, 0 for all time.
func (f filters) sinceMs() int64 {
	if f.Since.IsZero() {
		return 0
	}
	return f.Since.UnixMilli()
}

// readFilter is the filters as the read model (internal/query) takes them.
func (f filters) readFilter() query.Filter {
	return query.Filter{Since: f.Since, Project: f.Project, Client: f.Client, Member: f.Member}
}

// span is the window's length; all time counts as unbounded.
func (f filters) span(now time.Time) time.Duration {
	if f.Since.IsZero() {
		return maxWindow
	}
	return now.Sub(f.Since)
}

var windowRe = regexp.MustCompile(`^([0-9]{1,6})([mhdw])$`)

// parseWindow reads "all" or a count of minutes, hours, days or weeks ("90m", "24h", "7d", "2w").
func parseWindow(v string, now time.Time) (time.Time, error) {
	if v == "all" {
		return time.Time{}, nil
	}
	m := windowRe.FindStringSubmatch(v)
	if m == nil {
		return time.Time{}, fmt.Errorf("%q is not a window: use all, or a number and m, h, d or w (90m, 24h, 7d, 2w)", v)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
	if n == 0 || time.Duration(n) > maxWindow/unit {
		return time.Time{}, fmt.Errorf("%q: a window is from 1 minute to 10 years", v)
	}
	if m[2] == "d" || m[2] == "w" {
		// Calendar days, as `observerctl cost --since 7d` counts them.
		days := n
		if m[2] == "w" {
			days *= 7
		}
		return now.AddDate(0, 0, -days), nil
	}
	return now.Add(-time.Duration(n) * unit), nil
}

// filters reads window, project and client.
func (q *reqParams) filters() filters {
	f := filters{Window: q.str("window"), Project: q.str("project"), Client: q.name("client")}
	if f.Window == "" {
		f.Window = DefaultWindow
	}
	since, err := parseWindow(f.Window, q.now)
	if err != nil {
		q.fail(badParam("window", "%v", err))
	}
	f.Since = since
	return f
}

// teamFilters reads the filters and member, the team member whose rows alone count (see
// members.go). Only the endpoints that apply it read it: elsewhere it is an unknown parameter,
// not a filter silently ignored.
func (q *reqParams) teamFilters() filters {
	f := q.filters()
	f.Member = q.name("member")
	return f
}
