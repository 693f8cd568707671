"""Bytes of saved/fetched thread pages → Page (one page) and CombatHistory (a whole thread)."""
from __future__ import annotations

import codecs
import re
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from lxml import etree

from engine.fastdata import evolve
from engine.gcpause import collector_paused
from engine.history import CombatHistory, Post, Registry, Thread
from scraper.errors import NotAThread, ParseError, ScrapeError
from scraper.platforms.base import Page, detect_platform, host_of, html_parser, read_html
from scraper.platforms.config import ForumConfig, ForumConfigSet, resolve_config
from scraper.platforms.forumotion import pair_gm_posts

ConfigArg = ForumConfig | ForumConfigSet | Mapping[str, Any] | str | None

# WHATWG encoding labels that mean windows-1252 (an "iso-8859-1" page is decoded as cp1252).
_CP1252_LABELS = {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "ascii", "us-ascii", "iso_8859-1",
                  "iso-ir-100", "cp819", "ibm819", "windows-1252", "cp1252", "x-cp1252", "csisolatin1"}
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I)
# Plain lxml.etree parser: lxml.html's per-element Python class lookup costs more than the parse itself.
# collect_ids=False: nothing looks elements up by id through libxml2's hash, and filling it costs ~10%.
# huge_tree: nesting up to 2048 levels (read_html refuses a page nested deeper rather than losing its end).
_UTF8_PARSER = html_parser(collect_ids=False)


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    # Repair a mixed page: a byte invalid as UTF-8 is read as windows-1252 (what old forum posts used).
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    return bad.decode("cp1252", errors="replace"), exc.end


codecs.register_error("arbitro-cp1252", _cp1252_fallback)


def _label(name: str | None) -> str | None:
    if not name:
        return None
    n = name.strip().strip("'\"").lower()
    if n in _CP1252_LABELS:
        return "cp1252"
    if n in ("utf8", "utf-8", "unicode-1-1-utf-8"):
        return "utf-8"
    try:
        return codecs.lookup(n).name
    except LookupError:
        return None


def decode_html(data: bytes, *, charset: str | None = None) -> tuple[str | None, str, bool]:
    """(text or None, encoding, repaired) of page bytes.

    Order: BOM, HTTP charset, <meta> in the first 1024 bytes, else UTF-8 when it decodes, else
    charset-normalizer's guess. Returns text None when the bytes are valid UTF-8 and UTF-8 was chosen
    (the parser reads the bytes directly: the hot path decodes nothing twice).
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", errors="arbitro-cp1252"), "utf-8", False
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), "utf-16", False
    enc = _label(charset)
    if enc is None:
        m = _META_CHARSET.search(data, 0, 1024)
        enc = _label(m.group(1).decode("ascii", "ignore")) if m else None
    if enc in (None, "utf-8"):
        try:
            data.decode("utf-8")
            return None, "utf-8", False
        except UnicodeDecodeError:
            pass
        if enc == "utf-8" or _mostly_utf8(data):
            return data.decode("utf-8", errors="arbitro-cp1252"), "utf-8", True
        enc = _guess(data)
    if enc == "cp1252":
        # Labelled single-byte but really UTF-8 (a common mislabel): trust the bytes.
        try:
            text = data.decode("utf-8")
            if any(b >= 0x80 for b in data[:200000]):
                return text, "utf-8", True
        except UnicodeDecodeError:
            pass
    try:
        return data.decode(enc), enc, False
    except (UnicodeDecodeError, LookupError):
        return data.decode(enc if enc else "cp1252", errors="replace"), enc or "cp1252", True


def _mostly_utf8(data: bytes) -> bool:
    """Some valid multi-byte UTF-8 sequences: the page is UTF-8 with a few stray single bytes."""
    return len(re.findall(rb"[\xc2-\xf4][\x80-\xbf]+", data[:200000])) >= 3


def _guess(data: bytes) -> str:
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(data[:200000]).best()
        if best is not None and best.encoding:
            return _label(best.encoding) or "cp1252"
    except Exception:  # the guess is optional; cp1252 is the web's default for unlabelled legacy pages
        pass
    return "cp1252"


def parse_document(data: bytes, *, charset: str | None = None) -> etree._Element:
    """lxml tree of page bytes (decoded per WHATWG); NotAThread when nothing is there."""
    if not isinstance(data, (bytes, bytearray)):
        raise ParseError("la pagina deve essere bytes")
    data = bytes(data)
    if b"\x00" in data:
        data = data.replace(b"\x00", b"")
    if not data.strip():
        raise NotAThread("pagina vuota")
    text, _enc, _repaired = decode_html(data, charset=charset)
    try:
        doc = read_html(data if text is None else text.encode("utf-8"), _UTF8_PARSER)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
        raise NotAThread(f"pagina non leggibile come HTML: {exc}") from exc
    if doc is None:
        raise NotAThread("pagina vuota")
    return doc


def _looks_json(data: bytes, url: str) -> bool:
    head = data.lstrip()[:1]
    return head in (b"{", b"[") or urlsplit(url).path.endswith("api.php") and head != b"<"


def _now(fetched_at: str | datetime | None) -> datetime | None:
    if fetched_at is None:
        return None
    if isinstance(fetched_at, datetime):
        return fetched_at if fetched_at.tzinfo else fetched_at.replace(tzinfo=timezone.utc)
    try:
        dt = datetime.fromisoformat(str(fetched_at).replace("Z", "+00:00"))
    except ValueError as exc:
        raise ParseError(f"data di download non valida: {fetched_at!r}") from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def parse_page(data: bytes, url: str, *, platform: str = "auto", config: ConfigArg = None,
               fetched_at: str | datetime | None = None, charset: str | None = None) -> Page:
    """One thread page (HTML, or ForumFree api.php JSON) → Page. Raises only ScrapeError subclasses.

    `fetched_at` is the fetch time ("Oggi"/"Ieri" are relative to it); `charset` the HTTP header's.
    """
    # A page's reading makes tens of thousands of objects and no reference cycle worth collecting at once:
    # the cyclic collector's passes over them were a fifth of the parse (`bench/bench_parse.py --collector-on`)
    with collector_paused():
        return _parse_page(data, url, platform=platform, config=config, fetched_at=fetched_at, charset=charset)


def _parse_page(data: bytes, url: str, *, platform: str, config: ConfigArg, fetched_at: str | datetime | None,
                charset: str | None) -> Page:
    try:
        cfg = resolve_config(config, host_of(url))
        forced = platform if platform and platform != "auto" else cfg.platform
        now = _now(fetched_at)
        if isinstance(data, (bytes, bytearray)) and _looks_json(bytes(data), url):
            from scraper.platforms.forumfree import ForumFree

            if forced not in ("auto", "forumfree"):
                raise NotAThread("una risposta JSON è letta solo come api.php di ForumFree")
            text, _, _ = decode_html(bytes(data), charset=charset or "utf-8")
            page = ForumFree().parse_api(text if text is not None else bytes(data).decode("utf-8"), url, cfg, now=now)
        else:
            doc = parse_document(data, charset=charset)
            adapter = detect_platform(doc, url, forced)
            page = adapter.parse(doc, url, cfg, now=now)
        posts = pair_gm_posts(page.posts, cfg)
        return evolve(page, posts=posts, fetched_at=now.astimezone(timezone.utc).isoformat() if now else None)
    except ScrapeError:
        raise
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, etree.LxmlError, RecursionError) as exc:
        raise ParseError(f"pagina non interpretabile ({type(exc).__name__}: {exc})") from exc


def parse_pages(pages: Sequence[tuple[bytes, str]], *, platform: str = "auto", config: ConfigArg = None,
                fetched_at: str | datetime | None = None, registry: Registry | None = None) -> CombatHistory:
    """Pages of one thread → CombatHistory: page order, posts deduplicated by id (the later fetch wins,
    in its first position), Game-Master dice posts paired across pages, Post.character set."""
    if not pages:
        raise ParseError("nessuna pagina da leggere")
    parsed = [parse_page(data, url, platform=platform, config=config, fetched_at=fetched_at) for data, url in pages]
    parsed.sort(key=lambda p: p.page)
    return history_from_pages(parsed, config=config, fetched_at=fetched_at, registry=registry)


def history_from_pages(parsed: Sequence[Page], *, config: ConfigArg = None, fetched_at: str | datetime | None = None,
                       registry: Registry | None = None) -> CombatHistory:
    """Already parsed pages of one thread, in thread order → CombatHistory (what parse_pages does after parsing:
    a crawl that has parsed each page as it came reuses them instead of parsing every page twice)."""
    if not parsed:
        raise ParseError("nessuna pagina da leggere")
    tids = {p.thread_id for p in parsed if p.thread_id}
    if len(tids) > 1:
        raise ParseError(f"le pagine appartengono a discussioni diverse: {', '.join(sorted(tids))}")
    by_id: dict[str, Post] = {}
    for page in parsed:
        for post in page.posts:
            by_id[post.id] = post  # dicts keep the first insertion position
    first = parsed[0]
    cfg = resolve_config(config, first.host)
    posts = pair_gm_posts(tuple(by_id.values()), cfg)
    posts = assign_characters(posts, registry)
    now = _now(fetched_at) or datetime.now(timezone.utc)
    thread = Thread(
        url=first.thread_url or (first.page_urls[0] if first.page_urls else first.url),
        platform=first.platform,
        host=first.host,
        thread_id=first.thread_id,
        title=next((p.title for p in parsed if p.title), None),
        pages=max([p.page_count or p.page for p in parsed]),
        fetched_at=now.astimezone(timezone.utc).isoformat(),
        skin=first.skin,
    )
    return CombatHistory(thread=thread, posts=posts, registry=registry or Registry())


def assign_characters(posts: Iterable[Post], registry: Registry | None = None) -> tuple[Post, ...]:
    """Post.character: the schema's name, else the sheet link's character, else the registry's character
    of that player, else the author's usual character in the thread, else (players only) the author."""
    posts = tuple(posts)
    by_sheet: dict[str, str] = {}
    by_author: dict[str, Counter[str]] = {}
    for p in posts:
        if p.character:
            by_author.setdefault(p.author, Counter())[p.character] += 1
            if p.schema is not None and p.schema.sheet_url:
                by_sheet.setdefault(p.schema.sheet_url, p.character)
    players: dict[str, str] = {}
    if registry is not None:
        for ch in registry.characters.values():
            if ch.player:
                players.setdefault(ch.player, ch.name)
            if ch.sheet_url:
                by_sheet.setdefault(ch.sheet_url, ch.name)
    out = []
    for p in posts:
        if p.character or p.role != "player":
            out.append(p)
            continue
        name = None
        if p.schema is not None and p.schema.sheet_url:
            name = by_sheet.get(p.schema.sheet_url)
        if name is None:
            name = players.get(p.author)
        if name is None and p.author in by_author:
            name = by_author[p.author].most_common(1)[0][0]
        out.append(replace(p, character=name or p.author or None))
    return tuple(out)


__all__ = ["parse_page", "parse_pages", "history_from_pages", "parse_document", "decode_html", "assign_characters"]
