"""Security and limits: forum URL checks, CORS for forum origins, per-client rate limit, response headers."""
from __future__ import annotations

import fnmatch
import functools
import threading
import time
from collections import deque
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit, urlunsplit

from flask import Flask, Request, Response, request

from scraper.errors import HostNotAllowed
from scraper.netguard import AllowlistError, NetPolicy, host_matches

from .errors import BadRequest, Forbidden, RateLimited, Unprocessable


def net_policy(cfg: dict[str, Any]) -> NetPolicy:
    """The service config's fetch policy (`allowed_hosts`, `private_allowlist`), the same object the fetcher
    applies."""
    return _net_policy(tuple(cfg.get("allowed_hosts", ())), tuple(cfg.get("private_allowlist", ())))


@functools.lru_cache(maxsize=8)
def _net_policy(hosts: tuple[str, ...], private: tuple[str, ...]) -> NetPolicy:
    return NetPolicy(hosts, private)


def check_forum_url(url: Any, cfg: dict[str, Any]) -> str:
    """A thread URL the service may fetch, normalised (no fragment, lower-case host); else a named error.

    The early, cheap refusal by the fetcher's own rules (scraper.netguard: host, port, an IP literal's address),
    without resolving; the fetcher then checks every resolved address and every redirect."""
    if not isinstance(url, str) or not url.strip():
        raise BadRequest("manca l'indirizzo della discussione", code="bad_url", details={"field": "url"})
    url = url.strip()
    if len(url) > 2048:
        raise BadRequest("indirizzo troppo lungo", code="bad_url", details={"field": "url", "max": 2048})
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:  # "http://[::1/": an unclosed IPv6 bracket
        raise BadRequest("l'indirizzo deve essere un URL http(s) di una discussione", code="bad_url",
                         details={"field": "url", "found": url[:200]}) from None
    if parts.scheme not in ("http", "https") or not hostname:
        raise BadRequest("l'indirizzo deve essere un URL http(s) di una discussione", code="bad_url",
                         details={"field": "url", "found": url[:200]})
    host = hostname.lower()
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise BadRequest("porta non valida nell'indirizzo", code="bad_url", details={"field": "url"}) from None
    try:
        net_policy(cfg).check_host(host.rstrip("."), port)
    except HostNotAllowed as exc:
        raise Forbidden(exc.message, code="host_not_allowed",
                        details={"host": host, "port": port, "reason": getattr(exc, "reason", "host")}) from None
    if not looks_like_thread(host, parts.path or "/", parts.query):
        raise Unprocessable("l'indirizzo non è quello di una discussione", code="not_a_thread",
                            details={"field": "url", "found": url[:200]})
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    return canonical_thread_url(urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")))


_FORUMFREE_HOSTS = (".forumfree.it", ".forumcommunity.net", ".blogfree.net")
_FORUMOTION_HOSTS = (".forumattivo.com", ".forumattivo.it", ".forumotion.com", ".forumotion.net", ".forumactif.com",
                     ".forumactif.org", ".forumactif.fr", ".forumgratuit.org", ".forumfree.org")


def looks_like_thread(host: str, path: str, query: str) -> bool:
    """Cheap shape check before anything is stored or fetched: a topic URL of the platforms we know
    (`?t=<id>` on ForumFree, `/t<id>-…` on Forumotion, `viewtopic.php?t=|p=` on phpBB); other hosts pass
    (a forum config or the generic reader decides after the fetch)."""
    import re
    from urllib.parse import parse_qs

    q = parse_qs(query)
    digits = lambda key: any(v.isdigit() for v in q.get(key, ()))  # noqa: E731
    if path.endswith("viewtopic.php"):
        return digits("t") or digits("p")
    if host.endswith(_FORUMFREE_HOSTS):
        return digits("t")
    if host.endswith(_FORUMOTION_HOSTS):
        return re.match(r"^/t\d+(p\d+)?(-|$)", path) is not None
    return True


def canonical_thread_url(url: str) -> str:
    """One URL per thread whatever page the reader is on: drop page offsets (`st`, `start`, Forumotion `p<n>`)."""
    import re
    from urllib.parse import parse_qsl, urlencode

    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k not in ("st", "start", "view", "sid")]
    if parts.path.endswith("viewtopic.php") and any(k == "t" for k, _ in query):
        query = [(k, v) for k, v in query if k == "t"]  # phpBB: f=, p=, hilit= don't name another thread
    path = re.sub(r"^/t(\d+)p\d+-", r"/t\1-", parts.path)  # Forumotion /t12p30-slug → /t12-slug
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(query), ""))


class RateLimiter:
    """Sliding-window limit per client key (e.g. 20 audit creations a minute)."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str) -> None:
        now = self.clock()
        with self._lock:
            q = self._hits.setdefault(key, deque())
            while q and q[0] <= now - self.window:
                q.popleft()
            if len(q) >= self.limit:
                retry = max(1, int(q[0] + self.window - now + 0.999))
                raise RateLimited(details={"limit": self.limit, "window_seconds": self.window, "retry_after": retry},
                                  headers={"Retry-After": str(retry)})
            q.append(now)
            if len(self._hits) > 10_000:  # forget idle clients so the table stays bounded
                for k in [k for k, v in self._hits.items() if not v or v[-1] <= now - self.window]:
                    del self._hits[k]


def client_key(req: Request, trust_proxy: bool) -> str:
    if trust_proxy:
        fwd = req.headers.get("X-Forwarded-For", "")
        if fwd:
            return fwd.split(",")[0].strip()
    return req.remote_addr or "?"


def origin_allowed(origin: str, patterns: Iterable[str]) -> bool:
    """`https://*.forumfree.it` allows `https://x.forumfree.it`; scheme must match."""
    parts = urlsplit(origin)
    if not parts.scheme or not parts.hostname:
        return False
    for pat in patterns:
        p = urlsplit(pat)
        if p.scheme != parts.scheme:
            continue
        if p.port != parts.port:
            continue
        if host_matches(parts.hostname, [p.hostname or ""]) or fnmatch.fnmatchcase(parts.hostname, p.hostname or ""):
            return True
    return False


PAGE_CSP = ("default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")


def install(app: Flask) -> None:
    cfg = app.config["ARBITRO"]
    try:
        net_policy(cfg)  # an unreadable allowlist entry is a configuration error at start-up, not a 500 later
    except AllowlistError as exc:
        from .config import ConfigError
        raise ConfigError(f"allowed_hosts/private_allowlist: {exc}") from None
    patterns = list(cfg["cors_origins"])

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        if request.path.startswith("/api/"):
            origin = request.headers.get("Origin")
            if origin and origin_allowed(origin, patterns):
                resp.headers["Access-Control-Allow-Origin"] = origin
                resp.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
                resp.headers["Access-Control-Allow-Headers"] = "Content-Type"
                resp.headers["Access-Control-Max-Age"] = "600"
            resp.headers.add("Vary", "Origin")
            resp.headers.setdefault("Cache-Control", "no-cache")
        elif resp.mimetype == "text/html":
            # report pages run no script at all; the demo page sets its own policy
            resp.headers.setdefault("Content-Security-Policy", PAGE_CSP)
            resp.headers.setdefault("X-Frame-Options", "DENY")
        return resp
