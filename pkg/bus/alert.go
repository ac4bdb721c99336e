package bus

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/observerhq/observer/pkg/event"
)

// PublishAlert tells live subscribers about an alert, on event.AlertSubject(a.Kind): a core
// subject outside the events stream, so nothing keeps it; the writer stores the alert before
// publishing it. It waits until the bus has the message, so that an error means it was not sent.
func (c *Client) PublishAlert(a event.Alert) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := c.nc.Publish(event.AlertSubject(a.Kind), data); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := c.nc.Flush(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// SubscribeAlerts delivers every alert published from now on, of any kind, in order, on one
// goroutine. A message that does not decode is skipped.
func (c *Client) SubscribeAlerts(fn func(event.Alert)) (*Subscription, error) {
	sub, err := c.nc.Subscribe(event.AlertSubjectPrefix+".*", func(m *nats.Msg) {
		var a event.Alert
		if json.Unmarshal(m.Data, &a) == nil {
			fn(a)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := c.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return &Subscription{sub: sub}, nil
}
