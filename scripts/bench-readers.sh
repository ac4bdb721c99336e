#!/usr/bin/env bash
# Each reader's cold-scan speed in MB/s beside Claude Code's: internal/ingest's dry-run reader
# benchmarks (every source read whole from fresh cursors, the events built and dropped, nothing
# stored: the readers' own speed, with their files in the page cache). Claude Code and Codex read
# the ~300 MB history `../shared/scripts/gen_history.py scaled HOME 40` builds; the other readers
# read copies of the corpus's files of their client (or, where no corpus file exists, of the
# readers' own fixtures: Continue CLI, Amp and the readers added since) laid out as the client keeps them. Their files are smaller
# than Claude Code's, so part of the gap is the cost of a file (open, stat, a whole JSON document).
#
#   ROUNDS=n   rounds (default 3); min / median / max of each reader's MB/s are printed
#   COPIES=n   copies of the corpus in the Claude Code + Codex history (default 40)
#
# A reader whose corpus is absent is skipped by its benchmark (OBSERVER_CORPUS names the corpus).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
COPIES=${COPIES:-40}
bench_setup
bench_history
echo "== reader benchmarks (internal/ingest, dry run), $ROUNDS round(s); Claude Code + Codex on $mb MB in $files files ($hist)" >&2
out=$work/bench.txt
OBSERVER_BENCH_HOME=$hist $GO test -tags "$TAGS" -run '^$' -bench '^BenchmarkReaders' -benchtime 3x -count "$ROUNDS" ./internal/ingest/ |
	tee /dev/stderr >"$out"
python3 - "$out" <<'PY'
import re, statistics, sys
names = {"BenchmarkReaders": "Claude Code + Codex (the history)", "BenchmarkReaders_Gemini": "Gemini CLI (corpus copies)",
         "BenchmarkReaders_Pi": "Pi (corpus copies)", "BenchmarkReaders_Cline": "Cline CLI and VS Code (corpus and fixture copies)",
         "BenchmarkReaders_OpenCode": "OpenCode (corpus copies)", "BenchmarkReaders_Continue": "Continue CLI (fixture copies)",
         "BenchmarkReaders_Amp": "Amp (fixture copies)", "BenchmarkReaders_Droid": "Factory Droid (fixture copies)",
         "BenchmarkReaders_CursorAgent": "Cursor Agent (fixture copies)", "BenchmarkReaders_Antigravity": "Antigravity (fixture copies)",
         "BenchmarkReaders_GrokBuild": "Grok Build (fixture copies)", "BenchmarkReaders_ZCode": "ZCode (fixture copies)",
         "BenchmarkReaders_Kimi": "Kimi CLI (fixture copies)", "BenchmarkReaders_MistralVibe": "Mistral Vibe (fixture copies)",
         "BenchmarkReaders_Codebuff": "Codebuff (fixture copies)", "BenchmarkReaders_Hermes": "Hermes Agent (fixture copies)",
         "BenchmarkReaders_Zed": "Zed Agent (fixture copies)", "BenchmarkReaders_OpenHands": "OpenHands CLI (fixture copies)",
         "BenchmarkReaders_Gptme": "gptme (fixture copies)", "BenchmarkReaders_Kiro": "Kiro (fixture copies)",
         "BenchmarkReaders_Windsurf": "Windsurf (fixture copies)", "BenchmarkReaders_Warp": "Warp (fixture copies)",
         "BenchmarkReaders_Devin": "Devin CLI (fixture copies)", "BenchmarkReaders_Trae": "Trae (fixture copies)",
         "BenchmarkReaders_Cortex": "Cortex Code (fixture copies)", "BenchmarkReaders_VSCopilot": "Copilot for Visual Studio (fixture copies)",
         "BenchmarkReaders_OpenClaude": "OpenClaude (fixture copies)", "BenchmarkReaders_Auggie": "Auggie (fixture copies)",
         "BenchmarkReaders_IFlow": "iFlow CLI (fixture copies)", "BenchmarkReaders_Qoder": "Qoder CLI (fixture copies)",
         "BenchmarkReaders_DeepSeekTUI": "DeepSeek TUI (fixture copies)", "BenchmarkReaders_Forge": "Forge (fixture copies)"}
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(Benchmark\w+?)(?:-\d+)?\s+\d+\s+\d+ ns/op\s+([\d.]+) MB/s", line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(2)))
base = statistics.median(runs["BenchmarkReaders"]) if runs.get("BenchmarkReaders") else None
rows = [["reader", "MB/s min / median / max", "median / Claude Code + Codex"]]
for b, v in runs.items():
    med = statistics.median(v)
    rows.append([names.get(b, b), f"{min(v):.1f} / {med:.1f} / {max(v):.1f}", f"{med / base:.2f}x" if base else "n/a"])
w = [max(len(r[i]) for r in rows) for i in range(3)]
print("\ncold-scan speed per reader (dry run, files in the page cache), min / median / max")
for i, r in enumerate(rows):
    print("  " + "  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
    if i == 0:
        print("  " + "  ".join("-" * x for x in w))
for b in names:
    if b not in runs:
        print(f"  {names[b]}: skipped (its corpus is absent; set OBSERVER_CORPUS)")
print("  The machine is shared and noisy: read the spread, not one figure.")
PY
