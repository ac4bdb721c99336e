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
)

type rule struct {
	kind string
	re   *regexp.Regexp
	// keep is the number of the submatch to keep in front of the mark (a key name, "Bearer "), or 0.
	keep int
	// any lists literals one of which every match contains: the rule runs only when one is present,
	// which spares most text every regular expression.
	any []string
}

var rules = []rule{
	{"private-key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`), 0, []string{"PRIVATE KEY"}},
	{"anthropic-key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`), 0, []string{"sk-ant-"}},
	{"openai-key", regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), 0, []string{"sk-"}},
	{"google-key", regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`), 0, []string{"AIza"}},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), 0, []string{"AKIA", "ASIA"}},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b`), 0, []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), 0, []string{"xox"}},
	{"stripe-key", regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), 0, []string{"k_live_", "k_test_"}},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`), 0, []string{"eyJ"}},
	{"url-password", regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:)[^@\s/]+(@)`), 1, []string{"://"}},
	{"bearer", regexp.MustCompile(`(?i)(\b(?:bearer|basic|token)\s+)[A-Za-z0-9_\-.=+/]{16,}`), 1, []string{"earer", "EARER", "asic", "ASIC", "oken", "OKEN"}},
	{"secret", regexp.MustCompile(`(?i)((?:api[_-]?key|secret[_-]?key|access[_-]?key|auth[_-]?token|access[_-]?token|password|passwd|secret|client[_-]?secret|x-api-key|aws_secret_access_key)["']?\s*[:=]\s*["']?)[^\s"',;&]{6,}`), 1,
		[]string{"ey", "EY", "ecret", "ECRET", "assw", "ASSW", "asswd", "oken", "OKEN"}},
}

// String returns s with every secret it recognizes replaced.
func String(s string) string {
	for _, r := range rules {
		if !containsAny(s, r.any) {
			continue
		}
		if r.keep == 0 {
			s = r.re.ReplaceAllString(s, "[REDACTED:"+r.kind+"]")
			continue
		}
		s = r.re.ReplaceAllStringFunc(s, func(m string) string {
			sub := r.re.FindStringSubmatch(m)
			tail := ""
			if r.kind == "url-password" {
				tail = sub[2]
			}
			return sub[r.keep] + "[REDACTED:" + r.kind + "]" + tail
		})
	}
	return s
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
