// Package openclaude reads the transcripts of OpenClaude (Gitlawb/openclaude, npm
// @gitlawb/openclaude, command `openclaude`; client "openclaude"), the open-source fork of Claude
// Code that talks to OpenAI-compatible models (OpenAI, Codex, Gemini, Ollama, DeepSeek, GitHub
// Models, ...), into observer events. OpenClaude keeps Claude Code's transcript format and code,
// only under its own directory, so this package is package claudecode's reader with another root
// and another client name: everything claudecode's package doc says of files, lines, subagents,
// actions, messages, re-reads and errors holds here, read in its source (Gitlawb/openclaude:
// src/utils/envUtils.ts, src/utils/sessionStorage.ts, src/services/api/cacheMetrics.ts,
// src/services/api/openaiShim; facts only). It is tested on a fixture written here to that format.
//
// # Files
//
// OpenClaude's config home is $OPENCLAUDE_CONFIG_DIR when set, else ~/.openclaude (os.homedir(),
// the same on Linux and macOS); transcripts are <config home>/projects/<sanitized cwd>/<session
// id>.jsonl, with Claude Code's agent-*.jsonl and <session>/subagents/ files. OpenClaude does not
// read CLAUDE_CONFIG_DIR (it keeps its config apart from Claude Code's), so neither does this
// reader. Its early versions read CLAUDE_CONFIG_DIR and, while ~/.openclaude did not exist yet,
// kept writing to ~/.claude: those transcripts are in Claude Code's directory, and package
// claudecode reads them as Claude Code's (nothing in a line tells the two apart).
//
// # Token accounting
//
// The lines are Claude Code's, with the usage OpenClaude's shim wrote into the Anthropic-shaped
// message it builds from an OpenAI-compatible response (cacheMetrics.ts,
// buildAnthropicUsageFromRawUsage, in the current source):
//
//	input_tokens                 the prompt net of the cached part (prompt_tokens or
//	                             input_tokens minus the cached tokens)
//	cache_read_input_tokens      the cached part (prompt_tokens_details.cached_tokens,
//	                             input_tokens_details.cached_tokens, Kimi's cached_tokens,
//	                             DeepSeek's prompt_cache_hit_tokens, Gemini's
//	                             cached_content_token_count)
//	cache_creation_input_tokens  0 (OpenAI-compatible APIs report no cache writes)
//	output_tokens                completion_tokens or output_tokens: reasoning included
//
// which are observer's buckets (Input, CacheRead, CacheCreation, Output), read by claudecode as it
// reads Claude Code's. One token_usage event per model message (the shim's message id,
// msg_<uuid hex>, random per response), priced from the pricing table for the model named (an
// OpenAI-compatible model name: gpt-5, deepseek-chat, a local model the table does not price is
// "unknown" at cost 0). Reliability is "unreliable" as for Claude Code: the same code writes one
// line per content block with the usage streamed so far. Older versions differ: the first wrote
// prompt_tokens as input_tokens and no cache read (the whole prompt counted as input, which is the
// bill without a cache discount), and some later ones wrote prompt_tokens as input_tokens and the
// cached part again as cache_read_input_tokens (the cached part counted twice); a line does not
// say which version wrote it, so such transcripts are read as written.
//
// # Events
//
// Events and their ids are claudecode's, with client "openclaude": the ids are derived from the
// message, tool-use and line ids as claudecode derives them (its client name included), so a
// transcript copied between ~/.claude and ~/.openclaude is the same facts, stored once under
// whichever client was stored first. Errors of malformed lines name openclaude.
package openclaude

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.OpenClaude

// EnvConfigDir is the variable OpenClaude reads for its config home (default ~/.openclaude).
const EnvConfigDir = "OPENCLAUDE_CONFIG_DIR"

// Adapter reads OpenClaude's transcripts with package claudecode's reader.
type Adapter struct {
	// Roots are "projects" directories: ~/.openclaude/projects, $OPENCLAUDE_CONFIG_DIR/projects.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given projects directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns OpenClaude's projects directory: $OPENCLAUDE_CONFIG_DIR/projects, else
// ~/.openclaude/projects (the same on macOS).
func DefaultRoots() []string {
	dir := transcript.ExpandHome(strings.TrimSpace(os.Getenv(EnvConfigDir)))
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".openclaude")
	}
	return []string{filepath.Join(dir, "projects")}
}

// WatchDirs lists the directories to watch: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// inner is claudecode's adapter over the same roots and prices.
func (a *Adapter) inner() *claudecode.Adapter {
	return &claudecode.Adapter{Roots: a.Roots, Prices: a.Prices, CurrentPrices: a.CurrentPrices}
}

// Discover lists the transcripts as claudecode lists them, named openclaude's.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	srcs, err := a.inner().Discover()
	for i := range srcs {
		srcs[i].Client = Client
	}
	return srcs, err
}

// NewParser returns claudecode's parser for one transcript, its events named openclaude's.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	src.Client = Client
	p, err := a.inner().NewParser(src, state)
	if err != nil {
		return nil, err
	}
	return &Parser{inner: p}, nil
}

// Parser is claudecode's parser with the client renamed.
type Parser struct {
	inner transcript.Parser
}

// claudeMalformed starts the message of claudecode's malformed-line errors.
var claudeMalformed = transcript.ErrMalformed.Error() + ": " + claudecode.Client + ": "

// Record parses one line as claudecode does and names its events and errors openclaude's.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	evs, err := p.inner.Record(off, line)
	for i := range evs {
		evs[i].Client = Client
	}
	if err != nil {
		if msg, ok := strings.CutPrefix(err.Error(), claudeMalformed); ok {
			err = transcript.Malformed(Client, "%s", msg)
		}
	}
	return evs, err
}

// State returns claudecode's state.
func (p *Parser) State() []byte { return p.inner.State() }

// Stats returns claudecode's counts.
func (p *Parser) Stats() transcript.Stats { return p.inner.Stats() }
