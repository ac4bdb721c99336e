// Package scrub removes secrets from text before observer stores or publishes it: API keys of the
// model providers and common clouds, bearer and basic credentials, private keys, passwords in
// URLs and assignments, and JWTs. A secret is replaced by "[REDACTED:<kind>]", so what remains still
// reads naturally and says what was there.
//
// It is tuned to miss little on the text agents handle (commands, file contents, tool output) and
// to leave ordinary text alone; it is not a substitute for keeping secrets out of prompts.
package scrub

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

type rule struct {
	kind string
	re   *regexp.Regexp
	// keep is the number of the submatch to keep in front of the mark (a key name, "Bearer "), or 0.
	keep int
	// may reports whether s can hold a match at all: it is true for every string the expression
	// matches, and cheap, which spares most text every expression.
	may func(s string) bool
	// fast, when set, does what the expression does for text without the two non-ASCII letters
	// that (?i) folds to ASCII (FuzzFastMatchesExpressions checks it): the key-value rules match
	// almost everywhere in code, where running their expressions cost more than reading the text.
	fast func(s string) string
}

func anyOf(lits ...string) func(string) bool {
	return func(s string) bool { return containsAny(s, lits) }
}

var rules = []rule{
	{"private-key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`), 0, anyOf("PRIVATE KEY"), nil},
	{"anthropic-key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`), 0, anyOf("sk-ant-"), nil},
	{"openai-key", regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), 0, anyOf("sk-"), nil},
	{"google-key", regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`), 0, anyOf("AIza"), nil},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), 0, anyOf("AKIA", "ASIA"), nil},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b`), 0, anyOf("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), nil},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), 0, anyOf("xox"), nil},
	{"stripe-key", regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), 0, anyOf("k_live_", "k_test_"), nil},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`), 0, anyOf("eyJ"), nil},
	{"url-password", regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:)[^@\s/]+(@)`), 1, mayURLPassword, redactURLPasswords},
	{"bearer", regexp.MustCompile(`(?i)(\b(?:bearer|basic|token)\s+)[A-Za-z0-9_\-.=+/]{16,}`), 1, anyOf("earer", "EARER", "asic", "ASIC", "oken", "OKEN"), redactBearers},
	{"secret", regexp.MustCompile(`(?i)((?:api[_-]?key|secret[_-]?key|access[_-]?key|auth[_-]?token|access[_-]?token|password|passwd|secret|client[_-]?secret|x-api-key|aws_secret_access_key)["']?\s*[:=]\s*["']?)[^\s"',;&]{6,}`), 1, anyOf("ey", "EY", "ecret", "ECRET", "assw", "ASSW", "oken", "OKEN"), redactAssignments},
}

// String returns s with every secret it recognizes replaced.
func String(s string) string {
	folds := foldsToASCII(s)
	for _, r := range rules {
		if r.fast != nil && !folds {
			s = r.fast(s)
			continue
		}
		if !folds && !r.may(s) {
			continue
		}
		s = r.apply(s)
	}
	return s
}

// apply runs the rule's expression over s.
func (r rule) apply(s string) string {
	if r.keep == 0 {
		return r.re.ReplaceAllString(s, "[REDACTED:"+r.kind+"]")
	}
	return r.re.ReplaceAllStringFunc(s, func(m string) string {
		sub := r.re.FindStringSubmatch(m)
		tail := ""
		if r.kind == "url-password" {
			tail = sub[2]
		}
		return sub[r.keep] + "[REDACTED:" + r.kind + "]" + tail
	})
}

// mayURLPassword: a match has "://" and, after it, an "@".
func mayURLPassword(s string) bool {
	i := strings.Index(s, "://")
	return i >= 0 && strings.IndexByte(s[i:], '@') >= 0
}

// redaction builds the result of replacing spans of s, left to right; it allocates only when a
// span is replaced.
type redaction struct {
	s    string
	b    strings.Builder
	done int // s[:done] is in b
}

func (r *redaction) replace(from, to int, mark string) {
	r.b.WriteString(r.s[r.done:from])
	r.b.WriteString(mark)
	r.done = to
}

func (r *redaction) String() string {
	if r.done == 0 {
		return r.s
	}
	r.b.WriteString(r.s[r.done:])
	return r.b.String()
}

// redactURLPasswords replaces the password of scheme://user:password@ with the mark.
func redactURLPasswords(s string) string {
	if !mayURLPassword(s) {
		return s
	}
	r := redaction{s: s}
	for from := 0; ; {
		k := strings.Index(s[from:], "://")
		if k < 0 {
			break
		}
		k += from
		from = k + 3
		letter := false // the scheme needs a letter to start from, right before "://"
		for p := k - 1; p >= r.done && isSchemeByte(s[p]); p-- {
			if s[p]|0x20 >= 'a' && s[p]|0x20 <= 'z' {
				letter = true
			}
		}
		if !letter {
			continue
		}
		u := k + 3
		for u < len(s) && s[u] != '/' && s[u] != ':' && s[u] != '@' && !isSpace(s[u]) {
			u++
		}
		if u == k+3 || u >= len(s) || s[u] != ':' {
			continue
		}
		p := u + 1
		for p < len(s) && s[p] != '@' && s[p] != '/' && !isSpace(s[p]) {
			p++
		}
		if p == u+1 || p >= len(s) || s[p] != '@' {
			continue
		}
		r.replace(u+1, p, "[REDACTED:url-password]")
		from = p + 1
	}
	return r.String()
}

// redactBearers replaces the credential after bearer, basic or token (any case) and white space.
func redactBearers(s string) string {
	r := redaction{s: s}
	for i := 1; i < len(s); i++ {
		if !isSpace(s[i]) || isSpace(s[i-1]) {
			continue
		}
		w := endsWithWord(s[:i], r.done, "bearer", "basic", "token")
		if w < 0 || (w > 0 && isWordByte(s[w-1])) {
			continue
		}
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		v := j
		for v < len(s) && isCredential(s[v]) {
			v++
		}
		if v-j >= 16 {
			r.replace(j, v, "[REDACTED:bearer]")
			i = v - 1
		}
	}
	return r.String()
}

// secretKeys are the key names (any case) whose values redactAssignments replaces; longer names
// in the expression (x-api-key, client_secret, aws_secret_access_key) end with one of them.
var secretKeys = []string{
	"apikey", "api_key", "api-key", "secretkey", "secret_key", "secret-key", "accesskey", "access_key",
	"access-key", "authtoken", "auth_token", "auth-token", "accesstoken", "access_token", "access-token",
	"password", "passwd", "secret",
}

// redactAssignments replaces the value of key: value and key=value where the key names a secret.
func redactAssignments(s string) string {
	r := redaction{s: s}
	for i := 0; i < len(s); i++ {
		if s[i] != ':' && s[i] != '=' {
			continue
		}
		j := i
		for j > 0 && isSpace(s[j-1]) {
			j--
		}
		if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
			j--
		}
		if endsWithWord(s[:j], r.done, secretKeys...) < 0 {
			continue
		}
		v := i + 1
		for v < len(s) && isSpace(s[v]) {
			v++
		}
		if v < len(s) && (s[v] == '"' || s[v] == '\'') {
			v++
		}
		e := v
		for e < len(s) && !isSpace(s[e]) && s[e] != '"' && s[e] != '\'' && s[e] != ',' && s[e] != ';' && s[e] != '&' {
			e++
		}
		if e-v >= 6 && utf8.RuneCountInString(s[v:e]) >= 6 {
			r.replace(v, e, "[REDACTED:secret]")
			i = e - 1
		}
	}
	return r.String()
}

// foldsToASCII reports whether s holds the Kelvin sign or the long s, which (?i) matches as k and s.
func foldsToASCII(s string) bool {
	return strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f")
}

// isSpace is \s in Go's regular expressions.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isCredential(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '=' || c == '+' || c == '/'
}

// endsWithWord returns where the shortest of the lower-case ASCII words that s ends with (in any
// case) starts, if that is at lo or after; otherwise -1.
func endsWithWord(s string, lo int, words ...string) int {
	best := -1
	for _, w := range words {
		start := len(s) - len(w)
		if start < lo || start <= best {
			continue
		}
		ok := true
		for k := 0; k < len(w); k++ {
			c := s[start+k]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[k] {
				ok = false
				break
			}
		}
		if ok {
			best = start
		}
	}
	return best
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
