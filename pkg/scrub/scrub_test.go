package scrub

import (
	"strings"
	"testing"
)

func TestString_RedactsSecrets(t *testing.T) {
	for _, tc := range []struct{ in, secret, kind string }{
		{"export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "anthropic-key"},
		{"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345 codex", "sk-proj-abcdefghijklmnopqrstuvwxyz012345", "openai-key"},
		{`curl -H "Authorization: Bearer abcdefghijklmnop1234567890" https://x`, "abcdefghijklmnop1234567890", "bearer"},
		{"aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws-access-key"},
		{"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret"},
		{"git clone https://user:hunter2secret@github.com/x/y", "hunter2secret", "url-password"},
		{"token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "github-token"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"},
		{`{"password": "correct-horse-battery"}`, "correct-horse-battery", "secret"},
		{"key=AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "google-key"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"},
	} {
		out := String(tc.in)
		if strings.Contains(out, tc.secret) {
			t.Errorf("%q: secret left in %q", tc.in, out)
		}
		if !strings.Contains(out, "[REDACTED:") {
			t.Errorf("%q: no redaction mark in %q", tc.in, out)
		}
	}
}

func TestString_LeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range []string{
		"go test ./... -run TestToken",
		"Read the file pkg/auth/token.go and fix the password reset flow",
		"ls -la /home/user/project",
		"https://github.com/observerhq/observer/blob/main/README.md",
		"the tokens field counts input and output",
		"",
	} {
		if got := String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestString_KeepsContext(t *testing.T) {
	got := String("Authorization: Bearer abcdefghijklmnop1234567890")
	if got != "Authorization: Bearer [REDACTED:bearer]" {
		t.Errorf("got %q", got)
	}
	got = String("postgres://app:s3cr3tpass@db:5432/x")
	if got != "postgres://app:[REDACTED:url-password]@db:5432/x" {
		t.Errorf("got %q", got)
	}
	for in, want := range map[string]string{
		"GET https://api.telegram.org/bot1234567890:AAbcdefghijklmnopqrstuvwxyz012345678/getMe": "GET https://api.telegram.org/bot[REDACTED:telegram-token]/getMe",
		"PGPASSWORD='a&b;c d' psql -h db":                                 "PGPASSWORD=[REDACTED:secret] psql -h db",
		`{"command": "PGPASSWORD=ab\u0026cd psql -h db"}`:                 `{"command": "PGPASSWORD=[REDACTED:secret] psql -h db"}`,
		`{"command": "export DB_PASSWORD=\"ab\u0026cd\"\nnext"}`:          `{"command": "export DB_PASSWORD=[REDACTED:secret]\nnext"}`,
		"mysql -u root -p'se cret' shop":                                  "mysql -u root -p[REDACTED:cli-password] shop",
		"https://example.com/?password=abcdefgh&user=bob":                 "https://example.com/?password=[REDACTED:secret]&user=bob",
		`{"url": "https://example.com/?password=abcdefgh\u0026user=bob"}`: `{"url": "https://example.com/?password=[REDACTED:secret]\u0026user=bob"}`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q)\n = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkString(b *testing.B) {
	text := strings.Repeat("ordinary tool output with file names and numbers 12345\n", 100)
	for b.Loop() {
		String(text)
	}
}

// FuzzPrefilters checks that no rule's prefilter skips text its expression would match.
func FuzzPrefilters(f *testing.F) {
	for _, s := range []string{"postgres://app:pw1234@db", "a://b:c@d", "sk-ant-0123456789abcdefghijkl"} {
		f.Add(s)
	}
	addFormatSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		mask := bigramMask(s)
		for i, r := range rules {
			if !r.re.MatchString(s) {
				continue
			}
			if !r.may(s) {
				t.Fatalf("rule %s: prefilter skips %q, which the expression matches", r.kind, s)
			}
			if gates[i] != 0 && mask&gates[i] == 0 {
				t.Fatalf("rule %s: gate skips %q, which the expression matches", r.kind, s)
			}
		}
	})
}

func BenchmarkString_Code(b *testing.B) {
	text := strings.Repeat(`	key := cfg.Token // the API key: see docs at https://example.com/x
	if password == "" { return fmt.Errorf("token: %v", err) }
`, 80)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		String(text)
	}
}

// FuzzFastMatchesExpressions checks the hand-written matchers against the expressions they stand
// for.
func FuzzFastMatchesExpressions(f *testing.F) {
	for _, s := range []string{
		"Authorization: Bearer abcdefghijklmnop1234567890", "TOKEN\t\tabcdefghijklmnopqrstu token x",
		`{"PassWord" : 'hunter22'}`, "x-api-key=abcdef", "my_secret_key:abcdefgh", "api_key=secret=abcdefgh",
		"postgres://app:pw1234@db https://a:b@c/d", "1a://b:c@d", "basic\nQWxhZGRpbjpvcGVuIHNlc2FtZQ==",
		"passwd =\t'abcdef'", "password=ééé", "xtoken abcdefghijklmnopqrstuvw", "password=abcdefsecret : zzzzzz",
		`{"password" : "abcdefgh"}`, `password "= abcdefgh`, "redis://:pw1234@cache", "a://b:%41bc@d a://b:%s@d",
		"a://b:$Xyz@d a://b:$xyz@d a://b:{pw}@d a://b:$@d",
		"a.bcdefg.h MTAxMjM0NTY3ODkwMTIzNDU2Nzg5.abcdef.ghijklmnopqrstuvwxyz01234567 x.......y.abcdef.",
		"Bot\tNDEyMzQ1Njc4OTAxMjM0NTY3.Gx-_9z.abcdefghijklmnopqrstuvwxyzABCDEFGHIJ.aaaaaa.",
	} {
		f.Add(s)
	}
	addFormatSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		if foldsToASCII(s) {
			return
		}
		for i := range rules {
			r := &rules[i]
			if r.fast == nil {
				continue
			}
			if got, want := r.replaceAll(s, true), r.replaceAll(s, false); got != want {
				t.Fatalf("rule %s on %q:\n fast       %q\n expression %q", r.kind, s, got, want)
			}
		}
	})
}
