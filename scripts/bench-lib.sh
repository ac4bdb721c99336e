# Shared by scripts/bench-cold-scan.sh and scripts/bench-proxy.sh (sourced, not run).
#
# bench_setup        cd to the repository, make the work directory ($work), install the EXIT/INT/TERM
#                    traps; OBS_ENV: the env command that runs observer's processes without what
#                    in the caller's environment would steer them elsewhere
# bench_on_exit CMD  run CMD at exit (last registered, first run), even after Ctrl-C
# bench_build_trees  build the binaries of the working tree, and of $BASE when set, and the bench
#                    tools; sets TREES (run order of round 1) and TREE_BIN_<name>, TREE_LABEL_<name>
# bench_tree_order R the trees in the order of round R (alternating, so neither always goes first)
# free_port          a free TCP port on 127.0.0.1
# count_rows DB T    rows of table T in the SQLite file DB (read-only)
#
# BENCH_DIR (default /tmp/observer-bench) keeps what is worth keeping between runs: the generated
# history, the binaries built from a BASE revision (by commit). Everything else lives in $work and
# is removed at exit.

BENCH_DIR=${BENCH_DIR:-/tmp/observer-bench}
ROUNDS=${ROUNDS:-3}
BASE=${BASE:-}
GO=${GO:-go}
TAGS=sqlite_fts5

_bench_exit_cmds=()
bench_on_exit() { _bench_exit_cmds+=("$1"); }
_bench_cleanup() {
	local i
	trap - EXIT INT TERM
	for ((i = ${#_bench_exit_cmds[@]} - 1; i >= 0; i--)); do
		eval "${_bench_exit_cmds[i]}" >/dev/null 2>&1 || true
	done
}

bench_setup() {
	cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
	ROOT=$PWD
	case "$ROUNDS" in '' | *[!0-9]* | 0) echo "ROUNDS must be a positive integer" >&2; exit 64 ;; esac
	mkdir -p "$BENCH_DIR"
	work=$(mktemp -d "${TMPDIR:-/tmp}/observer-bench-run.XXXXXX")
	bench_on_exit "rm -rf '$work'"
	trap _bench_cleanup EXIT
	trap 'echo "interrupted" >&2; exit 130' INT
	trap 'exit 143' TERM
	# Nothing from the caller's environment may point observer or a reader somewhere else:
	# observer's processes run under "${OBS_ENV[@]}" VAR=value ... command, which drops those
	# variables (env execs, so it adds no process to the measured tree).
	OBS_ENV=(env)
	local v
	for v in $(compgen -e); do
		case "$v" in OBSERVER_* | CLAUDE_CONFIG_DIR | CODEX_HOME | GEMINI_CLI_HOME | QWEN_HOME | QWEN_RUNTIME_DIR | \
			PI_CODING_AGENT_DIR | PI_CODING_AGENT_SESSION_DIR | CLINE_DIR | CLINE_DATA_DIR | CLINE_SESSION_DATA_DIR | \
			CRUSH_GLOBAL_DATA | XDG_DATA_HOME | XDG_CONFIG_HOME | APPDATA | LOCALAPPDATA) OBS_ENV+=(-u "$v") ;;
		esac
	done
	# No fetch of LiteLLM's price file ([pricing] auto_update is on by default) in a measured run.
	OBS_ENV+=(OBSERVER_PRICING_AUTO_UPDATE=false)
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

count_rows() {
	python3 -c 'import sqlite3, sys
print(sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True).execute(f"SELECT count(*) FROM {sys.argv[2]}").fetchone()[0])' "$1" "$2"
}

# _bench_build SRC_DIR OUT_DIR: every command of the tree at SRC_DIR into OUT_DIR.
_bench_build() {
	rm -rf "$2.tmp"
	(cd "$1" && $GO build -tags "$TAGS" -o "$2.tmp/" ./cmd/...) || return 1
	rm -rf "$2" && mv "$2.tmp" "$2"
}

bench_build_trees() {
	echo "== building: working tree${BASE:+ and $BASE}, bench tools" >&2
	TREE_BIN_current=$work/bin-current
	_bench_build "$ROOT" "$TREE_BIN_current" || { echo "build of the working tree failed" >&2; exit 1; }
	local head dirty=""
	head=$(git -C "$ROOT" rev-parse --short HEAD)
	[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && dirty=" + uncommitted changes"
	TREE_LABEL_current="current ($head$dirty)"
	TREES=(current)
	if [ -n "$BASE" ]; then
		local rev
		rev=$(git -C "$ROOT" rev-parse --verify --quiet "$BASE^{commit}") || { echo "BASE=$BASE is not a revision" >&2; exit 64; }
		TREE_BIN_base=$BENCH_DIR/bin-$rev
		if [ ! -x "$TREE_BIN_base/observerctl" ] || [ ! -x "$TREE_BIN_base/observer-proxy" ]; then
			local wt=/tmp/bench-base-${rev:0:12}-$$
			bench_on_exit "git -C '$ROOT' worktree remove --force '$wt'; rm -rf '$wt' '$TREE_BIN_base.tmp'"
			git -C "$ROOT" worktree add --detach --quiet "$wt" "$rev" || exit 1
			_bench_build "$wt" "$TREE_BIN_base" || { echo "build of $BASE failed" >&2; exit 1; }
			git -C "$ROOT" worktree remove --force "$wt"
		fi
		TREE_LABEL_base="base ($BASE = ${rev:0:7})"
		TREES=(base current)
	fi
	# Each tree runs from a fresh copy of its binaries (cp: written as any installed file is):
	# a binary just written by Go's linker held 2 to 3 times its resident code pages in an idle
	# process (the bus host 24-28 against 9-10 MB, the writer 27 against 12), while the same
	# files copied with cp held what the cached base build did, so a freshly built tree measured
	# against a cached one read 20-40 MB more RSS for the suite.
	local name
	for name in "${TREES[@]}"; do
		local v="TREE_BIN_$name"
		cp -r "${!v}" "$work/run-$name" || exit 1
		printf -v "$v" '%s' "$work/run-$name"
	done
	tools=$work/tools
	local t
	for t in "$@"; do
		$GO build -o "$tools/$t" "$ROOT/scripts/$t.go" || { echo "build of scripts/$t.go failed" >&2; exit 1; }
	done
}

bench_tree_order() {
	if [ "${#TREES[@]}" -eq 2 ] && [ $(($1 % 2)) -eq 0 ]; then
		echo "${TREES[1]} ${TREES[0]}"
	else
		echo "${TREES[*]}"
	fi
}

# tree_bin NAME / tree_label NAME
tree_bin() { local v="TREE_BIN_$1"; echo "${!v}"; }
tree_label() { local v="TREE_LABEL_$1"; echo "${!v}"; }

# wait_file PATH SECONDS: wait until PATH exists and is not empty.
wait_file() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# bench_history: the ~300 MB history `../shared/scripts/gen_history.py scaled HOME $COPIES` builds,
# generated once per generator and corpus version under $BENCH_DIR and read once into the page
# cache; sets hist (its HOME), files (its transcripts) and mb (their size).
bench_history() {
	local gen=$ROOT/../shared/scripts/gen_history.py key
	[ -f "$gen" ] || { echo "missing $gen" >&2; exit 1; }
	key=$( (sha256sum "$gen"; find "$(dirname "$gen")/../corpus" -type f -printf '%P %s %T@\n' 2>/dev/null | sort) | sha256sum | cut -c1-12)
	hist=$BENCH_DIR/history-$key-$COPIES
	if [ ! -d "$hist" ]; then
		echo "== generating the history (gen_history.py scaled HOME $COPIES) into $hist" >&2
		rm -rf "$hist.tmp"
		bench_on_exit "rm -rf '$hist.tmp'"
		python3 "$gen" scaled "$hist.tmp" "$COPIES" >/dev/null
		mv "$hist.tmp" "$hist"
	fi
	files=$(find "$hist" -name '*.jsonl' | wc -l)
	mb=$(du -smc "$hist/.claude" "$hist/.codex" 2>/dev/null | tail -1 | cut -f1)
	find "$hist" -name '*.jsonl' -exec cat {} + >/dev/null
}
