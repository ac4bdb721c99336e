package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ScanSubject is where the running watcher takes `observerctl scan` and `backfill` requests: it
// owns the transcripts' cursors, so it does the reading and streams its progress back.
const ScanSubject = "observer.ctl.scan"

// ErrNoResponder is RequestStream's error when nothing answered within its first-answer wait.
var ErrNoResponder = errors.New("no one answered")

// ServeStream answers requests on subject, one at a time: fn gets a request and a send that
// publishes a message to the requester; fn returns when its answer is complete.
func (c *Client) ServeStream(subject string, fn func(req []byte, send func([]byte) error)) (*Subscription, error) {
	sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		fn(m.Data, func(data []byte) error { return c.nc.Publish(m.Reply, data) })
	})
	if err != nil {
		return nil, err
	}
	if err := c.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	return &Subscription{sub: sub}, nil
}

// RequestStream sends req on subject and hands every message of the answer to fn until fn returns
// true (the last one). It fails with ErrNoResponder when no message comes within first, and when
// the answer stalls for longer than idle between two messages.
func (c *Client) RequestStream(ctx context.Context, subject string, req []byte, first, idle time.Duration, fn func([]byte) bool) error {
	inbox := c.nc.NewInbox()
	ch := make(chan *nats.Msg, 64)
	sub, err := c.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishRequest(subject, inbox, req); err != nil {
		return err
	}
	wait, got := first, false
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
			if !got {
				return fmt.Errorf("%w on %s within %s", ErrNoResponder, subject, first)
			}
			return fmt.Errorf("the answer on %s stalled for %s", subject, idle)
		case m := <-ch:
			t.Stop()
			got, wait = true, idle
			if fn(m.Data) {
				return nil
			}
		}
	}
}
