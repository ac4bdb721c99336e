package scrub

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.slack.com/…"},
		{"https://discord.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz", "https://discord.com/…"},
		{"http://127.0.0.1:9000/hook?token=s3cret#frag", "http://127.0.0.1:9000/…"},
		{"https://user:pw@example.com/", "https://example.com"},
		{"https://example.com", "https://example.com"},
		{"not a url", "[REDACTED:url]"},
		{"://bad", "[REDACTED:url]"},
	} {
		got := URL(tc.in)
		if got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, secret := range []string{"XXXXXXXX", "abcdefghij", "s3cret", "pw@"} {
			if strings.Contains(got, secret) {
				t.Errorf("URL(%q) = %q shows %q", tc.in, got, secret)
			}
		}
	}
}
