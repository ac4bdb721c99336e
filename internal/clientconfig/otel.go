package clientconfig

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/observerhq/observer/pkg/scrub"
)

// OTel. `observerctl init --otel` makes the clients that export OpenTelemetry send their logs and
// metrics to observer's OTLP/HTTP receiver (pkg/otlp):
//
//   - Claude Code: environment variables in the "env" object of ~/.claude/settings.json
//     ($CLAUDE_CONFIG_DIR/settings.json, the file the hooks go to): telemetry on, the OTLP logs and
//     metrics exporters, http/protobuf, the receiver's base URL (Claude Code appends /v1/logs and
//     /v1/metrics itself) and a 5 s logs interval, so that events arrive within seconds.
//   - Codex: exporter and metrics_exporter in the [otel] table of $CODEX_HOME/config.toml (the file
//     the MCP server goes to), each an otlp-http exporter to the full /v1/<signal> URL with
//     protocol "binary" (protobuf).
//
// Prompts stay out: neither OTEL_LOG_USER_PROMPTS nor log_user_prompt is written. Each key is its
// own change in the manifest (a new [otel] table is one), so uninstall removes exactly these keys
// (and an env object or [otel] table init created, once empty) and gives back a value init
// replaced. A key the user set to something else (another exporter, another endpoint, or a
// per-signal endpoint that wins over observer's) is a conflict, refused with nothing written,
// unless the manifest says init set that value itself (the receiver's address changed since). Two
// kinds of the user's values are not conflicts: one that already exports to observer (a list of
// exporters holding otlp, http/json, another interval) stays as it is and is not recorded, and one
// that only turned export off ("none", CLAUDE_CODE_ENABLE_TELEMETRY=0) is replaced, reported, and
// given back by uninstall. Cursor exports no OpenTelemetry.

// OTelReason is the manifest reason of every telemetry setting.
const OTelReason = "observer OTel"

// OTelClients lists the clients that export OpenTelemetry to observer.
var OTelClients = []string{ClaudeCode, Codex}

// OTLP/HTTP's fixed paths for the two signals the clients export.
const (
	otlpLogsPath    = "/v1/logs"
	otlpMetricsPath = "/v1/metrics"
)

// Claude Code's telemetry variables.
const (
	claudeTelemetry       = "CLAUDE_CODE_ENABLE_TELEMETRY"
	claudeMetricsExp      = "OTEL_METRICS_EXPORTER"
	claudeLogsExp         = "OTEL_LOGS_EXPORTER"
	claudeProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	claudeEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	claudeLogsInterval    = "OTEL_LOGS_EXPORT_INTERVAL"
	claudeLogsEndpoint    = "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
	claudeMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	claudeLogsProtocol    = "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"
	claudeMetricsProtocol = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
)

// otelEnvNames are the variables init --otel writes: settings, not secrets, so the diffs show
// their values although they sit in an env object (a password in the endpoint's URL is still
// scrubbed).
var otelEnvNames = map[string]bool{claudeTelemetry: true, claudeMetricsExp: true, claudeLogsExp: true,
	claudeProtocol: true, claudeEndpoint: true, claudeLogsInterval: true}

// OTelEndpoint returns the base URL the clients export to for an OTLP/HTTP receiver listening on
// addr (host:port). A receiver listening on every interface (an empty host, 0.0.0.0, ::) is
// reached on loopback.
func OTelEndpoint(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("the OTLP receiver's address %q is not host:port: %v", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("the OTLP receiver's address %q has no port number", addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// ClaudeOTelEnv returns the variables written to Claude Code's env, in order, for the receiver at
// endpoint (OTelEndpoint's base URL).
func ClaudeOTelEnv(endpoint string) Object {
	return Object{
		{claudeTelemetry, "1"},
		{claudeMetricsExp, "otlp"},
		{claudeLogsExp, "otlp"},
		{claudeProtocol, "http/protobuf"},
		{claudeEndpoint, endpoint},
		{claudeLogsInterval, "5000"},
	}
}

// CodexOTel returns the keys written to Codex's [otel] table, in order, for the receiver at
// endpoint. They are inline tables, as Codex documents them.
func CodexOTel(endpoint string) Object {
	exporter := func(path string) InlineTable {
		return InlineTable{{"otlp-http", Object{{"endpoint", endpoint + path}, {"protocol", "binary"}}}}
	}
	return Object{
		{"exporter", exporter(otlpLogsPath)},
		{"metrics_exporter", exporter(otlpMetricsPath)},
	}
}

// LocateOTel returns the file each client that exports OpenTelemetry reads its telemetry settings
// from, for the user whose home directory is home: Claude Code's settings.json and Codex's
// config.toml. A client is Found when its config directory or that file exists or its command is
// on PATH (lookPath), as for the hooks. getenv reads CLAUDE_CONFIG_DIR and CODEX_HOME.
func LocateOTel(home string, getenv func(string) string, lookPath func(string) (string, error)) []Location {
	var out []Location
	for _, l := range LocateHooks(home, getenv, lookPath) {
		switch l.Client {
		case ClaudeCode:
			out = append(out, l)
		case Codex:
			file := filepath.Join(filepath.Dir(l.File), "config.toml")
			_, err := os.Stat(file)
			out = append(out, Location{Codex, file, TOML, l.Found || err == nil})
		}
	}
	return out
}

// OTelPlan writes the telemetry settings of loc's client (Claude Code or Codex) for the receiver
// at endpoint. man is the manifest: a key holding the value an earlier init set (recorded there
// for loc.File) is brought up to date; one holding anything else is the user's, and the plan fails
// with an ErrConflict naming every such key, unless the value already works with the receiver
// (left) or only turned export off (replaced).
func OTelPlan(loc Location, endpoint string, man *Manifest) func(d *Doc) ([]Edit, []string, error) {
	var rec *FileRecord
	if man != nil {
		rec = man.file(loc.File)
	}
	return func(d *Doc) ([]Edit, []string, error) {
		switch loc.Client {
		case ClaudeCode:
			return claudeOTelPlan(d, endpoint, rec)
		case Codex:
			return codexOTelPlan(d, endpoint, rec)
		}
		return nil, nil, fmt.Errorf("%s does not export OpenTelemetry to observer: --otel applies to %s only", loc.Client, strings.Join(OTelClients, " and "))
	}
}

// claudeKeyRules says, per variable init writes, which other values of the user's already do the
// job (left as they are) and which only turned export off (replaced, and given back by uninstall).
var claudeKeyRules = map[string]struct{ works, off func(string) bool }{
	claudeTelemetry:    {works: oneOf("1", "true", "yes", "on"), off: oneOf("", "0", "false", "no", "off")},
	claudeMetricsExp:   {works: listHas("otlp"), off: oneOf("", "none")},
	claudeLogsExp:      {works: listHas("otlp"), off: oneOf("", "none")},
	claudeProtocol:     {works: oneOf("http/json")},
	claudeLogsInterval: {works: func(s string) bool { n, err := strconv.Atoi(s); return err == nil && n > 0 }},
}

func claudeOTelPlan(d *Doc, endpoint string, rec *FileRecord) ([]Edit, []string, error) {
	env, ok := d.Lookup("env")
	m, isMap := env.(map[string]any)
	if ok && !isMap {
		return nil, nil, fmt.Errorf(`%w: "env" is not an object`, ErrMalformed)
	}
	var edits []Edit
	var notes, taken []string
	for _, mem := range ClaudeOTelEnv(endpoint) {
		path := []string{"env", mem.Key}
		rule := claudeKeyRules[mem.Key]
		s, isString := m[mem.Key].(string)
		if isString && rule.works != nil && rule.works(strings.TrimSpace(s)) && !equal(s, mem.Value) {
			notes = append(notes, fmt.Sprintf("left %s as it is (%s): it works with observer's receiver", DisplayPath(path), describe(s)))
			continue
		}
		note, conflict := otelKey(d, rec, path, mem.Value, isString && rule.off != nil && rule.off(strings.TrimSpace(s)))
		if conflict != "" {
			taken = append(taken, conflict)
			continue
		}
		if note != "" {
			notes = append(notes, note)
		}
		edits = append(edits, Edit{Path: path, Value: mem.Value, Reason: OTelReason})
	}
	// The per-signal variables win over the ones init writes: set to anything but observer's
	// receiver, they send that signal elsewhere.
	for _, o := range []struct{ key, want string }{
		{claudeLogsEndpoint, endpoint + otlpLogsPath},
		{claudeMetricsEndpoint, endpoint + otlpMetricsPath},
	} {
		if v, ok := m[o.key]; ok && !equal(v, o.want) {
			taken = append(taken, fmt.Sprintf("%s is %s, which sends that signal there instead (it wins over %s)", DisplayPath([]string{"env", o.key}), describe(v), claudeEndpoint))
		}
	}
	for _, k := range []string{claudeLogsProtocol, claudeMetricsProtocol} {
		if v, ok := m[k]; ok && !equal(v, "http/protobuf") && !equal(v, "http/json") {
			taken = append(taken, fmt.Sprintf("%s is %s: observer's receiver takes http/protobuf and http/json (it wins over %s)", DisplayPath([]string{"env", k}), describe(v), claudeProtocol))
		}
	}
	if len(taken) > 0 {
		return nil, nil, otelConflict(taken, `"env"`)
	}
	return edits, notes, nil
}

func codexOTelPlan(d *Doc, endpoint string, rec *FileRecord) ([]Edit, []string, error) {
	want := CodexOTel(endpoint)
	cur, ok := d.Lookup("otel")
	if !ok {
		return []Edit{{Path: []string{"otel"}, Value: want, Reason: OTelReason}}, nil, nil
	}
	m, isMap := cur.(map[string]any)
	if !isMap {
		return nil, nil, fmt.Errorf(`%w: "otel" is not a table`, ErrMalformed)
	}
	var edits []Edit
	var notes, taken []string
	for _, mem := range want {
		path := []string{"otel", mem.Key}
		s, isString := m[mem.Key].(string)
		note, conflict := otelKey(d, rec, path, mem.Value, isString && oneOf("", "none")(strings.TrimSpace(s)))
		if conflict != "" {
			taken = append(taken, conflict)
			continue
		}
		if note != "" {
			notes = append(notes, note)
		}
		edits = append(edits, Edit{Path: path, Value: mem.Value, Reason: OTelReason})
	}
	if len(taken) > 0 {
		return nil, nil, otelConflict(taken, "[otel]")
	}
	return edits, notes, nil
}

// otelKey decides about one key: init may write it (absent, already as wanted, as an earlier init
// set it, or, when off, a value that turned export off: then note says so), else conflict says why
// not.
func otelKey(d *Doc, rec *FileRecord, path []string, want any, off bool) (note, conflict string) {
	cur, ok := d.Lookup(path...)
	switch {
	case !ok || equal(cur, want):
		return "", ""
	case rec != nil && recordedAs(rec, path, cur):
		return "", ""
	case off:
		return fmt.Sprintf("note: %s was %s, which turned export off: --otel turns it on, and uninstall puts %s back", DisplayPath(path), describe(cur), describe(cur)), ""
	}
	return "", DisplayPath(path) + " is " + describe(cur)
}

// recordedAs reports whether the manifest record says an earlier Apply set path to v (itself, or
// inside a value it added).
func recordedAs(rec *FileRecord, path []string, v any) bool {
	for _, ch := range rec.Changes {
		if ch.Op != opSet || len(ch.Path) > len(path) || !slices.Equal(ch.Path, path[:len(ch.Path)]) {
			continue
		}
		installed, err := decodeJSON(ch.Installed)
		if err != nil {
			continue
		}
		if x, ok := lookup(installed, path[len(ch.Path):]); ok && equal(x, v) {
			return true
		}
	}
	return false
}

// oneOf matches a value equal to one of vals, ignoring case.
func oneOf(vals ...string) func(string) bool {
	return func(s string) bool {
		return slices.ContainsFunc(vals, func(x string) bool { return strings.EqualFold(s, x) })
	}
}

// listHas matches a comma-separated list of exporters that holds name.
func listHas(name string) func(string) bool {
	return func(s string) bool {
		return slices.ContainsFunc(strings.Split(s, ","), func(x string) bool { return strings.EqualFold(strings.TrimSpace(x), name) })
	}
}

// describe writes a setting's value for a message: a string quoted (secrets scrubbed), an
// exporter table by its kind and endpoint, never its headers.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(scrub.String(v))
	case map[string]any:
		if len(v) == 1 {
			for kind, x := range v {
				inner, _ := x.(map[string]any)
				if ep, ok := inner["endpoint"].(string); ok {
					return fmt.Sprintf("an %s exporter to %s", kind, strconv.Quote(scrub.String(ep)))
				}
				return "an " + kind + " exporter"
			}
		}
		return "a table of yours"
	}
	return "a value of yours"
}

// otelConflict is the ErrConflict for telemetry settings of the user's that --otel would change;
// where says where they are ("env", [otel]).
func otelConflict(taken []string, where string) error {
	what, them := "a telemetry setting of yours", "it"
	if len(taken) > 1 {
		what, them = "telemetry settings of yours", "them"
	}
	return &conflictError{msg: fmt.Sprintf("--otel would change %s, and init does not overwrite %s: %s. Remove %s from %s (or set %s as --otel writes, see observerctl init --help) and run init again, or run it without --otel",
		what, them, strings.Join(taken, "; "), them, where, them)}
}

// conflictError is an ErrConflict with a message of its own.
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }

func (e *conflictError) Is(target error) bool { return target == ErrConflict }
