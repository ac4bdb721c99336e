#!/usr/bin/env bash
# Benchmark of observer-dash's API: p50, p95 and max over 30 requests (after one untimed) of every
# endpoint, for the windows 24h, 7d, 30d and all, plus filtered variants, served by the dashboard's
# own server on loopback from a store of 5,000,000 actions and 1,000,000 token rows (90 days,
# 5,000 sessions, 50 projects, 3 clients). Target: p95 <= 50 ms for every row.
#
# The first run builds the store with scripts/gen-dash-store.go (a few minutes, ~4 GB under
# $OBSERVER_DASH_BENCH_DIR, default $TMPDIR/observer-dash-bench-v1); later runs reuse it for a day,
# since its timestamps end when it was built. Delete the directory to rebuild it.
# Run it alone: it measures latency. Extra arguments go to the generator (-n 50, -dir ...).
set -euo pipefail
cd "$(dirname "$0")/.."
go run -tags sqlite_fts5 scripts/gen-dash-store.go -bench "$@"
