package writer

import (
	"github.com/observerhq/observer/pkg/event"
)

// publishAlert is the one way out of the writer for an alert it raised and stored, whatever its
// kind (budget, limit, ...): the [alerts] webhook gets it first (Webhook.Enqueue returns at once,
// so a slow or failing webhook never holds the writer), then the bus for the live views. Every
// alert the writer raises goes through here (TestWriter_AlertsLeaveThroughPublishAlert), so a new
// kind reaches the webhook by being published this way.
func (w *Writer) publishAlert(a event.Alert) error {
	if w.Webhook != nil {
		w.Webhook.Enqueue(a)
	}
	if w.Bus == nil {
		return nil
	}
	return w.Bus.PublishAlert(a)
}
