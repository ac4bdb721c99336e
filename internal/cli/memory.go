package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/store"
)

func summaryCommand() *cli.Command {
	return &cli.Command{
		Name:      "summary",
		Usage:     "what a session did, epoch by epoch: goal, files, commands and their outcomes, failures, cost",
		ArgsUsage: "[SESSION]",
		Description: `Prints the summaries the writer made of the session's epochs (a new epoch starts at each
compaction) as each ended, and, for an epoch still going on, the account so far (marked "so far").
Without SESSION, the newest session. SESSION is a session id or a unique prefix of one. With
--dry-run, the prompt [memory] model would be sent for each epoch instead (nothing is sent).

Exit codes: 0 done; 1 no such session; 64 bad flags; 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "epoch", Value: -1, Usage: "only this epoch"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON (with each extractive summary's facts)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the prompt a language model ([memory] model) would get for each epoch, scrubbed, and send nothing"},
		},
		Action: runSummary,
	}
}

type summaryOut struct {
	query.StoredSummary
	SoFar bool `json:"so_far,omitempty"` // the epoch goes on: computed now, not stored
}

func runSummary(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	if c.NArg() > 1 {
		return usageErr("summary takes one SESSION at most")
	}
	st, err := openReadStore(c.Context, e)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := c.Context
	var ref store.SessionRef
	if id := c.Args().First(); id != "" {
		if ref, err = store.ResolveSession(ctx, st.DB, id); err != nil {
			return withCode(ExitFailure, err)
		}
	} else if ref, err = query.LatestSession(ctx, st.DB); err != nil {
		return withCode(ExitFailure, query.ErrNoSession)
	}
	out, err := sessionSummaries(ctx, st, ref)
	if err != nil {
		return err
	}
	if ep := c.Int("epoch"); ep >= 0 {
		var keep []summaryOut
		for _, s := range out {
			if s.Epoch == ep {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			return withCode(ExitFailure, fmt.Errorf("session %s has no epoch %d", ref.ID, ep))
		}
		out = keep
	}
	if c.Bool("dry-run") {
		mc := memory.ModelFromConfig(e.cfg)
		if mc == nil {
			mc = &memory.ModelClient{}
			fmt.Fprintln(e.stderr, "[memory] model is not set: nothing would be sent; this is the prompt a model would get")
		}
		mc.Read = st.DB
		for _, s := range out {
			if s.Source != "extractive" || s.Facts == nil {
				continue
			}
			prompt, err := mc.Prompt(ctx, *s.Facts)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "--- epoch %d: the prompt (dry run, not sent)\n%s\n", s.Epoch, strings.TrimRight(prompt, "\n"))
		}
		return nil
	}
	if c.Bool("json") {
		writeJSON(e.stdout, out)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s session %s", ref.Client, ref.ID)
	if ref.Title != "" {
		fmt.Fprintf(e.stdout, " %q", ref.Title)
	}
	fmt.Fprintln(e.stdout)
	for _, s := range out {
		state := "ended by " + s.EndedBy
		if s.SoFar {
			state = "so far (the epoch goes on)"
		}
		label := ""
		if s.Source == "model" {
			label = " (" + s.Model + ")"
		}
		when := ""
		if s.FirstTS > 0 {
			when = fmt.Sprintf(", %s – %s", time.UnixMilli(s.FirstTS).Local().Format("2006-01-02 15:04"), time.UnixMilli(s.LastTS).Local().Format("15:04"))
		}
		fmt.Fprintf(e.stdout, "\nepoch %d%s, %d actions%s, %s:\n", s.Epoch, label, s.Actions, when, state)
		for _, line := range strings.Split(strings.TrimRight(s.Text, "\n"), "\n") {
			fmt.Fprintf(e.stdout, "  %s\n", line)
		}
	}
	return nil
}

// sessionSummaries is every stored summary of a session, and the epoch still going on computed
// now (the store is read-only here).
func sessionSummaries(ctx context.Context, st *store.Store, ref store.SessionRef) ([]summaryOut, error) {
	stored, err := query.SessionSummaries(ctx, st.DB, ref.Client, ref.ID, true)
	if err != nil {
		return nil, err
	}
	place, err := query.SessionPlaceOf(ctx, st.DB, ref.Client, ref.ID)
	if err != nil {
		return nil, err
	}
	project, state, epoch := place.Project, place.State, place.Epoch
	have := map[int]bool{}
	var out []summaryOut
	for _, s := range stored {
		have[s.Epoch] = true
		out = append(out, summaryOut{StoredSummary: s})
	}
	ws, err := memory.Windows(ctx, st.DB, ref.Client, ref.ID, epoch)
	if err != nil {
		return nil, err
	}
	for i, w := range ws {
		if have[w.Epoch] {
			continue
		}
		endedBy := "compaction"
		if i == len(ws)-1 {
			endedBy = state
		}
		s, err := memory.Summarize(ctx, st.DB, ref.Client, ref.ID, project, w, endedBy)
		if err != nil {
			return nil, err
		}
		if s.Actions == 0 && i < len(ws)-1 {
			continue
		}
		f := s
		out = append(out, summaryOut{StoredSummary: query.StoredSummary{Client: s.Client, SessionID: s.SessionID, Epoch: s.Epoch,
			Source: "extractive", Project: project, FirstTS: s.FirstTS, LastTS: s.LastTS, EndedBy: endedBy, Actions: s.Actions,
			Text: s.Text(), Facts: &f}, SoFar: i == len(ws)-1 && state != "idle" && state != "finalized"})
	}
	// Epochs in order, the extractive account before a model's.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (out[j].Epoch < out[j-1].Epoch || out[j].Epoch == out[j-1].Epoch && out[j].Source < out[j-1].Source); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

func memoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "what each project's sessions have taught: test and build commands, failing commands, files that change together",
		Description: `Lists the observations the writer keeps per project, strongest first, each with its confidence
(support over support and contradictions, halved every 14 days unseen), the sessions that support
it and those that went against it. --evidence lists the actions behind each.

Exit codes: 0 done; 64 bad flags; 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "project", Aliases: []string{"p"}, Usage: "only this project (its path; default: all)"},
			&cli.Float64Flag{Name: "min-confidence", Value: 0.3, Usage: "hide weaker observations"},
			&cli.IntFlag{Name: "limit", Value: 30, Usage: "at most this many"},
			&cli.BoolFlag{Name: "evidence", Usage: "list the actions behind each observation"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: runMemoryList,
		Subcommands: []*cli.Command{
			{
				Name:      "forget",
				Usage:     "forget an observation (by its id): it is not shown again, nor brought back",
				ArgsUsage: "ID",
				Description: `Asks the running writer (the store's one writer) to forget it, or forgets it in the store itself when
observer is not running.

Exit codes: 0 forgotten; 1 no such observation, or the store could not be written; 64 bad id.`,
				Action: runMemoryForget,
			},
			{
				Name:        "export",
				Usage:       "every observation and summary of a project as JSON",
				Description: `Exit codes: 0 done; 64 bad flags; 69 no store yet.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "project", Aliases: []string{"p"}, Usage: "only this project (default: all)"},
				},
				Action: runMemoryExport,
			},
		},
	}
}

func runMemoryList(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	st, err := openReadStore(c.Context, e)
	if err != nil {
		return err
	}
	defer st.Close()
	obs, err := query.Observations(c.Context, st.DB, c.String("project"), c.Float64("min-confidence"), c.Int("limit"), time.Now())
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if obs == nil {
			obs = []query.Observation{}
		}
		writeJSON(e.stdout, obs)
		return nil
	}
	if len(obs) == 0 {
		fmt.Fprintln(e.stdout, "nothing learned yet: observations come from ended sessions (see `observerctl summary`)")
		return nil
	}
	project := ""
	for _, o := range obs {
		if o.Project != project {
			project = o.Project
			fmt.Fprintf(e.stdout, "%s\n", project)
		}
		fmt.Fprintf(e.stdout, "  [%d] %3.0f%%  %s  (%d sessions", o.ID, o.Confidence*100, o.Text, o.Support)
		if o.Contradictions > 0 {
			fmt.Fprintf(e.stdout, ", %d against", o.Contradictions)
		}
		fmt.Fprintf(e.stdout, ", last %s)\n", time.UnixMilli(o.LastSeen).Local().Format("2006-01-02"))
		if c.Bool("evidence") {
			for _, ev := range o.Evidence {
				a, _ := query.ActionByEvent(c.Context, st.DB, ev.EventID)
				typ, target, ts := a.Type, a.Target, a.TS
				fmt.Fprintf(e.stdout, "        %s %s %s: %s %s\n", time.UnixMilli(ts).Local().Format("2006-01-02 15:04"), ev.Client,
					shortID(ev.SessionID), typ, clipLine(target, 100))
			}
		}
	}
	return nil
}

func shortID(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func runMemoryForget(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.Args().First(), 10, 64)
	if err != nil || c.NArg() != 1 || id <= 0 {
		return usageErr("usage: observerctl memory forget ID (the number `observerctl memory` shows in brackets)")
	}
	found, err := forgetObservation(c.Context, e, id)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if !found {
		return withCode(ExitFailure, fmt.Errorf("no observation %d (or it is forgotten already)", id))
	}
	fmt.Fprintf(e.stdout, "observation %d forgotten\n", id)
	return nil
}

// askBusHost sends req on subject to whoever serves it on the running bus (the writer, the bus
// host) and decodes the one answer into ans; bus.ErrUnavailable when no bus runs.
func askBusHost(ctx context.Context, e *env, subject string, req []byte, ans any) error {
	token, err := bus.ReadToken(e.cfg.TokenPath())
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	cl, err := bus.Connect(cctx, bus.Options{URL: e.cfg.BusURL(), Token: token, Name: "observerctl", Wait: true, Timeout: 2 * time.Second})
	cancel()
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.RequestStream(ctx, subject, req, 3*time.Second, 3*time.Second, func(b []byte) bool {
		json.Unmarshal(b, ans)
		return true
	})
}

// forgetObservation asks the running writer to forget id, or does it in the store when no writer
// runs.
func forgetObservation(ctx context.Context, e *env, id int64) (bool, error) {
	req, _ := json.Marshal(map[string]int64{"id": id})
	var ans struct {
		Found bool   `json:"found"`
		Error string `json:"error"`
	}
	err := askBusHost(ctx, e, memory.ForgetSubject, req, &ans)
	if err == nil {
		if ans.Error != "" {
			return false, errors.New(ans.Error)
		}
		return ans.Found, nil
	}
	if !errors.Is(err, bus.ErrNoResponder) && !errors.Is(err, bus.ErrUnavailable) {
		return false, err
	}
	st, err := store.OpenWriter(ctx, e.cfg.StorePath())
	if err != nil {
		return false, fmt.Errorf("%w (the writer did not answer on the bus either)", err)
	}
	defer st.Close()
	return memory.Forget(ctx, st.DB, id)
}

func runMemoryExport(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	st, err := openReadStore(c.Context, e)
	if err != nil {
		return err
	}
	defer st.Close()
	project := c.String("project")
	obs, err := query.Observations(c.Context, st.DB, project, 0, 0, time.Now())
	if err != nil {
		return err
	}
	sums, err := query.RecentSummaries(c.Context, st.DB, project, 1<<30)
	if err != nil {
		return err
	}
	if obs == nil {
		obs = []query.Observation{}
	}
	if sums == nil {
		sums = []query.StoredSummary{}
	}
	writeJSON(e.stdout, map[string]any{"project": project, "observations": obs, "summaries": sums})
	return nil
}
