"""Storage layer, on SQLite and on PostgreSQL (one parametrised fixture): migrations and upgrades in place,
transactional refreshes, concurrent readers and writers, refresh jobs and their leases, what processes share about
the forums (robots.txt, the conditional-GET cache, the host gate) and the audit-creation rate limit."""
from __future__ import annotations

import json
import re
import sqlite3
import threading
import time

import pytest

from server.database import open_storage
from server.storage import (
    MIGRATIONS, FetchLogEntry, JobClaim, LeaseLost, PageRecord, SchemaTooNew, SQLiteStorage, StorageError,
    ThreadNotFound,
)

ENGINES = ["sqlite", "postgresql"]


def _audit(n: int) -> dict:
    return {"format": "arbitro.audit/1", "ruleset": "prova", "posts": [{"id": str(i)} for i in range(n)]}


def _history(n: int) -> dict:
    return {"format": "arbitro.history/1", "thread": {"url": "u", "platform": "forumfree", "host": "h", "title": "T"},
            "posts": [{"id": str(i)} for i in range(n)]}


@pytest.fixture(params=ENGINES)
def target(request, tmp_path):
    """Where a database lives: a SQLite file, or a fresh database of the test cluster."""
    if request.param == "sqlite":
        return str(tmp_path / "db.sqlite3")
    return request.getfixturevalue("pg_url")


@pytest.fixture()
def opened():
    """Open storages on a target (closed at the end): `opened(target)`."""
    made = []

    def open_(where):
        s = open_storage(where)
        made.append(s)
        return s

    yield open_
    for s in made:
        s.close()


@pytest.fixture()
def store(target, opened):
    return opened(target)


def _scalar(store, sql, params=()):
    with store._reader() as r:
        row = r.one(sql, params)
        return list(dict(row).values())[0] if row is not None else None


def _exec(store, sql, params=()):
    with store._tx() as c:
        c.execute(sql, params)


# --- schema -------------------------------------------------------------------------------------

def test_migrations_are_versioned_and_idempotent(store, target, opened):
    assert store.schema_version() == MIGRATIONS[-1][0]
    assert store.migrate() == MIGRATIONS[-1][0]  # a second run applies nothing
    with store._reader() as r:
        rows = r.all("SELECT version FROM schema_migrations ORDER BY version")
    assert [row["version"] for row in rows] == [v for v, _ in MIGRATIONS]
    again = opened(target)  # a second process opening the same database applies nothing either
    assert again.schema_version() == MIGRATIONS[-1][0]


def test_newer_schema_is_refused(store, target, opened):
    _exec(store, "INSERT INTO schema_migrations(version, applied_at) VALUES (999, 'x')")
    with pytest.raises(SchemaTooNew, match="più recente"):
        opened(target)


def test_two_processes_migrating_at_once(target):
    """Two services started together on a new database: the migrations are applied once, neither fails."""
    errors, made = [], []

    def start():
        try:
            made.append(open_storage(target))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert not errors
        assert _scalar(made[0], "SELECT COUNT(*) AS n FROM schema_migrations") == len(MIGRATIONS)
    finally:
        for s in made:
            s.close()


# Migration 1 as released (server/storage.py before PostgreSQL), verbatim: the SQLite rendering of today's
# migration list must still be it, statement for statement.
RELEASED_V1 = """
    CREATE TABLE threads (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL,
        ruleset TEXT NOT NULL,
        platform TEXT,
        host TEXT,
        title TEXT,
        settings TEXT NOT NULL DEFAULT '{}',
        registry TEXT,
        created_at TEXT NOT NULL,
        fetched_at TEXT,
        checked_at TEXT,
        checked_ts REAL,
        content_hash TEXT,
        last_error TEXT,
        history_id INTEGER REFERENCES histories(id),
        audit_id INTEGER REFERENCES audits(id),
        UNIQUE (url, ruleset)
    );
    CREATE TABLE pages (
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        page INTEGER NOT NULL,
        url TEXT NOT NULL,
        status INTEGER,
        etag TEXT,
        last_modified TEXT,
        content_hash TEXT,
        not_modified INTEGER NOT NULL DEFAULT 0,
        fetched_at TEXT,
        PRIMARY KEY (thread_id, url)
    );
    CREATE TABLE histories (
        id INTEGER PRIMARY KEY,
        thread_id INTEGER REFERENCES threads(id) ON DELETE CASCADE,
        format TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE audits (
        id INTEGER PRIMARY KEY,
        thread_id INTEGER REFERENCES threads(id) ON DELETE CASCADE,
        history_id INTEGER REFERENCES histories(id),
        format TEXT NOT NULL,
        ruleset TEXT NOT NULL,
        replayed INTEGER NOT NULL DEFAULT 0,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE fetch_log (
        id INTEGER PRIMARY KEY,
        thread_id INTEGER REFERENCES threads(id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        url TEXT NOT NULL,
        status INTEGER,
        not_modified INTEGER NOT NULL DEFAULT 0,
        from_cache INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        error TEXT
    );
    CREATE INDEX fetch_log_thread ON fetch_log(thread_id, id);
    CREATE INDEX histories_thread ON histories(thread_id, id);
    CREATE INDEX audits_thread ON audits(thread_id, id);
    """


def _norm(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def test_sqlite_renders_the_released_migration_unchanged():
    from server.storage import Dialect

    released = [_norm(s) for s in RELEASED_V1.split(";") if s.strip()]
    assert [_norm(s) for s in Dialect().statements(MIGRATIONS[0][1])] == released


def test_postgresql_renders_its_own_types():
    from server.pg import PgDialect

    rendered = " ".join(PgDialect().statements(MIGRATIONS[0][1]))
    assert "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" in rendered
    assert "checked_ts DOUBLE PRECISION" in rendered and " REAL" not in rendered
    assert "ALTER TABLE threads ADD FOREIGN KEY (history_id)" in rendered


def _create_released_schema(target: str) -> None:
    """A database as today's Arbitro leaves it: migration 1 only, one thread with an audit, a page and a log line."""
    rows = [
        ("INSERT INTO threads(url, ruleset, settings, created_at, checked_ts, content_hash) "
         "VALUES ('https://x.forumfree.it/?t=1', 'guida', '{}', '2026-01-01T00:00:00Z', 1.5, 'c1')", ()),
        ("INSERT INTO histories(thread_id, format, content_hash, body, created_at) "
         "VALUES (1, 'arbitro.history/1', 'c1', '{\"posts\": []}', 'x')", ()),
        ("INSERT INTO audits(thread_id, history_id, format, ruleset, replayed, body, created_at) "
         "VALUES (1, 1, 'arbitro.audit/1', 'guida', 2, '{\"posts\": [1, 2]}', 'x')", ()),
        ("UPDATE threads SET history_id=1, audit_id=1 WHERE id=1", ()),
        ("INSERT INTO pages(thread_id, page, url, status, etag) VALUES (1, 1, 'https://x.forumfree.it/?t=1', 200, "
         "'\"e\"')", ()),
        ("INSERT INTO fetch_log(thread_id, at, url, status) VALUES (1, 'x', 'https://x.forumfree.it/?t=1', 200)", ()),
        ("INSERT INTO schema_migrations(version, applied_at) VALUES (1, 'x')", ()),
    ]
    if target.startswith("postgresql://"):
        import psycopg

        from server.pg import PgDialect

        with psycopg.connect(target, autocommit=True) as conn, conn.transaction():
            conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            for statement in PgDialect().statements(MIGRATIONS[0][1]):
                conn.execute(statement)
            for sql, params in rows:
                conn.execute(sql, params)
            # identities move on as if the rows had been inserted without ids
            conn.execute("SELECT setval(pg_get_serial_sequence('threads', 'id'), 1)")
            conn.execute("SELECT setval(pg_get_serial_sequence('histories', 'id'), 1)")
            conn.execute("SELECT setval(pg_get_serial_sequence('audits', 'id'), 1)")
    else:
        with sqlite3.connect(target) as conn:  # today's file, made with today's script verbatim
            conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            conn.executescript(RELEASED_V1)
            for sql, params in rows:
                conn.execute(sql, params)
        # (ids are given by SQLite's rowid)


def test_a_database_of_todays_schema_upgrades_in_place(target, opened):
    _create_released_schema(target)
    store = opened(target)
    assert store.schema_version() == MIGRATIONS[-1][0]
    rec = store.get_thread(1)
    assert rec.url == "https://x.forumfree.it/?t=1" and rec.audit_id == 1 and rec.fight is None
    assert json.loads(store.audit(1).raw) == {"posts": [1, 2]} and store.pages(1)[0].etag == '"e"'
    assert [e.status for e in store.fetch_log(1)] == [200]
    # the upgraded database works as a new one: refresh, jobs, shared tables
    new = store.save_refresh(1, history=_history(1), content_hash="c2", audit=_audit(1), replayed=1, pages=[],
                             log=[], fight=True)
    assert new.audit_id == 2 and new.fight is True
    job, status = store.request_job(1)
    assert status == "queued" and store.claim_job("w", 30).thread_id == 1
    assert store.rate_hit("c", 1, 60) is None
    assert opened(target).schema_version() == MIGRATIONS[-1][0]  # and stays upgraded


def test_wal_mode(tmp_path):
    s = SQLiteStorage(tmp_path / "db.sqlite3")
    try:
        assert s._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        s.close()


def test_open_storage_schemes(tmp_path):
    s = open_storage(f"sqlite:///{tmp_path / 'a.db'}")
    assert isinstance(s, SQLiteStorage)
    s.close()
    with pytest.raises(StorageError, match="non supportato: mysql"):
        open_storage("mysql://db/arbitro")


def test_unreachable_postgresql_is_a_named_italian_error():
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StorageError) as info:
        open_storage(f"postgresql://arbitro:segreta@127.0.0.1:{port}/arbitro")
    text = str(info.value)
    assert "non raggiungibile" in text and "connessione rifiutata" in text
    assert "segreta" not in text and ":***@" in text


def test_postgresql_missing_database_is_named(pg_cluster):
    with pytest.raises(StorageError, match="il database non esiste"):
        open_storage(pg_cluster.url("nessuno_qui"))


# --- threads and refreshes ------------------------------------------------------------------------

def test_thread_life_cycle(store):
    rec = store.get_or_create_thread("https://x.forumfree.it/?t=1", "guida")
    again = store.get_or_create_thread("https://x.forumfree.it/?t=1", "guida")
    assert rec.id == again.id and rec.audit_id is None
    other = store.get_or_create_thread("https://x.forumfree.it/?t=1", "cosmo")
    assert other.id != rec.id
    assert store.find_thread("https://x.forumfree.it/?t=1").id in (rec.id, other.id)  # neither checked yet
    pages = [PageRecord("https://x.forumfree.it/?t=1", 1, 200, etag='"a"', content_hash="h1")]
    log = [FetchLogEntry("https://x.forumfree.it/?t=1", 200, bytes=10)]
    new = store.save_refresh(rec.id, history=_history(3), content_hash="c1", audit=_audit(3), replayed=3,
                             pages=pages, log=log, fight=False)
    assert new.audit_id and new.history_id and new.content_hash == "c1" and new.title == "T" and new.fight is False
    assert json.loads(store.audit(rec.id).raw)["posts"][2]["id"] == "2"
    assert store.history(rec.id)["posts"][0]["id"] == "0"
    assert store.pages(rec.id)[0].etag == '"a"'
    # an unchanged refresh keeps validators when the 304 carries none, and logs the request
    store.save_unchanged(rec.id, pages=[PageRecord("https://x.forumfree.it/?t=1", 1, 304, not_modified=True)],
                         log=[FetchLogEntry("https://x.forumfree.it/?t=1", 304, not_modified=True)])
    page = store.pages(rec.id)[0]
    assert page.etag == '"a"' and page.content_hash == "h1" and page.not_modified
    assert [e.status for e in store.fetch_log(rec.id)] == [200, 304]
    assert store.find_thread("https://x.forumfree.it/?t=1").id == rec.id  # any ruleset: the one with an audit
    store.save_refresh(other.id, history=_history(1), content_hash="c", audit=_audit(1), replayed=1, pages=[], log=[])
    assert store.find_thread("https://x.forumfree.it/?t=1").id == other.id  # the most recently refreshed
    third = store.get_or_create_thread("https://x.forumfree.it/?t=1", "poteri")
    assert store.find_thread("https://x.forumfree.it/?t=1").id == other.id and third.checked_ts is None
    assert store.find_thread("https://x.forumfree.it/?t=1", "cosmo").id == other.id
    assert store.find_thread("https://x.forumfree.it/?t=2") is None
    store.update_thread_options(rec.id, settings={"a": 1}, registry=None)
    assert store.get_thread(rec.id).content_hash is None and store.get_thread(rec.id).settings == {"a": 1}
    with pytest.raises(ThreadNotFound):
        store.get_thread(999)
    with pytest.raises(ThreadNotFound):
        store.get_thread(2**63)  # past a 64-bit id: no row of ours, on either engine
    assert store.audit(2**63) is None and store.pages(0) == []


def test_failure_keeps_previous_audit(store):
    rec = store.get_or_create_thread("u", "guida")
    store.save_refresh(rec.id, history=_history(2), content_hash="c1", audit=_audit(2), replayed=2, pages=[], log=[])
    before = store.audit(rec.id)
    after = store.save_failure(rec.id, error={"code": "fetch_failed", "message": "giù", "details": {"forum_status": 500}},
                               log=[FetchLogEntry("u", 500, error="fetch_failed")])
    assert store.audit(rec.id).raw == before.raw
    assert after.last_error["code"] == "fetch_failed" and after.last_error["at"]
    # the next good refresh clears the error
    store.save_refresh(rec.id, history=_history(3), content_hash="c2", audit=_audit(3), replayed=1, pages=[], log=[])
    assert store.get_thread(rec.id).last_error is None


def test_interrupted_write_leaves_previous_state(store):
    rec = store.get_or_create_thread("u", "guida")
    store.save_refresh(rec.id, history=_history(2), content_hash="c1", audit=_audit(2), replayed=2, pages=[], log=[])
    good = store.get_thread(rec.id)

    class Boom(Exception):
        pass

    def exploding_log():
        yield FetchLogEntry("u", 200)
        raise Boom  # fails in the middle of the transaction, after history and audit rows were inserted

    class BadList(list):
        def __iter__(self):
            return exploding_log()

    with pytest.raises(Boom):
        store.save_refresh(rec.id, history=_history(9), content_hash="c9", audit=_audit(9), replayed=9, pages=[],
                           log=BadList())
    now = store.get_thread(rec.id)
    assert (now.audit_id, now.history_id, now.content_hash) == (good.audit_id, good.history_id, "c1")
    assert len(json.loads(store.audit(rec.id).raw)["posts"]) == 2
    assert store.count("audits") == 1  # the half-written audit row was rolled back
    assert store.count("histories") == 1


def test_old_versions_pruned(store):
    rec = store.get_or_create_thread("u", "guida")
    for i in range(6):
        store.save_refresh(rec.id, history=_history(i), content_hash=f"c{i}", audit=_audit(i), replayed=1, pages=[], log=[])
    assert store.count("audits") == 3 and store.count("histories") == 3
    assert len(json.loads(store.audit(rec.id).raw)["posts"]) == 5


def test_concurrent_readers_and_a_writer(store):
    rec = store.get_or_create_thread("u", "guida")
    store.save_refresh(rec.id, history=_history(1), content_hash="c0", audit=_audit(1), replayed=1, pages=[], log=[])
    errors: list[BaseException] = []
    seen: set[int] = set()
    stop = threading.Event()

    def reader():
        try:
            while not stop.is_set():
                doc = json.loads(store.audit(rec.id).raw)  # always a complete document
                seen.add(len(doc["posts"]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(4)]
    for t in readers:
        t.start()
    for i in range(2, 30):
        store.save_refresh(rec.id, history=_history(i), content_hash=f"c{i}", audit=_audit(i), replayed=1, pages=[], log=[])
    stop.set()
    for t in readers:
        t.join()
    assert not errors
    assert len(json.loads(store.audit(rec.id).raw)["posts"]) == 29
    assert seen <= set(range(1, 30))


def test_two_writers_create_one_thread(store, target, opened):
    """Two processes creating the same thread at once get the same row."""
    other = opened(target)
    ids, errors = [], []

    def create(s):
        try:
            ids.append(s.get_or_create_thread("https://x.forumfree.it/?t=7", "guida").id)
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=create, args=(s,)) for s in (store, other) * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(ids)) == 1 and store.count("threads") == 1


# --- refresh jobs ---------------------------------------------------------------------------------

def test_a_job_is_queued_once_claimed_once_and_finished_with_its_refresh(store):
    rec = store.get_or_create_thread("u", "guida")
    assert store.job(rec.id) is None
    job, status = store.request_job(rec.id)
    assert status == "queued" and job.state == "queued" and job.generation == 0
    assert store.request_job(rec.id)[1] == "joined"  # asked again while queued: the same job
    claim = store.claim_job("w1", 30)
    assert claim == JobClaim(rec.id, "w1", 1)
    assert store.claim_job("w2", 30) is None  # running, lease valid: nobody else takes it
    assert store.request_job(rec.id)[1] == "joined"
    running = store.job(rec.id)
    assert running.state == "running" and running.owner == "w1" and 25 < running.lease_left <= 30
    store.save_refresh(rec.id, history=_history(2), content_hash="c1", audit=_audit(2), replayed=2, pages=[],
                       log=[], job=claim, job_outcome={"changed": True, "replayed": 2})
    done = store.job(rec.id)
    assert (done.state, done.generation, done.owner, done.outcome) == ("done", 1, None, {"changed": True, "replayed": 2})
    assert done.error is None and 0 <= done.age < 5
    # a fresh thread is not queued again when the caller says so; a stale one is
    assert store.request_job(rec.id, fresh=lambda r: r.audit_id is not None)[1] == "fresh"
    assert store.request_job(rec.id, fresh=lambda r: False)[1] == "queued"


def test_a_failed_job_keeps_its_error_for_the_waiters(store):
    rec = store.get_or_create_thread("u", "guida")
    store.request_job(rec.id)
    claim = store.claim_job("w", 30)
    store.save_failure(rec.id, error={"code": "fetch_failed", "message": "giù", "status": 502}, log=[], job=claim)
    job = store.job(rec.id)
    assert job.state == "failed" and job.generation == 1 and job.error["code"] == "fetch_failed"
    assert job.error["status"] == 502 and store.get_thread(rec.id).last_error["code"] == "fetch_failed"


def test_an_expired_lease_passes_the_job_and_the_old_worker_stores_nothing(store):
    rec = store.get_or_create_thread("u", "guida")
    store.request_job(rec.id)
    first = store.claim_job("dead", 0.2)
    assert store.claim_job("other", 30) is None
    time.sleep(0.35)
    second = store.claim_job("other", 30)  # the first worker stopped renewing: its lease passed
    assert second is not None and second.attempts == 2
    assert not store.renew_job(first, 30)
    with pytest.raises(LeaseLost):  # the first worker comes back: its result is not stored, nothing half-written
        store.save_refresh(rec.id, history=_history(2), content_hash="c1", audit=_audit(2), replayed=2, pages=[],
                           log=[FetchLogEntry("u", 200)], job=first)
    assert store.count("audits") == 0 and store.count("histories") == 0 and store.count("fetch_log") == 0
    assert store.get_thread(rec.id).audit_id is None
    assert store.renew_job(second, 30)
    store.save_unchanged(rec.id, pages=[], log=[], job=second)
    assert store.job(rec.id).state == "done" and not store.finish_job(second)


def test_a_job_whose_workers_keep_dying_is_given_up(store):
    from server.storage import MAX_JOB_ATTEMPTS

    rec = store.get_or_create_thread("u", "guida")
    store.request_job(rec.id)
    for _ in range(MAX_JOB_ATTEMPTS):
        assert store.claim_job("dies", 0.01) is not None
        time.sleep(0.03)
    assert store.claim_job("w", 30) is None
    job = store.job(rec.id)
    assert job.state == "failed" and job.generation == 1 and job.error["code"] == "scrape_crashed"
    assert "interrotta più volte" in job.error["message"]
    assert store.request_job(rec.id)[1] == "queued"  # asked again later: a new job, attempts from zero
    assert store.claim_job("w", 30).attempts == 1


def test_concurrent_workers_claim_each_job_once(store, target, opened):
    """Workers of two processes claiming at once (SKIP LOCKED on PostgreSQL, IMMEDIATE on SQLite)."""
    other = opened(target)
    ids = [store.get_or_create_thread(f"u{i}", "guida").id for i in range(6)]
    for tid in ids:
        store.request_job(tid)
    claimed, errors = [], []
    lock = threading.Lock()

    def work(s, name):
        try:
            while (claim := s.claim_job(name, 30)) is not None:
                with lock:
                    claimed.append(claim.thread_id)
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s, f"w{i}")) for i, s in enumerate((store, other) * 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(claimed) == sorted(ids)


# --- what processes share about the forums ---------------------------------------------------------

def test_shared_fetch_cache_and_robots(store, monkeypatch):
    from scraper.politeness import CacheEntry
    from scraper.politeness import RobotsRecord
    from server.pg import DbFetchCache, DbRobotsStore

    cache = DbFetchCache(store)
    body = "<html>pagina è</html>".encode() * 100
    import hashlib

    entry = CacheEntry(url="http://f/?t=1", final_url="http://f/?t=1", status=200,
                       headers={"etag": '"x"', "content-type": "text/html"}, content=body,
                       sha256=hashlib.sha256(body).hexdigest(), encoding="utf-8", stored_at="2026-01-01T00:00:00Z")
    assert cache.load(entry.url) is None
    cache.store(entry)
    assert cache.load(entry.url) == entry
    cache.store(entry.__class__(**{**entry.__dict__, "headers": {"etag": '"y"'}}))  # replaced, not duplicated
    assert cache.load(entry.url).etag == '"y"' and store.count("fetch_cache") == 1
    _exec(store, "UPDATE fetch_cache SET sha256='0' WHERE url=?", (entry.url,))
    assert cache.load(entry.url) is None  # a body that does not match its hash is a miss

    # bounded: past KEEP_FETCH_CACHE pages the oldest stored go first
    monkeypatch.setattr("server.storage.KEEP_FETCH_CACHE", 3)
    for i in range(5):
        cache.store(entry.__class__(**{**entry.__dict__, "url": f"http://f/?t={i + 10}",
                                       "stored_at": f"2026-01-0{i + 2}T00:00:00Z"}))
    assert store.count("fetch_cache") == 3
    assert [cache.load(f"http://f/?t={i + 10}") is not None for i in range(5)] == [False, False, True, True, True]

    robots = DbRobotsStore(store)
    assert robots.load("http://f") is None
    robots.store("http://f", RobotsRecord("User-agent: *\nDisallow: /x\n"), 60)
    record, ttl = robots.load("http://f")
    assert record == RobotsRecord("User-agent: *\nDisallow: /x\n") and 55 < ttl <= 60
    robots.store("http://g", RobotsRecord(None, "negato"), 0.1)
    time.sleep(0.2)
    assert robots.load("http://g") is None  # expired


def test_rate_limit_counted_in_the_database(store, target, opened):
    from server.errors import RateLimited
    from server.pg import DbRateLimiter

    a, b = DbRateLimiter(store, 3, 0.5), DbRateLimiter(opened(target), 3, 0.5)  # two processes, one client
    a.hit("1.2.3.4")
    b.hit("1.2.3.4")
    a.hit("1.2.3.4")
    with pytest.raises(RateLimited) as info:
        b.hit("1.2.3.4")
    assert info.value.headers["Retry-After"] == "1" and info.value.details["limit"] == 3
    b.hit("5.6.7.8")  # another client has its own window
    time.sleep(0.6)
    a.hit("1.2.3.4")  # the window slid
    store.rate_forget(0.5)
    assert store.count("rate_hits") == 1  # only the hit of this window is left


# --- PostgreSQL only: the host gate of many processes -------------------------------------------------

def test_host_gate_spaces_requests_across_processes(pg_url, opened):
    from server.pg import PgHostGate

    gates = [PgHostGate(opened(pg_url)) for _ in range(2)]  # two processes, each its own pool
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def request(gate):
        gate.acquire("forum.example:80", 0.3)
        start = time.monotonic()
        time.sleep(0.05)  # the request
        with lock:
            spans.append((start, time.monotonic()))
        gate.release("forum.example:80")

    threads = [threading.Thread(target=request, args=(gates[i % 2],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    for (s1, e1), (s2, _) in zip(spans, spans[1:]):
        assert s2 >= e1  # one request at a time
        assert s2 - s1 >= 0.3 - 0.01  # the interval between starts, whoever sent them
    # a Retry-After one process received holds the others too
    gates[0].acquire("forum.example:80", 0.0)
    gates[0].release("forum.example:80", hold_off=0.5)
    t0 = time.monotonic()
    gates[1].acquire("forum.example:80", 0.0)
    gates[1].release("forum.example:80")
    assert time.monotonic() - t0 >= 0.45


def test_host_gate_slot_is_freed_when_its_process_dies(pg_url, opened):
    import psycopg

    from server.pg import PgHostGate

    dying, alive = opened(pg_url), opened(pg_url)
    holder = PgHostGate(dying)
    holder.acquire("forum.example:80", 0.0)  # holds the slot (and never releases it)
    got = threading.Event()

    def other():
        gate = PgHostGate(alive)
        gate.acquire("forum.example:80", 0.0)
        got.set()
        gate.release("forum.example:80")

    t = threading.Thread(target=other)
    t.start()
    assert not got.wait(0.5)  # the slot is held
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the holding process is killed: its sessions end
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype='advisory' AND granted "
                     "AND pid <> pg_backend_pid()")
    assert got.wait(10)
    t.join()
