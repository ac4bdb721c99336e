//go:build ignore

// benchteam is the load generator and the clock of scripts/bench-team.sh. It publishes action
// events into observer buses, one connection per publisher (-pub NAME=PORT=TOKENFILE, repeatable;
// several publishers may share a bus), and watches stores (opened read-only) for them, polling
// each every -poll with SELECT id, event_id FROM actions WHERE id > ?:
//
//	burst  (default) every publisher publishes -events events with pkg/bus PublishBatch, -batch at
//	       a time, as fast as its bus acks them. Accepted/s runs from the first publish to the
//	       last ack, stored/s from the first publish to the poll that found the last event.
//	paced  (-rate R) every publisher publishes one event every 1/R s for -for (pkg/bus Publish),
//	       each timed when it is handed to its bus; an event's delay runs from then to the first
//	       poll that found it in a store (so it is late by up to -poll plus the poll itself).
//
// -db is the store the run waits for. With -hub it is a team hub's, where publisher NAME's events
// are stored as NAME/<id> (NAME must then be the member whose bus the publisher feeds); -local
// NAME=DB (repeatable) watches NAME's own store as well, for its events under their own ids
// (the local_* figures). -publish-only publishes and watches nothing; -watch-only publishes
// nothing and waits in -db for the events a publishing run with the same -pub names, -tag and
// -events published (first_seen_s: from the start to the first of them, ingest_per_s: from the
// first to the last). Events not stored when nothing new arrived for -stall after the publishing,
// or at -timeout, count as missing. Prints one JSON object; the figures are the script's to judge.
//
//	go build -o /tmp/benchteam scripts/benchteam.go
//	/tmp/benchteam -pub alice=4247=$HOME/.observer/bus.token -db hub/observer.db -hub -events 20000
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

type publisher struct {
	name, url, tokenFile string
	cl                   *bus.Client
	evs                  []event.Event
	first                int // index of its first event in the run's tables
}

type pubList []*publisher

func (p *pubList) String() string { return fmt.Sprint(len(*p)) }
func (p *pubList) Set(s string) error {
	parts := strings.SplitN(s, "=", 3)
	if len(parts) != 3 || parts[0] == "" {
		return fmt.Errorf("want NAME=PORT=TOKENFILE, got %q", s)
	}
	if _, err := strconv.Atoi(parts[1]); err != nil {
		return fmt.Errorf("port %q: %v", parts[1], err)
	}
	*p = append(*p, &publisher{name: parts[0], url: "nats://127.0.0.1:" + parts[1], tokenFile: parts[2]})
	return nil
}

type kvList [][2]string

func (l *kvList) String() string { return fmt.Sprint(len(*l)) }
func (l *kvList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return fmt.Errorf("want NAME=PATH, got %q", s)
	}
	*l = append(*l, [2]string{k, v})
	return nil
}

// clock: monotonic durations since the run's start; 0 means "not yet".
var base = time.Now()

func since() time.Duration { return max(time.Since(base), 1) }

// watch polls one store for the events of want (stored id -> index in the run's tables).
type watch struct {
	db    *sql.DB
	want  map[string]int
	last  int64           // highest actions.id read
	seen  []time.Duration // by index: when a poll first found it
	n     int             // how many of want were found
	first time.Duration   // when the first / the last of them was found
	lastT time.Duration
	err   error
}

func openWatch(ctx context.Context, path string, want map[string]int, total int) (*watch, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	w := &watch{db: db, want: want, seen: make([]time.Duration, total)}
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM actions").Scan(&w.last); err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return w, nil
}

// run polls until every wanted event was found, ctx ends, or nothing new was found for stall
// once done reports the publishing over.
func (w *watch) run(ctx context.Context, poll, stall time.Duration, done func() bool) {
	progress := time.Now()
	for w.n < len(w.want) && ctx.Err() == nil {
		t := since()
		rows, err := w.db.QueryContext(ctx, "SELECT id, event_id FROM actions WHERE id > ? ORDER BY id", w.last)
		if err != nil {
			if w.err == nil {
				w.err = fmt.Errorf("poll: %w", err)
			}
		} else {
			for rows.Next() {
				var id int64
				var eid string
				if rows.Scan(&id, &eid) != nil {
					continue
				}
				w.last = id
				if i, ok := w.want[eid]; ok && w.seen[i] == 0 {
					w.seen[i] = t
					w.n++
					if w.first == 0 {
						w.first = t
					}
					w.lastT = t
					progress = time.Now()
				}
			}
			rows.Close()
		}
		if done() && time.Since(progress) > stall {
			return
		}
		if d := poll - (since() - t); d > 0 {
			time.Sleep(d)
		}
	}
}

// delays returns the delays (ms) from sent to seen, sorted, over the watches.
func delays(sent []time.Duration, ws ...*watch) []float64 {
	var d []float64
	for _, w := range ws {
		for i, s := range w.seen {
			if s > 0 && sent[i] > 0 {
				d = append(d, float64(s-sent[i])/float64(time.Millisecond))
			}
		}
	}
	slices.Sort(d)
	return d
}

func pct(d []float64, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

func main() {
	var pubs pubList
	var locals kvList
	flag.Var(&pubs, "pub", "NAME=PORT=TOKENFILE: a publisher into the bus on 127.0.0.1:PORT (repeat)")
	flag.Var(&locals, "local", "NAME=DB: also watch publisher NAME's own store (repeat)")
	dbPath := flag.String("db", "", "the store to wait for (read-only)")
	hub := flag.Bool("hub", false, "-db is a team hub's store: NAME's events are stored as NAME/<id>")
	events := flag.Int("events", 20000, "burst: events per publisher")
	batch := flag.Int("batch", 500, "burst: events per PublishBatch")
	rate := flag.Float64("rate", 0, "paced: events per second per publisher (0: burst)")
	dur := flag.Duration("for", 10*time.Second, "paced: how long to publish")
	poll := flag.Duration("poll", 5*time.Millisecond, "how often to look into each store")
	tag := flag.String("tag", "run", "makes this run's event ids unique")
	publishOnly := flag.Bool("publish-only", false, "publish, watch nothing")
	watchOnly := flag.Bool("watch-only", false, "publish nothing: wait in -db for what a run with the same -pub names, -tag and -events published")
	stall := flag.Duration("stall", 60*time.Second, "give up when nothing new is stored for this long after the publishing")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long in all")
	flag.Parse()
	if len(pubs) == 0 || (*dbPath == "") != *publishOnly || *publishOnly && *watchOnly {
		fail(fmt.Errorf("need -pub, and -db unless -publish-only (not with -watch-only)"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	per := *events
	if *rate > 0 {
		per = int(*rate * dur.Seconds())
	}
	total := per * len(pubs)
	want := make(map[string]int, total)  // -db's stored id -> index
	byPub := map[string]map[string]int{} // a publisher's own ids -> index
	for pi, p := range pubs {
		p.first = pi * per
		p.evs = make([]event.Event, per)
		if byPub[p.name] != nil {
			fail(fmt.Errorf("two publishers named %s", p.name))
		}
		byPub[p.name] = make(map[string]int, per)
		for i := range p.evs {
			ev := event.New(event.KindAction, "benchteam")
			ev.ID = event.ID("benchteam", *tag, p.name, strconv.Itoa(i))
			ev.Client = "claude-code"
			ev.SessionID = fmt.Sprintf("bench-%s-%s", *tag, p.name)
			ev.Project = "/work/bench-project"
			ok := true
			ev.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: fmt.Sprintf("go test ./pkg/... -run Test%d", i),
				ToolUseID: fmt.Sprintf("toolu_%s_%s_%d", *tag, p.name, i), Success: &ok, DurationMs: 1200,
				Output: fmt.Sprintf("ok  \tgithub.com/example/pkg%d\t0.%03ds\n", i%50, i%1000), OutputSize: 40}
			p.evs[i] = ev
			byPub[p.name][ev.ID] = p.first + i
			id := ev.ID
			if *hub {
				id = p.name + "/" + id
			}
			want[id] = p.first + i
		}
		if *watchOnly {
			continue
		}
		tok, err := bus.ReadToken(p.tokenFile)
		if err != nil {
			fail(err)
		}
		p.cl, err = bus.Connect(ctx, bus.Options{URL: p.url, Token: tok, Name: "benchteam-" + p.name, Wait: true, Timeout: time.Minute})
		if err != nil {
			fail(fmt.Errorf("publisher %s: %w", p.name, err))
		}
		defer p.cl.Close()
	}

	var primary *watch
	var localWs []*watch
	if *dbPath != "" {
		var err error
		if primary, err = openWatch(ctx, *dbPath, want, total); err != nil {
			fail(err)
		}
	}
	for _, l := range locals {
		ids, ok := byPub[l[0]]
		if !ok {
			fail(fmt.Errorf("-local %s: no such publisher", l[0]))
		}
		w, err := openWatch(ctx, l[1], ids, total)
		if err != nil {
			fail(err)
		}
		localWs = append(localWs, w)
	}

	sent := make([]time.Duration, total)
	var pubDone atomic.Bool
	var published, failed atomic.Int64
	var firstErr atomic.Pointer[string]
	setErr := func(err error) { s := err.Error(); firstErr.CompareAndSwap(nil, &s) }
	var watchers sync.WaitGroup
	for _, w := range append([]*watch{primary}, localWs...) {
		if w == nil {
			continue
		}
		watchers.Add(1)
		go func() { defer watchers.Done(); w.run(ctx, *poll, *stall, pubDone.Load) }()
	}

	var wg sync.WaitGroup
	start := since()
	for pi, p := range pubs {
		if *watchOnly {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if *rate > 0 {
				interval := time.Duration(float64(time.Second) / *rate)
				offset := interval * time.Duration(pi) / time.Duration(len(pubs)) // spread the publishers
				for i := range p.evs {
					if d := start + offset + time.Duration(i)*interval - since(); d > 0 {
						time.Sleep(d)
					}
					p.evs[i].Time = time.Now().UTC()
					sent[p.first+i] = since()
					if _, err := p.cl.Publish(ctx, &p.evs[i]); err != nil {
						failed.Add(1)
						setErr(err)
						continue
					}
					published.Add(1)
				}
				return
			}
			for i := 0; i < len(p.evs); i += *batch {
				j := min(i+*batch, len(p.evs))
				t := since()
				for k := i; k < j; k++ {
					sent[p.first+k] = t
				}
				if _, err := p.cl.PublishBatch(ctx, p.evs[i:j]); err != nil {
					failed.Add(int64(j - i))
					setErr(err)
					continue
				}
				published.Add(int64(j - i))
			}
		}()
	}
	wg.Wait()
	pubEnd := since()
	pubDone.Store(true)
	watchers.Wait()

	out := map[string]any{"publishers": len(pubs), "events": total, "started_at_ms": base.Add(start).UnixMilli()}
	if !*watchOnly {
		pubS := (pubEnd - start).Seconds()
		out["published"], out["failed"], out["publish_s"] = published.Load(), failed.Load(), pubS
		out["accepted_per_s"] = float64(published.Load()) / pubS
	}
	if primary != nil {
		storeS := (primary.lastT - start).Seconds()
		out["stored"], out["missing"], out["stored_s"] = primary.n, total-primary.n, storeS
		out["stored_per_s"] = float64(primary.n) / max(storeS, 1e-9)
		if primary.n > 0 {
			out["first_seen_s"] = (primary.first - start).Seconds()
			out["ingest_per_s"] = float64(primary.n-1) / max((primary.lastT-primary.first).Seconds(), 1e-9)
		}
		if !*watchOnly {
			d := delays(sent, primary)
			out["delay_p50_ms"], out["delay_p95_ms"], out["delay_p99_ms"], out["delay_max_ms"] = pct(d, .5), pct(d, .95), pct(d, .99), pct(d, 1)
		}
		if primary.err != nil {
			setErr(primary.err)
		}
	}
	if len(localWs) > 0 {
		d := delays(sent, localWs...)
		n := 0
		for _, w := range localWs {
			n += w.n
			if w.err != nil {
				setErr(w.err)
			}
		}
		out["local_stored"] = n
		out["local_delay_p50_ms"], out["local_delay_p95_ms"], out["local_delay_p99_ms"], out["local_delay_max_ms"] = pct(d, .5), pct(d, .95), pct(d, .99), pct(d, 1)
	}
	if *rate > 0 && !*watchOnly {
		out["rate_per_s"] = float64(published.Load()) / (pubEnd - start).Seconds()
	}
	if s := firstErr.Load(); s != nil {
		out["first_error"] = *s
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchteam:", err)
	os.Exit(1)
}
