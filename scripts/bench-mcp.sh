#!/usr/bin/env bash
# Benchmark of observer-mcp's query tools: p50 and p95 per tool (through the SDK's client and
# server on an in-memory transport) on a store of 1,000,000 actions over 2,000 sessions of ~50
# projects and 90 days, and the byte size of the tools/list answer. Targets: p95 <= 20 ms,
# tools/list <= 3.75 KB.
#
# The first run builds the store (about a minute, ~1 GB under $OBSERVER_MCP_BENCH_DIR, default
# $TMPDIR/observer-mcp-bench-v1) and later runs reuse it; delete the directory to rebuild it.
# Run it alone: it measures latency.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -tags sqlite_fts5 -run '^$' -bench BenchmarkTools -benchtime "${BENCHTIME:-300x}" -timeout 60m \
	./internal/mcpserver/ | grep -E 'Benchmark|ok|FAIL'
