// Package config loads $OBSERVER_HOME/config.toml.
//
// Precedence, lowest first: the defaults compiled in here, the file, the environment
// (OBSERVER_<SECTION>_<KEY>, for example OBSERVER_PROXY_ANTHROPIC_UPSTREAM), then command-line flags,
// which the callers apply after Load. The file is written with commented defaults the first time
// Load runs on an empty home, and the home directory is created 0700.
//
// An unknown key in the file is an error; an unknown OBSERVER_ variable in the environment is
// only a warning (Config.Warnings, UnknownEnv), since the environment is shared with everything
// else the user runs.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/observerhq/observer/pkg/pricing"
)

// Config is the whole configuration. Each field of a section carries its toml key, and the
// environment variable that overrides it is derived from the section and key.
type Config struct {
	Bus       Bus       `toml:"bus"`
	Writer    Writer    `toml:"writer"`
	Proxy     Proxy     `toml:"proxy"`
	Dash      Dash      `toml:"dash"`
	Hook      Hook      `toml:"hook"`
	Watch     Watch     `toml:"watch"`
	MCP       MCP       `toml:"mcp"`
	Log       Log       `toml:"log"`
	Retention Retention `toml:"retention"`
	Budget    Budget    `toml:"budget"`
	// Limits configures the alerts on the providers' plan usage limits (observerctl limits).
	Limits  Limits  `toml:"limits"`
	Pricing Pricing `toml:"pricing"`
	// Plans are the subscriptions the user pays each provider, beside which `observerctl cost
	// --plans` and the dashboard set the turns' API-equivalent dollars.
	Plans Plans `toml:"plans"`
	// Alerts sends every alert the writer raises to a webhook as well (internal/webhook).
	Alerts Alerts `toml:"alerts"`
	// Compression configures the proxy's request compression.
	Compression Compression `toml:"compression"`
	// OTLP configures the receiver of the clients' own telemetry (in observer-proxy).
	OTLP OTLP `toml:"otlp"`
	// Team makes this machine a member of a team hub (package team).
	Team Team `toml:"team"`
	// Hub configures `observerctl hub`, when this home runs a team hub.
	Hub Hub `toml:"hub"`
	// Memory configures session memory's optional language-model summaries (internal/memory).
	Memory Memory `toml:"memory"`

	// Home is the directory the configuration was loaded from; not a key.
	Home string `toml:"-"`
	// Warnings are what the caller should log about the configuration without refusing it: the
	// OBSERVER_ variables of the environment observer does not read (UnknownEnv); not a key.
	Warnings []string `toml:"-"`
}

// Bus configures the embedded NATS server and its JetStream stream.
type Bus struct {
	Host     string   `toml:"host" comment:"Address the bus listens on. Keep it on loopback."`
	Port     int      `toml:"port" comment:"TCP port of the bus."`
	MaxAge   Duration `toml:"max_age" comment:"How long the stream keeps events (already stored ones included)."`
	MaxBytes int64    `toml:"max_bytes" comment:"Upper bound of the stream on disk, in bytes."`
}

// Writer configures the process that owns the SQLite store.
type Writer struct {
	BatchSize     int      `toml:"batch_size" comment:"Events written per transaction (whole bus messages: a batch message may take it up to 255 over)."`
	FlushInterval Duration `toml:"flush_interval" comment:"Longest time an event waits for its batch to fill."`
	AckWait       Duration `toml:"ack_wait" comment:"How long the bus waits for an ack before redelivering to a restarted writer."`
}

// Proxy configures observer-proxy.
type Proxy struct {
	Addr                  string   `toml:"addr" comment:"Listen address of the model API proxy."`
	AnthropicUpstream     string   `toml:"anthropic_upstream" comment:"Where Anthropic requests are forwarded."`
	OpenAIUpstream        string   `toml:"openai_upstream" comment:"Where OpenAI requests are forwarded."`
	GeminiUpstream        string   `toml:"gemini_upstream" comment:"Where Gemini API requests are forwarded (point GOOGLE_GEMINI_BASE_URL at the proxy)."`
	ConnectTimeout        Duration `toml:"connect_timeout" comment:"Longest the proxy waits to connect to an upstream (TCP and TLS) before it answers the client with a 504."`
	ResponseHeaderTimeout Duration `toml:"response_header_timeout" comment:"Longest the proxy waits for an upstream's response headers once the request is sent before it answers the client with a 504 (a stream may then run as long as it needs)."`
	MaxBodyBytes          int64    `toml:"max_body_bytes" comment:"Largest request body the proxy accepts for a model endpoint; a larger one is answered with a 413 without being read into memory."`
}

// Dash configures observer-dash.
type Dash struct {
	Addr  string `toml:"addr" comment:"Listen address of the dashboard."`
	Token string `toml:"token" comment:"Access token the dashboard requires (as a bearer header, or once as ?token= which sets a cookie). Required when addr is not a loopback address; empty otherwise."`
}

// Hook configures `observerctl hook`.
type Hook struct {
	MaxPayloadBytes int64    `toml:"max_payload_bytes" comment:"Largest hook payload read from stdin; larger ones are reported and dropped."`
	Timeout         Duration `toml:"timeout" comment:"Longest a hook call waits for the bus before it spools the event."`
	StdinTimeout    Duration `toml:"stdin_timeout" comment:"Longest a hook call waits for its payload on stdin to end; a payload still open then is reported and dropped."`
}

// Watch configures observer-watch's session lifecycle.
type Watch struct {
	IdleAfter     Duration `toml:"idle_after" comment:"A session with no new transcript record for this long is idle."`
	FinalizeAfter Duration `toml:"finalize_after" comment:"A session with no new transcript record for this long is finalized."`
}

// MCP configures `observer-mcp wrap`, the proxy in front of another MCP server. Lists are TOML
// arrays in the file; in the environment a value that starts with "[" is a TOML array, anything
// else a comma-separated list (OBSERVER_MCP_HIDE=write_file,move_file).
type MCP struct {
	CallTimeout Duration `toml:"call_timeout" comment:"Longest the proxy waits for the wrapped server to answer a request before it answers the client with an error."`
	RawPayloads bool     `toml:"raw_payloads" comment:"Whether the trace tools return the calls' arguments and results (redacted) instead of sizes and hashes only."`
	Redact      []string `toml:"redact" comment:"Regular expressions whose matches are replaced by [REDACTED] in whatever the proxy keeps (payloads, error texts), on top of the built-in secret scrubbing."`
	Hide        []string `toml:"hide" comment:"Tools of the wrapped server (or trace tools) left out of tools/list; calling one is an error."`
	MaxTools    int      `toml:"max_tools" comment:"Most tools of the wrapped server shown in tools/list, in its order; 0 shows all."`
	History     int      `toml:"history" comment:"Calls the trace tools remember per wrap process (oldest dropped first)."`
}

// Log configures logging of every component.
type Log struct {
	Level string `toml:"level" comment:"debug, info, warn or error."`
}

// Retention bounds what the store keeps; `observerctl prune` applies it, and the writer at start.
type Retention struct {
	MaxAge     Duration `toml:"max_age" comment:"Events older than this are deleted (0 keeps everything)."`
	MaxActions int64    `toml:"max_actions" comment:"Most actions kept; the oldest beyond it are deleted with their outputs (0 means no cap)."`
}

// Budget sets spending limits in USD; crossing one raises an alert event on the bus and in the
// dashboard. Zero disables a limit.
type Budget struct {
	Daily    float64            `toml:"daily" comment:"USD per local day across all projects (0 disables)."`
	Monthly  float64            `toml:"monthly" comment:"USD per local calendar month across all projects (0 disables)."`
	Projects map[string]float64 `toml:"projects" comment:"USD per local calendar month for one project, keyed by the project's path."`
}

// Limits configures the alerts on a plan's usage limits, as the providers report them (observerctl
// limits): one when a window's used share reaches warn_at, and one when the provider rejects
// requests, once per window.
type Limits struct {
	WarnAt float64 `toml:"warn_at" comment:"Alert when a plan usage limit window (5-hour, weekly) reaches this percent (0 alerts only on rejection)."`
}

// Plans names the monthly subscription paid to each provider (Claude Pro or Max, ChatGPT Plus or
// Pro for Codex, Copilot, Gemini): `[plans] anthropic = { name = "max-20x", usd_month = 200 }`.
// A provider left at its zero value has no plan. The keys are the providers of pricing.Providers
// (the company that sells a turn's model), and github, which covers the turns of the Copilot
// clients whatever their model (internal/query.PlanProvider); TestPlans_KeysAreTheProviders keeps
// them equal.
type Plans struct {
	Anthropic Plan `toml:"anthropic" comment:"Claude plan (Pro, Max): covers the turns of Claude models. Example: anthropic = { name = \"max-20x\", usd_month = 200 }"`
	OpenAI    Plan `toml:"openai" comment:"ChatGPT plan used by Codex (Plus, Pro): covers the turns of OpenAI models. Example: openai = { name = \"pro\", usd_month = 200 }"`
	Google    Plan `toml:"google" comment:"Gemini plan (Google AI Pro, Ultra): covers the turns of Gemini models."`
	GitHub    Plan `toml:"github" comment:"GitHub Copilot plan (Pro, Pro+): covers the turns of the Copilot clients (copilot-cli, copilot-vscode), whatever their model."`
	DeepSeek  Plan `toml:"deepseek" comment:"DeepSeek plan: covers the turns of DeepSeek models."`
	Qwen      Plan `toml:"qwen" comment:"Qwen (Alibaba Cloud) plan: covers the turns of Qwen models."`
	ZAI       Plan `toml:"zai" comment:"Z.ai plan (GLM Coding Plan): covers the turns of GLM models."`
	Moonshot  Plan `toml:"moonshot" comment:"Moonshot plan: covers the turns of Kimi models."`
	XAI       Plan `toml:"xai" comment:"xAI plan (SuperGrok): covers the turns of Grok models."`
	Mistral   Plan `toml:"mistral" comment:"Mistral plan: covers the turns of Mistral models."`
	Kilo      Plan `toml:"kilo" comment:"Kilo Code plan: covers the turns of Kilo's own gateway models."`
}

// Plan is one provider's subscription: a name to show and its price in USD per month. The zero
// Plan is no plan.
type Plan struct {
	Name     string  `toml:"name"`
	USDMonth float64 `toml:"usd_month"`
}

// Set says whether p is a plan (either field given).
func (p Plan) Set() bool { return p != Plan{} }

// ByProvider returns the plans that are set, by provider key.
func (p Plans) ByProvider() map[string]Plan {
	out := map[string]Plan{}
	v := reflect.ValueOf(p)
	for i := 0; i < v.NumField(); i++ {
		if plan := v.Field(i).Interface().(Plan); plan.Set() {
			out[v.Type().Field(i).Tag.Get("toml")] = plan
		}
	}
	return out
}

// PlanProviders are the keys of [plans], in their order.
func PlanProviders() []string {
	t := reflect.TypeOf(Plans{})
	out := make([]string, t.NumField())
	for i := range out {
		out[i] = t.Field(i).Tag.Get("toml")
	}
	return out
}

// Alerts sends each alert the writer raises (budget, and any other kind) to a webhook, beside
// the store, the dashboard and the live tail. Off while webhook_url is empty: then nothing is
// sent anywhere. The URL is a secret (Slack's and Discord's embed a token): observer logs and
// reports its host only.
type Alerts struct {
	WebhookURL string `toml:"webhook_url" comment:"Where each alert is POSTed (https://, or http:// to 127.0.0.1, ::1 or localhost); a secret: keep this file private. Empty: alerts stay in observer."`
	Format     string `toml:"format" comment:"Body of the POST: slack ({\"text\": ...}, an incoming webhook), discord ({\"content\": ...}) or json ({\"source\": \"observer\", \"alert\": {...}})."`
}

// Compression configures the proxy's request compression (README: Request compression). Off by
// default; every key but enabled takes effect only when it is on.
type Compression struct {
	Enabled      bool     `toml:"enabled" comment:"Compress the tool outputs in model API requests before they go upstream (Anthropic Messages, OpenAI Chat and Responses)."`
	Mode         string   `toml:"mode" comment:"cache_aware (never drops, compresses only outputs the upstream has not cached yet), cache (also drops old messages after the cached prefix when over target_ratio) or token (compresses every output and drops anywhere but the system prompt and the tail)."`
	TargetRatio  float64  `toml:"target_ratio" comment:"In the cache and token modes, share of the original request's bytes the drop pass aims for."`
	PreserveTail int      `toml:"preserve_tail" comment:"Last messages never dropped."`
	Compressors  []string `toml:"compressors" comment:"Content compressors in use: json, code, logs, text, diff, html."`
	MinBytes     int      `toml:"min_bytes" comment:"Smallest tool output compressed, in bytes."`
	TrimTools    string   `toml:"trim_tools" comment:"Shorten tool descriptions: openai (Chat and Responses requests), all (Anthropic too) or off."`
	Stash        bool     `toml:"stash" comment:"Keep the original of every compressed output in the store; the MCP tool retrieve_stashed returns it."`
}

// OTLP configures the OpenTelemetry receiver observer-proxy runs beside the proxy: Claude Code
// and Codex export their logs (tokens per request, tool results) and metrics to it.
type OTLP struct {
	Addr         string   `toml:"addr" comment:"OTLP/HTTP listen address (JSON and protobuf, POST /v1/logs, /v1/metrics, /v1/traces); empty turns the receiver off."`
	GRPCAddr     string   `toml:"grpc_addr" comment:"OTLP/gRPC listen address; empty turns it off."`
	MaxBodyBytes int64    `toml:"max_body_bytes" comment:"Largest export accepted (compressed and decompressed); a larger one is answered 413."`
	BodyTimeout  Duration `toml:"body_timeout" comment:"Longest an export's body may take to arrive once its headers have; a slower one is answered 408 and its connection closed (over gRPC the bound covers the whole call: DeadlineExceeded)."`
}

// Team makes this machine a member of a team: its bus joins the hub as a NATS leafnode and shares
// its events, stripped to the share level, through JetStream.
type Team struct {
	Credentials  string   `toml:"credentials" comment:"The member credentials file observerctl hub add-member made on the hub (mode 0600); empty: team mode off, nothing leaves this machine."`
	Hub          []string `toml:"hub" comment:"The hub's leafnode URLs (tls://host:7422); empty: the ones in the credentials."`
	Share        string   `toml:"share" comment:"What leaves this machine: usage (tokens, cost, models, counts; no targets, prompts or outputs), actions (plus files, commands and other targets; no outputs or prompts), full (everything, scrubbed)."`
	CarryPending bool     `toml:"carry_pending" comment:"After switching to another hub or member name, send the events held for the previous one to the new one (off: they stay in the local store only)."`
	MaxAge       Duration `toml:"max_age" comment:"How long the share stream keeps events while the hub is away."`
	MaxBytes     int64    `toml:"max_bytes" comment:"Upper bound of the share stream on disk, in bytes."`
}

// Hub configures a team hub (observerctl hub): a NATS server members join as leafnodes, the
// writer of the team's store and the dashboard in team view.
type Hub struct {
	Addr              string   `toml:"addr" comment:"Where members' leafnodes connect (TLS, one key per member). 0.0.0.0:7422 to accept other machines."`
	Hostnames         []string `toml:"hostnames" comment:"Names members reach the hub by: put in its TLS certificate and in new members' credentials."`
	URL               string   `toml:"url" comment:"The URL new members' credentials name; empty: tls://<first hostname, else 127.0.0.1>:<addr's port>."`
	CertFile          string   `toml:"cert_file" comment:"Your own TLS certificate for addr (PEM); empty: the hub's own CA signs one (observerctl hub init)."`
	KeyFile           string   `toml:"key_file" comment:"The key of cert_file (PEM)."`
	MembersFile       string   `toml:"members_file" comment:"The registry of members and their public keys; empty: <home>/hub/members.json. Nodes of a cluster share one."`
	NodeName          string   `toml:"node_name" comment:"This hub node's name, unique in a cluster."`
	ClusterName       string   `toml:"cluster_name" comment:"The NATS cluster's name (every node the same)."`
	ClusterAddr       string   `toml:"cluster_addr" comment:"Where other hub nodes reach this one; empty: a single hub, no cluster."`
	Routes            []string `toml:"routes" comment:"The other nodes' cluster_addr (host:port)."`
	ClusterSecretFile string   `toml:"cluster_secret_file" comment:"A file holding the secret every node of the cluster presents (mode 0600); empty: <home>/hub/cluster-secret."`
	Replicas          int      `toml:"replicas" comment:"Copies of each stream across the cluster's nodes: 1, or 3 in a cluster of three or more."`
	Writer            bool     `toml:"writer" comment:"Run the store writer and the dashboard on this node (one node of a cluster does)."`
	MaxAge            Duration `toml:"max_age" comment:"How long the hub's streams keep events (its store keeps them after)."`
	MaxBytes          int64    `toml:"max_bytes" comment:"Upper bound of the hub's team stream on disk (events waiting for its writer), in bytes."`
}

// Memory configures the language-model summaries of session epochs (internal/memory), beside the
// extractive ones that are always made. Off while model is empty: then nothing is sent anywhere.
// The call goes straight to the provider's upstream the proxy forwards to ([proxy]
// anthropic_upstream or openai_upstream), with the key from the writer's environment, and is
// recorded as an api_turn of client "observer".
type Memory struct {
	Model           string  `toml:"model" comment:"Model that writes an account of each ended session epoch beside the extractive summary (claude-haiku-4-5, gpt-4.1-mini, ...). Empty: off, no network call."`
	Provider        string  `toml:"provider" comment:"Whose API model is: anthropic (Messages API at [proxy] anthropic_upstream) or openai (Chat Completions at [proxy] openai_upstream)."`
	APIKeyEnv       string  `toml:"api_key_env" comment:"Environment variable of the observer processes that holds the API key; empty: ANTHROPIC_API_KEY or OPENAI_API_KEY by provider."`
	MinNewBytes     int64   `toml:"min_new_bytes" comment:"Growth gate: bytes of new records (commands, targets, errors, tool outputs) an epoch needs since its last model call before another."`
	MinNewText      int64   `toml:"min_new_text" comment:"Growth gate: bytes of new extractive summary text an epoch needs since its last model call before another."`
	DailyCapUSD     float64 `toml:"daily_cap_usd" comment:"Most USD the model calls may cost per local day, the next call's worst case included (0: no calls)."`
	MaxOutputTokens int64   `toml:"max_output_tokens" comment:"Longest answer asked of the model, in tokens (also the worst case the daily cap counts)."`
}

// DefaultPricingURL is LiteLLM's price database on GitHub.
const DefaultPricingURL = "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"

// Pricing overrides or adds model prices (USD per million tokens), applied without a restart.
type Pricing struct {
	AutoUpdate  bool                     `toml:"auto_update" comment:"Fetch LiteLLM's public price file from url at most once a day (the writer does it: one GET, nothing sent, the last good copy kept), so that new models are priced. false: observer never reaches the network for prices; observerctl prices update fetches on request."`
	URL         string                   `toml:"url" comment:"Where observerctl prices update (without --from) and auto_update fetch LiteLLM's model_prices_and_context_window.json."`
	UpdateEvery Duration                 `toml:"update_every" comment:"With auto_update, the age at which the price database is fetched again."`
	Models      map[string]pricing.Price `toml:"models" comment:"Per model: input, output, cache_read, cache_write_5m, cache_write_1h (and long_* with long_context_threshold). Example: [pricing.models.\"my-model\"] input = 1.0"`
}

// Default returns the configuration used where neither file, environment nor flag says otherwise.
func Default() Config {
	return Config{
		Bus: Bus{
			Host:     "127.0.0.1",
			Port:     4247,
			MaxAge:   Duration(7 * 24 * time.Hour),
			MaxBytes: 1 << 30,
		},
		Writer: Writer{
			BatchSize:     1000,
			FlushInterval: Duration(50 * time.Millisecond),
			AckWait:       Duration(15 * time.Second),
		},
		Proxy: Proxy{
			Addr:                  "127.0.0.1:8820",
			AnthropicUpstream:     "https://api.anthropic.com",
			OpenAIUpstream:        "https://api.openai.com",
			GeminiUpstream:        "https://generativelanguage.googleapis.com",
			ConnectTimeout:        Duration(10 * time.Second),
			ResponseHeaderTimeout: Duration(10 * time.Minute),
			MaxBodyBytes:          64 << 20,
		},
		Dash: Dash{Addr: "127.0.0.1:8081"},
		Hook: Hook{
			MaxPayloadBytes: 256 << 20,
			Timeout:         Duration(2 * time.Second),
			StdinTimeout:    Duration(5 * time.Second),
		},
		Watch: Watch{
			IdleAfter:     Duration(time.Minute),
			FinalizeAfter: Duration(5 * time.Minute),
		},
		MCP: MCP{
			CallTimeout: Duration(120 * time.Second),
			Redact:      []string{},
			Hide:        []string{},
			History:     1000,
		},
		Log:    Log{Level: "info"},
		Budget: Budget{Projects: map[string]float64{}},
		Limits: Limits{WarnAt: 80},
		Alerts: Alerts{Format: "slack"},
		Pricing: Pricing{AutoUpdate: true, URL: DefaultPricingURL,
			UpdateEvery: Duration(24 * time.Hour), Models: map[string]pricing.Price{}},
		OTLP: OTLP{Addr: "127.0.0.1:4318", GRPCAddr: "127.0.0.1:4317", MaxBodyBytes: 16 << 20, BodyTimeout: Duration(30 * time.Second)},
		Team: Team{Hub: []string{}, Share: "usage", MaxAge: Duration(30 * 24 * time.Hour), MaxBytes: 1 << 30},
		Hub: Hub{Addr: "127.0.0.1:7422", Hostnames: []string{}, Routes: []string{}, Replicas: 1, Writer: true,
			MaxAge: Duration(30 * 24 * time.Hour), MaxBytes: 1 << 30},
		Memory: Memory{Provider: "anthropic", MinNewBytes: 20000, MinNewText: 400, DailyCapUSD: 1, MaxOutputTokens: 600},
		Compression: Compression{Mode: "cache_aware", TargetRatio: 0.5, PreserveTail: 4,
			Compressors: []string{"json", "code", "logs", "text", "diff", "html"}, MinBytes: 1024, TrimTools: "openai"},
	}
}

// Duration is a time.Duration written as a string ("50ms", "168h") in TOML and the environment.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// HomeDir returns $OBSERVER_HOME, or ~/.observer.
func HomeDir() (string, error) {
	if h := os.Getenv("OBSERVER_HOME"); h != "" {
		return filepath.Abs(h)
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory (set OBSERVER_HOME): %w", err)
	}
	return filepath.Join(u, ".observer"), nil
}

// Path returns the config file path inside home.
func Path(home string) string { return filepath.Join(home, "config.toml") }

// Load reads home/config.toml (writing it with commented defaults when absent), then applies the
// OBSERVER_<SECTION>_<KEY> environment overrides and validates every key. The home directory is
// created 0700.
func Load(home string) (Config, error) {
	if err := EnsureDir(home); err != nil {
		cfg := Default()
		cfg.Home = home
		return cfg, err
	}
	path := Path(home)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := WriteDefault(path); err != nil {
			cfg := Default()
			cfg.Home = home
			return cfg, err
		}
		data = nil
	case err != nil:
		cfg := Default()
		cfg.Home = home
		return cfg, fmt.Errorf("read config %s: %w", path, err)
	}
	cfg, err := Parse(home, data)
	if err == nil && data != nil {
		remember(cfg, data)
	}
	return cfg, err
}

// Read is Load for a command that only reads: it creates nothing, neither the home directory nor
// config.toml; a missing file is the defaults (with the environment overrides).
func Read(home string) (Config, error) {
	data, err := os.ReadFile(Path(home))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		cfg := Default()
		cfg.Home = home
		return cfg, fmt.Errorf("read config %s: %w", Path(home), err)
	}
	return Parse(home, data)
}

// Parse decodes data, the text of home's config.toml, over the defaults, applies the environment
// overrides and validates every key, writing nothing. An error names the file and line, or the
// variable, of each bad value.
func Parse(home string, data []byte) (Config, error) {
	cfg := Default()
	cfg.Home = home
	path := Path(home)
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) {
			hint := ""
			for _, e := range sm.Errors {
				if k := e.Key(); len(k) >= 2 && k[0] == "plans" {
					hint = fmt.Sprintf("\n[plans] is keyed by provider: %s (%q is not one)", strings.Join(PlanProviders(), ", "), k[1])
				}
			}
			return cfg, fmt.Errorf("config %s: unknown key:\n%s%s", path, sm.String(), hint)
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return cfg, fmt.Errorf("config %s:%d:%d: %v", path, row, col, de)
		}
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if err := ApplyEnv(&cfg, os.LookupEnv); err != nil {
		return cfg, err
	}
	if err := Validate(&cfg, path, data, os.LookupEnv); err != nil {
		return cfg, fmt.Errorf("config %s is not valid:\n%w", path, err)
	}
	cfg.Warnings = UnknownEnv(os.Environ(), cfg.Memory.APIKeyEnv)
	return cfg, nil
}

// EnsureDir creates dir with mode 0700, and tightens an existing one that is open to others.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("restrict %s to 0700: %w", dir, err)
		}
	}
	return nil
}

// WriteDefault writes the default configuration, every key commented with its meaning and its
// environment variable, to path with mode 0600. An existing file is left alone.
func WriteDefault(path string) error {
	var buf bytes.Buffer
	buf.WriteString("# observer configuration. Every key can be overridden by the environment variable\n")
	buf.WriteString("# named beside it, and command-line flags override both.\n")
	cfg := Default()
	forEachKey(&cfg, func(section, key, env, comment string, v reflect.Value) {
		if key == "" {
			fmt.Fprintf(&buf, "\n[%s]\n", section)
			return
		}
		val, _ := toml.Marshal(map[string]any{key: v.Interface()})
		if v.Kind() == reflect.Map && v.Len() == 0 {
			val = []byte(key + " = {}\n") // go-toml writes an empty map as a table header
		}
		if v.Kind() == reflect.Struct {
			val = inlineTable(key, v) // and a struct as a table of several lines
		}
		fmt.Fprintf(&buf, "# %s (%s)\n# %s", comment, env, val)
	})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write default config: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("write default config %s: %w", path, err)
	}
	return f.Close()
}

// inlineTable writes key = v with v, a struct, as a TOML inline table on one line.
func inlineTable(key string, v reflect.Value) []byte {
	doc := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: v.Type(), Tag: reflect.StructTag(`toml:"` + key + `,inline"`)}}))
	doc.Elem().Field(0).Set(v)
	val, _ := toml.Marshal(doc.Interface())
	return val
}

// EnvName returns the environment variable that overrides [section] key.
func EnvName(section, key string) string {
	return "OBSERVER_" + strings.ToUpper(section) + "_" + strings.ToUpper(key)
}

// ApplyEnv sets every key whose OBSERVER_<SECTION>_<KEY> variable lookup finds.
func ApplyEnv(cfg *Config, lookup func(string) (string, bool)) error {
	var errs []error
	forEachKey(cfg, func(section, key, env, _ string, v reflect.Value) {
		if key == "" {
			return
		}
		s, ok := lookup(env)
		if !ok {
			return
		}
		if err := setValue(v, s); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", env, s, err))
		}
	})
	return errors.Join(errs...)
}

func setValue(v reflect.Value, s string) error {
	if u, ok := v.Addr().Interface().(interface{ UnmarshalText([]byte) error }); ok {
		return u.UnmarshalText([]byte(s))
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("not a number")
		}
		v.SetFloat(f)
	case reflect.Map, reflect.Struct:
		// A map or a struct is a TOML inline table: OBSERVER_BUDGET_PROJECTS='{ "/src/app" = 50 }',
		// OBSERVER_PLANS_ANTHROPIC='{ name = "max-20x", usd_month = 200 }'.
		m := reflect.New(v.Type())
		doc := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: v.Type(), Tag: `toml:"v"`}}))
		if err := toml.Unmarshal([]byte("v = "+s), doc.Interface()); err != nil {
			return fmt.Errorf("must be a TOML inline table: %v", err)
		}
		m.Elem().Set(doc.Elem().Field(0))
		v.Set(m.Elem())
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("not a boolean")
		}
		v.SetBool(b)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported type %s", v.Type())
		}
		list, err := parseList(s)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(list))
	default:
		return fmt.Errorf("unsupported type %s", v.Type())
	}
	return nil
}

// parseList reads a list of strings from the environment: a TOML array when s starts with "[" (for
// items holding commas, such as regular expressions), else comma-separated items, trimmed, empty
// ones dropped.
func parseList(s string) ([]string, error) {
	list := []string{}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
		var doc struct {
			V []string `toml:"v"`
		}
		if err := toml.Unmarshal([]byte("v = "+t), &doc); err != nil {
			return nil, fmt.Errorf("a value starting with [ must be a TOML array of strings: %v", err)
		}
		return append(list, doc.V...), nil
	}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			list = append(list, item)
		}
	}
	return list, nil
}

// forEachKey calls fn once per section (key == "") and then once per key of that section.
func forEachKey(cfg *Config, fn func(section, key, env, comment string, v reflect.Value)) {
	root := reflect.ValueOf(cfg).Elem()
	for i := 0; i < root.NumField(); i++ {
		sf := root.Type().Field(i)
		section := sf.Tag.Get("toml")
		if section == "" || section == "-" {
			continue
		}
		fn(section, "", "", "", reflect.Value{})
		sv := root.Field(i)
		for j := 0; j < sv.NumField(); j++ {
			kf := sv.Type().Field(j)
			key := kf.Tag.Get("toml")
			fn(section, key, EnvName(section, key), kf.Tag.Get("comment"), sv.Field(j))
		}
	}
}

// The layout of the home directory.

// StorePath is the SQLite store.
func (c Config) StorePath() string { return filepath.Join(c.Home, "observer.db") }

// BusDir holds the JetStream file store.
func (c Config) BusDir() string { return filepath.Join(c.Home, "bus") }

// TokenPath is the 0600 file holding the bus token.
func (c Config) TokenPath() string { return filepath.Join(c.Home, "bus.token") }

// SpoolDir holds events that could not be published while the bus was unreachable.
func (c Config) SpoolDir() string { return filepath.Join(c.Home, "spool") }

// LogDir holds one log file per supervised component.
func (c Config) LogDir() string { return filepath.Join(c.Home, "logs") }

// RunDir holds lock files and the supervisor's control socket.
func (c Config) RunDir() string { return filepath.Join(c.Home, "run") }

// BusURL is where clients reach the bus.
func (c Config) BusURL() string { return fmt.Sprintf("nats://%s:%d", c.Bus.Host, c.Bus.Port) }
