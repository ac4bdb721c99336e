package cli

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

func spoolCommand() *cli.Command {
	return &cli.Command{
		Name:  "spool",
		Usage: "inspect or publish the events spooled while the bus was down",
		Subcommands: []*cli.Command{
			{
				Name:        "status",
				Usage:       "count spooled files",
				Description: `Exit codes: 0 done; 1 the spool cannot be read; 64 bad flags.`,
				Action: func(c *cli.Context) error {
					e, err := loadOrLastGood(c)
					if err != nil {
						return err
					}
					sp, err := bus.OpenSpool(e.cfg.SpoolDir(), nil)
					if err != nil {
						return err
					}
					files, err := sp.Files()
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "%d spool file(s) in %s\n", len(files), e.cfg.SpoolDir())
					return nil
				},
			},
			{
				Name:  "drain",
				Usage: "publish every spooled event now (the running suite also does this every 2s)",
				Description: `Exit codes: 0 all published; 65 some lines were corrupt and were moved to spool/corrupt/ (the
rest were published); 69 the bus cannot be reached.`,
				Action: func(c *cli.Context) error {
					e, err := loadOrLastGood(c)
					if err != nil {
						return err
					}
					token, err := bus.ReadToken(e.cfg.TokenPath())
					if err != nil {
						return withCode(ExitUnavailable, err)
					}
					cl, err := bus.Connect(c.Context, bus.Options{URL: e.cfg.BusURL(), Token: token, Name: "observerctl-spool",
						SpoolDir: e.cfg.SpoolDir(), Wait: true, OneShot: true, Logger: e.logger})
					if err != nil {
						return withCode(ExitUnavailable, err)
					}
					defer cl.Close()
					rep, err := cl.DrainSpool(c.Context)
					fmt.Fprintf(e.stdout, "published %d event(s) from %d file(s); %d corrupt line(s); %d file(s) busy\n",
						rep.Events, rep.Files, rep.Corrupt, rep.Busy)
					if errors.Is(err, bus.ErrCorruptSpool) {
						return withCode(ExitBadInput, err)
					}
					if err != nil {
						return withCode(ExitUnavailable, err)
					}
					return nil
				},
			},
		},
	}
}

func publishCommand() *cli.Command {
	return &cli.Command{
		Name:  "publish",
		Usage: "publish events given as JSON lines on stdin (for scripts and tests)",
		Description: `Each line is one event in observer's wire schema (see pkg/event). Valid events are published,
or spooled when the bus is down. Exit code 65 when some line was not a valid event (unknown kind,
missing id, bad JSON): those lines are reported on stderr and skipped.`,
		Action: func(c *cli.Context) error {
			e, err := loadOrLastGood(c)
			if err != nil {
				return err
			}
			sc := bufio.NewScanner(c.App.Reader)
			sc.Buffer(make([]byte, 1<<20), bus.MaxPayload+1)
			var bad []string
			n := 0
			for line := 1; sc.Scan(); line++ {
				text := strings.TrimSpace(sc.Text())
				if text == "" {
					continue
				}
				ev, err := event.Decode([]byte(text))
				if err != nil {
					bad = append(bad, fmt.Sprintf("line %d: %v", line, err))
					continue
				}
				if _, err := publishOne(c.Context, e, &ev, e.cfg.Hook.Timeout.D()); err != nil {
					return err
				}
				n++
			}
			if err := sc.Err(); err != nil {
				bad = append(bad, "read stdin: "+err.Error())
			}
			fmt.Fprintf(e.stdout, "published %d event(s)\n", n)
			if len(bad) > 0 {
				return withCode(ExitBadInput, fmt.Errorf("%d line(s) rejected:\n  %s", len(bad), strings.Join(bad, "\n  ")))
			}
			return nil
		},
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:        "version",
		Usage:       "print the version",
		Description: `Exit codes: 0.`,
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "observerctl %s\n", Version)
			return nil
		},
	}
}
