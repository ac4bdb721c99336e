package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

func tailCommand() *cli.Command {
	kinds := make([]string, len(event.Kinds))
	for i, k := range event.Kinds {
		kinds[i] = string(k)
	}
	return &cli.Command{
		Name:  "tail",
		Usage: "print events live as they are published",
		Description: `Prints every event published on the bus from now on, one line each (or its JSON with --json).
Exit code 69 when the bus cannot be reached.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kind", Usage: "only this kind: " + strings.Join(kinds, ", ")},
			&cli.StringFlag{Name: "client", Usage: "only this client (claude-code, codex, ...)"},
			&cli.StringFlag{Name: "session", Usage: "only this session (its id, or the start of it)"},
			&cli.BoolFlag{Name: "json", Usage: "print each event's JSON on a line"},
		},
		Action: func(c *cli.Context) error {
			e, err := loadOrLastGood(c)
			if err != nil {
				return err
			}
			kind := event.Kind(c.String("kind"))
			if kind != "" && !kind.Valid() {
				return usageErr("unknown event kind %q: choose one of %s", kind, strings.Join(kinds, ", "))
			}
			token, err := bus.ReadToken(e.cfg.TokenPath())
			if err != nil {
				return withCode(ExitUnavailable, err)
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			cl, err := bus.Connect(ctx, bus.Options{URL: e.cfg.BusURL(), Token: token, Name: "observerctl-tail", Wait: true, Logger: e.logger})
			if err != nil {
				if errors.Is(err, bus.ErrUnavailable) {
					return withCode(ExitUnavailable, fmt.Errorf("%w; is observer running? (`observerctl up`)", err))
				}
				return err
			}
			defer cl.Close()
			out := bufio.NewWriter(e.stdout)
			var mu sync.Mutex
			session, asJSON := c.String("session"), c.Bool("json")
			sub, err := cl.Subscribe(bus.Filter{Kind: kind, Client: c.String("client")}, func(ev event.Event, raw []byte, err error) {
				if session != "" && !strings.HasPrefix(ev.SessionID, session) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if asJSON {
					out.Write(raw)
					out.WriteByte('\n')
				} else if err != nil {
					fmt.Fprintf(out, "undecodable event (%v): %.200s\n", err, raw)
				} else {
					out.WriteString(formatEvent(&ev))
					out.WriteByte('\n')
				}
				out.Flush()
			})
			if err != nil {
				return withCode(ExitUnavailable, err)
			}
			defer sub.Stop()
			fmt.Fprintf(e.stderr, "tailing %s (Ctrl-C to stop)\n", bus.Filter{Kind: kind, Client: c.String("client")}.Subject())
			<-ctx.Done()
			return nil
		},
	}
}

// formatEvent renders one event as a line: time, kind, client, short session, and what happened.
func formatEvent(ev *event.Event) string {
	sess := ev.SessionID
	if len(sess) > 8 {
		sess = sess[:8]
	}
	if sess == "" {
		sess = "-"
	}
	var what string
	switch {
	case ev.Action != nil:
		a := ev.Action
		what = fmt.Sprintf("%s %s %s", a.Type, a.Tool, a.Target)
		if a.Success != nil && !*a.Success {
			what += " FAILED " + a.Error
		}
	case ev.TokenUsage != nil:
		u := ev.TokenUsage
		what = fmt.Sprintf("%s in=%d out=%d cache_read=%d cache_write=%d $%.4f", u.Model, u.Input, u.Output, u.CacheRead, u.CacheCreation, u.CostUSD)
	case ev.APITurn != nil:
		t := ev.APITurn
		what = fmt.Sprintf("%s %s %d %s in=%d out=%d %.0fms $%.4f", t.Provider, t.Model, t.Status, t.Endpoint, t.Input, t.Output, t.LatencyMs, t.CostUSD)
	case ev.Compression != nil:
		x := ev.Compression
		what = fmt.Sprintf("%s %d -> %d bytes", x.Mechanism, x.BytesBefore, x.BytesAfter)
	case ev.Session != nil:
		what = ev.Session.State + " " + ev.Session.Cwd
	case ev.Hook != nil:
		what = strings.TrimSpace(ev.Hook.Event + " " + ev.Hook.ToolName + " " + ev.Hook.Matcher)
	case ev.MCPCall != nil:
		m := ev.MCPCall
		what = fmt.Sprintf("%s/%s %.0fms %s", m.Server, m.Tool, m.DurationMs, m.Error)
	}
	return fmt.Sprintf("%s  %-11s  %-12s  %-8s  %s", ev.Time.Local().Format("15:04:05.000"), ev.Kind, ev.Client, sess, what)
}
