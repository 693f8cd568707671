"""The polite HTTP layer: `Fetcher.get` runs a URL through the policy's layers (docs/fetching.md, "Layers")."""
from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import os
import pathlib
import re
import socket
import tempfile
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Mapping
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
import urllib3
from requests.models import REDIRECT_STATI
from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import MaxRetryError

from .body import CHUNK, SizeCap
from .charset import decode_text, detect_encoding
from .errors import FetchFailed, FetchTimeout, HostNotAllowed, ScrapeError
from .netguard import NetPolicy, PinnedAdapter, Target, Unpinned, host_matches, parse_ip
from .netguard import refused as _refused
from .policy import DEFAULT_ALLOWED_HOSTS, FetchPolicy, default_user_agent
from .politeness import CacheEntry, FetchCache, HostGate, LocalHostGate, RobotsStore
from .retry import RETRY_STATUSES, PoliteRetry
from .robots import RobotsPolicy

@dataclass(frozen=True)
class FetchResult:
    """One fetched representation. A 304 revalidation returns the cached body with not_modified=True."""

    url: str
    final_url: str
    status: int  # status of the representation returned (200 for a revalidated cache entry)
    content: bytes
    headers: Mapping[str, str]
    from_cache: bool
    not_modified: bool
    encoding: str  # WHATWG name: "utf-8", "windows-1252", …
    redirects: tuple[str, ...] = ()
    fetched_at: str = ""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    @property
    def text(self) -> str:
        return decode_text(self.content, self.encoding)


# --- the conditional-GET cache --------------------------------------------------------------------------

_KEPT_HEADERS = ("content-type", "etag", "last-modified", "content-language")


class DiskCache:
    """One file per URL: a JSON header line (validators, content hash) then the body; written atomically."""

    def __init__(self, root: str | pathlib.Path) -> None:
        self.root = pathlib.Path(root)

    def path_for(self, url: str) -> pathlib.Path:
        key = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.root / key[:2] / f"{key}.entry"

    def load(self, url: str) -> CacheEntry | None:
        try:
            raw = self.path_for(url).read_bytes()
            head, _, body = raw.partition(b"\n")
            meta = json.loads(head)
        except (OSError, ValueError):
            return None
        # a torn or tampered entry is a miss, never wrong content
        if not isinstance(meta, dict) or meta.get("url") != url:
            return None
        if hashlib.sha256(body).hexdigest() != meta.get("sha256"):
            return None
        return CacheEntry(url=url, final_url=meta.get("final_url", url), status=int(meta.get("status", 200)),
                          headers=dict(meta.get("headers", {})), content=body, sha256=meta["sha256"],
                          encoding=meta.get("encoding", "utf-8"), stored_at=meta.get("stored_at", ""))

    def store(self, entry: CacheEntry) -> None:
        meta = {"url": entry.url, "final_url": entry.final_url, "status": entry.status, "headers": entry.headers,
                "sha256": entry.sha256, "encoding": entry.encoding, "stored_at": entry.stored_at}
        target = self.path_for(entry.url)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".entry")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(json.dumps(meta, ensure_ascii=True).encode("ascii") + b"\n" + entry.content)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            pass  # a cache that cannot be written only costs a full download next time


class ConditionalGet:
    """Conditional GET over a FetchCache (None: no cache, no conditional requests): the validators of the cached
    copy for the request, the copy for a 304 (with the validators the 304 refreshed), a 200 kept with its own."""

    def __init__(self, cache: FetchCache | None) -> None:
        self.cache = cache

    def ask(self, url: str) -> tuple[CacheEntry | None, dict[str, str]]:
        """The cached copy of `url` and its If-None-Match / If-Modified-Since; (None, {}) when there are none."""
        cached = self.cache.load(url) if self.cache is not None else None
        headers: dict[str, str] = {}
        if cached is not None:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        return (cached, headers) if headers else (None, {})

    def revalidated(self, cached: CacheEntry, headers: Mapping[str, str]) -> CacheEntry:
        """The copy a 304 confirmed, with the validators it sent; a changed set is stored."""
        fresh = {h: v for h in _KEPT_HEADERS if h != "content-type" and (v := headers.get(h))}
        entry = replace(cached, headers={**cached.headers, **fresh})
        if entry.headers != cached.headers and self.cache is not None:
            self.cache.store(entry)
        return entry

    def keep(self, url: str, headers: Mapping[str, str], content: bytes, encoding: str, stored_at: str) -> None:
        """Store a 200's body under `url` with the headers a later revalidation needs."""
        if self.cache is None:
            return
        kept = {h: headers[h] for h in _KEPT_HEADERS if headers.get(h)}
        self.cache.store(CacheEntry(url=url, final_url=url, status=200, headers=kept, content=content,
                                    sha256=hashlib.sha256(content).hexdigest(), encoding=encoding, stored_at=stored_at))


# --- the fetcher ------------------------------------------------------------------------------------

@dataclass
class _Raw:
    url: str
    status: int
    headers: CaseInsensitiveDict
    content: bytes

    @property
    def location(self) -> str | None:
        """Where a redirect points; None for any other answer."""
        return (self.headers.get("Location") or None) if self.status in REDIRECT_STATI else None


def _now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Fetcher:
    """Polite GETs under a FetchPolicy. Share one per process: the per-host gate and robots.txt live here.

    The layers are mounted here, never left to callers: `gate` (one request at a time per host, the interval;
    default `LocalHostGate`, this process only), `cache` (the conditional-GET store, read through `conditional`;
    default a `DiskCache` in `policy.cache_dir`), `robots` (a `RobotsPolicy` over the `robots` store given, which
    shares robots.txt beyond this process; default none: this fetcher's own copy), and on the session's adapter a
    `PoliteRetry` per request. A service with several processes passes gate, cache and robots store shared through
    its database.

    Every failure is a ScrapeError subclass: HostNotAllowed, BlockedByRobots, PageTooLarge, FetchTimeout,
    FetchFailed (with `.status`); no requests/urllib3 exception escapes."""

    def __init__(self, policy: FetchPolicy | None = None, session: requests.Session | None = None, *,
                 gate: HostGate | None = None, cache: FetchCache | None = None,
                 robots: RobotsStore | None = None) -> None:
        self.policy = policy or FetchPolicy()
        self.session = session or requests.Session()
        self.session.trust_env = False  # no environment proxies: the socket goes to the checked address itself
        adapter = PinnedAdapter(self._pin, self._watch_socket, self._retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers.update({
            "User-Agent": self.policy.user_agent,
            "Accept": "text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8",
            "Accept-Language": self.policy.accept_language,
            # only the codings SizeCap can tell complete from cut short
            "Accept-Encoding": "gzip, deflate",
        })
        self.net = NetPolicy(self.policy.allowed_hosts, self.policy.private_allowlist)  # AllowlistError on an unreadable entry
        # the policy's sleep and clock as they are when asked (a test may swap the policy's fields)
        self.gate: HostGate = gate if gate is not None else LocalHostGate(lambda s: self.policy.sleep(s),
                                                                           lambda: self.policy.clock())
        self.cache: FetchCache | None = cache if cache is not None else (
            DiskCache(self.policy.cache_dir) if self.policy.cache_dir else None)
        self.conditional = ConditionalGet(self.cache)
        self.robots = RobotsPolicy(self.policy, robots, lambda url, limit: self._attempt(url, {}, limit, True))
        self._local = threading.local()  # the thread's running _Exchange (requests runs in the caller's thread)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public ----------------------------------------------------------------------------------

    def get(self, url: str, *, conditional: bool = True) -> FetchResult:
        """GET `url` following redirects, each hop through the layers: the URL check, robots.txt, the cached copy's
        validators (when `conditional`), the request (host gate, retries, size cap), then a 304 answered from the
        cache or a 200 kept in it, and its charset."""
        url = _strip_fragment(url)
        current = url
        hops: list[str] = []
        for _ in range(self.policy.max_redirects + 1):
            target = self.check_url(current)  # every hop: resolved once, every address checked
            if self.policy.obey_robots:
                self.robots.check(current)
            cached, validators = self.conditional.ask(current) if conditional else (None, {})
            raw = self._attempt(current, validators, self.policy.max_bytes, False, target)
            if raw.location is not None:
                hops.append(current)
                current = _strip_fragment(urljoin(current, raw.location))
                continue
            if raw.status == 304:
                if cached is None:
                    raise FetchFailed(f"risposta 304 senza una copia in cache per {current}", status=304, url=url)
                entry = self.conditional.revalidated(cached, raw.headers)
                return FetchResult(url=url, final_url=current, status=entry.status, content=entry.content,
                                   headers=CaseInsensitiveDict(entry.headers), from_cache=True, not_modified=True,
                                   encoding=entry.encoding, redirects=tuple(hops), fetched_at=_now_iso())
            if 200 <= raw.status < 300:
                encoding = detect_encoding(raw.content, raw.headers.get("Content-Type"))
                fetched_at = _now_iso()
                if raw.status == 200:
                    self.conditional.keep(current, raw.headers, raw.content, encoding, fetched_at)
                return FetchResult(url=url, final_url=current, status=raw.status, content=raw.content,
                                   headers=raw.headers, from_cache=False, not_modified=False, encoding=encoding,
                                   redirects=tuple(hops), fetched_at=fetched_at)
            raise FetchFailed(f"il server ha risposto {raw.status} per {current}", status=raw.status, url=url)
        raise FetchFailed(f"troppi redirect (più di {self.policy.max_redirects}) a partire da {url}", url=url)

    def check_url(self, url: str) -> Target:
        """The checked target of `url` (host, port, the addresses the connection may use); HostNotAllowed unless
        `url` is http(s) on an allowed host and port whose every resolved address the policy admits."""
        host, port = self._host_port(url)
        literal = parse_ip(host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = self.policy.resolver(host, port)
            except (OSError, UnicodeError) as exc:
                raise FetchFailed(f"impossibile risolvere l'host {host}: {exc}", url=url) from None
        if not addresses:
            raise FetchFailed(f"impossibile risolvere l'host {host}", url=url)
        checked: list[str] = []
        for address in addresses:
            self.net.check_address(host, address if isinstance(address, str) else repr(address), port)
            ip = str(parse_ip(address))  # the IPv4 of an IPv4-mapped answer: the socket is an AF_INET one
            if ip not in checked:
                checked.append(ip)
        return Target(host, port, tuple(checked))

    def allowed(self, url: str) -> bool:
        try:
            self.check_url(url)
        except ScrapeError:
            return False
        return True

    # -- layers ----------------------------------------------------------------------------------

    def _host_port(self, url: str) -> tuple[str, int]:
        """(host, port) the transport will connect to, refused unless every parser reads the same one."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise HostNotAllowed(f"URL non valido: {url!r}") from None
        if parts.scheme not in ("http", "https"):
            raise HostNotAllowed(f"schema non consentito: {parts.scheme or '(nessuno)'}:// (solo http e https)")
        if parts.username is not None or parts.password is not None:
            raise HostNotAllowed("URL con credenziali non consentito")
        if not parts.hostname:
            raise HostNotAllowed(f"URL senza host: {url!r}")
        default = 443 if parts.scheme == "https" else 80
        # requests/urllib3 read the authority differently from urlsplit (a `\` ends it for them): the host
        # judged is the one the transport connects to, and a URL the parsers disagree on is refused
        target = _transport_target(url)
        if target is None:
            raise HostNotAllowed(f"URL non valido: {url!r}")
        host, tport = target
        if not _HOSTNAME.fullmatch(host) and not _is_ip_literal(host):
            raise HostNotAllowed(f"nome di host non valido: {host!r}")
        self.net.check_host(host, tport or default)  # name, then an IP literal's address, then the port
        if _normal_host(parts.hostname) != host or (port or default) != (tport or default):
            raise _refused(f"host non consentito: l'URL {url!r} non indica un host univoco", "host")
        return host, port or default

    # the adapter's view of this thread's running exchange (None outside one: nothing connects then)

    def _running(self) -> _Exchange | None:
        return getattr(self._local, "exchange", None)

    def _pin(self, host: str, port: int) -> Target | None:
        """The checked target of the running exchange, for the connection opened to (host, port)."""
        exchange = self._running()
        target = exchange.target if exchange is not None else None
        return target if target is not None and (target.host, target.port) == (host, port) else None

    def _watch_socket(self, sock: socket.socket) -> None:
        exchange = self._running()
        if exchange is not None:
            exchange.deadline.watch(sock)

    def _retry(self) -> PoliteRetry | None:
        """The running exchange's Retry, which the adapter hands urllib3 for its request."""
        exchange = self._running()
        return exchange.retry if exchange is not None else None

    def _attempt(self, url: str, headers: dict[str, str], max_bytes: int, truncate: bool = False,
                 target: Target | None = None) -> _Raw:
        """One request with its retries, every attempt under the host gate. urllib3 retries 429/5xx and whatever
        fails before the body, with the exchange's PoliteRetry (the adapter hands it over); a body that breaks while
        streaming comes after urllib3 handed the response over, so it is retried here, on the same Retry. A 429/5xx
        left after the retries fails; other statuses are returned. Every connection goes to `target`'s checked
        addresses (checked here when not given), never to a new resolution."""
        exchange = _Exchange(self, url, target or self.check_url(url))
        self._local.exchange = exchange
        hold_off = 0.0
        try:
            while True:
                response = self._send(exchange, headers)
                try:
                    raw = self._receive(exchange, response, max_bytes, truncate)
                except FetchFailed as failure:  # FetchTimeout included: a late or broken body, as a dropped connection
                    try:
                        exchange.retry = exchange.retry.increment("GET", url, error=failure)
                    except MaxRetryError:
                        raise failure from None
                    exchange.retry.sleep()
                    continue
                finally:
                    response.close()
                hold_off = exchange.retry.hold_off(raw)  # the host asked for a pause: a shared gate tells the others
                if raw.status in RETRY_STATUSES:
                    raise FetchFailed(f"il server ha risposto {raw.status} per {url} "
                                      f"(dopo {len(exchange.retry.history) + 1} tentativi)", status=raw.status, url=url)
                return raw
        finally:
            exchange.end(hold_off)
            self._local.exchange = None

    def _send(self, exchange: _Exchange, headers: dict[str, str]) -> requests.Response:
        """The request through the adapter, urllib3's attempts and waits included, up to the answer's headers."""
        policy = self.policy
        try:
            response = self.session.get(exchange.url, headers=headers, stream=True, allow_redirects=False,
                                        timeout=(policy.connect_timeout, policy.read_timeout))
        except (FetchFailed, Unpinned, requests.exceptions.RequestException, urllib3.exceptions.HTTPError,
                OSError) as exc:
            raise self._failure(exc, exchange) from None
        exchange.retry = response.raw.retries  # where urllib3's count got to
        return response

    def _receive(self, exchange: _Exchange, response: requests.Response, max_bytes: int, truncate: bool) -> _Raw:
        """The answer with its body under the size cap: none for redirects and 304, a little of an error page."""
        url, status = exchange.url, response.status_code
        if status in REDIRECT_STATI or status == 304:
            cap = None
        elif 200 <= status < 300:
            cap = SizeCap(max_bytes, truncate=truncate)
        else:
            cap = SizeCap(min(max_bytes, CHUNK), truncate=True, lenient=True)
        try:
            body = cap.read(response, url) if cap is not None else b""
        except (FetchFailed, requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._failure(exc, exchange) from None
        exchange.deadline.cancel()
        if exchange.deadline.expired:  # the shutdown may have ended a body without a length early
            raise self._total_timeout(url)
        return _Raw(url, status, response.headers, body)

    def _failure(self, exc: Exception, exchange: _Exchange) -> ScrapeError:
        """The ScrapeError of an attempt's failure: no requests/urllib3 exception escapes."""
        url, deadline = exchange.url, exchange.deadline
        if isinstance(exc, Unpinned):  # a connection for a host and port nobody checked: never opened
            return _refused(f"host non consentito: {exc.host} (non è tra gli host ammessi)", "host")
        if isinstance(exc, requests.exceptions.Timeout):
            return FetchTimeout(f"tempo scaduto per {url} ({_reason(exc)})", url=url)
        if isinstance(exc, requests.exceptions.RequestException) and not isinstance(
                exc, (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError,
                      requests.exceptions.ContentDecodingError)):
            return FetchFailed(f"richiesta non valida per {url} ({_reason(exc)})", url=url)  # invalid URL and the like
        deadline.cancel()
        if deadline.expired:  # a body cut by the deadline is late, not broken
            return self._total_timeout(url)
        if isinstance(exc, FetchFailed):
            return exc
        if _is_timeout(exc):
            return FetchTimeout(f"tempo scaduto per {url} ({_reason(exc)})", url=url)
        return FetchFailed(f"connessione fallita per {url} ({_reason(exc)})", url=url)

    def _total_timeout(self, url: str) -> FetchTimeout:
        return FetchTimeout(f"tempo scaduto per {url}: risposta non completa entro {self.policy.total_timeout:g} s",
                            url=url)


class _Exchange:
    """One request in its thread: the checked target its connections go to, its host's slot in the gate, its Retry
    and the deadline of the attempt running. Made, it holds the slot; `pause` (the Retry's sleep between two
    attempts) gives the slot back, waits, and takes it again, so every attempt is spaced and gated like the first."""

    def __init__(self, fetcher: Fetcher, url: str, target: Target) -> None:
        self.fetcher = fetcher
        self.url = url
        self.target = target
        self.host = _host_key(url)
        self.retry = PoliteRetry.for_policy(fetcher.policy, url, self.pause)
        self.holding = False
        self._begin()

    def _begin(self) -> None:
        fetcher = self.fetcher
        # concurrency 1 per host and the interval between the starts of two requests: the gate's (in this process,
        # or shared by every process of a service)
        fetcher.gate.acquire(self.host, max(fetcher.policy.min_interval, fetcher.robots.crawl_delay(self.url)))
        self.holding = True
        # total_timeout bounds the whole attempt (headers and body): at the deadline the socket is shut down, which
        # ends whatever read is blocked, however slowly the server trickles
        self.deadline = _Deadline(fetcher.policy.total_timeout)

    def end(self, hold_off: float = 0.0) -> None:
        """End the attempt and give the host's slot back; `hold_off` is the pause the host asked for."""
        self.deadline.cancel()
        if self.holding:
            self.holding = False
            self.fetcher.gate.release(self.host, hold_off)

    def pause(self, wait: float, hold_off: float) -> None:
        self.end(hold_off)
        self.fetcher.policy.sleep(wait)
        self._begin()


# A DNS name as the transport sends it (lowercase, IDNA-encoded): LDH labels, `_` tolerated.
_HOSTNAME = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*")


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _normal_host(host: str) -> str | None:
    """A host as requests sends it: lowercase, IDNA-encoded, no brackets, no trailing dot; None if invalid."""
    host = host.strip("[]").lower()
    if not host.isascii():
        try:
            host = requests.models.PreparedRequest._get_idna_encoded_host(host)
        except (UnicodeError, requests.exceptions.InvalidURL):
            return None
    host = host.lower()
    return host[:-1] if host.endswith(".") else host


def _transport_target(url: str) -> tuple[str, int | None] | None:
    """(host, port) of the connection requests will open for `url` (the URL it prepares, read by urllib3's
    parser, as the pool manager reads it); None when requests refuses the URL."""
    prepared = requests.PreparedRequest()
    try:
        prepared.prepare_url(url, None)
        parsed = urllib3.util.parse_url(prepared.url or "")
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, UnicodeError, ValueError):
        return None
    host = _normal_host(parsed.host or "")
    return (host, parsed.port) if host else None


class _Deadline:
    """Shuts the exchange's socket down when `seconds` have passed (cancel() first to keep it)."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._done = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            if self._done:
                return
            self._sock = sock
            if self.expired:
                _shutdown(sock)

    def cancel(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            if self._sock is not None:
                _shutdown(self._sock)


def _shutdown(sock: socket.socket) -> None:
    try:
        # the plain socket's shutdown, also under TLS: it wakes a read blocked in another thread
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


def _is_timeout(exc: BaseException) -> bool:
    seen = 0
    while exc is not None and seen < 6:
        # urllib3's NewConnectionError subclasses ConnectTimeoutError, but "connection refused" is no timeout
        if isinstance(exc, urllib3.exceptions.NewConnectionError):
            return False
        if isinstance(exc, (requests.exceptions.Timeout, urllib3.exceptions.TimeoutError, socket.timeout,
                            TimeoutError)):
            return True
        nxt = exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else None
        exc = nxt or exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return False


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."


def _host_key(url: str) -> str:
    """The gate's name of a URL's host: its lower-case `host[:port]`, as the URL gives it."""
    return urlsplit(url).netloc.lower()


def _strip_fragment(url: str) -> str:
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", parts.query, ""))


__all__ = [
    "DEFAULT_ALLOWED_HOSTS", "FetchPolicy", "FetchResult", "Fetcher", "DiskCache", "ConditionalGet",
    "PinnedAdapter", "default_user_agent", "host_matches",
]
