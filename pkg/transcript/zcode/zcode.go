// Package zcode reads the usage Zhipu's ZCode (client "zcode", the Z.ai coding agent; command
// `zcode`) keeps in its SQLite database into observer events, following the transcript contract
// for a Database source. ZCode does not run here (it needs Z.ai's servers and sign-in), so the
// reader is tested on a database written here with the tables and columns the published readers
// of other tools query: agentsview (kenn-io/agentsview internal/parser/zcode.go), and two
// independent usage collectors, one in Rust and one in Python, both reading
// ~/.zcode/cli/db/db.sqlite's model_usage. Facts only; no code of theirs. ccusage 20.x has no
// ZCode reader.
//
// # Files
//
// One database, ~/.zcode/cli/db/db.sqlite (the same under the home directory on macOS; the
// published readers know no other place, and no environment variable of ZCode's that moves it),
// written by ZCode in WAL mode while it runs and read here read-only (package sqliteread).
// $OBSERVER_ZCODE_DIRS, a list of directories separated by the OS path list separator, each
// holding a db.sqlite (or a db/db.sqlite), replaces the default for this reader. Tables read:
//
//	model_usage  one row per model call: session_id, turn_id, provider_id, model_id, status
//	             ("completed" for a finished call), input_tokens, output_tokens,
//	             reasoning_tokens, cache_creation_input_tokens, cache_read_input_tokens,
//	             provider_total_tokens, computed_total_tokens, started_at and completed_at (unix
//	             ms), duration_ms, query_source; the cache and reasoning columns are absent from
//	             older databases and read as 0
//	session      id, parent_id (a subagent's session names its parent), directory, title,
//	             time_created
//
// Not read: message and part (the conversation, JSON blobs whose shape the published readers do
// not agree on: they try several key names for each field, so no tool call, prompt or message can
// be read from them with confidence), turn_usage and tool_usage (turn and tool timings). This
// reader therefore emits usage and sessions only: no actions and no messages.
//
// # Token accounting
//
// A model_usage row is one API call's usage as ZCode recorded it, in Anthropic's naming (ZCode
// reaches GLM through Z.ai's Anthropic-compatible API). What includes what:
//
//	input_tokens                 the prompt NET of the cache: the cache figures are their own
//	                             columns, which every published reader adds beside it and none
//	                             subtracts from it
//	cache_read_input_tokens      the part read from the cache
//	cache_creation_input_tokens  the part written to it
//	output_tokens                the answer; reasoning_tokens is taken as part of it (as
//	                             Anthropic's output_tokens holds the thinking), not added to it
//	provider_total_tokens        the API's total, else computed_total_tokens: not used
//
// so Input = input_tokens, CacheRead = cache_read_input_tokens, CacheCreation =
// cache_creation_input_tokens, Output = output_tokens, Reasoning = min(reasoning_tokens,
// output_tokens). Only rows of status "completed" count (the published readers agree on that
// filter). One token_usage event per row, id event.ID(client, "usage", session, turn_id,
// started_at, model_id, completed_at) (what a row keeps through a VACUUM, unlike its rowid),
// MessageID the turn id, priced from the pricing table at the call's start, "approximate";
// "unknown" at cost 0 for a model the table does not price. A subagent's session (parent_id set)
// is counted under its root session with its own id as AgentID. ZCode's traffic goes to Z.ai's
// endpoints with its own login: no base-URL setting for the proxy is published, so the proxy does
// not see it.
//
// # Sessions and re-reads
//
// The session is model_usage.session_id, or the root of its parent_id chain; its directory the
// root's directory (project.Root of it the project). Each session a pass reads rows of yields a
// started session event (at time_created, else its first call), a title event when it has a title,
// and one session event per model. State is a watermark: the rowid of the last model_usage row
// read that can no longer change (its status is final, or it was started more than six hours
// before the newest row); a pass reads the rows after it, so a call recorded before it finished
// is read again until it has, under the same ids. A database that is locked or changing while read
// fails the pass (sqliteread), which leaves State as it was.
package zcode

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names.
const Client = client.ZCode

// EnvDirs replaces the default database directory (observer's variable; ZCode honours none known).
const EnvDirs = "OBSERVER_ZCODE_DIRS"

// DBName is the database's file name.
const DBName = "db.sqlite"

// Adapter reads ZCode's database.
type Adapter struct {
	// Roots are directories holding db.sqlite (or db/db.sqlite).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the databases in the given directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the directories in $OBSERVER_ZCODE_DIRS when it is set, else
// ~/.zcode/cli/db (the same on macOS).
func DefaultRoots() []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".zcode", "cli", "db")}
}

// WatchDirs lists the directories the databases are in.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, r := range a.Roots {
		out = append(out, r, filepath.Join(r, "db"))
	}
	return out
}

// Discover lists the databases: <root>/db.sqlite, else <root>/db/db.sqlite. A missing one is not
// an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	seen := map[string]bool{}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		for _, p := range []string{filepath.Join(abs, DBName), filepath.Join(abs, "db", DBName)} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				if !seen[p] {
					seen[p] = true
					out = append(out, transcript.Source{Client: Client, Path: p, Database: true})
				}
				break
			}
		}
	}
	return out, nil
}

// NewParser returns a parser (a transcript.Poller) for one database.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices)), nil
}
