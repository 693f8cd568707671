"""The fetcher's politeness layers, pluggable: who may ask a host what and when (`HostGate`), what robots.txt
said (`RobotsStore`) and the conditional-GET cache (`FetchCache`).

`Fetcher` mounts the in-process defaults (`LocalHostGate`, its own robots dictionary, `DiskCache`); a service
with several processes mounts implementations shared through its database instead (`server/pg.py`), so the
per-host interval, concurrency 1, robots.txt and the validators hold across all of them. This module imports
nothing from the service: the layers are protocols, the scraper only calls them.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable


@dataclass(frozen=True)
class CacheEntry:
    """One page in the conditional-GET cache (`FetchCache`): its validators are in `headers`."""

    url: str
    final_url: str
    status: int
    headers: dict[str, str]
    content: bytes
    sha256: str
    encoding: str
    stored_at: str

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")


@runtime_checkable
class HostGate(Protocol):
    """One request at a time per host, and the interval between the starts of two requests to it."""

    def acquire(self, host: str, interval: float) -> None:
        """Wait until `host` may be asked again — `interval` seconds after the start of its previous request, and
        not before a time a release asked for — then hold the host's single slot and record this request's start.
        `host` is the URL's lower-case `host[:port]`."""

    def release(self, host: str, hold_off: float = 0.0) -> None:
        """Free the host's slot. `hold_off` > 0: the host asked not to be asked again for that many seconds (its
        Retry-After), which a shared gate tells every process."""


class LocalHostGate:
    """The in-process gate: a lock per host held for the whole request, and the start of the host's last request.

    `sleep` and `clock` are the fetch policy's (tests record the waits on a clock only sleeping moves). A
    Retry-After is waited by the thread that received it (the fetcher's `scraper.retry.PoliteRetry`), so
    `hold_off` adds nothing here: the other threads of this process may still use the host meanwhile, as they always could."""

    def __init__(self, sleep: Callable[[float], None], clock: Callable[[], float]) -> None:
        self._sleep = sleep
        self._clock = clock
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._last_start: dict[str, float] = {}

    def acquire(self, host: str, interval: float) -> None:
        with self._guard:
            lock = self._locks.setdefault(host, threading.Lock())
        lock.acquire()
        try:
            last = self._last_start.get(host)
            if last is not None:
                wait = last + interval - self._clock()
                if wait > 0:
                    self._sleep(wait)
            self._last_start[host] = self._clock()
        except BaseException:
            lock.release()
            raise

    def release(self, host: str, hold_off: float = 0.0) -> None:
        with self._guard:
            lock = self._locks[host]
        lock.release()


@dataclass(frozen=True)
class RobotsRecord:
    """What one origin's robots.txt said, as the fetcher keeps it: its text (None: no rules, everything allowed)
    or a refusal (401/403, or a robots.txt that redirects to an address we may not ask)."""

    text: str | None
    refusal: str | None = None


@runtime_checkable
class RobotsStore(Protocol):
    """robots.txt shared beyond this process (the fetcher keeps its own parsed copy in front of it)."""

    def load(self, origin: str) -> tuple[RobotsRecord, float] | None:
        """The record of `origin` (`scheme://host[:port]`) and how many seconds it stays valid; None when there is
        none or it expired."""

    def store(self, origin: str, record: RobotsRecord, max_age: float) -> None:
        """Keep `record` for `max_age` seconds."""


@runtime_checkable
class FetchCache(Protocol):
    """The conditional-GET cache: a 200's body and validators under its URL (`scraper.fetch.DiskCache` on disk).
    A body that does not match its SHA-256 must be a miss, never wrong content."""

    def load(self, url: str) -> CacheEntry | None: ...

    def store(self, entry: CacheEntry) -> None: ...


__all__ = ["CacheEntry", "HostGate", "LocalHostGate", "RobotsRecord", "RobotsStore", "FetchCache"]
