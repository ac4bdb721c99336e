package compress

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Modes of request compression.
const (
	// ModeCacheAware (the default) never drops a message and compresses only the tool outputs the
	// upstream has not seen yet (those after the model's last turn): the prefix the upstream
	// cached is sent again byte for byte.
	ModeCacheAware = "cache_aware"
	// ModeCache compresses like ModeCacheAware, and when the body is still over the target drops
	// messages after the last cache breakpoint the client set outside the preserved tail, placing
	// a breakpoint of its own where the kept prefix ends (never more than four in all).
	ModeCache = "cache"
	// ModeToken compresses every tool output and drops messages anywhere but the system prompt
	// and the preserved tail: fewest tokens, prompt caching not considered.
	ModeToken = "token"
)

// Modes lists the modes.
var Modes = []string{ModeCacheAware, ModeCache, ModeToken}

// Mechanisms besides the content kinds.
const (
	MechDrop     = "drop"      // messages dropped and replaced by one marker
	MechToolTrim = "tool_trim" // tool descriptions shortened
)

// Options configure a Compressor. The zero value of a field takes its default.
type Options struct {
	Mode string // ModeCacheAware when empty
	// TargetRatio is the share of the original body's bytes the drop pass aims for (0.5).
	TargetRatio float64
	// PreserveTail is the number of last messages never dropped (4).
	PreserveTail int
	// Kinds are the content compressors in use (all when nil).
	Kinds []Kind
	// MinBytes is the smallest tool output compressed (1024).
	MinBytes int
	// TrimTools shortens tool descriptions: "openai" (the default: Chat and Responses), "all"
	// (Anthropic too) or "off".
	TrimTools string
	// Stash marks each compressed output with the id its original is stashed under (Result's
	// decisions carry the original).
	Stash bool
	// Memory is the number of tool outputs whose first decision is remembered (200,000).
	Memory int
}

// Defaults.
const (
	DefaultTargetRatio  = 0.5
	DefaultPreserveTail = 4
	DefaultMinBytes     = 1024
	DefaultMemory       = 200_000
)

// Decision is one change made to a request.
type Decision struct {
	Mechanism string // a Kind, MechDrop or MechToolTrim
	Index     int    // the message (input item) it applies to; the first of a dropped run
	Count     int    // messages dropped (drop), descriptions shortened (tool_trim), else 1
	Before    int    // bytes of the text before
	After     int    // bytes after (a drop: the marker's)
	Score     float64
	StashID   string // with Options.Stash: the id of the original
	Original  string // with Options.Stash, the first time an output is compressed: the original
	// Repeat marks an output compressed the same way in an earlier request: in cache_aware and
	// cache modes the upstream reads it from its cache, so it saves cache reads, not input.
	Repeat bool
}

// Result is a compressed request.
type Result struct {
	Body      []byte // the body to send (the original when nothing changed)
	Decisions []Decision
	Model     string
	Messages  int
}

// Saved is the number of bytes the request lost.
func (r *Result) Saved(original int) int { return original - len(r.Body) }

// Compressor compresses request bodies. It remembers, for each tool output it has seen, whether
// it compressed it: an output sent once as it came is never compressed in a later request, and
// one compressed is compressed the same way in every later request. It is safe for concurrent use.
type Compressor struct {
	opt   Options
	kinds map[Kind]bool

	mu    sync.Mutex
	seen  map[[16]byte]bool // output → compressed
	order [][16]byte        // insertion order, to forget the oldest
}

// New makes a Compressor; it reports an unknown mode, kind or trim setting.
func New(opt Options) (*Compressor, error) {
	if opt.Mode == "" {
		opt.Mode = ModeCacheAware
	}
	if !slices.Contains(Modes, opt.Mode) {
		return nil, fmt.Errorf("compress: unknown mode %q (want one of %s)", opt.Mode, strings.Join(Modes, ", "))
	}
	if opt.TargetRatio <= 0 || opt.TargetRatio > 1 {
		opt.TargetRatio = DefaultTargetRatio
	}
	if opt.PreserveTail <= 0 {
		opt.PreserveTail = DefaultPreserveTail
	}
	if opt.MinBytes <= 0 {
		opt.MinBytes = DefaultMinBytes
	}
	if opt.Memory <= 0 {
		opt.Memory = DefaultMemory
	}
	switch opt.TrimTools {
	case "":
		opt.TrimTools = "openai"
	case "openai", "all", "off":
	default:
		return nil, fmt.Errorf("compress: trim_tools %q: want openai, all or off", opt.TrimTools)
	}
	c := &Compressor{opt: opt, kinds: map[Kind]bool{}, seen: map[[16]byte]bool{}}
	if opt.Kinds == nil {
		opt.Kinds = Kinds
	}
	for _, k := range opt.Kinds {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("compress: unknown compressor %q", k)
		}
		c.kinds[k] = true
	}
	return c, nil
}

// Mode returns the mode in use.
func (c *Compressor) Mode() string { return c.opt.Mode }

// edit replaces body[start:end] with text.
type edit struct {
	start, end int
	text       []byte
}

// Request compresses one request body of api. A body it cannot read is returned unchanged with
// the error; a body it reads is never made invalid (the tests check every mode on thousands).
func (c *Compressor) Request(api string, body []byte) (*Result, error) {
	res := &Result{Body: body}
	r, err := parse(api, body)
	if err != nil {
		return res, err
	}
	res.Model, res.Messages = r.model, len(r.msgs)
	lastModel := -1
	for i, m := range r.msgs {
		if m.model {
			lastModel = i
		}
	}
	uses := map[string]call{}
	for _, m := range r.msgs {
		for _, u := range m.calls {
			uses[u.id] = u
		}
	}
	var edits []edit
	for i, m := range r.msgs {
		fresh := i > lastModel
		for _, s := range m.sites {
			text, d, ok := c.output(s, uses[s.id], fresh)
			if !ok {
				continue
			}
			d.Index = i
			res.Decisions = append(res.Decisions, d)
			edits = append(edits, edit{s.start, s.end, jsonString(text)})
		}
	}
	if c.opt.TrimTools == "all" || (c.opt.TrimTools == "openai" && api != APIAnthropic) {
		if d, es := trimTools(r); len(es) > 0 {
			res.Decisions = append(res.Decisions, d)
			edits = append(edits, es...)
		}
	}
	if c.opt.Mode != ModeCacheAware {
		size := len(body)
		for _, e := range edits {
			size += len(e.text) - (e.end - e.start)
		}
		if budget := int(float64(len(body)) * c.opt.TargetRatio); size > budget {
			var ds []Decision
			edits, ds = c.drop(r, edits, size-budget)
			res.Decisions = append(res.Decisions, ds...)
		}
	}
	if len(edits) == 0 {
		return res, nil
	}
	res.Body = apply(body, edits)
	return res, nil
}

// output decides one tool output: compressed (ok) or left as it came.
func (c *Compressor) output(s site, u call, fresh bool) (string, Decision, bool) {
	if len(s.text) < c.opt.MinBytes {
		return "", Decision{}, false
	}
	key := outputKey(s)
	c.mu.Lock()
	compressed, seen := c.seen[key]
	c.mu.Unlock()
	if c.opt.Mode != ModeToken {
		switch {
		case seen && !compressed:
			return "", Decision{}, false
		case !seen && !fresh:
			// Sent before this proxy saw it (or before compression was on): the upstream may hold
			// it in its cache as it is.
			c.remember(key, false)
			return "", Decision{}, false
		}
	}
	// The kind the tool and path suggest first; when that compressor cannot read the output (a
	// .json file cut short by the client, say), the kind the content alone suggests, then text.
	var kind Kind
	var out string
	ok := false
	for _, k := range []Kind{Detect(u.name, u.path, s.text), Detect("", "", s.text), KindText} {
		if k == kind || !c.kinds[k] {
			continue
		}
		kind = k
		if out, ok = Content(k, s.text); ok {
			break
		}
	}
	c.remember(key, ok)
	if !ok {
		return "", Decision{}, false
	}
	// Repeat: the same output compressed in an earlier request (its bytes are the same again).
	d := Decision{Mechanism: string(kind), Count: 1, Before: len(s.text), Repeat: seen && compressed}
	head := fmt.Sprintf("[observer compressed this %s output: %d → %d bytes", kind, len(s.text), len(out))
	if c.opt.Stash && len(s.text) <= MaxStashBytes {
		d.StashID = StashID(s.text)
		if !d.Repeat {
			d.Original = s.text // stashed once, with the first decision
		}
		head += "; the original is stashed as " + d.StashID + " (observer MCP tool retrieve_stashed)"
	}
	out = head + "]\n" + out
	if len(out) >= len(s.text) {
		return "", Decision{}, false
	}
	d.After = len(out)
	return out, d, true
}

// MaxStashBytes is the largest original stashed: an event must fit a bus message (8 MB) with room
// to spare. A larger output is compressed without a stash id.
const MaxStashBytes = 4 << 20

// StashID names the original of a compressed output: a function of the text alone.
func StashID(text string) string {
	h := sha256.Sum256([]byte(text))
	return "stash_" + hex.EncodeToString(h[:8])
}

// outputKey identifies one tool output: the call it answers and its text.
func outputKey(s site) [16]byte {
	h := sha256.New()
	h.Write([]byte(s.id))
	h.Write([]byte{0})
	h.Write([]byte(s.text))
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

func (c *Compressor) remember(k [16]byte, compressed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[k]; ok {
		return
	}
	c.seen[k] = compressed
	c.order = append(c.order, k)
	if len(c.order) > c.opt.Memory {
		n := len(c.order) / 4 // forget the oldest quarter at once, not one per insert
		for _, o := range c.order[:n] {
			delete(c.seen, o)
		}
		c.order = append([][16]byte(nil), c.order[n:]...)
	}
}

// jsonString encodes s as a JSON string, deterministically and without HTML escapes.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// apply makes the edits (which do not overlap) to body.
func apply(body []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	n := len(body)
	for _, e := range edits {
		n += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		out = append(out, body[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, body[at:]...)
}
