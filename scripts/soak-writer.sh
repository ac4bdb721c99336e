#!/usr/bin/env bash
# The writer's memory over a long steady load, as users run it: `observerctl up` in a fresh
# OBSERVER_HOME, the proxy's upstreams pointed at bin/observer-fakeapi, and RATE requests/s
# through the proxy (scripts/soakload.go: Anthropic and OpenAI shapes, streaming and not, a new
# session every 50 requests) for DURATION, while the writer's RSS (VmRSS of the `observerctl
# writer` child, found again after a restart) is sampled every SAMPLE seconds. With BASE=rev that
# revision is built (in a /tmp worktree, kept under BENCH_DIR by commit, as scripts/bench-lib.sh
# does) and runs its own suite at the same time, each with its own load and fake upstream, so both
# see the same machine. It prints the RSS per minute (min / median / max MB) side by side, VmRSS
# and RssAnon (the writer's own memory: VmRSS also counts the pages of the binary it has mapped,
# which the kernel drops under pressure and reads back, so compare trees on RssAnon), then each
# tree's first and last minute, the store's size (database and WAL) and the turns stored.
#
#   DURATION=10m RATE=30 SAMPLE=10   defaults
#   BASE=rev                         also run that revision, at the same time
#   OUT=DIR                          keep the samples (samples.tsv), the writers' logs and, with
#                                    PROFILE=1, their heap profiles (OBSERVER_MEMPROFILE: taken at
#                                    the largest live heap; the log ends with the Go heap and RSS peaks)
#
# Ports are picked free at run time, everything listens on 127.0.0.1, and every process started
# here is stopped at exit, Ctrl-C included. No figure is checked: read the curve.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
DURATION=${DURATION:-10m}
RATE=${RATE:-30}
SAMPLE=${SAMPLE:-10}
OUT=${OUT:-}
PROFILE=${PROFILE:-}
bench_setup
bench_build_trees soakload
[ -n "$OUT" ] && mkdir -p "$OUT"
samples=${OUT:-$work}/samples.tsv
: >"$samples"

# status_py BIN HOME EXPR: evaluate a Python expression on `observerctl status --json` (as s).
status_py() {
	"${OBS_ENV[@]}" OBSERVER_HOME="$2" "$1/observerctl" status --json 2>/dev/null |
		python3 -c "import json,sys
try: s=json.load(sys.stdin)
except ValueError: sys.exit(1)
print($3)"
}
writer_pid() {
	status_py "$1" "$2" 'next((c.get("pid",0) for c in s["components"] if c["name"]=="writer"),0)' 2>/dev/null || echo 0
}

declare -A SUITE HOMEDIR PROXY WPID LOAD
for tree in "${TREES[@]}"; do
	bin=$(tree_bin "$tree")
	oh=$(mktemp -d "$work/obs-$tree.XXXXXX")
	home=$(mktemp -d "$work/home-$tree.XXXXXX") # an empty HOME: observer-watch finds no transcript
	up_port=$(free_port)
	"$bin/observer-fakeapi" -addr "127.0.0.1:$up_port" >"$work/fakeapi-$tree.log" 2>&1 &
	bench_on_exit "kill -TERM $!"
	proxy_port=$(free_port)
	envs=("${OBS_ENV[@]}" HOME="$home" OBSERVER_HOME="$oh" OBSERVER_BUS_PORT="$(free_port)"
		OBSERVER_PROXY_ADDR="127.0.0.1:$proxy_port" OBSERVER_DASH_ADDR="127.0.0.1:$(free_port)"
		OBSERVER_OTLP_ADDR="127.0.0.1:$(free_port)" OBSERVER_OTLP_GRPC_ADDR="127.0.0.1:$(free_port)"
		OBSERVER_PROXY_ANTHROPIC_UPSTREAM="http://127.0.0.1:$up_port"
		OBSERVER_PROXY_OPENAI_UPSTREAM="http://127.0.0.1:$up_port")
	[ -n "$PROFILE" ] && [ -n "$OUT" ] && envs+=(OBSERVER_MEMPROFILE="$OUT/heap-$tree.prof")
	# setsid: the suite and its children are one process group, stopped together at exit.
	setsid "${envs[@]}" "$bin/observerctl" up >"$work/up-$tree.log" 2>&1 &
	SUITE[$tree]=$!
	bench_on_exit "$(printf '%q ' "${envs[@]}") '$bin/observerctl' down; kill -TERM -- -${SUITE[$tree]}"
	HOMEDIR[$tree]=$oh
	PROXY[$tree]="http://127.0.0.1:$proxy_port"
done
for tree in "${TREES[@]}"; do
	bin=$(tree_bin "$tree")
	ok=""
	for ((i = 0; i < 600; i++)); do
		if [ "$(status_py "$bin" "${HOMEDIR[$tree]}" 's["running"] and bool(s["components"]) and all(c.get("health")=="ok" for c in s["components"])' || true)" = True ]; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ -n "$ok" ] || { echo "$tree: the suite did not become healthy within 60 s:" >&2; tail -20 "$work/up-$tree.log" >&2; exit 1; }
	WPID[$tree]=$(writer_pid "$bin" "${HOMEDIR[$tree]}")
done
echo "== $DURATION at $RATE requests/s through the proxy, the writer's RSS every ${SAMPLE}s: ${TREES[*]}" >&2
for tree in "${TREES[@]}"; do
	"$tools/soakload" -proxy "${PROXY[$tree]}" -rate "$RATE" -d "$DURATION" >"$work/load-$tree.json" 2>"$work/load-$tree.err" &
	LOAD[$tree]=$!
	bench_on_exit "kill -TERM ${LOAD[$tree]}"
done

rss_kb() { awk '/^VmRSS:/ {r=$2} /^RssAnon:/ {a=$2} END {if (r != "") print r "\t" a}' "/proc/$1/status" 2>/dev/null || true; }
t0=$EPOCHREALTIME
next=0
while :; do
	running=""
	for tree in "${TREES[@]}"; do kill -0 "${LOAD[$tree]}" 2>/dev/null && running=1; done
	[ -n "$running" ] || break
	now=$(echo "$EPOCHREALTIME - $t0" | bc)
	for tree in "${TREES[@]}"; do
		kb=$(rss_kb "${WPID[$tree]}")
		if [ -z "$kb" ]; then # the writer restarted
			WPID[$tree]=$(writer_pid "$(tree_bin "$tree")" "${HOMEDIR[$tree]}")
			kb=$(rss_kb "${WPID[$tree]}")
		fi
		db=${HOMEDIR[$tree]}/observer.db
		printf '%s\t%.0f\t%s\t%s\t%s\t%s\n' "$tree" "$now" "${WPID[$tree]}" "${kb:-0	0}" \
			"$(stat -c %s "$db" 2>/dev/null || echo 0)" "$(stat -c %s "$db-wal" 2>/dev/null || echo 0)" >>"$samples"
	done
	next=$((next + SAMPLE))
	sleep "$(echo "$next - ($EPOCHREALTIME - $t0)" | bc | sed 's/^-.*/0/')"
done
for tree in "${TREES[@]}"; do
	bin=$(tree_bin "$tree")
	for ((i = 0; i < 600; i++)); do
		[ "$(status_py "$bin" "${HOMEDIR[$tree]}" 's.get("bus",{}).get("pending",1)' || echo 1)" = 0 ] && break
		sleep 0.1
	done
	echo "$tree turns $(count_rows "${HOMEDIR[$tree]}/observer.db" api_turns || echo -1) sessions $(count_rows "${HOMEDIR[$tree]}/observer.db" sessions || echo -1)" >>"$work/counts"
	"${OBS_ENV[@]}" OBSERVER_HOME="${HOMEDIR[$tree]}" "$bin/observerctl" down >/dev/null 2>&1 || true
	wait "${SUITE[$tree]}" 2>/dev/null || true
	[ -n "$OUT" ] && cp "${HOMEDIR[$tree]}"/logs/writer.log "$OUT/writer-$tree.log" 2>/dev/null || true
done

labels=()
for t in "${TREES[@]}"; do labels+=("$t=$(tree_label "$t")"); done
python3 - "$samples" "$work" "$SAMPLE" "${labels[@]}" <<'PY'
import json, statistics, sys
samples, work, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
labels = dict(a.split("=", 1) for a in sys.argv[4:])
trees = list(labels)
rows = {t: [] for t in trees}
for line in open(samples):
    t, s, pid, kb, anon, db, wal = line.split("\t")
    rows[t].append((int(s), int(pid), int(kb) / 1024, int(db) / 1048576, int(wal) / 1048576, int(anon) / 1024))
counts = {}
for line in open(f"{work}/counts"):
    p = line.split()
    counts[p[0]] = f"{int(p[2]):,} turns, {int(p[4]):,} sessions stored"
minutes = sorted({s // 60 for t in trees for s, *_ in rows[t]})
def cell(v):
    return f"{min(v):.1f} / {statistics.median(v):.1f} / {max(v):.1f}" if v else "-"
for col, title in ((2, "RSS (VmRSS)"), (5, "anonymous RSS (RssAnon: the RSS less the mapped binary and libraries, which the kernel may drop and share)")):
    print(f"\nthe writer's {title} in MB under `observerctl up`, sampled every {step} s; per minute min / median / max")
    head = ["minute"] + [labels[t] for t in trees]
    table = [head]
    for m in minutes:
        table.append([f"  {m:3d}"] + [cell([r[col] for r in rows[t] if r[0] // 60 == m and r[col] > 0]) for t in trees])
    w = [max(len(r[i]) for r in table) for i in range(len(head))]
    for i, r in enumerate(table):
        print("  " + "  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            print("  " + "  ".join("-" * x for x in w))
for t in trees:
    r = [x for x in rows[t] if x[2] > 0]
    if not r:
        continue
    first = [x[2] for x in r if x[0] < 60]
    last_m = r[-1][0] // 60
    last = [x[2] for x in r if x[0] // 60 == last_m]
    pids = len({x[1] for x in r})
    try:
        load = json.load(open(f"{work}/load-{t}.json"))
        ld = f"{load['sent']:,} requests, {load['errors']} errors, {load['skipped']} skipped"
        if load.get("first_error"):
            ld += f" (first: {load['first_error']})"
    except (OSError, ValueError, KeyError):
        ld = "load: no report"
    print(f"  {labels[t]}: first minute median {statistics.median(first) if first else 0:.1f} MB, "
          f"last minute median {statistics.median(last):.1f} MB, max {max(x[2] for x in r):.1f} MB "
          f"(anonymous: last minute median {statistics.median([x[5] for x in r if x[0] // 60 == last_m]):.1f}, max {max(x[5] for x in r):.1f}); "
          f"store {r[-1][3]:.1f} MB + WAL {r[-1][4]:.1f} MB; {ld}; {counts.get(t, '')}"
          + (f"; the writer restarted ({pids} pids)" if pids > 1 else ""))
print("  The machine is shared: read the shape of the curve, not one figure.")
PY
