#!/usr/bin/env bash
# Transcript ingest benchmark on the ~300 MB history built from the shared corpus
# (gen_history.py scaled HOME 40: fresh session, message, request and agent ids per copy).
# Prints, side by side: cold `observerctl scan` throughput (MB/s, lines/s), a no-op re-scan,
# `observerctl cost --json` on the indexed history, `ccusage claude session --json --offline` (npm
# ccusage@20.0.24) on the same files, and the append-to-store latency of the running suite.
# HISTORY=DIR reuses a history built before instead of building one (about 17 s).
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${COPIES:-40}
make -s build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${HISTORY:-}" ]; then
	ln -s "$(realpath "$HISTORY")" "$work/home"
else
	python3 ../shared/scripts/gen_history.py scaled "$work/home" "$COPIES" >/dev/null
fi
mb=$(du -smcL "$work/home/.claude" "$work/home/.codex" 2>/dev/null | tail -1 | cut -f1)
HOME_ORIG=$HOME
export HOME=$work/home OBSERVER_HOME=$work/observer CLAUDE_CONFIG_DIR= CODEX_HOME= OBSERVER_PRICING_AUTO_UPDATE=false
export OBSERVER_BUS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "== history: ${mb} MB in $(find -L "$HOME" -name '*.jsonl' | wc -l) files"

t0=$(date +%s.%N)
./bin/observerctl scan --json > "$work/scan.json"
t1=$(date +%s.%N)
python3 - "$work/scan.json" "$t0" "$t1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); wall = float(sys.argv[3]) - float(sys.argv[2])
mb = s["bytes"] / 2**20
print(f"cold scan:   {mb:.0f} MB, {s['lines']} lines, {s['events']} events in {wall:.2f} s wall "
      f"({mb / wall:.1f} MB/s, {s['lines'] / wall:,.0f} lines/s; scan before the writer caught up {mb / s['seconds']:.1f} MB/s)")
PY
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for i in 1 2 3 4 5; do
	s=$(date +%s%N); ./bin/observerctl scan >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))
done | med | xargs printf "no-op scan:  %s ms (median of 5, whole command)\n"
for i in 1 2 3 4 5; do
	s=$(date +%s%N); ./bin/observerctl cost --json --group-by session >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))
done | med | xargs printf "cost --json: %s ms (median of 5, --group-by session, whole command)\n"
./bin/observerctl cost --json | python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print("observer total:", {k: t[k] for k in ("input_tokens","output_tokens","cache_read_tokens","cache_creation_tokens","cost_usd")})'

# ccusage@20.0.24 from npm (installed once into a cache directory), on the same files.
ccdir=${CCUSAGE_DIR:-$HOME_ORIG/.cache/observer-bench/ccusage}
if [ ! -x "$ccdir/node_modules/.bin/ccusage" ] && command -v npm >/dev/null; then
	HOME=$HOME_ORIG npm install --silent --prefix "$ccdir" ccusage@20.0.24 >/dev/null 2>&1 || true
fi
if [ -x "$ccdir/node_modules/.bin/ccusage" ]; then
	for i in 1 2 3; do
		s=$(date +%s%N); env -u CLAUDE_CONFIG_DIR "$ccdir/node_modules/.bin/ccusage" claude session --json --offline > "$work/ccusage.json" 2>/dev/null; e=$(date +%s%N)
		echo $(( (e - s) / 1000000 ))
	done | med | xargs printf "ccusage claude session --json --offline: %s ms (median of 3)\n"
	./bin/observerctl cost --json --group-by client > "$work/ours.json"
	python3 - "$work/ccusage.json" "$work/ours.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["totals"]
o = next(r for r in json.load(open(sys.argv[2]))["rows"] if r["client"] == "claude-code")
print("Claude Code totals, observer vs ccusage session report:")
for ours, theirs in (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens"), ("cache_read_tokens", "cacheReadTokens"),
                     ("cache_creation_tokens", "cacheCreationTokens"), ("cost_usd", "totalCost")):
    print(f"  {ours:22} {o[ours]:>18,.2f} {c[theirs]:>18,.2f}  {'same' if abs(o[ours] - c[theirs]) < 0.005 else f'diff {o[ours] - c[theirs]:+,.4f}'}")
PY
else
	echo "ccusage: not installed (npm install --prefix $ccdir ccusage@20.0.24 failed)"
fi

# Append-to-store latency: the suite runs (`observerctl up`, watcher included); one Claude Code
# prompt line at a time is appended to a live transcript, and the time until its row is in the
# store is measured by polling the store.
live=$work/livehome/.claude/projects/-bench
mkdir -p "$live"
export HOME=$work/livehome OBSERVER_HOME=$work/observer-live
export OBSERVER_PROXY_ADDR=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
./bin/observerctl up --detach >/dev/null
trap './bin/observerctl down >/dev/null 2>&1; rm -rf "$work"' EXIT
python3 - "$live/5e55c0de-0000-4000-8000-000000000001.jsonl" "$OBSERVER_HOME/observer.db" <<'PY'
import json, sqlite3, sys, time, uuid, os
path, db = sys.argv[1], sys.argv[2]
def line(i):
    return json.dumps({"type": "user", "uuid": str(uuid.uuid4()), "sessionId": "5e55c0de-0000-4000-8000-000000000001",
        "cwd": os.environ["HOME"], "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {"role": "user", "content": f"latency probe {i}"}}) + "\n"
def stored(con, i):
    try:
        return con.execute("SELECT count(*) FROM actions WHERE target = ?", (f"latency probe {i}",)).fetchone()[0] > 0
    except sqlite3.OperationalError:
        return False
lat = []
with open(path, "a") as f:
    for i in range(-3, 60):  # the first lines make the watcher see the file; they are not counted
        t0 = time.perf_counter(); f.write(line(i)); f.flush()
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True) if os.path.exists(db) else None
        while con is None or not stored(con, i):
            time.sleep(0.001)
            if con is None and os.path.exists(db):
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            if time.perf_counter() - t0 > 30:
                sys.exit(f"line {i} not stored after 30 s")
        if i >= 0:
            lat.append((time.perf_counter() - t0) * 1000)
        con.close(); time.sleep(0.05)
lat.sort()
print(f"append-to-store latency: p50 {lat[len(lat)//2]:.0f} ms, p95 {lat[int(len(lat)*0.95)]:.0f} ms, max {lat[-1]:.0f} ms over {len(lat)} lines")
PY
