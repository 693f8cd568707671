"""Storage of threads, histories, audits and the fetch log: a small interface, the SQL both databases share, and
its SQLite implementation (PostgreSQL: `server/pg.py`, the same SQL through `Dialect`).

Besides what one process needs, the schema holds what several processes on one database share (migration 2):
refresh jobs (`refresh_jobs`: one per thread, claimed with a lease), the forums' politeness (`host_gates`,
`robots_cache`, `fetch_cache`) and the audit-creation rate limit (`rate_hits`). SQLite creates those tables too
(one migration history) but a SQLite service keeps them in process; PostgreSQL services use them.
"""
from __future__ import annotations

import abc
import functools
import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from .errors import ServerError


class StorageError(ServerError):
    """Root of the storage errors."""


class ThreadNotFound(StorageError):
    pass


class SchemaTooNew(StorageError):
    """The database was written by a newer Arbitro (its schema version is above ours)."""


class LeaseLost(StorageError):
    """A refresh job's lease passed to another worker (this one was presumed dead): its result is not stored."""


# SQLite's INTEGER and PostgreSQL's BIGINT are 64-bit signed: a larger id is no row of ours (and sqlite3 raises
# OverflowError binding it)
MAX_ID = 2**63 - 1

# A refresh job claimed this many times without finishing (each worker died or lost its lease) is given up.
MAX_JOB_ATTEMPTS = 3


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
    fight: bool | None = None  # whether the current audit has a fight in it (None: not known, older rows)


@dataclass(frozen=True)
class StoredAudit:
    """The stored audit of a thread as raw JSON text (served as-is, never re-serialised)."""

    id: int
    thread_id: int | None
    ruleset: str
    raw: str
    replayed: int
    created_at: str


@dataclass(frozen=True)
class JobRecord:
    """A thread's refresh job. `state`: idle (never asked), queued, running, done, failed. `generation` counts the
    jobs finished: a caller waits for it to pass the value it saw. Times are the database's clock."""

    thread_id: int
    state: str
    generation: int
    attempts: int
    owner: str | None
    lease_left: float | None  # seconds until a running job's lease ends (negative: expired)
    age: float | None  # seconds since the last job finished
    error: dict[str, Any] | None  # a failed job's stored error (code, message, details, status)
    outcome: dict[str, Any] | None  # a done job's counts (changed, replayed, fetched, not_modified)

    @property
    def open(self) -> bool:
        return self.state in ("queued", "running")


@dataclass(frozen=True)
class JobClaim:
    """A worker's hold on a thread's job, until it finishes it or its lease passes (`LeaseLost`)."""

    thread_id: int
    owner: str
    attempts: int


class Storage(abc.ABC):
    """What the service needs from a database. Another SQL backend implements these methods."""

    # whether several processes share this database: the service then keeps refresh jobs, the forums' politeness
    # and the rate limit in it (PostgreSQL) instead of in the process (SQLite)
    shared: bool = False

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

    # `job`: the refresh job this outcome finishes (several processes), in the same transaction; `LeaseLost` (and
    # nothing stored) when it is no longer the caller's. `fight`: whether the new audit has a fight in it.
    @abc.abstractmethod
    def save_refresh(self, thread_id: int, *, history: dict[str, Any], content_hash: str, audit: dict[str, Any],
                     replayed: int, pages: list[PageRecord], log: list[FetchLogEntry], fight: bool | None = None,
                     job: JobClaim | None = None, job_outcome: dict[str, Any] | None = None,
                     evidence: Sequence[dict[str, Any]] = ()) -> ThreadRecord: ...

    @abc.abstractmethod
    def save_unchanged(self, thread_id: int, *, pages: list[PageRecord], log: list[FetchLogEntry],
                       job: JobClaim | None = None, job_outcome: dict[str, Any] | None = None) -> ThreadRecord: ...

    @abc.abstractmethod
    def save_failure(self, thread_id: int, *, error: dict[str, Any], log: list[FetchLogEntry],
                     job: JobClaim | None = None) -> ThreadRecord: ...

    @abc.abstractmethod
    def audit(self, thread_id: int) -> StoredAudit | None: ...

    @abc.abstractmethod
    def history(self, thread_id: int) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def evidence(self, thread_id: int) -> list[dict[str, Any]]:
        """The thread's tamper-evidence verdicts (dicts), oldest first."""

    @abc.abstractmethod
    def pages(self, thread_id: int) -> list[PageRecord]: ...

    @abc.abstractmethod
    def fetch_log(self, thread_id: int, limit: int = 100) -> list[FetchLogEntry]: ...

    @abc.abstractmethod
    def close(self) -> None: ...


# --- the two dialects ---------------------------------------------------------------------------------------

class Dialect:
    """What differs between SQLite and PostgreSQL in our SQL, and nothing else. Statements are written once with
    `?` placeholders and these tokens, and rendered per dialect:

    - types in migrations: `__PK__` (a 64-bit row id), `__BIGINT__`, `__FLOAT__` (8-byte), `__BLOB__`;
    - `__FK_HISTORIES__`, `__FK_AUDITS__`: `threads` and `histories`/`audits` reference each other; PostgreSQL
      checks a REFERENCES when the table is created, so it adds those two keys after all three exist;
    - in queries: `__NOW__` (the database's clock, epoch seconds: one clock for every process),
      `__FOR_UPDATE__` and `__SKIP_LOCKED__` (row locks; SQLite's `BEGIN IMMEDIATE` already serialises writers),
      `__NULLS_LAST__` after a descending key.
    """

    name = "sqlite"
    placeholder = "?"
    tokens: dict[str, str] = {
        "__PK__": "INTEGER PRIMARY KEY",
        "__BIGINT__": "INTEGER",
        "__FLOAT__": "REAL",
        "__BLOB__": "BLOB",
        "__FK_HISTORIES__": "REFERENCES histories(id)",
        "__FK_AUDITS__": "REFERENCES audits(id)",
        "__NOW__": "((julianday('now') - 2440587.5) * 86400.0)",
        "__FOR_UPDATE__": "",
        "__SKIP_LOCKED__": "",
        "__NULLS_LAST__": "",  # SQLite sorts NULL first, so last when descending; PostgreSQL says it
    }
    table_exists = "SELECT 1 AS found FROM sqlite_master WHERE type='table' AND name=?"

    def __init__(self) -> None:
        self.render = functools.lru_cache(maxsize=512)(self._render)

    def _render(self, sql: str) -> str:
        for token, text in self.tokens.items():
            if token in sql:
                sql = sql.replace(token, text)
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def statements(self, steps: Iterable[str | Sql]) -> list[str]:
        """A migration's statements for this dialect (a `Sql` of the other dialect only is left out)."""
        out = []
        for step in steps:
            text = getattr(step, self.name) if isinstance(step, Sql) else step
            if text:
                out.append(self.render(text.strip()))
        return out

    # hooks with no SQL in common
    def insert_id(self, conn: Any, sql: str, params: tuple) -> int:
        return int(conn.execute(self.render(sql), params).lastrowid)

    def executemany(self, conn: Any, sql: str, rows: list[tuple]) -> None:
        if rows:
            conn.executemany(self.render(sql), rows)

    def lock(self, conn: Any, namespace: int, key: str) -> None:
        """Serialise this transaction with every other one taking the same (namespace, key)."""
        # SQLite: BEGIN IMMEDIATE holds the one write lock already

    def notify(self, conn: Any, payload: str) -> None:
        """Tell the other processes (PostgreSQL NOTIFY, sent at commit); nothing to do for one process."""


@dataclass(frozen=True)
class Sql:
    """A migration statement written for each dialect, where they differ (None: that dialect has none)."""

    sqlite: str | None = None
    postgresql: str | None = None


# Versioned migrations, one history for both dialects: append, never edit a released one. A step is a statement
# both dialects run (rendered with the tokens above) or a `Sql` with each dialect's own.
MIGRATIONS: list[tuple[int, list[str | Sql]]] = [
    (1, [
        """CREATE TABLE threads (
        id __PK__,
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
        checked_ts __FLOAT__,
        content_hash TEXT,
        last_error TEXT,
        history_id __BIGINT__ __FK_HISTORIES__,
        audit_id __BIGINT__ __FK_AUDITS__,
        UNIQUE (url, ruleset)
    )""",
        """CREATE TABLE pages (
        thread_id __BIGINT__ NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        page INTEGER NOT NULL,
        url TEXT NOT NULL,
        status INTEGER,
        etag TEXT,
        last_modified TEXT,
        content_hash TEXT,
        not_modified INTEGER NOT NULL DEFAULT 0,
        fetched_at TEXT,
        PRIMARY KEY (thread_id, url)
    )""",
        """CREATE TABLE histories (
        id __PK__,
        thread_id __BIGINT__ REFERENCES threads(id) ON DELETE CASCADE,
        format TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
        """CREATE TABLE audits (
        id __PK__,
        thread_id __BIGINT__ REFERENCES threads(id) ON DELETE CASCADE,
        history_id __BIGINT__ REFERENCES histories(id),
        format TEXT NOT NULL,
        ruleset TEXT NOT NULL,
        replayed INTEGER NOT NULL DEFAULT 0,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
        """CREATE TABLE fetch_log (
        id __PK__,
        thread_id __BIGINT__ REFERENCES threads(id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        url TEXT NOT NULL,
        status INTEGER,
        not_modified INTEGER NOT NULL DEFAULT 0,
        from_cache INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        error TEXT
    )""",
        Sql(postgresql="ALTER TABLE threads ADD FOREIGN KEY (history_id) REFERENCES histories(id), "
                       "ADD FOREIGN KEY (audit_id) REFERENCES audits(id)"),
        "CREATE INDEX fetch_log_thread ON fetch_log(thread_id, id)",
        "CREATE INDEX histories_thread ON histories(thread_id, id)",
        "CREATE INDEX audits_thread ON audits(thread_id, id)",
    ]),
    (2, [
        # whether the current audit has a fight in it: a thread without one is refreshed after `negative_ttl`,
        # and every process (and the next start) knows it from the database
        "ALTER TABLE threads ADD COLUMN fight INTEGER",
        # one refresh job per thread: queued by any process, claimed by one worker with a lease it renews
        """CREATE TABLE refresh_jobs (
        thread_id __BIGINT__ PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
        state TEXT NOT NULL,
        generation INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        requested_at __FLOAT__,
        started_at __FLOAT__,
        lease_until __FLOAT__,
        finished_at __FLOAT__,
        error TEXT,
        outcome TEXT
    )""",
        "CREATE INDEX refresh_jobs_open ON refresh_jobs(requested_at) WHERE state IN ('queued', 'running')",
        # per forum host: when its last request started and a pause it asked for (Retry-After)
        """CREATE TABLE host_gates (
        host TEXT PRIMARY KEY,
        last_start __FLOAT__ NOT NULL DEFAULT 0,
        not_before __FLOAT__ NOT NULL DEFAULT 0
    )""",
        # robots.txt per origin (body NULL and refusal NULL: no rules) until it expires
        """CREATE TABLE robots_cache (
        origin TEXT PRIMARY KEY,
        body TEXT,
        refusal TEXT,
        expires_at __FLOAT__ NOT NULL
    )""",
        # the conditional-GET cache: a 200's validators and its body (zlib), under its URL
        """CREATE TABLE fetch_cache (
        url TEXT PRIMARY KEY,
        final_url TEXT NOT NULL,
        status INTEGER NOT NULL,
        headers TEXT NOT NULL,
        encoding TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        body __BLOB__ NOT NULL,
        stored_at TEXT NOT NULL
    )""",
        # audit creations per client, a sliding window
        """CREATE TABLE rate_hits (
        client TEXT NOT NULL,
        at __FLOAT__ NOT NULL
    )""",
        "CREATE INDEX rate_hits_client ON rate_hits(client, at)",
    ]),
    (3, [
        # tamper evidence found by comparing a refresh with the thread's previous reading (engine.evidence): one
        # verdict per row, with both versions in it; attached to every later audit of the thread
        """CREATE TABLE evidence (
        id __PK__,
        thread_id __BIGINT__ NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        post_id TEXT NOT NULL,
        code TEXT NOT NULL,
        verdict TEXT NOT NULL,
        detected_at TEXT NOT NULL
    )""",
        "CREATE INDEX evidence_thread ON evidence(thread_id, id)",
        # the shared conditional-GET cache is bounded: the oldest entries go first (KEEP_FETCH_CACHE)
        "CREATE INDEX fetch_cache_stored ON fetch_cache(stored_at)",
    ]),
]

# Older histories/audits of a thread kept besides the current one (the rest is pruned on write).
KEEP_VERSIONS = 3
# Evidence verdicts kept per thread (the newest; docs/service.md): each holds both versions of what changed.
KEEP_EVIDENCE = 500
# Pages kept in the shared conditional-GET cache (the most recently stored; an evicted page costs one full download).
KEEP_FETCH_CACHE = 10_000

_JOB_COLUMNS = ("thread_id, state, generation, attempts, owner, lease_until - __NOW__ AS lease_left, "
                "__NOW__ - finished_at AS age, error, outcome")


class _Tx:
    """One connection as the shared SQL uses it: statements rendered for its dialect, rows read by column name."""

    __slots__ = ("conn", "dialect")

    def __init__(self, conn: Any, dialect: Dialect) -> None:
        self.conn = conn
        self.dialect = dialect

    def execute(self, sql: str, params: tuple = ()) -> Any:
        return self.conn.execute(self.dialect.render(sql), params)

    def one(self, sql: str, params: tuple = ()) -> Any:
        return self.execute(sql, params).fetchone()

    def all(self, sql: str, params: tuple = ()) -> list[Any]:
        return self.execute(sql, params).fetchall()

    def insert(self, sql: str, params: tuple) -> int:
        return self.dialect.insert_id(self.conn, sql, params)

    def executemany(self, sql: str, rows: list[tuple]) -> None:
        self.dialect.executemany(self.conn, sql, rows)

    def lock(self, namespace: int, key: str) -> None:
        self.dialect.lock(self.conn, namespace, key)

    def notify(self, payload: str) -> None:
        self.dialect.notify(self.conn, payload)


# advisory-lock namespaces (PostgreSQL): the schema, one rate-limit client
LOCK_SCHEMA = 0x41524249  # "ARBI"
LOCK_RATE = 0x41524252


class SQLStorage(Storage):
    """Every query of the service, written once for both dialects. A subclass gives the connections (`_reader`,
    `_tx`) and its `Dialect`."""

    dialect: Dialect

    # --- connections and transactions (the subclass's) -------------------------------------------

    @abc.abstractmethod
    def _reader(self) -> Any:
        """A context manager giving a `_Tx` for reads outside a transaction."""

    @abc.abstractmethod
    def _tx(self) -> Any:
        """A context manager giving a `_Tx` inside one write transaction: committed at the end, rolled back on
        any exception."""

    # --- schema ---------------------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._reader() as r:
            return self._version(r)

    def _version(self, r: _Tx) -> int:
        if r.one(self.dialect.table_exists, ("schema_migrations",)) is None:
            return 0
        return int(r.one("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations")["v"])

    def migrate(self, upto: int | None = None) -> int:
        """Apply the migrations this database lacks (up to `upto`, for tests of upgrades), each in its own
        transaction, serialised with any other process migrating the same database."""
        latest = MIGRATIONS[-1][0]
        with self._tx() as c:
            c.lock(LOCK_SCHEMA, "schema")
            c.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        current = self.schema_version()
        if current > latest:
            raise SchemaTooNew(f"il database è di un Arbitro più recente (schema {current}, questo arriva a {latest}): "
                               "aggiorna Arbitro")
        for version, steps in MIGRATIONS:
            if version <= current or (upto is not None and version > upto):
                continue
            with self._tx() as c:
                c.lock(LOCK_SCHEMA, "schema")
                if self._version(c) >= version:  # another process applied it meanwhile
                    continue
                for statement in self.dialect.statements(steps):
                    c.execute(statement)
                c.execute("INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)", (version, utcnow()))
        return self.schema_version()

    # --- threads --------------------------------------------------------------------------------

    def get_or_create_thread(self, url: str, ruleset: str, *, settings: dict[str, Any] | None = None,
                             registry: dict[str, Any] | None = None) -> ThreadRecord:
        with self._tx() as c:
            c.execute(
                "INSERT INTO threads(url, ruleset, settings, registry, created_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(url, ruleset) DO NOTHING",
                (url, ruleset, dumps(settings or {}), dumps(registry) if registry is not None else None, utcnow()),
            )
            row = c.one("SELECT * FROM threads WHERE url=? AND ruleset=?", (url, ruleset))
        return _thread(row)

    def update_thread_options(self, thread_id: int, *, settings: dict[str, Any],
                              registry: dict[str, Any] | None) -> ThreadRecord:
        with self._tx() as c:
            # new options invalidate the stored content hash, so the next refresh replays
            c.execute("UPDATE threads SET settings=?, registry=?, content_hash=NULL WHERE id=?",
                      (dumps(settings), dumps(registry) if registry is not None else None, thread_id))
        return self.get_thread(thread_id)

    def find_thread(self, url: str, ruleset: str | None = None) -> ThreadRecord | None:
        with self._reader() as r:
            if ruleset is None:
                # the most recently refreshed audit of that URL, whatever its ruleset (never-checked rows last)
                row = r.one("SELECT * FROM threads WHERE url=? ORDER BY audit_id IS NULL, checked_ts DESC __NULLS_LAST__ "
                            "LIMIT 1", (url,))
            else:
                row = r.one("SELECT * FROM threads WHERE url=? AND ruleset=?", (url, ruleset))
        return _thread(row) if row else None

    def get_thread(self, thread_id: int) -> ThreadRecord:
        if not valid_id(thread_id):
            raise ThreadNotFound(thread_id)
        with self._reader() as r:
            row = r.one("SELECT * FROM threads WHERE id=?", (thread_id,))
        if row is None:
            raise ThreadNotFound(thread_id)
        return _thread(row)

    # --- refresh outcomes (each one transaction; a job's completion is part of it) ----------------

    def save_refresh(self, thread_id: int, *, history: dict[str, Any], content_hash: str, audit: dict[str, Any],
                     replayed: int, pages: list[PageRecord], log: list[FetchLogEntry], fight: bool | None = None,
                     job: JobClaim | None = None, job_outcome: dict[str, Any] | None = None,
                     evidence: Sequence[dict[str, Any]] = ()) -> ThreadRecord:
        now, ts = utcnow(), time.time()
        thread = history.get("thread") or {}
        with self._tx() as c:
            if job is not None:  # first: a lost lease stores nothing
                self._complete_job(c, job, outcome=job_outcome)
            hid = c.insert(
                "INSERT INTO histories(thread_id, format, content_hash, body, created_at) VALUES (?, ?, ?, ?, ?)",
                (thread_id, history.get("format", ""), content_hash, dumps(history), now))
            aid = c.insert(
                "INSERT INTO audits(thread_id, history_id, format, ruleset, replayed, body, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (thread_id, hid, audit.get("format", ""), audit.get("ruleset", ""), replayed, dumps(audit), now))
            c.execute(
                "UPDATE threads SET platform=?, host=?, title=?, fetched_at=?, checked_at=?, checked_ts=?, "
                "content_hash=?, last_error=NULL, history_id=?, audit_id=?, fight=? WHERE id=?",
                (thread.get("platform"), thread.get("host"), thread.get("title"), now, now, ts, content_hash, hid, aid,
                 None if fight is None else int(fight), thread_id))
            self._write_pages(c, thread_id, pages)
            self._write_log(c, thread_id, log)
            if evidence:
                c.executemany("INSERT INTO evidence(thread_id, post_id, code, verdict, detected_at) "
                              "VALUES (?, ?, ?, ?, ?)",
                              [(thread_id, str(v.get("post")), str(v.get("code")), dumps(v), now) for v in evidence])
            self._prune(c, thread_id)
        return self.get_thread(thread_id)

    def save_unchanged(self, thread_id: int, *, pages: list[PageRecord], log: list[FetchLogEntry],
                       job: JobClaim | None = None, job_outcome: dict[str, Any] | None = None) -> ThreadRecord:
        with self._tx() as c:
            if job is not None:
                self._complete_job(c, job, outcome=job_outcome)
            c.execute("UPDATE threads SET checked_at=?, checked_ts=?, last_error=NULL WHERE id=?",
                      (utcnow(), time.time(), thread_id))
            self._write_pages(c, thread_id, pages)
            self._write_log(c, thread_id, log)
        return self.get_thread(thread_id)

    def save_failure(self, thread_id: int, *, error: dict[str, Any], log: list[FetchLogEntry],
                     job: JobClaim | None = None) -> ThreadRecord:
        # the previous good history and audit stay current: only the error and the log change
        err = dict(error, at=utcnow())
        with self._tx() as c:
            if job is not None:
                self._complete_job(c, job, error=err)
            c.execute("UPDATE threads SET last_error=? WHERE id=?", (dumps(err), thread_id))
            self._write_log(c, thread_id, log)
        return self.get_thread(thread_id)

    @staticmethod
    def _write_pages(c: _Tx, thread_id: int, pages: list[PageRecord]) -> None:
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
    def _write_log(c: _Tx, thread_id: int, log: Iterable[FetchLogEntry]) -> None:
        c.executemany(
            "INSERT INTO fetch_log(thread_id, at, url, status, not_modified, from_cache, bytes, error) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(thread_id, e.at, e.url, e.status, int(e.not_modified), int(e.from_cache), e.bytes, e.error) for e in log])

    @staticmethod
    def _prune(c: _Tx, thread_id: int) -> None:
        for table in ("audits", "histories"):
            c.execute(
                f"DELETE FROM {table} WHERE thread_id=? AND id NOT IN "
                f"(SELECT id FROM {table} WHERE thread_id=? ORDER BY id DESC LIMIT ?)",
                (thread_id, thread_id, KEEP_VERSIONS))
        c.execute("DELETE FROM evidence WHERE thread_id=? AND id NOT IN "
                  "(SELECT id FROM evidence WHERE thread_id=? ORDER BY id DESC LIMIT ?)",
                  (thread_id, thread_id, KEEP_EVIDENCE))

    # --- reads ----------------------------------------------------------------------------------

    def audit(self, thread_id: int) -> StoredAudit | None:
        if not valid_id(thread_id):
            return None
        with self._reader() as r:
            row = r.one(
                "SELECT a.id, a.thread_id, a.ruleset, a.body, a.replayed, a.created_at FROM threads t "
                "JOIN audits a ON a.id = t.audit_id WHERE t.id=?", (thread_id,))
        if row is None:
            return None
        return StoredAudit(id=row["id"], thread_id=row["thread_id"], ruleset=row["ruleset"], raw=row["body"],
                           replayed=row["replayed"], created_at=row["created_at"])

    def history(self, thread_id: int) -> dict[str, Any] | None:
        if not valid_id(thread_id):
            return None
        with self._reader() as r:
            row = r.one("SELECT h.body FROM threads t JOIN histories h ON h.id = t.history_id WHERE t.id=?",
                        (thread_id,))
        return json.loads(row["body"]) if row else None

    def evidence(self, thread_id: int) -> list[dict[str, Any]]:
        if not valid_id(thread_id):
            return []
        with self._reader() as r:
            rows = r.all("SELECT verdict FROM evidence WHERE thread_id=? ORDER BY id", (thread_id,))
        return [json.loads(row["verdict"]) for row in rows]

    def pages(self, thread_id: int) -> list[PageRecord]:
        if not valid_id(thread_id):
            return []
        with self._reader() as r:
            rows = r.all("SELECT * FROM pages WHERE thread_id=? ORDER BY page, url", (thread_id,))
        return [PageRecord(url=r["url"], page=r["page"], status=r["status"], etag=r["etag"],
                           last_modified=r["last_modified"], content_hash=r["content_hash"],
                           not_modified=bool(r["not_modified"]), fetched_at=r["fetched_at"]) for r in rows]

    def fetch_log(self, thread_id: int, limit: int = 100) -> list[FetchLogEntry]:
        if not valid_id(thread_id):
            return []
        with self._reader() as r:
            rows = r.all("SELECT * FROM fetch_log WHERE thread_id=? ORDER BY id DESC LIMIT ?", (thread_id, limit))
        return [FetchLogEntry(url=r["url"], status=r["status"], not_modified=bool(r["not_modified"]),
                              from_cache=bool(r["from_cache"]), bytes=r["bytes"], error=r["error"], at=r["at"])
                for r in reversed(rows)]

    def count(self, table: str) -> int:
        """Rows in one of our tables (diagnostics and tests)."""
        if table not in _TABLES:
            raise StorageError(f"tabella sconosciuta: {table}")
        with self._reader() as r:
            return int(r.one(f"SELECT COUNT(*) AS n FROM {table}")["n"])

    # --- refresh jobs -----------------------------------------------------------------------------

    def job(self, thread_id: int) -> JobRecord | None:
        with self._reader() as r:
            row = r.one(f"SELECT {_JOB_COLUMNS} FROM refresh_jobs WHERE thread_id=?", (thread_id,))
        return _job(row) if row else None

    def request_job(self, thread_id: int, *, fresh: Callable[[ThreadRecord], bool] | None = None
                    ) -> tuple[JobRecord, str]:
        """Ask for a refresh of a thread: ("queued", job) when this call queued it, ("joined", job) when one is
        already queued or running (wait for the next generation), ("fresh", job) when `fresh(thread)` says the
        stored thread needs none — judged under the job's row lock, so a refresh finishing meanwhile is seen."""
        with self._tx() as c:
            c.execute("INSERT INTO refresh_jobs(thread_id, state) VALUES (?, 'idle') ON CONFLICT(thread_id) DO NOTHING",
                      (thread_id,))
            row = c.one(f"SELECT {_JOB_COLUMNS} FROM refresh_jobs WHERE thread_id=? __FOR_UPDATE__", (thread_id,))
            if row["state"] in ("queued", "running"):
                return _job(row), "joined"
            if fresh is not None:
                trow = c.one("SELECT * FROM threads WHERE id=?", (thread_id,))
                if trow is not None and fresh(_thread(trow)):
                    return _job(row), "fresh"
            c.execute("UPDATE refresh_jobs SET state='queued', requested_at=__NOW__, attempts=0, owner=NULL, "
                      "lease_until=NULL WHERE thread_id=?", (thread_id,))
            c.notify(f"new:{thread_id}")
            row = c.one(f"SELECT {_JOB_COLUMNS} FROM refresh_jobs WHERE thread_id=?", (thread_id,))
        return _job(row), "queued"

    def claim_job(self, owner: str, lease: float, *, thread_id: int | None = None) -> JobClaim | None:
        """Take the oldest queued job, or a running one whose lease has passed (its worker died), for `lease`
        seconds: no other worker gets it until then. A job claimed MAX_JOB_ATTEMPTS times without finishing is
        failed instead of run again."""
        only = " AND thread_id=?" if thread_id is not None else ""
        while True:
            with self._tx() as c:
                row = c.one(
                    "SELECT thread_id, attempts FROM refresh_jobs WHERE state IN ('queued', 'running') "
                    f"AND (state='queued' OR lease_until < __NOW__){only} ORDER BY requested_at LIMIT 1 __SKIP_LOCKED__",
                    (thread_id,) if thread_id is not None else ())
                if row is None:
                    return None
                tid, attempts = int(row["thread_id"]), int(row["attempts"])
                if attempts >= MAX_JOB_ATTEMPTS:
                    err = {"code": "scrape_crashed", "status": 500, "details": {"attempts": attempts},
                           "message": "lettura del forum interrotta più volte (il processo che la eseguiva si è "
                                      "fermato): riprova più tardi", "at": utcnow()}
                    c.execute("UPDATE refresh_jobs SET state='failed', owner=NULL, lease_until=NULL, "
                              "generation=generation+1, finished_at=__NOW__, error=? WHERE thread_id=?",
                              (dumps(err), tid))
                    c.execute("UPDATE threads SET last_error=? WHERE id=?", (dumps(err), tid))
                    c.notify(f"done:{tid}")
                    continue
                c.execute("UPDATE refresh_jobs SET state='running', owner=?, lease_until=__NOW__ + ?, "
                          "started_at=__NOW__, attempts=attempts+1 WHERE thread_id=?", (owner, float(lease), tid))
                return JobClaim(tid, owner, attempts + 1)

    def renew_job(self, claim: JobClaim, lease: float) -> bool:
        """Extend a running job's lease; False when it is no longer this worker's."""
        with self._tx() as c:
            cur = c.execute("UPDATE refresh_jobs SET lease_until=__NOW__ + ? WHERE thread_id=? AND owner=? "
                            "AND state='running'", (float(lease), claim.thread_id, claim.owner))
            return cur.rowcount == 1

    def finish_job(self, claim: JobClaim, *, error: dict[str, Any] | None = None,
                   outcome: dict[str, Any] | None = None) -> bool:
        """Finish a job without storing anything else (the refresh crashed before it could); False when the lease
        had passed to another worker."""
        try:
            with self._tx() as c:
                self._complete_job(c, claim, error=error, outcome=outcome)
        except LeaseLost:
            return False
        return True

    @staticmethod
    def _complete_job(c: _Tx, claim: JobClaim, *, error: dict[str, Any] | None = None,
                      outcome: dict[str, Any] | None = None) -> None:
        cur = c.execute(
            "UPDATE refresh_jobs SET state=?, owner=NULL, lease_until=NULL, generation=generation+1, "
            "finished_at=__NOW__, error=?, outcome=? WHERE thread_id=? AND owner=? AND state='running'",
            ("failed" if error is not None else "done", dumps(error) if error is not None else None,
             dumps(outcome) if outcome is not None else None, claim.thread_id, claim.owner))
        if cur.rowcount != 1:
            raise LeaseLost(f"refresh job of thread {claim.thread_id} is no longer {claim.owner}'s")
        c.notify(f"done:{claim.thread_id}")

    # --- what processes share about the forums: robots.txt, the conditional-GET cache ------------

    def robots_load(self, origin: str) -> tuple[str | None, str | None, float] | None:
        """(body, refusal, seconds left) of an origin's unexpired robots.txt record."""
        with self._reader() as r:
            row = r.one("SELECT body, refusal, expires_at - __NOW__ AS ttl FROM robots_cache WHERE origin=?",
                        (origin,))
        if row is None or row["ttl"] is None or row["ttl"] <= 0:
            return None
        return row["body"], row["refusal"], float(row["ttl"])

    def robots_store(self, origin: str, body: str | None, refusal: str | None, max_age: float) -> None:
        with self._tx() as c:
            c.execute("INSERT INTO robots_cache(origin, body, refusal, expires_at) VALUES (?, ?, ?, __NOW__ + ?) "
                      "ON CONFLICT(origin) DO UPDATE SET body=excluded.body, refusal=excluded.refusal, "
                      "expires_at=excluded.expires_at", (origin, body, refusal, float(max_age)))

    def cache_load(self, url: str) -> dict[str, Any] | None:
        with self._reader() as r:
            row = r.one("SELECT url, final_url, status, headers, encoding, sha256, body, stored_at FROM fetch_cache "
                        "WHERE url=?", (url,))
        return dict(row) if row is not None else None

    def cache_store(self, *, url: str, final_url: str, status: int, headers: dict[str, str], encoding: str,
                    sha256: str, body: bytes, stored_at: str) -> None:
        with self._tx() as c:
            c.execute("INSERT INTO fetch_cache(url, final_url, status, headers, encoding, sha256, body, stored_at) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(url) DO UPDATE SET final_url=excluded.final_url, "
                      "status=excluded.status, headers=excluded.headers, encoding=excluded.encoding, "
                      "sha256=excluded.sha256, body=excluded.body, stored_at=excluded.stored_at",
                      (url, final_url, status, dumps(headers), encoding, sha256, body, stored_at))
            c.execute("DELETE FROM fetch_cache WHERE stored_at < (SELECT stored_at FROM fetch_cache "
                      "ORDER BY stored_at DESC LIMIT 1 OFFSET ?)", (KEEP_FETCH_CACHE - 1,))

    # --- audit creations per client ---------------------------------------------------------------

    def rate_hit(self, client: str, limit: int, window: float) -> float | None:
        """Count one audit creation of `client` unless it already made `limit` in the last `window` seconds: None
        when counted, else the seconds until the oldest of them leaves the window."""
        with self._tx() as c:
            c.lock(LOCK_RATE, client)  # one client's hits are counted one at a time, across processes
            c.execute("DELETE FROM rate_hits WHERE client=? AND at <= __NOW__ - ?", (client, float(window)))
            row = c.one("SELECT COUNT(*) AS n, MIN(at) + ? - __NOW__ AS wait FROM rate_hits WHERE client=?",
                        (float(window), client))
            if int(row["n"]) >= limit:
                return max(0.0, float(row["wait"] or 0.0))
            c.execute("INSERT INTO rate_hits(client, at) VALUES (?, __NOW__)", (client,))
        return None

    def rate_forget(self, window: float) -> None:
        """Drop every hit older than the window (idle clients), so the table stays bounded."""
        with self._tx() as c:
            c.execute("DELETE FROM rate_hits WHERE at <= __NOW__ - ?", (float(window),))

    # --- the layers a shared database gives the service (PostgreSQL overrides) --------------------

    def fetch_layers(self) -> dict[str, Any]:
        """`scraper.fetch.Fetcher` layers (gate, cache, robots) shared through this database; {}: the fetcher's
        own, in this process."""
        return {}

    def job_signals(self) -> Any:
        """Wake-ups for refresh jobs (this process only, unless the database can notify)."""
        from .jobs import LocalSignals

        return LocalSignals()


_TABLES = frozenset({"threads", "pages", "histories", "audits", "fetch_log", "refresh_jobs", "host_gates",
                     "robots_cache", "fetch_cache", "rate_hits", "schema_migrations"})


class SQLiteStorage(SQLStorage):
    """One SQLite file in WAL mode; one connection per thread; every write one IMMEDIATE transaction."""

    dialect = Dialect()

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
    def _reader(self) -> Iterator[_Tx]:
        yield _Tx(self._conn(), self.dialect)

    @contextmanager
    def _tx(self) -> Iterator[_Tx]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield _Tx(conn, self.dialect)
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


def _thread(row: Any) -> ThreadRecord:
    fight = row["fight"] if "fight" in row.keys() else None
    return ThreadRecord(
        id=row["id"], url=row["url"], ruleset=row["ruleset"], platform=row["platform"], host=row["host"],
        title=row["title"], settings=json.loads(row["settings"] or "{}"),
        registry=json.loads(row["registry"]) if row["registry"] else None, created_at=row["created_at"],
        fetched_at=row["fetched_at"], checked_at=row["checked_at"], checked_ts=row["checked_ts"],
        content_hash=row["content_hash"], last_error=json.loads(row["last_error"]) if row["last_error"] else None,
        history_id=row["history_id"], audit_id=row["audit_id"], fight=None if fight is None else bool(fight),
    )


def _job(row: Any) -> JobRecord:
    return JobRecord(
        thread_id=int(row["thread_id"]), state=row["state"], generation=int(row["generation"]),
        attempts=int(row["attempts"]), owner=row["owner"],
        lease_left=None if row["lease_left"] is None else float(row["lease_left"]),
        age=None if row["age"] is None else float(row["age"]),
        error=json.loads(row["error"]) if row["error"] else None,
        outcome=json.loads(row["outcome"]) if row["outcome"] else None,
    )


