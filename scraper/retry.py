"""Retries by urllib3's Retry, under the fetch policy: 429/5xx and failures before the body, backoff or Retry-After."""
from __future__ import annotations

import email.utils
import re
import time
from datetime import timezone
from typing import TYPE_CHECKING, Any, Callable

from urllib3.util.retry import Retry

from .errors import FetchFailed

if TYPE_CHECKING:  # pragma: no cover
    from .policy import FetchPolicy

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_DIGITS = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() also takes "¹" and "٣"


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Retry-After in seconds (RFC 9110 §10.2.3: delay-seconds or an HTTP date); None when absent or invalid."""
    if not value:
        return None
    value = value.strip()
    if _DIGITS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class PoliteRetry(Retry):
    """urllib3's Retry as the fetch policy wants it. Every wait between two attempts goes through `pause(wait,
    hold_off)`, which frees the host's slot in the gate (telling it the host's Retry-After), sleeps the policy's
    sleep and takes the slot again: each attempt is gated like the first. A Retry-After over `max_retry_after` gives
    up at once (FetchFailed) instead of asking early; waits are `backoff`, doubling, up to `backoff_max`."""

    # only the statuses we retry honour a Retry-After (urllib3 would also retry a 413 carrying one)
    RETRY_AFTER_STATUS_CODES = RETRY_STATUSES

    def __init__(self, *args: Any, pause: Callable[[float, float], None], max_retry_after: float, url: str,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pause = pause
        self.max_retry_after = max_retry_after
        self.url = url  # the whole URL, for the failure (urllib3 passes the path only)

    @classmethod
    def for_policy(cls, policy: FetchPolicy, url: str, pause: Callable[[float, float], None]) -> PoliteRetry:
        """The Retry of one request under `policy` as it is now (a test may change its fields)."""
        return cls(total=policy.retries, connect=None, read=None, status=None, other=None,
                   allowed_methods=frozenset({"GET"}), status_forcelist=RETRY_STATUSES,
                   backoff_factor=policy.backoff, backoff_max=policy.max_backoff,
                   raise_on_status=False, respect_retry_after_header=True,
                   pause=pause, max_retry_after=policy.max_retry_after, url=url)

    def new(self, **kw: Any) -> PoliteRetry:
        return super().new(**{"pause": self.pause, "max_retry_after": self.max_retry_after, "url": self.url, **kw})

    def get_retry_after(self, response: Any) -> float | None:
        # ours: an HTTP date without zone is UTC, an unreadable value is none (urllib3 would raise), no silent cap
        return parse_retry_after(response.headers.get("Retry-After"))

    def hold_off(self, response: Any) -> float:
        """The pause a 429/5xx asked for (its Retry-After, within the bound), for the host gate; else 0."""
        if response.status not in RETRY_STATUSES:
            return 0.0
        asked = self.get_retry_after(response)
        return asked if asked is not None and asked <= self.max_retry_after else 0.0

    def get_backoff_time(self) -> float:
        # the first retry waits `backoff` too (urllib3's first one does not wait), then it doubles
        if not self.history:
            return 0.0
        return min(self.backoff_factor * 2 ** (len(self.history) - 1), self.backoff_max)

    def sleep(self, response: Any = None) -> None:
        asked = self.get_retry_after(response) if response is not None else None
        self.pause(self.get_backoff_time() if asked is None else asked,
                   self.hold_off(response) if response is not None else 0.0)

    def increment(self, method: str | None = None, url: str | None = None, response: Any = None,
                  error: Exception | None = None, _pool: Any = None, _stacktrace: Any = None) -> PoliteRetry:
        if response is not None:
            asked = self.get_retry_after(response)
            if asked is not None and asked > self.max_retry_after:
                _drop(response)
                # waiting less than asked would be impolite, waiting longer is not ours to do
                raise FetchFailed(f"il server ha risposto {response.status} e chiede di riprovare fra "
                                  f"{asked:.0f} s (oltre il limite di {self.max_retry_after:.0f} s)",
                                  status=response.status, url=self.url)
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        if response is not None:
            _drop(response)  # urllib3 would read the whole error body to reuse the connection: the cap forbids it
        return retry


def _drop(response: Any) -> None:
    """Close an answer that will not be read, and give its connection back to the pool (to be opened anew)."""
    response.close()
    response.release_conn()


__all__ = ["RETRY_STATUSES", "PoliteRetry", "parse_retry_after"]
