package loopback

import "testing"

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true, "[::1]": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "localhost.evil.example": false,
		"evil.example": false, "127.0.0.1.nip.io": false, "[::ffff:10.0.0.1]": false,
	} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8820": true, "localhost:0": true, "[::1]:8820": true,
		":8820": false, "0.0.0.0:8820": false, "192.168.1.5:8820": false, "127.0.0.1": false,
	} {
		if got := Addr(addr); got != want {
			t.Errorf("Addr(%q) = %v, want %v", addr, got, want)
		}
	}
}
