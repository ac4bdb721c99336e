#!/usr/bin/env bash
# The deployed form, as users run it: `observerctl up` on a fresh OBSERVER_HOME whose HOME holds
# the ~300 MB history `../shared/scripts/gen_history.py scaled HOME 40` builds. Per round
# (scripts/benchdeployed.py): the time until the suite has settled (everything stored, the bus
# empty, the writer catching nothing up: rollups, full-text index, analysis), the CPU it took, the
# suite's RSS then, and over the AFTER seconds that follow with nothing written: the suite's CPU,
# the watcher's share of a core (idle is idle), its RSS at the end (split into anonymous memory and
# file-backed pages, mostly the binaries' code, and its PSS, which counts a page shared by two
# processes once: the bus host and the writer both run observerctl), the store and its WAL.
#
#   ROUNDS=n   rounds (default 3); min / median / max of each figure are printed
#   BASE=rev   also build that revision and run it in the same rounds, alternating which goes first
#   AFTER=s    the idle window after settling (default 180, the issue's 3 minutes)
#   COPIES=n   copies of the corpus (default 40)
#
# No figure is checked against a target; issue 33's targets are printed beside them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
COPIES=${COPIES:-40}
AFTER=${AFTER:-180}
bench_setup
bench_build_trees
bench_history
echo "== deployed form: $mb MB in $files files ($hist), $ROUNDS round(s), ${AFTER} s idle after each: ${TREES[*]}" >&2

results=$work/results.jsonl
for ((r = 1; r <= ROUNDS; r++)); do
	for tree in $(bench_tree_order "$r"); do
		"${OBS_ENV[@]}" python3 "$here/benchdeployed.py" "$tree" "$r" "$(tree_bin "$tree")" "$hist" "$AFTER" >>"$results"
	done
done

labels=()
for t in "${TREES[@]}"; do labels+=("$t=$(tree_label "$t")"); done
BENCH_SCRIPTS=$here python3 - "$results" "$mb" "$files" "$AFTER" "${labels[@]}" <<'PY'
import os, sys
sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
from benchreport import Rounds, print_table
mb, files, after = sys.argv[2], sys.argv[3], float(sys.argv[4])
labels = dict(a.split("=", 1) for a in sys.argv[5:])
trees = list(labels)
R = Rounds(sys.argv[1], trees)
figures = [
    ("settled, s (from `up`)", "settled_s", "{:.2f}", "<= 5 s"),
    ("CPU until settled, s (all components)", "cpu_settle_s", "{:.2f}", ""),
    ("suite RSS when settled, MB", "rss_settled_mb", "{:.0f}", ""),
    (f"suite RSS {after:.0f} s later, MB", "rss_after_mb", "{:.0f}", "<= 120 MB (3 min)"),
    ("  of it anonymous, MB", "anon_after_mb", "{:.0f}", ""),
    ("  of it the binaries and other files, MB", "file_after_mb", "{:.0f}", ""),
    ("  suite PSS then, MB", "pss_after_mb", "{:.0f}", ""),
    (f"suite CPU in those {after:.0f} s, s", "cpu_after_s", "{:.2f}", "<= 3 s (3 min)"),
    ("  of a core, %", "idle_core_pct", "{:.2f}", ""),
    ("watcher idle, % of a core", "watch_core_pct", "{:.2f}", "<= 0.5 %"),
    ("store MB", "store_mb", "{:.1f}", "<= 100 MB"),
    ("its WAL MB", "wal_mb", "{:.1f}", "checkpointed"),
]
n = max(len(v) for v in R.by.values())
print(f"\ndeployed form: `observerctl up` on {mb} MB ({files} files, gen_history.py scaled), {n} round(s), min / median / max")
head = ["figure"] + [labels[t] for t in trees] + (["current / base (medians)"] if "base" in R.by else []) + ["issue 33 target"]
table = [head]
for name, key, fmt, target in figures:
    row = [name] + [R.cell(t, key, fmt) for t in trees]
    if "base" in R.by:
        b, c = R.mmm("base", key), R.mmm("current", key)
        row.append(f"{c[1] / b[1]:.2f}x" if b and c and b[1] else "n/a")
    table.append(row + [target])
print_table(table)
for t in trees:
    last = R.by[t][-1]
    print(f"  {labels[t]}, last round, {after:.0f} s after settling: RSS " +
          ", ".join(f"{k} {v:.0f}" for k, v in last["rss_after_by"].items()) + " MB; CPU " +
          ", ".join(f"{k} {v:.2f}" for k, v in last["cpu_after_by"].items()) + " s")
print("  The machine is shared and noisy: read the spread, not one figure.")
PY
