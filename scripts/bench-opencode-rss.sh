#!/usr/bin/env bash
# Resident memory of the watcher's OpenCode/Kilo reader on a large database (issue 29: 1.35 GB
# RSS on a 341 MB database). BenchmarkOpenCodeMemory (internal/ingest) builds a Kilo CLI database
# of COPIES copies of the corpus's OpenCode/Kilo dumps (default 1200: ~300 MB) in a temporary
# directory, then runs one watcher pass over it (internal/ingest's Scanner publishing to a
# publisher that drops the events, as observer-watch publishes to the bus) and prints, in MB:
# the database's size, the resident size before the pass, its peak during the pass (VmHWM, reset
# before it), the resident size right after it and after debug.FreeOSMemory. Linux only
# (/proc/self/status, clear_refs).
#
#   COPIES=n   copies of the corpus (default 1200)
#   OBSERVER_CORPUS  the corpus (default ../shared/corpus)
#
# No figure is checked against a target.
set -euo pipefail
cd "$(dirname "$0")/.."
OBSERVER_BENCH_OPENCODE_COPIES=${COPIES:-1200} \
	go test -tags sqlite_fts5 -run '^$' -bench '^BenchmarkOpenCodeMemory$' -benchtime 1x ./internal/ingest/ |
	awk '/^BenchmarkOpenCodeMemory/ {
		for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
		printf "database          %8.1f MB\n", v["db_MB"]
		printf "events            %8d\n", v["events"]
		printf "RSS before pass   %8.1f MB\n", v["before_rss_MB"]
		printf "RSS peak in pass  %8.1f MB\n", v["peak_rss_MB"]
		printf "RSS after pass    %8.1f MB\n", v["after_rss_MB"]
		printf "RSS after release %8.1f MB  (debug.FreeOSMemory, as observer-watch after a large pass)\n", v["released_rss_MB"]
		found = 1
	}
	/SKIP/ { print }
	END { if (!found) exit 1 }'
