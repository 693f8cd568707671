"""Bytes of saved/fetched thread pages → Page (one page) and CombatHistory (a whole thread)."""
from __future__ import annotations

import codecs
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from lxml import etree

from engine.gcpause import collector_paused
from engine.history import CombatHistory, Post, Registry, Thread
from scraper.charset import decode_text, detect_encoding  # the one decoder of page bytes (docs/fetching.md)
from scraper.errors import NotAThread, ParseError, ScrapeError, TooManyPosts
from scraper.links import sheet_link_key
from scraper.platforms.base import Page, host_of, html_parser, read_html
from scraper.platforms.detect import detect_platform
from scraper.platforms.config import ForumConfig, ForumConfigSet, resolve_config
from scraper.platforms.forumotion import pair_gm_posts

ConfigArg = ForumConfig | ForumConfigSet | Mapping[str, Any] | str | None

# Plain lxml.etree parser: lxml.html's per-element Python class lookup costs more than the parse itself.
# collect_ids=False: nothing looks elements up by id through libxml2's hash, and filling it costs ~10%.
# huge_tree: nesting up to 2048 levels (read_html refuses a page nested deeper rather than losing its end).
_UTF8_PARSER = html_parser(collect_ids=False)

# The most posts one thread may have (docs/service.md "Limits"): ten times the longest fight benchmarked (1,000
# posts); the replay keeps a state per post, so a page of 100,000 made-up posts is refused, not replayed.
MAX_POSTS = 10_000


def check_post_count(count: int) -> None:
    """TooManyPosts when `count` is beyond MAX_POSTS."""
    if count > MAX_POSTS:
        raise TooManyPosts(f"la discussione ha {count} messaggi (al massimo {MAX_POSTS}): non sembra un combattimento")


def decode_html(data: bytes, *, charset: str | None = None) -> tuple[str | None, str, bool]:
    """(text or None, encoding, repaired) of page bytes, by scraper.charset's rules (one decoder for fetch and parse):
    BOM, then `charset` (the HTTP header's), then a <meta> in the first 1024 bytes, then UTF-8 if the bytes are
    valid UTF-8, else windows-1252; mixed pages repaired as `scraper.charset.decode_text` does (stray 1252 bytes in
    UTF-8, UTF-8 pasted into 1252). Text None when the bytes are valid UTF-8 read as UTF-8: the parser takes the
    bytes themselves (the hot path decodes nothing)."""
    enc = detect_encoding(data, f"text/html; charset={charset}" if charset else None)
    if enc == "utf-8" and not data.startswith(codecs.BOM_UTF8):
        try:
            data.decode("utf-8")
            return None, enc, False
        except UnicodeDecodeError:
            return decode_text(data, enc), enc, True
    text = decode_text(data, enc).lstrip("\ufeff")
    if enc == "windows-1252":
        # repaired: pasted UTF-8 read as UTF-8 (a plain 1252 page decodes to the same text byte by byte)
        return text, enc, len(text) != len(data)
    return text, enc, False


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
        check_post_count(len(page.posts))
        posts = pair_gm_posts(page.posts, cfg)
        return replace(page, posts=posts, fetched_at=now.astimezone(timezone.utc).isoformat() if now else None)
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
    check_post_count(len(by_id))
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
        problems=tuple(f"pagina {p.page}: {doubt}" for p in parsed for doubt in p.problems),
    )
    return CombatHistory(thread=thread, posts=posts, registry=registry or Registry())


def assign_characters(posts: Iterable[Post], registry: Registry | None = None) -> tuple[Post, ...]:
    """Post.character: the schema's name, else the sheet link's character, else the registry's character
    of that player, else the character the author's other posts in the thread name, else None."""
    posts = tuple(posts)
    by_sheet: dict[str, str] = {}
    by_author: dict[str, Counter[str]] = {}
    for p in posts:
        if p.character:
            by_author.setdefault(p.author, Counter())[p.character] += 1
            if p.schema is not None and p.schema.sheet_url:
                by_sheet.setdefault(sheet_link_key(p.schema.sheet_url, p.url), p.character)
    players: dict[str, str] = {}
    if registry is not None:
        for ch in registry.characters.values():
            if ch.player:
                players.setdefault(ch.player, ch.name)
            if ch.sheet_url:
                by_sheet.setdefault(sheet_link_key(ch.sheet_url), ch.name)
    out = []
    for p in posts:
        if p.character or p.role != "player":
            out.append(p)
            continue
        name = None
        if p.schema is not None and p.schema.sheet_url:
            name = by_sheet.get(sheet_link_key(p.schema.sheet_url, p.url))  # any form of the same link
        if name is None:
            name = players.get(p.author)
        if name is None and p.author in by_author:
            name = by_author[p.author].most_common(1)[0][0]
        out.append(replace(p, character=name))  # no name anywhere: null (docs/history-format.md), never the forum nick
    return tuple(out)


__all__ = ["parse_page", "parse_pages", "history_from_pages", "parse_document", "decode_html", "assign_characters",
           "MAX_POSTS", "check_post_count"]
