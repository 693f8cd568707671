"""The Platform protocol, the parsed Page, platform detection and the post-building steps adapters share."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterator, Protocol, Sequence
from urllib.parse import parse_qs, urljoin, urlsplit

from lxml import etree

from engine.history import Post, PostSchema, Roll
from scraper.dicetag import find_text_rolls, make_roll
from scraper.errors import PageTooDeep, TooManyPages
from scraper.htmltext import DICE_MARK, DiceTest, PostText, clean_lines, inline_text, split_post, strip_controls
from scraper.platforms.config import ForumConfig
from scraper.platforms.dates import parse_forum_date


@dataclass(frozen=True)
class Page:
    """One parsed thread page: thread info, pagination and its posts in page order."""

    url: str
    platform: str
    skin: str | None
    host: str
    thread_id: str | None
    title: str | None
    page: int  # 1-based index of this page in the thread
    page_count: int | None  # pages in the thread, when the page says
    page_size: int | None  # posts per page (offset step), when known
    last_offset: int | None  # offset of the last page (ForumFree st=, phpBB start=, Forumotion p)
    page_urls: tuple[str, ...]  # every page of the thread in order, when it can be derived
    next_url: str | None
    posts: tuple[Post, ...]
    section: str | None = None  # forum/section id the thread is in, when the page says
    fetched_at: str | None = None
    thread_url: str | None = None  # the thread's own address when page_urls are not (ForumFree api.php pages)
    problems: tuple[str, ...] = ()  # the reading's doubts (Italian, one line each): the generic reading says them


@dataclass
class ParseContext:
    """What an adapter needs besides the document."""

    url: str
    config: ForumConfig
    now: datetime | None = None  # fetch time: "Oggi"/"Ieri" are relative to it
    joined: dict[str, str] = field(default_factory=dict)  # href → absolute URL on this page (sheet links repeat)


class Platform(Protocol):
    name: str

    def detect(self, doc: etree._Element, url: str) -> float:
        """Confidence 0..1 that `doc` is a thread page of this platform."""

    def claims_url(self, url: str) -> bool:
        """The URL itself names this platform (its hosting's domain, its script name): asked before the others."""

    def parse(self, doc: etree._Element, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        """The page's thread info and posts; raises NotAThread when it has no posts."""


# --- reading HTML ----------------------------------------------------------------------------------

_RESOURCE_LIMIT = etree.ErrorTypes.ERR_RESOURCE_LIMIT


def html_parser(**kw: object) -> etree.HTMLParser:
    """A plain lxml.etree HTML parser with libxml2's huge-document limits: nesting up to 2048 levels, not 256
    (a post of `<b>`×250 is read whole). Read through `read_html`."""
    return etree.HTMLParser(encoding="utf-8", huge_tree=True, **kw)


def read_html(data: bytes, parser: etree.HTMLParser) -> etree._Element | None:
    """`etree.fromstring(data, parser)`, or PageTooDeep when libxml2 stopped at a resource limit (nesting deeper
    than 2048): it then returns the tree built so far, and the rest of the page would be silently lost.
    The check is the parse's last error only (a stopped parse ends on it): nothing is parsed twice."""
    doc = etree.fromstring(data, parser)
    err = parser.error_log.last_error
    if err is not None and err.type == _RESOURCE_LIMIT:
        raise PageTooDeep(f"pagina annidata troppo in profondità (riga {err.line}): il lettore HTML ne perderebbe "
                          "il resto, quindi non viene letta")
    if doc is not None and (b"<embed" in data or b"<EMBED" in data):
        _unnest_embeds(doc)
    return doc


def _unnest_embeds(doc: etree._Element) -> None:
    """libxml2 puts what follows an unclosed `<embed>` (a void element: browsers never nest in it) inside it,
    where every reader skips it as plugin content: a real post's text after a video was lost. Moved back out."""
    for emb in [e for e in doc.iter("embed", "EMBED") if len(e) or e.text]:
        parent = emb.getparent()
        if parent is None:
            continue
        kids, tail = list(emb), emb.tail
        emb.tail, emb.text = emb.text, None
        at = parent.index(emb)
        for n, kid in enumerate(kids, 1):
            parent.insert(at + n, kid)
        last = kids[-1] if kids else emb
        last.tail = (last.tail or "") + (tail or "") or None


# --- small helpers every adapter uses -------------------------------------------------------------

_XP: dict[str, etree.XPath] = {}


def xp(expr: str) -> etree.XPath:
    """Compiled XPath, cached (adapters call the same few expressions on every post)."""
    c = _XP.get(expr)
    if c is None:
        c = _XP[expr] = etree.XPath(expr, smart_strings=False)
    return c


class Css:
    """A tiny CSS subset (`td.right table.color, .nick a`): tag, classes, descendant combinator,
    alternatives. Matched by walking `el.iter(tag)` in Python — far cheaper per post than XPath's
    class-token predicate. Config overrides stay XPath."""

    __slots__ = ("text", "alts", "flat", "flat_xp")

    def __init__(self, text: str) -> None:
        self.text = text
        self.alts: list[list[tuple[str | None, tuple[str, ...]]]] = []
        for alt in text.split(","):
            chain = []
            for step in alt.split():
                tag, *classes = step.split(".")
                chain.append((tag if tag not in ("", "*") else None, tuple(classes)))
            self.alts.append(chain)
        # "div.edit, span.edit": alternatives of one tagged single-class step each are matched in one
        # walk over those tags (a miss, the common case, then costs one traversal instead of one per tag).
        self.flat: tuple[tuple[str, ...], tuple[tuple[str, str], ...]] | None = None
        if len(self.alts) > 1 and all(len(c) == 1 and c[0][0] and len(c[0][1]) == 1 for c in self.alts):
            steps = tuple((c[0][0], c[0][1][0]) for c in self.alts)  # type: ignore[misc]
            self.flat = (tuple(dict.fromkeys(t for t, _ in steps)), steps)
            # The candidates come from libxml2 through their class attributes: no proxy for the other elements
            # (these selectors, edit notes, usually match nothing, so the walk would cover the whole post).
            self.flat_xp = etree.XPath(" | ".join(
                f"descendant::{t}/@class[contains(., '{one}')]/parent::*" for t, one in steps), smart_strings=False)

    def first(self, el: etree._Element) -> etree._Element | None:
        if self.flat is not None:
            return self._first_flat(el)
        for chain in self.alts:
            found = _first_chain(el, chain, 0)
            if found is not None:
                return found
        return None

    def _first_flat(self, el: etree._Element) -> etree._Element | None:
        tags, steps = self.flat  # type: ignore[misc]
        best: etree._Element | None = None
        best_i = len(steps)
        for node in self.flat_xp(el):
            c = node.get("class")
            if not c:
                continue
            tag = node.tag
            for i, (t, one) in enumerate(steps[:best_i]):
                if t == tag and one in c and one in c.split():
                    if i == 0:
                        return node
                    best, best_i = node, i
                    break
        return best


def _first_chain(el: etree._Element, chain: list[tuple[str | None, tuple[str, ...]]], i: int) -> etree._Element | None:
    tag, classes = chain[i]
    last = i == len(chain) - 1
    one = classes[0] if len(classes) == 1 else None
    for node in el.iterdescendants(tag if tag else etree.Element):
        if classes:
            c = node.get("class")
            if not c:
                continue
            if one is not None:
                if one not in c or one not in c.split():  # substring test first: cheap rejections
                    continue
            else:
                tokens = c.split()
                if not all(k in tokens for k in classes):
                    continue
        if last:
            return node
        found = _first_chain(node, chain, i + 1)
        if found is not None:
            return found
    return None


_DOC_CACHE: dict[str, tuple[etree._Element, list]] = {}


def doc_xpath(doc: etree._Element, expr: str) -> list:
    """A document-wide XPath result, remembered for the document it was asked of (detection and parsing
    ask for the same post list; the next page is another document and is evaluated afresh)."""
    hit = _DOC_CACHE.get(expr)
    if hit is not None and hit[0] is doc:
        return hit[1]
    found = xp(expr)(doc)
    _DOC_CACHE[expr] = (doc, found)
    return found


def in_containers(doc: etree._Element, container: str, inner: str) -> Iterator[etree._Element]:
    """Elements matching `inner` (a relative `descendant::…` path) inside elements matching the
    `container` predicate, in document order, as `//*[container]//inner` gives them.

    Walks container by container (the next one is `following::`, outside the previous one, whose nested
    containers its own descendants already covered), so finding the first costs a scan up to the first
    container instead of an ancestor test on every candidate of the page.
    """
    nxt = xp(f"following::*[{container}][1]")
    inside = xp(inner)
    found = xp(f"descendant::*[{container}][1]")(doc)
    while found:
        yield from inside(found[0])
        found = nxt(found[0])


def first(el: etree._Element, expr: str | Css) -> etree._Element | None:
    """First match of a Css (fast path for the built-in selectors) or an XPath (config overrides)."""
    if isinstance(expr, Css):
        return expr.first(el)
    found = xp(expr)(el)
    return found[0] if found else None


def has_class(name: str) -> str:
    """XPath predicate for a class token (a cheap substring test first, the exact token test after)."""
    return f"(contains(@class, '{name}') and contains(concat(' ', normalize-space(@class), ' '), ' {name} '))"


def offset_step(offsets: set[int], default: int | None) -> int | None:
    """Posts per page from the offsets the pagination links show: their gcd (a window of page links
    such as 1 … 8 9 [10] 11 … 20 still gives the step), else `default`."""
    from math import gcd

    step = 0
    for o in offsets:
        step = gcd(step, o)
    return step or default


# The most pages a thread page may claim (the crawl's bound too, scraper.crawl.MAX_PAGES): a fight is never
# this long, and a page naming more is a loop or a trap, not a list of URLs to build.
MAX_PAGES = 2000


def check_page_count(count: int) -> int:
    """`count`, or TooManyPages when it is beyond MAX_PAGES (checked before any list of page URLs is built)."""
    if count > MAX_PAGES:
        raise TooManyPages(f"la paginazione indica {count} pagine (al massimo {MAX_PAGES}): "
                           "non sembra una discussione")
    return count


def pagination_step(link_offsets: set[int], own: int, default: int | None,
                    current: Callable[[], int | None] | None = None) -> tuple[int | None, set[int]]:
    """(step, offsets) of a thread from its pagination links' offsets and the page's own offset.

    The step is the gcd of the offsets (a window such as 1 … 8 9 [10] 11 … 20 still gives it; page 2 of 2, linking
    only page 1, gives its own offset), else `default`. An own offset off the links' grid counts only when the
    pagination's current page agrees (page 2 of 3 at `st=5` linking 0 and 10): a shared post link fetched as the
    page (`&st=7`) does not make the step 1; it is read as the page it falls in."""
    offsets = set(link_offsets) | {own}
    linked = offset_step(link_offsets, None)
    if linked is None or own % linked == 0:
        return offset_step(offsets, default), offsets
    step = offset_step(offsets, default) or linked
    cur = current() if current is not None else None
    if cur is not None and cur > 1 and own == (cur - 1) * step:
        return step, offsets
    return linked, set(link_offsets) | {(own // linked) * linked}


_PAGE_OF = re.compile(r"\b(?:pagina|page|pag\.?)\s+(\d{1,5})\s+(?:di|of|su|sur|de|/)\s+(\d{1,5})\b", re.I)
# Through the class attributes: libxml2 tests `contains` on the few @class nodes far faster than the token
# predicate on every element (≈ 4× on a 60 KB page); "pag" is in both names.
X_PAGINATION = (f"descendant::*/@class[contains(., 'pag')]/parent::*"
                f"[{has_class('pagination')} or {has_class('pages')} or {has_class('pagelinks')}"
                f" or {has_class('pagelink')} or {has_class('pagelinklast')}]")
_BOX_HREFS = "descendant::a/@href"


def pagination_boxes(doc: etree._Element, posts: Sequence[etree._Element] = ()) -> list[etree._Element]:
    """The page's pagination boxes (`.pagination`, `.pages`, IPB's `.pagelinks`), never one inside a post: a
    player's post may hold any markup, and its links name other pages, threads and sites."""
    boxes = doc_xpath(doc, X_PAGINATION)
    if not boxes or not posts:
        return boxes
    inside = set(posts)
    return [b for b in boxes if b not in inside and not any(a in inside for a in b.iterancestors())]


def _on_host(href: str, host: str) -> bool:
    if "//" in href and host:
        try:
            other = (urlsplit(href.strip()).hostname or "").lower()
        except ValueError:
            return False
        if other and other != host:
            return False
    return True


def pagination_hrefs(doc: etree._Element, posts: Sequence[etree._Element], host: str) -> list[str]:
    """The hrefs of the pagination boxes' links that stay on the page's host (relative, or absolute on `host`;
    any host for a saved file, `host` "")."""
    rel = xp(_BOX_HREFS)
    out: list[str] = []
    for box in pagination_boxes(doc, posts):
        for href in rel(box):
            if _on_host(href, host):
                out.append(href)
    return out


def numbered_step(doc: etree._Element, posts: Sequence[etree._Element], host: str,
                  offset_of: Callable[[str], int | None]) -> int | None:
    """Posts per page from the pagination links that show their page number (`3` at offset 10: 5 a page), or
    None when no link says it or two disagree. Exact where the gcd of the offsets is not: page 2 of 3 read
    from a post link (no offset in its URL) links only pages 1 and 3 (offsets 0 and 10)."""
    steps: set[int] = set()
    for box in pagination_boxes(doc, posts):
        for a in box.iter("a"):
            href = a.get("href")
            t = inline_text(a).strip()
            if not href or not t.isdigit() or len(t) > 5 or int(t) < 2 or not _on_host(href, host):
                continue
            o = offset_of(href)
            if o is not None and o > 0 and o % (int(t) - 1) == 0:
                steps.add(o // (int(t) - 1))
    return steps.pop() if len(steps) == 1 else None


_X_HEAD_URLS = ("descendant::head[1]/link[@rel='canonical']/@href"
                " | descendant::head[1]/meta[@property='og:url']/@content")


def head_offset(doc: etree._Element, name: str, tid: str | None) -> int | None:
    """The page's own offset as its `<link rel=canonical>` / `og:url` name it (`name=`: `st`, `start`), when
    they name this thread and an offset past the first page; None otherwise (a canonical that drops the offset
    says nothing about which page this is)."""
    for value in xp(_X_HEAD_URLS)(doc):
        v = query_param(value, name)
        if v and v.isdigit() and int(v) > 0 and (tid is None or query_param(value, "t") == tid):
            return int(v)
    return None


def unnamed_page(doc: etree._Element, current: str, posts: Sequence[etree._Element], host: str,
                 offset_of: Callable[[str], int | None], linked: set[int], default: int | None,
                 head: Callable[[], int | None] | None = None, total: Callable[[], int | None] | None = None,
                 ) -> tuple[int, int, int | None, int | None, set[int]]:
    """(page number, offset, step, highest page shown, offsets) of a page whose URL does not say its offset: a post
    link (`viewtopic.php?p=…`, `?t=…&view=findpost&p=…`) or a saved file. The pagination marks the page; the step
    comes from its numbered links, else from the page's own offset as `head()` gives it, else (the last page) from
    `total()` posts in the thread less this page's, else from the gcd of the linked offsets or `default`."""
    cur, high = shown_page(doc, current, posts)
    step = None
    if cur is not None and cur > 1:
        step = numbered_step(doc, posts, host, offset_of)
        if step is None and head is not None:
            own = head()
            step = own // (cur - 1) if own and own % (cur - 1) == 0 else None
        if step is None and total is not None and cur == high:
            n = total()
            off = n - len(posts) if n is not None else 0
            step = off // (cur - 1) if off > 0 and off % (cur - 1) == 0 else None
    if step is None:
        step, offsets = pagination_step(linked, 0, default)
    else:
        offsets = linked | {0}
    page_no, offset = _place_page(cur, high, step, 1, 0, offsets)
    return page_no, offset, step, high, offsets


def _place_page(cur: int | None, high: int | None, step: int | None, page_no: int, offset: int,
                offsets: set[int]) -> tuple[int, int]:
    """(page number, offset) of the page the pagination marks `cur` (as given when it marks none past the first),
    adding its offset and the last shown page's (`high`) to `offsets` when the step is known."""
    if cur is not None and cur > 1:
        page_no = cur
        if step:
            offset = (cur - 1) * step
            offsets.add(offset)
    if high is not None and step:
        offsets.add((high - 1) * step)
    return page_no, offset


def page_from_pagination(doc: etree._Element, current: str, page_no: int, offset: int, step: int | None,
                         offsets: set[int], posts: Sequence[etree._Element] = ()) -> tuple[int, int, int | None]:
    """For a page whose URL does not say its offset (a saved file): (page number, offset, highest page shown) from
    the pagination, adding the offsets it reveals to `offsets`; page_no/offset as given when it says nothing."""
    cur, shown_count = shown_page(doc, current, posts)
    page_no, offset = _place_page(cur, shown_count, step, page_no, offset, offsets)
    return page_no, offset, shown_count


def shown_page(doc: etree._Element, current: str,
               posts: Sequence[etree._Element] = ()) -> tuple[int | None, int | None]:
    """The page number the pagination marks as current (`current`: a relative XPath such as
    `.//li[…active…]`, else the box's "Pagina 2 di 5") and the highest page number it shows.

    For a page whose URL does not say its offset (a saved file): the page says which page it is."""
    cur: int | None = None
    high: int | None = None
    rel = xp(current)
    for box in pagination_boxes(doc, posts):
        text = inline_text(box)
        m = _PAGE_OF.search(text)
        if m:
            cur = cur or int(m.group(1))
            high = max(high or 0, int(m.group(2)))
        if cur is None:
            for el in rel(box):
                t = inline_text(el).strip().strip("[]")  # ForumFree classic marks it `<b>[2]</b>`
                if t.isdigit():
                    cur = int(t)
                    break
        for el in box.iter("a", "li", "strong", "span", "b"):
            t = inline_text(el).strip().strip("[]")
            if t.isdigit() and len(t) <= 5:
                high = max(high or 0, int(t))
    if cur is not None and high is not None and cur > high:
        high = cur
    return cur, high


_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.\-]+")


def query_param(url: str, name: str) -> str | None:
    """The first non-blank value of `name` in the URL's query (what parse_qs gives); never raises: a link
    with a malformed host on a page is read, not a reason to reject the page."""
    query = url.partition("#")[0].partition("?")[2]
    if not query:
        return None
    # Fast path: the one `name=` of a plain query (page offsets, ids) needs no decoding.
    key = name + "="
    if (query.count(key) == 1 and "%" not in query and "+" not in query and ";" not in query
            and "\t" not in url and "\n" not in url and "\r" not in url):  # urlsplit drops those three
        at = query.find(key)
        if at == 0 or query[at - 1] == "&":
            value = query[at + len(key):].partition("&")[0]
            if _PLAIN_VALUE.fullmatch(value):
                return value
    try:
        query = urlsplit(url).query
    except ValueError:  # a malformed host ("http://[::1/…"): its query is still readable, as the fast path reads it
        pass
    values = parse_qs(query).get(name)
    return values[0] if values else None


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of an http(s) URL, else "" (a saved file has no forum origin: the URLs built
    from it stay relative, `/?t=…#entry…`, instead of inventing a scheme or a host)."""
    parts = urlsplit(url)
    host = parts.hostname
    if parts.scheme.lower() not in ("http", "https") or not host:
        return ""
    try:
        port = parts.port
    except ValueError:  # a malformed port: keep the host alone
        port = None
    host = f"[{host}]" if ":" in host else host  # IPv6 literal; user:password@ is never copied
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


def source_digest(el: etree._Element) -> str:
    return hashlib.sha1(etree.tostring(el, encoding="utf-8", with_tail=False)).hexdigest()


def post_digest(parts: "PostParts") -> str:
    """Hash of a post's own source: its body markup and the header fields read from it (id, author, date,
    group, edit note). The rest of the post's chrome (mini-profile, like counter, signature, online status)
    changes without the post changing, and serialising it cost more than the rest of the post's reading."""
    h = hashlib.sha1("\x00".join((parts.id, parts.author, parts.author_id or "", parts.date_text or "",
                                   parts.timestamp or "", parts.group or "", parts.edited_by or "",
                                   parts.edited_text or "")).encode("utf-8", "surrogatepass"))
    if parts.body is not None:
        h.update(etree.tostring(parts.body, encoding="utf-8", with_tail=False))
    return h.hexdigest()


def text_of(el: etree._Element | None) -> str:
    return inline_text(el)


# --- dice blocks -----------------------------------------------------------------------------------

_DICE_WORDS = ("dice", "dado", "dadi", "roll")
_LABEL_WORDS = ("label", "desc", "motivo", "reason", "comment")
_LABEL_RX = re.compile("|".join(_LABEL_WORDS))


def dice_class_test(extra: Sequence[str] = ()) -> DiceTest:
    """An element is a dice block when its class or id names dice (tolerant: the markup is not confirmed)."""
    words = tuple(w.lower() for w in (*_DICE_WORDS, *extra))
    # One substring search for all the words (called on every classed element of every post body).
    rx = re.compile("|".join(re.escape(w) for w in words if w)) if any(words) else None

    def test(el: etree._Element) -> bool:
        attr = el.get("class") or el.get("id")
        if not attr:
            return False
        if "" in words:  # an empty configured word is in every name, the parent's too: never a block
            return False
        if rx is None or rx.search(attr.lower()) is None:
            return False
        # The block, not a piece inside one (dice_label, dice_total …): its parent is no dice block.
        parent = el.getparent()
        pa = ((parent.get("class") or parent.get("id") or "").lower()) if parent is not None else ""
        return rx.search(pa) is None

    return test


@dataclass(frozen=True)
class DiceRead:
    expression: str
    faces: tuple[int, ...] | None
    total: int | None
    label: str


_NUMS = re.compile(r"-?\d+")


# ForumFree's roller (`details.dice-roll`): what its stylesheet fixes (every ForumFree page carries it, see
# docs/platforms/forumfree.md) — a `summary`, a `dl` of `dt` (with an `em`, drawn followed by ":") and `dd`s
# (drawn separated by " -"), a `.dice-time`, and the result classes below on what shows a die's result.
_FF_RESULT = ("dice-low", "dice-medium", "dice-high", "dice-highest")
_FF_EXPR = re.compile(r"(\d{0,3})\s*[dD]\s*(\d{1,4})((?:\s*[+-]\s*\d{1,5})*)")
_FF_TOTAL = re.compile(r"(?:=|\btot(?:ale)?\b\.?:?|\brisultato\b:?)\s*(-?\d+)\s*$", re.I)
_FF_SIGNED = re.compile(r"^[+-]\s*\d+$")


def _is_ff_roller(el: etree._Element) -> bool:
    return el.tag == "details" and "dice-roll" in (el.get("class") or "").split()


def _read_ff_roller(el: etree._Element) -> list[DiceRead]:
    """The rolls of a `details.dice-roll`: one per `dt` of its `dl` (the `dd`s after it). The die is the
    `dt`'s expression (`1d20+3`, or `d20` counted by its results); faces are the `dd`s with a result class
    (else the plain numbers); a signed `dd` is a modifier; a `= 15` / `Totale 15` `dd` the total. The `summary`
    (without the icon) is the label when it says more than "dadi". Contents not fixed by the CSS are read
    tolerantly; whatever this does not read goes to the text reading of what the block shows."""
    summary = el.find("summary")
    label = text_of(summary).strip(" :-🎲") if summary is not None else ""
    if _FF_EXPR.fullmatch(label.replace(" ", "")) or label.casefold() in ("", "dadi", "dado", "lancio dadi",
                                                                            "lancio dei dadi", "tiro di dado"):
        label = ""  # no label written: build_post takes the text before the block
    out: list[DiceRead] = []
    for dl in el.iter("dl"):
        group: list[etree._Element] = []
        groups: list[tuple[etree._Element, list[etree._Element]]] = []
        for child in dl:
            if child.tag == "dt":
                group = []
                groups.append((child, group))
            elif child.tag == "dd" and groups:
                group.append(child)
        for dt, dds in groups:
            m = _FF_EXPR.search(text_of(dt))
            if m is None:
                continue
            faces: list[int] = []
            plain: list[int] = []
            constant = sum(int(x.replace(" ", "")) for x in re.findall(r"[+-]\s*\d+", m.group(3)))
            added = 0
            total = None
            for dd in dds:
                t = text_of(dd).strip()
                tm = _FF_TOTAL.search(t)
                if tm:
                    total = int(tm.group(1))
                elif _FF_SIGNED.match(t):
                    added += int(t.replace(" ", ""))
            # the popup's `addition[]` modifiers, shown as signed results, unless the die already names them
            constant = constant or added
            for dd in dds:
                t = text_of(dd).strip()
                if _FF_TOTAL.search(t) or _FF_SIGNED.match(t):
                    continue
                if t.lstrip("-").isdigit():
                    (faces if any(c in (dd.get("class") or "").split() for c in _FF_RESULT) else plain).append(int(t))
            faces = faces or plain
            count = m.group(1) or (str(len(faces)) if faces else "1")
            expr = f"{count}d{m.group(2)}" + (f"{constant:+d}" if constant else "")
            out.append(DiceRead(expr, tuple(faces) or None, total, label))
    if out:
        return out
    # what the browser draws: "dt: dd - dd", as the CSS writes it
    lines = [label] if label else []
    for dl in el.iter("dl"):
        row: list[str] = []
        for child in dl:
            if child.tag == "dt":
                if row:
                    lines.append(" ".join(row))
                row = [text_of(child) + ":"]
            elif child.tag == "dd":
                row.append((" - " if len(row) > 1 else "") + text_of(child))
        if row:
            lines.append(" ".join(row))
    return read_dice_block_text("\n".join(lines))


def read_dice_block(el: etree._Element, patterns: Sequence[re.Pattern[str]] = ()) -> list[DiceRead]:
    """The roll(s) shown in one dice block: configured patterns first, then the block's known structure
    (ForumFree's `details.dice-roll`), then text recognition."""
    if not patterns and _is_ff_roller(el):
        return _read_ff_roller(el)
    label_el = None
    for node in el.iterdescendants(etree.Element):
        cls = node.get("class")
        if cls and _LABEL_RX.search(cls.lower()):
            label_el = node
            break
    label = text_of(label_el) if label_el is not None else ""
    text = _block_text(el, skip=label_el)
    out = _pattern_reads(text, patterns, label)
    if out:
        return out
    for tr in find_text_rolls(text):
        lab = label or tr.label
        out.append(DiceRead(tr.expression, tr.faces, tr.total, lab))
    if not out and label_el is not None and label:
        # nothing outside the label: the roll is written inside it ("Attacco …: 1d12+6: 8 + 6 = 14"), read the
        # whole block, the label being the text before the roll
        return read_dice_block_text(_block_text(el, skip=None), patterns)
    return out


def _pattern_reads(text: str, patterns: Sequence[re.Pattern[str]], label: str = "") -> list[DiceRead]:
    """The rolls the first configured pattern that matches finds in `text`; each labelled by its own `label`
    group, else `label`, else the text before it."""
    for rx in patterns:
        out: list[DiceRead] = []
        for m in rx.finditer(text):
            gd = m.groupdict()
            faces = tuple(abs(int(x)) for x in _NUMS.findall(gd.get("faces") or "")) or None
            total = int(m.group("total")) if m.group("total") else None
            lab = (gd.get("label") or "").strip() or label or text[:m.start()].strip(" :-\n")
            out.append(DiceRead(m.group("expr").strip(), faces, total, lab))
        if out:
            return out
    return []


def read_dice_block_text(text: str, patterns: Sequence[re.Pattern[str]] = ()) -> list[DiceRead]:
    """The rolls in a dice block's whole text, each labelled by the text before it."""
    out = _pattern_reads(text, patterns)
    if out:
        return out
    return [DiceRead(tr.expression, tr.faces, tr.total, tr.label) for tr in find_text_rolls(text)]


def _block_text(el: etree._Element, skip: etree._Element | None) -> str:
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str) and child is not skip and child.tag not in ("script", "style"):
                if child.tag in ("br", "div", "p", "li", "tr"):
                    parts.append("\n")
                walk(child)
                if child.tag in ("div", "p", "li", "tr"):
                    parts.append("\n")
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return clean_lines("".join(parts))  # clean_lines collapses every whitespace run itself


# --- building a Post from an adapter's pieces ------------------------------------------------------

@dataclass
class PostParts:
    """What an adapter reads from one post's markup before the shared steps."""

    id: str
    element: etree._Element  # the whole post (digest)
    body: etree._Element | None
    author: str
    author_id: str | None = None
    date_text: str | None = None
    timestamp: str | None = None  # already ISO (phpBB <time datetime>, api.php)
    group: str | None = None  # member group text ("Master", "Giocatori")
    edited_by: str | None = None
    edited_text: str | None = None
    anchor_url: str = ""
    extra_rolls: list[Roll] = field(default_factory=list)
    stop: DiceTest | None = None  # elements of the body that belong to another post (broken markup)
    # the platform's own reading of one dice block (phpBB's fancydice: its flag, several specs), else the shared one
    read_block: Callable[[etree._Element], list[Roll]] | None = None


_SCHEMA_FN: Callable | None = None
_DAMAGE_FN: Callable | None = None


def _schema_fn() -> Callable:
    global _SCHEMA_FN
    if _SCHEMA_FN is None:
        from scraper.schema import parse_schema
        _SCHEMA_FN = parse_schema
    return _SCHEMA_FN


def _damage_fn() -> Callable:
    global _DAMAGE_FN
    if _DAMAGE_FN is None:
        from scraper.damage import parse_damage_calcs
        _DAMAGE_FN = parse_damage_calcs
    return _DAMAGE_FN


def post_schema(scan: str, links: Sequence[tuple[str, str]], base_url: str,
                joined: dict[str, str] | None = None) -> PostSchema | None:
    """The schema of a post's own text (sheet link resolved against the page URL; `joined` remembers the
    resolutions of one page: every post of a character links the same sheet)."""
    if joined is None:
        joined = {}
    pairs = []
    for href, txt in links:
        url = joined.get(href)
        if url is None:
            url = joined[href] = urljoin(base_url, strip_controls(href))  # no escapes in a printed URL
        pairs.append((txt, url))
    return _schema_fn()(scan, links=tuple(pairs))


def roles_for(author: str, group: str | None, config: ForumConfig) -> str:
    if config.is_gm_account(author):
        return "gm_bot"
    if config.is_master(author, group):
        return "master"
    return "player"



# Invisible format characters a name may carry at its ends (direction marks pasted with an RTL nick, a BOM, a
# zero-width space): the same member must have one name on every post. Inside a name they stay (emoji joiners).
_NAME_EDGES = " \u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def clean_name(name: str | None) -> str | None:
    """`name` without invisible format characters at its ends (ASCII names, the common case, as they are)."""
    if not name or name.isascii():
        return name
    return name.strip(_NAME_EDGES)


def build_post(parts: PostParts, *, page: int, ctx: ParseContext, source: str, dice_test: DiceTest | None) -> Post:
    """Shared steps: split the body, read dice blocks and text rolls, schema, damage, role, dates, digest."""
    cfg = ctx.config
    if "dice" in cfg.selectors and parts.body is not None:
        # the forum config names its dice blocks: those elements, besides the built-in test
        # keep the proxies alive: lxml reuses a node's proxy only while one is referenced, so ids stay valid
        keep = [e for e in xp(cfg.selectors["dice"])(parts.element) if isinstance(e, etree._Element)]
        marked = {id(e) for e in keep}
        base_test = dice_test

        def dice_test(el: etree._Element, _keep: list = keep) -> bool:  # noqa: F811 - narrowed for this post
            return id(el) in marked or (base_test is not None and base_test(el))
    pt = split_post(parts.body, dice_test=dice_test, stop=parts.stop) if parts.body is not None else PostText("", "")
    patterns = cfg.compiled_dice_patterns()
    # Rolls in post order: dice blocks sit at DICE_MARK lines of `marked`, text rolls at their spans.
    placed: list[tuple[int, Roll]] = []
    marks = [m.start() for m in re.finditer(DICE_MARK, pt.marked)] if pt.dice else []
    for n, block in enumerate(pt.dice):
        pos = marks[n] if n < len(marks) else len(pt.marked)
        if parts.read_block is not None:
            placed.extend((pos, r) for r in parts.read_block(block))
            continue
        for d in read_dice_block(block, patterns):
            placed.append((pos, make_roll(expression=d.expression, faces=d.faces, total=d.total,
                                          label=d.label or text_before(block), source=source)))
    text_source = source if cfg.text_rolls == "forum" else "typed_text"
    for tr in find_text_rolls(pt.marked or pt.scan):
        src = "typed_text" if tr.kind == "typed" else text_source
        placed.append((tr.start, make_roll(expression=tr.expression, faces=tr.faces, total=tr.total,
                                           label=tr.label.replace(DICE_MARK, "").strip(), source=src)))
    placed.sort(key=lambda pr: pr[0])
    rolls: list[Roll] = list(parts.extra_rolls) + [r for _, r in placed]
    schema = post_schema(pt.scan, pt.links, ctx.url, ctx.joined) if pt.scan else None
    damage = tuple(_damage_fn()(pt.scan)) if pt.scan else ()
    tz = cfg.tz
    author = clean_name(parts.author) or ""
    timestamp = parts.timestamp or parse_forum_date(parts.date_text, tz, now=ctx.now)
    edited_at = parse_forum_date(parts.edited_text, tz, now=ctx.now) if parts.edited_text else None
    return Post(
        id=parts.id,
        page=page,
        url=parts.anchor_url,
        author=author,
        author_id=parts.author_id,
        timestamp=timestamp,
        role=roles_for(author, parts.group, cfg),  # type: ignore[arg-type]
        edited_by=clean_name(parts.edited_by) or None,
        edited_at=edited_at,
        body=pt.text,
        quotes=tuple(pt.quotes),
        schema=schema,
        rolls=tuple(rolls),
        damage=damage,
        character=(schema.character if schema is not None else None),
        digest=post_digest(parts),
    )


_LINE_BLOCKS = frozenset(("div", "p", "blockquote", "ul", "ol", "li", "dl", "table", "pre", "hr", "h1", "h2", "h3",
                     "h4", "h5", "h6", "details", "center"))


def text_before(box: etree._Element) -> str:
    """The label of a dice block that shows none (fancydice, ForumFree's roller: the player writes it before the
    roll): the text before it on its line, else on the nearest line above with text (never across a block — a
    quote, another box — nor out of the post's content)."""
    parts: list[str] = []
    node = box

    def said() -> bool:
        return any(p.strip() for p in parts)

    while True:
        prev = node.getprevious()
        if prev is None:
            parent = node.getparent()
            if parent is None:
                break
            if parent.text:
                parts.append(parent.text)
            if parent.tag in _LINE_BLOCKS or said():
                break
            node = parent  # an inline wrapper ([b], [color]): the line goes on before it
            continue
        if prev.tail:
            parts.append(prev.tail)
        if isinstance(prev.tag, str):
            if prev.tag == "br":
                if said():
                    break
            elif prev.tag in _LINE_BLOCKS:
                break
            else:
                parts.append(text_of(prev))
        node = prev
    return " ".join(strip_controls("".join(reversed(parts))).split())  # a label is read text: no controls


# The name ends at a spaced dash, a comma, "il"/"on", or the end: a dash inside a name (Jean-Luc) is no separator.
# A dash closing the name ("Kurogane- 3/11") is no separator when a spaced dash follows: "-Lucario93- - 12/2/2009".
_EDIT = re.compile(r"(?:edited by|modificato da|ultima modifica(?: di)?|modifié par)\s*:?\s*(.+?)\s*"
                   r"(?:(?<=\s)[-–]|[-–](?=\s)(?!\s+[-–]\s)|,|\bil\b|\bon\b|$)\s*(.*)$", re.I | re.S)


def parse_edit_note(text: str) -> tuple[str | None, str | None]:
    """`"Edited by Kurogane - 3/11/2026, 22:10"` → ("Kurogane", "3/11/2026, 22:10")."""
    m = _EDIT.search(text or "")
    if not m:
        return None, None
    return m.group(1).strip() or None, m.group(2).strip() or None




def content_post_id(author: str, date_text: str, seen: set[str]) -> str:
    """A stable id for a post whose page gives it none: `h` + FNV-1a (32 bit, hex) of its author and its date as
    written, `-2`, `-3`… for a repeat on the page (`seen`, updated). The userscript computes the same id from the
    same two texts (userscript/src/40_platform_base.js), so verdicts keyed by it land on the post."""
    h = 0x811C9DC5
    for byte in f"{author.strip()}\n{date_text.strip()}".encode("utf-8", "surrogatepass"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    pid = base = f"h{h:08x}"
    n = 1
    while pid in seen:
        n += 1
        pid = f"{base}-{n}"
    seen.add(pid)
    return pid


__all__ = [
    "Css", "Page", "Platform", "ParseContext", "PostParts", "DiceRead", "build_post", "read_dice_block",
    "dice_class_test", "parse_edit_note", "xp", "first", "has_class",
    "offset_step", "pagination_step", "pagination_boxes", "pagination_hrefs", "check_page_count", "MAX_PAGES",
    "page_from_pagination", "numbered_step", "head_offset", "unnamed_page", "html_parser", "read_html", "shown_page", "query_param", "host_of", "origin_of", "source_digest", "post_digest", "text_of", "doc_xpath",
    "in_containers", "content_post_id", "text_before",
]
