"""ForumFree / ForumCommunity: current `li.post#ee<id>` layout, classic table skins, and api.php JSON."""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

from lxml import etree

from engine.history import Post
from scraper.errors import NotAThread
from scraper.platforms.base import (
    Css, Page, ParseContext, PostParts, build_post, dice_class_test, doc_xpath, first, has_class, host_of,
    check_page_count, html_parser, in_containers, origin_of, pagination_hrefs, pagination_step, shown_page,
    parse_edit_note, query_param, read_html, text_of, unnamed_page, head_offset, xp, content_post_id,
)
from scraper.htmltext import collapse_ws
from scraper.platforms.config import ForumConfig

PAGE_SIZE = 15  # ForumFree's usual posts per page (st= steps); the pagination links say otherwise
FF_HOSTS = ("forumfree.it", "forumfree.net", "forumcommunity.net", "blogfree.net", "forumcommunity.it")

_MID = re.compile(r"MID=(\d+)", re.I)
_GROUP_PREFIX = re.compile(r"^\s*(?:gruppo|group)\s*:\s*", re.I)
_ENTRY = re.compile(r"^entry(\d+)$")
_TITLE_SUFFIX = re.compile(r"\s*[|\-–]\s*[^|\-–]*$")

# Document-wide expressions name the tag first and use `descendant::…[1]` where one node is enough:
# libxml2 then tests a name before any string predicate and stops at the first hit (10–50× cheaper on
# a 150 KB page than `//*[contains(@class, …)]//a`).
X_POSTS = f"descendant::li/@id[starts-with(., 'ee')]/parent::li[{has_class('post')}]"
X_CLASSIC_ANCHORS = "descendant::a/@name[starts-with(., 'entry')]/parent::a"
X_NICK = Css(".nick a, .normalname a")
X_NICK_PLAIN = Css(".nick, .normalname")  # a guest or deleted member: the name without a profile link
X_WHEN = Css(".when")
X_GROUP = Css(".u_group")
X_BODY = Css("td.right table.color")
X_ANY_COLOR = f".//table[{has_class('color')}][not(.//td[{has_class('left')}])]"
X_CLASSIC_BODY = f"descendant::div[{has_class('postcolor')} or {has_class('color')}][1]"
X_CLASSIC_BODY_FAST = Css("div.postcolor, div.color")
X_EDIT = Css("div.edit, span.edit")
# Classic table skins (the real pages in ../shared/real/forumfree-classic/): `table#ee<id>` > `td.post`, or a
# `td.post` in a table without that id (the 2009 skin). Through the class attributes, as the other document-wide
# expressions; a `td.post` inside another (a post quoting a page's markup) is not a post.
X_TABLE_POSTS = (f"descendant::td/@class[contains(., 'post')]/parent::td[{has_class('post')}]"
                 f"[not(ancestor::td[{has_class('post')}])][.//*[{has_class('nick')}]]")
X_TABLE_NICK = Css("td.left_top .nick, .nick")
X_TABLE_BODY = Css("td.right div.color")
X_TABLE_HEAD = Css("td.right_top")
X_TABLE_DETAILS = Css("td.left .details")
X_HEAD_ENTRY = "descendant::a[contains(@href, '#entry')]"
_GROUP_IN_DETAILS = re.compile(r"(?:Gruppo|Group)\s*:\s*(.+?)(?=\s*(?:Messaggi|Posts|Stato|Status)\b|$)")
_POSTED = re.compile(r"(?:Inviato il|Posted on|Posted)\s*:?\s*(.+?)\s*$")
_ENTRY_ID = re.compile(r"#entry(\d+)$")
_EE_ID = re.compile(r"^ee(\d+)$")
# The title: the first of `//div[.title]//h1 | //div[.maintitle]` in document order.
X_TITLE_H1 = f"descendant::h1[ancestor::div[{has_class('title')}]][1]"
X_TITLE_BEFORE = f"ancestor::div[{has_class('maintitle')}] | preceding::div[{has_class('maintitle')}]"
X_TITLE_MAIN = f"descendant::div[{has_class('maintitle')}][1]"
X_TITLE_MTITLE = (f"(descendant::h1[{has_class('mtitle')}] | descendant::div[{has_class('mtitle')}]"
                  f"[not(preceding::h1[{has_class('mtitle')}])])[1]")
# The section: the first `a[href*="f="]` inside the navigation strip.
X_NAV = "@id='navstrip' or contains(@class, 'navigation')"
X_NAV_LINK = "descendant::a[contains(@href, 'f=')]"
# The current page: `li.current` (current layout), `<b>[2]</b>` (classic `ul.pages`).
X_CURRENT_PAGE = f".//li[{has_class('current')}] | .//*[{has_class('current')}] | .//b[not(ancestor::a)]"


def _is_ff_host(host: str) -> bool:
    return any(host == h or host.endswith("." + h) for h in FF_HOSTS)


class ForumFree:
    name = "forumfree"

    def claims_url(self, url: str) -> bool:
        return _is_ff_host(host_of(url))

    def detect(self, doc: etree._Element, url: str) -> float:
        host_bonus = 0.05 if _is_ff_host(host_of(url)) else 0.0
        if doc_xpath(doc, X_POSTS):
            return 0.9 + host_bonus
        if _table_posts(doc):
            return 0.85 + host_bonus
        anchors = doc_xpath(doc, X_CLASSIC_ANCHORS)
        if anchors and xp(X_CLASSIC_BODY)(doc):
            return 0.7 + host_bonus
        return 0.0

    # --- HTML --------------------------------------------------------------------------------------
    def parse(self, doc: etree._Element, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        ctx = ParseContext(url=url, config=config, now=now)
        tid = query_param(url, "t") or _tid_from_doc(doc)
        st = _int(query_param(url, "st")) or 0
        host = host_of(url)
        origin = origin_of(url)
        sel = config.selectors
        post_els = xp(sel["post"])(doc) if "post" in sel else doc_xpath(doc, X_POSTS)
        classic: list[tuple[str, etree._Element]] = []
        tables = _table_posts(doc) if not post_els and "post" not in sel else []
        if tables:
            seen: set[str] = set()
            for table, cell in tables:
                classic.append((_table_post_id(table, cell, seen), table))
        elif not post_els:
            for anchor in doc_xpath(doc, X_CLASSIC_ANCHORS):
                m = _ENTRY.match(anchor.get("name") or "")
                table = next(anchor.iterancestors("table"), None)
                if m and table is not None:
                    classic.append((m.group(1), table))
        # The other pages: the pagination boxes' links to this thread only (never the links in the posts)
        containers = post_els if post_els else [t for _, t in classic]
        linked: set[int] = set()
        for href in pagination_hrefs(doc, containers, host):
            if "st=" not in href:
                continue
            o = _int(query_param(href, "st"))
            if o is not None and (tid is None or query_param(href, "t") == tid):
                linked.add(o)
        if query_param(url, "st") is None:
            # a post link (`&view=findpost&p=…`, `?act=findpost&pid=…`) or a saved page does not say its offset:
            # the pagination says which page it is, its numbered links (or the page's og:url) the step
            page_no, st, step, _, offsets = unnamed_page(
                doc, X_CURRENT_PAGE, containers, host, lambda h: _st_of(h, tid), linked,
                config.page_size or PAGE_SIZE, head=lambda: head_offset(doc, "st", tid))
            if not step:  # nothing says the step: the forum's usual one
                step = PAGE_SIZE
                st = (page_no - 1) * step
                offsets.add(st)
        else:
            step, offsets = pagination_step(linked, st, config.page_size or PAGE_SIZE,
                                            lambda: shown_page(doc, X_CURRENT_PAGE, containers)[0])
            step = step or PAGE_SIZE
            page_no = st // step + 1
        last_offset = max(offsets)
        page_count = check_page_count(last_offset // step + 1)
        dice_test = dice_class_test(config.dice_classes)
        source = "forum_roller"
        posts: list[Post] = []
        skin = "ff-current"
        if post_els:
            for el in post_els:
                pid = (el.get("id") or "")[2:] if (el.get("id") or "").startswith("ee") else _post_id(el)
                if not pid:
                    continue
                parts = self._current_parts(el, pid, tid, st, origin, sel)
                posts.append(build_post(parts, page=page_no, ctx=ctx, source=source, dice_test=dice_test))
        else:
            skin = "ff-classic"
            read = self._table_parts if tables else self._classic_parts
            for pid, table in classic:
                parts = read(table, pid, tid, st, origin, sel)
                posts.append(build_post(parts, page=page_no, ctx=ctx, source=source, dice_test=dice_test))
        if not posts:
            raise NotAThread("nessun messaggio trovato nella pagina ForumFree")
        urls = tuple(_page_url(origin, tid, o) for o in range(0, last_offset + 1, step)) if tid else (url,)
        nxt = _page_url(origin, tid, st + step) if tid and st + step <= last_offset else None
        title_el = _title_el(doc)
        title = text_of(title_el) if title_el is not None else _title_from_head(doc)
        section_el = next(in_containers(doc, X_NAV, X_NAV_LINK), None)
        section = query_param(section_el.get("href") or "", "f") if section_el is not None else None
        return Page(url=url, platform=self.name, skin=skin, host=host, thread_id=tid, title=title or None,
                    page=page_no, page_count=page_count, page_size=step, last_offset=last_offset,
                    page_urls=urls, next_url=nxt, posts=tuple(posts), section=section)

    def _current_parts(self, el: etree._Element, pid: str, tid: str | None, st: int, origin: str,
                       sel: dict) -> PostParts:
        nick = first(el, sel.get("author", X_NICK))
        author = text_of(nick) if nick is not None else ""
        if not author and "author" not in sel:  # no profile link, or an icon link first: the nick's own text
            author = text_of(first(el, X_NICK_PLAIN))
        when = first(el, sel.get("date", X_WHEN))
        group_el = first(el, sel.get("group", X_GROUP))
        body = first(el, sel.get("body", X_BODY))
        if body is None and "body" not in sel:
            body = first(el, X_ANY_COLOR)  # broken markup: no td.right cell, take the first body table
        edit_el = first(el, X_EDIT)
        edited_by, edited_text = parse_edit_note(text_of(edit_el)) if edit_el is not None else (None, None)
        date_text = None
        if when is not None:
            date_text = when.get("title") or text_of(when)
        return PostParts(
            id=pid, element=el, body=body, author=author,
            author_id=_mid(nick), date_text=date_text,
            group=_GROUP_PREFIX.sub("", text_of(group_el)) if group_el is not None else None,
            edited_by=edited_by, edited_text=edited_text, anchor_url=_post_url(origin, tid, st, pid),
            stop=_nested_post,
        )

    def _table_parts(self, table: etree._Element, pid: str, tid: str | None, st: int, origin: str,
                     sel: dict) -> PostParts:
        """A classic table skin's post (`table#ee<id>` > `td.post`: nick in `td.left_top`, date in `td.right_top`,
        body `td.right div.color`), as the real pages show it (docs/platforms/forumfree.md)."""
        nick = first(table, sel.get("author", X_TABLE_NICK))
        author = text_of(nick) if nick is not None else ""
        link = first(nick, "descendant-or-self::a[1]") if nick is not None else None
        body = first(table, sel.get("body", X_TABLE_BODY))
        if body is None and "body" not in sel:
            body = first(table, X_CLASSIC_BODY_FAST)
        head = first(table, X_TABLE_HEAD)
        date_text = None
        if "date" in sel:
            when = first(table, sel["date"])
            date_text = (when.get("title") or text_of(when)) if when is not None else None
        elif head is not None:
            date_text = _table_date(head, pid)
        details = first(table, X_TABLE_DETAILS)
        group = None
        if details is not None:
            m = _GROUP_IN_DETAILS.search(text_of(details))
            group = m.group(1).strip() if m else None
        edit_el = first(body, X_EDIT) if body is not None else None
        edited_by, edited_text = parse_edit_note(text_of(edit_el)) if edit_el is not None else (None, None)
        return PostParts(
            id=pid, element=table, body=body, author=author, author_id=_mid(link), date_text=date_text,
            group=group, edited_by=edited_by, edited_text=edited_text, anchor_url=_post_url(origin, tid, st, pid),
        )

    def _classic_parts(self, table: etree._Element, pid: str, tid: str | None, st: int, origin: str,
                       sel: dict) -> PostParts:
        """An IPB 1.x-style post (`a[name=entry<id>]`, `span.normalname`, `div.postcolor`, `span.postdetails`)."""
        nick = first(table, sel.get("author", X_NICK))
        author = text_of(nick) if nick is not None else ""
        if not author and "author" not in sel:  # no profile link, or an icon link first: the nick's own text
            author = text_of(first(table, X_NICK_PLAIN))
        body = first(table, sel.get("body", X_CLASSIC_BODY_FAST))
        if body is not None and "body" not in sel:
            # Old IPB quotes close the body div and reopen it after the quote table: read the whole cell.
            cell = next(body.iterancestors("td"), None)
            body = cell if cell is not None else body
        date_text = None
        group = None
        for det in (s for s in table.iterdescendants("span") if "postdetails" in (s.get("class") or "").split()):
            t = text_of(det)
            if "Inviato" in t or "Posted" in t:
                date_text = re.sub(r"^.*?(?:Inviato il|Posted on|Posted)\s*:?", "", t)
            elif "Gruppo" in t or "Group" in t:
                m = re.search(r"(?:Gruppo|Group)\s*:\s*(.+?)(?:\s+(?:Messaggi|Posts)\b|$)", t)
                group = m.group(1).strip() if m else None
        edit_el = first(table, X_EDIT)
        edited_by, edited_text = parse_edit_note(text_of(edit_el)) if edit_el is not None else (None, None)
        return PostParts(
            id=pid, element=table, body=body, author=author,
            author_id=_mid(nick), date_text=date_text, group=group, edited_by=edited_by,
            edited_text=edited_text, anchor_url=_post_url(origin, tid, st, pid),
        )

    # --- api.php JSON --------------------------------------------------------------------------------
    def parse_api(self, data: Any, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        """A `/api.php?t=<tid>&st=<offset>` document (already decoded JSON or its text)."""
        if isinstance(data, (bytes, str)):
            try:
                data = json.loads(data)
            except (ValueError, UnicodeDecodeError) as exc:
                raise NotAThread(f"risposta api.php non valida: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            raise NotAThread("la risposta api.php non contiene messaggi")
        info = data.get("info") if isinstance(data.get("info"), dict) else {}
        ctx = ParseContext(url=url, config=config, now=now)
        origin = origin_of(url) or _api_origin(info)
        host = host_of(origin)
        tid = str(info.get("t") or query_param(url, "t") or "") or None
        st = _int(str(info.get("st"))) if info.get("st") is not None else (_int(query_param(url, "st")) or 0)
        st = st or 0
        per_page = _int(str(info.get("per_page"))) or PAGE_SIZE
        page_no = st // per_page + 1
        dice_test = dice_class_test(config.dice_classes)
        posts: list[Post] = []
        for msg in data["messages"]:
            if not isinstance(msg, dict) or msg.get("id") is None:
                continue
            pid = str(msg["id"])
            user = msg.get("user") if isinstance(msg.get("user"), dict) else {}
            minfo = msg.get("info") if isinstance(msg.get("info"), dict) else {}
            content = msg.get("content") if isinstance(msg.get("content"), str) else ""
            body = _fragment(content)
            edit = minfo.get("edit") if isinstance(minfo.get("edit"), dict) else {}
            parts = PostParts(
                id=pid, element=body, body=body, author=_plain(user.get("name")),
                author_id=str(user["id"]) if user.get("id") is not None else None,
                date_text=_api_date(minfo.get("date")),
                group=_plain(user.get("group")) or None,
                edited_by=_plain(edit.get("user")) or None,
                edited_text=_api_date(edit.get("date")),
                anchor_url=_post_url(origin, tid, st, pid),
            )
            posts.append(build_post(parts, page=page_no, ctx=ctx, source="forum_roller", dice_test=dice_test))
        if not posts:
            raise NotAThread("nessun messaggio nella risposta api.php")
        pages = check_page_count(_int(str(info.get("pages"))) or page_no)
        last_offset = (pages - 1) * per_page
        if tid:
            urls = tuple(f"{origin}/api.php?t={tid}&st={o}" for o in range(0, last_offset + 1, per_page))
            nxt = f"{origin}/api.php?t={tid}&st={st + per_page}" if st + per_page <= last_offset else None
        else:  # no thread id: the other pages cannot be named
            urls, nxt = (url,), None
        return Page(url=url, platform=self.name, skin="ff-api", host=host, thread_id=tid,
                    title=_plain(info.get("title")) or None, page=page_no, page_count=pages,
                    page_size=per_page, last_offset=last_offset, page_urls=urls, next_url=nxt,
                    posts=tuple(posts), section=str(info["f"]) if info.get("f") is not None else None,
                    thread_url=f"{origin}/?t={tid}" if tid else None)  # readers link the thread, not its JSON


_FRAGMENT_PARSER = html_parser()


def _fragment(content: str) -> etree._Element:
    """The <body> of an api.php message's HTML (a stray </div> in it cannot cut the message short)."""
    root = read_html(f"<html><body>{content}</body></html>".encode("utf-8"), _FRAGMENT_PARSER)
    body = root.find("body") if root is not None else None
    return body if body is not None else etree.Element("body")


def _api_date(value: Any) -> str | None:
    """An api.php date as text: as written ("24/10/2026, 21:00"), or a Unix time in seconds (the JSON's date
    format is not confirmed: a number of 9-11 digits is read as one) as UTC ISO 8601, which the forum's
    timezone then shows."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if text.isdigit() and 9 <= len(text) <= 11:
        return datetime.fromtimestamp(int(text), timezone.utc).isoformat()
    return text or None


def _plain(value: Any) -> str:
    """A name or title from the JSON as the HTML pages give it: whitespace collapsed, no control characters."""
    return collapse_ws(str(value)) if value else ""


def _table_posts(doc: etree._Element) -> list[tuple[etree._Element, etree._Element]]:
    """(post table, its `td.post`) of a classic table skin page, in page order."""
    out = []
    for cell in doc_xpath(doc, X_TABLE_POSTS):
        table = next(cell.iterancestors("table"), None)
        if table is not None:
            out.append((table, cell))
    return out


def _table_post_id(table: etree._Element, cell: etree._Element, seen: set[str]) -> str:
    """The post's id as the page gives it: `table#ee<id>`, else its header's `#entry<id>` link, else the
    `entry<id>` anchor just before the table; a page that gives none (the 2009 skin editor's page) a stable id
    from the post's header (`content_post_id`)."""
    m = _EE_ID.match(table.get("id") or "")
    if m:
        return m.group(1)
    head = first(cell, X_TABLE_HEAD)
    for a in xp(X_HEAD_ENTRY)(head if head is not None else cell):
        m = _ENTRY_ID.search(a.get("href") or "")
        if m:
            return m.group(1)
    prev = table.getprevious()
    if prev is not None and isinstance(prev.tag, str):
        for a in prev.iter("a"):
            m = _ENTRY.match(a.get("id") or a.get("name") or "")
            if m:
                return m.group(1)
    nick = first(cell, X_TABLE_NICK)
    date = _table_date(head, None) if head is not None else None
    return content_post_id(text_of(nick) if nick is not None else "", date or "", seen)


def _table_date(head: etree._Element, pid: str | None) -> str | None:
    """The post's date: the `title` of its `#entry<id>` link (to the second: `11/2/2009, 18:01:44`), else the
    text after "Inviato il:" / "Posted on" in the header."""
    links = xp(X_HEAD_ENTRY)(head)
    for a in links:
        if pid is None or (a.get("href") or "").endswith(f"#entry{pid}"):
            if a.get("title"):
                return a.get("title")
    for a in head.iter("a"):
        m = _POSTED.search(text_of(a))
        if m:
            return m.group(1)
    m = _POSTED.search(text_of(head))
    return m.group(1) if m else None


def _title_el(doc: etree._Element) -> etree._Element | None:
    h1 = first(doc, X_TITLE_H1)
    if h1 is None:
        main = first(doc, X_TITLE_MAIN)
        if main is not None:
            return main
        # classic table skins: `h1.mtitle` (the 2009 skin: the first `div.mtitle`), the title in its `<b>`, the
        # description after it ("<b>Troll verde mangia umani</b>, Legend of Zelda")
        mtitle = first(doc, X_TITLE_MTITLE)
        if mtitle is None:
            return None
        bold = mtitle.find("b")
        return bold if bold is not None and text_of(bold) else mtitle
    before = xp(X_TITLE_BEFORE)(h1)  # a maintitle ahead of the h1 comes first in document order
    return before[0] if before else h1


def _nested_post(el: etree._Element) -> bool:
    return el.tag == "li" and (el.get("id") or "").startswith("ee")


def _int(s: str | None) -> int | None:
    if s is None:
        return None
    s = s.strip()
    return int(s) if s.isdigit() else None


def _mid(a: etree._Element | None) -> str | None:
    if a is None:
        return None
    m = _MID.search(a.get("href") or "")
    return m.group(1) if m else None


def _post_id(el: etree._Element) -> str | None:
    a = first(el, ".//a[starts-with(@id, 'entry') or starts-with(@name, 'entry')]")
    if a is None:
        return None
    m = re.search(r"\d+", a.get("id") or a.get("name") or "")
    return m.group(0) if m else None


def _tid_from_doc(doc: etree._Element) -> str | None:
    for script in xp("descendant::script[contains(., 'ff_t')]")(doc):
        m = re.search(r"ff_t\s*=\s*(\d+)", script.text or "")
        if m:
            return m.group(1)
    body = first(doc, "descendant::body[1]")
    if body is not None:
        m = re.search(r"\bt(\d+)\b", body.get("class") or "")
        if m:
            return m.group(1)
    return None


def _title_from_head(doc: etree._Element) -> str | None:
    t = first(doc, "descendant::title[1]")
    if t is None:
        return None
    return _TITLE_SUFFIX.sub("", text_of(t)) or None


def _st_of(href: str, tid: str | None) -> int | None:
    """A pagination link's offset, when it names this thread (page 1 has no st=)."""
    if tid is not None and query_param(href, "t") != tid:
        return None
    return _int(query_param(href, "st") or "0")


def _page_url(origin: str, tid: str | None, st: int) -> str:
    """The page's URL on the forum (`origin` "" for a saved file: then relative to the forum, `/?t=…`)."""
    return f"{origin}/?t={tid}" + (f"&st={st}" if st else "")


def _post_url(origin: str, tid: str | None, st: int, pid: str) -> str:
    # no thread id (broken page): the anchor alone, never a `?t=None`
    return (_page_url(origin, tid, st) if tid else "") + f"#entry{pid}"


_API_URL_KEYS = ("url", "forum_url", "board_url", "link")
_API_HOST_KEYS = ("host", "forum_host", "domain")


def _api_origin(info: dict) -> str:
    """The forum's origin as an api.php document may name it (`info.url`, or a bare `info.host`: ForumFree
    serves over https); "" when it does not."""
    for key in _API_URL_KEYS:
        value = info.get(key)
        if isinstance(value, str) and origin_of(value.strip()):
            return origin_of(value.strip())
    for key in _API_HOST_KEYS:
        value = info.get(key)
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?::\d{1,5})?", value.strip()):
            return origin_of(f"https://{value.strip()}")
    return ""


__all__ = ["ForumFree", "PAGE_SIZE"]
