// Package loopback tells loopback names and addresses from the rest. The components that listen on
// 127.0.0.1 (the dashboard, the proxy) use it to refuse a Host header that names anything else:
// a page whose domain an attacker re-pointed at 127.0.0.1 (DNS rebinding) still sends its own name.
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host (no port; brackets allowed) is a loopback name or address: localhost,
// any 127/8 address or ::1.
func Host(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr reports whether the listen address addr (host:port) is on a loopback interface only.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && Host(host)
}
