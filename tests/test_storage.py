"""Storage layer: migrations, transactional refreshes, WAL, concurrent readers and writers."""
from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from server.storage import (
    MIGRATIONS, FetchLogEntry, PageRecord, SchemaTooNew, SQLiteStorage, StorageError, ThreadNotFound, open_storage,
)


def _audit(n: int) -> dict:
    return {"format": "arbitro.audit/1", "ruleset": "prova", "posts": [{"id": str(i)} for i in range(n)]}


def _history(n: int) -> dict:
    return {"format": "arbitro.history/1", "thread": {"url": "u", "platform": "forumfree", "host": "h", "title": "T"},
            "posts": [{"id": str(i)} for i in range(n)]}


@pytest.fixture()
def store(tmp_path):
    s = SQLiteStorage(tmp_path / "db.sqlite3")
    yield s
    s.close()


def test_migrations_are_versioned_and_idempotent(tmp_path):
    path = tmp_path / "db.sqlite3"
    s = SQLiteStorage(path)
    assert s.schema_version() == MIGRATIONS[-1][0]
    assert s.migrate() == MIGRATIONS[-1][0]  # a second run applies nothing
    rows = sqlite3.connect(path).execute("SELECT version FROM schema_migrations").fetchall()
    assert [r[0] for r in rows] == [v for v, _ in MIGRATIONS]
    s.close()


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "db.sqlite3"
    SQLiteStorage(path).close()
    with sqlite3.connect(path) as c:
        c.execute("INSERT INTO schema_migrations VALUES (999, 'x')")
    with pytest.raises(SchemaTooNew):
        SQLiteStorage(path)


def test_wal_mode(store):
    assert store._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_open_storage_schemes(tmp_path):
    s = open_storage(f"sqlite:///{tmp_path / 'a.db'}")
    assert isinstance(s, SQLiteStorage)
    s.close()
    with pytest.raises(StorageError):
        open_storage("postgres://db/arbitro")


def test_thread_life_cycle(store):
    rec = store.get_or_create_thread("https://x.forumfree.it/?t=1", "guida")
    again = store.get_or_create_thread("https://x.forumfree.it/?t=1", "guida")
    assert rec.id == again.id and rec.audit_id is None
    other = store.get_or_create_thread("https://x.forumfree.it/?t=1", "cosmo")
    assert other.id != rec.id
    pages = [PageRecord("https://x.forumfree.it/?t=1", 1, 200, etag='"a"', content_hash="h1")]
    log = [FetchLogEntry("https://x.forumfree.it/?t=1", 200, bytes=10)]
    new = store.save_refresh(rec.id, history=_history(3), content_hash="c1", audit=_audit(3), replayed=3,
                             pages=pages, log=log)
    assert new.audit_id and new.history_id and new.content_hash == "c1" and new.title == "T"
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
    with pytest.raises(ThreadNotFound):
        store.get_thread(999)


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
    n = store._conn().execute("SELECT COUNT(*) FROM audits").fetchone()[0]
    assert n == 1  # the half-written audit row was rolled back


def test_old_versions_pruned(store):
    rec = store.get_or_create_thread("u", "guida")
    for i in range(6):
        store.save_refresh(rec.id, history=_history(i), content_hash=f"c{i}", audit=_audit(i), replayed=1, pages=[], log=[])
    assert store._conn().execute("SELECT COUNT(*) FROM audits").fetchone()[0] == 3
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
