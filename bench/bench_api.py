"""API benchmark: latency and throughput of `GET /api/v1/threads?url=…` for a stored 1,000-post thread, next to
`/healthz` measured in the same run, with 20 concurrent clients on loopback.

Run: `python bench/bench_api.py [--posts 1000] [--clients 20] [--requests 2000] [--max-seconds 30]`.
The service runs as `arbitro serve` (waitress) in its own process, so the clients do not share its interpreter.
Target: p95 ≤ 50 ms for the thread. The ratio thread/healthz shows what serving the audit costs.
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
    from server.storage import SQLiteStorage

    history = generate(n_posts)
    audit = replay(history, "guida")
    store = SQLiteStorage(db)
    rec = store.get_or_create_thread(URL, "guida")
    h = history.to_dict()
    doc = audit.to_dict()
    store.save_refresh(rec.id, history=h, content_hash=history_hash(h), audit=doc, replayed=audit.replayed,
                       pages=[], log=[])
    store.close()
    raw = json.dumps(doc, ensure_ascii=False).encode()
    return rec.id, len(raw), len(gzip.compress(raw, 5))


def start_service(tmp: str, db: str) -> tuple[subprocess.Popen, str]:
    cfg = pathlib.Path(tmp) / "bench.toml"
    cfg.write_text(f'database = "{db}"\ncache_dir = "{tmp}/cache"\nrefresh_after = 1e9\n'
                   'rate_limit_audits = 1000000\nlog_level = "WARNING"\n', encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "server", "serve", "--port", "0", "--config", str(cfg),
                             "--threads", "8"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "http://" in line:
            return proc, line.strip().split()[-1]
        if proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("the service did not start")


def measure(base: str, path: str, clients: int, total: int, max_seconds: float, decode: bool = False) -> dict:
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
    n = len(latencies)
    return {"n": n, "errors": errors[0], "rps": n / wall if wall else 0.0,
            "p50": statistics.median(latencies) * 1000 if n else 0.0,
            "p95": latencies[min(n - 1, int(n * 0.95))] * 1000 if n else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--posts", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=2000, help="requests per endpoint (bounded)")
    ap.add_argument("--max-seconds", type=float, default=30.0, help="time bound per endpoint")
    args = ap.parse_args(argv)

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
