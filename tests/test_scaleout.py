"""Several `arbitro serve` processes on one PostgreSQL (a throwaway cluster, tests/plugins/postgres.py) reading the
local test forum (tests/forumserver.py) with the real 1 s interval: one crawl per thread whoever asks, the forum's
politeness across processes, a worker killed mid-crawl replaced after its lease, the rate limit across processes,
`--workers N` under gunicorn, and the start-up errors."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
TID = 62345678
HOST = "bleach-gdr.forumfree.it"
PAGES = ["forumfree/topic_62345678_st0.html", "forumfree/topic_62345678_st15.html"]
INTERVAL = 1.0  # fetch_min_interval, as a live forum gets it
SLACK = 0.05  # a request's way from the fetcher to the forum's log varies by a few ms


@pytest.fixture()
def forum(fixtures_dir):
    """The 2-page ForumFree fixture thread on the local forum server (with robots.txt)."""
    from tests.forumserver import ForumServer

    srv = ForumServer(fixtures_dir, rewrite_hosts=[HOST])
    srv.start()
    paths = srv.add_thread("forumfree", TID, [fixtures_dir / p for p in PAGES])
    srv.thread_url = srv.url(f"/?t={TID}")
    srv.paths = [f"/?t={TID}", paths[1]]  # page 1 as the crawler asks for it (the thread URL itself)
    yield srv
    srv.stop()


def _config(tmp_path: Path, name: str, database: str, forum, **extra) -> Path:
    values = {
        "database": database, "cache_dir": str(tmp_path / f"cache-{name}"), "default_ruleset": "guida",
        "allowed_hosts": ["*.forumfree.it"], "private_allowlist": [f"127.0.0.1:{forum.port}"],
        "fetch_min_interval": INTERVAL, "fetch_retries": 1, "fetch_backoff": 0.2, "obey_robots": True,
        "follow_sheets": False, "refresh_after": 1e6, "failure_backoff": 0.0, "rate_limit_audits": 1000,
        "create_wait": 5.0, "job_lease": 2.0, "job_poll": 0.3, "log_level": "WARNING", **extra,
    }

    def toml(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(toml(x) for x in v) + "]"
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    path = tmp_path / f"{name}.toml"
    path.write_text("".join(f"{k} = {toml(v)}\n" for k, v in values.items()), encoding="utf-8")
    return path


class Service:
    """One `arbitro serve` process: its URL, pid, log."""

    def __init__(self, config: Path, *args: str) -> None:
        self.log = config.with_suffix(".log")
        self._err = open(self.log, "w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "server", "serve", "--port", "0", "--config", str(config),
                                      *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=self._err, text=True,
                                     env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.url = ""

    def wait_ready(self, timeout: float = 60) -> Service:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                if self.proc.poll() is not None:
                    raise AssertionError(f"exited {self.proc.returncode}: {self.log.read_text()}")
                continue
            m = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            if m:
                self.url = m.group(1)
                return self
        raise AssertionError("no URL printed: " + self.log.read_text())

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._err.close()


@pytest.fixture()
def services():
    started: list[Service] = []

    def start(config: Path, *args: str) -> Service:
        svc = Service(config, *args)
        started.append(svc)
        return svc

    yield start
    for svc in started:
        svc.stop()


def _read(base: str, url: str, results: list, barrier: threading.Barrier | None = None) -> None:
    """A reader's page view, as the userscript makes it: `create=1`, then again after each 202's Retry-After."""
    if barrier is not None:
        barrier.wait()
    session = requests.Session()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            r = session.get(f"{base}/api/v1/threads", params={"url": url, "create": "1"}, timeout=30)
        except requests.ConnectionError:  # its process was killed
            break
        if r.status_code == 202:
            time.sleep(min(0.5, float(r.headers.get("Retry-After", "1"))))
            continue
        results.append(r)
        return
    results.append(None)


def _page_log(forum):
    return [e for e in forum.requests_log if e.path != "/robots.txt"]


def _assert_polite(log, interval: float = INTERVAL, slack: float = SLACK) -> None:
    times = sorted(e.time for e in log)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(g >= interval - slack for g in gaps), f"requests closer than {interval} s: {gaps}"


def _storage(url: str):
    from server.database import open_storage

    return open_storage(url)


def test_twenty_readers_on_two_processes_cause_one_crawl(tmp_path, forum, pg_url, services):
    a = services(_config(tmp_path, "a", pg_url, forum))
    b = services(_config(tmp_path, "b", pg_url, forum))
    a.wait_ready(), b.wait_ready()
    results: list = []
    barrier = threading.Barrier(20)
    readers = [threading.Thread(target=_read, args=((a, b)[i % 2].url, forum.thread_url, results, barrier))
               for i in range(20)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    assert len(results) == 20 and all(r is not None and r.status_code == 200 for r in results), \
        [getattr(r, "status_code", None) for r in results]
    docs = [r.json() for r in results]
    assert len({d["thread_id"] for d in docs}) == 1 and len({d["fetched_at"] for d in docs}) == 1
    assert all(d["audit"] == docs[0]["audit"] for d in docs)  # every reader, on either process, the same audit
    assert docs[0]["audit"]["format"] == "arbitro.audit/1" and len(docs[0]["audit"]["posts"]) >= 15

    # the forum's own log: one crawl — robots.txt and every page asked once, never closer than the interval
    log = list(forum.requests_log)
    assert sorted(e.path for e in log) == sorted(["/robots.txt", forum.paths[0], forum.paths[1]]), \
        [e.path for e in log]
    assert all(e.status == 200 and not e.conditional for e in log)
    _assert_polite(log)

    store = _storage(pg_url)
    try:
        job = store.job(docs[0]["thread_id"])
        assert (job.state, job.generation, job.attempts) == ("done", 1, 1)
        assert store.count("audits") == 1 and store.count("threads") == 1
        assert store.count("robots_cache") == 1 and store.count("fetch_cache") == 2
    finally:
        store.close()

    # a second reader on the other process asking later: answered from the database, the forum not asked
    forum.reset_log()
    again = requests.get(f"{b.url}/api/v1/threads", params={"url": forum.thread_url}, timeout=10)
    assert again.status_code == 200 and again.json()["audit"] == docs[0]["audit"] and forum.requests_log == []


def _owner_pid(owner: str) -> int:
    return int(owner.split(":")[1])


def test_a_process_killed_mid_crawl_is_replaced_after_its_lease(tmp_path, forum, pg_url, services):
    a = services(_config(tmp_path, "a", pg_url, forum))
    b = services(_config(tmp_path, "b", pg_url, forum))
    a.wait_ready(), b.wait_ready()
    by_pid = {a.pid: a, b.pid: b}
    forum.set_behaviour(forum.paths[1], slow=30.0)  # page 2 hangs: the crawl is mid-way when its process dies
    first: list = []
    threading.Thread(target=_read, args=(a.url, forum.thread_url, first), daemon=True).start()
    store = _storage(pg_url)
    try:
        deadline = time.monotonic() + 30
        while not forum.log_for(forum.paths[1]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert forum.log_for(forum.paths[1]), "the crawl did not reach page 2"
        rec = store.find_thread(forum.thread_url)
        job = store.job(rec.id)
        assert job.state == "running"
        crawler = by_pid[_owner_pid(job.owner)]  # whichever process's worker claimed the job
        survivor = b if crawler is a else a
        os.kill(crawler.pid, signal.SIGKILL)
        crawler.proc.wait(timeout=10)
        killed_at = time.monotonic()
        forum.clear_behaviour(forum.paths[1])
        # nothing half-written: the crawl stores its outcome in one transaction, at the end
        assert store.count("audits") == 0 and store.count("histories") == 0 and store.count("pages") == 0
        assert store.get_thread(rec.id).audit_id is None

        # the survivor answers the readers (202 while the job waits for its lease to pass) and finishes the job
        later: list = []
        _read(survivor.url, forum.thread_url, later)
        assert later[0] is not None and later[0].status_code == 200, later[0] and later[0].text[:300]
        assert time.monotonic() - killed_at >= 1.0  # not before the dead worker's lease (2 s) had passed
        job = store.job(rec.id)
        assert job.state == "done" and job.generation == 1 and job.attempts == 2
        assert store.count("audits") == 1 and store.count("histories") == 1
        doc = later[0].json()
        assert len(doc["audit"]["posts"]) >= 15
    finally:
        store.close()

    log = list(forum.requests_log)
    # robots.txt was read once, by the dead process, and shared: the survivor did not ask again; page 1, which the
    # dead process had, came back 304 from the shared validators; page 2 was asked again
    assert [e.path for e in log].count("/robots.txt") == 1
    p1 = forum.log_for(forum.paths[0])
    assert [(e.status, e.conditional) for e in p1] == [(200, False), (304, True)]
    assert [e.status for e in forum.log_for(forum.paths[1])][-1] == 200
    _assert_polite(log)  # the dead process's last request still spaced the survivor's first


def test_the_rate_limit_holds_across_processes(tmp_path, forum, pg_url, services):
    a = services(_config(tmp_path, "a", pg_url, forum, rate_limit_audits=3))
    b = services(_config(tmp_path, "b", pg_url, forum, rate_limit_audits=3))
    a.wait_ready(), b.wait_ready()
    answers = [requests.post(f"{svc.url}/api/v1/audits", json={"history": 5}, timeout=10).status_code
               for svc in (a, b, a, b, a)]
    assert answers == [400, 400, 400, 429, 429]  # three creations counted, whichever process got them
    r = requests.post(f"{b.url}/api/v1/audits", json={"history": 5}, timeout=10)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1 and r.json()["error"]["code"] == "rate_limited"


def test_a_failed_crawl_is_shared_by_both_processes(tmp_path, forum, pg_url, services):
    a = services(_config(tmp_path, "a", pg_url, forum, failure_backoff=30.0))
    b = services(_config(tmp_path, "b", pg_url, forum, failure_backoff=30.0))
    a.wait_ready(), b.wait_ready()
    forum.set_behaviour(None, statuses=[500] * 50)
    r = requests.post(f"{a.url}/api/v1/audits", json={"url": forum.thread_url}, timeout=30)
    assert r.status_code == 502 and r.json()["error"]["code"] == "fetch_failed"
    asked = len(forum.requests_log)
    # the other process knows: same error at once, the forum is not asked again during the backoff
    r2 = requests.post(f"{b.url}/api/v1/audits", json={"url": forum.thread_url}, timeout=30)
    assert r2.status_code == 502 and r2.json()["error"]["code"] == "fetch_failed"
    assert len(forum.requests_log) == asked


def test_workers_under_gunicorn(tmp_path, forum, pg_url, services):
    svc = services(_config(tmp_path, "g", pg_url, forum), "--workers", "2", "--threads", "4").wait_ready()
    results: list = []
    readers = [threading.Thread(target=_read, args=(svc.url, forum.thread_url, results)) for _ in range(6)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    assert all(r is not None and r.status_code == 200 for r in results)
    assert len({r.json()["fetched_at"] for r in results}) == 1
    assert sorted(e.path for e in forum.requests_log) == sorted(["/robots.txt", *forum.paths])
    assert requests.get(f"{svc.url}/healthz", timeout=10).json() == {"status": "ok"}
    svc.proc.terminate()
    assert svc.proc.wait(timeout=30) == 0
    assert "Traceback" not in svc.log.read_text()


def _serve(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "server", "serve", "--port", "0", "--config", str(config), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_an_unreachable_database_is_a_named_error_at_start(tmp_path, forum):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = _config(tmp_path, "x", f"postgresql://arbitro:segreta@127.0.0.1:{port}/arbitro", forum)
    for args in ((), ("--workers", "2")):
        r = _serve(cfg, *args)
        assert r.returncode == 2, r.stderr
        assert "database PostgreSQL non raggiungibile" in r.stderr and "connessione rifiutata" in r.stderr
        assert "Traceback" not in r.stderr and "segreta" not in r.stderr


def test_workers_need_postgresql(tmp_path, forum):
    r = _serve(_config(tmp_path, "s", str(tmp_path / "a.sqlite3"), forum), "--workers", "2")
    assert r.returncode == 2 and "richiede un database PostgreSQL" in r.stderr and "Traceback" not in r.stderr


def test_the_api_refreshes_through_jobs_in_one_process(server_config, pg_url, forum):
    """The service on PostgreSQL in this process: a synchronous refresh is a job its own workers crawl, the
    answer carries the job's counts, a stale thread is revalidated with 304s, a fresh one is not queued."""
    from server.app import create_app

    app = create_app(dict(server_config, database=pg_url, job_poll=0.2))
    client = app.test_client()
    try:
        assert app.extensions["arbitro"].refresher.jobs is not None
        r = client.post("/api/v1/audits", json={"url": forum.thread_url})
        assert r.status_code == 200, r.get_data(as_text=True)[:300]
        posts = len(r.get_json()["posts"])
        assert r.headers["X-Arbitro-Source"] == "refresh" and int(r.headers["X-Arbitro-Replayed"]) == posts
        assert r.headers["X-Arbitro-Pages-Fetched"] == "2"
        forum.reset_log()
        again = client.post("/api/v1/audits", json={"url": forum.thread_url})
        assert again.headers["X-Arbitro-Source"] == "store" and forum.requests_log == []
        app.config["ARBITRO"]["refresh_after"] = 0  # stale: revalidated, nothing replayed
        stale = client.post("/api/v1/audits", json={"url": forum.thread_url})
        assert stale.headers["X-Arbitro-Replayed"] == "0" and stale.headers["X-Arbitro-Pages-Not-Modified"] == "2"
        assert [e.status for e in forum.requests_log] == [304, 304]
        app.config["ARBITRO"]["refresh_after"] = 1e6
        view = client.get("/api/v1/threads", query_string={"url": forum.thread_url})
        assert view.status_code == 200 and view.get_json()["refreshing"] is False
    finally:
        app.extensions["arbitro"].close()


# --- the fetcher's politeness layers, shared through the database (two fetchers: two processes) -------------------

@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_two_fetchers_share_robots_validators_and_the_gate(engine, tmp_path, local_forum, fixtures_dir, request):
    """robots.txt and the conditional-GET cache shared through the database (both engines: the same SQL); on
    PostgreSQL the host gate too: one request at a time to the forum, the interval between starts, a Retry-After."""
    from scraper.fetch import Fetcher
    from scraper.policy import FetchPolicy
    from server.database import open_storage

    where = str(tmp_path / "f.sqlite3") if engine == "sqlite" else request.getfixturevalue("pg_url")
    stores = [open_storage(where) for _ in range(2)]
    layers = [s.fetch_layers() if engine == "postgresql" else {} for s in stores]
    from server.pg import DbFetchCache, DbRobotsStore

    fetchers = [Fetcher(FetchPolicy(allowed_hosts=("127.0.0.1",), private_allowlist=("127.0.0.1:*",), retries=1,
                                    min_interval=0.4, cache_dir=None, obey_robots=True),
                        **{"cache": DbFetchCache(s), "robots": DbRobotsStore(s), **extra})
                for s, extra in zip(stores, layers)]
    try:
        paths = local_forum.add_thread("forumfree", 9, [fixtures_dir / p for p in PAGES])
        first = fetchers[0].get(local_forum.url(paths[0]))
        assert first.status == 200 and not first.not_modified
        second = fetchers[1].get(local_forum.url(paths[0]))  # the other process: robots.txt not asked, a 304
        assert second.not_modified and second.content == first.content
        assert [e.path for e in local_forum.requests_log].count("/robots.txt") == 1
        assert [e.status for e in local_forum.log_for(paths[0])] == [200, 304]
        if engine != "postgresql":
            return
        # the gate: both processes at once, never two requests in flight, never closer than 0.4 s
        local_forum.reset_log()
        local_forum.set_behaviour(None, slow=0.1)
        threads = [threading.Thread(target=fetchers[i % 2].get, args=(local_forum.url(paths[i % 2]),),
                                    kwargs={"conditional": False}) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # (here the forum and both fetchers share this process: its own threads jitter the log a little more)
        _assert_polite(local_forum.requests_log, 0.4, slack=0.1)
        # a Retry-After one process got is kept by the other
        local_forum.reset_log()
        local_forum.set_behaviour(paths[1], statuses=[429], retry_after="2")
        got = threading.Thread(target=fetchers[0].get, args=(local_forum.url(paths[1]),))
        got.start()
        while not local_forum.requests_log:
            time.sleep(0.01)
        time.sleep(0.1)
        fetchers[1].get(local_forum.url(paths[0]))
        got.join()
        log = local_forum.requests_log
        assert log[0].status == 429 and log[1].time - log[0].time >= 2 - SLACK
    finally:
        for f in fetchers:
            f.close()
        for s in stores:
            s.close()


def test_a_process_does_not_answer_from_an_audit_another_replaced(server_config, pg_url):
    """The engine audit a process keeps (hints, incremental replays) is only a cache: when another process stored a
    newer audit of the thread, it is replayed from the database, not answered from memory."""
    from server.app import create_app
    from server.refresh import history_hash
    from tests.plugins.server import TINY, make_history

    app = create_app(dict(server_config, database=pg_url))
    try:
        svc = app.extensions["arbitro"]
        rec = svc.storage.get_or_create_thread("https://gdr.forumfree.it/?t=1", TINY)

        def store(n):  # what the other process's refresh writes
            h = make_history(n).to_dict()
            from server.refresh import run_replay

            audit = run_replay(make_history(n), TINY, None, None)
            return svc.storage.save_refresh(rec.id, history=h, content_hash=history_hash(h), audit=audit.to_dict(),
                                            replayed=n, pages=[], log=[])

        store(4)
        assert len(svc.refresher.engine_audit(rec.id).posts) == 4
        store(6)
        assert len(svc.refresher.engine_audit(rec.id).posts) == 6
        hint = app.test_client().get(f"/api/v1/threads/{rec.id}/next")
        assert hint.status_code == 200 and hint.get_json()["next"]["character"]
    finally:
        app.extensions["arbitro"].close()
