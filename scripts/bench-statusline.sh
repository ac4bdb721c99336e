#!/usr/bin/env bash
# Benchmark of `observerctl statusline` as Claude Code runs it: the real binary, a fresh process
# each time, the JSON payload on a pipe. Prints the median, p95 and max wall time over N runs
# (default 100, after 3 untimed). Target: p95 under 30 ms on the dashboard benchmark's store
# (1,000,000 token rows and 5,000,000 actions over 90 days), with a daily, a monthly and a project
# budget set, for one of the store's busiest sessions.
#
# The store: $OBSERVER_STATUSLINE_HOME when set (any observer home holding observer.db; a small one
# checks the script), else the one scripts/gen-dash-store.go builds and keeps (a few minutes and
# ~4 GB on first use, under $OBSERVER_DASH_BENCH_DIR, default $TMPDIR/observer-dash-bench-v1).
# Run it alone: it measures latency.
set -euo pipefail
export LC_ALL=C # EPOCHREALTIME with a decimal point
cd "$(dirname "$0")/.."
runs=${N:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/observerctl
go build -tags sqlite_fts5 -o "$bin" ./cmd/observerctl
if [[ -n "${OBSERVER_STATUSLINE_HOME:-}" ]]; then
  home=$OBSERVER_STATUSLINE_HOME
else
  home=${OBSERVER_DASH_BENCH_DIR:-${TMPDIR:-/tmp}/observer-dash-bench-v1}
  go run -tags sqlite_fts5 scripts/gen-dash-store.go -dir "$home"
fi
[[ -f $home/observer.db ]] || { echo "bench-statusline: no store at $home/observer.db" >&2; exit 1; }

# The costliest session and its project, as the payload's session and workspace.
top=$("$bin" --home "$home" cost --json --group-by session,project)
sid=$(grep -m1 -o '"session_id": "[^"]*"' <<<"$top" | cut -d'"' -f4)
project=$(grep -m1 -o '"project": "[^"]*"' <<<"$top" | cut -d'"' -f4)
payload=$(printf '{"session_id":"%s","cwd":"%s","model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"},"workspace":{"current_dir":"%s","project_dir":"%s"},"cost":{"total_cost_usd":0}}' \
  "$sid" "$project" "$project" "$project")
export OBSERVER_BUDGET_DAILY=50 OBSERVER_BUDGET_MONTHLY=1000 OBSERVER_BUDGET_PROJECTS="{ \"${project:-/nowhere}\" = 100 }"

statusline() { printf '%s' "$payload" | "$bin" --home "$home" statusline "$@"; }
statusline --check >/dev/null # strict once: a broken setup fails here, not silently in the loop
for _ in 1 2 3; do statusline >/dev/null; done
echo "store:   $home/observer.db ($(du -h "$home/observer.db" | cut -f1))"
echo "session: ${sid:-none} in ${project:-no project}"
echo "line:    $(statusline)"
for ((i = 0; i < runs; i++)); do
  t0=$EPOCHREALTIME
  statusline >/dev/null
  t1=$EPOCHREALTIME
  echo "$t0 $t1"
done | awk '{ printf "%.2f\n", ($2 - $1) * 1000 }' | sort -n >"$work/ms"
n=$(wc -l <"$work/ms")
at() { sed -n "$(( ($1 * n + 99) / 100 ))p" "$work/ms"; }
printf 'runs %d: median %s ms, p95 %s ms, max %s ms (target: p95 < 30 ms)\n' "$n" "$(at 50)" "$(at 95)" "$(tail -1 "$work/ms")"
