#!/usr/bin/env bash
# The proxy as users run it: `observerctl up` (the supervisor hosting the bus, and the writer,
# observer-proxy, observer-watch and observer-dash as separate processes) in a fresh OBSERVER_HOME,
# its Anthropic upstream pointed at a fake Messages API (scripts/benchupstream.go, answering at
# once). Beside it, in the same run and against the same upstream, a bare httputil.ReverseProxy
# (benchupstream.go -bare), and the upstream itself (direct). scripts/benchload.go measures each in
# turn: c=1 latency p50/p99 (non-streaming, 2 KB JSON body), c=16 throughput, and streaming time to
# first byte at c=1. The suite runs under scripts/benchrun.go, which reports its CPU time and peak
# RSS (every process) over the round; after the load, the script waits for the writer to store
# what the proxy published and counts the API turns stored.
#
#   ROUNDS=n   rounds (default 3); min / median / max of each figure are printed
#   BASE=rev   also build that revision (in a /tmp worktree, binaries kept under BENCH_DIR by
#              commit) and run it in the same rounds, alternating which goes first
#   LOAD_ARGS  extra flags for benchload (-lat-n 2000 -ttfb-n 1000 -d 5s by default)
#
# Ports are picked free at run time, everything listens on 127.0.0.1, and every process started
# here is stopped at exit, Ctrl-C included. No figure is checked against a target; the issue's
# targets are printed beside them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
LOAD_ARGS=${LOAD_ARGS:-}
bench_setup
bench_build_trees benchrun benchupstream benchload
tools=$work/tools

# start_bg LOG CMD...: start CMD in the background, stopped at exit; sets BG_PID.
start_bg() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	BG_PID=$!
	bench_on_exit "kill -TERM $BG_PID; wait $BG_PID"
}

start_bg "$work/upstream.log" "$tools/benchupstream" -listen 127.0.0.1:0 -addr-file "$work/upstream.addr"
wait_file "$work/upstream.addr" 10 || { echo "the fake upstream did not start:" >&2; cat "$work/upstream.log" >&2; exit 1; }
upstream=$(cat "$work/upstream.addr")
start_bg "$work/bare.log" "$tools/benchupstream" -bare "$upstream" -listen 127.0.0.1:0 -addr-file "$work/bare.addr"
wait_file "$work/bare.addr" 10 || { echo "the bare proxy did not start:" >&2; cat "$work/bare.log" >&2; exit 1; }
bare=$(cat "$work/bare.addr")
echo "== fake upstream $upstream, bare ReverseProxy $bare; $ROUNDS round(s): ${TREES[*]}" >&2

# The running suite (one at a time) is stopped at exit, Ctrl-C included.
suite=""
suite_stop() {
	[ -n "$suite" ] || return 0
	"${envs[@]}" "$suite_bin/observerctl" down >/dev/null 2>&1 || kill -TERM "$suite" 2>/dev/null
	wait "$suite" 2>/dev/null || true
	suite=""
}
bench_on_exit suite_stop

# status_py BIN HOME EXPR: evaluate a Python expression on `observerctl status --json` (as s).
status_py() {
	"${OBS_ENV[@]}" OBSERVER_HOME="$2" "$1/observerctl" status --json 2>/dev/null |
		python3 -c "import json,sys
try: s=json.load(sys.stdin)
except ValueError: sys.exit(1)
print($3)"
}

results=$work/results.jsonl
for ((r = 1; r <= ROUNDS; r++)); do
	for tree in $(bench_tree_order "$r"); do
		bin=$(tree_bin "$tree")
		oh=$(mktemp -d "$work/obs.XXXXXX")
		home=$(mktemp -d "$work/home.XXXXXX") # an empty HOME: observer-watch finds no transcript
		proxy_port=$(free_port)
		envs=("${OBS_ENV[@]}" HOME="$home" OBSERVER_HOME="$oh" OBSERVER_BUS_PORT="$(free_port)"
			OBSERVER_PROXY_ADDR="127.0.0.1:$proxy_port" OBSERVER_DASH_ADDR="127.0.0.1:$(free_port)"
			OBSERVER_PROXY_ANTHROPIC_UPSTREAM="$upstream" OBSERVER_PROXY_OPENAI_UPSTREAM="$upstream"
			OBSERVER_PROXY_GEMINI_UPSTREAM="$upstream")
		"${envs[@]}" "$tools/benchrun" -o "$work/suite.json" -- "$bin/observerctl" up >"$work/up.log" 2>&1 &
		suite=$!
		suite_bin=$bin
		healthy=""
		for ((i = 0; i < 600; i++)); do
			if [ "$(status_py "$bin" "$oh" 's["running"] and bool(s["components"]) and all(c.get("health")=="ok" for c in s["components"])' || true)" = True ]; then
				healthy=1
				break
			fi
			kill -0 "$suite" 2>/dev/null || break
			sleep 0.1
		done
		if [ -z "$healthy" ]; then
			echo "round $r, $tree: the suite did not become healthy within 60 s:" >&2
			tail -20 "$work/up.log" >&2
			exit 1
		fi
		components=$(status_py "$bin" "$oh" '",".join(c["name"] for c in s["components"])')
		# shellcheck disable=SC2086
		"$tools/benchload" -targets "observer=http://127.0.0.1:$proxy_port,bare=$bare,direct=$upstream" $LOAD_ARGS \
			>"$work/load.json" 2>"$work/load.err" || true
		[ -s "$work/load.json" ] || { echo "round $r, $tree: benchload failed:" >&2; cat "$work/load.err" >&2; exit 1; }
		# What the proxy published, stored: wait (up to 60 s) until the bus has nothing pending.
		t0=$EPOCHREALTIME
		for ((i = 0; i < 600; i++)); do
			[ "$(status_py "$bin" "$oh" 's.get("bus",{}).get("pending",1)' || echo 1)" = 0 ] && break
			sleep 0.1
		done
		drain=$(echo "$EPOCHREALTIME - $t0" | bc)
		turns=$(count_rows "$oh/observer.db" api_turns || echo -1)
		suite_stop
		python3 - "$tree" "$r" "$work/load.json" "$work/suite.json" "$turns" "$drain" "$components" >>"$results" <<'PY'
import json, sys
tree, rnd, load = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
try:
    suite = json.load(open(sys.argv[4]))
except (OSError, ValueError):
    suite = {}
o, b, d = load["observer"], load["bare"], load["direct"]
row = {"tree": tree, "round": rnd, "components": sys.argv[7],
       "obs_p50": o["lat_p50_ms"], "obs_p99": o["lat_p99_ms"], "bare_p50": b["lat_p50_ms"], "bare_p99": b["lat_p99_ms"],
       "direct_p50": d["lat_p50_ms"], "added_p50": o["lat_p50_ms"] - b["lat_p50_ms"], "added_p99": o["lat_p99_ms"] - b["lat_p99_ms"],
       "obs_rps": o["rps"], "bare_rps": b["rps"], "direct_rps": d["rps"], "x_bare": o["rps"] / b["rps"],
       "obs_ttfb": o["ttfb_p50_ms"], "bare_ttfb": b["ttfb_p50_ms"], "direct_ttfb": d["ttfb_p50_ms"],
       "ttfb_over_bare": o["ttfb_p50_ms"] - b["ttfb_p50_ms"], "obs_ttfb_p99": o["ttfb_p99_ms"],
       "suite_cpu_s": suite.get("cpu_s"), "suite_peak_mb": suite.get("peak_tree_rss_kb", 0) / 1024 or None,
       "sent": o["requests"], "turns": int(sys.argv[5]), "drain_s": float(sys.argv[6]),
       "errors": {k: v["errors"] for k, v in load.items() if v["errors"]},
       "first_error": {k: v["first_error"] for k, v in load.items() if v.get("first_error")}}
print(json.dumps(row))
print(f"  round {rnd} {tree:8} observer p50 {row['obs_p50']:.3f} ms (bare {row['bare_p50']:.3f}), "
      f"c=16 {row['obs_rps']:,.0f} req/s (bare {row['bare_rps']:,.0f}, {row['x_bare']:.2f}x), "
      f"TTFB {row['obs_ttfb']:.3f} ms (bare {row['bare_ttfb']:.3f}, direct {row['direct_ttfb']:.3f}); "
      f"{row['turns']} of {row['sent']} turns stored" + (f"; ERRORS {row['errors']}" if row["errors"] else ""),
      file=sys.stderr)
PY
		rm -rf "$oh" "$home"
	done
done

labels=()
for t in "${TREES[@]}"; do labels+=("$t=$(tree_label "$t")"); done
BENCH_SCRIPTS=$here python3 - "$results" "${labels[@]}" <<'PY'
import json, os, statistics, sys
sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
from benchreport import Rounds
labels = dict(a.split("=", 1) for a in sys.argv[2:])
trees = list(labels)
R = Rounds(sys.argv[1], trees)
rows, by, mmm, cell = R.rows, R.by, R.mmm, R.cell

S = None  # section marker
figures = [
    (S, "c=1 latency, non-streaming, 2 KB body (ms)"),
    ("observer p50", "obs_p50", "{:.3f}", ""),
    ("bare p50", "bare_p50", "{:.3f}", ""),
    ("direct p50", "direct_p50", "{:.3f}", ""),
    ("added p50 (observer - bare)", "added_p50", "{:+.3f}", "<= +0.1 ms"),
    ("observer p99", "obs_p99", "{:.3f}", ""),
    ("bare p99", "bare_p99", "{:.3f}", ""),
    ("added p99 (observer - bare)", "added_p99", "{:+.3f}", ""),
    (S, "c=16 throughput, non-streaming, 2 KB body (req/s)"),
    ("observer", "obs_rps", "{:,.0f}", ""),
    ("bare", "bare_rps", "{:,.0f}", ""),
    ("direct", "direct_rps", "{:,.0f}", ""),
    ("observer / bare", "x_bare", "{:.2f}x", ">= 0.85x"),
    (S, "streaming time to first byte, c=1 (ms)"),
    ("observer p50", "obs_ttfb", "{:.3f}", ""),
    ("bare p50", "bare_ttfb", "{:.3f}", ""),
    ("direct p50", "direct_ttfb", "{:.3f}", ""),
    ("observer - bare", "ttfb_over_bare", "{:+.3f}", "<= +0.1 ms"),
    ("observer p99", "obs_ttfb_p99", "{:.3f}", ""),
    (S, "the suite over the round (every process under `observerctl up`)"),
    ("CPU s (user+sys)", "suite_cpu_s", "{:.1f}", ""),
    ("peak RSS MB", "suite_peak_mb", "{:.0f}", ""),
    ("requests through observer", "sent", "{:,.0f}", ""),
    ("API turns stored", "turns", "{:,.0f}", ""),
    ("s to drain the bus after the load", "drain_s", "{:.1f}", ""),
]
n = max(len(v) for v in by.values())
print(f"\nobserver-proxy under `observerctl up` ({rows[0]['components']}) vs a bare httputil.ReverseProxy,"
      f" same fake upstream, {n} round(s), min / median / max")
head = ["figure"] + [labels[t] for t in trees] + (["current / base (medians)"] if "base" in by else []) + ["issue 33 target"]
table = [head]
for f in figures:
    if f[0] is S:
        table.append([f[1]])
        continue
    name, key, fmt, target = f
    row = ["  " + name] + [cell(t, key, fmt) for t in trees]
    if "base" in by:
        b, c = mmm("base", key), mmm("current", key)
        if key.startswith(("added", "ttfb_over")):
            row.append(f"{c[1] - b[1]:+.3f} ms" if b and c else "n/a")
        else:
            row.append(f"{c[1] / b[1]:.2f}x" if b and c and b[1] else "n/a")
    row.append(target)
    table.append(row)
w = [max(len(r[i]) for r in table if len(r) > 1) for i in range(len(head))]
for i, r in enumerate(table):
    if len(r) == 1:
        print("  " + r[0])
        continue
    print("  " + "  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    if i == 0:
        print("  " + "  ".join("-" * x for x in w))
for t in trees:
    for r in by[t]:
        if r["errors"]:
            print(f"  ERRORS {labels[t]} round {r['round']}: {r['errors']} (first: {r['first_error']})")
        if r["turns"] != r["sent"]:
            print(f"  NOTE {labels[t]} round {r['round']}: {r['turns']} turns stored of {r['sent']} requests sent through observer-proxy")
print("  The machine is shared and noisy (the load generator, both proxies, the upstream and the suite share its cores):"
      " read the spread, not one figure.")
PY
