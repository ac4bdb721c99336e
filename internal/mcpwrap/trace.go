package mcpwrap

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

type traceTool struct {
	name string
	def  json.RawMessage // the tools/list entry; kept short, since agents pay for every byte of it
}

// traceTools are the tools the proxy adds to the server's, in the order it lists them.
var traceTools = []traceTool{
	{"observer_trace_history", json.RawMessage(`{"name":"observer_trace_history","description":"This session's calls to this MCP server through observer, newest first: tool, duration, sizes, hashes, error.","inputSchema":{"type":"object","properties":{"tool":{"type":"string","description":"Only calls of this tool"},"errors":{"type":"boolean","description":"Only failed calls"},"limit":{"type":"integer","description":"Most calls returned (default 20, max 200)"}}},"annotations":{"readOnlyHint":true}}`)},
	{"observer_trace_stats", json.RawMessage(`{"name":"observer_trace_stats","description":"Per-tool counts, errors, p50/p95 duration, bytes and token estimates of this session's calls to this MCP server.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true}}`)},
	{"observer_trace_search", json.RawMessage(`{"name":"observer_trace_search","description":"This session's calls to this MCP server whose tool, error, request id or hash contains the text (payloads too when observer keeps them).","inputSchema":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","description":"Most calls returned (default 20, max 200)"}},"required":["query"]},"annotations":{"readOnlyHint":true}}`)},
	{"observer_trace_replay", json.RawMessage(`{"name":"observer_trace_replay","description":"Run a call from observer_trace_history again (side effects included) and say whether the result's hash matches the original's.","inputSchema":{"type":"object","properties":{"seq":{"type":"integer","description":"The call's seq"}},"required":["seq"]}}`)},
}

type traceArgs struct {
	Tool   string `json:"tool"`
	Errors bool   `json:"errors"`
	Limit  int    `json:"limit"`
	Query  string `json:"query"`
	Seq    *int64 `json:"seq"`
}

// traceCall answers a tools/call of a trace tool.
func (p *Proxy) traceCall(id jsonrpc.ID, name string, raw json.RawMessage) {
	var a traceArgs
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &a); err != nil {
			p.reply(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid arguments for %s: %v", name, err))
			return
		}
	}
	if a.Limit <= 0 {
		a.Limit = 20
	}
	a.Limit = min(a.Limit, 200)
	var out any
	var soft string // a tool error: reported in the result with isError, as MCP asks
	switch name {
	case "observer_trace_history":
		out = p.traceHistory(a)
	case "observer_trace_stats":
		out = p.traceStats()
	case "observer_trace_search":
		if strings.TrimSpace(a.Query) == "" {
			p.reply(id, jsonrpc.CodeInvalidParams, "observer_trace_search needs a non-empty query")
			return
		}
		out = p.traceSearch(a)
	case "observer_trace_replay":
		if a.Seq == nil {
			p.reply(id, jsonrpc.CodeInvalidParams, "observer_trace_replay needs the seq of a call (see observer_trace_history)")
			return
		}
		out, soft = p.traceReplay(*a.Seq)
	}
	text := soft
	if soft == "" {
		b, err := json.Marshal(out)
		if err != nil {
			p.reply(id, jsonrpc.CodeInternalError, err.Error())
			return
		}
		text = string(b)
	}
	res := map[string]any{"content": []map[string]string{{"type": "text", "text": text}}}
	if soft != "" {
		res["isError"] = true
	}
	p.respond(id, res)
}

// newest returns the kept calls that keep accepts, newest first, at most limit.
func (p *Proxy) newest(limit int, keep func(*Call) bool) []*Call {
	all := p.hist.snapshot()
	out := []*Call{}
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		if keep(all[i]) {
			out = append(out, all[i])
		}
	}
	return out
}

type traceList struct {
	Calls      []*Call `json:"calls"`
	Session    int64   `json:"session_calls"` // calls recorded by this wrap process
	Kept       int     `json:"kept"`          // of which the trace tools still know
	RawPayload bool    `json:"raw_payloads"`
}

func (p *Proxy) list(calls []*Call) traceList {
	return traceList{Calls: calls, Session: p.seq.Load(), Kept: len(p.hist.snapshot()), RawPayload: p.opts.RawPayloads}
}

func (p *Proxy) traceHistory(a traceArgs) traceList {
	return p.list(p.newest(a.Limit, func(c *Call) bool {
		return (a.Tool == "" || c.Tool == a.Tool) && (!a.Errors || c.Error != "")
	}))
}

func (p *Proxy) traceSearch(a traceArgs) traceList {
	q := strings.ToLower(a.Query)
	return p.list(p.newest(a.Limit, func(c *Call) bool {
		for _, s := range []string{c.Tool, c.Error, c.RequestID, c.InputHash, c.OutputHash, c.Input, c.Output} {
			if s != "" && strings.Contains(strings.ToLower(s), q) {
				return true
			}
		}
		return false
	}))
}

type toolStats struct {
	Tool          string  `json:"tool"`
	Calls         int     `json:"calls"`
	Errors        int     `json:"errors"`
	P50Ms         float64 `json:"p50_ms"`
	P95Ms         float64 `json:"p95_ms"`
	MaxMs         float64 `json:"max_ms"`
	InputBytes    int64   `json:"input_bytes"`
	OutputBytes   int64   `json:"output_bytes"`
	TokenEstimate int64   `json:"token_estimate"`
	durations     []float64
}

type traceStatsOut struct {
	Server  string       `json:"server"`
	Calls   int          `json:"calls"`
	Errors  int          `json:"errors"`
	Tokens  int64        `json:"token_estimate"`
	Session int64        `json:"session_calls"`
	Tools   []*toolStats `json:"tools"`
}

// traceStats sums the kept calls per tool, most called first.
func (p *Proxy) traceStats() traceStatsOut {
	by := map[string]*toolStats{}
	out := traceStatsOut{Server: p.serverName(), Session: p.seq.Load(), Tools: []*toolStats{}}
	for _, c := range p.hist.snapshot() {
		s := by[c.Tool]
		if s == nil {
			s = &toolStats{Tool: c.Tool}
			by[c.Tool] = s
			out.Tools = append(out.Tools, s)
		}
		s.Calls++
		out.Calls++
		if c.Error != "" {
			s.Errors++
			out.Errors++
		}
		s.InputBytes += c.InputBytes
		s.OutputBytes += c.OutputBytes
		s.TokenEstimate += c.TokenEstimate
		out.Tokens += c.TokenEstimate
		s.durations = append(s.durations, c.DurationMs)
	}
	for _, s := range out.Tools {
		slices.Sort(s.durations)
		s.P50Ms, s.P95Ms, s.MaxMs = quantile(s.durations, .5), quantile(s.durations, .95), s.durations[len(s.durations)-1]
	}
	slices.SortStableFunc(out.Tools, func(a, b *toolStats) int { return b.Calls - a.Calls })
	return out
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

type replayOut struct {
	Seq                 int64   `json:"seq"`
	ReplayOf            int64   `json:"replay_of"`
	Tool                string  `json:"tool"`
	Match               bool    `json:"match"`
	OutputHash          string  `json:"output_hash"`
	OriginalOutputHash  string  `json:"original_output_hash"`
	OutputBytes         int64   `json:"output_bytes"`
	OriginalOutputBytes int64   `json:"original_output_bytes"`
	DurationMs          float64 `json:"duration_ms"`
	OriginalDurationMs  float64 `json:"original_duration_ms"`
	Error               string  `json:"error,omitempty"`
}

// traceReplay sends a kept call to the server again, as the proxy's own request, and compares the
// result's hash with the original's. The wait is bounded by the call timeout and the server's exit,
// which answer the proxy's own requests like the client's.
func (p *Proxy) traceReplay(seq int64) (any, string) {
	orig := p.hist.get(seq)
	if orig == nil {
		return nil, fmt.Sprintf("no call with seq %d in this session (the last %d calls are kept; see observer_trace_history)", seq, p.opts.History)
	}
	if orig.args == nil && orig.InputBytes > 0 {
		return nil, fmt.Sprintf("call %d cannot be replayed: its arguments (%d bytes) are larger than the %d kept for replay", seq, orig.InputBytes, MaxReplayBytes)
	}
	id, _ := jsonrpc.MakeID(fmt.Sprintf("observer-wrap-%s-%d", p.instance, p.ownSeq.Add(1)))
	params, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}{orig.Tool, orig.args})
	if err != nil {
		return nil, err.Error()
	}
	line, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: "tools/call", Params: params})
	if err != nil {
		return nil, err.Error()
	}
	c := &call{id: id, method: "tools/call", start: time.Now(), tool: orig.Tool, args: orig.args,
		own: make(chan *jsonrpc.Response, 1), replayOf: seq}
	if code, msg := p.track(c); code != 0 {
		return nil, msg
	}
	p.toServer.write(line)
	resp := <-c.own
	rc := p.record(c, resp, "", time.Since(c.start))
	return replayOut{Seq: rc.Seq, ReplayOf: seq, Tool: rc.Tool,
		Match:      rc.OutputHash != "" && rc.OutputHash == orig.OutputHash,
		OutputHash: rc.OutputHash, OriginalOutputHash: orig.OutputHash,
		OutputBytes: rc.OutputBytes, OriginalOutputBytes: orig.OutputBytes,
		DurationMs: rc.DurationMs, OriginalDurationMs: orig.DurationMs, Error: rc.Error}, ""
}
