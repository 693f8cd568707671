"""Storage of threads, histories, audits and the fetch log: a small interface and its SQLite implementation."""
from __future__ import annotations

import abc
import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from .errors import ServerError


class StorageError(ServerError):
    """Root of the storage errors."""


class ThreadNotFound(StorageError):
    pass


class SchemaTooNew(StorageError):
    """The database was written by a newer Arbitro (its schema version is above ours)."""


# SQLite's INTEGER is 64-bit signed: a larger id is no row of ours (and sqlite3 raises OverflowError binding it)
MAX_ID = 2**63 - 1


def valid_id(thread_id: Any) -> bool:
    """Whether `thread_id` can be a row id at all (an int in 1..MAX_ID)."""
    return isinstance(thread_id, int) and not isinstance(thread_id, bool) and 0 < thread_id <= MAX_ID


def utcnow() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


@dataclass(frozen=True)
class PageRecord:
    """One fetched page of a thread: its validators and content hash, for conditional refreshes."""

    url: str
    page: int
    status: int | None
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None
    not_modified: bool = False
    fetched_at: str | None = None


@dataclass(frozen=True)
class FetchLogEntry:
    url: str
    status: int | None
    not_modified: bool = False
    from_cache: bool = False
    bytes: int = 0
    error: str | None = None
    at: str = field(default_factory=utcnow)


@dataclass(frozen=True)
class ThreadRecord:
    id: int
    url: str
    ruleset: str
    platform: str | None
    host: str | None
    title: str | None
    settings: dict[str, Any]
    registry: dict[str, Any] | None
    created_at: str
    fetched_at: str | None  # last time the thread's content changed and was stored
    checked_at: str | None  # last successful fetch (changed or not)
    checked_ts: float | None  # same, as epoch seconds (staleness test without parsing dates)
    content_hash: str | None
    last_error: dict[str, Any] | None
    history_id: int | None
    audit_id: int | None


@dataclass(frozen=True)
class StoredAudit:
    """The stored audit of a thread as raw JSON text (served as-is, never re-serialised)."""

    id: int
    thread_id: int | None
    ruleset: str
    raw: str
    replayed: int
    created_at: str


class Storage(abc.ABC):
    """What the service needs from a database. Another SQL backend implements these methods."""

    @abc.abstractmethod
    def migrate(self) -> int: ...

    @abc.abstractmethod
    def schema_version(self) -> int: ...

    @abc.abstractmethod
    def get_or_create_thread(self, url: str, ruleset: str, *, settings: dict[str, Any] | None = None,
                             registry: dict[str, Any] | None = None) -> ThreadRecord: ...

    @abc.abstractmethod
    def update_thread_options(self, thread_id: int, *, settings: dict[str, Any],
                              registry: dict[str, Any] | None) -> ThreadRecord: ...

    @abc.abstractmethod
    def find_thread(self, url: str, ruleset: str | None = None) -> ThreadRecord | None: ...

    @abc.abstractmethod
    def get_thread(self, thread_id: int) -> ThreadRecord: ...

    @abc.abstractmethod
    def save_refresh(self, thread_id: int, *, history: dict[str, Any], content_hash: str, audit: dict[str, Any],
                     replayed: int, pages: list[PageRecord], log: list[FetchLogEntry]) -> ThreadRecord: ...

    @abc.abstractmethod
    def save_unchanged(self, thread_id: int, *, pages: list[PageRecord], log: list[FetchLogEntry]) -> ThreadRecord: ...

    @abc.abstractmethod
    def save_failure(self, thread_id: int, *, error: dict[str, Any], log: list[FetchLogEntry]) -> ThreadRecord: ...

    @abc.abstractmethod
    def audit(self, thread_id: int) -> StoredAudit | None: ...

    @abc.abstractmethod
    def history(self, thread_id: int) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def pages(self, thread_id: int) -> list[PageRecord]: ...

    @abc.abstractmethod
    def fetch_log(self, thread_id: int, limit: int = 100) -> list[FetchLogEntry]: ...

    @abc.abstractmethod
    def close(self) -> None: ...


# Versioned migrations: append, never edit a released one.
MIGRATIONS: list[tuple[int, str]] = [
    (1, """
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
    """),
]

# Older histories/audits of a thread kept besides the current one (the rest is pruned on write).
KEEP_VERSIONS = 3


class SQLiteStorage(Storage):
    """One SQLite file in WAL mode; one connection per thread; every write one IMMEDIATE transaction."""

    def __init__(self, path: str | Path, *, busy_timeout: float = 30.0) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self.migrate()

    # --- connections and transactions ----------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None,
                                   check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()

    # --- schema ---------------------------------------------------------------------------

    def schema_version(self) -> int:
        row = self._conn().execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name='schema_migrations'").fetchone()
        if row is None:
            return 0
        return int(self._conn().execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0])

    def migrate(self) -> int:
        conn = self._conn()
        with self._tx():
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        current = self.schema_version()
        latest = MIGRATIONS[-1][0]
        if current > latest:
            raise SchemaTooNew(f"database schema version {current} is newer than this Arbitro ({latest})")
        for version, script in MIGRATIONS:
            if version <= current:
                continue
            with self._tx() as c:
                for statement in _split_sql(script):
                    c.execute(statement)
                c.execute("INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)", (version, utcnow()))
        return self.schema_version()

    # --- threads --------------------------------------------------------------------------

    def get_or_create_thread(self, url: str, ruleset: str, *, settings: dict[str, Any] | None = None,
                             registry: dict[str, Any] | None = None) -> ThreadRecord:
        with self._tx() as c:
            c.execute(
                "INSERT INTO threads(url, ruleset, settings, registry, created_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(url, ruleset) DO NOTHING",
                (url, ruleset, dumps(settings or {}), dumps(registry) if registry is not None else None, utcnow()),
            )
            row = c.execute("SELECT * FROM threads WHERE url=? AND ruleset=?", (url, ruleset)).fetchone()
        return _thread(row)

    def update_thread_options(self, thread_id: int, *, settings: dict[str, Any],
                              registry: dict[str, Any] | None) -> ThreadRecord:
        with self._tx() as c:
            # new options invalidate the stored content hash, so the next refresh replays
            c.execute("UPDATE threads SET settings=?, registry=?, content_hash=NULL WHERE id=?",
                      (dumps(settings), dumps(registry) if registry is not None else None, thread_id))
        return self.get_thread(thread_id)

    def find_thread(self, url: str, ruleset: str | None = None) -> ThreadRecord | None:
        if ruleset is None:
            # the most recently refreshed audit of that URL, whatever its ruleset
            row = self._conn().execute(
                "SELECT * FROM threads WHERE url=? ORDER BY audit_id IS NULL, checked_ts DESC LIMIT 1", (url,)).fetchone()
        else:
            row = self._conn().execute("SELECT * FROM threads WHERE url=? AND ruleset=?", (url, ruleset)).fetchone()
        return _thread(row) if row else None

    def get_thread(self, thread_id: int) -> ThreadRecord:
        if not valid_id(thread_id):
            raise ThreadNotFound(thread_id)
        row = self._conn().execute("SELECT * FROM threads WHERE id=?", (thread_id,)).fetchone()
        if row is None:
            raise ThreadNotFound(thread_id)
        return _thread(row)

    # --- refresh outcomes (each one transaction) -----------------------------------------

    def save_refresh(self, thread_id: int, *, history: dict[str, Any], content_hash: str, audit: dict[str, Any],
                     replayed: int, pages: list[PageRecord], log: list[FetchLogEntry]) -> ThreadRecord:
        now, ts = utcnow(), time.time()
        thread = history.get("thread") or {}
        with self._tx() as c:
            hid = c.execute(
                "INSERT INTO histories(thread_id, format, content_hash, body, created_at) VALUES (?, ?, ?, ?, ?)",
                (thread_id, history.get("format", ""), content_hash, dumps(history), now)).lastrowid
            aid = c.execute(
                "INSERT INTO audits(thread_id, history_id, format, ruleset, replayed, body, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (thread_id, hid, audit.get("format", ""), audit.get("ruleset", ""), replayed, dumps(audit), now)).lastrowid
            c.execute(
                "UPDATE threads SET platform=?, host=?, title=?, fetched_at=?, checked_at=?, checked_ts=?, "
                "content_hash=?, last_error=NULL, history_id=?, audit_id=? WHERE id=?",
                (thread.get("platform"), thread.get("host"), thread.get("title"), now, now, ts, content_hash, hid, aid,
                 thread_id))
            self._write_pages(c, thread_id, pages)
            self._write_log(c, thread_id, log)
            self._prune(c, thread_id)
        return self.get_thread(thread_id)

    def save_unchanged(self, thread_id: int, *, pages: list[PageRecord], log: list[FetchLogEntry]) -> ThreadRecord:
        with self._tx() as c:
            c.execute("UPDATE threads SET checked_at=?, checked_ts=?, last_error=NULL WHERE id=?",
                      (utcnow(), time.time(), thread_id))
            self._write_pages(c, thread_id, pages)
            self._write_log(c, thread_id, log)
        return self.get_thread(thread_id)

    def save_failure(self, thread_id: int, *, error: dict[str, Any], log: list[FetchLogEntry]) -> ThreadRecord:
        # the previous good history and audit stay current: only the error and the log change
        err = dict(error, at=utcnow())
        with self._tx() as c:
            c.execute("UPDATE threads SET last_error=? WHERE id=?", (dumps(err), thread_id))
            self._write_log(c, thread_id, log)
        return self.get_thread(thread_id)

    @staticmethod
    def _write_pages(c: sqlite3.Connection, thread_id: int, pages: list[PageRecord]) -> None:
        for p in pages:
            c.execute(
                "INSERT INTO pages(thread_id, page, url, status, etag, last_modified, content_hash, not_modified, fetched_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(thread_id, url) DO UPDATE SET page=excluded.page, "
                "status=excluded.status, etag=COALESCE(excluded.etag, pages.etag), "
                "last_modified=COALESCE(excluded.last_modified, pages.last_modified), "
                "content_hash=COALESCE(excluded.content_hash, pages.content_hash), "
                "not_modified=excluded.not_modified, fetched_at=excluded.fetched_at",
                (thread_id, p.page, p.url, p.status, p.etag, p.last_modified, p.content_hash, int(p.not_modified),
                 p.fetched_at or utcnow()))

    @staticmethod
    def _write_log(c: sqlite3.Connection, thread_id: int, log: list[FetchLogEntry]) -> None:
        c.executemany(
            "INSERT INTO fetch_log(thread_id, at, url, status, not_modified, from_cache, bytes, error) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(thread_id, e.at, e.url, e.status, int(e.not_modified), int(e.from_cache), e.bytes, e.error) for e in log])

    @staticmethod
    def _prune(c: sqlite3.Connection, thread_id: int) -> None:
        for table in ("audits", "histories"):
            c.execute(
                f"DELETE FROM {table} WHERE thread_id=? AND id NOT IN "
                f"(SELECT id FROM {table} WHERE thread_id=? ORDER BY id DESC LIMIT ?)",
                (thread_id, thread_id, KEEP_VERSIONS))

    # --- reads ----------------------------------------------------------------------------

    def audit(self, thread_id: int) -> StoredAudit | None:
        if not valid_id(thread_id):
            return None
        row = self._conn().execute(
            "SELECT a.id, a.thread_id, a.ruleset, a.body, a.replayed, a.created_at FROM threads t "
            "JOIN audits a ON a.id = t.audit_id WHERE t.id=?", (thread_id,)).fetchone()
        if row is None:
            return None
        return StoredAudit(id=row["id"], thread_id=row["thread_id"], ruleset=row["ruleset"], raw=row["body"],
                           replayed=row["replayed"], created_at=row["created_at"])

    def history(self, thread_id: int) -> dict[str, Any] | None:
        if not valid_id(thread_id):
            return None
        row = self._conn().execute(
            "SELECT h.body FROM threads t JOIN histories h ON h.id = t.history_id WHERE t.id=?", (thread_id,)).fetchone()
        return json.loads(row["body"]) if row else None

    def pages(self, thread_id: int) -> list[PageRecord]:
        if not valid_id(thread_id):
            return []
        rows = self._conn().execute("SELECT * FROM pages WHERE thread_id=? ORDER BY page, url", (thread_id,)).fetchall()
        return [PageRecord(url=r["url"], page=r["page"], status=r["status"], etag=r["etag"],
                           last_modified=r["last_modified"], content_hash=r["content_hash"],
                           not_modified=bool(r["not_modified"]), fetched_at=r["fetched_at"]) for r in rows]

    def fetch_log(self, thread_id: int, limit: int = 100) -> list[FetchLogEntry]:
        if not valid_id(thread_id):
            return []
        rows = self._conn().execute(
            "SELECT * FROM fetch_log WHERE thread_id=? ORDER BY id DESC LIMIT ?", (thread_id, limit)).fetchall()
        return [FetchLogEntry(url=r["url"], status=r["status"], not_modified=bool(r["not_modified"]),
                              from_cache=bool(r["from_cache"]), bytes=r["bytes"], error=r["error"], at=r["at"])
                for r in reversed(rows)]


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _thread(row: sqlite3.Row) -> ThreadRecord:
    return ThreadRecord(
        id=row["id"], url=row["url"], ruleset=row["ruleset"], platform=row["platform"], host=row["host"],
        title=row["title"], settings=json.loads(row["settings"] or "{}"),
        registry=json.loads(row["registry"]) if row["registry"] else None, created_at=row["created_at"],
        fetched_at=row["fetched_at"], checked_at=row["checked_at"], checked_ts=row["checked_ts"],
        content_hash=row["content_hash"], last_error=json.loads(row["last_error"]) if row["last_error"] else None,
        history_id=row["history_id"], audit_id=row["audit_id"],
    )


def open_storage(url_or_path: str) -> Storage:
    """Open the configured database: a path (or `sqlite:///path`) is SQLite; other schemes are not bundled."""
    if url_or_path.startswith("sqlite:///"):
        return SQLiteStorage(url_or_path[len("sqlite:///"):])
    if "://" in url_or_path:
        raise StorageError(f"database scheme not supported: {url_or_path.split('://', 1)[0]}")
    return SQLiteStorage(url_or_path)
