"""The JSON API (`/api/v1`): audits, stored threads, "your turn" hints, rulesets, the OpenAPI document."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from flask import Blueprint, Response, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from .errors import BadRequest, NotFound, ServiceError, TooLarge, Unprocessable
from .refresh import registry_from_request, run_replay
from .security import check_forum_url, client_key
from .storage import ThreadRecord, dumps

bp = Blueprint("api", __name__, url_prefix="/api/v1")

OPENAPI_PATH = Path(__file__).with_name("openapi.json")
PLATFORMS = ("auto", "forumfree", "forumotion", "phpbb", "generic")


def services() -> Any:
    return current_app.extensions["arbitro"]


def _json(body: str | bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    resp = Response(body, status=status, mimetype="application/json")
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


class UnsupportedMediaType(ServiceError):
    status = 415
    code = "unsupported_media_type"
    default_message = "il corpo della richiesta deve essere JSON in UTF-8 (Content-Type: application/json)"


def _body() -> dict[str, Any]:
    """The request's JSON object: refused before parsing when too large (413), not `application/json` (415) or
    nested deeper than `untrusted.MAX_DEPTH` (400 too_deep); 400 when not JSON or holding a lone surrogate."""
    from .untrusted import Refused, loads

    cap = current_app.config["MAX_CONTENT_LENGTH"]
    if request.content_length is not None and request.content_length > cap:
        raise TooLarge(details={"max_bytes": cap})
    charset = (request.mimetype_params.get("charset") or "utf-8").lower()
    if request.mimetype != "application/json" or charset not in ("utf-8", "utf8"):
        raise UnsupportedMediaType(details={"expected": "application/json",
                                            "found": request.headers.get("Content-Type") or None})
    try:
        raw = request.get_data(cache=True)  # a chunked body is cut at the cap (werkzeug raises 413 past it)
    except RequestEntityTooLarge:
        raise TooLarge(details={"max_bytes": cap}) from None
    try:
        data = loads(raw)
    except Refused as exc:
        raise BadRequest(exc.message, code=exc.code, details=exc.details) from None
    if not isinstance(data, dict):
        raise BadRequest("il corpo della richiesta deve essere un oggetto JSON", code="bad_json")
    return data


def _registry(value: Any) -> Any:
    """The request's registry, checked (a TOML text nested too deep is refused before it is parsed)."""
    from .untrusted import Refused, check_depth

    if isinstance(value, str):
        try:
            check_depth(value)
        except Refused as exc:
            raise BadRequest(exc.message, code=exc.code, details={**exc.details, "field": "registry"}) from None
    return registry_from_request(value)


def _explicit_ruleset(value: Any) -> str | None:
    """The ruleset a request names (validated), or None when it names none."""
    import engine

    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadRequest("ruleset deve essere una stringa", code="bad_ruleset", details={"field": "ruleset"})
    known = engine.available_rulesets()
    if value not in known:
        raise BadRequest(f"ruleset sconosciuto: {value}", code="unknown_ruleset",
                         details={"field": "ruleset", "known": sorted(known)})
    return value


def _ruleset_for_thread(url: str | None, host: str | None, section: str | None) -> str:
    """No ruleset in the request: the forum config's for the thread's host (and section), else the default."""
    from .config import forum_ruleset, host_of, section_from_url

    forums = services().refresher.forums
    found = forum_ruleset(forums, host or host_of(url), section or section_from_url(url))
    return found or services().cfg["default_ruleset"]


def _settings(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest("settings deve essere un oggetto", code="bad_setting", details={"field": "settings"})
    return value


# --- POST /audits ------------------------------------------------------------------------------

@bp.post("/audits")
def create_audit() -> Response:
    svc = services()
    body = _body()
    sources = [k for k in ("url", "pages", "history") if k in body]
    if len(sources) != 1:
        raise BadRequest("indica esattamente uno tra url, pages e history", code="bad_source",
                         details={"expected": ["url", "pages", "history"], "found": sources})
    unknown = sorted(set(body) - {"url", "pages", "history", "ruleset", "registry", "settings", "platform"})
    if unknown:
        raise BadRequest("campi sconosciuti nella richiesta", code="unknown_field", details={"fields": unknown})
    explicit = _explicit_ruleset(body.get("ruleset"))
    settings = _settings(body.get("settings"))
    registry_raw = body.get("registry")
    registry = _registry(registry_raw)  # validated before spending the client's quota
    svc.limiter.hit(client_key(request, svc.cfg["trust_proxy"]))

    if "url" in body:
        url = check_forum_url(body["url"], svc.cfg)
        ruleset = explicit or svc.refresher.ruleset_for_url(url, probe=True) or svc.cfg["default_ruleset"]
        return _audit_url(url, ruleset, settings, registry_raw)
    if "history" in body:
        if not isinstance(body["history"], dict):
            raise BadRequest("history deve essere un documento arbitro.history/1", code="bad_history",
                             details={"field": "history"})
        history: Any = body["history"]
        _check_posts(history.get("posts"))
        thread = history.get("thread") if isinstance(history.get("thread"), dict) else {}
        url, host = thread.get("url"), thread.get("host")
        ruleset = explicit or _ruleset_for_thread(url if isinstance(url, str) else None,
                                                  host if isinstance(host, str) else None, None)
    else:
        history, section = _parse_pages(body["pages"], body.get("platform", "auto"), want_section=explicit is None)
        ruleset = explicit or _ruleset_for_thread(history.thread.url, history.thread.host, section)
    audit = run_replay(history, ruleset, registry, settings)
    return _json(dumps(audit.to_dict()), headers={"X-Arbitro-Source": "request", "X-Arbitro-Ruleset": ruleset})


def _check_posts(posts: Any) -> None:
    """A history document's posts within the ceiling (scraper.parse.MAX_POSTS), as for pages read by the scraper."""
    from scraper.errors import ScrapeError
    from scraper.parse import check_post_count

    from .errors import from_scrape_error

    if isinstance(posts, list):
        try:
            check_post_count(len(posts))
        except ScrapeError as exc:
            raise from_scrape_error(exc) from None


def _parse_pages(pages: Any, platform: Any, *, want_section: bool = False) -> tuple[Any, str | None]:
    """The pages → a history, read as `arbitro scrape` reads saved files (scraper.crawl.read_saved_pages: same
    checks, same order, the same page given twice read once), with the forum config; and the section id of page
    1 when the forum config maps sections of that forum to rulesets and `want_section`."""
    from scraper.crawl import SavedPage, read_saved_pages
    from scraper.errors import ScrapeError

    from .config import forum_has_sections
    from .errors import from_scrape_error

    cfg = services().cfg
    if not isinstance(pages, list) or not pages:
        raise BadRequest("pages deve essere una lista non vuota di pagine HTML", code="bad_pages",
                         details={"field": "pages"})
    if len(pages) > cfg["max_pages"]:
        raise TooLarge("troppe pagine in una richiesta", code="too_many_pages",
                       details={"max": cfg["max_pages"], "found": len(pages)})
    if platform not in PLATFORMS:
        raise BadRequest("piattaforma sconosciuta", code="bad_platform",
                         details={"field": "platform", "known": list(PLATFORMS)})
    items: list[SavedPage] = []
    for i, page in enumerate(pages):
        if isinstance(page, str):
            html, url = page, None  # the page's own URL when it says it (canonical link, og:url)
        elif isinstance(page, dict) and isinstance(page.get("html"), str):
            html, url = page["html"], page.get("url")
            if url is not None and not isinstance(url, str):
                raise BadRequest("url di una pagina deve essere una stringa", code="bad_pages",
                                 details={"field": f"pages[{i}].url"})
        else:
            raise BadRequest("ogni pagina è un testo HTML o un oggetto {html, url}", code="bad_pages",
                             details={"field": f"pages[{i}]"})
        # a BOM makes the parser read UTF-8 whatever charset the page's own <meta> declares
        items.append(SavedPage(b"\xef\xbb\xbf" + html.encode("utf-8"), f"pages[{i}]", url=url or None,
                               fallback_url=f"http://localhost/pagina-{i + 1}"))
    forums = services().refresher.forums
    try:
        result = read_saved_pages(items, platform=platform, config=forums)
    except ScrapeError as exc:
        raise from_scrape_error(exc) from None
    history = result.history
    section = result.section if want_section and forum_has_sections(forums, history.thread.host) else None
    return history, section


def _audit_url(url: str, ruleset: str, settings: dict[str, Any], registry: Any) -> Response:
    svc = services()
    rec = svc.storage.find_thread(url, ruleset)
    if rec is None:
        rec = svc.storage.get_or_create_thread(url, ruleset, settings=settings, registry=registry)
    elif (settings or registry is not None) and (settings != rec.settings or registry != rec.registry):
        rec = svc.storage.update_thread_options(rec.id, settings=settings, registry=registry)
        rec = svc.storage.get_thread(rec.id)
    source = "store"
    headers: dict[str, str] = {}
    if rec.audit_id is None or rec.content_hash is None or svc.refresher.is_stale(rec):
        try:
            outcome = svc.refresher.refresh(rec.id)
        except Exception as exc:
            if hasattr(exc, "details") and rec.audit_id is not None:
                # the previous good audit is still there: say where
                exc.details.setdefault("thread_id", rec.id)
                exc.details.setdefault("stored_audit", f"/api/v1/threads/{rec.id}")
            raise
        rec = outcome.thread
        source = "refresh" if outcome.changed else "store"
        headers["X-Arbitro-Replayed"] = str(outcome.replayed)
        headers["X-Arbitro-Pages-Fetched"] = str(outcome.fetched)
        headers["X-Arbitro-Pages-Not-Modified"] = str(outcome.not_modified)
    stored = svc.storage.audit(rec.id)
    if stored is None:  # pragma: no cover - a successful refresh always stores an audit
        raise NotFound("audit non disponibile", code="audit_missing")
    headers.update({"X-Arbitro-Source": source, "X-Arbitro-Thread-Id": str(rec.id), "X-Arbitro-Ruleset": rec.ruleset,
                    "Location": f"/api/v1/threads/{rec.id}"})
    return _json(stored.raw, headers=headers)


# --- stored threads ------------------------------------------------------------------------------

class ResponseCache:
    """Encoded `/threads` answers (plain and gzip) per thread and representation (the whole audit, or one page's
    posts): a 1,000-post audit is ~2 MB of JSON, so readers get bytes prepared once per audit version and state,
    not a fresh read, encode and compress. `size` answers are kept, the least recently used go first; an answer
    made for another audit version or state of its thread is a miss. At most `max_bytes` are held, whatever the
    count (a whole 5,000-post audit is ~9 MB)."""

    def __init__(self, size: int, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[tuple[int, Any], tuple[tuple, bytes, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, thread_id: int, key: tuple, ids: Any = None) -> tuple[bytes, bytes] | None:
        with self._lock:
            item = self._items.get((thread_id, ids))
            if item is None or item[0] != key:
                return None
            self._items.move_to_end((thread_id, ids))
            return item[1], item[2]

    def put(self, thread_id: int, key: tuple, plain: bytes, gz: bytes, ids: Any = None) -> None:
        with self._lock:
            old = self._items.pop((thread_id, ids), None)
            if old is not None:
                self.bytes -= len(old[1]) + len(old[2])
            self._items[(thread_id, ids)] = (key, plain, gz)
            self.bytes += len(plain) + len(gz)
            while self._items and (len(self._items) > self.size or self.bytes > self.max_bytes):
                _, (_, p, g) = self._items.popitem(last=False)
                self.bytes -= len(p) + len(g)


def _response_cache() -> ResponseCache:
    ext = current_app.extensions
    if "arbitro_responses" not in ext:
        ext["arbitro_responses"] = ResponseCache(int(services().cfg["response_cache"]))
    return ext["arbitro_responses"]


MAX_PAGE_IDS = 200


def _page_ids(value: str | None) -> tuple[str, ...] | None:
    """`posts=600100,600110,…`: the posts of the page a reader has open (the answer is sized by the page, not the
    thread); None when absent."""
    if value is None:
        return None
    ids = tuple(dict.fromkeys(_norm_id(i.strip()) for i in value.split(",") if i.strip()))
    if not ids or len(ids) > MAX_PAGE_IDS or any(len(i) > 64 for i in ids):
        raise BadRequest(f"posts: da 1 a {MAX_PAGE_IDS} id di post separati da virgole", code="bad_posts",
                         details={"field": "posts", "max": MAX_PAGE_IDS})
    return ids


class _ParsedAudits:
    """The stored audits as parsed documents with an index of their posts, a few threads' worth, so a page's slice
    is cut without reading or scanning the whole audit on every page view (per process: only a cache, the database
    has the truth)."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.items: OrderedDict[Any, tuple[dict[str, Any], dict[str, int]]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, audit_id: Any, read: Callable[[], str]) -> tuple[dict[str, Any], dict[str, int]]:
        """The document of audit `audit_id` and {normalised post id: position}; `read()` gives its stored JSON,
        asked only when this process has not parsed that version yet."""
        with self.lock:
            hit = self.items.get(audit_id)
            if hit is not None:
                self.items.move_to_end(audit_id)
                return hit
        doc = json.loads(read())
        index = {_norm_id(str(p.get("id"))): i for i, p in enumerate(doc.get("posts") or [])}
        with self.lock:
            self.items[audit_id] = (doc, index)
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return doc, index


def _parsed_audits() -> _ParsedAudits:
    ext = current_app.extensions
    if "arbitro.parsed_audits" not in ext:
        ext["arbitro.parsed_audits"] = _ParsedAudits()
    return ext["arbitro.parsed_audits"]


_TRAILING_DIGITS = re.compile(r"(\d+)\s*$")


def _norm_id(post_id: str) -> str:
    """A post id as the userscript compares them (`ee600100`, `p600100` and `600100` are one post)."""
    m = _TRAILING_DIGITS.search(post_id)
    return m.group(1) if m else post_id


def _page_slice(doc: dict[str, Any], index: dict[str, int], ids: tuple[str, ...]) -> str:
    """The audit cut to the page: those posts' verdicts and states, the fighters' current state, the next turn, and
    what the reader needs to know the audit's extent (its last post, how many posts it has). `index`: the posts'
    positions by normalised id (a slice costs the page, not the thread)."""
    posts = doc.get("posts") or []
    at = sorted({index[i] for i in (_norm_id(i) for i in ids) if i in index})
    sliced = {**doc, "posts": [posts[i] for i in at],
              "page_of": {"posts": len(posts), "last_post": posts[-1]["id"] if posts else None,
                          "asked": len(ids)}}
    return dumps(sliced)


def _stored_audit(thread_id: int) -> str:
    stored = services().storage.audit(thread_id)
    if stored is None:  # pragma: no cover - audit_id set means the audit row exists
        raise NotFound("audit non disponibile", code="audit_missing")
    return stored.raw


def _thread_response(rec: ThreadRecord) -> Response:
    svc = services()
    ids = _page_ids(request.args.get("posts"))
    stale = svc.refresher.is_stale(rec)
    if stale:
        svc.refresher.refresh_in_background(rec.id)  # never waits: readers get the stored audit now
    refreshing = svc.refresher.is_refreshing(rec.id)
    if rec.audit_id is None:
        raise NotFound("discussione registrata ma ancora senza audit", code="thread_not_ready",
                       details={"thread_id": rec.id, "refreshing": refreshing, "last_error": rec.last_error})
    gz_ok = "gzip" in request.accept_encodings
    # one ETag per representation: the gzip body is a different byte sequence
    etag = f'{rec.audit_id}-{int(refreshing)}-{int(stale)}-{(rec.last_error or {}).get("at", "")}' + ("-gz" if gz_ok else "")
    if ids is not None:  # one page's representation: its own validator
        etag += "-p" + hashlib.sha256(",".join(ids).encode()).hexdigest()[:12]
    if request.if_none_match.contains(etag):
        resp = Response(status=304)
        resp.set_etag(etag)
        return resp
    key = (rec.audit_id, refreshing, stale, rec.fetched_at, rec.checked_at, (rec.last_error or {}).get("at"))
    cache = _response_cache()
    hit = cache.get(rec.id, key, ids)
    if hit is None:
        meta = dumps({"thread_id": rec.id, "url": rec.url, "ruleset": rec.ruleset, "title": rec.title,
                      "fetched_at": rec.fetched_at, "checked_at": rec.checked_at, "stale": stale,
                      "refreshing": refreshing, "last_error": rec.last_error})
        if ids is None:
            audit_json = _stored_audit(rec.id)  # stored JSON sent as-is
        else:
            audit_json = _page_slice(*_parsed_audits().get(rec.audit_id, lambda: _stored_audit(rec.id)), ids)
        plain = (meta[:-1] + ',"audit":' + audit_json + "}").encode("utf-8")
        hit = (plain, gzip.compress(plain, compresslevel=5, mtime=0))
        cache.put(rec.id, key, *hit, ids=ids)
    plain, gz = hit
    if gz_ok:
        resp = _json(gz, headers={"Content-Encoding": "gzip"})
    else:
        resp = _json(plain)
    resp.headers["X-Arbitro-Thread-Id"] = str(rec.id)
    resp.headers.add("Vary", "Accept-Encoding")
    resp.set_etag(etag)
    return resp


@bp.get("/threads")
def thread_by_url() -> Response:
    svc = services()
    url = request.args.get("url")
    if not url:
        raise BadRequest("manca il parametro url", code="bad_url", details={"field": "url"})
    url = check_forum_url(url, svc.cfg)
    create = _flag(request.args.get("create"), "create")
    explicit = _explicit_ruleset(request.args.get("ruleset"))
    # the forum config's ruleset, when it is known without reading the forum; else any stored audit of the URL
    ruleset = explicit or svc.refresher.ruleset_for_url(url, probe=False)
    rec = svc.storage.find_thread(url, ruleset)
    if rec is not None and rec.audit_id is not None:
        return _thread_response(rec)
    if rec is not None:
        negative = svc.refresher.negative(rec)
        if negative is not None:
            # not a fight / not a thread, a moment ago: answered from the store, the forum is not asked again
            raise Unprocessable(negative.get("message") or "non è una discussione analizzabile",
                                code=negative.get("code") or "unprocessable",
                                details={**(negative.get("details") or {}), "thread_id": rec.id, "cached": True,
                                         "checked_at": negative.get("at")})
        if svc.refresher.is_refreshing(rec.id):
            return _pending(rec)
    if not create:
        if rec is not None:
            raise NotFound("discussione registrata ma ancora senza audit", code="thread_not_ready",
                           details={"thread_id": rec.id, "refreshing": False, "last_error": rec.last_error})
        raise NotFound("discussione non ancora analizzata", code="thread_not_stored",
                       details={"url": url, "create": "GET /api/v1/threads?url=…&create=1 o POST /api/v1/audits"})
    # first view of this thread: its first audit, counted like any audit creation
    svc.limiter.hit(client_key(request, svc.cfg["trust_proxy"]))
    if rec is None:
        ruleset = ruleset or svc.refresher.ruleset_for_url(url, probe=True) or svc.cfg["default_ruleset"]
        rec = svc.storage.get_or_create_thread(url, ruleset)
    outcome = svc.refresher.refresh_and_wait(rec.id, float(svc.cfg["create_wait"]))
    if outcome is None:
        return _pending(rec)
    return _thread_response(outcome.thread)


# --- POST /threads/provisional --------------------------------------------------------------------

MAX_PAGE_POSTS = 200  # a forum page shows 10–50 posts; a few page sizes more is never a real page
_NOT_POST_MARKUP = ("script", "style", "form", "input", "textarea", "select", "button", "iframe", "object")


@bp.post("/threads/provisional")
def provisional_page() -> Response:
    """The page a reader has open, audited at once from its posts' own markup (engine.provisional: only what the
    page alone can tell), while the thread's full polite crawl starts or goes on; Retry-After says when to ask
    `GET /threads?url=…` for the full audit."""
    from engine.provisional import replay_page

    svc = services()
    body = _body()
    unknown = sorted(set(body) - {"url", "posts", "page", "pages", "ruleset", "platform"})
    if unknown:
        raise BadRequest("campi sconosciuti nella richiesta", code="unknown_field", details={"fields": unknown})
    page_url = check_forum_url(body.get("url"), svc.cfg)
    posts = body.get("posts")
    if not isinstance(posts, list) or not posts or not all(isinstance(p, str) for p in posts):
        raise BadRequest("posts deve essere una lista non vuota del codice HTML dei post della pagina",
                         code="bad_pages", details={"field": "posts"})
    if len(posts) > MAX_PAGE_POSTS:
        raise TooLarge("troppi post per una pagina", code="too_many_posts",
                       details={"max": MAX_PAGE_POSTS, "found": len(posts)})
    page, pages = body.get("page"), body.get("pages")
    for name, value in (("page", page), ("pages", pages)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 10_000):
            raise BadRequest(f"{name} deve essere un numero di pagina", code="bad_pages", details={"field": name})
    explicit = _explicit_ruleset(body.get("ruleset"))
    svc.limiter.hit(client_key(request, svc.cfg["trust_proxy"]))
    # only the posts, in a page of their own: nothing of the reader's page (forms, scripts, tokens) is read
    history, _ = _parse_pages([{"html": _post_page(posts), "url": page_url}], body.get("platform", "auto"))
    ruleset = explicit or svc.refresher.ruleset_for_url(page_url, probe=False) or _recognised(history)
    if page is None:  # the page's number as its URL says it (st=, start=), read by the platform adapter
        page = history.posts[0].page if history.posts else 1
    audit = replay_page(history, ruleset, None, page=page, pages=pages)
    # the full audit: this thread's polite crawl, started now (or already running) and answered by GET /threads
    thread_url = history.thread.url or page_url
    rec = svc.storage.find_thread(thread_url, ruleset) or svc.storage.get_or_create_thread(thread_url, ruleset)
    if rec.audit_id is None or svc.refresher.is_stale(rec):
        svc.refresher.refresh_in_background(rec.id)
    interval = float(svc.cfg.get("fetch_min_interval", 1.0))
    retry = max(1, int(round((pages or 1) * interval + 1)))
    doc = audit.to_dict()
    doc["provisional"].update({"thread_id": rec.id, "full": f"/api/v1/threads/{rec.id}", "retry_after": retry})
    return _json(dumps(doc), headers={"Retry-After": str(retry), "Cache-Control": "no-store",
                                      "X-Arbitro-Thread-Id": str(rec.id), "X-Arbitro-Ruleset": ruleset,
                                      "X-Arbitro-Source": "provisional"})


def _post_page(posts: list[str]) -> str:
    """The posts' markup as a page of its own, whatever else the client sent inside them taken out."""
    from lxml import etree, html as lxml_html

    out = []
    for markup in posts:
        try:
            fragments = lxml_html.fragments_fromstring(markup)
        except (etree.ParserError, ValueError):
            raise BadRequest("il codice HTML di un post non è leggibile", code="bad_pages",
                             details={"field": "posts"}) from None
        for el in fragments:
            if isinstance(el, str):
                continue
            for bad in el.xpath("descendant-or-self::*[" + " or ".join(f"self::{t}" for t in _NOT_POST_MARKUP) + "]"):
                if bad is el:
                    break
                bad.drop_tree()
            else:
                out.append(etree.tostring(el, encoding="unicode", method="html"))
    return "<!doctype html><html><head><meta charset=\"utf-8\"></head><body>" + "".join(out) + "</body></html>"


def _recognised(history: Any) -> str:
    """No config decides: the ruleset the posts' conventions clearly follow, else the default."""
    import engine
    from engine.recognise import recognise

    seen = recognise(history, {rid: rs.conventions for rid, rs in engine.available_rulesets().items()
                               if getattr(rs, "conventions", None) is not None})
    return seen.ruleset or services().cfg["default_ruleset"]


def _flag(value: str | None, field: str) -> bool:
    if value is None or value.lower() in ("", "0", "false", "no"):
        return False
    if value.lower() in ("1", "true", "yes"):
        return True
    raise BadRequest(f"{field} deve essere 1 o 0", code="bad_flag", details={"field": field, "found": value})


def _pending(rec: ThreadRecord) -> Response:
    """202: the first audit of this thread is being made; ask again after Retry-After seconds."""
    retry = max(1, int(round(float(services().cfg["create_wait"]) / 2)) or 1)
    body = dumps({"thread_id": rec.id, "url": rec.url, "ruleset": rec.ruleset, "refreshing": True,
                  "retry_after": retry, "audit": None})
    return _json(body, status=202, headers={"Retry-After": str(retry), "Location": f"/api/v1/threads/{rec.id}",
                                            "X-Arbitro-Thread-Id": str(rec.id), "Cache-Control": "no-store"})


def _get_thread(thread_id: int) -> ThreadRecord:
    from .storage import ThreadNotFound

    try:
        return services().storage.get_thread(thread_id)
    except ThreadNotFound:
        raise NotFound("discussione sconosciuta", code="thread_not_found", details={"thread_id": thread_id}) from None


@bp.get("/threads/<int:thread_id>")
def thread_by_id(thread_id: int) -> Response:
    return _thread_response(_get_thread(thread_id))


@bp.get("/threads/<int:thread_id>/next")
def next_hint(thread_id: int) -> Response:
    import engine

    svc = services()
    rec = _get_thread(thread_id)
    audit = svc.refresher.engine_audit(rec.id)
    if audit is None:
        raise NotFound("discussione ancora senza audit", code="thread_not_ready", details={"thread_id": rec.id})
    character = request.args.get("character") or None
    if character is None:
        hint = audit.next
    else:
        if character not in audit.characters:
            raise NotFound(f"personaggio sconosciuto: {character}", code="unknown_character",
                           details={"character": character, "known": sorted(audit.characters)})
        rs = engine.get_ruleset(rec.ruleset)
        if audit.snapshots:
            state = audit.snapshots[-1].state
        else:
            state = rs.initial_state(audit.thread, registry_from_request(rec.registry) or engine.Registry(),
                                     engine.resolve_settings(rs, rec.settings))
        hint = rs.next_hint(state, character)
    return _json(dumps({"thread_id": rec.id, "character": character, "fetched_at": rec.fetched_at, "next": hint}))


# --- rulesets and the API's own description -----------------------------------------------------------

@bp.get("/rulesets")
def rulesets() -> Response:
    import engine

    default = services().cfg["default_ruleset"]
    out = []
    for rid, rs in engine.available_rulesets().items():
        out.append({
            "id": rid, "title": getattr(rs, "title", rid), "default": rid == default,
            "settings": [{"name": s.name, "default": s.default, "description": s.description, "ours": s.ours,
                          "required": s.required} for s in getattr(rs, "settings", ())],
        })
    return _json(dumps({"default": default, "rulesets": out}))


@bp.get("/openapi.json")
def openapi() -> Response:
    return _json(OPENAPI_PATH.read_bytes())


def openapi_document() -> dict[str, Any]:
    return json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))
