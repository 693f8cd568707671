"""Forumotion (forumattivo): phpbb2 / phpbb3 / invision templates, Game-Master dice posts paired with the
player post they answer."""
from __future__ import annotations

import re
from datetime import datetime
from typing import Sequence
from urllib.parse import urlsplit

from lxml import etree

from engine.fastdata import evolve
from engine.history import Post, Roll
from scraper.dicetag import make_roll
from scraper.errors import NotAThread
from scraper.platforms.base import (
    Css, Page, ParseContext, PostParts, build_post, dice_class_test, doc_xpath, first, has_class, host_of,
    check_page_count, in_containers, origin_of, page_from_pagination, pagination_hrefs, pagination_step,
    parse_edit_note, shown_page, text_of, unnamed_page, xp,
)
from scraper.platforms.config import ForumConfig

FM_HOSTS = ("forumattivo.com", "forumattivo.it", "forumfree.forumattivo.com", "forumotion.com",
            "forumactif.com", "forumactif.org", "forumotion.net", "forumgratuit.org", "forumcommunity.forumattivo.com",
            "forumotion.eu", "editboard.com", "forumeiros.com")

_TOPIC_URL = re.compile(r"/t(\d+)(?:p(\d+))?-([^/?#]*)")
_UID = re.compile(r"/u(\d+)")
_POST_ID = re.compile(r"^p(\d+)$")
_MEMBER = re.compile(r"(?:membro|member|membre|usuário|miembro)\s*['‘’\"]\s*(.+?)\s*['‘’\"]", re.I)
_DIE_SRC = re.compile(r"d(\d+)[_-](\d+)\.(?:png|gif|jpe?g|webp)", re.I)
_DIE_NAME = re.compile(r"['‘’\"]\s*([^'‘’\"]+?)\s*['‘’\"]")
_SIDES_IN_NAME = re.compile(r"\(?\s*[dD](\d+)\s*\)?\s*$")
_LABEL_LINE = re.compile(r"^\s*(?:lancio|lanci|tiro|dado|dadi)\s*[:\-]\s*(.+?)\s*$", re.I)
_VS_LINE = re.compile(r"^\s*([A-Za-zÀ-ÿ][^\n]{0,80}?\([^()\n]*\b(?:vs|contro)\b[^()\n]*\)\s*:.*)$", re.I)

# Document-wide expressions: tag first, `[1]` where one node is enough (see forumfree.py).
# Through the id attributes: libxml2 tests an attribute axis far faster than a predicate on every element.
X_POST_ANY = "descendant::*/@id[starts-with(., 'p')]/parent::*[contains(@class, 'post')]"
X_GENERATOR = "descendant::meta[@name='generator'][contains(@content, 'orumotion')][1]"
X_ILLIWEB = "descendant::script[contains(@src, 'illiweb.com')][1] | descendant::img[contains(@src, 'illiweb.com')][1]"
X_CURRENT_PAGE = ".//strong[not(ancestor::a)]"
# The first h1 that is either (one scan of the h1s, not two).
X_TITLE = f"descendant::h1[{has_class('page-title')} or ancestor::*[{has_class('maintitle')}]][1]"
X_NAV = f"contains(@class, 'nav') and ({has_class('navbar')} or {has_class('nav')})"  # one test on most elements
X_NAV_LINKS = "descendant::a[contains(@href, '/f')]/@href"
X_POST_ENTRY = Css(".post-entry")

TEMPLATES: dict[str, dict[str, Css]] = {
    "phpbb3": {
        "author": Css("p.author strong"),
        "date": Css("p.author"),
        "body": Css("div.content"),
        "group": Css("dl.postprofile dd"),
    },
    "phpbb2": {
        "author": Css("span.name strong"),
        "date": Css("span.post-date"),
        "body": Css("div.postbody"),
        "group": Css("span.poster-profile"),
    },
    "invision": {
        "author": Css("h4.author"),
        "date": Css("span.post-date"),
        "body": Css("div.postbody"),
        "group": Css("div.postprofile-rank"),
    },
}
X_EDITED = Css("div.edited-by, span.edited-by")
X_LINK = Css("a")


def _skin(doc: etree._Element) -> str:
    # The template shows in the posts themselves: invision wraps the body in .post-entry, phpbb2 posts are rows.
    posts = _posts(doc)
    if any(X_POST_ENTRY.first(p) is not None for p in posts[:1]):
        return "invision"
    if any(p.tag == "tr" for p in posts):
        return "phpbb2"
    return "phpbb3"


def _posts(doc: etree._Element) -> list[etree._Element]:
    return [p for p in doc_xpath(doc, X_POST_ANY) if _POST_ID.match(p.get("id") or "")]


def _is_fm_host(host: str) -> bool:
    return any(host == h or host.endswith("." + h) for h in FM_HOSTS)


class Forumotion:
    name = "forumotion"

    def detect(self, doc: etree._Element, url: str) -> float:
        signals = 0
        if _is_fm_host(host_of(url)):
            signals += 1
        if _TOPIC_URL.search(url):
            signals += 1
        if xp(X_GENERATOR)(doc):
            signals += 2
        # four signals already give the top score: the page-wide scan for illiweb's assets is not needed then
        if signals < 4 and xp(X_ILLIWEB)(doc):
            signals += 1
        if not signals:
            return 0.0
        if not _posts(doc):
            return 0.0
        return min(0.5 + 0.12 * signals, 0.97)

    def parse(self, doc: etree._Element, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        ctx = ParseContext(url=url, config=config, now=now)
        host = host_of(url)
        skin = config.skin if config.skin in TEMPLATES else _skin(doc)
        sel = {**TEMPLATES[skin], **config.selectors}
        post_els = xp(sel["post"])(doc) if "post" in sel else _posts(doc)
        # The other pages: the .pagination boxes' links to this topic only (never the links in the posts)
        box_links = [lm for lm in map(_TOPIC_URL.search, pagination_hrefs(doc, post_els, host)) if lm]
        m = _TOPIC_URL.search(url)
        named = m is not None
        if m is None:
            # a saved file's name is no topic URL: the pagination's links name the topic
            m = box_links[0] if box_links else None
        tid = m.group(1) if m else None
        offset = int(m.group(2)) if named and m and m.group(2) else 0
        own = None
        if not named and tid:
            # nor its offset: the page's links to itself (title, post permalinks) say it
            own = _own_offset(doc, post_els, tid, host)
            offset = own or 0
        slug = m.group(3) if m else ""
        dice_test = dice_class_test(config.dice_classes)
        linked = {int(lm.group(2) or 0) for lm in box_links if tid is None or lm.group(1) == tid}
        shown_count = None
        if not named and own is None:
            # nothing says the offset (a `/post<id>` link served as is, a saved page): the pagination ("Pagina 2
            # di 4") says which page it is, its numbered links the step
            page_no, offset, step, shown_count, offsets = unnamed_page(
                doc, X_CURRENT_PAGE, post_els, host, lambda h: _offset_of(h, tid), linked, config.page_size)
        else:
            step, offsets = pagination_step(linked, offset, config.page_size,
                                            lambda: shown_page(doc, X_CURRENT_PAGE, post_els)[0])
            page_no = offset // step + 1 if step else 1
            if not named:
                page_no, offset, shown_count = page_from_pagination(doc, X_CURRENT_PAGE, page_no, offset, step,
                                                                    offsets, post_els)
        last = max(offsets)
        page_count = check_page_count(max((last // step + 1) if step else 1, shown_count or 0, page_no))
        # a later page whose offset is unknown (no step): its posts get their bare anchors
        known_offset = page_no == 1 or bool(step)
        # the topic's pages on the forum's own origin; a saved file has none: `/t42-slug` stays relative
        base = f"{origin_of(url)}/t{tid}" if tid else (url.split("#")[0] if origin_of(url) else "")
        page_url = (f"{base}p{offset}-{slug}" if offset else f"{base}-{slug}") if tid and known_offset else (
            base if not tid else "")
        posts: list[Post] = []
        for el in post_els:
            pid = (el.get("id") or "")[1:]
            if not pid.isdigit():
                continue
            author_el = first(el, sel["author"])
            link = first(author_el, X_LINK) if author_el is not None else None
            if link is None and author_el is not None and author_el.tag == "a":
                link = author_el
            author = text_of(author_el)
            uid = _UID.search(link.get("href") or "") if link is not None else None
            date_el = first(el, sel["date"])
            date_text = text_of(date_el)
            if author and date_text.startswith("da " + author):
                date_text = date_text[len(author) + 3:]
            group_el = first(el, sel["group"])
            group = text_of(group_el).split(" Messaggi")[0].strip() if group_el is not None else None
            body = first(el, sel["body"])
            edit_el = first(el, X_EDITED)
            edited_by, edited_text = parse_edit_note(text_of(edit_el)) if edit_el is not None else (None, None)
            extra: list[Roll] = []
            if config.is_gm_account(author) and body is not None:
                extra = gm_rolls(body)
            parts = PostParts(id=pid, element=el, body=body, author=author,
                              author_id=uid.group(1) if uid else None, date_text=date_text, group=group or None,
                              edited_by=edited_by, edited_text=edited_text, anchor_url=f"{page_url}#{pid}",
                              extra_rolls=extra)
            posts.append(build_post(parts, page=page_no, ctx=ctx, source="forumotion_gm", dice_test=dice_test))
        if not posts:
            raise NotAThread("nessun messaggio trovato nella pagina Forumotion")
        urls: tuple[str, ...] = (url,)
        if tid and step:
            urls = tuple((f"{base}p{o}-{slug}" if o else f"{base}-{slug}") for o in range(0, last + 1, step))
        elif tid:
            # other offsets unknown: the topic's first page still is, and page 2 is this one
            urls = (f"{base}-{slug}",) + ((url.split("#")[0],) if page_no == 2 and origin_of(url) else ())
        nxt = next((u for u in urls[page_no:page_no + 1]), None) if step else None
        title_el = first(doc, X_TITLE)
        title = text_of(title_el) if title_el is not None else text_of(first(doc, "descendant::title[1]"))
        sm = next((m for m in (re.search(r"/f(\d+)", href) for href in in_containers(doc, X_NAV, X_NAV_LINKS))
                   if m), None)
        return Page(url=url, platform=self.name, skin=skin, host=host, thread_id=tid, title=title or None,
                    page=page_no, page_count=page_count,
                    page_size=step,
                    last_offset=last, page_urls=urls, next_url=nxt, posts=tuple(posts),
                    section=sm.group(1) if sm else None)


def _offset_of(href: str, tid: str | None) -> int | None:
    m = _TOPIC_URL.search(href)
    return int(m.group(2) or 0) if m and (tid is None or m.group(1) == tid) else None


def _own_offset(doc: etree._Element, posts: list[etree._Element], tid: str, host: str) -> int | None:
    """The offset of a page whose URL does not say it (a saved file), from its links to itself: the title's link,
    else a post's permalink to that same post (`/t<tid>p<offset>-slug#<post id>`). Never other links of the posts."""
    title = first(doc, X_TITLE)
    for a in ([title] if title is not None and title.tag == "a" else []) + (
            list(title.iter("a")) if title is not None else []):
        m = _TOPIC_URL.search(a.get("href") or "")
        if m and m.group(1) == tid and _same_host(a.get("href") or "", host):
            return int(m.group(2) or 0)
    for el in posts[:3]:
        pid = (el.get("id") or "")[1:]
        for a in el.iter("a"):
            href = a.get("href") or ""
            if href.endswith(f"#{pid}") or href.endswith(f"#p{pid}"):
                m = _TOPIC_URL.search(href)
                if m and m.group(1) == tid and _same_host(href, host):
                    return int(m.group(2) or 0)
    return None


def _same_host(href: str, host: str) -> bool:
    if "//" not in href or not host:
        return True
    try:
        return (urlsplit(href).hostname or "").lower() in ("", host)
    except ValueError:
        return False


def gm_rolls(body: etree._Element) -> list[Roll]:
    """Rolls of a Game-Master message: one line per roll, `#1 'Attacco (d12)' : <img …d12_7.png>`.

    Faces come from the image alt/title, else from the image name; sides from the image name, else from
    the die name. The total is the sum of the faces (Forumotion shows no constant). Labels are the die
    names until pairing gives them the player's label line.
    """
    lines: list[list[object]] = [[]]

    def walk(el: etree._Element) -> None:
        if el.text:
            lines[-1].append(el.text)
        for child in el:
            if isinstance(child.tag, str):
                tag = child.tag.lower()
                if tag == "img":
                    lines[-1].append(child)
                elif tag in ("br", "div", "p", "li", "tr"):
                    lines.append([])
                    walk(child)
                    if tag != "br":
                        lines.append([])
                elif tag not in ("script", "style"):
                    walk(child)
            if child.tail:
                lines[-1].append(child.tail)

    walk(body)
    rolls: list[Roll] = []
    for line in lines:
        imgs = [x for x in line if not isinstance(x, str)]
        if not imgs:
            continue
        head = " ".join(x for x in line if isinstance(x, str))
        faces: list[int] = []
        sides: int | None = None
        for img in imgs:
            src_m = _DIE_SRC.search(img.get("src") or "")
            face_txt = (img.get("alt") or img.get("title") or "").strip()
            if face_txt.isdigit():
                faces.append(int(face_txt))
            elif src_m:
                faces.append(int(src_m.group(2)))
            else:
                continue
            if src_m and sides is None:
                sides = int(src_m.group(1))
        if not faces:
            continue
        name_m = _DIE_NAME.search(head)
        name = name_m.group(1).strip() if name_m else head.strip(" :#0123456789")
        if sides is None:
            sm = _SIDES_IN_NAME.search(name)
            sides = int(sm.group(1)) if sm else None
        label = _SIDES_IN_NAME.sub("", name).strip() if name else ""
        expression = f"{len(faces)}d{sides}" if sides else f"{len(faces)}d?"
        rolls.append(make_roll(expression=expression, faces=faces, total=sum(faces), label=label,
                               source="forumotion_gm"))
    return rolls


def _label_lines(body: str) -> list[str]:
    lines = [m.group(1) for m in (_LABEL_LINE.match(ln) for ln in body.split("\n")) if m]
    if lines:
        return lines
    return [m.group(1).strip() for m in (_VS_LINE.match(ln) for ln in body.split("\n")) if m]


def _names(body: str, member: str, author: str) -> bool:
    """The message names `author` whole although `member` (cut at an apostrophe inside the name: 'D'Artagnan'
    reads as "D") is only its start."""
    a = author.casefold()
    if not a.startswith(member.casefold()) or len(a) == len(member):
        return False
    text = body.casefold()
    return any(f"{o}{a}{c}" in text or f"{o} {a} {c}" in text for o, c in (("'", "'"), ("‘", "’"), ("’", "’"), ('"', '"')))


def pair_gm_posts(posts: Sequence[Post], config: ForumConfig) -> tuple[Post, ...]:
    """Move each Game-Master post's rolls onto the player post it answers (idempotent).

    The answered post is the nearest earlier non-GM post by the member the message names (else the
    nearest earlier non-GM post). Each die gets the player's label line whose action matches its name,
    else the next unused one, in order. The GM post keeps no rolls and records `answers`.
    """
    out = list(posts)
    for i, gm in enumerate(out):
        if gm.role != "gm_bot" or gm.answers is not None or not gm.rolls:
            continue
        mm = _MEMBER.search(gm.body)
        member = mm.group(1).strip() if mm else None
        target = None
        for j in range(i - 1, max(-1, i - 8), -1):
            cand = out[j]
            if cand.role == "gm_bot":
                continue
            if member is None or cand.author.casefold() == member.casefold() or _names(gm.body, member, cand.author):
                target = j
                break
        if target is None:
            continue
        player = out[target]
        labels = _label_lines(player.body)
        # label lines already given to the dice of an earlier Game-Master post answering this same post
        # (one dice message per roll): those rolls are done, the next message's dice take the next lines
        used: set[int] = set()
        for prev in player.rolls:
            if prev.source == "forumotion_gm":
                k = next((k for k, lab in enumerate(labels) if k not in used and lab == prev.label), None)
                if k is not None:
                    used.add(k)
        new_rolls = []
        for roll in gm.rolls:
            pick = None
            name = (roll.label or "").casefold()
            for k, lab in enumerate(labels):
                if k not in used and name and lab.casefold().startswith(name):
                    pick = k
                    break
            if pick is None:
                pick = next((k for k in range(len(labels)) if k not in used), None)
            label = roll.label
            if pick is not None:
                used.add(pick)
                label = labels[pick]
            new_rolls.append(make_roll(expression=roll.expression, faces=roll.faces, total=roll.total,
                                       label=label, source="forumotion_gm"))
        out[target] = evolve(player, rolls=player.rolls + tuple(new_rolls))
        out[i] = evolve(gm, rolls=(), answers=player.id)
    return tuple(out)


__all__ = ["Forumotion", "gm_rolls", "pair_gm_posts", "TEMPLATES"]
