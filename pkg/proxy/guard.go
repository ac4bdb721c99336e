package proxy

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/observerhq/observer/pkg/loopback"
)

// The proxy forwards whatever API key a request carries and records the turn it makes, so a web
// page in the user's browser must not reach it. Every request, metered or not, is checked first:
//
//   - DNS rebinding: the Host header must name a loopback host (localhost, any 127/8 address,
//     [::1]) or the host of the listen address, whatever the port. A page whose name an attacker
//     re-pointed at 127.0.0.1 sends its own name and gets 403. Listening on every interface
//     (0.0.0.0, [::]), any IP address is accepted too: a rebinding page always sends a name.
//   - Browsers: a browser sends Origin with every cross-origin POST and Sec-Fetch-Site with every
//     request; the AI clients send neither (seen: Claude Code, Codex, Node's fetch), so either one
//     gets 403. Sec-Fetch-Mode tells nothing: Node's fetch sends "cors" on every request.
//
// A refused request reaches no upstream and records no turn.
type guard struct {
	listenHost string // the listen address's host, brackets removed; "" when none was given
	anyIP      bool   // the proxy listens on every interface
}

func newGuard(listenAddr string) guard {
	var g guard
	if listenAddr == "" {
		return g
	}
	host, _, err := net.SplitHostPort(listenAddr)
	if err != nil {
		host = listenAddr
	}
	g.listenHost = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	ip := net.ParseIP(g.listenHost)
	g.anyIP = g.listenHost == "" || (ip != nil && ip.IsUnspecified())
	return g
}

// hostAllowed checks a request's Host header (host, or host:port).
func (g guard) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true // HTTP/1.0 without Host: not a browser
	}
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	switch {
	case loopback.Host(host):
		return true
	case g.listenHost != "" && strings.EqualFold(host, g.listenHost):
		return true
	}
	return g.anyIP && net.ParseIP(host) != nil
}

// refuse returns the error class and message of a request the proxy must not serve, or "" for one
// it serves.
func (g guard) refuse(r *http.Request) (class, msg string) {
	if !g.hostAllowed(r.Host) {
		also := ""
		if g.listenHost != "" && !loopback.Host(g.listenHost) && !g.anyIP {
			also = " or " + g.listenHost
		}
		return "forbidden_host", fmt.Sprintf("observer-proxy: refused a request for host %q: it answers only to "+
			"localhost, 127.0.0.1 or [::1]%s (a page that points its own name at this machine sends that name); "+
			"use one of those in the client's base URL", r.Host, also)
	}
	if o := r.Header.Values("Origin"); len(o) > 0 {
		return "forbidden_origin", fmt.Sprintf("observer-proxy: refused a request from a web page (Origin %q): "+
			"browsers may not spend API keys through the proxy", o[0])
	}
	if s := r.Header.Values("Sec-Fetch-Site"); len(s) > 0 {
		return "forbidden_origin", fmt.Sprintf("observer-proxy: refused a request from a browser (Sec-Fetch-Site %q): "+
			"browsers may not spend API keys through the proxy", s[0])
	}
	return "", ""
}

// Refuser returns the proxy's check of a request (loopback or listen host, no browser marks) for
// another loopback listener of the same process: the OTLP receiver. The check returns the class
// and the message of a refusal, or "" when the request may pass.
func Refuser(listenAddr string) func(r *http.Request) (class, msg string) {
	return newGuard(listenAddr).refuse
}
