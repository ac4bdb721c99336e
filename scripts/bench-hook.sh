#!/usr/bin/env bash
# Benchmark of `observerctl hook` as a client runs it: the real binary, a fresh process each time,
# the JSON payload on a pipe, while observer is down. A hook blocks the user's agent until it
# exits, so this is the latency a user feels when the suite is not running:
#   never started  no observer home yet (the event is spooled to a new spool file)
#   bus gone       a bus token left from an earlier run, nothing listening on the bus port
# The baseline, in the same run, is a process that does nothing (/bin/true) fed the same pipe: what
# starting any hook costs on this machine. N runs a round (default 50, after 3 untimed), ROUNDS
# rounds (default 3), alternating the cases; prints min / median / p95 / max in ms per case over
# all runs, the medians of each round, and the ratio of each median to the baseline's.
# Run it alone: it measures latency.
set -euo pipefail
export LC_ALL=C # EPOCHREALTIME with a decimal point
cd "$(dirname "$0")/.."
runs=${N:-50}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/observerctl
go build -tags sqlite_fts5 -o "$bin" ./cmd/observerctl
payload='{"session_id":"bench-hook","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}'
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# Each case runs with a home of its own and nothing of the caller's OBSERVER_* settings.
clean_env=(env)
for v in $(compgen -e); do case "$v" in OBSERVER_*) clean_env+=(-u "$v") ;; esac; done
case_never() { rm -rf "$work/never"; "${clean_env[@]}" OBSERVER_BUS_PORT="$port" "$bin" --home "$work/never" hook --client claude-code; }
mkdir -p "$work/gone" && chmod 700 "$work/gone" && echo tok >"$work/gone/bus.token" && chmod 600 "$work/gone/bus.token"
case_gone() { "${clean_env[@]}" OBSERVER_BUS_PORT="$port" "$bin" --home "$work/gone" hook --client codex; }
case_baseline() { /bin/true; }

cases=(baseline never gone)
for c in "${cases[@]}"; do for _ in 1 2 3; do printf '%s' "$payload" | "case_$c" >/dev/null; done; done
for ((r = 1; r <= rounds; r++)); do
  for c in "${cases[@]}"; do
    for ((i = 0; i < runs; i++)); do
      t0=$EPOCHREALTIME
      printf '%s' "$payload" | "case_$c" >/dev/null
      t1=$EPOCHREALTIME
      echo "$t0 $t1"
    done | awk '{ printf "%.2f\n", ($2 - $1) * 1000 }' >"$work/$c.$r"
  done
done
spooled=$(cat "$work"/gone/spool/*.jsonl 2>/dev/null | wc -l)
echo "observerctl hook with observer down: $rounds rounds x $runs runs per case (load $(cut -d' ' -f1 /proc/loadavg))"
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base_med=$(cat "$work"/baseline.* | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
printf '%-14s %8s %8s %8s %8s   %-24s %s\n' case min median p95 max "round medians" "median / baseline"
for c in "${cases[@]}"; do
  sort -n "$work/$c".* >"$work/$c.all"
  n=$(wc -l <"$work/$c.all")
  at() { sed -n "$(((($1 * n) + 99) / 100))p" "$work/$c.all"; }
  per=""
  for ((r = 1; r <= rounds; r++)); do per+="$(median "$work/$c.$r") "; done
  med=$(at 50)
  printf '%-14s %8s %8s %8s %8s   %-24s %s\n' "$c" "$(head -1 "$work/$c.all")" "$med" "$(at 95)" "$(tail -1 "$work/$c.all")" "$per" \
    "$(awk -v a="$med" -v b="$base_med" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }')"
done
echo "events spooled by the bus-gone case: $spooled (want $((rounds * runs + 3)))"
