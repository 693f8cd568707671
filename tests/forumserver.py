"""A local fixture forum for tests: serves thread pages under the platforms' URL schemes over real HTTP.

    server = ForumServer(fixtures_root)
    base = server.start()                      # "http://127.0.0.1:<free port>"
    paths = server.add_thread("forumfree", 123, [page1_bytes, page2_bytes])
    server.set_behaviour(paths[1], statuses=[500])       # next request to page 2 fails once
    ...
    server.requests_log                         # what the client asked and what it got
    server.stop()

Everything is plain WSGI on werkzeug's threaded server (the same machinery as Flask's), bound to 127.0.0.1 on
a free port. Pages answer with ETag and Last-Modified and honour conditional requests with 304, unless a
behaviour says otherwise. Behaviours are per path (or server-wide with path=None) and cover the failures a
polite crawler must survive: 429 with Retry-After, 5xx then success, too large bodies (with or without a
declared Content-Length), slow bodies, redirects anywhere.
"""
from __future__ import annotations

import email.utils
import gzip
import hashlib
import html
import json
import pathlib
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit

from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

# Query parameters a forum adds that do not select the page (phpBB's forum id and session id).
IGNORED_PARAMS = frozenset({"sid", "f"})

# First Last-Modified given to pages; each change of a page moves it one minute on.
_EPOCH = 1_700_000_000

PER_PAGE = {"forumfree": 15, "forumotion": 15, "phpbb": 10}

CHUNK = 64 * 1024

# Character sheets of the fixture fights, by the topic id the posts' schemas link them with.
FIXTURE_SHEETS = {"70000101": "sheets/hollow.html", "70000102": "sheets/quincy.html"}


def normalise_path(path_qs: str) -> str:
    """`/viewtopic.php?t=3&start=10&sid=x` → `/viewtopic.php?start=10&t=3` (sorted, page-irrelevant params gone)."""
    parts = urlsplit(path_qs)
    path = parts.path or "/"
    query = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in IGNORED_PARAMS)
    return path + ("?" + urlencode(query) if query else "")


@dataclass
class LoggedRequest:
    """One request the server answered."""

    path: str  # path and query as sent
    method: str
    status: int
    if_none_match: str | None = None
    if_modified_since: str | None = None
    user_agent: str | None = None
    host: str | None = None
    bytes_sent: int = 0  # body bytes actually handed to the socket (streamed bodies count while they flow)
    time: float = 0.0

    @property
    def conditional(self) -> bool:
        return bool(self.if_none_match or self.if_modified_since)


@dataclass
class _Page:
    body: bytes
    content_type: str
    headers: dict[str, str]
    validators: bool
    modified: int  # unix time used for Last-Modified

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha1(self.body).hexdigest()[:20] + '"'


@dataclass
class Behaviour:
    """How a path misbehaves; every field optional.

    statuses: answer these statuses to the next requests, one each, then behave normally.
    retry_after: Retry-After header sent with 429/503 answers (seconds or an HTTP date).
    redirect: answer with a redirect to this URL (absolute or relative), status `redirect_status`.
    too_large: stream a body of this many bytes instead of the page.
    declare_length: with too_large, send Content-Length up front (else chunked).
    slow: seconds to wait after the headers before the first body byte.
    drip: (seconds between chunks, chunk size) for a body that trickles.
    validators: send ETag/Last-Modified (default True); honour_conditional: answer 304 when they match.
    gzip: send the body gzip-compressed (Content-Encoding: gzip), as most forums do.
    """

    statuses: list[int] = field(default_factory=list)
    retry_after: str | None = None
    redirect: str | None = None
    redirect_status: int = 302
    too_large: int | None = None
    declare_length: bool = False
    slow: float = 0.0
    drip: tuple[float, int] | None = None
    validators: bool | None = None
    honour_conditional: bool = True
    gzip: bool = False


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:  # tests read requests_log instead
        pass

    def log_error(self, *args: Any) -> None:
        pass


class ForumServer:
    """A fixture forum on 127.0.0.1:<free port>. Thread-safe; use as a context manager or start()/stop()."""

    def __init__(self, fixtures_root: str | pathlib.Path | None = None, *, host: str = "127.0.0.1",
                 rewrite_hosts: Iterable[str] = ()) -> None:
        self.fixtures_root = pathlib.Path(fixtures_root) if fixtures_root else None
        self.host = host
        self.port: int | None = None
        self.rewrite_hosts = list(rewrite_hosts)  # "gdr.forumfree.it": its absolute links are served as ours
        self.requests_log: list[LoggedRequest] = []
        self._pages: dict[str, _Page] = {}
        self._behaviours: dict[str | None, Behaviour] = {}
        self._robots: tuple[int, bytes] = (200, b"User-agent: *\nAllow: /\n")
        self._lock = threading.RLock()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._clock = _EPOCH

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> str:
        if self._server is not None:
            return self.base_url
        self._server = make_server(self.host, 0, self._wsgi, threaded=True, request_handler=_QuietHandler)
        self._server.daemon_threads = True
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"forumserver:{self.port}", daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> ForumServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("ForumServer not started")
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        """Absolute URL of a path on this server."""
        return self.base_url + (path if path.startswith("/") else "/" + path)

    # -- content ---------------------------------------------------------------------------------

    def set_page(self, path: str, body: bytes | str | pathlib.Path, *, content_type: str | None = None,
                 headers: dict[str, str] | None = None, validators: bool = True) -> str:
        """Serve `body` at `path` (path and query). A str body is sent as UTF-8; a Path is read (relative
        paths resolve under fixtures_root). Returns the normalised path."""
        data = self._load(body)
        if content_type is None:
            content_type = _guess_type(path, data)
        key = normalise_path(path)
        with self._lock:
            self._clock += 60
            self._pages[key] = _Page(data, content_type, dict(headers or {}), validators, self._clock)
        return key

    def remove_page(self, path: str) -> None:
        with self._lock:
            self._pages.pop(normalise_path(path), None)

    def page(self, path: str) -> bytes:
        with self._lock:
            return self._pages[normalise_path(path)].body

    def add_post(self, path: str, post_html: bytes | str, *, before: bytes | str | None = None) -> None:
        """Insert a post into the page at `path`, before the last occurrence of `before` (default `</body>`),
        so the page changes as a forum page does when somebody replies."""
        fragment = post_html.encode("utf-8") if isinstance(post_html, str) else post_html
        marker = (before or b"</body>")
        marker = marker.encode("utf-8") if isinstance(marker, str) else marker
        key = normalise_path(path)
        with self._lock:
            page = self._pages[key]
            at = page.body.rfind(marker)
            if at < 0:
                raise ValueError(f"marker {marker!r} not in page {key}")
            self._clock += 60
            self._pages[key] = _Page(page.body[:at] + fragment + page.body[at:], page.content_type, page.headers,
                                     page.validators, self._clock)

    def replace_in_page(self, path: str, old: bytes | str, new: bytes | str) -> None:
        """Edit a page in place (an edited post, a pagination bar that grows)."""
        old_b = old.encode("utf-8") if isinstance(old, str) else old
        new_b = new.encode("utf-8") if isinstance(new, str) else new
        key = normalise_path(path)
        with self._lock:
            page = self._pages[key]
            if old_b not in page.body:
                raise ValueError(f"{old_b!r} not in page {key}")
            self._clock += 60
            self._pages[key] = _Page(page.body.replace(old_b, new_b), page.content_type, page.headers,
                                     page.validators, self._clock)

    def add_thread(self, platform: str, tid: int | str, pages: list[bytes | str | pathlib.Path], *,
                   slug: str = "discussione", per_page: int | None = None,
                   api_pages: list[bytes | str | pathlib.Path] | None = None) -> list[str]:
        """Serve the pages of one thread under `platform`'s URL scheme; returns their paths in order.

        forumfree: `/?t=<tid>&st=<offset>` (page 1 also at `/?t=<tid>`), api pages at `/api.php?t=..&st=..`;
        forumotion: `/t<tid>-<slug>`, then `/t<tid>p<offset>-<slug>`; phpbb: `/viewtopic.php?t=<tid>&start=<n>`
        (page 1 also without `start`)."""
        step = per_page or PER_PAGE[platform]
        paths = []
        for i, body in enumerate(pages):
            off = i * step
            if platform == "forumfree":
                path = f"/?t={tid}&st={off}"
                if i == 0:
                    self.set_page(f"/?t={tid}", body)
            elif platform == "forumotion":
                path = f"/t{tid}-{slug}" if i == 0 else f"/t{tid}p{off}-{slug}"
            elif platform == "phpbb":
                path = f"/viewtopic.php?t={tid}&start={off}"
                if i == 0:
                    self.set_page(f"/viewtopic.php?t={tid}", body)
            else:
                raise ValueError(f"unknown platform {platform!r}")
            self.set_page(path, body)
            paths.append(path)
        for i, body in enumerate(api_pages or ()):
            self.set_page(f"/api.php?t={tid}&st={i * step}", body, content_type="application/json; charset=utf-8")
        return paths

    def manifest(self) -> list[dict[str, Any]]:
        """fixtures/manifest.json: one entry per fixture page (path, original url, platform, skin, page, ...)."""
        if self.fixtures_root is None:
            raise RuntimeError("ForumServer has no fixtures_root")
        return json.loads((self.fixtures_root / "manifest.json").read_text(encoding="utf-8"))

    def forum_hosts(self) -> list[str]:
        return sorted({urlsplit(e["url"]).hostname for e in self.manifest() if e.get("url")})

    def load_forum(self, host: str, *, kinds: Iterable[str] = ("html", "json", "index", "malformed"),
                   sheets: Mapping[str, str] | None = None) -> dict[str, str]:
        """Serve every fixture page of one forum host at its original path (links to that host are rewritten
        to this server), plus the character sheets its posts link to. One server plays one forum, as on the
        web: two fixture forums can have the same paths. Returns {fixture path: local URL}."""
        served: dict[str, str] = {}
        kinds = set(kinds)
        for entry in self.manifest():
            parts = urlsplit(entry["url"])
            if parts.hostname != host or entry.get("kind", "html") not in kinds:
                continue
            path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
            ctype = None
            if entry.get("kind") == "json":
                ctype = "application/json; charset=utf-8"
            elif entry.get("charset"):
                ctype = f"text/html; charset={entry['charset']}"
            self.set_page(path, pathlib.Path(entry["path"]), content_type=ctype)
            served[entry["path"]] = self.url(path)
        if not served:
            raise ValueError(f"no fixture pages for host {host!r}")
        if host not in self.rewrite_hosts:
            self.rewrite_hosts.append(host)
        self._serve_sheets(host, FIXTURE_SHEETS if sheets is None else sheets)
        return served

    def serve_saved(self, url: str, body: bytes | pathlib.Path) -> str:
        """Serve a page saved from a real forum at its real URL's path and query (`https://host/?t=1&st=30` →
        `/?t=1&st=30`), its absolute links to that host pointing here; the charset is the page's own (its
        `<meta>`). Returns the local URL. One server plays one forum: serve pages of one host only."""
        parts = urlsplit(url)
        if parts.hostname not in self.rewrite_hosts:
            self.rewrite_hosts.append(parts.hostname)
        path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        self.set_page(path, body)
        return self.url(path)

    def _serve_sheets(self, host: str, sheets: Mapping[str, str]) -> None:
        """Sheet links are topics of the same forum (`?t=<id>`, `/t<id>-slug`, `viewtopic.php?t=<id>`)."""
        link = re.compile(rb"https?://" + re.escape(host.encode("ascii")) + rb"(/[^\"'<>\s#]*)")
        with self._lock:
            bodies = [p.body for p in self._pages.values()]
        for body in bodies:
            for m in link.finditer(body):
                path = html.unescape(m.group(1).decode("utf-8", "replace"))
                for tid, sheet in sheets.items():
                    if re.search(rf"(?:[?&]t=|/t){tid}(?:\D|$)", path) and normalise_path(path) not in self._pages:
                        self.set_page(path, pathlib.Path(sheet), content_type="text/html; charset=utf-8")

    def set_robots(self, text: str | bytes | None, status: int = 200) -> None:
        """robots.txt content (None with status 404 = no robots.txt)."""
        data = text.encode("utf-8") if isinstance(text, str) else (text or b"")
        with self._lock:
            self._robots = (status, data)

    # -- behaviours and log ----------------------------------------------------------------------

    def set_behaviour(self, path: str | None = None, **behaviour: Any) -> None:
        """Make `path` (or every path, with None) misbehave; see `Behaviour` for the keys."""
        key = normalise_path(path) if path is not None else None
        with self._lock:
            self._behaviours[key] = Behaviour(**behaviour)

    def clear_behaviour(self, path: str | None = None, *, all: bool = False) -> None:
        with self._lock:
            if all:
                self._behaviours.clear()
            else:
                self._behaviours.pop(normalise_path(path) if path is not None else None, None)

    def log_for(self, path: str) -> list[LoggedRequest]:
        key = normalise_path(path)
        with self._lock:
            return [r for r in self.requests_log if normalise_path(r.path) == key]

    def reset_log(self) -> None:
        with self._lock:
            self.requests_log.clear()

    # -- WSGI ------------------------------------------------------------------------------------

    def _load(self, body: bytes | str | pathlib.Path) -> bytes:
        if isinstance(body, bytes):
            return body
        if isinstance(body, str):
            return body.encode("utf-8")
        path = body if body.is_absolute() or self.fixtures_root is None else self.fixtures_root / body
        return path.read_bytes()

    def _rewrite(self, data: bytes) -> bytes:
        for host in self.rewrite_hosts:
            data = re.sub(rb"https?://" + re.escape(host.encode("ascii")) + rb"(?=[/\"'?#\s<]|$)",
                          self.base_url.encode("ascii"), data)
        return data

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        request = Request(environ)
        raw_path = request.full_path.rstrip("?") if request.query_string else request.path
        entry = LoggedRequest(
            path=raw_path, method=request.method, status=0,
            if_none_match=request.headers.get("If-None-Match"),
            if_modified_since=request.headers.get("If-Modified-Since"),
            user_agent=request.headers.get("User-Agent"), host=request.headers.get("Host"), time=time.monotonic(),
        )
        response = self._respond(request, raw_path, entry)
        entry.status = response.status_code
        with self._lock:
            self.requests_log.append(entry)
        return response(environ, start_response)

    def _respond(self, request: Request, raw_path: str, entry: LoggedRequest) -> Response:
        key = normalise_path(raw_path)
        with self._lock:
            behaviour = self._behaviours.get(key) or self._behaviours.get(None) or Behaviour()
            forced = behaviour.statuses.pop(0) if behaviour.statuses else None
            page = self._pages.get(key)
            robots = self._robots
        if request.method not in ("GET", "HEAD"):
            return Response(b"", status=405)
        if forced is not None:
            headers = {}
            if forced in (429, 503) and behaviour.retry_after is not None:
                headers["Retry-After"] = str(behaviour.retry_after)
            body = f"errore {forced}".encode()
            entry.bytes_sent = len(body)
            return Response(body, status=forced, headers=headers, content_type="text/plain; charset=utf-8")
        if behaviour.redirect:
            return Response(b"", status=behaviour.redirect_status, headers={"Location": behaviour.redirect})
        if behaviour.too_large is not None:
            return self._big(behaviour, entry)
        if key == "/robots.txt" and page is None:
            status, data = robots
            entry.bytes_sent = len(data)
            return Response(data, status=status, content_type="text/plain; charset=utf-8")
        if page is None:
            fixture = self._fixture_file(key)
            if fixture is None:
                body = b"pagina non trovata"
                entry.bytes_sent = len(body)
                return Response(body, status=404, content_type="text/plain; charset=utf-8")
            page = _Page(fixture, _guess_type(key, fixture), {}, True, _EPOCH)
        body = self._rewrite(page.body)
        validators = page.validators if behaviour.validators is None else behaviour.validators
        etag = '"' + hashlib.sha1(body).hexdigest()[:20] + '"'
        last_modified = email.utils.formatdate(page.modified, usegmt=True)
        headers = dict(page.headers)
        if validators:
            headers["ETag"] = etag
            headers["Last-Modified"] = last_modified
            if behaviour.honour_conditional and _not_modified(request, etag, page.modified):
                return Response(status=304, headers=headers)
        if behaviour.slow or behaviour.drip:
            headers["Content-Length"] = str(len(body))
            return Response(self._slow_body(body, behaviour, entry), status=200, headers=headers,
                            content_type=page.content_type, direct_passthrough=True)
        if behaviour.gzip:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        entry.bytes_sent = len(body)
        return Response(body, status=200, headers=headers, content_type=page.content_type)

    def _fixture_file(self, key: str) -> bytes | None:
        """`/fixtures/<relative path>` serves files under fixtures_root as they are."""
        if self.fixtures_root is None or not key.startswith("/fixtures/"):
            return None
        root = self.fixtures_root.resolve()
        target = (root / key[len("/fixtures/"):].split("?")[0]).resolve()
        if root not in target.parents or not target.is_file():
            return None
        return target.read_bytes()

    def _big(self, behaviour: Behaviour, entry: LoggedRequest) -> Response:
        size = behaviour.too_large or 0

        def body() -> Iterator[bytes]:
            chunk = b"<p>" + b"x" * (CHUNK - 8) + b"</p>\n"
            left = size
            while left > 0:
                piece = chunk[:left]
                left -= len(piece)
                entry.bytes_sent += len(piece)
                yield piece

        headers = {"Content-Length": str(size)} if behaviour.declare_length else {}
        return Response(body(), status=200, headers=headers, content_type="text/html; charset=utf-8",
                        direct_passthrough=True)

    @staticmethod
    def _slow_body(body: bytes, behaviour: Behaviour, entry: LoggedRequest) -> Iterator[bytes]:
        if behaviour.slow:
            time.sleep(behaviour.slow)
        if behaviour.drip:
            delay, size = behaviour.drip
            for i in range(0, len(body), max(1, size)):
                piece = body[i:i + size]
                entry.bytes_sent += len(piece)
                yield piece
                time.sleep(delay)
        else:
            entry.bytes_sent += len(body)
            yield body


def _not_modified(request: Request, etag: str, modified: int) -> bool:
    inm = request.headers.get("If-None-Match")
    if inm is not None:  # RFC 9110 §13.1.3: If-None-Match wins over If-Modified-Since
        tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
        return "*" in tags or etag in tags
    ims = request.headers.get("If-Modified-Since")
    if ims:
        try:
            since = email.utils.parsedate_to_datetime(ims).timestamp()
        except (TypeError, ValueError):
            return False
        return modified <= since
    return False


def _guess_type(path: str, data: bytes) -> str:
    if path.startswith("/api.php") or path.endswith(".json"):
        return "application/json; charset=utf-8"
    if path.endswith(".txt"):
        return "text/plain; charset=utf-8"
    head = data[:2048].lower()
    m = re.search(rb"<meta[^>]+charset=[\"']?([a-z0-9_-]+)", head)
    return "text/html; charset=" + (m.group(1).decode("ascii") if m else "utf-8")


__all__ = ["ForumServer", "LoggedRequest", "Behaviour", "normalise_path", "PER_PAGE"]
