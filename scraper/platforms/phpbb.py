"""phpBB 3.x prosilver: `div#p<id>.post`, `dl.postprofile`, `div.content`, fancydice's `div.dicebox` rolls."""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from urllib.parse import urljoin

from lxml import etree

from engine.history import Post, Roll
from scraper.dicetag import make_roll
from scraper.errors import NotAThread
from scraper.platforms.base import (
    Css, Page, ParseContext, PostParts, build_post, dice_class_test, doc_xpath, first, has_class, host_of,
    check_page_count, in_containers, origin_of, head_offset, pagination_boxes, pagination_hrefs, pagination_step,
    parse_edit_note, read_dice_block, shown_page, unnamed_page, query_param, text_before, text_of, xp,
)
from scraper.platforms.config import ForumConfig
from scraper.platforms.dates import parse_forum_date

# --- fancydice (hanelyp/fancydice) -----------------------------------------------------------------------
# A box is the admin's presentation with the roll put in (event/main_listener.php, bb_replace_dice); the default
# (migrations/acp.php) is `<div class="dicebox">{SPEC} => {DICE} => {TOTAL} {VALID}</div>`, the ACP help's
# variant starts with `{COUNT}: `. {SPEC} is the [dice] tag's content: one spec or several separated by spaces,
# each `NdS+K` or an admin's macro name; {DICE} every value the specs produced joined with ", " (a constant term
# is a value too: `1d12+6 => 7, 6 => 13`); {TOTAL} their sum, then any text dice; {VALID} "" or the language's
# FANCYDICE_FIDDLED ("invalid"; the Spanish pack's "invalido") when the seed fails its checksum: the roll was
# fiddled with. No label element: the player writes the label before the tag.
_BOX = re.compile(r"(?:(?P<count>\d{1,4}):\s+)?(?P<spec>\S.*?)\s*=>\s*(?P<dice>.*?)\s*=>\s*(?P<tail>.*)", re.S)
_FIDDLED = re.compile(r"\s*\b(?:invalid|invalido|non valido)\s*$", re.I)
_SPEC = re.compile(r"(\d{0,3})[dD](\d{1,4})((?:[+-]\d{1,5})*)")  # the `d` macro, `@[1_>]`, and its constants
_CONST = re.compile(r"[+-]\d{1,5}")
_INT = re.compile(r"-?\d{1,7}")
_LEAD_INT = re.compile(r"(-?\d{1,7})(?:\s+\D.*)?", re.S)
# The problem code of a roll flagged "invalid" (engine.history.ROLL_PROBLEMS says it to readers).
FIDDLED_PROBLEM = "fiddled"


def _number(text: str) -> int | str:
    return int(text) if _INT.fullmatch(text) else text


def _values_of(dice: str) -> list[int | str]:
    return [_number(v.strip()) for v in dice.split(",") if v.strip()] if dice.strip() else []


def _spec_width(spec: str) -> tuple[int, int] | None:
    """(dice, values) an `NdS±K` spec produces: N faces, then one value per constant term; None for a macro."""
    m = _SPEC.fullmatch(spec)
    if m is None:
        return None
    n = int(m.group(1) or 1)
    return n, n + len(_CONST.findall(m.group(3)))


def read_fancydice(text: str) -> tuple[list[tuple[str, tuple | None, int | str | None, bool]], bool] | None:
    """The rolls of one fancydice box's text — [(expression, faces, total, total_checked)] — and whether it is
    flagged "invalid"; None when the text is not in fancydice's form.

    Several specs are split by the values each produces (a macro's count is unknown: one macro among `NdS±K`
    specs takes what the others leave, two or more make the whole box one roll of the whole spec). Each split
    roll's total is its own values' sum, and `total_checked` is False when the box's total disagrees with the
    sum of all its values."""
    m = _BOX.fullmatch(" ".join(text.split()))
    if m is None:
        return None
    tail = m.group("tail")
    flag = _FIDDLED.search(tail)
    if flag:
        tail = tail[:flag.start()]
    tail = tail.strip()
    lead = _LEAD_INT.fullmatch(tail)
    total: int | str | None = int(lead.group(1)) if lead else (tail or None)
    values = _values_of(m.group("dice"))
    specs = m.group("spec").split()
    widths = [_spec_width(s) for s in specs]
    if len(specs) == 1:
        w = widths[0]
        faces = tuple(values[:w[0]] if w is not None and len(values) >= w[0] else values)
        return [(specs[0], faces, total, True)], bool(flag)
    unknown = [i for i, w in enumerate(widths) if w is None]
    known = sum(w[1] for w in widths if w is not None)
    if len(unknown) > 1 or known > len(values) or (not unknown and known != len(values)):
        return [(m.group("spec"), tuple(values), total, True)], bool(flag)
    numeric = all(isinstance(v, int) for v in values)
    agrees = not numeric or total == sum(values)  # type: ignore[arg-type]
    out = []
    at = 0
    for spec, w in zip(specs, widths):
        take = w[1] if w is not None else len(values) - known
        own = values[at:at + take]
        at += take
        faces = tuple(own[:w[0]]) if w is not None else tuple(own)
        if w is None and not own:
            continue  # a word fancydice knows no macro for rolls nothing (and shows no value)
        own_total = sum(own) if all(isinstance(v, int) for v in own) else None  # type: ignore[arg-type]
        out.append((spec, faces, own_total, agrees))
    return out, bool(flag)


def _box_rolls(box: etree._Element, patterns: tuple) -> list[Roll]:
    """The rolls of one dice block: fancydice's form, else the forum config's patterns or the text recognition
    (an admin's own presentation); labelled by the text before the box when the box names none."""
    text = text_of(box)
    read = None if patterns else read_fancydice(text)
    label = text_before(box)
    rolls: list[Roll] = []
    if read is not None:
        found, fiddled = read
        for expr, faces, total, checked in found:
            roll = make_roll(expression=expr, faces=faces, total=total, label=label, source="phpbb_dice")
            if not checked and "total_mismatch" not in roll.problems:
                roll = replace(roll, authentic=False, problems=(*roll.problems, "total_mismatch"))
            rolls.append(roll)
    else:
        fiddled = _FIDDLED.search(text) is not None
        for d in read_dice_block(box, patterns):
            rolls.append(make_roll(expression=d.expression, faces=d.faces, total=d.total,
                                   label=d.label or label, source="phpbb_dice"))
    if fiddled:
        rolls = [replace(r, authentic=False, problems=(*r.problems, FIDDLED_PROBLEM)) for r in rolls]
    return rolls


# Document-wide expressions: tag first, `[1]` where one node is enough (see forumfree.py).
X_POSTS = f"descendant::div/@id[starts-with(., 'p')]/parent::div[{has_class('post')}]"
X_PROFILE = f"descendant::dl[{has_class('postprofile')}][1]"
X_MEMBERLIST = "descendant::a[contains(@href, 'memberlist.php')][1]"
X_AUTHOR = (f".//dl[{has_class('postprofile')}]//a[{has_class('username')} or {has_class('username-coloured')}]"
            f" | .//p[{has_class('author')}]//a[{has_class('username')} or {has_class('username-coloured')}]"
            f" | .//dl[{has_class('postprofile')}]//*[{has_class('username')} or {has_class('username-coloured')}]")
X_AUTHOR_FAST = Css("dl.postprofile a.username, dl.postprofile a.username-coloured, p.author a.username, "
                    "p.author a.username-coloured")
X_TIME = Css("p.author time")
X_AUTHOR_LINE = Css("p.author")
X_RANK = Css("dd.profile-rank")
X_BODY = Css("div.content")
X_NOTICE = Css("div.notice")
X_TITLE = f"descendant::h2[{has_class('topic-title')}][1]"
X_CURRENT_PAGE = f".//li[{has_class('active')}]"
X_CRUMBS = "contains(@class, 'breadcrumbs')"
X_CRUMB_LINK = "descendant::a[contains(@href, 'viewforum.php')]"


class PhpBB:
    name = "phpbb"

    def claims_url(self, url: str) -> bool:
        return "viewtopic.php" in url

    def detect(self, doc: etree._Element, url: str) -> float:
        posts = [p for p in doc_xpath(doc, X_POSTS) if re.fullmatch(r"p\d+", p.get("id") or "")]
        if not posts:
            return 0.0
        score = 0.5
        if xp(X_PROFILE)(doc):
            score += 0.15
        if "viewtopic.php" in url or xp(X_MEMBERLIST)(doc):
            score += 0.25
        body = first(doc, "descendant::body[1]")
        if body is not None and "section-viewtopic" in (body.get("class") or ""):
            score += 0.05
        return min(score, 0.95)

    def parse(self, doc: etree._Element, url: str, config: ForumConfig, *, now: datetime | None = None) -> Page:
        ctx = ParseContext(url=url, config=config, now=now)
        host = host_of(url)
        # phpBB may live under a folder (/forum/viewtopic.php): pages and posts are named next to this page;
        # a saved file has no forum origin, so they stay relative (`viewtopic.php?…`)
        base = url if origin_of(url) else ""
        tid = query_param(url, "t")
        title_el = first(doc, X_TITLE)
        if tid is None and title_el is not None:
            a = first(title_el, ".//a[@href]")
            tid = query_param(a.get("href") or "", "t") if a is not None else None
        start = int(query_param(url, "start") or 0) if (query_param(url, "start") or "0").isdigit() else 0
        sel = config.selectors
        post_els = xp(sel["post"])(doc) if "post" in sel else doc_xpath(doc, X_POSTS)
        # The other pages: the .pagination boxes' links to this thread only (never the links in the posts)
        linked: set[int] = set()
        for href in pagination_hrefs(doc, post_els, host):
            if "start=" not in href or "viewtopic.php" not in href:
                continue
            s = query_param(href, "start")
            if s and s.isdigit() and (tid is None or query_param(href, "t") in (tid, None)):
                linked.add(int(s))
        shown_count = None
        if query_param(url, "start") is None:
            # a post link (viewtopic.php?p=…) or a saved page does not say its offset: the pagination (li.active)
            # says which page it is, its numbered links (or the thread's post count, on the last page) the step
            page_no, start, step, shown_count, starts = unnamed_page(
                doc, X_CURRENT_PAGE, post_els, host, lambda h: _start_of(h, tid), linked, config.page_size,
                head=lambda: head_offset(doc, "start", tid), total=lambda: _total_posts(doc, post_els))
        else:
            step, starts = pagination_step(linked, start, config.page_size,
                                           lambda: shown_page(doc, X_CURRENT_PAGE, post_els)[0])
            page_no = start // step + 1 if step else 1
        last = max(starts)
        page_count = check_page_count(max((last // step + 1) if step else 1, shown_count or 0, page_no))
        dice_test = dice_class_test(config.dice_classes)
        patterns = config.compiled_dice_patterns()

        def read_block(box: etree._Element) -> list[Roll]:
            return _box_rolls(box, patterns)
        post_base = urljoin(base, "viewtopic.php")  # every post's anchor is this plus its query and fragment
        posts: list[Post] = []
        for el in post_els:
            pid = (el.get("id") or "")[1:]
            if not pid.isdigit():
                continue
            author_el = first(el, sel["author"] if "author" in sel else X_AUTHOR_FAST)
            if author_el is None and "author" not in sel:
                author_el = first(el, X_AUTHOR)
            uid = query_param(author_el.get("href") or "", "u") if author_el is not None else None
            time_el = first(el, X_TIME)
            timestamp = None
            date_text = None
            if time_el is not None and time_el.get("datetime"):
                timestamp = parse_forum_date(time_el.get("datetime"), config.tz)
            else:
                line = first(el, sel.get("date", X_AUTHOR_LINE))
                date_text = text_of(line).split("»")[-1] if line is not None else None
            rank = first(el, sel.get("group", X_RANK))
            notice = first(el, X_NOTICE)
            edited_by, edited_text = parse_edit_note(text_of(notice)) if notice is not None else (None, None)
            parts = PostParts(
                id=pid, element=el, body=first(el, sel.get("body", X_BODY)), author=text_of(author_el),
                author_id=uid, date_text=date_text, timestamp=_local(timestamp, config), group=text_of(rank) or None,
                edited_by=edited_by, edited_text=edited_text,
                anchor_url=f"{post_base}?p={pid}#p{pid}", read_block=read_block,
            )
            posts.append(build_post(parts, page=page_no, ctx=ctx, source="phpbb_dice", dice_test=dice_test))
        if not posts:
            raise NotAThread("nessun messaggio trovato nella pagina phpBB")

        def page_url(s: int) -> str:
            return urljoin(base, f"viewtopic.php?t={tid}" + (f"&start={s}" if s else ""))

        urls = tuple(page_url(s) for s in range(0, last + 1, step)) if (tid and step) else (url,)
        if tid and not step and page_no > 1:
            # a later page, other offsets unknown: the thread's first page still is, and page 2 is this one
            urls = (page_url(0), url.split("#")[0]) if page_no == 2 and origin_of(url) else (page_url(0),)
        nxt = page_url(start + step) if (tid and step and start + step <= last) else None
        sec = next(in_containers(doc, X_CRUMBS, X_CRUMB_LINK), None)
        section = query_param(urljoin(url, sec.get("href") or ""), "f") if sec is not None else None
        return Page(url=url, platform=self.name, skin="prosilver", host=host, thread_id=tid,
                    title=(text_of(title_el) if title_el is not None else None) or None, page=page_no,
                    page_count=page_count,
                    page_size=step, last_offset=last,
                    page_urls=urls, next_url=nxt, posts=tuple(posts), section=section)


_TOTAL = re.compile(r"(\d{1,7})\s+(?:messaggi|messaggio|posts?|risposte)\b", re.I)


def _start_of(href: str, tid: str | None) -> int | None:
    """A pagination link's offset, when it names this thread's viewtopic.php (page 1 has no start=)."""
    if "viewtopic.php" not in href or (tid is not None and query_param(href, "t") not in (tid, None)):
        return None
    s = query_param(href, "start") or "0"
    return int(s) if s.isdigit() else None


def _total_posts(doc: etree._Element, posts: list) -> int | None:
    """The thread's post count the pagination box shows ("18 messaggi •")."""
    for box in pagination_boxes(doc, posts):
        m = _TOTAL.search(text_of(box))
        if m:
            return int(m.group(1))
    return None


def _local(iso: str | None, config: ForumConfig) -> str | None:
    """phpBB writes UTC in <time datetime>; show it in the forum's timezone (same instant)."""
    if iso is None:
        return None
    try:
        return datetime.fromisoformat(iso).astimezone(config.tz).isoformat()
    except ValueError:
        return iso


__all__ = ["PhpBB", "FIDDLED_PROBLEM", "read_fancydice"]
