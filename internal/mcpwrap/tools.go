package mcpwrap

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// onInitialize notes the server's name and, when the server declares no tools capability, adds one
// so that the client lists the trace tools. Any other answer passes unchanged.
func (p *Proxy) onInitialize(m *jsonrpc.Response, line []byte) []byte {
	if m.Error != nil {
		return line
	}
	var res struct {
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return line
	}
	p.mu.Lock()
	if p.opts.Name == "" && res.ServerInfo.Name != "" {
		p.server = res.ServerInfo.Name
	}
	p.mu.Unlock()
	if _, ok := res.Capabilities["tools"]; ok || len(p.visibleTraceTools()) == 0 {
		return line
	}
	caps, err := setKey(orEmpty(res.Capabilities), "tools", []byte("{}"))
	if err != nil {
		return line
	}
	result, err := setKey(m.Result, "capabilities", caps)
	if err != nil {
		return line
	}
	p.mu.Lock()
	p.noTools = true
	p.mu.Unlock()
	return p.encode(m.ID, result, line)
}

func orEmpty(caps map[string]json.RawMessage) json.RawMessage {
	if caps == nil {
		return json.RawMessage("{}")
	}
	b, _ := json.Marshal(caps)
	return b
}

// answersToolsList reports whether the proxy answers tools/list itself: the server has no tools.
func (p *Proxy) answersToolsList() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.noTools
}

// ownToolsList is the tools/list answer for a server without tools: the trace tools.
func (p *Proxy) ownToolsList(later bool) map[string]any {
	tools := []json.RawMessage{}
	if !later {
		tools = p.visibleTraceTools()
	}
	return map[string]any{"tools": tools}
}

// onToolsList removes hidden tools and those past MaxTools from the server's answer, and appends
// the trace tools to its last page. The tool objects the proxy keeps are the server's bytes.
func (p *Proxy) onToolsList(c *call, m *jsonrpc.Response, line []byte) []byte {
	if m.Error != nil {
		return line
	}
	var res struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return line
	}
	kept := make([]json.RawMessage, 0, len(res.Tools)+len(traceTools))
	p.mu.Lock()
	if !c.cursor {
		p.listed = 0
		clear(p.capped)
		clear(p.serverSet)
	}
	for _, raw := range res.Tools {
		var t struct {
			Name string `json:"name"`
		}
		json.Unmarshal(raw, &t)
		p.serverSet[t.Name] = true
		switch {
		case p.hide[t.Name]:
		case p.opts.MaxTools > 0 && p.listed >= p.opts.MaxTools:
			p.capped[t.Name] = true
		default:
			p.listed++
			kept = append(kept, raw)
		}
	}
	changed := len(kept) != len(res.Tools)
	p.mu.Unlock()
	if res.NextCursor == "" {
		if own := p.visibleTraceTools(); len(own) > 0 {
			kept = append(kept, own...)
			changed = true
		}
	}
	if !changed {
		return line
	}
	list, err := json.Marshal(kept)
	if err != nil {
		return line
	}
	result, err := setKey(m.Result, "tools", list)
	if err != nil {
		return line
	}
	return p.encode(m.ID, result, line)
}

// encode makes a response line with result, or returns fallback when that fails.
func (p *Proxy) encode(id jsonrpc.ID, result json.RawMessage, fallback []byte) []byte {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
	if err != nil {
		p.log.Error("encode a rewritten answer; relaying the server's", "err", err)
		return fallback
	}
	return data
}

// visibleTraceTools returns the definitions of the trace tools that are neither hidden nor shadowed
// by a server tool of the same name.
func (p *Proxy) visibleTraceTools() []json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []json.RawMessage
	for _, t := range traceTools {
		if !p.hide[t.name] && !p.serverSet[t.name] {
			out = append(out, t.def)
		}
	}
	return out
}

// refused reports whether a tools/call of name must be refused: hidden, or cut by MaxTools.
func (p *Proxy) refused(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hide[name] || p.capped[name]
}

// isTraceCall reports whether the proxy answers a tools/call of name itself.
func (p *Proxy) isTraceCall(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.serverSet[name] {
		return false
	}
	for _, t := range traceTools {
		if t.name == name {
			return true
		}
	}
	return false
}

// setKey returns the JSON object obj with key set to val, keeping the order and the bytes of the
// other members; a missing key is appended.
func setKey(obj json.RawMessage, key string, val json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	found, n := false, 0
	for ; dec.More(); n++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k == key {
			v, found = val, true
		}
		writeMember(&buf, n, k, v)
	}
	if !found {
		writeMember(&buf, n, key, val)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeMember(buf *bytes.Buffer, n int, k string, v json.RawMessage) {
	if n > 0 {
		buf.WriteByte(',')
	}
	kb, _ := json.Marshal(k)
	buf.Write(kb)
	buf.WriteByte(':')
	buf.Write(v)
}
