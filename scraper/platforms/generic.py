"""Tolerant fallback for unknown skins: repeated post-like blocks, text recognition of rolls."""
from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from urllib.parse import urljoin

from lxml import etree

from engine.history import Post
from scraper.errors import NotAThread
from scraper.platforms.base import (
    Page, ParseContext, PostParts, build_post, dice_class_test, first, host_of, origin_of, parse_edit_note,
    text_of, xp,
)
from scraper.platforms.config import ForumConfig

_POSTISH = re.compile(r"post|message|messaggio|msg|entry|comment|reply", re.I)
_NOT_POST = re.compile(r"postprofile|postdetails|posthead|post-?date|postbody|post-entry|posts?_?(?:list|wrap)|"
                       r"author|signature|footer|header|button|btn|icon|count|preview|form|quick", re.I)
_AUTHOR_CLASS = re.compile(r"author|nick|username|user-?name|poster|name", re.I)
_PROFILE_HREF = re.compile(r"profile|member|user|MID=|[?&]u=|/u\d+|author", re.I)
_DATE_CLASS = re.compile(r"date|time|when|posted", re.I)
_BODY_CLASS = re.compile(r"content|body|text|message|post-?entry|postcolor", re.I)
_DIGITS = re.compile(r"\d+")

X_CLASSED = "//body//*[@class or @id]"


def _key(el: etree._Element) -> tuple[str, str] | None:
    cls = el.get("class") or ""
    ident = el.get("id") or ""
    tokens = [t for t in cls.split() if _POSTISH.search(t) and not _NOT_POST.search(t)]
    if tokens:
        return el.tag, tokens[0]
    if ident and _POSTISH.search(re.sub(r"\d+", "", ident)) and _DIGITS.search(ident) and not _NOT_POST.search(ident):
        return el.tag, "#" + re.sub(r"\d+", "", ident)
    return None


def find_post_blocks(doc: etree._Element) -> list[etree._Element]:
    """The largest group (≥ 2) of same-tag, same-class post-like elements that do not nest each other."""
    groups: dict[tuple[str, str], list[etree._Element]] = defaultdict(list)
    for el in xp(X_CLASSED)(doc):
        if not isinstance(el.tag, str):
            continue
        k = _key(el)
        if k:
            groups[k].append(el)
    best: list[etree._Element] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        ids = {id(m) for m in members}
        top = [m for m in members if not any(id(a) in ids for a in m.iterancestors())]
        if len(top) < 2:
            continue
        # A real post has some text and a link (author) — navigation rows rarely have both.
        ok = [m for m in top if len("".join(m.itertext()).strip()) > 20]
        if len(ok) > len(best):
            best = ok
    return best


class Generic:
    name = "generic"

    def detect(self, doc: etree._Element, url: str) -> float:
        return 0.25 if len(find_post_blocks(doc)) >= 2 else 0.0

    def parse(self, doc: etree._Element, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        ctx = ParseContext(url=url, config=config, now=now)
        sel = config.selectors
        blocks = xp(sel["post"])(doc) if "post" in sel else find_post_blocks(doc)
        dice_test = dice_class_test(config.dice_classes)
        # a saved file is no place on the forum: its posts get the bare anchor
        page_base = url.split("#")[0] if origin_of(url) else ""
        posts: list[Post] = []
        for n, el in enumerate(blocks, 1):
            ident = el.get("id") or ""
            m = _DIGITS.search(ident)
            pid = m.group(0) if m else str(n)
            author_el, author_href = _author(el, sel.get("author"))
            date_text = _date(el, sel.get("date"))
            body = first(el, sel["body"]) if "body" in sel else _body(el)
            uid = None
            if author_href:
                um = re.search(r"(?:MID=|[?&]u=|/u|/(?:profile|profilo|members?|users?|utenti)/)(\d+)", author_href)
                uid = um.group(1) if um else None
            edit = next((e for e in el.iter() if isinstance(e.tag, str) and "edit" in (e.get("class") or "")), None)
            edited_by, edited_text = parse_edit_note(text_of(edit)) if edit is not None else (None, None)
            parts = PostParts(id=pid, element=el, body=body, author=text_of(author_el) if author_el is not None else "",
                              author_id=uid, date_text=date_text, edited_by=edited_by, edited_text=edited_text,
                              anchor_url=f"{page_base}#{ident or pid}")
            posts.append(build_post(parts, page=1, ctx=ctx, source="forum_roller", dice_test=dice_test))
        if not posts:
            raise NotAThread("nessun blocco simile a un messaggio nella pagina")
        title_el = first(doc, "//h1") if first(doc, "//h1") is not None else first(doc, "//title")
        return Page(url=url, platform=self.name, skin=None, host=host_of(url), thread_id=None,
                    title=text_of(title_el) or None, page=1, page_count=None, page_size=None, last_offset=None,
                    page_urls=(url,), next_url=_next(doc, url), posts=tuple(posts))


def _author(el: etree._Element, override: str | None) -> tuple[etree._Element | None, str | None]:
    if override:
        a = first(el, override)
        return a, (a.get("href") if a is not None else None)
    for node in el.iter("a"):
        href = node.get("href") or ""
        if _PROFILE_HREF.search(href) and text_of(node):
            return node, href
    for node in el.iter():
        if isinstance(node.tag, str) and _AUTHOR_CLASS.search(node.get("class") or "") and text_of(node):
            return node, None
    return None, None


def _date(el: etree._Element, override: str | None) -> str | None:
    if override:
        d = first(el, override)
        return (d.get("datetime") or d.get("title") or text_of(d)) if d is not None else None
    for node in el.iter():
        if not isinstance(node.tag, str):
            continue
        if node.tag == "time" or _DATE_CLASS.search(node.get("class") or ""):
            return node.get("datetime") or node.get("title") or text_of(node)
    return None


def _body(el: etree._Element) -> etree._Element:
    best, size = el, -1
    for node in el.iter():
        if node is el or not isinstance(node.tag, str):
            continue
        if _BODY_CLASS.search(node.get("class") or ""):
            n = len("".join(node.itertext()))
            if n > size:
                best, size = node, n
    return best


def _next(doc: etree._Element, url: str) -> str | None:
    a = first(doc, "//a[@rel='next'][@href] | //link[@rel='next'][@href]")
    return urljoin(url, a.get("href")) if a is not None else None


__all__ = ["Generic", "find_post_blocks"]
