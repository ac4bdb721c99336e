package clientconfig

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/observerhq/observer/pkg/scrub"
)

// Masking. The diffs Apply and Undo report (printed by `init --dry-run`, and in --json) show a few
// lines of context around each change, and the clients' files hold secrets there: the env of an
// MCP server (GITHUB_TOKEN, API keys), its headers, a password in a settings key. A diff shows
// none of them: the value of every key of an env or headers object, and of every key whose name
// says secret (token, secret, password, key, credential, auth, ...), reads [REDACTED], and what
// pkg/scrub recognizes elsewhere on a line (a token by its prefix, a URL's password) is replaced
// as scrub replaces it. Only the display is masked: the files are written with their real values.

// masked replaces a secret value in a diff.
const masked = "[REDACTED]"

// secretContainers are the keys whose objects hold secrets by key: an MCP server's environment
// (Claude Code, Codex, Cursor: env) and its HTTP headers (Claude Code: headers; Codex:
// http_headers).
var secretContainers = map[string]bool{"env": true, "headers": true, "http_headers": true}

// secretWords are parts of a key name that say its value is a secret.
var secretWords = []string{"token", "secret", "password", "passwd", "credential", "apikey", "api_key", "api-key",
	"private_key", "privatekey", "auth", "cookie", "session_key"}

// secretName reports whether a key's name says its value is a secret: it holds one of
// secretWords, or ends in key (API_KEY, accessKey).
func secretName(k string) bool {
	l := strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return l == "key" || strings.HasSuffix(l, "_key") || strings.HasSuffix(l, "-key") || strings.HasSuffix(k, "Key")
}

// secretKeys collects the names of the keys held in env and headers objects, at any depth of the
// trees.
func secretKeys(trees ...any) map[string]bool {
	keys := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if m, ok := x.(map[string]any); ok && secretContainers[k] {
					for name := range m {
						keys[name] = true
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, t := range trees {
		walk(t)
	}
	return keys
}

var (
	// jsonMember is "key": "string value" (the value of any other type is not a secret's).
	jsonMember = regexp.MustCompile(`("(?:[^"\\]|\\.)*")(\s*:\s*)"((?:[^"\\]|\\.)*)"`)
	// tomlMember is key = "string" or key = 'string', bare or quoted key, at a line's start or in an
	// inline table.
	tomlMember = regexp.MustCompile(`((?:^|[\s{,.])(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'))(\s*=\s*)("(?:[^"\\]|\\.)*"|'[^']*')`)
)

// maskDiff masks the secrets in a unified diff of a file whose trees before and after are given.
func maskDiff(diff string, trees ...any) string {
	if diff == "" {
		return diff
	}
	keys := secretKeys(trees...)
	secret := func(k string) bool { return !otelEnvNames[k] && (keys[k] || secretName(k)) }
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "@@") {
			continue
		}
		l = jsonMember.ReplaceAllStringFunc(l, func(m string) string {
			p := jsonMember.FindStringSubmatch(m)
			var k string
			if json.Unmarshal([]byte(p[1]), &k) != nil || p[3] == "" || !secret(k) {
				return m
			}
			return p[1] + p[2] + `"` + masked + `"`
		})
		l = tomlMember.ReplaceAllStringFunc(l, func(m string) string {
			p := tomlMember.FindStringSubmatch(m)
			k := strings.TrimLeft(p[1], " \t{,.")
			if len(k) >= 2 && (k[0] == '"' || k[0] == '\'') {
				k = k[1 : len(k)-1]
			}
			if len(p[3]) <= 2 || !secret(k) {
				return m
			}
			q := p[3][:1]
			return p[1] + p[2] + q + masked + q
		})
		lines[i] = scrub.String(l)
	}
	return strings.Join(lines, "")
}
