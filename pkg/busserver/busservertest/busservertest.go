// Package busservertest starts buses for the tests of the bus's client and server.
package busservertest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/busserver"
)

// Token is the token of the buses Start starts.
const Token = "test-token"

// FreePort returns a loopback port nothing listens on right now.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// Start starts a bus on dir and port (-1 picks one), with Token, and closes it when the test ends.
func Start(tb testing.TB, dir string, port int) *busserver.Server {
	tb.Helper()
	srv, err := busserver.Start(context.Background(), busserver.Config{
		Dir: dir, Port: port, Token: Token, AckWait: 30 * time.Second,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv
}
