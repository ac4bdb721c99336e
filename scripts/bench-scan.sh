#!/usr/bin/env bash
# Transcript ingest benchmark on the ~300 MB history built from the shared corpus
# (gen_history.py scaled HOME 40: fresh session, message, request and agent ids per copy).
# Prints, side by side: cold `observerctl scan` throughput (MB/s, lines/s), a no-op re-scan,
# `observerctl cost --json` on the indexed history, and `ccusage claude session --json --offline`
# (npm ccusage@20.0.24) on the same files when npx can run it.
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${COPIES:-40}
make -s build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 ../shared/scripts/gen_history.py scaled "$work/home" "$COPIES" >/dev/null
mb=$(du -sm "$work/home" | cut -f1)
export HOME=$work/home OBSERVER_HOME=$work/observer CLAUDE_CONFIG_DIR= CODEX_HOME=
export OBSERVER_BUS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "== history: ${mb} MB in $(find "$HOME" -name '*.jsonl' | wc -l) files"

t0=$(date +%s.%N)
./bin/observerctl scan --json > "$work/scan.json"
t1=$(date +%s.%N)
python3 - "$work/scan.json" "$t0" "$t1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); wall = float(sys.argv[3]) - float(sys.argv[2])
mb = s["bytes"] / 2**20
print(f"cold scan:   {mb:.0f} MB, {s['lines']} lines, {s['events']} events in {wall:.2f} s wall "
      f"({mb / wall:.1f} MB/s, {s['lines'] / wall:,.0f} lines/s; reading alone {mb / s['seconds']:.1f} MB/s)")
PY
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for i in 1 2 3 4 5; do
	s=$(date +%s%N); ./bin/observerctl scan >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))
done | med | xargs printf "no-op scan:  %s ms (median of 5, whole command)\n"
for i in 1 2 3 4 5; do
	s=$(date +%s%N); ./bin/observerctl cost --json --group-by session >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))
done | med | xargs printf "cost --json: %s ms (median of 5, --group-by session, whole command)\n"
./bin/observerctl cost --json | python3 -c 'import json,sys; t=json.load(sys.stdin)["total"]; print("observer total:", {k: t[k] for k in ("input_tokens","output_tokens","cache_read_tokens","cache_creation_tokens","cost_usd")})'

if command -v npx >/dev/null; then
	s=$(date +%s%N)
	if npx -y ccusage@20.0.24 claude session --json --offline > "$work/ccusage.json" 2>/dev/null; then
		e=$(date +%s%N)
		printf "ccusage claude session --json --offline: %s ms\n" $(( (e - s) / 1000000 ))
		python3 -c 'import json,sys; t=json.load(open(sys.argv[1])).get("totals",{}); print("ccusage total:", {k: t.get(k) for k in ("inputTokens","outputTokens","cacheReadTokens","cacheCreationTokens","totalCost")})' "$work/ccusage.json"
	else
		echo "ccusage: could not run (npx ccusage@20.0.24)"
	fi
fi
