"""What the fetcher may do and how politely (`FetchPolicy`): hosts, private addresses, timeouts, retries, rates."""
from __future__ import annotations

import pathlib
import socket
import time
from dataclasses import dataclass, field, replace
from typing import Callable

# The forum hosts a default policy lets through; phpBB boards live anywhere, so they are added per use.
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = (
    "forumfree.it", "*.forumfree.it", "forumcommunity.net", "*.forumcommunity.net",
    "*.forumattivo.com", "*.forumattivo.it", "*.forumotion.com", "*.forumotion.net",
)


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version("arbitro")
    except (ImportError, PackageNotFoundError):
        return "0"


def _project_url() -> str | None:
    try:
        from importlib.metadata import metadata
        md = metadata("arbitro")
    except Exception:  # metadata missing in an uninstalled checkout: UA without a URL
        return None
    for entry in md.get_all("Project-URL") or ():
        return entry.split(",", 1)[-1].strip()
    return md.get("Home-page") or None


def default_user_agent() -> str:
    """`Arbitro/<version> (+<project url>)`; the URL comes from the package metadata when it has one."""
    url = _project_url()
    return f"Arbitro/{_version()} (+{url})" if url else f"Arbitro/{_version()} (combat referee for play-by-forum GdR)"


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


@dataclass
class FetchPolicy:
    """What the fetcher may do and how politely. Defaults suit a live forum; tests shorten the waits."""

    # "host" or "*.domain" (any subdomain, not the domain itself), ports 80/443 unless named: "forum.lan:8080"
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    # the only private addresses reachable: "127.0.0.1:8123", "10.1.0.0/16:8080", "[::1]:8123" (docs/fetching.md)
    private_allowlist: tuple[str, ...] = ()
    connect_timeout: float = 5.0
    read_timeout: float = 20.0  # between two reads
    total_timeout: float = 60.0  # for a whole response body, so a trickling server cannot hold us forever
    max_bytes: int = 5 * 1024 * 1024
    retries: int = 3  # extra attempts after the first, on 429/5xx/connection errors/timeouts
    backoff: float = 1.0  # first wait; doubles each retry
    max_backoff: float = 30.0
    max_retry_after: float = 30.0  # a longer Retry-After makes us give up instead of waiting
    min_interval: float = 1.0  # seconds between the starts of two requests to one host
    max_crawl_delay: float = 30.0  # robots.txt Crawl-delay is honoured up to this
    max_redirects: int = 5
    user_agent: str = field(default_factory=default_user_agent)
    accept_language: str = "it-IT,it;q=0.9,en;q=0.5"  # forums render dates in the reader's language
    cache_dir: pathlib.Path | str | None = ".arbitro-cache"  # None: no cache, no conditional requests
    obey_robots: bool = True
    robots_max_age: float = 24 * 3600  # RFC 9309 §2.4
    sleep: Callable[[float], None] = time.sleep  # tests record the waits instead of waiting
    clock: Callable[[], float] = time.monotonic  # the rate limit's clock (tests: one that only sleeping moves)
    resolver: Callable[[str, int], list[str]] = _resolve

    def with_hosts(self, *hosts: str) -> FetchPolicy:
        """A copy that also allows `hosts`."""
        return replace(self, allowed_hosts=tuple(self.allowed_hosts) + tuple(h.lower() for h in hosts))


__all__ = ["DEFAULT_ALLOWED_HOSTS", "FetchPolicy", "default_user_agent"]
