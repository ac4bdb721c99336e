package writer_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/webhook"
	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// TestWriter_BudgetAlertReachesWebhook: a budget alert the real writer raises against a real
// store reaches a Slack-shaped receiver on loopback; a receiver that refuses the next one makes
// the writer's heartbeat carry a failing alerts:webhook notice while the writer stays healthy.
func TestWriter_BudgetAlertReachesWebhook(t *testing.T) {
	ctx := context.Background()
	srv := startBus(t)
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.WriteBatch(ctx, []event.Event{spendEvent("first", 9)}, nil); err != nil {
		t.Fatal(err)
	}
	type post struct {
		path, contentType string
		body              []byte
	}
	posts := make(chan post, 10)
	refuse := make(chan bool, 1)
	refuse <- false
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		posts <- post{r.URL.Path, r.Header.Get("Content-Type"), b}
		no := <-refuse
		refuse <- no
		if no {
			http.Error(w, "no_service", http.StatusNotFound)
		}
	}))
	defer recv.Close()
	c, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hook := webhook.New(config.Alerts{WebhookURL: recv.URL + "/services/T0/B0/tok", Format: "slack"}, nil)
	w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 10, FlushInterval: 10 * time.Millisecond},
		Budget: config.Budget{Daily: 10}, BudgetEvery: 50 * time.Millisecond, Webhook: hook}
	defer startWriter(t, ctx, w)()
	next := func() post {
		t.Helper()
		select {
		case p := <-posts:
			return p
		case <-time.After(30 * time.Second):
			t.Fatal("the webhook got no alert")
			return post{}
		}
	}
	p := next()
	var body map[string]string
	if err := json.Unmarshal(p.body, &body); err != nil || len(body) != 1 || p.contentType != "application/json" || p.path != "/services/T0/B0/tok" {
		t.Fatalf("webhook got %s %q %s (%v), want Slack's {\"text\": ...}", p.path, p.contentType, p.body, err)
	}
	if want := "observer: daily budget reached 80%: $9.00 of $10.00 spent (90%) in "; !strings.HasPrefix(body["text"], want) {
		t.Errorf("text %q, want it to start %q", body["text"], want)
	}
	until(t, "the delivery counted", func() bool { return hook.Status().Sent == 1 })
	if h := w.Health(); !h.OK || len(h.Notices) != 1 || h.Notices[0].Name != "alerts:webhook" || !h.Notices[0].OK {
		t.Errorf("health after a delivery: %+v", h)
	}

	<-refuse
	refuse <- true
	if _, err := c.Publish(ctx, ptr(spendEvent("second", 2))); err != nil {
		t.Fatal(err)
	}
	if p := next(); !strings.Contains(string(p.body), "reached 100%") {
		t.Errorf("second alert %s", p.body)
	}
	until(t, "the refusal counted", func() bool { return hook.Status().Failed == 1 })
	h := w.Health()
	if !h.OK || len(h.Notices) != 1 || h.Notices[0].OK || !strings.Contains(h.Notices[0].Detail, "HTTP 404") {
		t.Errorf("health after a refused delivery: %+v (want ok, with a failing alerts:webhook notice)", h)
	}
	if strings.Contains(h.Notices[0].Detail, "tok") {
		t.Errorf("the notice shows the URL's path: %q", h.Notices[0].Detail)
	}
}

func ptr[T any](v T) *T { return &v }

// until polls cond until it holds; the bound only ends a hung test.
func until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("never: %s", what)
		}
	}
}

// TestWriter_AlertsLeaveThroughPublishAlert: the writer publishes alerts in one place, which
// also hands them to the webhook; a call of Bus.PublishAlert elsewhere in the package would
// leave the webhook out.
func TestWriter_AlertsLeaveThroughPublishAlert(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "alerts.go" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), ".PublishAlert(") {
			t.Errorf("%s publishes an alert on the bus itself; call w.publishAlert (alerts.go), which also sends it to the webhook", f)
		}
	}
}
