"""Fallback for skins no adapter knows: post blocks found by their repeated structure, ids taken from the page."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from math import ceil
from typing import Iterator, Mapping
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit
from zoneinfo import ZoneInfo

from lxml import etree

from engine.history import Post
from scraper.errors import NotAThread
from scraper.platforms.base import (
    Page, ParseContext, PostParts, build_post, check_page_count, dice_class_test, first, has_class, host_of,
    origin_of, pagination_boxes, parse_edit_note, query_param, shown_page, text_of, xp, content_post_id,
)
from scraper.platforms.config import ForumConfig
from scraper.platforms.dates import parse_forum_date

# --- what marks a post: an author (profile link, author-like class) or a date, in blocks repeated side by side --

_RE_NS = {"re": "http://exslt.org/regular-expressions"}
_PROFILE = r"profil|member|utent|user|MID=|[?&]u=\d|/u\d+|showuser|viewprofile"
_AUTHOR_WORDS = r"author|autore|nick|user-?name|poster|\bname\b"
_DATE_WORDS = (r"\d{1,2}/\d{1,2}/\d{2,4}|\d{4}-\d{2}-\d{2}|\d{1,2}\s+(?:gen|feb|mar|apr|mag|giu|lug|ago|set|ott|nov|"
               r"dic|jan|may|jun|jul|aug|sep|oct|dec)[a-z]*\.?,?\s+\d{4}|(?:oggi|ieri|today|yesterday)\W+\d{1,2}[:.]\d\d")
# One XPath each (libxml2 walks the page, Python's re tests only the attributes and texts it hands over).
X_AUTHORS = etree.XPath(f"//body//a[@href][re:test(@href, '{_PROFILE}', 'i')]"
                        f" | //body//*[@class][re:test(@class, '{_AUTHOR_WORDS}', 'i')]",
                        namespaces=_RE_NS, smart_strings=False)
X_DATES = etree.XPath(f"//body//time | //body//*[@datetime] | //body//*[@title][re:test(@title, '{_DATE_WORDS}', 'i')]"
                      f" | //body//text()[re:test(., '{_DATE_WORDS}', 'i')][not(parent::script)][not(parent::style)]"
                      "/parent::*", namespaces=_RE_NS, smart_strings=False)
_PROFILE_RX = re.compile(_PROFILE, re.I)
_AUTHOR_RX = re.compile(_AUTHOR_WORDS, re.I)
_USER_ID = re.compile(r"(?:MID=|[?&]u=|/u|/(?:profile|profilo|members?|users?|utenti)/)(\d+)")
_DIGITS = re.compile(r"\d+")

MIN_TEXT = 20  # characters a post block holds at least (a row of links or a bare name is no post)
COMMON = 0.6  # share of the blocks a learned element must be found in
# Ids a page gives its posts: the block's own id or the anchor before it; links in its header.
_ID_ATTR = re.compile(r"^(?:entry|post|p|msg|message|messaggio|m|reply|comment|ee)?[-_]?(\d+)$", re.I)
_ID_LINK = re.compile(r"#(?:entry|p|post|msg)(\d+)$|[?&](?:p|pid|post)=(\d+)(?:&|#|$)|showpost[^\d]*(\d+)", re.I)
_OWN_ID = re.compile(r"\D*?(\d+)")
_LABEL = re.compile(r":\s*$|^[^:]{1,30}:\s*\S")  # "Inviato il:", "Messaggi: 120"
_NOT_POST_DATE = re.compile(r"join|iscritt|registrat|member since|membro dal", re.I)  # a member's, not a post's
_NOT_BODY = re.compile(r"signature|firma|^sig$|edit|profile|avatar", re.I)  # chrome a post's cell holds
_CLOCK = re.compile(r"\d{1,2}[:.]\d{2}")
_NOT_NAME = re.compile(r"^[\W\d_]+$")  # numbers, punctuation


@dataclass
class Reading:
    """What the structure of one page says: its post blocks, the selectors that find their parts (XPath, the
    forum config's wins), and the doubts. `selectors` round-trips: as a forum config it reads the same posts."""

    blocks: list[etree._Element]
    selectors: dict[str, str]
    problems: list[str] = field(default_factory=list)
    learned: set[str] = field(default_factory=set)  # the selector keys found by structure, not given


_LAST: list = [None, None]  # (document, Reading) of the last page asked: detection and parsing share it


def read_structure(doc: etree._Element, selectors: Mapping[str, str] | None = None) -> Reading:
    """The post blocks of `doc` and the selectors of their author, date and body (`selectors` given win)."""
    sel = dict(selectors or {})
    key = (doc, tuple(sorted(sel.items())))
    if _LAST[0] == key:
        return _LAST[1]
    problems: list[str] = []
    learned: set[str] = set()
    if "post" in sel:
        blocks = [e for e in xp(sel["post"])(doc) if isinstance(e, etree._Element)]
    else:
        blocks = find_post_blocks(doc)
        post_xp = _post_xpath(doc, blocks) if blocks else None
        if post_xp:
            sel["post"] = post_xp
            learned.add("post")
        elif blocks:
            problems.append("i messaggi trovati non hanno un selettore XPath comune: la configurazione suggerita "
                            "va completata a mano")
    if blocks:
        _learn_parts(blocks, sel, learned, problems)
    reading = Reading(blocks=blocks, selectors=sel, problems=problems, learned=learned)
    _LAST[0], _LAST[1] = key, reading
    return reading


def find_post_blocks(doc: etree._Element) -> list[etree._Element]:
    """The largest set (≥ 2) of sibling elements of one shape (tag, first class, id stem) each holding an author-
    or date-like element and some text: the outermost repeated unit around them is the post."""
    members: dict[tuple, dict[etree._Element, set[str]]] = {}
    for kind, found in (("author", X_AUTHORS(doc)), ("date", X_DATES(doc))):
        for el in found:
            child = el
            for parent in el.iterancestors():
                members.setdefault((parent, _shape(child)), {}).setdefault(child, set()).add(kind)
                if parent.tag == "body":
                    break
                child = parent
    best: tuple[tuple[float, int], list[etree._Element]] = ((0.0, 0), [])
    size = xp("string-length(normalize-space(.))")
    inside = xp("count(descendant::*)")
    for (parent, _shp), group in members.items():
        if len(group) < 2:
            continue
        # an id without a number names a region of the page (#left, #main), never one post of many
        ok = [(m, kinds) for m, kinds in group.items()
              if size(m) >= MIN_TEXT and not (m.get("id") and not _DIGITS.search(m.get("id")))]
        if len(ok) < 2:
            continue
        # an author and a date count, and so do the markup and text around them: a post has a header and a body,
        # an item of a list of recent topics (a title, a name and a date) has not
        score = (sum(len(k) * (1 + min(inside(m), 40) / 10 + min(size(m), 2000) / 500) ** 2 for m, k in ok),
                 int(sum(size(m) for m, _ in ok)))
        if score > best[0]:
            best = (score, sorted((m for m, _ in ok), key=parent.index))
    return best[1]


def _shape(el: etree._Element) -> tuple[str, str, str]:
    """Tag, first class token without digits (row1/row2 alternate), id before its digits (ee123 → ee)."""
    cls = (el.get("class") or "").split()
    ident = el.get("id") or ""
    m = _DIGITS.search(ident)
    return el.tag, _DIGITS.sub("", cls[0]) if cls else "", ident[:m.start()] if m else ""


# --- learning the parts of a post from what the blocks have in common -----------------------------------

Step = tuple[str, str]  # (tag, first class token without digits)


def _steps(el: etree._Element) -> Step:
    cls = (el.get("class") or "").split()
    return el.tag, _DIGITS.sub("", cls[0]) if cls else ""


def _paths(block: etree._Element) -> dict[tuple[Step, ...], list[etree._Element]]:
    """Every descendant's path of shapes from the block, with the elements found at it (document order)."""
    out: dict[tuple[Step, ...], list[etree._Element]] = {}

    def walk(el: etree._Element, path: tuple[Step, ...]) -> None:
        for child in el:
            if not isinstance(child.tag, str) or child.tag in ("script", "style"):
                continue
            p = path + (_steps(child),)
            out.setdefault(p, []).append(child)
            walk(child, p)

    walk(block, ())
    return out


def _learn_parts(blocks: list[etree._Element], sel: dict[str, str], learned: set[str], problems: list[str]) -> None:
    per_block = [_paths(b) for b in blocks]
    need = max(1, ceil(COMMON * len(blocks)))
    order: dict[tuple[Step, ...], int] = {}
    count: dict[tuple[Step, ...], int] = {}
    for paths in per_block:
        for i, p in enumerate(paths):
            order.setdefault(p, i)
            count[p] = count.get(p, 0) + 1
    common = sorted((p for p, n in count.items() if n >= need), key=lambda p: order[p])
    found: dict[str, list[etree._Element | None]] = {}
    for key in ("date", "author", "body"):
        if key in sel:
            found[key] = [first(b, sel[key]) for b in blocks]
            continue
        choice = _CHOOSE[key](common, per_block, found)
        if choice is None:
            problems.append(_MISSING[key])
            continue
        path, pick = choice
        els = [pick(paths[path]) if path in paths else None for paths in per_block]
        expr = _relative_xpath(blocks, els, path, _date_attr(els) if key == "date" else "",
                               _profile_test(els) if key == "author" else "")
        found[key] = [first(b, expr) for b in blocks]
        sel[key] = expr
        learned.add(key)


def _first(els: list[etree._Element]) -> etree._Element:
    return els[0]


def _first_dated(els: list[etree._Element]) -> etree._Element | None:
    return next((e for e in els if date_text(e) is not None), None)


def _date_attr(els: list[etree._Element | None]) -> str:
    """The attribute the dates are read from, when every one is (`[@title]` then tells the link from its
    neighbours)."""
    for attr in ("datetime", "title"):
        if all(e is None or (e.get(attr) and date_text(e) == e.get(attr)) for e in els):
            return attr
    return ""


def _choose_date(common, per_block, found):
    """The common element whose date (datetime, title, or short text) reads in the most blocks, differs the most
    between them (a member's join date repeats with the member; a post's date does not) and tells the time;
    of an element and one inside it with as many dates, the inner one."""
    best, best_key = None, (0, 0, 0)
    for p in common:
        if any(_NOT_POST_DATE.search((paths[p][0].get("class") or "") + " " + text_of(paths[p][0])[:40])
               for paths in per_block if p in paths):
            continue
        dates = [date_text(d) for d in (_first_dated(paths[p]) for paths in per_block if p in paths) if d is not None]
        key = (len(dates), len(set(dates)), sum(1 for d in dates if _CLOCK.search(d)))
        if key > best_key or (key == best_key and best is not None and key[0] and p[:len(best)] == best):
            best, best_key = p, key
    return (best, _first_dated) if best_key[0] >= max(1, ceil(COMMON * len(per_block))) else None


def _choose_author(common, per_block, found):
    """A short name-like text outside the date: one that differs between posts first (a "Profilo" button does
    not), a profile link next, then an author-like class, then the first in the post. Of a cell and the element
    inside it showing the same name, the cell (`span.name` holds a link in a player's post, plain text in another)."""
    dates = found.get("date") or []
    ranked: dict[tuple[Step, ...], tuple[bool, bool, bool]] = {}
    inner: set[tuple[Step, ...]] = set()
    for p in common:
        els = [paths[p][0] if p in paths else None for paths in per_block]
        texts = [text_of(e) for e in els if e is not None]
        if not all(_name_like(t) for t in texts):
            continue
        if any(e is not None and d is not None and (_contains(e, d) or _contains(d, e)) for e, d in zip(els, dates)):
            continue
        outer = p[:-1]
        if (outer in ranked or outer in inner) and all(
                outer not in paths or text_of(paths[outer][0]) == text_of(paths[p][0]) for paths in per_block if p in paths):
            inner.add(p)  # the name's own cell is the candidate: it holds the name in posts whose markup differs
            continue
        present = [e for e in els if e is not None]
        profile = all(_profile_link(e) is not None for e in present)
        classed = all(_AUTHOR_RX.search(e.get("class") or "") for e in present)
        ranked[p] = (len(set(texts)) < 2, not profile, not classed)
    if not ranked:
        return None
    # min keeps the first (earliest in the post) of the best kind
    return min(ranked, key=lambda p: ranked[p]), _first


def _choose_body(common, per_block, found):
    """The common element with the most text that holds neither the author nor the date (the header stays out);
    of two with (nearly) the same text, the inner one."""
    marks = [e for key in ("author", "date") for e in (found.get(key) or []) if e is not None]
    size = xp("string-length(normalize-space(.))")
    best, best_n = None, 0.0
    for p in common:
        els = [paths[p][0] for paths in per_block if p in paths]
        if _NOT_BODY.search(p[-1][1]) or any(_contains(e, m) or _contains(m, e) for e in els for m in marks):
            continue
        n = sum(size(e) for e in els)
        if n > best_n * 1.05 or (best is not None and n >= best_n * 0.95 and p[:len(best)] == best):
            best, best_n = p, max(n, best_n)
    return (best, _first) if best_n > 0 else None


_CHOOSE = {"date": _choose_date, "author": _choose_author, "body": _choose_body}
_MISSING = {
    "date": "nessuna data comune ai messaggi: gli orari restano vuoti",
    "author": "nessun autore comune ai messaggi: gli autori restano vuoti",
    "body": "nessun corpo del messaggio distinto dall'intestazione: si legge il blocco intero",
}


def _profile_link(el: etree._Element) -> etree._Element | None:
    """`el` when it is a link to a member's profile, else the one such link inside it showing the same name."""
    if el.tag == "a":
        return el if _PROFILE_RX.search(el.get("href") or "") else None
    for a in el.iter("a"):
        if _PROFILE_RX.search(a.get("href") or "") and text_of(a) == text_of(el):
            return a
    return None


def _name_like(text: str) -> bool:
    return 0 < len(text) <= 60 and not _LABEL.search(text) and not _NOT_NAME.match(text) \
        and parse_forum_date(text, _UTC) is None


def _contains(outer: etree._Element, inner: etree._Element) -> bool:
    return outer is inner or any(a is outer for a in inner.iterancestors())


def _step_xpath(step: Step, raw: etree._Element) -> str:
    tag, token = step
    if not token:
        return tag
    own = (raw.get("class") or "").split()[0]
    if own == token:
        return f"{tag}[{has_class(token)}]"
    return f"{tag}[starts-with(normalize-space(@class), '{token}')]"  # row1/row2: the stem


def _profile_test(els: list[etree._Element | None]) -> str:
    """`a[contains(@href, 'profile')]` when every author is a profile link: it finds the link whatever its class
    (phpBB colours an admin's name with another class)."""
    present = [e for e in els if e is not None]
    m = _PROFILE_RX.search(present[0].get("href") or "") if present and present[0].tag == "a" else None
    if m is None or "'" in m.group(0) or not all(m.group(0) in (e.get("href") or "") for e in present):
        return ""
    return f"a[contains(@href, '{m.group(0)}')]"


def _relative_xpath(blocks: list[etree._Element], els: list[etree._Element | None], path: tuple[Step, ...],
                    attr: str = "", profile: str = "") -> str:
    """The shortest XPath that finds, as its first match in each block, the element learned there: a profile
    link by its address (`profile`), the last step alone, then with its classed ancestors, then the whole path
    (`attr`: an attribute the element must have)."""
    sample = next(e for e in els if e is not None)
    chain = [sample]
    for a in sample.iterancestors():
        if len(chain) == len(path):
            break
        chain.insert(0, a)
    steps = [_step_xpath(s, e) for s, e in zip(path, chain)]
    if attr:
        steps[-1] += f"[@{attr}]"
    classed = [s for s, st in zip(steps[:-1], path[:-1]) if st[1]]
    tries = [f".//{profile}"] + [f".//{c}//{profile}" for c in classed[-1:]] if profile else []
    tries += [f".//{steps[-1]}"] if path[-1][1] or attr else []
    if classed:
        tries.append(".//" + "//".join(classed[-2:] + [steps[-1]]))
        tries.append(".//" + "//".join(classed + [steps[-1]]))
    tries.append("./" + "/".join(steps))
    for expr in tries:
        if all(e is None or first(b, expr) is e for b, e in zip(blocks, els)):
            return expr
    return tries[-1]


def _post_xpath(doc: etree._Element, blocks: list[etree._Element]) -> str | None:
    """An XPath selecting exactly `blocks` on the page: their shape, then with their parent's."""
    tag, token, stem = _shape(blocks[0])
    tests = []
    if token:
        tests.append(_step_xpath((tag, token), blocks[0]).partition("[")[2].rstrip("]"))
    if stem:
        tests.append(f"starts-with(@id, '{stem}')")
    own = f"{tag}[{' and '.join(tests)}]" if tests else tag
    parent = blocks[0].getparent()
    ptag, ptoken, pstem = _shape(parent)
    pid = parent.get("id")
    ptest = (f"@id='{pid}'" if pid and "'" not in pid else
             _step_xpath((ptag, ptoken), parent).partition("[")[2].rstrip("]") if ptoken else "")
    wanted = set(blocks)
    for expr in (f"//{own}", f"//{ptag}[{ptest}]/{own}" if ptest else None):
        if expr and set(xp(expr)(doc)) == wanted:
            return expr
    if stem or token:
        # the shape alone picks more (a chrome element of the same shape): keep those with text, as the reading does
        expr = f"//{own}[string-length(normalize-space(.)) >= {MIN_TEXT}]"
        if set(xp(expr)(doc)) == wanted:
            return expr
    return None


# --- one post -------------------------------------------------------------------------------------------

_UTC = ZoneInfo("UTC")  # only to tell whether a text is a date


def date_text(el: etree._Element | None) -> str | None:
    """The date an element shows: its `datetime`, else its `title`, else its own short text, whichever reads."""
    if el is None:
        return None
    for value in (el.get("datetime"), el.get("title")):
        if value and parse_forum_date(value, _UTC) is not None:
            return value
    text = text_of(el)
    return text if len(text) <= 80 and parse_forum_date(text, _UTC) is not None else None


def _post_id(block: etree._Element, body: etree._Element | None) -> tuple[str, str] | None:
    """(id, anchor) the page gives the post: the block's id, the anchor just before it, an anchor inside it, or a
    link to the post in its header (outside the body: a player's post may link any other)."""
    ident = block.get("id") or ""
    m = _OWN_ID.fullmatch(ident)
    if m:  # the blocks share the id's stem (they were grouped by it): its number is the post's
        return m.group(1), ident
    prev = block.getprevious()
    if prev is not None and isinstance(prev.tag, str) and _shape(prev) != _shape(block):
        for el in (prev, *prev.iterdescendants()):
            for name in (el.get("id"), el.get("name")):
                m = _ID_ATTR.match(name or "")
                if m:
                    return m.group(1), name  # type: ignore[return-value]
    for el in xp("descendant::a[@name or @id]")(block):
        if body is not None and _contains(body, el):
            continue
        for name in (el.get("name"), el.get("id")):
            m = _ID_ATTR.match(name or "")
            if m:
                return m.group(1), name  # type: ignore[return-value]
    for el in xp("descendant::a[@href]")(block):
        if body is not None and _contains(body, el):
            continue
        href = el.get("href") or ""
        m = _ID_LINK.search(href)
        if m:
            pid = next(g for g in m.groups() if g)
            return pid, href.partition("#")[2] if m.group(1) else ""  # `#entry123` is also the post's anchor
    return None


def _edit_note(block: etree._Element) -> tuple[str | None, str | None]:
    for el in xp("descendant::*[contains(@class, 'edit')]")(block):
        got = parse_edit_note(text_of(el))
        if got[0] or got[1]:
            return got
    return None, None


class Generic:
    name = "generic"

    def claims_url(self, url: str) -> bool:
        return False  # it reads any forum, so no URL is its own

    def detect(self, doc: etree._Element, url: str) -> float:
        return 0.25 if len(read_structure(doc).blocks) >= 2 else 0.0

    def parse(self, doc: etree._Element, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        ctx = ParseContext(url=url, config=config, now=now)
        reading = read_structure(doc, config.selectors)
        sel = reading.selectors
        problems = list(reading.problems)
        if not reading.blocks:
            raise NotAThread("nessun blocco ripetuto con autore o data: la pagina non sembra una discussione "
                             "(arbitro inspect mostra cosa vi si riconosce)")
        dice_test = dice_class_test(config.dice_classes)
        page_base = url.split("#")[0] if origin_of(url) else ""  # a saved file: the bare anchor
        nav = _pagination(doc, url, reading.blocks)
        posts: list[Post] = []
        seen: dict[str, int] = {}
        for n, el in enumerate(reading.blocks, 1):
            author_el = first(el, sel["author"]) if "author" in sel else None
            date_el = first(el, sel["date"]) if "date" in sel else None
            body = first(el, sel["body"]) if "body" in sel else el
            author = text_of(author_el)
            href = author_el.get("href") if author_el is not None and author_el.tag == "a" else None
            if author_el is not None and href is None:
                link = first(author_el, "descendant::a[@href]")
                href = link.get("href") if link is not None else None
            um = _USER_ID.search(href or "") if href and _PROFILE_RX.search(href) else None
            when = date_text(date_el) or (text_of(date_el) or None if date_el is not None else None)
            got = _post_id(el, body)
            if got is None:
                pid = content_post_id(author, when or "", set())  # a repeat: the `-2` below
                anchor = ""
                problems.append(f"messaggio {n} ({author or 'senza autore'}): la pagina non gli dà un id, "
                                f"id dal contenuto {pid}")
            else:
                pid, anchor = got
            if pid in seen:  # the same id twice on a page is no post id (or a post printed twice)
                seen[pid] += 1
                problems.append(f"messaggio {n}: id {pid} già visto nella pagina, letto come {pid}-{seen[pid]}")
                pid = f"{pid}-{seen[pid]}"
            else:
                seen[pid] = 1
            if not author:
                problems.append(f"messaggio {n} (id {pid}): autore non trovato")
            if when is None:
                problems.append(f"messaggio {n} (id {pid}): data non trovata")
            edited_by, edited_text = _edit_note(el)
            parts = PostParts(id=pid, element=el, body=body, author=author, author_id=um.group(1) if um else None,
                              date_text=when, edited_by=edited_by, edited_text=edited_text,
                              anchor_url=f"{page_base}#{anchor}" if anchor else (page_base or url.split("#")[0]))
            posts.append(build_post(parts, page=nav.page, ctx=ctx, source="forum_roller", dice_test=dice_test))
        title_el = first(doc, "//h1") if first(doc, "//h1") is not None else first(doc, "//title")
        return Page(url=url, platform=self.name, skin=None, host=host_of(url), thread_id=_thread_id(url),
                    title=text_of(title_el) or None, page=nav.page, page_count=nav.count,
                    page_size=nav.step, last_offset=nav.last_offset, page_urls=nav.urls,
                    next_url=nav.next_url, posts=tuple(posts), problems=tuple(problems))


# --- thread and pagination --------------------------------------------------------------------------------

_THREAD_PARAMS = ("t", "topic", "showtopic", "tid", "thread")
_THREAD_PATH = re.compile(r"/(?:t|topic|thread|threads|discussione)[/-]?(\d+)", re.I)


def _thread_id(url: str) -> str | None:
    for name in _THREAD_PARAMS:
        v = query_param(url, name)
        if v and v.isdigit():
            return v
    m = _THREAD_PATH.search(urlsplit(url).path) if origin_of(url) else None
    return m.group(1) if m else None


@dataclass(frozen=True)
class Nav:
    page: int = 1
    count: int | None = None
    step: int | None = None  # posts per page, when the links count posts (st=15, start=30)
    last_offset: int | None = None
    urls: tuple[str, ...] = ()
    next_url: str | None = None


_CURRENT = (".//*[self::b or self::strong or self::span or self::em or self::li or self::a]"
            "[contains(@class, 'current') or contains(@class, 'active') or self::b or self::strong]")
_BRACKETED = re.compile(r"^\[?\s*(\d{1,5})\s*\]?$")


def _numbered_links(boxes: list[etree._Element], url: str) -> Iterator[tuple[int, str]]:
    host = host_of(url)
    for box in boxes:
        for a in box.iter("a"):
            t = text_of(a).strip()
            href = a.get("href") or ""
            if not t.isdigit() or len(t) > 5 or href.startswith(("javascript:", "#")):
                continue
            full = urljoin(url, href)
            if host and host_of(full) not in ("", host):
                continue
            yield int(t), full


def _current_page(boxes: list[etree._Element]) -> int | None:
    """The page number the pagination shows unlinked (`<b>[3]</b>`, `<strong>3</strong>`, `.current`)."""
    for box in boxes:
        for el in xp(_CURRENT)(box):
            m = _BRACKETED.match(text_of(el).strip())
            if m and (el.tag != "a" or not el.get("href")):
                return int(m.group(1))
    return None


def _page_param(links: list[tuple[int, str]]) -> tuple[str, int, int] | None:
    """(query parameter, step, page-1 value) such that page n's link has value step·(n-1)+first in every
    numbered link: `st=15·(n-1)` (posts), `page=n` (pages). A link without the parameter is page 1."""
    names: set[str] = set()
    for _, href in links:
        names.update(k for k, v in parse_qsl(urlsplit(href).query) if v.isdigit())
    for name in sorted(names):
        pairs = []
        for n, href in links:
            v = query_param(href, name)
            if v is None and n == 1:
                continue
            if v is None or not v.isdigit():
                break
            pairs.append((n, int(v)))
        else:
            if not pairs:
                continue
            if all(v == n for n, v in pairs):
                return name, 1, 1
            steps = {v // (n - 1) for n, v in pairs if n > 1 and v % (n - 1) == 0}
            if len(steps) == 1 and all(v == (n - 1) * next(iter(steps)) for n, v in pairs):
                step = steps.pop()
                if step > 0:
                    return name, step, 0
    return None


def _with_param(url: str, name: str, value: int | None) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != name]
    if value is not None:
        query.append((name, str(value)))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def _pagination(doc: etree._Element, url: str, blocks: list[etree._Element]) -> Nav:
    """Page number, page count, every page's URL when the links follow one pattern, and the next page."""
    boxes = pagination_boxes(doc, blocks)
    links = list(_numbered_links(boxes, url))
    cur, high = shown_page(doc, _CURRENT, blocks) if boxes else (None, None)
    cur = cur or _current_page(boxes)
    param = _page_param(links) if links else None
    if param is not None:
        name, step, base = param
        own = query_param(url, name)
        if own is not None and own.isdigit() and (int(own) - base) % step == 0 and origin_of(url):
            cur = (int(own) - base) // step + 1
    page = cur or 1
    count = check_page_count(max(high or 0, page)) if (high or cur) else None
    urls: tuple[str, ...] = (url,) if page == 1 and not count else ()
    step_posts = last = None
    if param is not None and count:
        name, step, base = param
        template = links[0][1]
        urls = tuple(_with_param(template, name, None if (i == 1 and base == 0) else step * (i - 1) + base)
                     for i in range(1, count + 1))
        if base == 0:
            step_posts, last = step, step * (count - 1)
    nxt = first(doc, "//a[@rel='next'][@href] | //link[@rel='next'][@href]")
    next_url = urljoin(url, nxt.get("href")) if nxt is not None else None
    if next_url is None:
        if urls and page < len(urls):
            next_url = urls[page]
        else:
            next_url = next((h for n, h in links if n == page + 1), None)
    return Nav(page=page, count=count, step=step_posts, last_offset=last, urls=urls, next_url=next_url)


__all__ = ["Generic", "Reading", "read_structure", "find_post_blocks", "date_text"]
