"""robots.txt for the fetcher (RFC 9309, read by protego): one read per origin, kept, and what it allows."""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Callable, Mapping, Protocol
from urllib.parse import urljoin, urlsplit

from protego import Protego

from .charset import decode_text
from .errors import BlockedByRobots, FetchFailed, HostNotAllowed
from .politeness import RobotsRecord, RobotsStore

if TYPE_CHECKING:  # pragma: no cover
    from .policy import FetchPolicy

ROBOTS_MAX_BYTES = 500 * 1024  # RFC 9309 §2.5: parse at least 500 KiB, ignore the rest


class Answer(Protocol):
    """What `fetch` returns for one request (no redirect followed)."""

    status: int
    headers: Mapping[str, str]
    content: bytes

    @property
    def location(self) -> str | None: ...


class RobotsPolicy:
    """What each origin's robots.txt allows our agent, read once per origin and kept `policy.robots_max_age`.

    `fetch(url, limit)` asks for one URL (its body cut at `limit` bytes) through the fetcher's layers: the same host
    gate, retries and checks as a page. `store` (optional) shares the records beyond this process; this object keeps
    its own parsed copy in front of it."""

    def __init__(self, policy: FetchPolicy, store: RobotsStore | None,
                 fetch: Callable[[str, int], Answer]) -> None:
        self.policy = policy
        self.store = store
        self._fetch = fetch
        self._rules: dict[str, tuple[float, Protego | None, str | None]] = {}  # origin → (until, rules, refusal)
        self._lock = threading.Lock()

    def check(self, url: str) -> None:
        """BlockedByRobots unless robots.txt lets us fetch `url`. An unreachable robots.txt raises the fetch failure
        itself (the forum is down, it did not refuse us) and nothing is kept, so the next check asks again."""
        origin = _origin(url)
        _, rules, refusal = self._entry(origin)
        if refusal:
            raise BlockedByRobots(refusal)
        if rules is not None and not rules.can_fetch(url, self._agent()):
            raise BlockedByRobots(f"robots.txt di {origin} vieta la lettura di {url}")

    def crawl_delay(self, url: str) -> float:
        """The Crawl-delay robots.txt sets for us on `url`'s origin, up to `policy.max_crawl_delay`; 0 when none or
        not read."""
        entry = self._rules.get(_origin(url))
        delay = entry[1].crawl_delay(self._agent()) if entry is not None and entry[1] is not None else None
        return min(float(delay), self.policy.max_crawl_delay) if delay else 0.0

    def _agent(self) -> str:
        return self.policy.user_agent.split("/")[0]

    def _entry(self, origin: str) -> tuple[float, Protego | None, str | None]:
        with self._lock:  # one robots.txt request per origin, even with several threads
            entry = self._rules.get(origin)
            if entry is None or time.monotonic() > entry[0]:
                shared = self.store.load(origin) if self.store is not None else None
                if shared is not None:  # another process read it: not asked again
                    record, ttl = shared
                    rules = Protego.parse(record.text) if record.text is not None else None
                    entry = (time.monotonic() + min(ttl, self.policy.robots_max_age), rules, record.refusal)
                else:
                    text, refusal = self._load(origin)
                    rules = Protego.parse(text) if text is not None else None
                    if self.store is not None:
                        self.store.store(origin, RobotsRecord(text, refusal), self.policy.robots_max_age)
                    entry = (time.monotonic() + self.policy.robots_max_age, rules, refusal)
                self._rules[origin] = entry
        return entry

    def _load(self, origin: str) -> tuple[str | None, str | None]:
        """(robots.txt text or None for allow-all, refusal message or None) per RFC 9309 §2.3.1.

        Unreachable (network error, 5xx after retries) means complete disallow (§2.3.1.4): we read nothing and
        raise the fetch failure itself, so the caller reports a forum that is down, not a robots.txt refusal."""
        url = origin + "/robots.txt"
        try:
            for _ in range(self.policy.max_redirects + 1):
                answer = self._fetch(url, ROBOTS_MAX_BYTES)
                if answer.location is None:
                    break
                url = urljoin(url, answer.location)
            else:
                return None, None  # §2.3.1.2: after 5 redirects, as if there were no robots.txt
        except HostNotAllowed as exc:
            return None, f"robots.txt di {origin} rimanda a un indirizzo non ammesso ({exc.message}): lettura sospesa"
        if 200 <= answer.status < 300:
            return decode_text(answer.content, "utf-8"), None
        if answer.status in (401, 403):
            # RFC 9309 lets a crawler treat every 4xx as "no robots.txt"; a forum that refuses even its
            # robots.txt to us is read as refusing everything (the older, stricter convention).
            return None, f"robots.txt di {origin} negato ({answer.status}): lettura non consentita"
        if 400 <= answer.status < 500:
            return None, None  # §2.3.1.3: unavailable, any path may be fetched
        raise FetchFailed(f"il forum non risponde: robots.txt di {origin} in errore (stato {answer.status})",
                          status=answer.status, url=url)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.lower()}"


__all__ = ["ROBOTS_MAX_BYTES", "RobotsPolicy"]
