// Package scrub removes secrets from text before observer stores or publishes it. A secret is
// replaced by "[REDACTED:<kind>]", so what remains still reads naturally and says what was there.
//
// What it recognizes:
//   - keys and tokens by their prefix: Anthropic, OpenAI, Google (API keys, OAuth client secrets
//     and access tokens), AWS key ids and session tokens (IQoJb3JpZ2luX2..., FwoGZXIvYXdzE...),
//     GitHub, GitLab, Slack (tokens and webhook URLs), Discord webhooks, Stripe, HashiCorp Vault,
//     Twilio, SendGrid, npm, PyPI, Docker Hub, Hugging Face, Databricks, Shopify, Mailgun,
//     Heroku, DigitalOcean, Linear (lin_api_), Postman (PMAK-), Doppler (dp.st., dp.pt., dp.sa.,
//     dp.ct.), Telegram bots (also in api.telegram.org/bot<id>:<token> URLs), age keys, JWTs;
//   - Discord bot tokens by their shape: the bot's id in base64, a dot, six characters, a dot and
//     the rest (after "Authorization: Bot ", in DISCORD_TOKEN=, or alone);
//   - private keys (PEM, OpenSSH, PGP), also inside JSON such as a GCP service-account file;
//   - passwords in URLs (postgres://user:secret@host, redis://:secret@host), in Go MySQL DSNs
//     (user:secret@tcp(...)), on command lines (mysql -psecret, -p'secret' and -p"secret",
//     sshpass -p, curl -u user:secret, aws configure set aws_secret_access_key or
//     aws_session_token) and signatures in signed URLs (Azure SAS sig=, X-Amz-Signature=);
//   - the values of shell variables that name a password (PGPASSWORD=, DB_PASSWORD=,
//     MYSQL_PWD=), whole to the end of the shell word, quotes and all: such a value can hold
//     "&", ";" or "," (where a query string's password=... ends);
//   - bearer and basic credentials, and the values of keys that name a secret (password,
//     api_key, client_secret, AccountKey and SharedAccessKey of Azure connection strings,
//     aws_session_token, ...) in assignments, .env lines, JSON and YAML.
//
// It is tuned to miss little on the text agents handle (commands, file contents, tool output) and
// to leave ordinary text alone; it is not a substitute for keeping secrets out of prompts. Code
// that assigns an expression to a secret's name (password = os.Getenv("X")) loses the expression:
// the scrubber cannot tell it from a password. A placeholder where a URL's or DSN's password
// goes (%s, {password}, $PGPASSWORD, ${DB_PASS}) is not one and stays. A secret with neither a
// known prefix nor a telling key name (a bare random string) is not recognized.
//
// Text holding an escaped string (JSON, a Go or C literal) is read as if its escapes \n, \r, \t,
// \" and \u0026 were what they stand for, so an upstream's error that echoes a JSON request
// body is scrubbed like the body itself; \/ (JSON's optional escape of "/") is not undone.
//
// Speed: String runs on every tool output the transcript readers see. One pass over the text
// notes which pairs of bytes it holds; a rule none of whose literals' rarest pair is there is
// skipped, and most rules run their expression only over the stretches of text that hold one of
// their literals (see inWindows). The key-value rules, which match almost anywhere in code, are
// hand-written; FuzzStringMatchesExpressions checks the whole against the rules' expressions.
package scrub

import (
	"math/bits"
	"regexp"
	"strings"
	"unicode/utf8"
)

type rule struct {
	kind string
	re   *regexp.Regexp
	// keep is the number of the submatch to keep in front of the mark (a key name, "Bearer "), or 0.
	// The submatch after it, if the expression has one, is kept behind the mark (the "@" of a URL).
	keep int
	// lits are literals of which every match holds one; nil for the rules that match almost
	// anywhere (bearer, secret). They gate the rule (see gates) and make its prefilter unless it
	// has its own.
	lits []string
	// may reports whether s can hold a match at all: it is true for every string the expression
	// matches, and cheap, which spares most text every expression. Rules with a fast matcher use it
	// only for text that fast does not handle. Nil: s holds one of lits.
	may func(s string) bool
	// fast, when set, finds what the expression finds in text without the two non-ASCII letters
	// that (?i) folds to ASCII (FuzzFastMatchesExpressions checks it): the key-value rules match
	// almost everywhere in code, where running their expressions cost more than reading the text,
	// and most others run their expression only where their literals are (inWindows).
	fast func(s string, r *redaction)
	// sep, when set, is a byte no match holds but as its first: the rule's fast matcher is
	// inWindows, which runs the expression only over the stretches between seps that hold one of
	// lits and pass check.
	sep   func(c byte) bool
	check func(s string) bool
}

func anyOf(lits ...string) func(string) bool {
	return func(s string) bool { return containsAny(s, lits) }
}

// rules run in this order, each over the text the ones before it left. The credential formats come
// first, so that their marks say what they were; the key-value rules last.
var rules = []rule{
	{kind: "private-key", re: regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|$)`), lits: []string{"PRIVATE KEY"}},
	{kind: "anthropic-key", re: regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`), lits: []string{"sk-ant-"}},
	token("openai-key", `\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`, "sk-"),
	{kind: "google-key", re: regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`), lits: []string{"AIza"}},
	token("google-oauth", `\bGOCSPX-[A-Za-z0-9_\-]{24,}`, "GOCSPX-"),
	token("google-oauth", `\bya29\.[A-Za-z0-9_\-]{20,}`, "ya29."),
	token("aws-access-key", `\bA(?:KIA|SIA)[0-9A-Z]{16}\b`, "AKIA", "ASIA"),
	// STS session tokens start with the same bytes: "\x21\n\torigin_" (today), "\x17\n\x06zer/aws\x13"
	// and "\x15\n\x06zer/aws\x13" (before 2020), "\x01\n\x03aws\x13" (the first ones), in base64.
	token("aws-session-token", `\b(?:IQoJb3JpZ2luX2|FwoGZXIvYXdzE|FQoGZXIvYXdzE|AQoDYXdzE)[A-Za-z0-9+/=]{40,}`,
		"IQoJb3JpZ2luX2", "FwoGZXIvYXdzE", "FQoGZXIvYXdzE", "AQoDYXdzE"),
	token("github-token", `\bgh[pousr]_[A-Za-z0-9]{36,}\b`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
	token("github-token", `\bgithub_pat_[A-Za-z0-9_]{40,}\b`, "github_pat_"),
	with(token("gitlab-token", `\bgl(?:pat|dt|rt|ptt|ft|cbt|imt|agent|oas|soat|ffct|wt)-[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*`, "gl"), mayGitLab),
	token("slack-token", `\bx(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}`, "xox", "xapp-"),
	{kind: "slack-webhook", re: regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,}`), lits: []string{"hooks.slack.com/"}},
	// A Discord bot token: the bot's id (a snowflake, 17 to 19 digits) in base64, whose every four
	// characters spell three digits ([MNO][DTjz][AEIMQUYcgk][w-z0-5]: the first four are checked),
	// then a dot, a time stamp of six characters, a dot and an HMAC.
	{kind: "discord-token", re: discordToken, lits: []string{"MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"},
		may: hasSixBetweenDots, fast: redactDiscordTokens},
	{kind: "discord-webhook", re: regexp.MustCompile(`discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]{20,}`), lits: []string{"/api/webhooks/"}},
	token("stripe-key", `\bsk_(?:live|test)_[A-Za-z0-9]{16,}`, "sk_live_", "sk_test_"),
	token("stripe-key", `\brk_(?:live|test)_[A-Za-z0-9]{16,}`, "rk_live_", "rk_test_"),
	token("stripe-key", `\bwhsec_[A-Za-z0-9]{24,}`, "whsec_"),
	with(token("vault-token", `\bhv[sbr]\.[A-Za-z0-9_\-]{24,}`, "hv"), mayVault),
	token("twilio-key", `\bSK[0-9a-f]{32}\b`, "SK"),
	token("sendgrid-key", `\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}`, "SG."),
	token("npm-token", `\bnpm_[A-Za-z0-9]{36,}`, "npm_"),
	token("pypi-token", `\bpypi-AgE[A-Za-z0-9_\-]{50,}`, "pypi-AgE"),
	token("docker-token", `\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}`, "dckr_"),
	token("huggingface-token", `\bhf_[A-Za-z0-9]{30,}\b`, "hf_"),
	token("huggingface-token", `\bapi_org_[A-Za-z0-9]{30,}\b`, "api_org_"),
	token("databricks-token", `\bdapi[0-9a-f]{32}(?:-[0-9]+)?\b`, "dapi"),
	token("shopify-token", `\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b`, "shpat_", "shpca_", "shppa_", "shpss_"),
	token("mailgun-key", `\bkey-[0-9a-f]{32}\b`, "key-"),
	token("heroku-key", `\bHRKU-[A-Za-z0-9_\-]{20,}`, "HRKU-"),
	token("digitalocean-token", `\bdo[opr]_v1_[0-9a-f]{64}\b`, "_v1_"),
	token("linear-key", `\blin_(?:api|oauth)_[A-Za-z0-9]{32,}\b`, "lin_api_", "lin_oauth_"),
	token("postman-key", `\bPMAK-[0-9a-fA-F]{24}-[0-9a-fA-F]{34}\b`, "PMAK-"),
	token("doppler-token", `\bdp\.(?:st|pt|sa|ct|scim|audit)\.[A-Za-z0-9_.\-]{19,}[A-Za-z0-9]`,
		"dp.st.", "dp.pt.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
	// In a Bot API URL the token follows "bot": https://api.telegram.org/bot<id>:<token>/getMe.
	inRuns("telegram-token", `(\bbot|\b)[0-9]{8,10}:AA[A-Za-z0-9_\-]{30,}`, 1, ":AA"),
	{kind: "age-key", re: regexp.MustCompile(`AGE-SECRET-KEY-1[0-9A-Z]{58}`), lits: []string{"AGE-SECRET-KEY-"}},
	token("jwt", `\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`, "eyJ"),
	{kind: "url-password", re: regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]*:)(?:[^@\s/%${]|%[0-9A-Fa-f]{2}|\$[^@\s/A-Z_{])[^@\s/]*(@)`),
		keep: 1, lits: []string{"://"}, may: mayURLPassword, fast: redactURLPasswords},
	inRuns("dsn-password", `((?:^|[\s"'=,;(\x60])[A-Za-z0-9_.\-]+:)(?:[^@\s/:"'()%${]|%[0-9A-Fa-f]{2}|\$[^@\s/:"'()A-Z_{])[^@\s/:"'()]*(@(?:tcp|unix)\()`,
		1, "@tcp(", "@unix("),
	inRuns("url-signature", `([?&](?:sig|X-Amz-Signature|X-Goog-Signature|X-Amz-Security-Token)=)[A-Za-z0-9%+/=_\-]{16,}`,
		1, "?sig=", "&sig=", "-Signature=", "-Token="),
	// Passwords on command lines: mysql -pSECRET (or -p'SECRET', quotes and all), sshpass -p SECRET,
	// curl -u user:SECRET, aws configure set aws_session_token SECRET. A value that starts with "$"
	// is a shell variable, which the shell expands: not the password itself.
	inLines("cli-password", `(\bmysql(?:dump|admin|sh)?[ \t](?:[^\n]*?[ \t])?-p)`+cliValue, 1, allOf("mysql", "-p"), "-p"),
	inLines("cli-password", `(\bmariadb(?:-dump|-admin)?[ \t](?:[^\n]*?[ \t])?-p)`+cliValue, 1, allOf("mariadb", "-p"), "-p"),
	inLines("cli-password", `(\bsshpass[ \t]+-p[ \t]*["']?)[^\s'"$][^\s'"]*`, 1, allOf("sshpass", "-p"), "-p"),
	inLines("cli-password", `(\bcurl[ \t](?:[^\n]*?[ \t])?(?:-u|--user)[ \t=]*["']?[^\s:'"]+:)[^\s'"$][^\s'"]*`, 1, allOf("curl", "-u"), "-u"),
	// A value starting with "[" is left too: it is the mark of a rule before (the session token's).
	inLines("cli-password", `(\baws[ \t]+configure[ \t]+set[ \t]+(?:[A-Za-z0-9_\-]+\.)?(?:aws_secret_access_key|aws_session_token)[ \t]+["']?)[^\s'"$\[][^\s'"]*`,
		1, allOf("aws", "configure"), "aws_secret_access_key", "aws_session_token"),
	// A shell variable that names a password: its value is the whole shell word, which can hold
	// what ends a value below (&, ;, ,) and quoted white space. (A backslash made a space, ` ?`,
	// is the \" of an escaped string before a quoted value.)
	inLines("secret", `(\b[A-Z0-9_]*(?:PASSWORD|PASSWD|_PWD)=)(?: ?'[^'\n$][^'\n]*'?| ?"[^"\n$][^"\n]*"?|[^\s'"$])(?:'[^'\n]*'?|"[^"\n]*"?|[^\s'"])*`,
		1, nil, "PASSWORD=", "PASSWD=", "_PWD="),
	{kind: "bearer", re: regexp.MustCompile(`(?i)(\b(?:bearer|basic|token)\s+)[A-Za-z0-9_\-.=+/]{16,}`), keep: 1, may: anyOf("e", "E", "a", "A"), fast: redactBearers},
	{kind: "secret", re: regexp.MustCompile(`(?i)((?:` + secretKeyExpr + `)(?:\s*["'])?\s*[:=]\s*["']?)[^\s"',;&]{6,}`), keep: 1, may: anyOf("e", "E", "w", "W"), fast: redactAssignments},
}

// cliValue is a password on a command line after its option: a quoted string, or a word up to the
// next white space or quote. A value that starts with "$" is a shell variable. The space a quote
// may follow is the backslash of an escaped one (\"), made a space by plainEscapes.
const cliValue = `(?: ?'[^'\n$][^'\n]*'?| ?"[^"\n$][^"\n]*"?|[^\s'"$][^\s'"]*)`

var discordToken = regexp.MustCompile(`\b[MNO][DTjz][AEIMQUYcgk][w-z0-5][A-Za-z0-9_\-]{19,22}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}`)

// sixBetweenDots returns where, from i on, s has a dot, six base64url characters and a dot (the
// first dot), or -1.
func sixBetweenDots(s string, i int) int {
	for {
		k := strings.IndexByte(s[i:], '.')
		if k < 0 {
			return -1
		}
		i += k
		if i+7 < len(s) && s[i+7] == '.' {
			j := i + 1
			for j < i+7 && isBase64URL(s[j]) {
				j++
			}
			if j == i+7 {
				return i
			}
		}
		i++
	}
}

// hasSixBetweenDots: every Discord token holds a dot, six characters and a dot.
func hasSixBetweenDots(s string) bool { return sixBetweenDots(s, 0) >= 0 }

// redactDiscordTokens runs the discord-token expression only over the runs of text without white
// space that hold a dot, six characters and a dot: its literals, the first two characters of a
// digit in base64, are all over upper-case text, where finding each of them costs more than this.
func redactDiscordTokens(s string, r *redaction) {
	for at := 0; at < len(s); {
		k := sixBetweenDots(s, at)
		if k < 0 {
			return
		}
		a, b := k, k
		for a > at && !isSpace(s[a-1]) {
			a--
		}
		for b < len(s) && !isSpace(s[b]) {
			b++
		}
		w := max(a-1, 0)
		for _, m := range discordToken.FindAllStringSubmatchIndex(s[w:b], -1) {
			addMatch(m, w, 0, r)
		}
		at = b
	}
}

func isBase64URL(c byte) bool { return isWordByte(c) || c == '-' }

// token is the rule for a credential that holds one of lits and no white space.
func token(kind, expr string, lits ...string) rule { return inRuns(kind, expr, 0, lits...) }

// with returns rl with a check of the windows its literals are found in, stricter than the
// literals: the expression runs only over those it passes, and it is rl's prefilter.
func with(rl rule, check func(string) bool) rule {
	rl.check = check
	return rl
}

// inRuns is the rule for an expression whose matches hold one of lits and no white space but for
// their first byte. Its fast matcher runs the expression only over the white-space-free runs of
// text that hold one of lits, rather than over all of it: most of these expressions start with \b
// or a class, which leaves the regexp package nothing to skip to, and trying them at every byte of
// the text costs more than all the other rules together.
func inRuns(kind, expr string, keep int, lits ...string) rule {
	return rule{kind: kind, re: regexp.MustCompile(expr), keep: keep, lits: lits, sep: isSpace}
}

// inLines is inRuns for an expression whose matches hold no line break but for their first byte.
func inLines(kind, expr string, keep int, check func(string) bool, lits ...string) rule {
	return rule{kind: kind, re: regexp.MustCompile(expr), keep: keep, lits: lits, check: check, sep: isNewline}
}

func isNewline(c byte) bool { return c == '\n' }

// inWindows finds what the expression finds in s, given that every match holds one of rl.lits and
// no rl.sep byte but for its first: it runs the expression over each stretch of s between
// separators that holds one of the literals (and passes rl.check), from the separator before it.
// The windows do not overlap and no match crosses the end of one, so the matches are those of the
// expression over all of s; its \b or ^ sees the same byte before a match, a separator or none.
func (rl *rule) inWindows(s string, r *redaction) {
	var nextBuf [8]int
	next := nextBuf[:0] // where each literal is next found, from at; -1: nowhere
	for _, l := range rl.lits {
		next = append(next, strings.Index(s, l))
	}
	for at := 0; at < len(s); {
		k := -1 // the leftmost literal from at
		for i, l := range rl.lits {
			if next[i] >= 0 && next[i] < at {
				if next[i] = strings.Index(s[at:], l); next[i] >= 0 {
					next[i] += at
				}
			}
			if next[i] >= 0 && (k < 0 || next[i] < k) {
				k = next[i]
			}
		}
		if k < 0 {
			return
		}
		a, b := k, k // the window that holds it
		for a > at && !rl.sep(s[a-1]) {
			a--
		}
		for b < len(s) && !rl.sep(s[b]) {
			b++
		}
		w := max(a-1, 0)
		if rl.check == nil || rl.check(s[w:b]) {
			for _, m := range rl.re.FindAllStringSubmatchIndex(s[w:b], -1) {
				addMatch(m, w, rl.keep, r)
			}
		}
		at = b
	}
}

// allOf returns a prefilter that needs every one of lits.
func allOf(lits ...string) func(string) bool {
	return func(s string) bool {
		for _, l := range lits {
			if !strings.Contains(s, l) {
				return false
			}
		}
		return true
	}
}

func init() {
	for i := range rules {
		rl := &rules[i]
		switch {
		case rl.may != nil:
		case rl.check != nil:
			rl.may = rl.check
		default:
			rl.may = anyOf(rl.lits...)
		}
		if rl.sep != nil {
			rl.fast = rl.inWindows
		}
	}
	marks, markMasks, gates = make([]string, len(rules)), make([]uint64, len(rules)), make([]uint64, len(rules))
	slots := map[uint16]uint8{}
	for i, rl := range rules {
		marks[i] = "[REDACTED:" + rl.kind + "]"
		for _, l := range rl.lits {
			bg := rarestBigram(l)
			slot, ok := slots[bg]
			if !ok {
				slot = uint8(len(slots)%63 + 1) // bigrams share a slot past 63: a gate passes more often
				slots[bg] = slot
				bigramSlot[bg] = slot
			}
			gates[i] |= 1 << slot
		}
	}
	for i := range rules {
		markMasks[i] = bigramMask(marks[i])
	}
}

var (
	// marks[i] is "[REDACTED:<kind>]" for rules[i]; markMasks[i] its bigramMask.
	marks     []string
	markMasks []uint64
	// gates[i] has the bit of one two-byte sequence of each of rules[i].lits; 0 for a rule without
	// literals. A rule whose bits are all missing from a text's bigramMask has no literal in it:
	// one pass over the text spares most rules their search for their literals.
	gates []uint64
	// bigramSlot maps a two-byte sequence (first byte high) to its bit in gates, 0 if none.
	bigramSlot [1 << 16]uint8
)

// rarestBigram picks the two bytes of lit least likely in ordinary text: lower-case letters are
// common, capitals, digits and punctuation less so.
func rarestBigram(lit string) uint16 {
	rarity := func(c byte) int {
		switch {
		case c >= 'a' && c <= 'z':
			return 0
		case c == '-' || c == '.' || c == ' ':
			return 1
		case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			return 2
		}
		return 3
	}
	best, score := 0, -1
	for i := 0; i+1 < len(lit); i++ {
		if sc := rarity(lit[i]) + rarity(lit[i+1]); sc > score {
			best, score = i, sc
		}
	}
	return uint16(lit[best])<<8 | uint16(lit[best+1])
}

// bigramMask returns the gate bits of the two-byte sequences s holds; bit 0 means nothing.
func bigramMask(s string) uint64 {
	var m uint64
	for i := 1; i < len(s); i++ {
		m |= 1 << bigramSlot[uint16(s[i-1])<<8|uint16(s[i])]
	}
	return m
}

// String returns s with every secret it recognizes replaced.
//
// Text that holds a JSON or C string literal (an upstream's error echoing a request body, a tool
// printing JSON) is matched as if its escapes were what they stand for: \n, \r and \t end a line
// or a word and \" is a quote, so a secret on the second line of an escaped string, or the value of
// an escaped "password" key, is found as it would be in plain text. The escapes themselves are kept.
func String(s string) string {
	folds := foldsToASCII(s)
	// v is what the rules read: s, or s with its escapes made plain, of the same length, so that a
	// span of v is the same span of s.
	v, escaped := plainEscapes(s)
	mask := bigramMask(v)
	var r redaction
	for i := range rules {
		rl := &rules[i]
		if gates[i] != 0 && mask&gates[i] == 0 && !folds {
			continue
		}
		r.spans, r.done = r.spans[:0], 0
		switch {
		case rl.fast != nil && !folds:
			rl.fast(v, &r)
		case !folds && !rl.may(v):
			continue
		default:
			rl.match(v, &r)
		}
		if len(r.spans) == 0 {
			continue
		}
		mark := marks[i]
		s = r.apply(s, mark)
		if escaped {
			v = r.apply(v, mark)
		} else {
			v = s
		}
		// What the rule replaced can only take bigrams away, but its mark brings its own (no literal
		// has a bracket, so none spans the mark's edges).
		mask |= markMasks[i]
	}
	return s
}

// match adds the spans the rule's expression replaces in s.
func (rl *rule) match(s string, r *redaction) {
	for _, m := range rl.re.FindAllStringSubmatchIndex(s, -1) {
		addMatch(m, 0, rl.keep, r)
	}
}

// addMatch adds the span of an expression's match m, found at offset at, leaving out the submatch
// keep in front and the one after it, if any, behind.
func addMatch(m []int, at, keep int, r *redaction) {
	from, to := m[0], m[1]
	if keep > 0 {
		from = m[2*keep+1]
		if len(m) > 2*(keep+1) && m[2*(keep+1)] >= 0 {
			to = m[2*(keep+1)]
		}
	}
	r.replace(at+from, at+to)
}

// plainEscapes returns s with the escapes \n, \r and \t replaced by white space, \" and \' by a
// space and the quote, and \u0026 by six "&" (it is one: a value that holds "&" stays one word);
// and whether it changed anything. An escaped backslash is left alone, so \\n stays a backslash
// and an n.
func plainEscapes(s string) (string, bool) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, false
	}
	var b []byte
	for ; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		var c0, c1 byte
		switch s[i+1] {
		case 'n':
			c0, c1 = ' ', '\n'
		case 'r':
			c0, c1 = ' ', '\r'
		case 't':
			c0, c1 = ' ', '\t'
		case '"', '\'':
			c0, c1 = ' ', s[i+1]
		case 'u':
			// \u0026 is how Go's encoding/json writes "&": the separator of query parameters, and a
			// byte of a password in PGPASSWORD='a&b'.
			if strings.HasPrefix(s[i+2:], "0026") {
				if b == nil {
					b = []byte(s)
				}
				copy(b[i:], "&&&&&&")
				i += 5
				continue
			}
			i++
			continue
		default:
			i++ // \\, \/, \u...: not an end
			continue
		}
		if b == nil {
			b = []byte(s)
		}
		b[i], b[i+1] = c0, c1
		i++
	}
	if b == nil {
		return s, false
	}
	return string(b), true
}

// mayGitLab: a match has "gl", then a few lower-case letters (at most five) and "-".
func mayGitLab(s string) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], "gl")
		if k < 0 {
			return false
		}
		i += k + 2
		j := i
		for j < len(s) && j-i < 6 && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		if j > i && j < len(s) && s[j] == '-' {
			return true
		}
	}
}

// mayVault: a match has "hvs.", "hvb." or "hvr.".
func mayVault(s string) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], "hv")
		if k < 0 {
			return false
		}
		i += k + 2
		if i+1 < len(s) && (s[i] == 's' || s[i] == 'b' || s[i] == 'r') && s[i+1] == '.' {
			return true
		}
	}
}

// mayURLPassword: a match has "://" and, after it, an "@".
func mayURLPassword(s string) bool {
	i := strings.Index(s, "://")
	return i >= 0 && strings.IndexByte(s[i:], '@') >= 0
}

// span is a part of the text a rule replaces with its mark.
type span struct{ from, to int }

// redaction collects the spans one rule replaces, left to right.
type redaction struct {
	spans []span
	done  int // where the last span ends: a match never starts before it
}

func (r *redaction) replace(from, to int) {
	r.spans = append(r.spans, span{from, to})
	r.done = to
}

// apply returns s with r's spans replaced by mark.
func (r *redaction) apply(s, mark string) string {
	var b strings.Builder
	b.Grow(len(s) + len(r.spans)*len(mark))
	at := 0
	for _, sp := range r.spans {
		b.WriteString(s[at:sp.from])
		b.WriteString(mark)
		at = sp.to
	}
	b.WriteString(s[at:])
	return b.String()
}

// replaceAll returns s with what the rule finds replaced, by its fast matcher when fast is set.
func (rl *rule) replaceAll(s string, fast bool) string {
	var r redaction
	if fast {
		rl.fast(s, &r)
	} else {
		rl.match(s, &r)
	}
	return r.apply(s, "[REDACTED:"+rl.kind+"]")
}

// redactURLPasswords replaces the password of scheme://user:password@ with the mark.
func redactURLPasswords(s string, r *redaction) {
	if !mayURLPassword(s) {
		return
	}
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
		if u >= len(s) || s[u] != ':' {
			continue
		}
		p := u + 1
		for p < len(s) && s[p] != '@' && s[p] != '/' && !isSpace(s[p]) {
			p++
		}
		if p == u+1 || p >= len(s) || s[p] != '@' || !isURLPassword(s[u+1:p]) {
			continue
		}
		r.replace(u+1, p)
		from = p + 1
	}
}

// isURLPassword reports whether pw, from between "user:" and "@", can be a password rather than a
// placeholder in code: a format verb (%s), a template ({password}) or a shell variable ($PASS,
// ${PASS}). A password starts with none of those: in a URL, "%" starts an escape and "{" is escaped.
func isURLPassword(pw string) bool {
	switch pw[0] {
	case '{':
		return false
	case '%':
		return len(pw) >= 3 && isHex(pw[1]) && isHex(pw[2])
	case '$':
		return len(pw) >= 2 && !(pw[1] >= 'A' && pw[1] <= 'Z' || pw[1] == '_' || pw[1] == '{')
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

// redactBearers replaces the credential after bearer, basic or token (any case) and white space.
// A candidate is a white space byte after r, c or n (any case); eight bytes are tested at a time
// for one (most text holds none in most of its words), and each is then checked in full (bearerAt).
func redactBearers(s string, r *redaction) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	next := 1 // the first byte that may start a candidate: none inside a credential just replaced
	i := 1
	for ; i+8 <= len(s); i += 8 {
		w, prev := load64(s, i), load64(s, i-1)|ones*0x20
		// The bytes below 0x21 (white space among them) after r, c or n: each such byte sets its
		// high bit, and a borrow may set those of the bytes after it too, never one before.
		m := (w - ones*0x21) &^ w & highs & (zero(prev^ones*'r') | zero(prev^ones*'c') | zero(prev^ones*'n'))
		for ; m != 0; m &= m - 1 {
			if k := i + bits.TrailingZeros64(m)/8; k >= next {
				next = bearerAt(s, k, r)
			}
		}
	}
	for i = max(i, next); i < len(s); i = max(i+1, next) {
		next = bearerAt(s, i, r)
	}
}

// bearerAt replaces the credential after bearer, basic or token and the white space at s[i], if
// that is where one starts, and returns where to look on from (past a credential it replaced).
func bearerAt(s string, i int, r *redaction) int {
	if !isSpace(s[i]) || isSpace(s[i-1]) {
		return i + 1
	}
	if c := s[i-1] | 0x20; c != 'r' && c != 'c' && c != 'n' { // bearer, basic, token
		return i + 1
	}
	w := endsWithWord(s[:i], r.done, "bearer", "basic", "token")
	if w < 0 || (w > 0 && isWordByte(s[w-1])) {
		return i + 1
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
		r.replace(j, v)
		return v
	}
	return i + 1
}

// load64 is s[i:i+8] as a little-endian word (one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// secretKeyExpr names the keys (any case) whose values the secret rule replaces: a key ends with
// one of these. Azure connection strings put the storage key in AccountKey and the Service Bus key
// in SharedAccessKey; longer names (x-api-key, client_secret, aws_secret_access_key) end with one
// of them.
const secretKeyExpr = `api[_-]?key|secret[_-]?key|access[_-]?key|account[_-]?key|auth[_-]?token|access[_-]?token|` +
	`api[_-]?token|security[_-]?token|aws_session_token|password|passwd|secret`

// secretKeys spells out secretKeyExpr for redactAssignments.
var secretKeys = []string{
	"apikey", "api_key", "api-key", "secretkey", "secret_key", "secret-key", "accesskey", "access_key",
	"access-key", "accountkey", "account_key", "account-key", "authtoken", "auth_token", "auth-token",
	"accesstoken", "access_token", "access-token", "apitoken", "api_token", "api-token", "securitytoken",
	"security_token", "security-token", "aws_session_token", "password", "passwd", "secret",
}

// secretKeyEnd reports whether c can end a name in secretKeys (any case): y, n, d or t.
func secretKeyEnd(c byte) bool {
	c |= 0x20
	return c == 'y' || c == 'n' || c == 'd' || c == 't'
}

// redactAssignments replaces the value of key: value and key=value where the key names a secret.
func redactAssignments(s string, r *redaction) {
	// The ':' and '=' are found with strings.IndexByte (many bytes at a time), each from where the
	// last one found was passed.
	colon, eq := -1, -1
	for i := 0; i < len(s); i++ {
		if colon < i {
			colon = indexFrom(s, i, ':')
		}
		if eq < i {
			eq = indexFrom(s, i, '=')
		}
		if i = min(colon, eq); i >= len(s) {
			return
		}
		j := i
		for j > 0 && isSpace(s[j-1]) {
			j--
		}
		if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
			j--
			for j > 0 && isSpace(s[j-1]) {
				j--
			}
		}
		if j == 0 || !secretKeyEnd(s[j-1]) || endsWithWord(s[:j], r.done, secretKeys...) < 0 {
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
			r.replace(v, e)
			i = e - 1
		}
	}
}

// indexFrom is the index of the first c in s at or after i, or len(s).
func indexFrom(s string, i int, c byte) int {
	if k := strings.IndexByte(s[i:], c); k >= 0 {
		return i + k
	}
	return len(s)
}

// foldsToASCII reports whether s holds the Kelvin sign or the long s, which (?i) matches as k and s.
func foldsToASCII(s string) bool {
	return strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f")
}

// isSpace is \s in Go's regular expressions.
func isSpace(c byte) bool { return spaces[c] }

// spaces are the bytes isSpace takes for white space: one load where five comparisons were, on
// the scrubber's hottest loops (every byte of every text).
var spaces = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '\f': true}

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
