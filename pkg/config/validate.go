package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/observerhq/observer/pkg/loopback"
	"github.com/observerhq/observer/pkg/scrub"
)

// A rule checks one key's value and returns what is wrong with it, or "" when it is fine.
type rule func(v reflect.Value) string

// rules holds the check of every key that has more to it than its TOML type. A key without a
// rule accepts any value of its type; TestValidate_EveryKeyHasARule keeps the list complete.
var rules = map[string]rule{
	"bus.host":      loopbackHostRule,
	"bus.port":      intRange(1, 65535),
	"bus.max_age":   durRange(time.Minute, 10*365*24*time.Hour),
	"bus.max_bytes": intRange(1<<20, math.MaxInt64),

	"writer.batch_size":     intRange(1, 100_000),
	"writer.flush_interval": durRange(time.Millisecond, time.Minute),
	"writer.ack_wait":       durRange(time.Second, time.Hour),

	"proxy.addr":                    hostPortRule,
	"proxy.anthropic_upstream":      upstreamRule,
	"proxy.openai_upstream":         upstreamRule,
	"proxy.gemini_upstream":         upstreamRule,
	"proxy.connect_timeout":         durRange(100*time.Millisecond, 10*time.Minute),
	"proxy.response_header_timeout": durRange(time.Second, 24*time.Hour),
	"proxy.max_body_bytes":          intRange(1<<20, 4<<30),

	"dash.addr":  hostPortRule,
	"dash.token": tokenRule,

	"hook.max_payload_bytes": intRange(1<<10, 1<<30),
	"hook.timeout":           durRange(10*time.Millisecond, 5*time.Minute),
	"hook.stdin_timeout":     durRange(10*time.Millisecond, 5*time.Minute),

	"watch.idle_after":     durRange(time.Second, 7*24*time.Hour),
	"watch.finalize_after": durRange(time.Second, 30*24*time.Hour),

	"mcp.call_timeout": durRange(10*time.Millisecond, 24*time.Hour),
	"mcp.redact":       regexpListRule,
	"mcp.max_tools":    intRange(0, 100_000),
	"mcp.history":      intRange(1, 1_000_000),

	"log.level": oneOf("debug", "info", "warn", "error"),

	"retention.max_age":     durRange(0, 100*365*24*time.Hour),
	"retention.max_actions": intRange(0, math.MaxInt64),

	"budget.daily":    floatRange(0, 1e9),
	"budget.monthly":  floatRange(0, 1e9),
	"budget.projects": budgetProjectsRule,
	"limits.warn_at":  floatRange(0, 100),

	"plans.anthropic": planRule,
	"plans.openai":    planRule,
	"plans.google":    planRule,
	"plans.github":    planRule,
	"plans.deepseek":  planRule,
	"plans.qwen":      planRule,
	"plans.zai":       planRule,
	"plans.moonshot":  planRule,
	"plans.xai":       planRule,
	"plans.mistral":   planRule,
	"plans.kilo":      planRule,

	"alerts.webhook_url": optional(webhookURLRule),
	"alerts.format":      oneOf("slack", "discord", "json"),

	"pricing.url":          priceURLRule,
	"pricing.update_every": durRange(time.Hour, 365*24*time.Hour),

	"otlp.addr":           optional(hostPortRule),
	"otlp.grpc_addr":      optional(hostPortRule),
	"otlp.max_body_bytes": intRange(1<<20, 1<<30),
	"otlp.body_timeout":   durRange(100*time.Millisecond, time.Hour),

	"team.credentials":   anyValue,
	"team.hub":           hubURLsRule,
	"team.share":         oneOf("usage", "actions", "full"),
	"team.carry_pending": anyValue,
	"team.max_age":       durRange(time.Minute, 10*365*24*time.Hour),
	"team.max_bytes":     intRange(1<<20, math.MaxInt64),

	"hub.addr":                hostPortRule,
	"hub.hostnames":           anyValue,
	"hub.url":                 optional(func(v reflect.Value) string { return hubURLsRule(reflect.ValueOf([]string{v.String()})) }),
	"hub.cert_file":           anyValue,
	"hub.key_file":            anyValue,
	"hub.members_file":        anyValue,
	"hub.node_name":           optional(nameRule),
	"hub.cluster_name":        optional(nameRule),
	"hub.cluster_addr":        optional(hostPortRule),
	"hub.routes":              hostPortListRule,
	"hub.cluster_secret_file": anyValue,
	"hub.replicas":            intRange(1, 5),
	"hub.writer":              anyValue,
	"hub.max_age":             durRange(time.Minute, 10*365*24*time.Hour),
	"hub.max_bytes":           intRange(1<<20, math.MaxInt64),

	"compression.mode":          oneOf("cache_aware", "cache", "token"),
	"compression.target_ratio":  floatRange(0.05, 1),
	"compression.preserve_tail": intRange(1, 1000),
	"compression.compressors":   subsetOf("json", "code", "logs", "text", "diff", "html"),
	"compression.min_bytes":     intRange(64, 1<<30),
	"compression.trim_tools":    oneOf("openai", "all", "off"),

	"memory.model":             optional(modelNameRule),
	"memory.provider":          oneOf("anthropic", "openai"),
	"memory.api_key_env":       optional(envNameRule),
	"memory.min_new_bytes":     intRange(0, 1<<40),
	"memory.min_new_text":      intRange(0, 1<<30),
	"memory.daily_cap_usd":     floatRange(0, 1e6),
	"memory.max_output_tokens": intRange(16, 128_000),
}

// secretURLs are the keys whose value is a URL that is itself a secret: an error shows its scheme
// and host only (scrub.URL).
var secretURLs = map[string]bool{"alerts.webhook_url": true}

// A FieldError is one key with a value that is out of range, of the wrong kind, or not one of
// its choices. Where says where the value came from: "config.toml:12" or the environment
// variable that set it.
type FieldError struct {
	Where   string
	Section string
	Key     string
	Value   string
	Problem string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: [%s] %s = %s: %s", e.Where, e.Section, e.Key, e.Value, e.Problem)
}

// site is where the file sets a key and the TOML kind of the value it gives.
type site struct {
	line int
	kind unstable.Kind
}

// fileSites maps "section.key" to where the file sets it. A file that does not parse gives what
// was read before the error (the decoder reports the error itself).
func fileSites(data []byte) map[string]site {
	sites := map[string]site{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(e.Key())
		case unstable.KeyValue:
			parts := append(append([]string{}, table...), keyParts(e.Key())...)
			line := 0
			if k := e.Key(); k.Next() {
				line = p.Shape(k.Node().Raw).Start.Line
			}
			if len(parts) >= 2 {
				sites[parts[0]+"."+parts[1]] = site{line: line, kind: e.Value().Kind}
			}
		}
	}
	return sites
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// Validate checks every key of cfg against its rule. path and data are the file the values were
// read from (data may be nil), so that each error names the file and line, or the environment
// variable, that set the value.
func Validate(cfg *Config, path string, data []byte, lookup func(string) (string, bool)) error {
	sites := fileSites(data)
	var errs []error
	forEachKey(cfg, func(section, key, env, _ string, v reflect.Value) {
		if key == "" {
			return
		}
		name := section + "." + key
		where := "default"
		if s, ok := sites[name]; ok {
			where = fmt.Sprintf("%s:%d", path, s.line)
			if _, isDur := v.Interface().(Duration); isDur && s.kind != unstable.String {
				errs = append(errs, &FieldError{Where: where, Section: section, Key: key, Value: show(v),
					Problem: `must be a duration in quotes, such as "50ms", "30s" or "2h"`})
				return
			}
		}
		if lookup != nil {
			if _, ok := lookup(env); ok {
				where = env
			}
		}
		r := rules[name]
		if r == nil {
			return
		}
		if problem := r(v); problem != "" {
			shown := show(v)
			if secretURLs[name] {
				shown = strconv.Quote(scrub.URL(v.String()))
			}
			errs = append(errs, &FieldError{Where: where, Section: section, Key: key, Value: shown, Problem: problem})
		}
	})
	if cfg.Watch.FinalizeAfter < cfg.Watch.IdleAfter {
		errs = append(errs, &FieldError{Where: whereOf(sites, path, lookup, "watch", "finalize_after"), Section: "watch", Key: "finalize_after",
			Value: show(reflect.ValueOf(cfg.Watch.FinalizeAfter)), Problem: fmt.Sprintf("must not be shorter than idle_after (%s)", cfg.Watch.IdleAfter.D())})
	}
	return errors.Join(errs...)
}

func whereOf(sites map[string]site, path string, lookup func(string) (string, bool), section, key string) string {
	if lookup != nil {
		if _, ok := lookup(EnvName(section, key)); ok {
			return EnvName(section, key)
		}
	}
	if s, ok := sites[section+"."+key]; ok {
		return fmt.Sprintf("%s:%d", path, s.line)
	}
	return "default"
}

// show prints a value the way it would be written in the file.
func show(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Duration:
		return strconv.Quote(x.D().String())
	case string:
		return strconv.Quote(x)
	case Plan:
		return fmt.Sprintf("{ name = %q, usd_month = %g }", x.Name, x.USDMonth)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

func intRange(lo, hi int64) rule {
	return func(v reflect.Value) string {
		if n := v.Int(); n < lo || n > hi {
			if hi == math.MaxInt64 {
				return fmt.Sprintf("must be at least %d", lo)
			}
			return fmt.Sprintf("must be between %d and %d", lo, hi)
		}
		return ""
	}
}

func floatRange(lo, hi float64) rule {
	return func(v reflect.Value) string {
		if f := v.Float(); math.IsNaN(f) || f < lo || f > hi {
			return fmt.Sprintf("must be a number between %g and %g", lo, hi)
		}
		return ""
	}
}

func durRange(lo, hi time.Duration) rule {
	return func(v reflect.Value) string {
		if d := time.Duration(v.Int()); d < lo || d > hi {
			return fmt.Sprintf("must be between %s and %s", fmtDur(lo), fmtDur(hi))
		}
		return ""
	}
}

// fmtDur prints whole days as days, which time.Duration.String does not.
func fmtDur(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd (%s)", d/(24*time.Hour), d)
	}
	return d.String()
}

func oneOf(choices ...string) rule {
	return func(v reflect.Value) string {
		for _, c := range choices {
			if v.String() == c {
				return ""
			}
		}
		return "must be one of " + strings.Join(choices, ", ")
	}
}

// optional accepts an empty value or one r accepts.
func optional(r rule) rule {
	return func(v reflect.Value) string {
		if v.String() == "" {
			return ""
		}
		return r(v)
	}
}

// subsetOf accepts a list whose every element is one of choices.
func subsetOf(choices ...string) rule {
	return func(v reflect.Value) string {
		for i := 0; i < v.Len(); i++ {
			if !slices.Contains(choices, v.Index(i).String()) {
				return fmt.Sprintf("%q is not one of %s", v.Index(i).String(), strings.Join(choices, ", "))
			}
		}
		return ""
	}
}

// anyValue accepts every value of the key's type (a path, a switch).
func anyValue(reflect.Value) string { return "" }

var nameRuleRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func nameRule(v reflect.Value) string {
	if !nameRuleRE.MatchString(v.String()) {
		return "must be letters, digits, '-' or '_' (at most 64)"
	}
	return ""
}

// modelNameRule accepts a model id as providers write them: no spaces or control characters.
func modelNameRule(v reflect.Value) string {
	s := v.String()
	if len(s) > 200 || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "must be a model id without spaces (at most 200 characters), such as \"claude-haiku-4-5\""
	}
	return ""
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// envNameRule accepts the name of an environment variable (not its value: a key does not belong
// in config.toml).
func envNameRule(v reflect.Value) string {
	if !envNameRE.MatchString(v.String()) {
		return "must be the name of an environment variable (letters, digits and _), such as \"ANTHROPIC_API_KEY\", not the key itself"
	}
	return ""
}

// hubURLsRule accepts a list of tls://host:port URLs.
func hubURLsRule(v reflect.Value) string {
	for i := 0; i < v.Len(); i++ {
		u, err := url.Parse(v.Index(i).String())
		if err != nil || (u.Scheme != "tls" && u.Scheme != "nats") || u.Hostname() == "" || u.Port() == "" || u.User != nil {
			return fmt.Sprintf("%q must be tls://host:port", v.Index(i).String())
		}
	}
	return ""
}

func hostPortListRule(v reflect.Value) string {
	for i := 0; i < v.Len(); i++ {
		if p := hostPortRule(v.Index(i)); p != "" {
			return fmt.Sprintf("%q %s", v.Index(i).String(), p)
		}
	}
	return ""
}

func loopbackHostRule(v reflect.Value) string {
	if strings.TrimSpace(v.String()) == "" {
		return "must be a host name or address (127.0.0.1 keeps the bus on this machine)"
	}
	return ""
}

func hostPortRule(v reflect.Value) string {
	_, port, err := net.SplitHostPort(v.String())
	if err != nil {
		return `must be host:port, such as "127.0.0.1:8820"`
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "port must be a number from 0 to 65535"
	}
	return ""
}

func upstreamRule(v reflect.Value) string {
	u, err := url.Parse(v.String())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return `must be an http(s) URL, such as "https://api.anthropic.com"`
	}
	if u.User != nil {
		return "must not carry a user or password (the clients send their own credentials)"
	}
	return ""
}

// webhookURLRule accepts an https:// URL, or an http:// one to a loopback host (a local relay, a
// test receiver): alerts, and the URL's token, never cross the network in the clear. Its problems
// never repeat the URL, a secret.
func webhookURLRule(v reflect.Value) string {
	u, err := url.Parse(v.String())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an https:// URL, such as the incoming webhook URL Slack or Discord gives (http:// only to 127.0.0.1, ::1 or localhost)"
	}
	if u.User != nil {
		return "must not carry a user or password"
	}
	if u.Scheme == "http" && !loopback.Host(u.Hostname()) {
		return "must be https:// (http:// is accepted only to 127.0.0.1, ::1 or localhost): the alerts and the URL's token would cross the network in the clear"
	}
	return ""
}

func priceURLRule(v reflect.Value) string {
	u, err := url.Parse(v.String())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http(s) URL of LiteLLM's model_prices_and_context_window.json"
	}
	return ""
}

func tokenRule(v reflect.Value) string {
	if v.String() == "" {
		return ""
	}
	if err := CheckToken(v.String()); err != nil {
		return err.Error()
	}
	return ""
}

func regexpListRule(v reflect.Value) string {
	for _, s := range v.Interface().([]string) {
		if _, err := regexp.Compile(s); err != nil {
			return fmt.Sprintf("%q is not a regular expression: %v", s, err)
		}
	}
	return ""
}

// planRule checks a provider's plan: a price in USD per month above 0 (a free plan has no value
// to compare with) and at most 1e6, and a name of one line.
func planRule(v reflect.Value) string {
	p := v.Interface().(Plan)
	switch {
	case !p.Set():
		return ""
	case math.IsNaN(p.USDMonth) || p.USDMonth < 0:
		return "usd_month must not be negative: the plan's price in USD per month, such as 200"
	case p.USDMonth == 0:
		return "usd_month is missing: give the plan's price in USD per month, such as { name = \"max-20x\", usd_month = 200 }"
	case p.USDMonth > 1e6:
		return "usd_month must be at most 1e6 (USD per month)"
	case strings.ContainsAny(p.Name, "\r\n") || len(p.Name) > 64:
		return "name must be one line of at most 64 characters"
	}
	return ""
}

func budgetProjectsRule(v reflect.Value) string {
	for _, k := range v.MapKeys() {
		if f := v.MapIndex(k).Float(); math.IsNaN(f) || f < 0 || f > 1e9 {
			return fmt.Sprintf("%q: must be a number between 0 and 1e9", k.String())
		}
		if strings.TrimSpace(k.String()) == "" {
			return "a project budget needs the project's path as its key"
		}
	}
	return ""
}

// MinTokenBits is the least entropy, estimated from the token's own characters, that an access
// token must carry.
const MinTokenBits = 48

// CheckToken reports why token is too weak to guard the dashboard: shorter than 16 characters,
// spaces or control characters in it, or too little entropy (a repeated character, a short
// alphabet). The estimate is the token's length times the Shannon entropy of its characters,
// which is generous to a human-chosen phrase; `observerctl dash token` makes a 256-bit one.
func CheckToken(token string) error {
	if len(token) < 16 {
		return fmt.Errorf("a token needs at least 16 characters (has %d); make one with `observerctl dash token`", len(token))
	}
	for _, r := range token {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return errors.New("a token must not contain spaces or control characters; make one with `observerctl dash token`")
		}
	}
	count := map[rune]int{}
	n := 0
	for _, r := range token {
		count[r]++
		n++
	}
	h := 0.0
	for _, c := range count {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	if bits := h * float64(n); len(count) < 8 || bits < MinTokenBits {
		return fmt.Errorf("a token must be random: this one has about %.0f bits of entropy in %d distinct characters (need %d bits, 8 characters); make one with `observerctl dash token`", bits, len(count), MinTokenBits)
	}
	return nil
}

// HasRule reports whether "section.key" has a validation rule.
func HasRule(name string) bool { return rules[name] != nil }
