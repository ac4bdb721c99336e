#!/usr/bin/env bash
# The OTLP receiver as users run it: `observerctl up` (observer-proxy hosting the receiver on
# [otlp] addr, the bus host, the writer, observer-watch, observer-dash as separate processes) in a
# fresh OBSERVER_HOME. scripts/benchotlp.go sends Claude Code-shaped protobuf exports (EXPORTS
# exports of RECORDS api_request records each, C at a time) to it and, in the same round, to a bare
# receiver that only decodes each export with pdata and answers (benchotlp -serve-bare): the
# receiver's answer latency p50/p99 under that load beside the bare floor, records accepted per
# second, and records stored per second (from the first export sent to the last turn in the
# store, waiting for the writer).
#
#   ROUNDS=n (3), EXPORTS (2000), RECORDS (20), C (8)
#
# Ports are picked free at run time, everything listens on 127.0.0.1, every process started here
# is stopped at exit. No figure is checked against a target.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
EXPORTS=${EXPORTS:-2000}
RECORDS=${RECORDS:-20}
C=${C:-8}
bench_setup
bench_build_trees benchotlp
tools=$work/tools
bin=$(tree_bin current)

"$tools/benchotlp" -serve-bare -addr-file "$work/bare.addr" >"$work/bare.log" 2>&1 &
bare_pid=$!
bench_on_exit "kill -TERM $bare_pid"
wait_file "$work/bare.addr" 10 || { echo "the bare receiver did not start" >&2; exit 1; }
bare=$(cat "$work/bare.addr")

suite=""
suite_stop() {
	[ -n "$suite" ] || return 0
	"${envs[@]}" "$bin/observerctl" down >/dev/null 2>&1 || kill -TERM "$suite" 2>/dev/null
	wait "$suite" 2>/dev/null || true
	suite=""
}
bench_on_exit suite_stop

results=$work/results.jsonl
want=$((EXPORTS * RECORDS))
echo "== $ROUNDS round(s) of $EXPORTS exports x $RECORDS records, c=$C: $(tree_label current)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
	oh=$(mktemp -d "$work/obs.XXXXXX")
	home=$(mktemp -d "$work/home.XXXXXX")
	otlp_port=$(free_port)
	envs=("${OBS_ENV[@]}" HOME="$home" OBSERVER_HOME="$oh" OBSERVER_BUS_PORT="$(free_port)"
		OBSERVER_PROXY_ADDR="127.0.0.1:$(free_port)" OBSERVER_DASH_ADDR="127.0.0.1:$(free_port)"
		OBSERVER_OTLP_ADDR="127.0.0.1:$otlp_port" OBSERVER_OTLP_GRPC_ADDR="127.0.0.1:$(free_port)")
	"${envs[@]}" "$bin/observerctl" up >"$work/up.log" 2>&1 &
	suite=$!
	for ((i = 0; i < 600; i++)); do
		"${envs[@]}" "$bin/observerctl" status --json 2>/dev/null | python3 -c "import json,sys
s=json.load(sys.stdin); sys.exit(0 if s['running'] and s['components'] and all(c.get('health')=='ok' for c in s['components']) else 1)" && break
		sleep 0.1
	done
	"$tools/benchotlp" -url "http://$bare/v1/logs" -exports "$EXPORTS" -records "$RECORDS" -c "$C" -tag "bare$r" >"$work/bare.json"
	"$tools/benchotlp" -url "http://127.0.0.1:$otlp_port/v1/logs" -exports "$EXPORTS" -records "$RECORDS" -c "$C" -tag "obs$r" >"$work/obs.json"
	stored=0
	for ((i = 0; i < 1200; i++)); do
		stored=$(count_rows "$oh/observer.db" api_turns 2>/dev/null || echo 0)
		[ "$stored" -ge "$want" ] && break
		sleep 0.05
	done
	done_ms=$(python3 -c 'import time; print(int(time.time()*1000))')
	suite_stop
	python3 - "$r" "$work/obs.json" "$work/bare.json" "$stored" "$done_ms" >>"$results" <<'PY'
import json, sys
r, o, b, stored, done = int(sys.argv[1]), json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), int(sys.argv[4]), int(sys.argv[5])
row = {"round": r, "p50": o["p50_ms"], "p99": o["p99_ms"], "max": o["max_ms"], "bare_p50": b["p50_ms"], "bare_p99": b["p99_ms"],
       "accepted_rps": o["records_per_s"], "bare_rps": b["records_per_s"], "failed": o["failed"],
       "stored": stored, "stored_rps": stored / ((done - o["sent_at"]) / 1000)}
print(json.dumps(row))
print(f"  round {r}: answer p50 {row['p50']:.2f} ms p99 {row['p99']:.2f} ms (bare {row['bare_p50']:.2f} / {row['bare_p99']:.2f}); "
      f"{row['accepted_rps']:,.0f} records/s accepted (bare {row['bare_rps']:,.0f}); {stored} stored, {row['stored_rps']:,.0f} records/s "
      f"end to end; {row['failed']} exports failed", file=sys.stderr)
PY
	rm -rf "$oh" "$home"
done

python3 - "$results" "$want" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def mmm(k, f):
    v = sorted(x[k] for x in rows)
    return " / ".join(f.format(x) for x in (v[0], statistics.median(v), v[-1]))
print(f"\nOTLP receiver under `observerctl up` vs a bare pdata decoder, {len(rows)} round(s) of {sys.argv[2]} records, min / median / max")
for name, k, f in [("answer latency p50 (ms)", "p50", "{:.2f}"), ("  bare p50", "bare_p50", "{:.2f}"),
                   ("answer latency p99 (ms)", "p99", "{:.2f}"), ("  bare p99", "bare_p99", "{:.2f}"),
                   ("records accepted / s", "accepted_rps", "{:,.0f}"), ("  bare", "bare_rps", "{:,.0f}"),
                   ("records stored", "stored", "{:,.0f}"), ("records stored / s, end to end", "stored_rps", "{:,.0f}")]:
    print(f"  {name:32} {mmm(k, f)}")
PY
