package openhands

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// maxUsageIDs bounds the usage ids a state keeps counts for.
const maxUsageIDs = 64

// stateState is a base_state.json parser's State: per usage id, the entries of its token_usages
// reported.
type stateState struct {
	Reported map[string]int `json:"reported,omitempty"`
}

// StateParser reads one conversation's base_state.json (a Document source): its usage.
type StateParser struct {
	src     transcript.Source
	session string
	prices  func() *pricing.Table
	st      stateState
	stats   transcript.Stats
	// times maps a response id to the time of the event it produced, from the event files read so
	// far (next: the index of the next one); first is the first event's time. Memory only: the
	// event files never change, so a fresh parser finds the same; scans keeps them for the
	// parsers made later for the same conversation (one per change of base_state.json), which
	// read only the files added since.
	times map[string]time.Time
	next  int
	first time.Time
	scans *scanCache
}

// maxScans is the number of conversations whose event files' times a scanCache keeps.
const maxScans = 16

// scanCache keeps, per events directory, the times its usage parsers read from its event files,
// for the newest maxScans directories read.
type scanCache struct {
	mu    sync.Mutex
	dirs  map[string]*eventScan
	order []string // least recently used first
}

type eventScan struct {
	times map[string]time.Time
	next  int
	first time.Time
}

// take returns what was read of dir's event files, nil when nothing is kept.
func (c *scanCache) take(dir string) *eventScan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dirs[dir]
}

// put keeps what was read of dir's event files.
func (c *scanCache) put(dir string, s *eventScan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs == nil {
		c.dirs = map[string]*eventScan{}
	}
	if i := slices.Index(c.order, dir); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
	c.order = append(c.order, dir)
	c.dirs[dir] = s
	for len(c.order) > maxScans {
		delete(c.dirs, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
}

func newStateParser(src transcript.Source, raw []byte, prices func() *pricing.Table) *StateParser {
	p := &StateParser{src: src, session: sessionOf(src), prices: prices, times: map[string]time.Time{}}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st)
	}
	return p
}

// State returns the counts reported, as JSON.
func (p *StateParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the reads of the document.
func (p *StateParser) Stats() transcript.Stats { return p.stats.Clone() }

type baseState struct {
	Agent struct {
		LLM struct {
			Model string `json:"model"`
		} `json:"llm"`
	} `json:"agent"`
	Workspace struct {
		WorkingDir string `json:"working_dir"`
	} `json:"workspace"`
	Stats struct {
		UsageToMetrics map[string]struct {
			ModelName   string       `json:"model_name"`
			TokenUsages []tokenUsage `json:"token_usages"`
		} `json:"usage_to_metrics"`
	} `json:"stats"`
}

type tokenUsage struct {
	Model            string `json:"model"`
	PromptTokens     count  `json:"prompt_tokens"`
	CompletionTokens count  `json:"completion_tokens"`
	CacheReadTokens  count  `json:"cache_read_tokens"`
	CacheWriteTokens count  `json:"cache_write_tokens"`
	ReasoningTokens  count  `json:"reasoning_tokens"`
	ResponseID       string `json:"response_id"`
}

// count reads a token count (transcript.Count: a number or numeric string; else 0).
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	*c = count(transcript.Count(b))
	return nil
}

// tokens are an entry's figures in observer's buckets (see the package doc).
func (u *tokenUsage) tokens() event.Tokens {
	prompt, read, write := int64(u.PromptTokens), int64(u.CacheReadTokens), int64(u.CacheWriteTokens)
	in := prompt - read - write
	if in < 0 {
		in = prompt // the cache figures are beside the prompt, not inside it
	}
	out := int64(u.CompletionTokens)
	return event.Tokens{Input: in, Output: out, CacheRead: read, CacheCreation: write, Reasoning: min(int64(u.ReasoningTokens), out)}
}

// Record reads the whole base_state.json and emits the usage entries not reported yet.
func (p *StateParser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var bs baseState
	if err := transcript.DecodeDocument(raw, &bs); err != nil {
		return nil, err
	}
	proj := ""
	if cwd := strings.TrimSpace(bs.Workspace.WorkingDir); cwd != "" && utf8Path(cwd) && filepath.IsAbs(cwd) {
		proj = project.Root(filepath.Clean(cwd))
	}
	ids := make([]string, 0, len(bs.Stats.UsageToMetrics))
	for id := range bs.Stats.UsageToMetrics {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) > maxUsageIDs {
		p.stats.CountUnknown("usage ids beyond the limit")
		ids = ids[:maxUsageIDs]
	}
	next := map[string]int{}
	for _, uid := range ids {
		m := bs.Stats.UsageToMetrics[uid]
		from := p.st.Reported[uid]
		if from > len(m.TokenUsages) {
			from = 0 // the list was reset: report it again, under the same ids
		}
		if len(m.TokenUsages) > from {
			p.scanEvents()
		}
		var prev time.Time
		for i := range m.TokenUsages {
			u := &m.TokenUsages[i]
			at, ok := p.times[u.ResponseID]
			if !ok || u.ResponseID == "" {
				at = prev
			}
			if at.IsZero() {
				at = p.first
			}
			prev = at
			if i < from {
				continue
			}
			if at.IsZero() {
				p.stats.CountUnknown("usage without time")
				continue
			}
			model := transcript.CutRunes(strings.TrimSpace(transcript.FirstNonEmpty(u.Model, m.ModelName, bs.Agent.LLM.Model)), 200)
			key := transcript.FirstNonEmpty(u.ResponseID, "#"+strconv.Itoa(i))
			tu := transcript.PricedUsage(p.prices(), model, transcript.CutBytes(u.ResponseID, 200), u.tokens(), 0, at)
			if tu == nil {
				continue
			}
			ev := event.Event{ID: event.ID(Client, "usage", p.session, uid, key), Kind: event.KindTokenUsage, Time: at, Source: Component,
				Client: Client, SessionID: p.session, Project: proj, V: event.SchemaVersion, TokenUsage: tu}
			evs = append(evs, ev)
		}
		next[uid] = len(m.TokenUsages)
	}
	p.st.Reported = next
	return evs, nil
}

// scanEvents reads the event files not read yet for the responses' times.
func (p *StateParser) scanEvents() {
	dir := filepath.Join(filepath.Dir(p.src.Path), EventsDirName)
	if p.scans != nil {
		if s := p.scans.take(dir); s != nil && s.next > p.next {
			p.times, p.next, p.first = s.times, s.next, s.first
		}
		defer func() { p.scans.put(dir, &eventScan{times: p.times, next: p.next, first: p.first}) }()
	}
	files, last, err := eventFiles(dir, p.next)
	if err != nil {
		return
	}
	var prev time.Time
	for i := p.next; i <= last; i++ {
		name, ok := files[i]
		if !ok {
			j := pastGap(dir, files, i)
			if j < 0 {
				break
			}
			i, name = j, files[j]
		}
		data, err := readSmall(filepath.Join(dir, name))
		var ev struct {
			Timestamp     string `json:"timestamp"`
			LLMResponseID string `json:"llm_response_id"`
		}
		if err != nil || json.Unmarshal(data, &ev) != nil {
			if i == last {
				break // being written: read it next time
			}
			p.next = i + 1
			continue
		}
		at, ok := parseTimestamp(ev.Timestamp)
		if !ok {
			at = prev
		}
		prev = at
		if p.first.IsZero() {
			p.first = at
		}
		if id := ev.LLMResponseID; id != "" && !at.IsZero() {
			if _, seen := p.times[id]; !seen {
				p.times[id] = at
			}
		}
		p.next = i + 1
	}
}
