"""The crawl: a thread URL (or saved pages of one thread) → CombatHistory, with pagination, re-scrape and sheets."""
from __future__ import annotations

import codecs
import hashlib
import html
import pathlib
import re
from dataclasses import dataclass, replace
from datetime import datetime, time, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import parse_qsl, urljoin, urlsplit, urlunsplit

from engine.history import CombatHistory, Registry

from .charset import charset_from_content_type
from .errors import (BlockedByRobots, FetchFailed, HostNotAllowed, NotAThread, PageTooLarge, ParseError, ScrapeError,
                     os_error_text)
from .fetch import Fetcher, FetchResult
from .policy import FetchPolicy
from .links import origin, sheet_key, sheet_url

Progress = Callable[[int, int, str], None]

MAX_PAGES = 2000  # a thread longer than this is a pagination loop, not a fight
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


class BadSource(ScrapeError):
    """The sources given to scrape() are not one thread URL nor readable saved pages of one thread."""

    code = "bad_source"


class SourceNotFound(BadSource):
    """A saved page named as a source does not exist (the same code `arbitro audit` gives a missing file)."""

    code = "not_found"
    default_message = "sorgente non valida: serve l'URL di una discussione o le pagine salvate di una discussione"


class BadSavedAt(BadSource):
    """The save time given for saved pages (--saved-at) is not an ISO 8601 date, or is given for a URL."""

    code = "bad_saved_at"
    default_message = "data di salvataggio non valida: serve una data ISO 8601 (es. 2026-11-09T12:00+01:00)"


@dataclass(frozen=True)
class PageRecord:
    """How one thread page was obtained in a crawl."""

    index: int  # 1-based position in the thread
    url: str  # as requested (or the file's URI)
    final_url: str  # after redirects
    status: int
    not_modified: bool  # the server answered 304: the cached copy was used
    from_cache: bool
    sha256: str  # of the page bytes
    changed: bool  # differs from the previous crawl (without one: anything but a 304)


@dataclass(frozen=True)
class SheetRecord:
    """What became of one sheet link: outcome is "ok", "missing" (404/410), "forbidden" (401/403),
    "unavailable" (another 4xx but 408/429), "blocked" (robots.txt), "other_host" (not followed, or redirected
    off the thread's host: not read), "refused" (host/address not allowed) or "unreadable" (parse error, e.g.
    PageTooDeep)."""

    url: str
    outcome: str
    characters: tuple[str, ...] = ()
    sha256: str | None = None
    not_modified: bool = False
    message: str | None = None


@dataclass(frozen=True)
class CrawlResult:
    """A crawl's history plus what the server needs to store re-scrapes cheaply."""

    history: CombatHistory
    pages: tuple[PageRecord, ...]
    sheets: tuple[SheetRecord, ...] = ()
    section: str | None = None  # the forum section page 1 says the thread is in (picks the ruleset)

    @property
    def changed_pages(self) -> tuple[int, ...]:
        return tuple(p.index for p in self.pages if p.changed)

    @property
    def first_changed_page(self) -> int | None:
        return min(self.changed_pages, default=None)

    @property
    def page_hashes(self) -> dict[str, str]:
        """final URL → sha256 of the page bytes; pass it back as `previous` to tell what changed."""
        return {p.final_url: p.sha256 for p in self.pages}

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict
        return {"pages": [asdict(p) for p in self.pages], "sheets": [asdict(s) for s in self.sheets]}


def scrape(sources: str | Sequence[str], *, platform: str = "auto", config: Any = None,
           fetcher: Fetcher | None = None, registry_file: str | pathlib.Path | None = None,
           follow_sheets: bool = True, progress: Progress | None = None, use_api: bool = False,
           saved_at: str | datetime | None = None, max_bytes: int | None = None) -> CombatHistory:
    """A thread URL, or saved pages (HTML, or ForumFree api.php JSON) of one thread → its CombatHistory.

    For a URL every page is fetched (conditionally, through the fetcher's cache), and each post schema's sheet
    link on the thread's host is followed once. Saved pages are read offline: their sheet links are followed
    only when a `fetcher` is given. A registry file, when given, wins over the sheets. Any page that cannot be
    fetched or read raises a ScrapeError subclass: no partial history is ever returned. `use_api` reads a
    ForumFree/ForumCommunity thread through its `api.php` JSON instead of the HTML pages.

    `saved_at` (saved pages only) is when the pages were saved: relative dates ("Oggi", "Ieri") are read
    against it and it becomes `thread.fetched_at`. Without it each file's own save date (see `saved_page_date`)
    or else its modification time is used. `thread.pages_read` lists the pages actually read: compare it with
    `thread.pages` (see `missing_pages`), saved pages may not be the whole thread.

    A saved file larger than `max_bytes` (default: the fetcher's `max_bytes`, as for a fetched page) is refused
    with PageTooLarge before it is read; a thread of more than `scraper.parse.MAX_POSTS` posts with TooManyPosts.
    The same page given twice is read once (a note in `thread.problems`); two different pages that both say
    they are page N are refused (see `read_saved_pages`)."""
    return crawl_thread(sources, platform=platform, config=config, fetcher=fetcher, registry_file=registry_file,
                        follow_sheets=follow_sheets, progress=progress, use_api=use_api, saved_at=saved_at,
                        max_bytes=max_bytes).history


def rescrape(previous: CrawlResult | CombatHistory, *, fetcher: Fetcher | None = None, platform: str | None = None,
             config: Any = None, registry_file: str | pathlib.Path | None = None, follow_sheets: bool = True,
             progress: Progress | None = None, page_hashes: Mapping[str, str] | None = None) -> CrawlResult:
    """Crawl a thread again; unchanged pages answer 304 (or hash the same) and are marked unchanged.

    `previous` is the last CrawlResult, or only its history (then `page_hashes`, as stored from
    `CrawlResult.page_hashes`, tells what changed; without them every page fetched with 200 counts as changed)."""
    history = previous.history if isinstance(previous, CrawlResult) else previous
    hashes = page_hashes if page_hashes is not None else (
        previous.page_hashes if isinstance(previous, CrawlResult) else None)
    # the URL the last crawl really read from (the history keeps the forum's canonical https URL)
    url = previous.pages[0].final_url if isinstance(previous, CrawlResult) and previous.pages else history.thread.url
    if not _URL_RE.match(url or ""):
        raise BadSource("la cronologia precedente non viene da un URL: non si può aggiornare")
    if not isinstance(previous, CrawlResult) and history.thread.skin == "ff-api":
        url = forumfree_api_url(url)  # read again the way it was read: the thread's URL names its HTML pages
    return crawl_thread(url, platform=platform or history.thread.platform, config=config, fetcher=fetcher,
                        registry_file=registry_file, follow_sheets=follow_sheets, progress=progress,
                        previous=hashes)


def crawl_thread(sources: str | Sequence[str], *, platform: str = "auto", config: Any = None,
                 fetcher: Fetcher | None = None, registry_file: str | pathlib.Path | None = None,
                 follow_sheets: bool = True, progress: Progress | None = None,
                 previous: Mapping[str, str] | None = None, use_api: bool = False,
                 saved_at: str | datetime | None = None, max_bytes: int | None = None) -> CrawlResult:
    """scrape() with the record of how every page and sheet was obtained (see CrawlResult).

    `previous` maps page URLs to the sha256 of their bytes in an earlier crawl (CrawlResult.page_hashes)."""
    items = [sources] if isinstance(sources, (str, pathlib.PurePath)) else list(sources)
    items = [str(s) for s in items]
    if not items:
        raise BadSource("nessuna sorgente: serve l'URL di una discussione o dei file salvati")
    urls = [s for s in items if _URL_RE.match(s)]
    if urls and len(urls) != len(items):
        raise BadSource("non si possono mescolare URL e file salvati")
    if len(urls) > 1:
        raise BadSource("una discussione alla volta: indica l'URL di una sola pagina della discussione")
    saved = parse_saved_at(saved_at) if saved_at is not None else None
    if urls and saved is not None:
        raise BadSavedAt("la data di salvataggio vale solo per le pagine salvate: per un URL conta l'ora del "
                         "download")
    extra = _load_registry_file(registry_file)
    if urls and use_api:
        urls = [forumfree_api_url(urls[0])]
    if not urls:
        cap = max_bytes or (fetcher.policy.max_bytes if fetcher is not None else FetchPolicy().max_bytes)
        fetched, notes = _read_saved(_read_files(items, saved, cap), platform, config)
        # saved pages are read offline; their sheets are fetched only through a fetcher the caller gives
        return _finish(fetched, platform, config, fetcher if follow_sheets else None, extra, progress, previous,
                       notes)
    own = fetcher is None
    active = fetcher or Fetcher(FetchPolicy())
    try:
        fetched = _crawl_url(urls[0], active, platform, config, progress)
        return _finish(fetched, platform, config, active if follow_sheets else None, extra, progress, previous)
    finally:
        if own:
            active.close()


def forumfree_api_url(url: str) -> str:
    """`…/?t=123&st=15` → `…/api.php?t=123&st=15`: the same page of a ForumFree thread as JSON."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    tid = query.get("t", "")
    if not re.fullmatch(r"[0-9]+", tid) or parts.path not in ("", "/", "/index.php", "/api.php"):
        raise BadSource(f"api.php vale solo per le discussioni ForumFree/ForumCommunity (…/?t=<numero>): {url}")
    st = query.get("st", "0")
    return urlunsplit((parts.scheme, parts.netloc, "/api.php", f"t={tid}&st={st if re.fullmatch(r'[0-9]+', st) else 0}", ""))


# --- pages ------------------------------------------------------------------------------------------

@dataclass
class _Fetched:
    index: int
    url: str
    result: FetchResult | None  # None for a saved file
    content: bytes  # as the parser gets them (see _bytes_for_parser); result.content is what was fetched
    final_url: str
    page: Any  # scraper.parse Page
    saved_at: datetime | None = None  # a saved file: when it was saved (relative dates are read against it)


def _parse_page(data: bytes, url: str, platform: str, config: Any, fetched_at: datetime | None = None) -> Any:
    from .parse import parse_page
    return parse_page(data, url, platform=platform, config=config, fetched_at=fetched_at)


def _crawl_url(url: str, fetcher: Fetcher, platform: str, config: Any, progress: Progress | None) -> list[_Fetched]:
    """Fetch the given page, then every page its pagination names (and any further page a later page names)."""
    first = fetcher.get(url)
    data = _bytes_for_parser(first)
    page = _parse_page(data, first.final_url, platform, config)
    platform = page.platform  # detection is done once; every page is read the same way
    fetched: dict[int, _Fetched] = {page.page: _Fetched(page.page, url, first, data, first.final_url, page)}
    posts = _PostCount(page)
    known: dict[int, str] = {}
    dead: set[int] = set()  # offsets the forum answered with a page already read
    _learn(known, page, first.final_url)
    _report(progress, fetched, known, first.final_url)
    while True:
        pending = sorted(i for i in known if i not in fetched and i not in dead)
        if not pending:
            last = fetched[max(fetched)].page
            nxt = getattr(last, "next_url", None)
            if nxt and max(fetched) + 1 not in known and not _same_page(nxt, fetched.values()):
                # a page without a page list still names the next one
                known[max(fetched) + 1] = _rebase(nxt, fetched[max(fetched)].final_url)
                continue
            break
        index = pending[0]
        if index > MAX_PAGES:
            raise NotAThread(f"la paginazione supera {MAX_PAGES} pagine: non sembra una discussione")
        result = fetcher.get(known[index])
        data = _bytes_for_parser(result)
        got = _parse_page(data, result.final_url, platform, config)
        if page.thread_id and got.thread_id and got.thread_id != page.thread_id:
            raise NotAThread(f"la pagina {index} ({result.final_url}) appartiene a un'altra discussione "
                             f"({got.thread_id} invece di {page.thread_id})")
        if got.page != index and got.page in fetched:
            # a forum that sends an offset past the end back to the last page: nothing new there
            dead.add(index)
            continue
        posts.add(got)  # a thread past the ceiling stops here, before its next page is fetched
        fetched[index] = _Fetched(index, known[index], result, data, result.final_url, got)
        _learn(known, got, result.final_url)
        _report(progress, fetched, known, result.final_url)
    missing = [i for i in range(1, max(fetched) + 1) if i not in fetched and i not in dead]
    if missing:
        raise FetchFailed(f"pagine della discussione non raggiungibili: {', '.join(map(str, missing))}", url=url)
    return [fetched[i] for i in sorted(fetched)]


def _learn(known: dict[int, str], page: Any, fetched_from: str) -> None:
    for i, u in enumerate(getattr(page, "page_urls", ()) or (), start=1):
        known.setdefault(i, _rebase(urljoin(fetched_from, u), fetched_from))
    count = getattr(page, "page_count", None)
    if count is not None and count < len(known):
        # the newest page list is the truth (a page can disappear when posts are deleted)
        for i in [i for i in known if i > max(count, page.page)]:
            known.pop(i)


def _rebase(url: str, fetched_from: str) -> str:
    """Adapters name pages by canonical `https://<host>/…` URLs; fetch them from the origin (scheme, port) the
    thread is actually being read from when the host is the same."""
    a, b = urlsplit(url), urlsplit(fetched_from)
    if a.hostname and a.hostname == b.hostname and (a.scheme, a.netloc) != (b.scheme, b.netloc):
        return urlunsplit((b.scheme, b.netloc, a.path, a.query, a.fragment))
    return url


def _same_page(url: str, fetched: Any) -> bool:
    key = _strip(url)
    return any(_strip(f.url) == key or _strip(f.final_url) == key for f in fetched)


def _report(progress: Progress | None, fetched: Mapping[int, _Fetched], known: Mapping[int, str], url: str) -> None:
    if progress is not None:
        progress(len(fetched), max(len(fetched), len(set(known) | set(fetched))), url)


class _PostCount:
    """The distinct posts read so far; TooManyPosts as soon as a page takes them past scraper.parse.MAX_POSTS."""

    def __init__(self, first: Any = None) -> None:
        self.ids: set[str] = set()
        if first is not None:
            self.add(first)

    def add(self, page: Any) -> None:
        from .parse import check_post_count

        self.ids.update(p.id for p in page.posts)
        check_post_count(len(self.ids))


@dataclass(frozen=True)
class SavedPage:
    """One saved page of a thread, as a caller has it: a file's bytes, or a page sent to the service."""

    data: bytes
    name: str  # how the user knows it, for messages: the file name, "pagina 2"
    url: str | None = None  # None: the URL the page says it came from (saved_page_url), else `fallback_url`
    fallback_url: str = ""
    saved_at: datetime | None = None  # None: the save date written in the page, if any


def read_file_capped(path: pathlib.Path, max_bytes: int, name: str | None = None) -> bytes:
    """A file's bytes, or PageTooLarge when it has more than `max_bytes` (read no further: a saved page of
    600 MB is refused as a fetched one is, not loaded)."""
    with path.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        exc = PageTooLarge(f"il file {name or path} supera il limite di {max_bytes} byte")
        exc.reason = "file"  # type: ignore[attr-defined]  # the command line names its option
        exc.max_bytes = max_bytes  # type: ignore[attr-defined]
        raise exc
    return data


def _read_files(paths: Sequence[str], saved_at: datetime | None, max_bytes: int) -> list[SavedPage]:
    out: list[SavedPage] = []
    for raw in paths:
        path = pathlib.Path(raw)
        try:
            data = read_file_capped(path, max_bytes, raw)
            # the given time, else the date the saving tool wrote in the page, else the file's mtime
            when = saved_at or saved_page_date(data) or _mtime(path)
        except FileNotFoundError:
            raise SourceNotFound(f"file non trovato: {raw}") from None
        except IsADirectoryError:
            raise BadSource(f"{raw} è una cartella, non una pagina salvata") from None
        except OSError as exc:
            raise BadSource("impossibile leggere " + os_error_text(exc, raw)) from None
        out.append(SavedPage(data, raw, fallback_url=path.resolve().as_uri(), saved_at=when))
    return out


def read_saved_pages(pages: Sequence[SavedPage], *, platform: str = "auto", config: Any = None,
                     fetcher: Fetcher | None = None, progress: Progress | None = None) -> CrawlResult:
    """Saved pages of one thread (files, or pages sent to the service) → CrawlResult: the one reading of saved
    pages, for `arbitro scrape`/`audit` and `POST /api/v1/audits {pages}` alike. Sheets are followed only through
    a `fetcher`. Pages of another thread, forum or platform are refused (BadSource)."""
    if not pages:
        raise BadSource("nessuna pagina da leggere")
    fetched, notes = _read_saved(pages, platform, config)
    return _finish(fetched, platform, config, fetcher, None, progress, None, notes)


def _read_saved(pages: Sequence[SavedPage], platform: str, config: Any) -> tuple[list[_Fetched], tuple[str, ...]]:
    """The pages parsed and put in thread order, with the notes on what was given twice.

    The same page given twice (the same bytes) is read once, with a note. Two different pages that both say
    they are page N (their pagination says so) are refused: which of the two is the thread is not ours to guess.
    Pages that do not say which they are (no pagination) keep the order given."""
    out: list[_Fetched] = []
    names: list[str] = []  # the name each page in `out` was given under
    given = platform
    seen: dict[bytes, int] = {}  # page bytes → position in `out`
    repeats: dict[int, list[str]] = {}  # position in `out` → the other names it was given under
    posts = _PostCount()
    placeholder: list[bool] = []  # the page's URL is the caller's fallback: its host says nothing
    for item in pages:
        if item.data in seen:
            repeats.setdefault(seen[item.data], []).append(item.name)
            continue
        own = item.url or saved_page_url(item.data)
        url = own or item.fallback_url
        try:
            page = _parse_page(item.data, url, platform, config, item.saved_at)
        except NotAThread:
            if not out or given != "auto":
                raise
            _refuse_other_platform(item.data, url, config, item.saved_at, item.name, out[0], names[0])
            raise
        if out:
            _refuse_other_thread(page, item.name, out[0].page, names[0], hosts=not (placeholder[0] or not own))
        posts.add(page)
        platform = page.platform if platform == "auto" else platform
        seen[item.data] = len(out)
        out.append(_Fetched(page.page, url, None, item.data, url, page, item.saved_at))
        names.append(item.name)
        placeholder.append(not own)
    notes = tuple(f"pagina {out[i].index}: data {1 + len(again)} volte ({', '.join([names[i], *again])}), "
                  f"letta una volta" for i, again in sorted(repeats.items()))
    by_index: dict[int, list[int]] = {}
    for i, f in enumerate(out):
        by_index.setdefault(f.index, []).append(i)
    if all(len(group) == 1 for group in by_index.values()):
        out.sort(key=lambda f: f.index)  # saved pages may come in any order (page10 before page2)
        return out, notes
    for index, group in sorted(by_index.items()):
        if len(group) > 1 and any(_says_its_number(out[i].page) for i in group):
            raise BadSource(f"due pagine diverse dicono di essere la pagina {index} della discussione: "
                            f"{names[group[0]]}, {names[group[1]]}")
    # the pages do not say which they are: the order given is the thread's order
    for position, f in enumerate(out, start=1):
        f.index = position
    return out, notes


def _says_its_number(page: Any) -> bool:
    """Whether a page says which page of its thread it is (a page list, a page count, an offset past the first)."""
    return bool(page.page_count is not None or page.page_urls or page.page > 1)


def _refuse_other_thread(page: Any, raw: str, first: Any, first_raw: str, *, hosts: bool = True) -> None:
    """BadSource when saved page `page` is not of the same thread as the first file's: one history is one thread.
    `hosts`: whether both pages' hosts are their own (not a caller's placeholder URL) and so can be compared."""
    if page.thread_id and first.thread_id and page.thread_id != first.thread_id:
        why = f"{raw} è della discussione {page.thread_id}, {first_raw} della {first.thread_id}"
    elif hosts and page.host and first.host and page.host != first.host:
        why = f"{raw} è del forum {page.host}, {first_raw} di {first.host}"
    elif not (page.thread_id and first.thread_id) and _title_key(page.title) and _title_key(first.title) \
            and _title_key(page.title) != _title_key(first.title):
        # a page that does not say its thread id: its title still names the thread
        why = f"{raw} è «{page.title}», {first_raw} «{first.title}»"
    else:
        return
    raise BadSource(f"le pagine non sono della stessa discussione: {why}")


_PAGE_SUFFIX = re.compile(r"\s*[-–—|:,(]?\s*(?:pagina|pag\.?|page)\s*\d+\)?\s*$", re.I)


def _title_key(title: str | None) -> str:
    """A thread title as pages compare it: case, spacing and a trailing "- Pagina 2" ignored."""
    return " ".join(_PAGE_SUFFIX.sub("", title or "").casefold().split())


def _refuse_other_platform(data: bytes, url: str, config: Any, when: datetime | None, raw: str, first: _Fetched,
                           first_raw: str) -> None:
    """BadSource when a saved page unreadable as the first file's platform is another platform's thread page."""
    try:
        other = _parse_page(data, url, "auto", config, when)
    except ScrapeError:
        return  # not a thread page of any platform: the caller's NotAThread says so
    if other.platform != first.page.platform:
        raise BadSource(f"le pagine non sono della stessa discussione: {raw} è una pagina {other.platform}, "
                        f"{first_raw} una pagina {first.page.platform}")


_SAVED_FROM = re.compile(rb"<!--\s*saved from url=\(\d+\)\s*(https?://[^\s>]+?)\s*-->", re.I)
_LINK_TAG = re.compile(rb"<(?:link|meta)\b[^>]*>", re.I)
_ATTR = re.compile(rb"""([a-z:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)


def saved_page_url(data: bytes) -> str | None:
    """The URL a saved page came from: the browser's `saved from url` note, `<link rel=canonical>`, `og:url`."""
    head = data[:65536]
    m = _SAVED_FROM.search(head)
    if m:
        return m.group(1).decode("ascii", "replace")
    for tag in _LINK_TAG.findall(head):
        attrs = {k.lower(): (a or b or c) for k, a, b, c in _ATTR.findall(tag)}
        rel = attrs.get(b"rel", b"").lower().split()
        value = attrs.get(b"href") if b"canonical" in rel else (
            attrs.get(b"content") if attrs.get(b"property", b"").lower() == b"og:url" else None)
        if value and re.match(rb"https?://", value):
            return html.unescape(value.decode("utf-8", "replace"))
    return None


# --- history, sheets, registry --------------------------------------------------------------------------

def _finish(fetched: list[_Fetched], platform: str, config: Any, fetcher: Fetcher | None, extra: Registry | None,
            progress: Progress | None, previous: Mapping[str, str] | None, notes: tuple[str, ...] = ()) -> CrawlResult:
    from .parse import history_from_pages

    saved = [f.saved_at for f in fetched if f.saved_at is not None]
    # saved pages: the newest save is the thread's time; a URL crawl: now
    fetched_at = _now_iso() if any(f.result is not None for f in fetched) or not saved else _iso(max(saved))
    registry: Registry | None = None
    sheets: tuple[SheetRecord, ...] = ()
    if fetcher is not None:
        registry, sheets = _follow_sheets(fetched, fetcher, progress)
    if extra is not None:
        registry = (registry or Registry()).merged(extra)  # the master's file wins over scraped sheets
    # the pages as read while crawling (each against its own fetch or save time), with the registry, so posts
    # get the characters of the sheets they link: no page is parsed twice
    history = history_from_pages([f.page for f in fetched], config=config, fetched_at=fetched_at, registry=registry)
    read = tuple(sorted({f.index for f in fetched}))
    history = replace(history, thread=replace(history.thread, pages_read=read,
                                              problems=history.thread.problems + notes))
    records = tuple(_page_record(f, previous) for f in fetched)
    return CrawlResult(history=history, pages=records, sheets=sheets, section=fetched[0].page.section)


def _mtime(path: pathlib.Path) -> datetime | None:
    try:
        moment = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    except (OverflowError, ValueError):
        return None
    # a nonsense mtime (a restored archive's 1970): the parser falls back to the current time
    return moment if _SANE_YEARS[0] <= moment.year <= _SANE_YEARS[1] else None


def _bytes_for_parser(result: FetchResult) -> bytes:
    """The page bytes, re-encoded as BOM + UTF-8 only when the HTTP charset says other than the page would:
    the transport's charset wins over a <meta> (WHATWG), and the parser takes bytes without headers."""
    ctype = result.headers.get("Content-Type") or ""
    header = charset_from_content_type(ctype)
    if not header or "json" in ctype.lower():
        return result.content
    from .parse import decode_html

    text, enc, _ = decode_html(result.content, charset=header)
    _, own, _ = decode_html(result.content)
    if enc == own:
        return result.content
    return codecs.BOM_UTF8 + (text if text is not None else result.content.decode("utf-8")).encode("utf-8")


def _page_record(f: _Fetched, previous: Mapping[str, str] | None) -> PageRecord:
    sha = f.result.sha256 if f.result is not None else hashlib.sha256(f.content).hexdigest()
    not_modified = bool(f.result and f.result.not_modified)
    if previous is not None:
        changed = (previous.get(f.final_url) or previous.get(f.url)) != sha
    else:
        changed = not not_modified
    return PageRecord(index=f.index, url=f.url, final_url=f.final_url, status=f.result.status if f.result else 200,
                      not_modified=not_modified, from_cache=bool(f.result and f.result.from_cache), sha256=sha,
                      changed=changed)


def _follow_sheets(fetched: list[_Fetched], fetcher: Fetcher,
                   progress: Progress | None) -> tuple[Registry, tuple[SheetRecord, ...]]:
    """Each distinct sheet link on the thread's host, once. A sheet that is gone or unreadable is recorded, not
    fatal (the engine then says which numbers it lacks); one that fails for a transient reason raises like a
    page does."""
    from .sheets import parse_sheet

    thread_origin = origin(fetched[0].final_url)
    links: dict[str, tuple[str, str]] = {}  # sheet key → (URL to fetch, the link as the first post wrote it)
    for f in fetched:
        for post in f.page.posts:
            link = post.schema.sheet_url if post.schema else None
            if link:
                absolute = sheet_url(urljoin(f.final_url, link))
                links.setdefault(sheet_key(absolute), (absolute, link))
    registry = Registry()
    records: list[SheetRecord] = []
    for n, (url, written) in enumerate(links.values(), start=1):
        if urlsplit(url).scheme not in ("http", "https") or origin(url) != thread_origin:
            records.append(SheetRecord(url, "other_host", message="scheda su un altro host: non seguita"))
            continue
        try:
            result = fetcher.get(url)
        except FetchFailed as exc:
            # a permanent refusal leaves the sheet out; a transient one (5xx, 408/429, timeout) fails the crawl
            if exc.status in (404, 410):
                records.append(SheetRecord(url, "missing", message=exc.message))
                continue
            if exc.status is not None and 400 <= exc.status < 500 and exc.status not in (408, 429):
                outcome = "forbidden" if exc.status in (401, 403) else "unavailable"
                records.append(SheetRecord(url, outcome, message=exc.message))
                continue
            raise
        except BlockedByRobots as exc:
            records.append(SheetRecord(url, "blocked", message=exc.message))
            continue
        except HostNotAllowed as exc:
            records.append(SheetRecord(url, "refused", message=exc.message))
            continue
        if progress is not None:
            progress(n, len(links), url)
        final = getattr(result, "final_url", None) or url
        if origin(final) != thread_origin:  # redirected off the thread's host: not this forum's sheet
            records.append(SheetRecord(url, "other_host", message=f"la scheda rimanda a un altro host ({final}): "
                                                                  "non letta"))
            continue
        try:
            # named by the link as the posts write it, so the parser matches posts to the sheet's character;
            # the HTTP charset wins over a <meta>, as for the thread's pages
            charset = charset_from_content_type((getattr(result, "headers", None) or {}).get("Content-Type"))
            sheet = parse_sheet(result.content, written if _URL_RE.match(written) else url, charset=charset)
        except ParseError as exc:
            records.append(SheetRecord(url, "unreadable", sha256=result.sha256, message=exc.message))
            continue
        registry = registry.merged(sheet)
        records.append(SheetRecord(url, "ok", tuple(sheet.characters), result.sha256, result.not_modified))
    return registry, tuple(records)


def _load_registry_file(path: str | pathlib.Path | None) -> Registry | None:
    if path is None:
        return None
    from .registry_file import load_registry

    p = pathlib.Path(path)
    if not p.is_file():
        raise BadSource(f"file del registro non trovato: {path}")
    return load_registry(p)


def _strip(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def _now_iso() -> str:
    return _iso(datetime.now(timezone.utc))


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# --- save times and completeness ------------------------------------------------------------------------

# save times outside these years are typos (and "Ieri" of 1 January of the year 1 does not exist)
_SANE_YEARS = (1995, 9000)


def parse_saved_at(value: str | datetime) -> datetime:
    """`--saved-at`: ISO 8601 → aware datetime. Without an offset the time is the machine's local time (the
    clock the page was saved with); a bare date means noon of that day, so "Oggi" falls on it in any timezone
    of the forums. Raises BadSavedAt."""
    try:
        if isinstance(value, datetime):
            moment = value
        else:
            text = str(value).strip()
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                moment = datetime.combine(datetime.fromisoformat(text).date(), time(12))
            else:
                moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" and text else text)
        moment = moment if moment.tzinfo else moment.astimezone()
        if not _SANE_YEARS[0] <= moment.astimezone(timezone.utc).year <= _SANE_YEARS[1]:
            raise ValueError("out of range")
    except (ValueError, IndexError, OverflowError, OSError):
        raise BadSavedAt(f"data di salvataggio non valida: {value!r} (serve ISO 8601, es. "
                         f"2026-11-09T12:00+01:00)") from None
    return moment


# SingleFile: `<!-- Page saved with SingleFile … saved date: Mon Nov 09 2026 10:30:00 GMT+0100 (…) -->`;
# Save Page WE: `<meta name="savepage-date" content="Mon Nov 09 2026 10:30:00 GMT+0100 (…)">`
_SINGLEFILE_DATE = re.compile(rb"<!--[^>]*?Page saved with SingleFile.*?saved date:\s*([^\r\n]+?)\s*(?:\r?\n|-->)",
                              re.I | re.S)
_JS_DATE = re.compile(r"(?:[A-Za-z]{3},?\s+)?([A-Za-z]{3})\s+(\d{1,2})\s+(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})\s*"
                      r"(?:GMT|UTC)\s*([+-])(\d{2}):?(\d{2})")
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}


def saved_page_date(data: bytes) -> datetime | None:
    """When a saved page was saved, if the saving tool wrote it in the page: SingleFile's `saved date:` note,
    Save Page WE's `<meta name="savepage-date">`, or `<meta name="arbitro:saved-at">` (ISO 8601). A page's
    own publication dates (`article:modified_time`, `<meta name=date>`) are not save times and are ignored."""
    head = data[:65536]
    found: bytes | None = None
    m = _SINGLEFILE_DATE.search(head)
    if m:
        found = m.group(1)
    else:
        for tag in _LINK_TAG.findall(head):
            attrs = {k.lower(): (a or b or c) for k, a, b, c in _ATTR.findall(tag)}
            if attrs.get(b"name", b"").lower() in (b"savepage-date", b"arbitro:saved-at") and attrs.get(b"content"):
                found = attrs[b"content"]
                break
    if not found:
        return None
    moment = _loose_date(html.unescape(found.decode("utf-8", "replace")))
    try:
        sane = moment is not None and _SANE_YEARS[0] <= moment.astimezone(timezone.utc).year <= _SANE_YEARS[1]
    except OverflowError:
        sane = False
    return moment if sane else None


def _loose_date(text: str) -> datetime | None:
    """A JavaScript `Date.toString()`, an RFC 2822 or an ISO 8601 date with its offset; None for anything else
    (a date without offset would be a guess)."""
    m = _JS_DATE.search(text)
    if m and m.group(1).lower() in _MONTHS:
        mon, day, year, hh, mm, ss, sign, oh, om = m.groups()
        offset = timedelta(hours=int(oh), minutes=int(om)) * (1 if sign == "+" else -1)
        try:
            return datetime(int(year), _MONTHS[mon.lower()], int(day), int(hh), int(mm), int(ss),
                            tzinfo=timezone(offset))
        except ValueError:
            return None
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        moment = None
    if moment is None:
        try:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment if moment.tzinfo else None


def missing_pages(history: CombatHistory) -> tuple[int, ...]:
    """Pages of the thread that were not read (from `thread.pages` and `thread.pages_read`); () when all were,
    or when the history does not record which pages were read (made before `pages_read` existed)."""
    read = set(history.thread.pages_read)
    if not read:
        return ()
    return tuple(i for i in range(1, max(history.thread.pages, max(read)) + 1) if i not in read)


def missing_pages_warning(history: CombatHistory) -> str | None:
    """The Italian warning `arbitro scrape`/`arbitro audit` print on stderr when pages are missing, else None."""
    missing = missing_pages(history)
    if not missing:
        return None
    read = history.thread.pages_read
    total = max(history.thread.pages, max(read))
    which = "la pagina" if len(missing) == 1 else "le pagine"
    got = "letta 1 pagina" if len(read) == 1 else f"lette {len(read)} pagine"
    return (f"attenzione: cronologia incompleta, {got} su {total} "
            f"({which} {', '.join(map(str, missing))} {'manca' if len(missing) == 1 else 'mancano'}): "
            f"{'i suoi post' if len(missing) == 1 else 'i loro post'} non ci sono e non sono controllati")


def history_warnings(history: CombatHistory) -> list[str]:
    """What `arbitro scrape`/`arbitro audit` print on stderr about a history: missing pages, then the doubts of
    the pages' reading (`thread.problems`)."""
    out = [w for w in (missing_pages_warning(history),) if w]
    out += [f"attenzione: lettura incerta, {doubt}" for doubt in history.thread.problems]
    return out


__all__ = ["BadSource", "SourceNotFound", "BadSavedAt", "CrawlResult", "PageRecord", "SheetRecord", "SavedPage", "crawl_thread", "rescrape",
           "scrape", "read_saved_pages", "read_file_capped",
           "saved_page_url", "saved_page_date", "parse_saved_at", "missing_pages", "missing_pages_warning",
           "history_warnings",
           "forumfree_api_url", "MAX_PAGES"]
