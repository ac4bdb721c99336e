#!/usr/bin/env bash
# Cold ingest as users run it: `observerctl scan` with no suite running (it hosts its own writer,
# fed without a bus), into a fresh OBSERVER_HOME each round, on the ~300 MB history
# `../shared/scripts/gen_history.py scaled HOME 40` builds (unique session, message and tool ids per
# copy: 25,536 actions expected). The whole command is measured by scripts/benchrun.go: wall time,
# CPU time (user+sys, every process of the run) and the peak of the summed RSS of its process
# tree (sampled every 50 ms); then the actions stored are counted, so a history whose copies share
# their tool ids (fewer actions, a lighter run) is noticed.
#
#   ROUNDS=n   rounds (default 3); min / median / max of each figure are printed
#   BASE=rev   also build that revision (in a /tmp worktree, binaries kept under BENCH_DIR by
#              commit) and run it in the same rounds, alternating which goes first
#   COPIES=n   copies of the corpus (default 40)
#   BENCH_DIR  cache of the generated history and of BASE binaries (default /tmp/observer-bench)
#
# Beside them, in the same rounds and measured the same way: the parse-only floor
# (scripts/parsefloor.go: every line decoded with encoding/json on 2 goroutines, nothing else) and
# ccusage's re-parse of the same files (`ccusage daily --json --offline`, Claude Code and Codex, no
# store; the ccusage on PATH, or CCUSAGE=path; skipped when absent), with observer's ratios to each.
#
# No figure is checked against a target; the issue's targets are printed beside them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
COPIES=${COPIES:-40}
bench_setup
bench_build_trees benchrun parsefloor
ccusage_bin=${CCUSAGE:-$(command -v ccusage || true)}

bench_history
echo "== cold scan: $mb MB in $files files ($hist), $ROUNDS round(s): ${TREES[*]}" >&2

results=$work/results.jsonl
# reference NAME ROUND COMMAND...: a run of another program on the same history, measured the same
# way, as a row of its own.
reference() {
	local name=$1 rnd=$2
	shift 2
	"${OBS_ENV[@]}" HOME="$hist" "$work/tools/benchrun" -o "$work/run.json" -- "$@" >/dev/null 2>&1 || true
	python3 - "$name" "$rnd" "$work/run.json" >>"$results" <<'PY'
import json, sys
name, rnd, run = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
print(json.dumps({"tree": name, "round": int(rnd), "wall_s": run["wall_s"], "cpu_s": run["cpu_s"],
                  "peak_mb": run["peak_tree_rss_kb"] / 1024}))
print(f"  round {rnd} {name:8} wall {run['wall_s']:6.2f} s  cpu {run['cpu_s']:6.2f} s  "
      f"peak RSS {run['peak_tree_rss_kb'] / 1024:6.1f} MB", file=sys.stderr)
PY
}
for ((r = 1; r <= ROUNDS; r++)); do
	for tree in $(bench_tree_order "$r"); do
		bin=$(tree_bin "$tree")
		oh=$(mktemp -d "$work/home.XXXXXX")
		port=$(free_port)
		set +e
		"${OBS_ENV[@]}" HOME="$hist" OBSERVER_HOME="$oh" OBSERVER_BUS_PORT="$port" \
			"$work/tools/benchrun" -o "$work/run.json" -- "$bin/observerctl" scan --json >"$work/scan.json" 2>"$work/scan.err"
		rc=$?
		set -e
		if [ "$rc" -ne 0 ]; then
			echo "round $r, $tree: observerctl scan exited $rc:" >&2
			tail -20 "$work/scan.err" >&2
			exit 1
		fi
		actions=$(count_rows "$oh/observer.db" actions)
		store=$(du -cb "$oh"/observer.db* | tail -1 | cut -f1)
		python3 - "$tree" "$r" "$actions" "$work/run.json" "$work/scan.json" "$store" >>"$results" <<'PY'
import json, sys
tree, rnd, actions = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store_mb = int(sys.argv[6]) / 2**20
run = json.load(open(sys.argv[4]))
try:
    scan = json.load(open(sys.argv[5]))
except ValueError:
    scan = {}
print(json.dumps({"tree": tree, "round": rnd, "actions": actions, "wall_s": run["wall_s"], "cpu_s": run["cpu_s"],
                  "user_s": run["user_s"], "sys_s": run["sys_s"], "peak_mb": run["peak_tree_rss_kb"] / 1024,
                  "procs": run["max_procs"], "bytes": scan.get("bytes"), "events": scan.get("events"),
                  "readers_s": scan.get("seconds"), "total_s": scan.get("total_seconds"), "store_mb": store_mb}))
print(f"  round {rnd} {tree:8} wall {run['wall_s']:6.2f} s  cpu {run['cpu_s']:6.2f} s  "
      f"peak RSS {run['peak_tree_rss_kb'] / 1024:6.1f} MB  actions {actions}", file=sys.stderr)
PY
		rm -rf "$oh"
	done
	# The floor and ccusage, in the same round.
	reference floor "$r" "$work/tools/parsefloor"
	if [ -n "$ccusage_bin" ]; then
		reference ccusage "$r" "$ccusage_bin" daily --json --offline
	fi
done

labels=()
for t in "${TREES[@]}"; do labels+=("$t=$(tree_label "$t")"); done
labels+=("floor=parse-only floor")
[ -n "$ccusage_bin" ] && labels+=("ccusage=ccusage re-parse")
BENCH_SCRIPTS=$here python3 - "$results" "$COPIES" "$mb" "$files" "${labels[@]}" <<'PY'
import json, os, statistics, sys
sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
from benchreport import Rounds, print_table
copies, mb, files = int(sys.argv[2]), sys.argv[3], sys.argv[4]
labels = dict(a.split("=", 1) for a in sys.argv[5:])
trees = list(labels)
R = Rounds(sys.argv[1], trees)
rows, by, mmm, cell = R.rows, R.by, R.mmm, R.cell

for r in rows:
    r["mbps"] = r["bytes"] / 2**20 / r["wall_s"] if r.get("bytes") else None
    r["writer_tail_s"] = r["total_s"] - r["readers_s"] if r.get("total_s") and r.get("readers_s") is not None else None
    # Outside the command's own account: start-up and shutdown (for a build without
    # total_seconds, the whole command less its reading).
    if r.get("readers_s") is not None:
        r["outside_s"] = r["wall_s"] - (r.get("total_s") or r["readers_s"])

figures = [
    ("wall s", "wall_s", "{:.2f}", "<= 3 s"),
    ("CPU s (user+sys)", "cpu_s", "{:.2f}", ""),
    ("peak RSS MB (tree)", "peak_mb", "{:.0f}", "<= 100 MB"),
    ("MB/s (wall)", "mbps", "{:.1f}", ""),
    ("read + published s", "readers_s", "{:.2f}", ""),
    ("stored and caught up after, s", "writer_tail_s", "{:.2f}", ""),
    ("outside its own timer s", "outside_s", "{:.2f}", "<= 0.5 s"),
    ("store MB (with its WAL)", "store_mb", "{:.1f}", "<= 100 MB"),
    ("actions stored", "actions", "{:.0f}", ""),
]
n = max(len(v) for v in by.values())
print(f"\ncold `observerctl scan` on {mb} MB ({files} files, gen_history.py scaled {copies}), "
      f"{n} round(s), min / median / max; whole command, every process of the run")
def ratio(a, b, key):
    x, y = mmm(a, key), mmm(b, key)
    return f"{x[1] / y[1]:.2f}x" if x and y and y[1] else ""
refs = [t for t in ("base", "floor", "ccusage") if by.get(t)]
head = (["figure"] + [labels[t] for t in trees] + [f"current / {t}" for t in refs] + ["issue 33 target"])
table = [head]
for name, key, fmt, target in figures:
    row = [name] + [cell(t, key, fmt) for t in trees] + [ratio("current", t, key) or "n/a" for t in refs]
    row.append(target)
    table.append(row)
print_table(table)
print("  (read + published: scan's own `seconds`, from its start until every event is read and handed on;"
      " stored and caught up after: its `total_seconds` less that (the writer finishing, indexing, analysing);"
      " outside its own timer: the whole command less `total_seconds` (less `seconds` for a build without it):"
      " start-up and shutdown)")
for t in [t for t in trees if t in ("base", "current")]:
    counts = sorted({r["actions"] for r in by[t]})
    if copies == 40 and counts != [25536]:
        print(f"  NOTE {labels[t]}: {counts} actions stored, 25,536 expected on this history with unique tool ids"
              " (copies sharing tool ids collapse into fewer actions, and the run is lighter)")
if len({r["actions"] for r in rows if "actions" in r}) > 1:
    print("  NOTE: the trees stored different action counts; compare their figures with care")
print("  The machine is shared and noisy: read the spread, not one figure.")
PY
