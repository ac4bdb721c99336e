#!/usr/bin/env python3
"""One round of scripts/bench-deployed.sh: the suite as users run it (`observerctl up`), on a fresh
observer home, reading the history under HOME. Prints one JSON line of figures; progress on stderr.

  benchdeployed.py TREE ROUND BIN_DIR HIST AFTER_S

settled: from `up` until the store's counts (actions, token usage, messages) have not changed for
1 s, the bus holds nothing for the writer and the writer catches nothing up (rollups, full-text
index, analysis, per its status); the 1 s is not counted. Then the suite's CPU (every component,
the process hosting the bus included) and RSS are read, and again AFTER_S later, with the store's
and its write-ahead log's sizes.
"""
import json, os, socket, sqlite3, subprocess, sys, tempfile, time

tree, rnd, bindir, hist, after = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])


def port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


home = tempfile.mkdtemp(prefix="observer-bench-deployed-")
env = dict(os.environ, HOME=hist, OBSERVER_HOME=home, OBSERVER_BUS_PORT=str(port()),
           OBSERVER_PROXY_ADDR=f"127.0.0.1:{port()}", OBSERVER_DASH_ADDR=f"127.0.0.1:{port()}",
           OBSERVER_OTLP_GRPC_ADDR=f"127.0.0.1:{port()}", OBSERVER_OTLP_ADDR=f"127.0.0.1:{port()}")
ctl = os.path.join(bindir, "observerctl")
tick = os.sysconf("SC_CLK_TCK")


def status():
    r = subprocess.run([ctl, "status", "--json"], env=env, capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"components": []}


def counts():
    try:
        c = sqlite3.connect(f"file:{home}/observer.db?mode=ro", uri=True, timeout=5)
        r = tuple(c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("actions", "token_usage", "messages"))
        c.close()
        return r
    except sqlite3.Error:
        return None


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick


def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def rollup(pid):
    """The process's RSS split (smaps_rollup, MB): anonymous, file-backed, and its PSS (shared
    pages divided among the processes that map them: the bus host and the writer run one binary)."""
    r = {}
    for line in open(f"/proc/{pid}/smaps_rollup"):
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            r[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return {"anon": r.get("Anonymous", 0.0), "file": r.get("Rss", 0.0) - r.get("Anonymous", 0.0), "pss": r.get("Pss", 0.0)}


def size(name):
    try:
        return os.path.getsize(os.path.join(home, name)) / 2**20
    except OSError:
        return 0.0


t0 = time.time()
subprocess.run([ctl, "up", "--detach"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    last, since, settled = None, None, None
    while time.time() - t0 < 600:
        c, st = counts(), status()
        detail = " ".join(x.get("detail", "") for x in st["components"] if x.get("name") == "writer")
        busy = "catching up" in detail or (st.get("bus") or {}).get("pending", 1) > 0
        if c and c == last and c[0] > 0 and not busy:
            since = since or time.time()
            if time.time() - since >= 1.0:
                settled = since - t0
                break
        else:
            since = None
        last = c
        time.sleep(0.1)
    if settled is None:
        sys.exit(f"{tree}: not settled after 600 s: counts {last}")
    pids = {}
    for x in status()["components"]:
        if x.get("pid"):
            pids.setdefault(x["pid"], "bus host" if x["name"] == "bus" else x["name"])
    c0 = {p: cpu(p) for p in pids}
    r0 = {p: rss(p) for p in pids}
    print(f"  round {rnd} {tree:8} settled {settled:6.2f} s, CPU {sum(c0.values()):6.2f} s, RSS {sum(r0.values()):4.0f} MB; "
          f"waiting {after:.0f} s", file=sys.stderr, flush=True)
    time.sleep(after)
    c1 = {p: cpu(p) for p in pids}
    r1 = {p: rss(p) for p in pids}
    split = {p: rollup(p) for p in pids}
    by = lambda d: {pids[p]: round(v, 2) for p, v in d.items()}
    out = {"tree": tree, "round": rnd, "settled_s": settled, "cpu_settle_s": sum(c0.values()),
           "rss_settled_mb": sum(r0.values()), "rss_after_mb": sum(r1.values()),
           "cpu_after_s": sum(c1[p] - c0[p] for p in pids),
           "watch_core_pct": 100 * sum(c1[p] - c0[p] for p in pids if pids[p] == "watch") / after,
           "idle_core_pct": 100 * sum(c1[p] - c0[p] for p in pids) / after,
           "store_mb": size("observer.db"), "wal_mb": size("observer.db-wal"), "actions": last[0],
           "anon_after_mb": sum(v["anon"] for v in split.values()),
           "file_after_mb": sum(v["file"] for v in split.values()),
           "pss_after_mb": sum(v["pss"] for v in split.values()),
           "rss_after_by": by(r1), "cpu_after_by": by({p: c1[p] - c0[p] for p in pids})}
    print(json.dumps(out))
    print(f"  round {rnd} {tree:8} after {after:.0f} s: RSS {out['rss_after_mb']:.0f} MB "
          f"({', '.join(f'{k} {v:.0f}' for k, v in out['rss_after_by'].items())}), CPU {out['cpu_after_s']:.2f} s "
          f"({', '.join(f'{k} {v:.2f}' for k, v in out['cpu_after_by'].items())}), WAL {out['wal_mb']:.1f} MB",
          file=sys.stderr, flush=True)
finally:
    subprocess.run([ctl, "down"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["rm", "-rf", home])
