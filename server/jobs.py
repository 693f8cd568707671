"""Refresh jobs in the database, for a service of several processes on one PostgreSQL.

A thread's refresh is a row of `refresh_jobs` (server/storage.py). Any process queues it (`request`: joined when
one is already queued or running, skipped when the stored thread is fresh); `refresh_workers` threads in every
process claim queued jobs with `SELECT … FOR UPDATE SKIP LOCKED` and a lease they renew while they crawl
(`_Heartbeat`); the job is finished in the same transaction that stores its outcome, and only by the worker that
still holds it. A worker that dies stops renewing: when its lease has passed, a worker of any process takes the
job again (a job taken `MAX_JOB_ATTEMPTS` times fails). Callers wait for the job's generation to pass the one
they saw and read the outcome from the database, so two readers on two processes cause one crawl and get its
audit. LISTEN/NOTIFY (server/pg.py `PgSignals`) wakes workers and waiters; they also poll every `job_poll`.
"""
from __future__ import annotations

import itertools
import logging
from collections import OrderedDict
import os
import secrets
import socket
import threading
import time
from typing import Any, Callable

from .errors import ServiceError

log = logging.getLogger("arbitro.jobs")

# `is_open` answers from memory for this long (and until any job changes, as NOTIFY tells): every page view asks
# whether its thread is being refreshed, and the answer only annotates it (`refreshing`): the jobs themselves are
# always queued and joined in the database
OPEN_TTL = 0.25


class LocalSignals:
    """Wake-ups of this process's refresh workers and waiters: a counter and a condition. `wait(seen, timeout)`
    returns at once when the counter moved since `seen`."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._seq = 0

    @property
    def seq(self) -> int:
        with self._cond:
            return self._seq

    def poke(self) -> None:
        with self._cond:
            self._seq += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> int:
        with self._cond:
            if self._seq == seen and timeout > 0:
                self._cond.wait(timeout)
            return self._seq

    def close(self) -> None:
        self.poke()


def stored_error(err: dict[str, Any]) -> ServiceError:
    """The ServiceError a failed job stored (code, message, details, status), raised again by whoever waited."""
    exc = ServiceError(err.get("message") or None, code=err.get("code") or "internal",
                       details=dict(err.get("details") or {}))
    try:
        exc.status = int(err.get("status") or 500)
    except (TypeError, ValueError):
        exc.status = 500
    return exc


class _Heartbeat:
    """Renews a running job's lease every third of it, until stopped or the lease is found lost."""

    def __init__(self, storage: Any, claim: Any, lease: float) -> None:
        self.storage = storage
        self.claim = claim
        self.lease = lease
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{claim.thread_id}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(max(0.1, self.lease / 3)):
            try:
                if not self.storage.renew_job(self.claim, self.lease):
                    self.lost = True
                    log.warning("refresh of thread %s: lease lost (another worker took the job)", self.claim.thread_id)
                    return
            except Exception as exc:  # the database is away for a moment: the lease may still be saved
                log.warning("refresh of thread %s: lease not renewed: %s", self.claim.thread_id, exc)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class JobRunner:
    """The refresh jobs of one process: its workers, and the waits of its callers."""

    def __init__(self, storage: Any, cfg: dict[str, Any], run: Callable[[Any], None]) -> None:
        self.storage = storage
        self.run = run  # the refresher's crawl of one claimed job
        self.lease = float(cfg["job_lease"])
        self.poll = max(0.05, float(cfg["job_poll"]))
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._claims = itertools.count(1)
        self.signals = storage.job_signals()
        self._open: OrderedDict[int, tuple[float, bool]] = OrderedDict()
        self._open_seq = -1
        self._open_lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._work, name=f"refresh-job-{i}", daemon=True)
                         for i in range(max(1, int(cfg["refresh_workers"])))]
        for t in self._threads:
            t.start()

    # --- callers ----------------------------------------------------------------------------

    def request(self, thread_id: int, *, fresh: Callable[[Any], bool] | None = None) -> tuple[Any, str]:
        """Queue (or join) the thread's refresh job: (job as seen, "queued" | "joined" | "fresh")."""
        job, status = self.storage.request_job(thread_id, fresh=fresh)
        if status == "queued":
            self.signals.poke()  # this process's workers at once; the others by NOTIFY
        return job, status

    def is_open(self, thread_id: int) -> bool:
        """Whether the thread's job is queued or running (read from the database, kept OPEN_TTL seconds)."""
        now, seq = time.monotonic(), self.signals.seq
        with self._open_lock:
            if seq != self._open_seq:  # a job changed somewhere: forget every answer
                self._open.clear()
                self._open_seq = seq
            hit = self._open.get(thread_id)
            if hit is not None and now - hit[0] < OPEN_TTL:
                return hit[1]
        job = self.storage.job(thread_id)
        value = job is not None and job.open
        with self._open_lock:
            if self._open_seq == seq:
                self._open[thread_id] = (now, value)
                while len(self._open) > 4096:
                    self._open.popitem(last=False)
        return value

    def wait(self, thread_id: int, seen: int, timeout: float | None) -> Any:
        """The job once its generation passed `seen` (None after `timeout` seconds)."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            seq = self.signals.seq
            job = self.storage.job(thread_id)
            if job is None or job.generation > seen:
                return job
            step = self.poll
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                step = min(step, left)
            self.signals.wait(seq, step)

    # --- workers ----------------------------------------------------------------------------

    def _work(self) -> None:
        while not self._stop.is_set():
            seq = self.signals.seq
            try:
                claim = self.storage.claim_job(f"{self.owner}/{next(self._claims)}", self.lease)
            except Exception as exc:
                log.warning("refresh jobs not readable: %s", exc)
                self._stop.wait(self.poll)
                continue
            if claim is None:
                self.signals.wait(seq, self.poll)
                continue
            beat = _Heartbeat(self.storage, claim, self.lease)
            try:
                self.run(claim)
            except Exception:  # never let a worker die
                log.exception("refresh job of thread %s crashed", claim.thread_id)
            finally:
                beat.stop()

    def close(self) -> None:
        """Stop the workers. A crawl still running is left to its lease: another process takes the job over."""
        self._stop.set()
        self.signals.poke()
        for t in self._threads:
            t.join(timeout=5)
