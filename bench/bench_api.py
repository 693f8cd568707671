"""API benchmark: latency and throughput of `GET /api/v1/threads?url=…` for a stored 1,000-post thread, next to
`/healthz` measured in the same run, with 20 concurrent clients on loopback.

Run: `python bench/bench_api.py [--posts 1000] [--clients 20] [--requests 2000] [--max-seconds 30]`.
The service runs as `arbitro serve` (waitress) in its own process, so the clients do not share its interpreter.
Target: p95 ≤ 50 ms for the thread. The ratio thread/healthz shows what serving the audit costs.

Scale-out: `python bench/bench_api.py --database postgresql://user@host/db [--processes 1,2]` (or `--database temp`:
a throwaway cluster of Debian's PostgreSQL, as the tests start it) measures warm views of the same thread on SQLite
(one waitress process), on PostgreSQL (one waitress process) and on PostgreSQL under `arbitro serve --workers N`
for each N of `--processes`, in one run, and prints N processes against 1 (target ≥ 1.6× on 2 cores) and
PostgreSQL against SQLite for one process. The clients run in `--client-procs` processes of their own (threads of
one Python process would be bounded by its interpreter lock before the service is).
"""
from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from typing import Any
from urllib.parse import urlencode

ROOT = pathlib.Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


URL = "https://bench.forumfree.it/?t=1"


def seed(db: str, n_posts: int) -> tuple[int, int, int]:
    """Store a replayed n-post `guida` fight as a refresh would; returns (thread id, JSON bytes, gzipped bytes)."""
    from bench_replay import generate  # the engine's generated fight
    from engine import replay
    from server.refresh import history_hash
    from server.storage import open_storage

    history = generate(n_posts)
    audit = replay(history, "guida")
    store = open_storage(db)
    rec = store.get_or_create_thread(URL, "guida")
    h = history.to_dict()
    doc = audit.to_dict()
    store.save_refresh(rec.id, history=h, content_hash=history_hash(h), audit=doc, replayed=audit.replayed,
                       pages=[], log=[])
    store.close()
    raw = json.dumps(doc, ensure_ascii=False).encode()
    return rec.id, len(raw), len(gzip.compress(raw, 5))


def start_service(tmp: str, db: str, workers: int | None = None) -> tuple[subprocess.Popen, str]:
    """`arbitro serve` on `db`: one waitress process, or `workers` gunicorn processes."""
    cfg = pathlib.Path(tmp) / "bench.toml"
    cfg.write_text(f'database = "{db}"\ncache_dir = "{tmp}/cache"\nrefresh_after = 1e9\n'
                   'rate_limit_audits = 1000000\nlog_level = "WARNING"\n', encoding="utf-8")
    extra = ["--workers", str(workers)] if workers else []
    proc = subprocess.Popen([sys.executable, "-m", "server", "serve", "--port", "0", "--config", str(cfg),
                             "--threads", "8", *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "http://" in line:
            return proc, next(w for w in line.split() if w.startswith("http://"))
        if proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("the service did not start")


def measure(base: str, path: str, clients: int, total: int, max_seconds: float, decode: bool = False,
            raw: bool = False) -> dict:
    """`total` GETs of `path` shared by `clients` threads, each on its own keep-alive connection, accepting gzip
    (decoded only with `decode`: the clients share this machine's cores with the service, where real readers'
    browsers decode on their own); stopped at max_seconds."""
    host, port = base.split("//", 1)[1].split(":")
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    counter = [0]
    stop_at = time.monotonic() + max_seconds

    def one(conn: http.client.HTTPConnection) -> int:
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        r = conn.getresponse()
        body = r.read()
        if r.getheader("Content-Encoding") == "gzip":
            body = zlib.decompress(body, 31) if decode else body
        return r.status

    def worker() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        local = []
        while time.monotonic() < stop_at:
            with lock:
                if counter[0] >= total:
                    break
                counter[0] += 1
            t0 = time.perf_counter()
            status = one(conn)
            local.append(time.perf_counter() - t0)
            if status != 200:
                errors[0] += 1
        conn.close()
        with lock:
            latencies.extend(local)

    warm = http.client.HTTPConnection(host, int(port), timeout=30)
    for _ in range(3):  # warm up: the first answer of a thread is encoded and cached
        one(warm)
    warm.close()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    latencies.sort()
    if raw:
        return {"latencies": latencies, "errors": errors[0], "wall": wall}
    n = len(latencies)
    return {"n": n, "errors": errors[0], "rps": n / wall if wall else 0.0,
            "p50": statistics.median(latencies) * 1000 if n else 0.0,
            "p95": latencies[min(n - 1, int(n * 0.95))] * 1000 if n else 0.0}


def _client_proc(base: str, path: str, clients: int, total: int, max_seconds: float, out: Any) -> None:
    out.send(measure(base, path, clients, total, max_seconds, raw=True))
    out.close()


def measure_spread(base: str, path: str, clients: int, total: int, max_seconds: float, procs: int) -> dict:
    """`measure` with the clients spread over `procs` processes (started together, results merged)."""
    import multiprocessing as mp

    if procs <= 1:
        return measure(base, path, clients, total, max_seconds)
    ctx = mp.get_context("spawn")
    pipes, workers = [], []
    for i in range(procs):
        mine = clients // procs + (1 if i < clients % procs else 0)
        parent, child = ctx.Pipe(duplex=False)
        w = ctx.Process(target=_client_proc, args=(base, path, mine, total // procs, max_seconds, child))
        w.start()
        pipes.append(parent)
        workers.append(w)
    parts = [p.recv() for p in pipes]
    for w in workers:
        w.join()
    latencies = sorted(x for part in parts for x in part["latencies"])
    n = len(latencies)
    wall = max(part["wall"] for part in parts)
    return {"n": n, "errors": sum(part["errors"] for part in parts), "rps": n / wall if wall else 0.0,
            "p50": statistics.median(latencies) * 1000 if n else 0.0,
            "p95": latencies[min(n - 1, int(n * 0.95))] * 1000 if n else 0.0}


def _cpu_seconds() -> tuple[dict[int, float], dict[int, int], dict[int, str]]:
    """Per process (Linux /proc): CPU seconds used so far, parent pid, command name; empty elsewhere."""
    cpu: dict[int, float] = {}
    parent: dict[int, int] = {}
    name: dict[int, str] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        pid = int(entry.name)
        parent[pid], name[pid] = int(fields[1]), comm
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    return cpu, parent, name


def _cpu_split(before: tuple, after: tuple, service_pid: int) -> tuple[float, float]:
    """CPU seconds spent between two `_cpu_seconds` by the service's process tree and by PostgreSQL's processes."""
    cpu0, _, _ = before
    cpu1, parent, name = after
    tree = {service_pid}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    spent = {pid: cpu1[pid] - cpu0.get(pid, 0.0) for pid in cpu1}
    service = sum(v for pid, v in spent.items() if pid in tree)
    database = sum(v for pid, v in spent.items() if name.get(pid) in ("postgres", "postmaster") and pid not in tree)
    return service, database


def scale_out(args: argparse.Namespace) -> int:
    """SQLite vs PostgreSQL for one process, and PostgreSQL with 1 vs N processes: warm thread views."""
    cluster = None
    url = args.database
    if url == "temp":
        from tests.plugins.postgres import Cluster

        cluster = Cluster().start()
        url = cluster.url(cluster.create_database())
    path = "/api/v1/threads?" + urlencode({"url": URL})
    rows: list[tuple[str, dict]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="arbitro-bench-") as tmp:
            sqlite_db = f"{tmp}/bench.sqlite3"
            _, size, gz_size = seed(sqlite_db, args.posts)
            seed(url, args.posts)
            runs: list[tuple[str, str, int | None]] = [("SQLite, 1 processo (waitress)", sqlite_db, None),
                                                       ("PostgreSQL, 1 processo (waitress)", url, None)]
            runs += [(f"PostgreSQL, gunicorn --workers {n}", url, n) for n in args.processes]
            for name, db, workers in runs:
                proc, base = start_service(tmp, db, workers)
                try:
                    for _ in range(3):  # every process warm: its response cache holds the thread
                        measure(base, path, 8, 80, 10)
                    import resource

                    before, clients0 = _cpu_seconds(), resource.getrusage(resource.RUSAGE_CHILDREN)
                    t0 = time.perf_counter()
                    m = measure_spread(base, path, args.clients, args.requests, args.max_seconds, args.client_procs)
                    wall = time.perf_counter() - t0
                    clients1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    service_cpu, db_cpu = _cpu_split(before, _cpu_seconds(), proc.pid)
                    m["cpu"] = {"service": service_cpu, "database": db_cpu,
                                "clients": (clients1.ru_utime + clients1.ru_stime)
                                - (clients0.ru_utime + clients0.ru_stime), "wall": wall}
                    rows.append((name, m))
                finally:
                    proc.terminate()
                    proc.wait(timeout=30)
    finally:
        if cluster is not None:
            cluster.stop()

    print(f"stored thread: {args.posts} posts, audit JSON {size / 1024:.0f} KiB ({gz_size / 1024:.0f} KiB gzipped); "
          f"warm views of GET /api/v1/threads?url=…, {args.clients} concurrent keep-alive clients in "
          f"{args.client_procs} processes, 8 threads per service process, loopback, {os.cpu_count()} CPUs shared "
          f"by clients, service and PostgreSQL")
    print(f"{'configuration':<38}{'requests':>9}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'req/s':>9}"
          f"   CPU busy: service + database + clients, of {os.cpu_count()} CPUs")
    for name, m in rows:
        c = m["cpu"]
        busy = (c["service"] + c["database"] + c["clients"]) / (c["wall"] * (os.cpu_count() or 1)) * 100
        per = 1000 * c["service"] / m["n"] if m["n"] else 0.0
        print(f"{name:<38}{m['n']:>9}{m['errors']:>8}{m['p50']:>9.1f}{m['p95']:>9.1f}{m['rps']:>9.0f}"
              f"   {c['service'] / c['wall']:.2f} + {c['database'] / c['wall']:.2f} + {c['clients'] / c['wall']:.2f}"
              f" = {busy:.0f}%  (service {per:.2f} ms CPU/request)")
    by = dict(rows)
    sqlite_1, pg_1 = by["SQLite, 1 processo (waitress)"], by["PostgreSQL, 1 processo (waitress)"]
    print(f"PostgreSQL vs SQLite, 1 process: throughput ×{_ratio(pg_1['rps'], sqlite_1['rps'])}, "
          f"p95 ×{_ratio(pg_1['p95'], sqlite_1['p95'])}")
    one = by.get("PostgreSQL, gunicorn --workers 1")
    for n in args.processes:
        if n == 1 or one is None:
            continue
        many = by[f"PostgreSQL, gunicorn --workers {n}"]
        speedup = many["rps"] / one["rps"] if one["rps"] else 0.0
        print(f"{n} processes vs 1 (PostgreSQL, gunicorn): throughput ×{speedup:.2f}, "
              f"p95 ×{_ratio(many['p95'], one['p95'])}; vs one waitress process: throughput "
              f"×{_ratio(many['rps'], pg_1['rps'])}, p95 ×{_ratio(many['p95'], pg_1['p95'])}")
        if n == 2:
            verdict = "OK" if speedup >= 1.6 else "UNDER"
            print(f"target ≥ 1.6× for 2 processes on a 2-core machine: {verdict} (×{speedup:.2f}; "
                  f"{os.cpu_count()} CPUs for clients, service and database)")
    return 0


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "∞"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--posts", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=2000, help="requests per endpoint (bounded)")
    ap.add_argument("--max-seconds", type=float, default=30.0, help="time bound per endpoint")
    ap.add_argument("--database", metavar="URL", help="postgresql://… (or `temp`): SQLite vs PostgreSQL and 1 vs N "
                                                       "processes, warm thread views")
    ap.add_argument("--processes", type=lambda v: [int(x) for x in v.split(",")], default=[1, 2],
                    help="service processes under gunicorn, comma-separated (default 1,2)")
    ap.add_argument("--client-procs", type=int, default=2, help="processes the clients run in (with --database)")
    args = ap.parse_args(argv)
    if args.database:
        return scale_out(args)

    with tempfile.TemporaryDirectory(prefix="arbitro-bench-") as tmp:
        db = f"{tmp}/bench.sqlite3"
        thread_id, size, gz_size = seed(db, args.posts)
        proc, base = start_service(tmp, db)
        try:
            health = measure(base, "/healthz", args.clients, args.requests, args.max_seconds)
            path = "/api/v1/threads?" + urlencode({"url": URL})
            thread = measure(base, path, args.clients, args.requests, args.max_seconds)
            decoded = measure(base, path, args.clients, args.requests, args.max_seconds, decode=True)
        finally:
            proc.terminate()
            proc.wait(timeout=10)

    print(f"stored thread: {args.posts} posts, audit JSON {size / 1024:.0f} KiB ({gz_size / 1024:.0f} KiB gzipped); {args.clients} concurrent clients, "
          f"waitress 8 threads, loopback, {os.cpu_count()} CPUs shared by clients and service")
    print(f"{'endpoint':<28}{'requests':>9}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'req/s':>9}")
    for name, m in (("/healthz", health), ("/api/v1/threads?url=…", thread), ("  same, client gunzips", decoded)):
        print(f"{name:<28}{m['n']:>9}{m['errors']:>8}{m['p50']:>9.1f}{m['p95']:>9.1f}{m['rps']:>9.0f}")
    ratio_p95 = thread["p95"] / health["p95"] if health["p95"] else float("inf")
    ratio_rps = health["rps"] / thread["rps"] if thread["rps"] else float("inf")
    print(f"ratio thread/healthz: p95 ×{ratio_p95:.1f}, throughput ÷{ratio_rps:.1f}")
    verdict = "OK" if thread["p95"] <= 50 else "OVER"
    print(f"target p95 ≤ 50 ms for the thread: {verdict} ({thread['p95']:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
