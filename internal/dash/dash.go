// Package dash is observer-dash: the dashboard's HTTP server, its JSON API and its embedded user
// interface.
//
// What it reads: the store, read-only (store.OpenReader), opened on the first request that finds
// it and kept open; until the writer has created it every page answers with empty figures and
// "store": false, never an error. Live updates come from a bus subscription (package bus, no
// history, no acks) fanned out to the browsers as Server-Sent Events on /api/live; the writer's
// notes that a commit changed the store go to every open view on /api/changes, which re-reads
// its figures (live.go).
//
// Figures: every token and dollar figure comes from query.Cost, the computation behind
// `observerctl cost`, so the dashboard's totals for a window equal `observerctl cost --json
// --since <window>` with the same project and client: query.Cost applies all three filters in SQL
// and counts each turn once. Cost over time is by local hour for windows up to two days, by local
// day beyond, as in query.Cost. The split of a bucket's dollars into the four billing buckets
// (input, output, cache read, cache write) prices each (bucket, model) group's tokens at the
// model's current list price and shares the group's recorded dollars in those proportions: the
// stack always adds up to the recorded cost, and the split is exact except where long-context or
// dated prices applied.
//
// API: every endpoint is a GET taking the filters window (24h, 7d, 30m, 2w, all), project (a
// project path) and client; parameters are checked strictly, and anything malformed, unknown or
// too large is a 400 with a JSON body {"error": ..., "param": ...}; an unknown session is a 404.
//
// Team mode (members.go): on a team hub's store, whose rows name the member they came from,
// /api/members compares the members, and overview, cost, sessions, actions and members take a
// member filter. A member's figures are read from the raw tables (the rollups have no member);
// its dollars are the same de-duplicated turns as query.Cost's.
//
// Security (see security.go): only requests whose Host header names a loopback address and the
// listening port are served (DNS rebinding); listening beyond loopback requires [dash] token, and
// every request must then carry it (Authorization: Bearer, or the cookie that ?token= sets); any
// request that is not a GET or HEAD must carry the CSRF token the page embeds. The page loads
// nothing from elsewhere: its script, styles and the vendored chart library (uPlot, see
// assets/vendor/uplot/README.md) are embedded in the binary, and the Content-Security-Policy
// forbids any other origin.
package dash

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/loopback"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

//go:embed assets
var assetFS embed.FS

// Options configures a Server.
type Options struct {
	// Addr is the listen address ([dash] addr). A port of 0 is resolved by Serve.
	Addr string
	// Token is [dash] token. Required when Addr is not a loopback address.
	Token string
	// StorePath is the SQLite store, opened read-only when it exists.
	StorePath string
	// Prices splits dollars into billing buckets; nil means pricing.Default(). PriceTable, when
	// set, is asked instead on every request (the table that follows config.toml's overrides).
	Prices     *pricing.Table
	PriceTable func() *pricing.Table
	// PriceSet, when set, is the price set in force (overrides, price database, built-in table),
	// for Settings to say where prices come from.
	PriceSet func() *prices.Set
	// Plans, when set, gives the monthly plans of config.toml's [plans] at each request of
	// /api/plans (nil or an empty map: no plan, no panel).
	Plans func() map[string]query.Plan
	// Version is shown in the page footer and /api/status.
	Version string
	// Home is observer's home, whose disk /api/status reports full (disk_full) below bus.DiskLow.
	Home   string
	Logger *slog.Logger
	// Now is the clock, injectable in tests.
	Now func() time.Time
}

// Server serves the dashboard.
type Server struct {
	opts     Options
	loopback bool   // Addr is a loopback address
	port     string // the listening port, for the Host check
	csrf     string
	handler  http.Handler
	live     *Hub
	logger   *slog.Logger

	mu sync.Mutex
	st *store.Store

	table  func() *pricing.Table     // the price table in force
	prices atomic.Pointer[priceMemo] // lookups of the table in force, see lookup

	requests atomic.Int64
}

// ErrNeedToken reports a non-loopback listen address without [dash] token.
var ErrNeedToken = errors.New("the dashboard listens beyond loopback but [dash] token is empty: set it (or OBSERVER_DASH_TOKEN), or listen on 127.0.0.1")

// New checks the options and builds the server; Serve runs it.
func New(opts Options) (*Server, error) {
	host, port, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("[dash] addr %q: %w", opts.Addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fmt.Errorf("[dash] addr %q: bad port", opts.Addr)
	}
	s := &Server{opts: opts, loopback: loopback.Host(host), port: port, live: NewHub()}
	if !s.loopback && opts.Token == "" {
		return nil, ErrNeedToken
	}
	if opts.Token != "" {
		if err := config.CheckToken(opts.Token); err != nil {
			return nil, fmt.Errorf("[dash] token: %w", err)
		}
	}
	s.table = pricing.Source(opts.Prices, opts.PriceTable)
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	s.logger = opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	b := make([]byte, 32)
	rand.Read(b)
	s.csrf = hex.EncodeToString(b)
	s.handler = s.secure(s.routes())
	return s, nil
}

// Handler returns the whole dashboard, security checks included.
func (s *Server) Handler() http.Handler { return s.handler }

// Live returns the hub that feeds /api/live; the bus subscription publishes into it.
func (s *Server) Live() *Hub { return s.live }

// Requests counts the requests served, for the heartbeat.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Listen opens the listener of Addr and records its port (for an Addr with port 0).
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (change [dash] addr or OBSERVER_DASH_ADDR): %w", s.opts.Addr, err)
	}
	s.port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	return ln, nil
}

// Serve serves on ln until ctx ends, then stops within a few seconds. Requests in flight,
// live streams included, see their context end with ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return nil
}

// Close closes the store.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		err := s.st.Close()
		s.st = nil
		return err
	}
	return nil
}

// db returns the store's connection pool, or nil while there is no store yet (no file, or a file
// whose schema the writer has not created yet). Errors opening an existing store are returned.
func (s *Server) db(ctx context.Context) (query.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != nil {
		return s.st.DB, nil
	}
	fi, err := os.Stat(s.opts.StorePath)
	if errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return nil, nil // not yet, or the writer has only just created the file
	}
	st, err := store.OpenReader(ctx, s.opts.StorePath)
	if err != nil {
		return nil, &apiError{Status: http.StatusServiceUnavailable, Msg: "store unavailable: " + err.Error()}
	}
	if ok, err := query.StoreReady(ctx, st.DB); err != nil || !ok {
		st.Close()
		return nil, nil // the writer is creating it: try again at the next request
	}
	s.st = st
	return st.DB, nil
}

// routes maps the paths; every API path is a GET.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assetFS, "assets")
	files := http.FileServerFS(static)
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /sessions/{id}", s.sessionLink)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", cacheFor(time.Hour, files)))
	mux.HandleFunc("GET /api/status", s.api(s.status))
	mux.HandleFunc("GET /api/filters", s.api(s.filtersAPI))
	mux.HandleFunc("GET /api/overview", s.api(s.overview))
	mux.HandleFunc("GET /api/cost", s.api(s.costAPI))
	mux.HandleFunc("GET /api/plans", s.api(s.plansAPI))
	mux.HandleFunc("GET /api/sessions", s.api(s.sessions))
	mux.HandleFunc("GET /api/sessions/{id}", s.api(s.sessionDetail))
	mux.HandleFunc("GET /api/sessions/{id}/timeline", s.api(s.timeline))
	mux.HandleFunc("GET /api/sessions/{id}/conversation", s.api(s.conversation))
	mux.HandleFunc("GET /api/search", s.api(s.searchAPI))
	mux.HandleFunc("GET /api/actions", s.api(s.actions))
	mux.HandleFunc("GET /api/members", s.api(s.membersAPI))
	mux.HandleFunc("GET /api/tools", s.api(s.toolsAPI))
	mux.HandleFunc("GET /api/compression", s.api(s.compressionAPI))
	mux.HandleFunc("GET /api/live", s.liveSSE)
	mux.HandleFunc("GET /api/changes", s.changesSSE)
	mux.HandleFunc("GET /api/alerts", s.api(s.alertsAPI))
	mux.HandleFunc("GET /api/limits", s.api(s.limitsAPI))
	mux.HandleFunc("GET /metrics", s.metricsText)
	s.tabRoutes(mux) // analysis.go: Analysis, Discovery, Patterns, Memory, Settings
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", "no such endpoint: "+r.URL.Path)
	})
	return mux
}

// index serves the page with the CSRF token and the version filled in.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	page, err := assetFS.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, "page missing from the build", http.StatusInternalServerError)
		return
	}
	out := strings.NewReplacer("{{CSRF}}", s.csrf, "{{VERSION}}", htmlEscape(s.opts.Version), "{{ASSETS}}", assetTag).Replace(string(page))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(out))
}

// sessionLink sends /sessions/ID (the link `observerctl search` prints; a #m<id> fragment stays
// with the browser across the redirect) to the session's page.
func (s *Server) sessionLink(w http.ResponseWriter, r *http.Request) {
	v := url.Values{"tab": {"sessions"}, "session": {r.PathValue("id")}}
	if c := r.URL.Query().Get("client"); c != "" {
		v.Set("sclient", c)
	}
	http.Redirect(w, r, "/?"+v.Encode(), http.StatusFound)
}

// assetTag names this build's page assets in their URLs (?v=), so a browser never runs a cached
// script against a newer server.
var assetTag = func() string {
	h := sha256.New()
	for _, name := range []string{"assets/app.js", "assets/app.css", "assets/vendor/uplot/uPlot.iife.min.js"} {
		data, _ := assetFS.ReadFile(name)
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

func htmlEscape(v string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(v)
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("private, max-age=%d", int(d.Seconds())))
		h.ServeHTTP(w, r)
	})
}

// status answers /api/status: whether the store and the bus are there.
func (s *Server) status(ctx context.Context, q *reqParams) (any, error) {
	if err := q.done(); err != nil {
		return nil, err
	}
	db, err := s.db(ctx)
	return map[string]any{
		"version":       s.opts.Version,
		"store":         db != nil,
		"store_error":   errString(err),
		"bus_connected": s.live.Connected(),
		"live_clients":  s.live.Clients(),
		"disk_full":     s.diskFull(),
		"now":           s.opts.Now().UTC(),
	}, nil
}

// diskFull is bus.DiskFull's line for the home's disk ("disk full: 0 B free on ..."), or "".
func (s *Server) diskFull() string {
	if s.opts.Home == "" {
		return ""
	}
	return bus.DiskFull(s.opts.Home)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
