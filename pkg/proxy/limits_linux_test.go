package proxy

import (
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestProxy_ConnectTimeoutNoAnswer points the proxy at an address that never answers a SYN, as
// an unreachable host behind a firewall that drops packets: a listening socket whose accept queue
// is full. Linux drops the SYNs such a socket gets.
func TestProxy_ConnectTimeoutNoAnswer(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	var filled []net.Conn
	defer func() {
		for _, c := range filled {
			c.Close()
		}
	}()
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break // the queue is full: SYNs go unanswered now
		}
		if filled = append(filled, c); i == 8 {
			t.Skip("this kernel answers SYNs beyond a full accept queue")
		}
	}
	const timeout = 300 * time.Millisecond
	srv, cp := setupConfig(t, nil, Config{AnthropicUpstream: "http://" + addr, OpenAIUpstream: "http://" + addr, ConnectTimeout: timeout})
	checkConnectTimeout(t, srv, cp, timeout)
}
