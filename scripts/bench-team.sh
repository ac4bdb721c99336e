#!/usr/bin/env bash
# Team mode as users run it, on this one machine: a hub (`observerctl hub init`, `hub add-member`
# three times, `hub up`) and three member suites (`observerctl team join CREDS --share full`, then
# `observerctl up`), each a home of its own with its own ports, all separate processes of the
# working tree's binaries; beside them a fourth, plain suite (no team) for the baseline.
# scripts/benchteam.go publishes action events into the members' buses with pkg/bus and watches
# the hub's store (read-only) for them. Each round, on fresh homes:
#
#   quiet     each member publishes RATE events/s for PACE_S s into an empty store; the stores are
#             polled every 5 ms: the delay from a member's publish to the event's row in the
#             hub's store, p50 / p95 / p99 / max, and to its row in the member's own store
#   burst     the three members publish EVENTS events each at once (PublishBatch, BATCH at a
#             time, as fast as their buses ack): events/s from the first publish to the moment
#             the hub's store holds all 3 x EVENTS
#   paced     then the quiet phase again, now that the stores hold the burst
#   catch-up  the hub stops (`observerctl down`); the members publish EVENTS each, which wait in
#             their share streams; the hub starts again: how long until its first row, and the
#             events/s it stores them at, first row to last, without the members' work beside it
#   baseline  3 x EVENTS published as in the burst straight into the plain suite's own bus and
#             stored by its own writer: what one SQLite writer takes without the team hop. The
#             burst's figure over it is printed beside. Odd rounds run the team first, even
#             rounds the baseline first.
#
#   ROUNDS=n (3), EVENTS per member (20000), BATCH (500), RATE per member (200), PACE_S (10)
#
# Everything shares this machine's cores: during the burst the three members' buses, sharers and
# own writers (which store every event too, as on members' machines) run beside the hub, and take
# most of the CPU. (Until 87b2659 the writers recomputed the rollups of an event's whole hour at
# each live commit, so the paced delays grew with the actions the current hour held; now only the
# touched sessions' rows of the hour are.) Ports are picked free at run
# time, everything listens on 127.0.0.1, every process started here is stopped at exit, the homes
# are removed. BASE is not used: the figures compared are the baseline of the same run. No figure
# is checked against a target.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
EVENTS=${EVENTS:-20000}
BATCH=${BATCH:-500}
RATE=${RATE:-200}
PACE_S=${PACE_S:-10}
BASE= # team mode is compared with its own baseline, not with another revision
for v in EVENTS BATCH RATE PACE_S; do
	case "${!v}" in '' | *[!0-9]* | 0) echo "$v must be a positive integer" >&2; exit 64 ;; esac
done
MEMBERS=(alice bob carol)
bench_setup
bench_build_trees benchteam
tools=$work/tools
bin=$(tree_bin current)

# A suite NAME of the round lives in $rd/NAME (its home), $rd/NAME.home (HOME, for the watcher),
# $rd/NAME.env (its ports, one VAR=value a line) and $rd/NAME.up.log (its supervisor's output).
rd=""
declare -A PIDS=()
suite_env() {
	local extra
	mapfile -t extra <"$rd/$1.env"
	E=("${OBS_ENV[@]}" HOME="$rd/$1.home" "${extra[@]}")
}
# ctl NAME ARGS...: observerctl --home NAME's home ARGS, in NAME's environment.
ctl() {
	local n=$1
	shift
	suite_env "$n"
	"${E[@]}" "$bin/observerctl" --home "$rd/$n" "$@"
}
# make_suite NAME VAR=value...: NAME's home and environment.
make_suite() {
	local n=$1
	shift
	mkdir -p "$rd/$n" "$rd/$n.home"
	printf '%s\n' "$@" >"$rd/$n.env"
}
member_ports() {
	echo "OBSERVER_BUS_PORT=$(free_port)" "OBSERVER_PROXY_ADDR=127.0.0.1:$(free_port)" \
		"OBSERVER_DASH_ADDR=127.0.0.1:$(free_port)" "OBSERVER_OTLP_ADDR=127.0.0.1:$(free_port)" \
		"OBSERVER_OTLP_GRPC_ADDR=127.0.0.1:$(free_port)"
}
# start_suite NAME ARGS...: observerctl ARGS (a supervisor in the foreground) in the background.
start_suite() {
	local n=$1
	shift
	suite_env "$n"
	"${E[@]}" "$bin/observerctl" --home "$rd/$n" "$@" >"$rd/$n.up.log" 2>&1 &
	PIDS[$n]=$!
}
stop_suite() {
	local pid=${PIDS[$1]:-}
	[ -n "$pid" ] || return 0
	ctl "$1" down >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	unset "PIDS[$1]"
}
WATCHER=""
stop_all() {
	local n
	if [ -n "$WATCHER" ]; then
		kill -TERM "$WATCHER" 2>/dev/null || true
		wait "$WATCHER" 2>/dev/null || true
		WATCHER=""
	fi
	for n in "${MEMBERS[@]}" solo hub; do stop_suite "$n"; done
}
bench_on_exit stop_all
port_of() { sed -n 's/^OBSERVER_BUS_PORT=//p' "$rd/$1.env"; }
# wait_healthy NAME SECONDS: the suite runs and every component is healthy (and a member's hub
# mirror listens to it).
wait_healthy() {
	local n=$1 i
	for ((i = 0; i < $2 * 10; i++)); do
		if ctl "$n" status --json 2>/dev/null | python3 -c "import json,sys
s=json.load(sys.stdin); sys.exit(0 if s['running'] and s['components'] and all(c.get('health')=='ok' for c in s['components']) else 1)"; then
			case " ${MEMBERS[*]} " in
			*" $n "*) ctl "$n" team status --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin).get('connected') else 1)" && return 0 ;;
			*) return 0 ;;
			esac
		fi
		sleep 0.1
	done
	echo "suite $n did not come up healthy in $2 s; its supervisor said:" >&2
	tail -20 "$rd/$n.up.log" >&2
	return 1
}
# wait_rows DB N SECONDS: the store DB holds at least N actions.
wait_rows() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(count_rows "$1" actions 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "$1 holds $(count_rows "$1" actions 2>/dev/null || echo 0) actions, not $2, after $3 s" >&2
	return 1
}

round_up() {
	rd=$(mktemp -d "$work/round.XXXXXX")
	local hub_port m
	hub_port=$(free_port)
	make_suite hub "OBSERVER_BUS_PORT=$(free_port)" "OBSERVER_DASH_ADDR=127.0.0.1:$(free_port)" \
		"OBSERVER_HUB_ADDR=127.0.0.1:$hub_port"
	ctl hub hub init --addr "127.0.0.1:$hub_port" >"$rd/hub.init.log"
	for m in "${MEMBERS[@]}"; do
		ctl hub hub add-member "$m" -o "$rd/$m.observer-team" >>"$rd/hub.init.log"
	done
	start_suite hub hub up
	# shellcheck disable=SC2046 # member_ports prints words without spaces
	make_suite solo $(member_ports)
	start_suite solo up
	for m in "${MEMBERS[@]}"; do
		# shellcheck disable=SC2046
		make_suite "$m" $(member_ports)
		ctl "$m" team join "$rd/$m.observer-team" --share full >"$rd/$m.join.log"
		start_suite "$m" up
	done
	for m in hub solo "${MEMBERS[@]}"; do wait_healthy "$m" 90; done
}

# team_pubs: the -pub flags of the members' buses (and, with "local", -local for their stores).
team_pubs() {
	local m
	TP=()
	for m in "${MEMBERS[@]}"; do
		TP+=(-pub "$m=$(port_of "$m")=$rd/$m/bus.token")
		[ "${1:-}" = local ] && TP+=(-local "$m=$rd/$m/observer.db")
	done
	return 0
}
# quiet_members N: every member's own store holds N actions (its writer is done).
quiet_members() {
	local m
	for m in "${MEMBERS[@]}"; do wait_rows "$rd/$m/observer.db" "$1" 300; done
}
# team ROUND: the quiet phase, the burst, the paced phase, the catch-up, through the hub.
team() {
	local paced=$((RATE * PACE_S)) m i
	team_pubs local
	"$tools/benchteam" "${TP[@]}" -db "$rd/hub/observer.db" -hub -rate "$RATE" -for "${PACE_S}s" -tag "quiet$1" >"$rd/quiet.json"
	team_pubs
	"$tools/benchteam" "${TP[@]}" -db "$rd/hub/observer.db" -hub -events "$EVENTS" -batch "$BATCH" -tag "burst$1" >"$rd/burst.json"
	quiet_members $((paced + EVENTS)) # the members' own writers finish the burst first
	team_pubs local
	"$tools/benchteam" "${TP[@]}" -db "$rd/hub/observer.db" -hub -rate "$RATE" -for "${PACE_S}s" -tag "paced$1" >"$rd/paced.json"
	# The catch-up: the events wait in the members' share streams while the hub is down.
	stop_suite hub
	team_pubs
	"$tools/benchteam" "${TP[@]}" -publish-only -events "$EVENTS" -batch "$BATCH" -tag "catchup$1" >"$rd/held.json"
	quiet_members $((2 * paced + 2 * EVENTS))
	for m in "${MEMBERS[@]}"; do
		for ((i = 0; ; i++)); do
			ctl "$m" team status --json 2>/dev/null | python3 -c "import json,sys
sys.exit(0 if json.load(sys.stdin).get('pending', 0) >= int(sys.argv[1]) else 1)" "$EVENTS" && break
			[ "$i" -lt 600 ] || { echo "member $m's share stream did not take the catch-up's events" >&2; return 1; }
			sleep 0.1
		done
	done
	"$tools/benchteam" "${TP[@]}" -watch-only -db "$rd/hub/observer.db" -hub -events "$EVENTS" -tag "catchup$1" >"$rd/catchup.json" &
	WATCHER=$!
	start_suite hub hub up
	wait "$WATCHER"
	WATCHER=""
	wait_healthy hub 90
}
# baseline ROUND: the burst into the plain suite's own bus, three publishers as in team.
baseline() {
	local pubs=() m
	for m in "${MEMBERS[@]}"; do pubs+=(-pub "$m=$(port_of solo)=$rd/solo/bus.token"); done
	"$tools/benchteam" "${pubs[@]}" -db "$rd/solo/observer.db" -events "$EVENTS" -batch "$BATCH" -tag "base$1" >"$rd/base.json"
}

results=$work/results.jsonl
echo "== $ROUNDS round(s): hub + ${#MEMBERS[@]} members x $EVENTS events (batches of $BATCH), then $RATE events/s" \
	"per member for $PACE_S s; baseline: one suite's own writer; $(tree_label current)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
	round_up
	if [ $((r % 2)) -eq 1 ]; then
		team "$r"
		quiet_members $((2 * RATE * PACE_S + 2 * EVENTS))
		baseline "$r"
	else
		baseline "$r"
		team "$r"
	fi
	stop_all
	python3 - "$r" "$rd" >>"$results" <<'PY'
import json, sys
r, rd = int(sys.argv[1]), sys.argv[2]
q, t, p, c, b = (json.load(open(f"{rd}/{n}.json")) for n in ("quiet", "burst", "paced", "catchup", "base"))
row = {"tree": "current", "round": r,
       "team_stored": t["stored_per_s"], "team_accepted": t["accepted_per_s"],
       "base_stored": b["stored_per_s"], "base_accepted": b["accepted_per_s"], "base_ingest": b.get("ingest_per_s"),
       "ratio": t["stored_per_s"] / b["stored_per_s"] if b["stored_per_s"] else None,
       "catchup_first": c.get("first_seen_s"), "catchup_ingest": c.get("ingest_per_s"),
       "catchup_ratio": c["ingest_per_s"] / b["ingest_per_s"] if c.get("ingest_per_s") and b.get("ingest_per_s") else None,
       "paced_rate": p["rate_per_s"],
       "missing": sum(x.get("missing", 0) for x in (q, t, p, c, b)) + sum(x["events"] - x.get("local_stored", x["events"]) for x in (q, p)),
       "failed": sum(x.get("failed", 0) for x in (q, t, p, b)),
       "errors": [x["first_error"] for x in (q, t, p, c, b) if x.get("first_error")]}
for pre, x in (("q", q), ("p", p)):
    for k in ("p50", "p95", "p99", "max"):
        row[f"{pre}_{k}"] = x[f"delay_{k}_ms"]
        row[f"{pre}l_{k}"] = x.get(f"local_delay_{k}_ms")
print(json.dumps(row))
print(f"  round {r}: burst {row['team_stored']:,.0f} events/s stored at the hub ({row['team_accepted']:,.0f} accepted), "
      f"baseline {row['base_stored']:,.0f}, team/baseline {row['ratio'] or 0:.2f}; catch-up {row['catchup_ingest'] or 0:,.0f} events/s "
      f"(first row after {row['catchup_first'] or 0:.1f} s); delay p50/p99 quiet {row['q_p50']:.0f}/{row['q_p99']:.0f} ms, "
      f"after the burst {row['p_p50']:.0f}/{row['p_p99']:.0f} ms; {row['missing']} missing, {row['failed']} failed"
      + (f"; errors: {row['errors']}" if row["errors"] else ""), file=sys.stderr)
PY
	rm -rf "$rd"
done

BENCH_SCRIPTS=$here python3 - "$results" "$EVENTS" "$RATE" "$PACE_S" "${#MEMBERS[@]}" <<'PY'
import os, sys
sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
from benchreport import Rounds
R = Rounds(sys.argv[1], ["current"])
events, rate, pace, members = (int(x) for x in sys.argv[2:6])
cell = lambda k, f: R.cell("current", k, f)
S = None
figures = [
    (S, f"burst: {members} members x {events:,} action events at once (events/s)"),
    ("stored by the hub, first publish -> all in its store", "team_stored", "{:,.0f}"),
    ("accepted by the members' buses", "team_accepted", "{:,.0f}"),
    (S, f"baseline: {members} x {events:,} events into one plain suite's own bus, its own writer (events/s)"),
    ("stored, first publish -> all in its store", "base_stored", "{:,.0f}"),
    ("accepted by its bus", "base_accepted", "{:,.0f}"),
    ("team burst / baseline (stored)", "ratio", "{:.2f}x"),
    (S, f"catch-up: the hub down while the members publish {members} x {events:,}, then `hub up`"),
    ("s from `hub up` to its first row", "catchup_first", "{:.2f}"),
    ("events/s stored by the hub, first row -> last", "catchup_ingest", "{:,.0f}"),
    ("  baseline, first row -> last", "base_ingest", "{:,.0f}"),
    ("  catch-up / baseline", "catchup_ratio", "{:.2f}x"),
]
for pre, title in (("q", "quiet: empty stores"), ("p", "paced: after the burst")):
    figures.append((S, f"{title}, {members} members x {rate} events/s for {pace} s: delay from a member's publish (ms, 5 ms polls)"))
    for k in ("p50", "p95", "p99", "max"):
        figures.append((f"to the hub's store {k}", f"{pre}_{k}", "{:.1f}"))
    for k in ("p50", "p99"):
        figures.append((f"  to the member's own store {k}", f"{pre}l_{k}", "{:.1f}"))
figures += [
    (S, "every phase"),
    ("events/s published in the paced phase (all members)", "paced_rate", "{:,.0f}"),
    ("events missing (never stored)", "missing", "{:,.0f}"),
    ("events the buses did not take", "failed", "{:,.0f}"),
]
print(f"\nteam mode: hub + {members} member suites as separate processes on one machine, "
      f"{len(R.rows)} round(s), min / median / max")
for f in figures:
    if f[0] is S:
        print("  " + f[1])
    else:
        print(f"    {f[0]:56} {cell(f[1], f[2])}")
errors = sorted({e for r in R.rows for e in r["errors"]})
if errors:
    print("  errors: " + "; ".join(errors))
PY
