// Package goldentest holds the golden snapshot test of issue 30 ("one read model"): every answer a
// user sees from the store, recorded on the corpus store before the CLI, the dashboard and the MCP
// server were moved onto one read package, so that the change can be shown to change none of them.
//
// What it records (cases_test.go), each output in a file of its own under testdata/<surface>/:
//
//   - cli: the stdout of every observerctl command that prints JSON about the store (cost with
//     every group key and filter, discover, patterns, score, summary, memory, memory export,
//     blocks, budget, prices list and show, statusline, metrics, export, prune --dry-run, reconcile
//     --dry-run, status), plus the status line and the Prometheus text of metrics;
//   - dash: the body of every dashboard JSON endpoint with its filters, each session's detail and
//     timeline, /metrics and the page, through the handler observer-dash serves;
//   - mcp: the initialize result, tools/list and every tool's text answer, called through the
//     go-sdk client over an in-memory transport.
//
// Each surface also has a _meta.golden: one line per output with the exit code and stderr (cli),
// the request, status and content type (dash), or the arguments and whether the answer is a tool
// error (mcp). Not recorded: what reads the machine or the bus rather than the store, or writes
// (doctor, service and team status, init, scan, backfill, tail, prices diff against a price
// database, suggest in a project directory, the dashboard's live streams, settings POST and static
// assets).
//
// The store is corpusstore.Build's (the corpus as `observerctl scan` stores it), then what a
// running writer does after a scan: the analysis (patterns, findings, scores) and the session
// memory (summaries, observations). Nothing in it or in the answers depends on the run:
//
//   - the clock: everything runs in a testing/synctest bubble, whose time.Now is a fake clock; the
//     store is built at buildClock and asked at queryClock, shortly after the corpus's newest
//     record, so "since 7d" windows, ages, the active 5-hour block, "today" and the sessions'
//     states (one is idle) are the same at every run, and measured durations are 0;
//   - the zone: the test binary runs itself again with TZ naming a zone file it writes (UTC+05:30,
//     no daylight saving time, not whole hours), for Go and for SQLite's 'localtime' alike;
//   - the environment: OBSERVER_* variables but OBSERVER_CORPUS are unset, HOME is the corpus's
//     laid-out home, config.toml is the test's own (budgets set);
//   - paths: the store is built in /tmp/observer-golden-XXXXXXXX, a path of one length everywhere
//     (it sets the store file's size and where clipped paths are cut), and that directory is
//     written $GOLDEN_DIR in the goldens; the page's per-process CSRF token is written $CSRF, and
//     its assets' tag (?v=, a hash of the script and styles, not recorded) $ASSETS.
//     Nothing else is rewritten: every number, time and id is compared as it is;
//   - the writer's own variations: the session memory runs one session a step (a step recomputes
//     its projects in Go's map order, which numbers the observations) and the change_area
//     observations are forgotten, as `observerctl memory forget` does, because memory.Observe takes
//     their evidence in map order.
//
// Regenerate after an intended change with `OBSERVER_GOLDEN_UPDATE=1 go test -tags sqlite_fts5
// -run TestGolden ./internal/goldentest/` (or -update) and explain every changed file in the
// change's note.
package goldentest
