"""Thread refreshes: fetch → history → incremental replay → store, one refresher per thread, readers never blocked.

One process (SQLite): the per-thread locks, the pool and the failure backoff live here. Several processes on one
PostgreSQL (`storage.shared`): a refresh is a job in the database (server/jobs.py) that one worker of any process
crawls, every caller of any process waits for it and reads its outcome from the database."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from .errors import BadRequest, ServiceError, Unprocessable, from_scrape_error
from .storage import FetchLogEntry, JobClaim, LeaseLost, PageRecord, Storage, ThreadRecord, utcnow

log = logging.getLogger("arbitro.refresh")


def history_hash(history: dict[str, Any]) -> str:
    """Content hash of a history, ignoring when it was fetched (so an unchanged thread hashes the same)."""
    doc = dict(history)
    doc["thread"] = {k: v for k, v in (history.get("thread") or {}).items() if k != "fetched_at"}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def build_fetch_policy(cfg: dict[str, Any]) -> Any:
    """A scraper FetchPolicy from the service config (only the fields this scraper version has)."""
    from scraper.policy import FetchPolicy

    wanted = {
        "allowed_hosts": tuple(cfg["allowed_hosts"]),
        "private_allowlist": tuple(cfg["private_allowlist"]),
        "connect_timeout": cfg["fetch_connect_timeout"],
        "read_timeout": cfg["fetch_read_timeout"],
        "max_bytes": cfg["fetch_max_bytes"],
        "retries": cfg["fetch_retries"],
        "backoff": cfg["fetch_backoff"],
        "min_interval": cfg["fetch_min_interval"],
        "cache_dir": cfg["cache_dir"] or None,
        "obey_robots": cfg["obey_robots"],
    }
    names = {f.name for f in dataclasses.fields(FetchPolicy)}
    return FetchPolicy(**{k: v for k, v in wanted.items() if k in names})


class RecordingFetcher:
    """Wraps the scraper's Fetcher: every page fetched during one refresh is recorded (validators, hash, 304s)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.pages: list[PageRecord] = []
        self.log: list[FetchLogEntry] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get(self, url: str, *args: Any, **kwargs: Any) -> Any:
        try:
            res = self._inner.get(url, *args, **kwargs)
        except Exception as exc:
            self.log.append(FetchLogEntry(url=url, status=getattr(exc, "status", None),
                                          error=getattr(exc, "code", type(exc).__name__)))
            raise
        content = getattr(res, "content", b"") or b""
        headers = getattr(res, "headers", {}) or {}
        status = getattr(res, "status", None)
        not_modified = bool(getattr(res, "not_modified", False))
        from_cache = bool(getattr(res, "from_cache", False))
        self.log.append(FetchLogEntry(url=url, status=status, not_modified=not_modified, from_cache=from_cache,
                                      bytes=0 if (not_modified or from_cache) else len(content)))
        self.pages.append(PageRecord(
            url=url, page=len(self.pages) + 1, status=status,
            etag=_header(headers, "ETag"), last_modified=_header(headers, "Last-Modified"),
            content_hash=hashlib.sha256(content).hexdigest() if content else None,
            not_modified=not_modified, fetched_at=utcnow()))
        return res


def _header(headers: Any, name: str) -> str | None:
    try:
        return headers.get(name) or headers.get(name.lower())
    except AttributeError:
        return None


@dataclass(frozen=True)
class RefreshOutcome:
    thread: ThreadRecord
    changed: bool  # a new history/audit was stored
    replayed: int  # posts stepped by the engine in this refresh
    fetched: int  # page requests answered with content
    not_modified: int  # page requests answered 304 / from cache
    shared: bool = False  # another refresher did the work while we waited


def registry_from_request(value: Any) -> Any:
    """A registry given in a request: a JSON object (registry fields) or a TOML text (the registry file)."""
    from engine.history import HistoryFormatError, registry_from_dict

    if value is None:
        return None
    if isinstance(value, dict):
        try:
            return registry_from_dict(value)
        except HistoryFormatError as exc:
            raise BadRequest(f"registro non valido: {exc}", code="bad_registry", details={"field": "registry"}) from None
    if isinstance(value, str):
        from scraper.errors import ScrapeError
        from scraper.registry_file import parse_registry

        try:
            return parse_registry(value)  # text only: a client never makes the service open a file
        except ScrapeError as exc:
            raise BadRequest(f"registro non valido: {exc}", code="bad_registry",
                             details={"field": "registry", "line": getattr(exc, "line", None)}) from None
    raise BadRequest("il registro deve essere un oggetto JSON o un testo TOML", code="bad_registry",
                     details={"field": "registry"})


def run_replay(history: Any, ruleset: str, registry: Any, settings: dict[str, Any] | None, previous: Any = None,
               evidence: Any = ()) -> Any:
    """engine.replay with its errors turned into named service errors."""
    import engine

    try:
        return engine.replay(history, ruleset, registry, settings=settings or None, previous=previous,
                             evidence=evidence)
    except engine.UnknownRuleset as exc:
        raise BadRequest(f"ruleset sconosciuto: {exc.ruleset_id}", code="unknown_ruleset",
                         details={"field": "ruleset", "known": exc.known}) from None
    except engine.BadSetting as exc:
        raise BadRequest(f"impostazione non valida: {exc}", code="bad_setting", details={"field": "settings"}) from None
    except engine.HistoryFormatError as exc:
        raise BadRequest(f"cronologia non valida: {exc}", code="bad_history", details={"field": "history"}) from None
    except engine.EngineError as exc:
        raise Unprocessable(f"il motore non ha potuto rigiocare il combattimento: {exc}", code="engine_error") from None


def _stored_error(err: ServiceError) -> dict[str, Any]:
    # the status goes with the stored error: a 422 is a negative result readers are answered from the store
    return dict(err.to_dict()["error"], status=err.status)


def is_fight(audit: dict[str, Any]) -> bool:
    """Whether an audit document has a fight in it: characters, or a post with verdicts or state (the same test
    the userscript makes before drawing anything)."""
    if audit.get("characters"):
        return True
    return any(isinstance(p, dict) and (p.get("verdicts") or p.get("state")) for p in audit.get("posts") or ())


class Refresher:
    """Refreshes stored threads. At most one refresh per thread runs at a time; concurrent callers share it."""

    def __init__(self, storage: Storage, cfg: dict[str, Any], *, fetcher_factory: Callable[[], Any] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.storage = storage
        self.cfg = cfg
        self.clock = clock
        self._fetcher_factory = fetcher_factory
        self._fetcher: Any = None
        self._guard = threading.Lock()
        self._locks: dict[int, threading.Lock] = {}
        self._generation: dict[int, int] = {}
        self._pending: set[int] = set()
        self._running: set[int] = set()
        # the last failed refresh per thread (when, error): shared with callers that waited on it, and
        # repeated for `failure_backoff` seconds so a forum that is down is not asked again by every reader
        self._failures: dict[int, tuple[float, ServiceError]] = {}
        self._audits: OrderedDict[int, Any] = OrderedDict()  # engine Audits with snapshots, for incremental replay
        self._audit_ids: dict[int, int | None] = {}  # thread id → the stored audit its engine Audit is
        self._pool = ThreadPoolExecutor(max_workers=max(1, int(cfg["refresh_workers"])), thread_name_prefix="refresh")
        from .config import load_forum_configs

        self.forums = load_forum_configs(cfg.get("forum_config"))  # None: no forum config
        self._sections: OrderedDict[str, str | None] = OrderedDict()  # thread URL → section id seen on its page 1
        self._not_fight: dict[int, int] = {}  # thread id → id of its stored audit that has no fight in it
        # several processes on one database: refreshes are jobs there, crawled by this process's workers or another's
        self.jobs: Any = None
        if storage.shared:
            from .jobs import JobRunner

            self.jobs = JobRunner(storage, cfg, self._run_job)

    # --- which ruleset a thread is audited with, when the client does not say -------------------

    def section_of(self, url: str, *, probe: bool) -> str | None:
        """The section id of a thread: from its URL (`f=`), else from its first page (fetched once when
        `probe`, through the shared polite fetcher, then remembered)."""
        from .config import section_from_url

        section = section_from_url(url)
        if section is not None:
            return section
        with self._guard:
            if url in self._sections:
                return self._sections[url]
        if not probe:
            return None
        from scraper.errors import ScrapeError
        from scraper.parse import parse_page

        try:
            res = self.fetcher().get(url)
            section = parse_page(res.content, res.final_url, config=self.forums).section
        except ScrapeError as exc:
            raise from_scrape_error(exc) from None
        with self._guard:
            self._sections[url] = section
            while len(self._sections) > 4096:
                self._sections.popitem(last=False)
        return section

    def ruleset_for_url(self, url: str, *, probe: bool) -> str | None:
        """The forum config's ruleset for a thread URL (its host, and its section when the forum config maps
        sections and the section is known), or None when the forum config says nothing about it."""
        from .config import forum_has_sections, forum_ruleset, host_of, section_from_url

        if self.forums is None:
            return None
        host = host_of(url)
        section = None
        if forum_has_sections(self.forums, host):
            with self._guard:
                unknown = section_from_url(url) is None and url not in self._sections
            if unknown and not probe:
                return None  # the section decides, and nobody has looked at the page yet
            section = self.section_of(url, probe=probe)
        return forum_ruleset(self.forums, host, section)

    # --- the fetcher (one, shared: it holds the per-host politeness state and the cache) --

    def fetcher(self) -> Any:
        with self._guard:
            if self._fetcher is None:
                if self._fetcher_factory is not None:
                    self._fetcher = self._fetcher_factory()
                else:
                    from scraper.fetch import Fetcher

                    # a shared database mounts its host gate, robots.txt and conditional-GET cache: the forums'
                    # politeness holds across every process of the service
                    layers = getattr(self.storage, "fetch_layers", dict)()
                    self._fetcher = Fetcher(build_fetch_policy(self.cfg), **layers)
            return self._fetcher

    # --- state -----------------------------------------------------------------------------

    def is_stale(self, rec: ThreadRecord) -> bool:
        # a stored audit with no fight in it is asked again only after `negative_ttl`
        no_fight = rec.audit_id is not None and (rec.fight is False or self._not_fight.get(rec.id) == rec.audit_id)
        after = float(self.cfg["negative_ttl"] if no_fight else self.cfg["refresh_after"])
        return rec.checked_ts is None or self.clock() - rec.checked_ts >= after

    def negative(self, rec: ThreadRecord) -> dict[str, Any] | None:
        """The stored "not a thread / not readable" error (422) of a thread that has no audit, while it is younger
        than `negative_ttl`: such a URL is answered from the store, not crawled again."""
        err = rec.last_error
        if rec.audit_id is not None or not err or err.get("status") != 422:
            return None
        at = err.get("at")
        try:
            from datetime import datetime

            age = self.clock() - datetime.fromisoformat(str(at).replace("Z", "+00:00")).timestamp()
        except (TypeError, ValueError):
            return None
        return err if age < float(self.cfg["negative_ttl"]) else None

    def refresh_and_wait(self, thread_id: int, timeout: float) -> RefreshOutcome | None:
        """Start a refresh and wait for it at most `timeout` seconds: its outcome, or None when it is still running
        (it goes on in the background; `is_refreshing` says so). A failure raises its ServiceError."""
        from concurrent.futures import TimeoutError as FutureTimeout

        if self.jobs is not None:
            return self._refresh_shared(thread_id, timeout=timeout)
        with self._guard:
            self._pending.add(thread_id)
        future = self._pool.submit(self.refresh, thread_id, _from_queue=True)
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # a late failure is stored, not raised
        try:
            return future.result(timeout=max(0.0, timeout))
        except FutureTimeout:
            return None

    def _backing_off(self, thread_id: int) -> bool:
        failure = self._failures.get(thread_id)
        return failure is not None and self.clock() - failure[0] < float(self.cfg["failure_backoff"])

    def is_refreshing(self, thread_id: int) -> bool:
        if self.jobs is not None:
            return self.jobs.is_open(thread_id)
        with self._guard:
            return thread_id in self._pending or thread_id in self._running

    def _lock(self, thread_id: int) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(thread_id, threading.Lock())

    def cached_audit(self, thread_id: int) -> Any:
        with self._guard:
            audit = self._audits.get(thread_id)
            if audit is not None:
                self._audits.move_to_end(thread_id)
            return audit

    def remember(self, thread_id: int, audit: Any, audit_id: int | None = None) -> None:
        """Keep an engine Audit (with its per-post states) for incremental replays and hints; `audit_id`: the stored
        audit it is (several processes: another one may store a newer audit meanwhile)."""
        with self._guard:
            self._audits[thread_id] = audit
            self._audits.move_to_end(thread_id)
            self._audit_ids[thread_id] = audit_id
            while len(self._audits) > int(self.cfg["replay_cache"]):
                gone, _ = self._audits.popitem(last=False)
                self._audit_ids.pop(gone, None)

    # --- refreshing ----------------------------------------------------------------------

    def refresh_in_background(self, thread_id: int) -> bool:
        """Queue a refresh unless one is queued or running. Returns whether this call queued it."""
        if self.jobs is not None:
            if self._shared_failure(thread_id) is not None:
                return False
            return self.jobs.request(thread_id, fresh=self._fresh)[1] == "queued"
        with self._guard:
            if thread_id in self._pending or thread_id in self._running or self._backing_off(thread_id):
                return False
            self._pending.add(thread_id)
        self._pool.submit(self._background, thread_id)
        return True

    def _background(self, thread_id: int) -> None:
        try:
            self.refresh(thread_id, _from_queue=True)
        except ServiceError as exc:
            log.info("background refresh of thread %s failed: %s", thread_id, exc.code)
        except Exception:  # never let a worker die silently
            log.exception("background refresh of thread %s crashed", thread_id)

    def refresh(self, thread_id: int, *, force: bool = False, _from_queue: bool = False) -> RefreshOutcome:
        """Fetch the thread again and store a new audit if it changed. If a refresh of this thread is already
        running, wait for it and return its result instead of fetching twice."""
        if self.jobs is not None:
            outcome = self._refresh_shared(thread_id, timeout=None, force=force)
            assert outcome is not None  # no timeout: the job's outcome
            return outcome
        lock = self._lock(thread_id)
        with self._guard:
            seen = self._generation.get(thread_id, 0)
        with lock:
            with self._guard:
                if _from_queue:
                    self._pending.discard(thread_id)
                done_meanwhile = self._generation.get(thread_id, 0) != seen
                self._running.add(thread_id)
            try:
                failure = self._failures.get(thread_id)
                if failure is not None and not force and (done_meanwhile or self._backing_off(thread_id)):
                    # the refresh we waited for (or one a moment ago) failed: so does ours, without asking
                    # the forum again
                    err = failure[1]
                    raise type(err)(err.message, code=err.code, details=dict(err.details), headers=dict(err.headers))
                if done_meanwhile and not force:
                    return RefreshOutcome(self.storage.get_thread(thread_id), False, 0, 0, 0, shared=True)
                try:
                    outcome = self._refresh_locked(thread_id)
                except ServiceError as err:
                    self._failures[thread_id] = (self.clock(), err)
                    raise
                self._failures.pop(thread_id, None)
                return outcome
            finally:
                with self._guard:
                    self._running.discard(thread_id)
                    self._generation[thread_id] = self._generation.get(thread_id, 0) + 1

    # --- refreshes as database jobs (several processes) ---------------------------------------

    def _fresh(self, rec: ThreadRecord) -> bool:
        """A stored thread that needs no refresh now (someone refreshed it since the caller looked)."""
        return rec.audit_id is not None and rec.content_hash is not None and not self.is_stale(rec)

    def _shared_failure(self, thread_id: int) -> ServiceError | None:
        """The error of the thread's last job when it failed less than `failure_backoff` seconds ago."""
        from .jobs import stored_error

        job = self.storage.job(thread_id)  # type: ignore[attr-defined]
        if job is None or job.open or job.error is None or job.age is None:
            return None
        return stored_error(job.error) if job.age < float(self.cfg["failure_backoff"]) else None

    def _refresh_shared(self, thread_id: int, *, timeout: float | None, force: bool = False) -> RefreshOutcome | None:
        """Queue or join the thread's job and wait for it (at most `timeout` seconds: None when it is still
        running). Its failure raises its stored error, here as on the process that crawled."""
        from .jobs import stored_error

        if not force:
            failed = self._shared_failure(thread_id)
            if failed is not None:
                raise failed
        job, status = self.jobs.request(thread_id, fresh=None if force else self._fresh)
        if status == "fresh":
            return RefreshOutcome(self.storage.get_thread(thread_id), False, 0, 0, 0, shared=True)
        done = self.jobs.wait(thread_id, job.generation, timeout)
        if done is None:
            return None
        if done.error is not None:
            raise stored_error(done.error)
        counts = done.outcome or {}
        return RefreshOutcome(self.storage.get_thread(thread_id), bool(counts.get("changed")),
                              int(counts.get("replayed", 0)), int(counts.get("fetched", 0)),
                              int(counts.get("not_modified", 0)), shared=status == "joined")

    def _run_job(self, claim: JobClaim) -> None:
        """A worker's crawl of a claimed job; the job finishes in the transaction that stores the outcome."""
        thread_id = claim.thread_id
        with self._guard:
            self._running.add(thread_id)
        try:
            self._refresh_locked(thread_id, job=claim)
        except LeaseLost:
            log.warning("refresh of thread %s: its lease passed to another worker, result dropped", thread_id)
        except ServiceError as exc:  # stored with the job by _refresh_locked
            log.info("refresh of thread %s failed: %s", thread_id, exc.code)
            self.storage.finish_job(claim, error=_stored_error(exc))  # type: ignore[attr-defined]  # no-op when stored
        except Exception:
            log.exception("refresh of thread %s crashed", thread_id)
            err = ServiceError("lettura del forum non riuscita per un errore interno", code="scrape_crashed")
            self.storage.finish_job(claim, error=_stored_error(err))  # type: ignore[attr-defined]
        finally:
            with self._guard:
                self._running.discard(thread_id)

    # --- one refresh ---------------------------------------------------------------------------

    def _refresh_locked(self, thread_id: int, job: JobClaim | None = None) -> RefreshOutcome:
        from engine.core import attach_evidence
        from scraper.crawl import crawl_thread
        from scraper.errors import ScrapeError

        rec = self.storage.get_thread(thread_id)
        rec_fetcher = RecordingFetcher(self.fetcher())
        previous_hashes = {p.url: p.content_hash for p in self.storage.pages(thread_id) if p.content_hash}
        try:
            result = crawl_thread(rec.url, fetcher=rec_fetcher, follow_sheets=bool(self.cfg["follow_sheets"]),
                                   previous=previous_hashes or None, config=self.forums)
        except ScrapeError as exc:
            err = from_scrape_error(exc)
            self._save_failure(thread_id, err, rec_fetcher.log, job)
            raise err from None
        except Exception:
            # a scraper bug on some page: recorded like any failure, the previous audit stays
            log.exception("crawl of thread %s crashed", thread_id)
            err = ServiceError("lettura del forum non riuscita per un errore interno", code="scrape_crashed")
            self._save_failure(thread_id, err, rec_fetcher.log, job)
            raise err from None
        history_obj = result.history
        validators = {p.url: p for p in rec_fetcher.pages}
        pages = []
        for p in result.pages:
            seen = validators.get(p.url) or validators.get(p.final_url)
            pages.append(PageRecord(url=p.final_url, page=p.index, status=p.status,
                                    etag=seen.etag if seen else None,
                                    last_modified=seen.last_modified if seen else None,
                                    content_hash=p.sha256, not_modified=p.not_modified, fetched_at=utcnow()))
        fetched = sum(1 for p in result.pages if not p.not_modified)
        not_modified = len(result.pages) - fetched
        history = history_obj.to_dict()
        digest = history_hash(history) + ":" + hashlib.sha256(
            json.dumps([rec.settings, rec.registry], sort_keys=True).encode()).hexdigest()[:16]
        # a job (several processes) is finished by the same transaction that stores its outcome, with its counts
        if digest == rec.content_hash and rec.audit_id is not None:
            # nothing changed: the stored audit stands
            counts = {"changed": False, "replayed": 0, "fetched": fetched, "not_modified": not_modified}
            new = self.storage.save_unchanged(thread_id, pages=pages, log=rec_fetcher.log, job=job,
                                              job_outcome=counts)
            return RefreshOutcome(new, False, 0, fetched, not_modified)
        try:
            registry = registry_from_request(rec.registry)
            audit = run_replay(history_obj, rec.ruleset, registry, rec.settings, previous=self.cached_audit(thread_id),
                               evidence=self.stored_evidence(thread_id))
            found = self._compare_readings(thread_id, history_obj, audit)
            audit = attach_evidence(audit, found)
        except ServiceError as err:
            self._save_failure(thread_id, err, rec_fetcher.log, job)
            raise
        except Exception:
            log.exception("replay of thread %s crashed", thread_id)
            err = ServiceError("il motore non ha potuto rigiocare il combattimento", code="engine_crashed")
            self._save_failure(thread_id, err, rec_fetcher.log, job)
            raise err from None
        audit_doc = audit.to_dict()
        fight = is_fight(audit_doc)
        counts = {"changed": True, "replayed": audit.replayed, "fetched": fetched, "not_modified": not_modified}
        new = self.storage.save_refresh(thread_id, history=history, content_hash=digest, audit=audit_doc,
                                        replayed=audit.replayed, pages=pages, log=rec_fetcher.log, fight=fight,
                                        job=job, job_outcome=counts, evidence=[v.to_dict() for v in found])
        self.remember(thread_id, audit, new.audit_id)
        if fight:
            self._not_fight.pop(thread_id, None)
        else:
            self._not_fight[thread_id] = new.audit_id
        return RefreshOutcome(new, True, audit.replayed, fetched, not_modified)

    def stored_evidence(self, thread_id: int) -> list[Any]:
        """The thread's tamper evidence found by earlier refreshes, as engine verdicts."""
        from engine.verdicts import Verdict

        return [Verdict.from_dict(v) for v in self.storage.evidence(thread_id)]

    def _compare_readings(self, thread_id: int, now: Any, audit: Any) -> list[Any]:
        """What this reading shows against the previous stored one: rolls or schema changed, posts gone
        (engine.evidence). Nothing when there is no earlier reading or it cannot be read."""
        from engine import evidence as EV
        from engine.history import CombatHistory, HistoryFormatError

        earlier = self.storage.history(thread_id)
        if earlier is None:
            return []
        try:
            before = CombatHistory.from_dict(earlier)
        except HistoryFormatError:
            return []
        before_at, after_at = before.thread.fetched_at, now.thread.fetched_at
        current = {p.id: p for p in now.posts}
        found, gone = [], []
        for old in before.posts:
            new = current.get(old.id)
            if new is None:
                gone.append(old)
            elif not (old.digest and old.digest == new.digest):  # same source markup: same rolls and schema
                found += EV.changed_after_publication(old, before_at, new, after_at)
        read = now.thread.pages_read
        if gone and (not read or max(read) >= now.thread.pages):  # only a reading to the thread's end says "gone"
            stored = self.storage.audit(thread_id)
            moved = EV.moved_verdicts(json.loads(stored.raw).get("posts") or [], audit.to_dict()["posts"],
                                      {p.id for p in gone}) if stored else []
            found += [EV.deleted(old, before_at, after_at, moved) for old in gone]
        return found

    def _save_failure(self, thread_id: int, err: ServiceError, log_entries: list[FetchLogEntry],
                      job: JobClaim | None) -> None:
        self.storage.save_failure(thread_id, error=_stored_error(err), log=log_entries, job=job)

    def engine_audit(self, thread_id: int) -> Any:
        """The engine Audit (with its states) of a stored thread: from memory, else replayed from the stored history.
        Several processes: from memory only while it is still the stored audit (another process may have refreshed
        the thread since)."""
        audit = self.cached_audit(thread_id)
        rec = None
        if audit is not None and self.jobs is not None:
            rec = self.storage.get_thread(thread_id)
            with self._guard:
                if self._audit_ids.get(thread_id) != rec.audit_id:
                    audit = None
        if audit is not None:
            return audit
        rec = rec or self.storage.get_thread(thread_id)
        history = self.storage.history(thread_id)
        if history is None:
            return None
        audit = run_replay(history, rec.ruleset, registry_from_request(rec.registry), rec.settings,
                           evidence=self.stored_evidence(thread_id))
        self.remember(thread_id, audit, rec.audit_id)
        return audit

    def close(self) -> None:
        if self.jobs is not None:
            self.jobs.close()
        self._pool.shutdown(wait=True, cancel_futures=True)
