package dash

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/observerhq/observer/pkg/loopback"
)

// The dashboard's defences, applied to every request before routing:
//
//   - DNS rebinding: on a loopback address, a request is served only when its Host header names a
//     loopback host (127.0.0.1 or any 127/8 address, localhost, [::1]) with the listening port. A
//     page from another site whose name an attacker re-pointed at 127.0.0.1 sends its own name and
//     gets 403.
//   - Beyond loopback the Host can be anything the network calls the machine, so the token is the
//     guard: every request needs it, as "Authorization: Bearer <token>" or in the cookie that
//     opening any page with ?token=<token> sets (HttpOnly, SameSite=Strict). A rebinding page
//     cannot read the cookie of another origin, nor guess the token.
//   - Writes: any method but GET and HEAD must carry the per-process CSRF token that the page
//     embeds, in the X-CSRF-Token header, and an Origin header, when sent, must be the page's own.
//   - Every response forbids framing and sniffing, and the page's Content-Security-Policy allows
//     this origin only: no CDN, no external request of any kind.

const (
	cookieName = "observer_dash_token"
	csrfHeader = "X-CSRF-Token"
)

const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// hostAllowed checks a request's Host header: a loopback host, and the listening port.
func (s *Server) hostAllowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		// No port: only right when the dashboard listens on the scheme's default port.
		host, port = hostport, "80"
	}
	return port == s.port && loopback.Host(host)
}

func sameSecret(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// authorized checks the token of a request when the dashboard has one.
func (s *Server) authorized(r *http.Request) bool {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && sameSecret(strings.TrimSpace(auth), s.opts.Token) {
		return true
	}
	if c, err := r.Cookie(cookieName); err == nil && sameSecret(c.Value, s.opts.Token) {
		return true
	}
	return false
}

// secure wraps the routes with the checks above.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		if s.loopback && !s.hostAllowed(r.Host) {
			writeError(w, http.StatusForbidden, "", "forbidden: the dashboard answers only to a loopback Host (127.0.0.1, localhost or [::1]) with its port "+s.port)
			return
		}
		if s.opts.Token != "" {
			if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet {
				if !sameSecret(tok, s.opts.Token) {
					writeError(w, http.StatusUnauthorized, "token", "wrong token")
					return
				}
				// Keep the token out of the address bar and the history: a cookie from now on.
				http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
				u := *r.URL
				q := u.Query()
				q.Del("token")
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
			if !s.authorized(r) {
				writeError(w, http.StatusUnauthorized, "", "this dashboard needs its token ([dash] token): open it once with ?token=<token>, or send Authorization: Bearer <token>")
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !sameSecret(r.Header.Get(csrfHeader), s.csrf) || !sameOrigin(r) {
				writeError(w, http.StatusForbidden, "", "forbidden: a write needs the page's CSRF token in "+csrfHeader)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether the request's Origin, when present, is the host it was sent to.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}
