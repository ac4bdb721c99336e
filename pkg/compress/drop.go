package compress

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/jsonscan"
)

// unit is a run of messages that can be dropped together without breaking the conversation:
// every tool call in it is answered in it, and the messages around it still follow each other
// as the API wants (for the Messages API an assistant message and the user message after it, so
// that user and assistant still alternate).
type unit struct {
	first, last int
	score       float64
	size        int // bytes, after the edits already made inside it
}

// units lists the droppable units of a request, oldest first.
func (r *request) units() []unit {
	var us []unit
	n := len(r.msgs)
	answered := func(first, last int) bool {
		open := map[string]bool{}
		for _, m := range r.msgs[first : last+1] {
			for _, c := range m.calls {
				open[c.id] = true
			}
		}
		for _, m := range r.msgs[first : last+1] {
			for _, a := range m.answers {
				if !open[a] {
					return false // answers a call outside the unit
				}
				delete(open, a)
			}
		}
		return len(open) == 0
	}
	switch r.api {
	case APIAnthropic:
		for i := 1; i+1 < n; i++ {
			if r.msgs[i].role != "assistant" || r.msgs[i-1].role != "user" || r.msgs[i+1].role != "user" ||
				(i+2 < n && r.msgs[i+2].role != "assistant") || !answered(i, i+1) {
				continue
			}
			us = append(us, unit{first: i, last: i + 1})
			i++
		}
	case APIChat:
		for i := 0; i < n; i++ {
			if r.msgs[i].role != "assistant" {
				continue
			}
			j := i + 1
			for j < n && r.msgs[j].role == "tool" {
				j++
			}
			if answered(i, j-1) {
				us = append(us, unit{first: i, last: j - 1})
			}
			i = j - 1
		}
	case APIResponses:
		for i := 0; i < n; {
			if !r.msgs[i].model {
				i++
				continue
			}
			open := 0
			j := i
			closed := false
			for ; j < n; j++ {
				m := r.msgs[j]
				if !m.model && len(m.answers) == 0 {
					break // a person's message inside: not a unit
				}
				open += len(m.calls) - len(m.answers)
				next := j + 1
				if open == 0 && m.kind != "reasoning" && (next == n || len(r.msgs[next].answers) == 0) {
					closed = true
					break
				}
			}
			switch {
			case closed && answered(i, j):
				us = append(us, unit{first: i, last: j})
				i = j + 1
			case closed:
				i = j + 1 // not a unit: never start one inside it (a reasoning item would lose its call)
			default:
				i = max(j, i+1)
			}
		}
	}
	return us
}

// score ranks a unit: the higher, the later it is dropped. Recent units, units whose files a
// later message names again, dense ones (few repeated lines) and ones holding a person's prompt
// or the model's own words weigh more.
func (r *request) score(u unit) float64 {
	n := len(r.msgs)
	recency := float64(u.first) / float64(n)
	referenced := 0.0
	if u.last+1 < n {
		later := r.body[r.msgs[u.last+1].start:r.arrEnd]
		for _, m := range r.msgs[u.first : u.last+1] {
			for _, c := range m.calls {
				if len(c.path) > 3 && bytes.Contains(later, []byte(c.path)) {
					referenced = 1
				}
			}
		}
	}
	lines, distinct := 0, map[string]bool{}
	role := 0.0
	for _, m := range r.msgs[u.first : u.last+1] {
		for _, s := range m.sites {
			for l := range strings.SplitSeq(s.text, "\n") {
				lines++
				distinct[l] = true
			}
		}
		switch {
		case m.human:
			role = max(role, 3)
		case m.model && m.text > 0 && len(m.calls) == 0:
			role = max(role, 0.5)
		}
	}
	density := 1.0
	if lines > 0 {
		density = float64(len(distinct)) / float64(lines)
	}
	return 2*recency + 1.5*referenced + 0.5*density + role
}

// drop removes the lowest-scored units until over bytes are saved (or none is left to drop), and
// returns the edits with those that fell inside dropped units removed, plus the drop edits.
func (c *Compressor) drop(r *request, edits []edit, over int) ([]edit, []Decision) {
	n := len(r.msgs)
	tail := n - c.opt.PreserveTail
	boundary := -1 // units must start after it
	if c.opt.Mode == ModeCache {
		// The kept prefix ends at the client's last breakpoint outside the tail; without one, at
		// the first half of the conversation.
		boundary = n/2 - 1
		for i := tail - 1; i >= 0; i-- {
			if r.msgs[i].cached {
				boundary = i
				break
			}
		}
	}
	var cands []unit
	for _, u := range r.units() {
		if u.first <= boundary || u.last >= tail || u.last+1 >= n {
			continue
		}
		u.size = r.msgs[u.last+1].start - r.msgs[u.first].start
		for _, e := range edits {
			if e.start >= r.msgs[u.first].start && e.end <= r.msgs[u.last+1].start {
				u.size += len(e.text) - (e.end - e.start)
			}
		}
		u.score = r.score(u)
		cands = append(cands, u)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score < cands[j].score })
	var dropped []unit
	saved := 0
	for _, u := range cands {
		if saved >= over {
			break
		}
		dropped = append(dropped, u)
		saved += u.size
	}
	if len(dropped) == 0 {
		return edits, nil
	}
	sort.Slice(dropped, func(i, j int) bool { return dropped[i].first < dropped[j].first })
	// Join adjacent units into runs: each run becomes one marker.
	var runs []unit
	for _, u := range dropped {
		if k := len(runs) - 1; k >= 0 && runs[k].last+1 == u.first {
			runs[k].last, runs[k].size = u.last, runs[k].size+u.size
			runs[k].score = min(runs[k].score, u.score)
			continue
		}
		runs = append(runs, u)
	}
	var ds []Decision
	caches := r.caches
	for k, run := range runs {
		from, to := r.msgs[run.first].start, r.msgs[run.last+1].start
		kept := edits[:0:0]
		for _, e := range edits {
			if e.end <= from || e.start >= to {
				kept = append(kept, e)
			}
		}
		edits = kept
		count := run.last - run.first + 1
		marker := fmt.Sprintf("[observer dropped %d earlier messages here (%d bytes) to save tokens]", count, run.size)
		d := Decision{Mechanism: MechDrop, Index: run.first, Count: count, Before: run.size, After: len(marker), Score: run.score}
		switch r.api {
		case APIAnthropic:
			edits = append(edits, edit{from, to, nil})
			prev := r.msgs[run.first-1]
			block := `{"type":"text","text":` + string(jsonString(marker)) + `}`
			if prev.contentEnd > 0 && prev.lastBlock.end > prev.lastBlock.start {
				edits = append(edits, edit{prev.contentEnd, prev.contentEnd, []byte("," + block)})
			} else if prev.contentEnd > 0 { // an empty content array
				edits = append(edits, edit{prev.contentEnd, prev.contentEnd, []byte(block)})
			} else if prev.content.end > prev.content.start {
				text := r.body[prev.content.start:prev.content.end]
				edits = append(edits, edit{prev.content.start, prev.content.end,
					[]byte(`[{"type":"text","text":` + string(text) + `},` + block + `]`)})
			}
			// Cache mode: the kept prefix ends at the first run; a breakpoint there lets the
			// upstream cache it, within the API's four.
			if c.opt.Mode == ModeCache && k == 0 && !prev.cached && caches < 4 && !r.ttl && prev.lastBlock.end > prev.lastBlock.start {
				edits = append(edits, edit{prev.lastBlock.end - 1, prev.lastBlock.end - 1,
					[]byte(`,"cache_control":{"type":"ephemeral"}`)})
				caches++
			}
		case APIChat:
			edits = append(edits, edit{from, to, []byte(`{"role":"user","content":` + string(jsonString(marker)) + `},`)})
		case APIResponses:
			edits = append(edits, edit{from, to, []byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":` +
				string(jsonString(marker)) + `}]},`)})
		}
		ds = append(ds, d)
	}
	return edits, ds
}

// trimTools shortens the description of each tool and of its parameters: the first paragraph's
// first sentence, at most 300 bytes for a tool and 100 for a parameter. Names, types, required
// lists and enums are untouched, and the result is a function of the text alone, so the tools
// (the start of every request) stay the same from one request to the next.
func trimTools(r *request) (Decision, []edit) {
	d := Decision{Mechanism: MechToolTrim, Index: -1}
	var edits []edit
	for _, s := range r.descs {
		text, ok := jsonscan.String(r.body[s.start:s.end])
		if !ok {
			continue
		}
		limit := 300
		if s.depth > 0 {
			limit = 100
		}
		short := shorten(text, limit)
		if len(short) >= len(text) {
			continue
		}
		d.Count++
		d.Before += len(text)
		d.After += len(short)
		edits = append(edits, edit{s.start, s.end, jsonString(short)})
	}
	return d, edits
}

// shorten returns the first sentence of the first paragraph of s, white space collapsed, cut at
// a word boundary to at most limit bytes.
func shorten(s string, limit int) string {
	t := strings.TrimSpace(s)
	if i := strings.Index(t, "\n\n"); i > 0 {
		t = t[:i]
	}
	for i := 0; i+1 < len(t); i++ {
		if (t[i] == '.' || t[i] == '!' || t[i] == '?') && (t[i+1] == ' ' || t[i+1] == '\n') && i > 10 {
			t = t[:i+1]
			break
		}
	}
	t = strings.Join(strings.Fields(t), " ")
	if len(t) <= limit {
		return t
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(t[:cut], ' '); sp > limit/2 {
		cut = sp
	}
	return strings.TrimRight(t[:cut], " ,;:") + "…"
}
