package bus

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/observerhq/observer/pkg/event"
)

// Batch messages. A bus message carries one event (its JSON, as event.Marshal writes it), or a
// batch of events of one kind and client (DESIGN.md, Events): then its EventsHeader header says
// how many, and its data is their JSON one per line (event.Marshal writes no newline). Each event
// keeps its own id; the writer stores them in one transaction and acknowledges the message after
// it. PublishBatch sends batches; Publish (the proxy's turns, hooks) sends single events; every
// reader of the stream reads both (Split). A batch saves the stream the per-message work of
// storing, delivering, acknowledging and de-duplicating each event, which was most of the bus
// host's CPU when a history was ingested (120,000 events: 4.3 s).

// EventsHeader is the header of a batch message: the number of events in it.
const EventsHeader = "Observer-Events"

// BacklogHeader marks the messages of a backlog: history published faster than live work comes
// (a watcher's pass over many megabytes, a scan while the suite runs). Every message of it says
// BacklogPart but the last one, which says BacklogEnd. The writer stores them on the bulk path
// whatever waits behind them, and catches up once it has stored the last (internal/writer); a
// publisher that stops without sending the end leaves the writer to find the backlog's end by
// itself (quiet on the bus), as it does for an unmarked one. Readers other than the writer ignore
// the header.
const BacklogHeader = "Observer-Backlog"

// The values of BacklogHeader.
const (
	BacklogPart = "part"
	BacklogEnd  = "end"
)

// Backlog is the BacklogHeader of a message with header h: "", BacklogPart or BacklogEnd.
func Backlog(h nats.Header) string { return h.Get(BacklogHeader) }

const (
	// BatchEvents is the most events PublishBatch puts in one message.
	BatchEvents = 256
	// BatchBytes is about the most bytes it puts in one message (an event larger alone goes alone).
	BatchBytes = 1 << 20
)

// Split returns the events a message carries, each as its own JSON: one for a single event, the
// lines of a batch. A batch whose lines do not match its header's count is an error.
func Split(h nats.Header, data []byte) ([][]byte, error) {
	n := h.Get(EventsHeader)
	if n == "" {
		return [][]byte{data}, nil
	}
	want, err := strconv.Atoi(n)
	if err != nil || want < 1 {
		return nil, fmt.Errorf("batch message: bad %s header %q", EventsHeader, n)
	}
	out := make([][]byte, 0, want)
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		out = append(out, line)
		data = rest
	}
	if len(out) != want {
		return nil, fmt.Errorf("batch message: %d events, its header says %d", len(out), want)
	}
	return out, nil
}

// EventCount is how many events a message with header h carries.
func EventCount(h nats.Header) int {
	if n, err := strconv.Atoi(h.Get(EventsHeader)); err == nil && n > 0 {
		return n
	}
	return 1
}

// chunk is one message of a PublishBatch: the indexes of its events in the batch.
type chunk struct {
	subject string
	idx     []int
}

// chunks groups a batch's events into messages: by subject (kind and client), in the order each
// subject first appears, each message at most BatchEvents events and about BatchBytes.
func chunks(evs []event.Event, datas [][]byte) []chunk {
	var out []chunk
	open := map[string]int{} // subject → its chunk still filling
	size := map[string]int{}
	for i := range evs {
		s := evs[i].Subject()
		c, ok := open[s]
		if ok && (len(out[c].idx) >= BatchEvents || size[s]+len(datas[i]) > BatchBytes) {
			ok = false
		}
		if !ok {
			out = append(out, chunk{subject: s})
			c = len(out) - 1
			open[s], size[s] = c, 0
		}
		out[c].idx = append(out[c].idx, i)
		size[s] += len(datas[i]) + 1
	}
	return out
}

// eventsOf is the indexes of the events of cs, in batch order.
func eventsOf(cs []chunk) []int {
	var out []int
	for _, c := range cs {
		out = append(out, c.idx...)
	}
	slices.Sort(out)
	return out
}

// message is the bus message of chunk c: a single event as it is, a batch one per line with its
// header; backlog, when set, is its BacklogHeader.
func (c chunk) message(datas [][]byte, backlog string) *nats.Msg {
	msg := c.unmarked(datas)
	if backlog != "" {
		if msg.Header == nil {
			msg.Header = nats.Header{}
		}
		msg.Header.Set(BacklogHeader, backlog)
	}
	return msg
}

// unmarked is c's message without a BacklogHeader.
func (c chunk) unmarked(datas [][]byte) *nats.Msg {
	if len(c.idx) == 1 {
		return &nats.Msg{Subject: c.subject, Data: datas[c.idx[0]]}
	}
	n := len(c.idx) - 1
	for _, i := range c.idx {
		n += len(datas[i])
	}
	data := make([]byte, 0, n)
	for k, i := range c.idx {
		if k > 0 {
			data = append(data, '\n')
		}
		data = append(data, datas[i]...)
	}
	return &nats.Msg{Subject: c.subject, Data: data, Header: nats.Header{EventsHeader: []string{strconv.Itoa(len(c.idx))}}}
}
