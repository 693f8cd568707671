"""The polite HTTP layer: one requests session under a FetchPolicy (host and private allowlists with pinned ports,
connections only to checked addresses, robots.txt, rate limit, retries, conditional GET through an on-disk cache,
size cap, charset detection). The per-host gate, robots.txt and the cache are pluggable layers
(`scraper.politeness`): in-process by default, shared across processes when the service mounts its own."""
from __future__ import annotations

import codecs
import email.utils
import hashlib
import ipaddress
import json
import os
import pathlib
import re
import socket
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Mapping
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
import urllib3
from protego import Protego
from requests.structures import CaseInsensitiveDict

from .errors import BlockedByRobots, FetchFailed, FetchTimeout, HostNotAllowed, PageTooLarge, ScrapeError
from .netguard import NetPolicy, PinnedAdapter, Target, Unpinned, host_matches, parse_ip
from .netguard import refused as _refused
from .politeness import FetchCache, HostGate, LocalHostGate, RobotsRecord, RobotsStore

# The forum hosts a default policy lets through; phpBB boards live anywhere, so they are added per use.
DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = (
    "forumfree.it", "*.forumfree.it", "forumcommunity.net", "*.forumcommunity.net",
    "*.forumattivo.com", "*.forumattivo.it", "*.forumotion.com", "*.forumotion.net",
)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ROBOTS_MAX_BYTES = 500 * 1024  # RFC 9309 §2.5: parse at least 500 KiB, ignore the rest
CHUNK = 64 * 1024
_DIGITS = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() also takes "¹" and "٣"


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


# --- charset ----------------------------------------------------------------------------------------

# WHATWG Encoding Standard labels of the encodings old Italian forums use; latin-1/ascii mean windows-1252.
_LABELS: dict[str, str] = {}
for _name, _labels in {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "windows-1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
                    "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    "iso-8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso-8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    "windows-1250": "cp1250 windows-1250 x-cp1250",
    "utf-16le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    "utf-16be": "unicodefffe utf-16be",
}.items():
    for _label in _labels.split():
        _LABELS[_label] = _name


def encoding_for_label(label: str | None) -> str | None:
    """WHATWG "get an encoding": a label → canonical name, None when unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    if label in _LABELS:
        return _LABELS[label]
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


_META_RE = re.compile(rb"<meta\b[^>]*>", re.I)
_CHARSET_ATTR_RE = re.compile(rb"""charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.I)
_HTTP_EQUIV_RE = re.compile(rb"""http-equiv\s*=\s*["']?\s*content-type""", re.I)


def charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = re.search(r"""charset\s*=\s*["']?([^"';\s]+)""", content_type, re.I)
    return encoding_for_label(m.group(1)) if m else None


def detect_encoding(data: bytes, content_type: str | None = None) -> str:
    """WHATWG order: BOM, then the Content-Type charset, then a <meta> in the first 1024 bytes, then UTF-8 if
    the bytes are valid UTF-8, else windows-1252 (the Italian locale's legacy default)."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16le"
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16be"
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype in ("application/json", "text/json"):
        return "utf-8"  # RFC 8259: JSON between systems is UTF-8
    found = charset_from_content_type(content_type)
    if found:
        return found
    for meta in _META_RE.findall(data[:1024]):
        m = _CHARSET_ATTR_RE.search(meta)
        if not m:
            continue
        if b"charset" in meta.split(b"=", 1)[0].lower() or _HTTP_EQUIV_RE.search(meta):
            enc = encoding_for_label(m.group(1).decode("ascii", "replace"))
            if enc:
                # a meta cannot really announce UTF-16 (the bytes are ASCII-compatible); x-user-defined is 1252
                return "utf-8" if enc.startswith("utf-16") else enc
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        return "windows-1252"


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Error handler: bytes that are not valid in the declared encoding are read as windows-1252."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    return "".join(_cp1252_byte(b) for b in bad), exc.end


def _cp1252_byte(b: int) -> str:
    try:
        return bytes([b]).decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8D, 0x8F, 0x90, 0x9D: WHATWG maps them to the C1 control
        return chr(b)


codecs.register_error("arbitro-fetch-cp1252", _cp1252_fallback)

# A valid multi-byte UTF-8 sequence (RFC 3629 table), as copy-pasted UTF-8 text appears in a 1252 page.
_UTF8_SEQ = re.compile(
    rb"[\xC2-\xDF][\x80-\xBF]|\xE0[\xA0-\xBF][\x80-\xBF]|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}"
    rb"|\xED[\x80-\x9F][\x80-\xBF]|\xF0[\x90-\xBF][\x80-\xBF]{2}|[\xF1-\xF3][\x80-\xBF]{3}"
    rb"|\xF4[\x80-\x8F][\x80-\xBF]{2}"
)


# Every match of _UTF8_SEQ starts so. sre finds a one-class prefix by a fast scan, but tries the alternation above
# at every byte: the candidates come from here, and _UTF8_SEQ only checks them (same matches as its finditer).
_UTF8_LEAD = re.compile(rb"[\xC2-\xF4][\x80-\xBF]")


_ASCII = bytes(range(128))


def _utf8_runs(data: bytes) -> Iterator[re.Match[bytes]]:
    """The non-overlapping matches of _UTF8_SEQ in `data`, left to right."""
    # A match is a run of non-ASCII bytes, so it survives deleting the ASCII ones (a C-speed pass): a plain 1252
    # page, with its accents between letters, has no candidate left and is not scanned byte by byte.
    if _UTF8_LEAD.search(data.translate(None, _ASCII)) is None:
        return
    lead, seq = _UTF8_LEAD.search, _UTF8_SEQ.match
    pos = 0
    while (c := lead(data, pos)) is not None:
        m = seq(data, c.start())
        if m is None:
            pos = c.start() + 1
            continue
        yield m
        pos = m.end()


def decode_text(data: bytes, encoding: str | None = None) -> str:
    """Decode page bytes, repairing mixed encodings: stray 1252 bytes in a UTF-8 page are read as 1252, and
    UTF-8 sequences pasted into a 1252 page (the `Ã¨` mojibake) are read as UTF-8."""
    enc = encoding or detect_encoding(data)
    if enc == "utf-8":
        return data.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="arbitro-fetch-cp1252")
    if enc == "windows-1252":
        out: list[str] = []
        pos = 0
        for m in _utf8_runs(data):
            out.append(data[pos:m.start()].decode("cp1252", errors="arbitro-fetch-cp1252"))
            out.append(m.group().decode("utf-8"))
            pos = m.end()
        out.append(data[pos:].decode("cp1252", errors="arbitro-fetch-cp1252"))
        return "".join(out)
    try:
        return data.decode(enc, errors="replace")
    except LookupError:
        return data.decode("windows-1252", errors="arbitro-fetch-cp1252")


# --- on-disk cache ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheEntry:
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
                with _suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            pass  # a cache that cannot be written only costs a full download next time


class _suppress:
    def __init__(self, *exc: type[BaseException]) -> None:
        self.exc = exc

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        return et is not None and issubclass(et, self.exc)


# --- the fetcher ------------------------------------------------------------------------------------

@dataclass
class _Raw:
    url: str
    status: int
    headers: CaseInsensitiveDict
    content: bytes


def _now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


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


class Fetcher:
    """Polite GETs under a FetchPolicy. Share one per process: the per-host gate and robots.txt live here.

    The politeness layers are mounted here, never left to callers: `gate` (one request at a time per host, the
    interval; default `LocalHostGate`, this process only), `cache` (conditional GET; default a `DiskCache` in
    `policy.cache_dir`) and `robots` (robots.txt beyond this process; default none: this fetcher's own copy).
    A service with several processes passes implementations shared through its database.

    Every failure is a ScrapeError subclass: HostNotAllowed, BlockedByRobots, PageTooLarge, FetchTimeout,
    FetchFailed (with `.status`); no requests/urllib3 exception escapes."""

    def __init__(self, policy: FetchPolicy | None = None, session: requests.Session | None = None, *,
                 gate: HostGate | None = None, cache: FetchCache | None = None,
                 robots: RobotsStore | None = None) -> None:
        self.policy = policy or FetchPolicy()
        self.session = session or requests.Session()
        self.session.trust_env = False  # no environment proxies: the socket goes to the checked address itself
        adapter = PinnedAdapter(self._pin, self._watch_socket)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers.update({
            "User-Agent": self.policy.user_agent,
            "Accept": "text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8",
            "Accept-Language": self.policy.accept_language,
            # only the codings _Decoder can tell complete from cut short
            "Accept-Encoding": "gzip, deflate",
        })
        self.cache: FetchCache | None = cache if cache is not None else (
            DiskCache(self.policy.cache_dir) if self.policy.cache_dir else None)
        self.net = NetPolicy(self.policy.allowed_hosts, self.policy.private_allowlist)  # AllowlistError on an unreadable entry
        # the policy's sleep and clock as they are when asked (a test may swap the policy's fields)
        self.gate: HostGate = gate if gate is not None else LocalHostGate(lambda s: self.policy.sleep(s),
                                                                           lambda: self.policy.clock())
        self.robots_store = robots
        self._crawl_delays: dict[str, float] = {}  # host → robots.txt Crawl-delay (capped)
        self._robots: dict[str, tuple[float, Protego | None, str | None]] = {}
        self._robots_lock = threading.Lock()
        self._local = threading.local()  # the running exchange's _Deadline (requests runs in the caller's thread)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public ----------------------------------------------------------------------------------

    def get(self, url: str, *, conditional: bool = True) -> FetchResult:
        """GET `url` following redirects (each hop re-checked). With a cache entry and `conditional`, asks
        with If-None-Match / If-Modified-Since and returns the cached body on 304."""
        url = _strip_fragment(url)
        current = url
        hops: list[str] = []
        for _ in range(self.policy.max_redirects + 1):
            target = self.check_url(current)  # every hop: resolved once, every address checked
            if self.policy.obey_robots:
                self._check_robots(current)
            cached = self.cache.load(current) if self.cache else None
            headers: dict[str, str] = {}
            if cached and conditional:
                if cached.etag:
                    headers["If-None-Match"] = cached.etag
                if cached.last_modified:
                    headers["If-Modified-Since"] = cached.last_modified
            raw = self._exchange(current, headers, self.policy.max_bytes, target=target)
            if raw.status in REDIRECT_STATUSES and raw.headers.get("Location"):
                hops.append(current)
                current = _strip_fragment(urljoin(current, raw.headers["Location"]))
                continue
            if raw.status == 304:
                if not (cached and headers):
                    raise FetchFailed(f"risposta 304 senza una copia in cache per {current}", status=304, url=url)
                merged = {**cached.headers, **{k: v for k, v in ((h, raw.headers.get(h)) for h in _KEPT_HEADERS
                                                                 if h != "content-type") if v}}
                if merged != cached.headers and self.cache:
                    self.cache.store(replace(cached, headers=merged))
                return FetchResult(url=url, final_url=current, status=cached.status, content=cached.content,
                                   headers=CaseInsensitiveDict(merged), from_cache=True, not_modified=True,
                                   encoding=cached.encoding, redirects=tuple(hops), fetched_at=_now_iso())
            if 200 <= raw.status < 300:
                encoding = detect_encoding(raw.content, raw.headers.get("Content-Type"))
                fetched_at = _now_iso()
                if self.cache and raw.status == 200:
                    kept = {h: raw.headers[h] for h in _KEPT_HEADERS if raw.headers.get(h)}
                    self.cache.store(CacheEntry(url=current, final_url=current, status=raw.status, headers=kept,
                                                content=raw.content, sha256=hashlib.sha256(raw.content).hexdigest(),
                                                encoding=encoding, stored_at=fetched_at))
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

    def _pin(self, host: str, port: int) -> Target | None:
        """The checked target of the running exchange, for the connection opened to (host, port)."""
        target = getattr(self._local, "target", None)
        return target if target is not None and (target.host, target.port) == (host, port) else None

    def _watch_socket(self, sock: socket.socket) -> None:
        deadline = getattr(self._local, "deadline", None)
        if deadline is not None:
            deadline.watch(sock)

    def _check_robots(self, url: str) -> None:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc.lower()}"
        with self._robots_lock:  # one robots.txt request per origin, even with several threads
            entry = self._robots.get(origin)
            if entry is None or time.monotonic() > entry[0]:
                shared = self.robots_store.load(origin) if self.robots_store is not None else None
                if shared is not None:  # another process read it: not asked again
                    record, ttl = shared
                    parser = Protego.parse(record.text) if record.text is not None else None
                    entry = (time.monotonic() + min(ttl, self.policy.robots_max_age), parser, record.refusal)
                else:
                    # an unreachable robots.txt raises the fetch failure (the forum is down, we read nothing) and
                    # nothing is cached, so the next request asks again
                    text, refusal = self._load_robots(origin)
                    parser = Protego.parse(text) if text is not None else None
                    if self.robots_store is not None:
                        self.robots_store.store(origin, RobotsRecord(text, refusal), self.policy.robots_max_age)
                    entry = (time.monotonic() + self.policy.robots_max_age, parser, refusal)
                self._robots[origin] = entry
        _, parser, refusal = entry
        if refusal:
            raise BlockedByRobots(refusal)
        if parser is not None:
            if not parser.can_fetch(url, self.policy.user_agent.split("/")[0]):
                raise BlockedByRobots(f"robots.txt di {origin} vieta la lettura di {url}")
            delay = parser.crawl_delay(self.policy.user_agent.split("/")[0])
            if delay:
                self._crawl_delays[_host_key(url)] = min(float(delay), self.policy.max_crawl_delay)

    def _load_robots(self, origin: str) -> tuple[str | None, str | None]:
        """(robots.txt text or None for allow-all, refusal message or None) per RFC 9309 §2.3.1.

        Unreachable (network error, 5xx after retries) means complete disallow (§2.3.1.4): we read nothing and
        raise the fetch failure itself, so the caller reports a forum that is down, not a robots.txt refusal."""
        url = origin + "/robots.txt"
        try:
            for _ in range(self.policy.max_redirects + 1):
                target = self.check_url(url)
                raw = self._exchange(url, {}, ROBOTS_MAX_BYTES, truncate=True, target=target)
                if raw.status in REDIRECT_STATUSES and raw.headers.get("Location"):
                    url = urljoin(url, raw.headers["Location"])
                    continue
                break
            else:
                return None, None  # §2.3.1.2: after 5 redirects, as if there were no robots.txt
        except HostNotAllowed as exc:
            return None, f"robots.txt di {origin} rimanda a un indirizzo non ammesso ({exc.message}): lettura sospesa"
        if 200 <= raw.status < 300:
            return decode_text(raw.content, "utf-8"), None
        if raw.status in (401, 403):
            # RFC 9309 lets a crawler treat every 4xx as "no robots.txt"; a forum that refuses even its
            # robots.txt to us is read as refusing everything (the older, stricter convention).
            return None, f"robots.txt di {origin} negato ({raw.status}): lettura non consentita"
        if 400 <= raw.status < 500:
            return None, None  # §2.3.1.3: unavailable, any path may be fetched
        raise FetchFailed(f"il forum non risponde: robots.txt di {origin} in errore (stato {raw.status})",
                          status=raw.status, url=url)

    def _exchange(self, url: str, headers: dict[str, str], max_bytes: int, *, truncate: bool = False,
                  target: Target | None = None) -> _Raw:
        """One logical request with retries/backoff; 429/5xx are retried, other statuses are returned. Every
        attempt connects to `target`'s checked addresses (no new resolution)."""
        policy = self.policy
        attempt = 0
        while True:
            wait: float | None = None
            try:
                raw = self._attempt(url, headers, max_bytes, truncate, target)
            except FetchFailed as exc:  # FetchTimeout included
                if not getattr(exc, "_retryable", True):
                    raise
                failure: FetchFailed = exc
            else:
                if raw.status not in RETRY_STATUSES:
                    return raw
                wait = parse_retry_after(raw.headers.get("Retry-After"))
                if wait is not None and wait > policy.max_retry_after:
                    # waiting less than asked would be impolite, waiting longer is not ours to do
                    raise FetchFailed(f"il server ha risposto {raw.status} e chiede di riprovare fra "
                                      f"{wait:.0f} s (oltre il limite di {policy.max_retry_after:.0f} s)",
                                      status=raw.status, url=url)
                failure = FetchFailed(f"il server ha risposto {raw.status} per {url} "
                                      f"(dopo {attempt + 1} tentativi)", status=raw.status, url=url)
            if attempt >= policy.retries:
                raise failure
            if wait is None:
                wait = min(policy.backoff * (2 ** attempt), policy.max_backoff)
            policy.sleep(wait)
            attempt += 1

    def _attempt(self, url: str, headers: dict[str, str], max_bytes: int, truncate: bool,
                 target: Target | None = None) -> _Raw:
        """One HTTP exchange under the host's lock and rate limit; the body is streamed under the size cap. The
        connection may only go to `target`'s addresses (checked here when not given)."""
        target = target or self.check_url(url)
        key = _host_key(url)
        policy = self.policy
        # concurrency 1 per host and the interval between the starts of two requests: the gate's (in this
        # process, or shared by every process of a service)
        self.gate.acquire(key, max(policy.min_interval, self._crawl_delays.get(key, 0.0)))
        hold_off = 0.0
        try:
            response = None
            # total_timeout bounds the whole exchange (headers and body): at the deadline the socket is shut
            # down, which ends whatever read is blocked, however slowly the server trickles
            deadline = self._local.deadline = _Deadline(policy.total_timeout)
            self._local.target = target
            try:
                response = self.session.get(url, headers=headers, stream=True, allow_redirects=False,
                                            timeout=(policy.connect_timeout, policy.read_timeout))
                status = response.status_code
                if not 200 <= status < 300:
                    # redirects, 304 and error pages: only a little of an error body is kept
                    body = b"" if status in REDIRECT_STATUSES or status == 304 else \
                        self._read(response, min(max_bytes, CHUNK), url, truncate=True, lenient=True)
                    raw = _Raw(url, status, response.headers, body)
                else:
                    raw = _Raw(url, response.status_code, response.headers,
                               self._read(response, max_bytes, url, truncate=truncate))
                deadline.cancel()
                if deadline.expired:  # the shutdown may have ended a body without a length early
                    raise self._total_timeout(url)
                if raw.status in RETRY_STATUSES:
                    # the host asked for a pause: a shared gate tells the other processes too
                    asked = parse_retry_after(raw.headers.get("Retry-After"))
                    if asked is not None and asked <= policy.max_retry_after:
                        hold_off = asked
                return raw
            except FetchFailed:
                deadline.cancel()
                if deadline.expired:  # a body cut by the deadline is late, not broken
                    raise self._total_timeout(url) from None
                raise
            except Unpinned as exc:  # a connection for a host and port nobody checked: never opened
                raise _refused(f"host non consentito: {exc.host} (non è tra gli host ammessi)", "host") from None
            except requests.exceptions.Timeout as exc:
                raise FetchTimeout(f"tempo scaduto per {url} ({_reason(exc)})", url=url) from None
            except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError,
                    requests.exceptions.ContentDecodingError, urllib3.exceptions.HTTPError, OSError) as exc:
                deadline.cancel()
                if deadline.expired:
                    raise self._total_timeout(url) from None
                if _is_timeout(exc):
                    raise FetchTimeout(f"tempo scaduto per {url} ({_reason(exc)})", url=url) from None
                raise FetchFailed(f"connessione fallita per {url} ({_reason(exc)})", url=url) from None
            except requests.exceptions.RequestException as exc:  # invalid URL and the like: not retryable
                err = FetchFailed(f"richiesta non valida per {url} ({_reason(exc)})", url=url)
                err._retryable = False  # type: ignore[attr-defined]
                raise err from None
            finally:
                deadline.cancel()
                self._local.deadline = None
                self._local.target = None
                if response is not None:
                    response.close()
        finally:
            self.gate.release(key, hold_off)

    def _total_timeout(self, url: str) -> FetchTimeout:
        return FetchTimeout(f"tempo scaduto per {url}: risposta non completa entro {self.policy.total_timeout:g} s",
                            url=url)

    def _read(self, response: requests.Response, max_bytes: int, url: str, *, truncate: bool,
              lenient: bool = False) -> bytes:
        """The body, decoded, under the size cap. Unless `lenient` (error pages), a compressed body whose
        stream did not end is an incomplete transfer: FetchFailed, never a shorter page."""
        declared = response.headers.get("Content-Length")
        if not truncate and declared and _DIGITS.fullmatch(declared.strip()) and int(declared) > max_bytes:
            raise PageTooLarge(f"pagina troppo grande: {url} dichiara {int(declared)} byte "
                               f"(limite {max_bytes})")
        decoder = _Decoder(response.headers.get("Content-Encoding", ""))
        buf = bytearray()
        try:
            for chunk in response.raw.stream(CHUNK, decode_content=False):
                for piece in decoder.feed(chunk):
                    buf += piece
                    if len(buf) > max_bytes:
                        if truncate:
                            return bytes(buf[:max_bytes])
                        raise PageTooLarge(f"pagina troppo grande: {url} supera {max_bytes} byte")
        except zlib.error as exc:
            if lenient:
                return bytes(buf)
            raise FetchFailed(f"corpo della risposta non decodificabile per {url} ({exc})", url=url) from None
        if not lenient and not decoder.complete():
            raise FetchFailed(f"risposta incompleta per {url}: il contenuto compresso "
                              f"({decoder.names}) si interrompe prima della fine", url=url)
        return bytes(buf)

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


class _Inflate:
    """One gzip or deflate layer that knows whether its stream ended (urllib3's decoders do not say)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.obj = self._new(zlib.MAX_WBITS)
        self.fed = False  # any byte seen: an empty body is complete
        self.started = False  # some output or a whole member decoded: a bad zlib header is no longer retried
        self.members = 0
        self.swallow = False

    def _new(self, wbits: int) -> Any:
        return zlib.decompressobj(16 + wbits if self.kind == "gzip" else wbits)

    def feed(self, data: bytes) -> Iterable[bytes]:
        while data and not self.swallow:
            self.fed = True
            if self.obj.eof:
                self.members += 1
                if self.kind != "gzip":
                    self.swallow = True  # bytes after a deflate stream: ignored, as urllib3 does
                    return
                self.obj = self._new(zlib.MAX_WBITS)  # another gzip member
            try:
                out = self.obj.decompress(data, CHUNK)
            except zlib.error:
                if self.kind == "deflate" and not self.started:
                    self.started = True  # a raw deflate stream without the zlib header, as urllib3 accepts
                    self.obj = self._new(-zlib.MAX_WBITS)
                    continue
                if self.members:  # garbage after a complete gzip member: ignored, as urllib3 does
                    self.swallow = True
                    return
                raise
            self.started = True
            if out:
                yield out
            while len(out) == CHUNK and not self.obj.eof:  # output held back by the limit
                out = self.obj.decompress(self.obj.unconsumed_tail, CHUNK)
                if out:
                    yield out
            data = self.obj.unused_data if self.obj.eof else self.obj.unconsumed_tail

    def complete(self) -> bool:
        return not self.fed or self.swallow or self.obj.eof


class _Decoder:
    """Content-Encoding decoding (gzip, x-gzip, deflate; others passed through as urllib3 does)."""

    def __init__(self, header: str) -> None:
        names = [n.strip().lower() for n in header.split(",")]
        self.names = ", ".join(n for n in names if n in ("gzip", "x-gzip", "deflate"))
        self.layers = [_Inflate("deflate" if n == "deflate" else "gzip")
                       for n in reversed(names) if n in ("gzip", "x-gzip", "deflate")]

    def feed(self, data: bytes) -> Iterable[bytes]:
        pieces: Iterable[bytes] = (data,)
        for layer in self.layers:
            pieces = _through(layer, pieces)
        return pieces

    def complete(self) -> bool:
        return all(layer.complete() for layer in self.layers)


def _through(layer: _Inflate, pieces: Iterable[bytes]) -> Iterable[bytes]:
    for piece in pieces:
        yield from layer.feed(piece)


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
    "DEFAULT_ALLOWED_HOSTS", "FetchPolicy", "FetchResult", "Fetcher", "DiskCache", "CacheEntry", "PinnedAdapter",
    "default_user_agent", "detect_encoding", "decode_text", "encoding_for_label", "parse_retry_after",
    "host_matches",
]
