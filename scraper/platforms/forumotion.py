"""Forumotion (forumattivo): phpbb2 / phpbb3 / invision / modernbb templates, Game-Master dice messages (known by
their content) paired with the player post they answer."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Sequence
from urllib.parse import urlsplit

from lxml import etree

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
_LABEL_LINE = re.compile(r"^\s*(?:lancio|lanci|tiro|dado|dadi)\s*[:\-]\s*(.+?)\s*$", re.I)
_VS_LINE = re.compile(r"^\s*([A-Za-zÀ-ÿ][^\n]{0,80}?\([^()\n]*\b(?:vs|contro)\b[^()\n]*\)\s*:.*)$", re.I)

# Document-wide expressions: tag first, `[1]` where one node is enough (see forumfree.py).
# Through the id attributes: libxml2 tests an attribute axis far faster than a predicate on every element.
X_POST_ANY = "descendant::*/@id[starts-with(., 'p')]/parent::*[contains(@class, 'post')]"
X_GENERATOR = "descendant::meta[@name='generator'][contains(@content, 'orumotion')][1]"
X_ILLIWEB = ("descendant::script[contains(@src, 'illiweb.com')][1] | descendant::link[contains(@href, 'illiweb.com')][1]"
             " | descendant::img[contains(@src, 'illiweb.com')][1]")
X_CURRENT_PAGE = ".//strong[not(ancestor::a)]"
# The topic's title: prosilver/modernbb `h1.page-title`, invision `.maintitle h1`, subsilver `h1.cattitle` (one scan).
X_TITLE = (f"descendant::h1[{has_class('page-title')} or {has_class('cattitle')} or "
           f"ancestor::*[{has_class('maintitle')}]][1]")
# The section links: subsilver `span.nav`, prosilver `.pathname-box`, invision `ul#navstrip`, modernbb `.sub-header-path`
X_NAV = (f"contains(@class, 'nav') and ({has_class('nav')} or {has_class('navbar')}) or @id = 'navstrip'"
         f" or {has_class('pathname-box')} or {has_class('sub-header-path')}")
X_NAV_LINKS = "descendant::a[contains(@href, '/f')]/@href"


@dataclass(frozen=True)
class Skin:
    """Where one Forumotion version puts a post's parts (XPath, relative to the post; `edit` to the body): the
    elements, ids and classes of its viewtopic_body.tpl post loop (Etana/template, src/<version>/)."""

    test: Css | None  # an element only this version's post has
    author: str  # the element that holds {POSTER_NAME} alone
    date: str  # the element (or text) that holds {POST_DATE}/{POST_DATE_NEW}
    body: str  # the `<div>{MESSAGE}</div>`
    group: str  # the element that holds {POSTER_RANK}
    edit: str  # {EDITED_MESSAGE}, relative to the body


_CONTENT = f"descendant::div[{has_class('content')}][1]/div[1]"
TEMPLATES: dict[str, Skin] = {
    # subsilver: tr#p<id>.post › td › span.name › strong › {POSTER_NAME}; span.postdetails "…<img>{POST_DATE}";
    # div.postbody › div {MESSAGE}; span.gensmall {EDITED_MESSAGE} after div.postbody
    "phpbb2": Skin(None, "descendant::span[@class='name'][1]/strong[1]",
                   "descendant::span[@class='postdetails'][1]/img[last()]/following-sibling::text()[1]",
                   f"descendant::div[{has_class('postbody')}][1]/div[1]",
                   f"descendant::span[{has_class('poster-profile')}][1]/text()[1]",
                   "../following-sibling::span[1]"),
    # prosilver: div#p<id>.post › … div.postprofile › dl › dt › strong {POSTER_NAME}, dd {POSTER_RANK_NEW};
    # p.author "{L_TOPIC_BY} {POSTER_NAME} {POST_DATE_NEW}"; div.content › div {MESSAGE}; {EDITED_MESSAGE} after
    "phpbb3": Skin(None, f"descendant::div[{has_class('postprofile')}][1]/dl/dt/strong[1]",
                   "descendant::p[@class='author'][1]", _CONTENT,
                   f"descendant::div[{has_class('postprofile')}][1]/dl/dd[1]",
                   f"../following-sibling::node()[not(self::div[{has_class('signature_div')}])]"),
    # invision: dl.postprofile-details › dt "{POSTER_AVATAR}<br>{POSTER_NAME}", dd {POSTER_RANK_NEW}; p.author as
    # prosilver; div.post-entry › div {MESSAGE}, div.clear, {EDITED_MESSAGE}
    "invision": Skin(Css("div.post-entry"), f"descendant::dl[{has_class('postprofile-details')}][1]/dt[1]",
                     "descendant::p[@class='author'][1]", f"descendant::div[{has_class('post-entry')}][1]/div[1]",
                     f"descendant::dl[{has_class('postprofile-details')}][1]/dd[1]", "following-sibling::node()"),
    # modernbb: div.postprofile-name {POSTER_NAME}, div.postprofile-rank; div.topic-date {POST_DATE_NEW};
    # div.postbody › div.content › div {MESSAGE}; div.edited-message {EDITED_MESSAGE}
    "modernbb": Skin(Css("div.post-head"), f"descendant::div[{has_class('postprofile-name')}][1]",
                     f"descendant::div[{has_class('topic-date')}][1]", _CONTENT,
                     f"descendant::div[{has_class('postprofile-rank')}][1]",
                     f"../following-sibling::div[{has_class('edited-message')}][1]"),
}
_SKIN_TESTS = ("invision", "modernbb")
X_EDITED = Css("div.edited-by, span.edited-by")  # other skins' edit boxes (tolerance)
X_LINK = Css("a")
X_PROFILE_LINK = "descendant::a[contains(@href, '/u')][1]/@href"


def _skin(doc: etree._Element) -> str:
    # The version shows in the posts themselves: subsilver's posts are table rows, invision's bodies sit in
    # div.post-entry, modernbb's headers in div.post-head; prosilver has neither.
    posts = _posts(doc)
    if not posts:
        return "phpbb3"
    if posts[0].tag == "tr":
        return "phpbb2"
    return next((name for name in _SKIN_TESTS if TEMPLATES[name].test.first(posts[0]) is not None), "phpbb3")


def _posts(doc: etree._Element) -> list[etree._Element]:
    return [p for p in doc_xpath(doc, X_POST_ANY) if _POST_ID.match(p.get("id") or "")]


def _is_fm_host(host: str) -> bool:
    return any(host == h or host.endswith("." + h) for h in FM_HOSTS)


def _joined_text(found: list) -> str:
    """The text of an XPath result: elements' text and bare text nodes, in order."""
    return " ".join(text_of(x) if isinstance(x, etree._Element) else str(x) for x in found).strip()


class Forumotion:
    name = "forumotion"

    def claims_url(self, url: str) -> bool:
        return _is_fm_host(host_of(url))

    def detect(self, doc: etree._Element, url: str) -> float:
        signals = 0
        if _is_fm_host(host_of(url)):
            signals += 1
        if _TOPIC_URL.search(url):
            signals += 1
        if xp(X_GENERATOR)(doc):
            signals += 2
        posts = _posts(doc)
        if not posts:
            return 0.0
        # every version's post carries `post--<id>` beside its `p<id>` id (the templates' own class)
        if any(f"post--{(p.get('id') or '')[1:]}" in (p.get("class") or "") for p in posts[:3]):
            signals += 2
        # four signals already give the top score: the page-wide scan for illiweb's assets is not needed then
        if signals < 4 and xp(X_ILLIWEB)(doc):
            signals += 1
        return min(0.5 + 0.12 * signals, 0.97) if signals else 0.0

    def parse(self, doc: etree._Element, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        ctx = ParseContext(url=url, config=config, now=now)
        host = host_of(url)
        skin = config.skin if config.skin in TEMPLATES else _skin(doc)
        tpl = TEMPLATES[skin]
        sel = {"author": tpl.author, "date": tpl.date, "body": tpl.body, "group": tpl.group, **config.selectors}
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
            author = text_of(author_el)
            hrefs = xp(X_PROFILE_LINK)(author_el) if author_el is not None else []
            uid = _UID.search(hrefs[0]) if hrefs else None
            date_found = xp(sel["date"])(el)
            date_text = _joined_text(date_found[:1])
            if author and author in date_text:
                date_text = date_text[date_text.index(author) + len(author):].strip()  # "da <name> <date>"
            group = _joined_text(xp(sel["group"])(el)[:1]) or None
            body = first(el, sel["body"])
            edit_text = _joined_text(xp(tpl.edit)(body)) if body is not None else ""
            if not edit_text:
                edit_el = first(el, X_EDITED)
                edit_text = text_of(edit_el) if edit_el is not None else ""
            edited_by, edited_text = parse_edit_note(edit_text) if edit_text else (None, None)
            # The Game Master's message is known by what it holds (the dice lines with their face images),
            # whoever posts it: the founder by default, any account the admin picks, renamed or not.
            dice = dice_lines(body, config, strict=not config.is_gm_account(author)) if body is not None else None
            parts = PostParts(id=pid, element=el, body=body, author=author,
                              author_id=uid.group(1) if uid else None, date_text=date_text, group=group,
                              edited_by=edited_by, edited_text=edited_text, anchor_url=f"{page_url}#{pid}",
                              extra_rolls=gm_rolls_of(dice) if dice else [])
            post = build_post(parts, page=page_no, ctx=ctx, source="forumotion_gm", dice_test=dice_test)
            posts.append(replace(post, role="gm_bot") if dice and post.role != "gm_bot" else post)
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


# --- the Game Master's dice message ---------------------------------------------------------------------
# Forumotion's "Dice rolling" FAQ says what the message is (posted by the "Game Master" account, the founder by
# default; the "Roll dices" wording is the admin's; each die and each face an image the admin uploads), not how it
# is marked up: no rendered message has been found. So it is read by its shape: lines `#1 'Attacco (d12)' : <img>
# <img>` (a number, the die's name — quoted text or the die's own image — a colon, then face images only), after
# at most one other line (the one naming the member).

_DIE_LINE_HEAD = re.compile(r"^\s*(?:#\s*\d+\s*)?(?:['‘’\"](?P<name>[^'‘’\"]+)['‘’\"])?\s*$")
_SIDES_IN_NAME = re.compile(r"(?<![A-Za-z0-9])[dD]\s?(\d{1,3})(?![0-9])")
_SIDES_FACE_FILE = re.compile(r"(?<![A-Za-z0-9])d(\d{1,3})[_-](\d{1,3})$", re.I)
_FACE_FILE = re.compile(r"^(?:[A-Za-z]+[_-]?)?(\d{1,3})$")
_IMAGE_EXT = re.compile(r"\.(?:png|gif|jpe?g|webp|svg)$", re.I)
_LINE_BREAKS = frozenset(("br", "div", "p", "li", "tr"))


@dataclass(frozen=True)
class DieLine:
    """One die of a dice message: its name (as shown, "" when none) and its face images' numbers, None where
    nothing tells a face (its alt/title, its file name, the forum config's face map)."""

    name: str
    sides: int | None
    faces: tuple[int | None, ...]


def _file_stem(src: str) -> str:
    return _IMAGE_EXT.sub("", src.split("?")[0].split("#")[0].rstrip("/").rsplit("/", 1)[-1])


def _face_of(img: etree._Element, config: ForumConfig) -> int | None:
    """A face image's number: the forum config's face map when it names the image (the master's own word), else
    a number in its alt or title, else its file name (`d12_7.png`, `7.png`, `faccia-7.gif`)."""
    src = (img.get("src") or "").strip()
    mapped = config.dice_face(src)
    if mapped is not None:
        return mapped
    for attr in ("alt", "title"):
        text = (img.get(attr) or "").strip()
        if text.isdigit() and len(text) <= 3:
            return int(text)
    stem = _file_stem(src)
    m = _SIDES_FACE_FILE.search(stem) or _FACE_FILE.match(stem)
    return int(m.group(m.lastindex or 1)) if m and not re.fullmatch(r"[dD]\d+", stem) else None


def _sides_of(name: str, imgs: list[etree._Element]) -> int | None:
    """The die's sides: from its name ("Attacco (d12)"), else from a face image's file name (`d12_7.png`)."""
    m = _SIDES_IN_NAME.search(name)
    if m:
        return int(m.group(1))
    for img in imgs:
        fm = _SIDES_FACE_FILE.search(_file_stem(img.get("src") or ""))
        if fm:
            return int(fm.group(1))
    return None


def _lines(body: etree._Element) -> list[list[object]]:
    """The body's lines, each a list of text pieces and img elements (quotes and code left out)."""
    lines: list[list[object]] = [[]]

    def walk(el: etree._Element) -> None:
        if el.text:
            lines[-1].append(el.text)
        for child in el:
            if isinstance(child.tag, str):
                tag = child.tag.lower()
                if tag == "img":
                    lines[-1].append(child)
                elif tag in _LINE_BREAKS:
                    lines.append([])
                    walk(child)
                    if tag != "br":
                        lines.append([])
                elif tag not in ("script", "style", "blockquote", "cite", "code", "dl"):
                    walk(child)
            if child.tail:
                lines[-1].append(child.tail)

    walk(body)
    return [ln for ln in lines if any(not isinstance(x, str) or x.strip() for x in ln)]


def _die_line(line: list[object], config: ForumConfig) -> DieLine | None:
    """A die line (`#n 'Name' : <img>…`, or the die's own image before the colon), else None."""
    colon = next((k for k, x in enumerate(line) if isinstance(x, str) and ":" in x), None)
    if colon is None:
        return None
    head_text = "".join(x for x in line[:colon] if isinstance(x, str)) + line[colon].split(":", 1)[0]
    after = [line[colon].split(":", 1)[1], *line[colon + 1:]]
    faces = [x for x in after if not isinstance(x, str)]
    m = _DIE_LINE_HEAD.match(head_text)
    if not faces or m is None or any(isinstance(x, str) and x.strip() for x in after):
        return None
    name_imgs = [x for x in line[:colon] if not isinstance(x, str)]
    name = (m.group("name") or "").strip() or " ".join(
        (i.get("alt") or i.get("title") or _file_stem(i.get("src") or "")).strip() for i in name_imgs)
    if not name and not m.group(0).strip() and not name_imgs:
        return None  # a bare ": <img>" says nothing of a die
    return DieLine(name=name, sides=_sides_of(name, faces), faces=tuple(_face_of(i, config) for i in faces))


def dice_lines(body: etree._Element, config: ForumConfig, *, strict: bool = True) -> list[DieLine] | None:
    """The dice of a Game-Master message, or None when `body` is not one. Strict (any account): every line is a
    die line but at most one before them (the member's). A configured Game-Master account: any die lines."""
    if next(body.iter("img"), None) is None:  # most posts: no image, no dice message
        return None
    found: list[DieLine] = []
    others = 0
    for line in _lines(body):
        die = _die_line(line, config)
        if die is not None:
            found.append(die)
        elif strict and (found or others):
            return None
        else:
            others += 1
    return found or None


def gm_rolls_of(dice: list[DieLine]) -> list[Roll]:
    """The rolls of a dice message's lines. The total is the faces' sum (Forumotion shows no constant); a face
    nothing tells keeps the roll, its faces and total unknown ("unreadable_faces"): never guessed. Labels are the
    die names until pairing gives them the player's label lines."""
    rolls = []
    for die in dice:
        known = None not in die.faces
        label = _SIDES_IN_NAME.sub("", die.name).replace("()", "").strip(" :-")
        rolls.append(make_roll(expression=f"{len(die.faces)}d{die.sides if die.sides else '?'}",
                               faces=list(die.faces), total=sum(die.faces) if known else None,  # type: ignore[arg-type]
                               label=label, source="forumotion_gm"))
    return rolls


def gm_rolls(body: etree._Element, config: ForumConfig | None = None) -> list[Roll]:
    """The rolls of a Game-Master message body (any die lines in it)."""
    return gm_rolls_of(dice_lines(body, config or ForumConfig(), strict=False) or [])


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
            # unknown faces stay unknown (and said so): never rebuilt as "not shown"
            new_rolls.append(make_roll(expression=roll.expression,
                                       faces=roll.faces if roll.faces is not None else [None], total=roll.total,
                                       label=label, source="forumotion_gm"))
        out[target] = replace(player, rolls=player.rolls + tuple(new_rolls))
        out[i] = replace(gm, rolls=(), answers=player.id)
    return tuple(out)


__all__ = ["Forumotion", "DieLine", "dice_lines", "gm_rolls", "gm_rolls_of", "pair_gm_posts", "TEMPLATES"]
