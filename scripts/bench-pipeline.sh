#!/usr/bin/env bash
# Benchmarks of the backbone, printed side by side:
#  1. sustained events/s from 4 publishers through the bus into the store, beside a raw batched
#     SQLite insert of the same events, and their ratio (median of RUNS runs);
#  2. the idle memory (RSS) of the suite started by `observerctl up`, after it settles.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}

echo "== bus -> store vs raw SQLite insert (200,000 events, $RUNS runs)"
go test -tags sqlite_fts5 -run '^$' -bench BusToStore -benchtime 1x -count "$RUNS" ./internal/writer/ | tee /tmp/observer-bench.txt | grep Benchmark
awk '/BenchmarkBusToStore/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "bus_events/s") b[++nb] = $i; if ($(i+1) == "raw_events/s") r[++nr] = $i; if ($(i+1) == "ratio") q[++nq] = $i } }
function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }
END { printf "median: bus %.0f events/s, raw %.0f events/s, ratio %.2f\n", median(b, nb), median(r, nr), median(q, nq) }' /tmp/observer-bench.txt

echo "== idle memory of the suite"
make -s build >/dev/null
home=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export OBSERVER_HOME=$home OBSERVER_BUS_PORT=$port OBSERVER_PRICING_AUTO_UPDATE=false
./bin/observerctl up --detach >/dev/null
sleep "${IDLE_SECONDS:-10}"
total=0
while read -r name pid; do
	rss=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status)
	printf "  %-10s pid %-7s %6d KiB\n" "$name" "$pid" "$rss"
	total=$((total + rss))
done < <(./bin/observerctl status --json | python3 -c 'import json,sys
seen=set()
for c in json.load(sys.stdin)["components"]:
    if c.get("pid") and c["pid"] not in seen:
        seen.add(c["pid"]); print(("supervisor+bus" if c["name"]=="bus" else c["name"]), c["pid"])')
printf "  total      %d KiB (%.1f MiB)\n" "$total" "$(echo "$total/1024" | bc -l)"
./bin/observerctl down >/dev/null
rm -rf "$home"
