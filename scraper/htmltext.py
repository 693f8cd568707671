"""Block-aware clean text of forum post markup, with quotes, code, spoilers and dice blocks split out."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from lxml import etree

from engine.history import Quote

# Elements whose content is never text of the post (and never executed or kept).
SKIP_TAGS = frozenset({
    "script", "style", "noscript", "template", "iframe", "object", "embed", "applet", "head",
    "title", "meta", "link", "svg", "math", "select", "option", "button", "textarea", "input", "form",
})
BLOCK_TAGS = frozenset({
    "p", "div", "li", "ul", "ol", "tr", "table", "tbody", "thead", "tfoot", "h1", "h2", "h3", "h4",
    "h5", "h6", "blockquote", "pre", "dl", "dt", "dd", "hr", "center", "section", "article", "header",
    "footer", "fieldset", "details", "summary", "address", "caption", "figure", "figcaption", "main",
    "nav", "aside",
})
CELL_TAGS = frozenset({"td", "th"})
_STRUCT_TAGS = frozenset({"blockquote", "details"})  # structure even without a class
_PLAIN_SPECIAL = CELL_TAGS | {"a"}  # unclassed but not only walked: cell separators, links (`_plain`)

_WS = re.compile(r"[ \t\r\n\f\v\u00a0\u200b]+")
_CITE_AUTHOR = re.compile(r"^\s*(.+?)\s+(?:ha scritto|scrive|wrote|a écrit)\b", re.I)
_QUOTE_WORDS = re.compile(r"\b(cit|citazione|quote|ha scritto|wrote|scrive)", re.I)
_SPOILER_WORDS = re.compile(r"\bspoiler\b", re.I)
# Forum chrome that can sit inside a post body: signature, edit note.
_NOT_CONTENT = frozenset({"signature", "signature_div", "sig", "edit", "edited-by", "notice"})
_COMMENT_QUOTE = re.compile(r"QuoteBegin-?([^+]*)")

# An adapter's extra test for "this element is a rendered forum dice roll".
DiceTest = Callable[[etree._Element], bool]


@dataclass
class PostText:
    """The pieces of one post body.

    `text`: the post's own clean text (quotes removed; code and spoiler text kept).
    `scan`: `text` minus code blocks and recognised dice blocks — where typed rolls, the schema and
    damage calculations are searched, so a `[dice]` shown as an example in CODICE is never a roll.
    `dice`: the dice-roll elements found in the post's own content (never inside a quote or code).
    `links`: (href, text) of the post's own http(s) links.
    `marked`: `scan` with a DICE_MARK line where each dice block sat (orders block and text rolls).
    """

    text: str
    scan: str
    quotes: list[Quote] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    spoilers: list[str] = field(default_factory=list)
    dice: list[etree._Element] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    marked: str = ""


DICE_MARK = "\ue000"  # private-use character: never in forum text we keep


BLOCK = "\x01"  # a block boundary: one line break, however many nested blocks open or close there
BR = "\x03"  # a <br> (or a newline inside <pre>): two in a row make a paragraph break
# (_clean_lines_fast spells the two marks as literals: "\x01" is BLOCK, "\x03" is BR)
_PARA = re.compile(r"\x03[ \x01]*\x03[ \x01\x03]*")
_BREAK = re.compile(r"[ \x01\x03]*[\x01\x03][ \x01\x03]*")


_LINE_EDGES = re.compile(r"[^\S\n]*\n[^\S\n]*")  # whitespace around a line break (str.strip's set)
_BLANKS = re.compile(r"\n{3,}")
# Whitespace to str.split()/str.strip() that _WS does not collapse: where one occurs, the regex path runs.
_ODD_LOW = "\x1c\x1d\x1e\x1f\x85"
_ODD_HIGH = "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _plain_spaces(s: str) -> bool:
    """No whitespace in `s` that str.split() and _WS treat differently (C-level substring scans: the
    character-class regexes cost ~60 ns a character on non-ASCII text, these a few ns)."""
    for c in _ODD_LOW:
        if c in s:
            return False
    # `max(s)` would cost ~30 ns a character; `in` is a C search, and free on a one-byte (Latin-1) string,
    # which cannot hold these wider characters
    if not s.isascii():
        for c in _ODD_HIGH:
            if c in s:
                return False
    return True


# C0/C1 control characters but \t and \n: an author's `&#27;[31m` must not reach a terminal as an escape.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# the ones str.split() counts as whitespace become a space (words stay apart), the others go
_CONTROL_TABLE = {c: None for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if c not in (0x09, 0x0A)}
_CONTROL_TABLE.update({c: " " for c in (0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x85)})


def strip_controls(s: str) -> str:
    """`s` without C0/C1 control characters (line breaks and tabs kept; whitespace controls become spaces)."""
    # isprintable() is a C-level scan; only text that fails it (controls, or harmless format or private-use
    # characters such as a soft hyphen or DICE_MARK) pays for the regex
    if s.isprintable() or s.replace("\n", "").replace("\t", "").isprintable() or _CONTROLS.search(s) is None:
        return s
    return s.translate(_CONTROL_TABLE)


def collapse_ws(s: str) -> str:
    """`s` with every whitespace run as one space, stripped (what `_WS.sub(" ", s).strip()` gives), without
    control characters."""
    if "\u200b" in s:
        s = s.replace("\u200b", " ")
    if _plain_spaces(s):
        return strip_controls(" ".join(s.split()))
    return strip_controls(_WS.sub(" ", s).strip())


def clean_lines(raw: str) -> str:
    """Collapse source whitespace, turn block/br marks into lines, strip every line, keep at most one
    blank line (a paragraph: `<br><br>`) between lines."""
    if "\u200b" in raw:
        raw = raw.replace("\u200b", " ")
    if _plain_spaces(raw):
        return strip_controls(_clean_lines_fast(raw))
    raw = _WS.sub(" ", raw)
    if BR in raw:
        raw = _PARA.sub("\n\n", raw)
    raw = _BREAK.sub("\n", raw)
    if "\n" not in raw:
        return strip_controls(raw.strip())
    # Strip every line, collapse runs of blank lines to one, drop leading/trailing ones: all in C.
    return strip_controls(_BLANKS.sub("\n\n", _LINE_EDGES.sub("\n", raw)).strip())


def _clean_lines_fast(raw: str) -> str:
    """`clean_lines` with str methods only, for text whose whitespace is all in _WS's set.

    Every maximal run of spaces and marks becomes: one space (no mark), a line break (marks, at most one
    BR) or a paragraph break (two BRs or more); lines come out stripped.
    """
    s = " ".join(raw.split())  # marks are no whitespace: they stay, with single spaces around them
    if "\x01" not in s and "\x03" not in s:
        return s
    s = s.replace(" \x01", "\x01").replace("\x01 ", "\x01").replace(" \x03", "\x03").replace("\x03 ", "\x03")
    while "\x01\x01" in s:
        s = s.replace("\x01\x01", "\x01")
    if "\x03" in s:
        s = s.replace("\x01\x03", "\x03").replace("\x03\x01", "\x03")
        while "\x03\x03\x03" in s:
            s = s.replace("\x03\x03\x03", "\x03\x03")
        s = s.replace("\x03\x03", "\n\n").replace("\x03", "\n")
    return s.replace("\x01", "\n").strip()


def _text_content(el: etree._Element) -> str:
    # plain lxml.etree elements (no lxml.html class lookup on the hot path) have no text_content()
    return "".join(el.itertext())


def _contains(el: etree._Element, node: etree._Element) -> bool:
    anc = node.getparent()
    while anc is not None:
        if anc is el:
            return True
        anc = anc.getparent()
    return False


def _classes(el: etree._Element) -> tuple[str, ...]:
    cls = el.get("class")
    return tuple(cls.split()) if cls else ()


class _Walker:
    """One walk over a post body; buffers for own text, scan text, quote text."""

    def __init__(self, dice_test: DiceTest | None, stop: DiceTest | None = None) -> None:
        self.dice_test = dice_test
        self.stop = stop
        self.text: list[str] = []
        self.scan: list[str] = []
        self.quotes: list[Quote] = []
        self.codes: list[str] = []
        self.spoilers: list[str] = []
        self.dice: list[etree._Element] = []
        self.links: list[tuple[str, str]] = []
        self.pending: tuple[str, str | None] | None = None  # head seen (FF quote_top/code_top)
        self.inner: list[str | None] | None = None  # authors of the quotes nested in the quote being read
        self.depth = 0

    # --- emission: own text goes to both buffers; code/dice text only to `text` --------------
    def emit(self, s: str, buf: list[str], scan: bool) -> None:
        buf.append(s)
        if scan and buf is self.text:
            self.scan.append(s)

    def walk(self, el: etree._Element, buf: list[str], scan: bool, pre: bool = False) -> None:
        """Walk the children of `el` (its text, each child and the child's tail).

        Most elements of a post are plain formatting (<b>, <span style>, <div>, <br>) with no class or
        id: those are handled here inline, the rest go through `node` (same result, fewer calls).
        """
        own = buf is self.text
        both = scan and own
        sbuf = self.scan
        text = el.text
        if text:
            if pre:
                text = text.replace("\n", BR)
            buf.append(text)
            if both:
                sbuf.append(text)
        stop = self.stop
        for child in el:
            tag = child.tag
            if tag.__class__ is not str or self.depth >= 200:
                self.node(child, buf, scan, pre)  # comments, pathological nesting
            else:
                tag = tag.lower()
                if tag in SKIP_TAGS or (stop is not None and stop(child)):
                    pass
                elif tag == "br":
                    buf.append(BR)
                    if own:
                        sbuf.append(BR)
                elif tag != "img":  # emoticons and decorations are not text
                    # `node`'s checks are done: straight to the element (depth counted as `node` does)
                    self.depth += 1
                    if (child.get("class") is None and tag not in _STRUCT_TAGS and child.get("id") is None
                            and not (tag == "table" and self.pending)):
                        if tag in _PLAIN_SPECIAL:
                            self._plain(child, tag, buf, scan, pre, own)
                        elif tag in BLOCK_TAGS:
                            buf.append(BLOCK)
                            if own:
                                sbuf.append(BLOCK)
                            self.walk(child, buf, scan, pre or tag == "pre")
                            buf.append(BLOCK)
                            if own:
                                sbuf.append(BLOCK)
                        else:
                            self.walk(child, buf, scan, pre)
                    else:
                        self._element(child, tag, buf, scan, pre)
                    self.depth -= 1
            tail = child.tail
            if tail:
                if pre:
                    tail = tail.replace("\n", BR)
                buf.append(tail)
                if both:
                    sbuf.append(tail)

    def node(self, el: etree._Element, buf: list[str], scan: bool, pre: bool) -> None:
        tag = el.tag
        if not isinstance(tag, str):  # comment / processing instruction
            if tag is etree.Comment and el.text and "QuoteBegin" in el.text:
                m = _COMMENT_QUOTE.search(el.text)
                if m and m.group(1).strip():
                    self.pending = ("quote", m.group(1).strip())
            return
        tag = tag.lower()
        if tag in SKIP_TAGS:
            return
        if self.stop is not None and self.stop(el):
            return  # another post nested here by broken markup: not this post's text
        self.depth += 1
        try:
            if self.depth > 200:  # pathological nesting: keep the text, stop structuring
                buf.append(_text_content(el))
                return
            self._element(el, tag, buf, scan, pre)
        finally:
            self.depth -= 1

    def _element(self, el: etree._Element, tag: str, buf: list[str], scan: bool, pre: bool) -> None:
        if tag == "br":
            self.emit(BR, buf, True)
            return
        if tag == "img":
            return  # emoticons and decorations are not text (dice images are read by the adapter)
        in_own = buf is self.text
        cls_attr = el.get("class")
        if (cls_attr is None and tag not in _STRUCT_TAGS and el.get("id") is None
                and not (tag == "table" and self.pending)):
            self._plain(el, tag, buf, scan, pre, in_own)  # most elements: no class, nothing special
            return
        cls = tuple(cls_attr.split()) if cls_attr else ()
        # --- ForumFree heads: "CITAZIONE (Nick @ data)", "CODICE", "SPOILER" before the box; phpBB subsilver2's
        # "Nick ha scritto:" / "Codice:" heads (div.quotetitle / div.codetitle before div.quotecontent / codecontent)
        if "quote_top" in cls or "code_top" in cls or "quotetitle" in cls or "codetitle" in cls:
            head = _WS.sub(" ", _text_content(el)).strip()
            if _SPOILER_WORDS.search(head) or "spoiler_top" in cls:
                self.pending = ("spoiler", None)
            elif "quote_top" in cls or "quotetitle" in cls:
                m = _CITE_AUTHOR.search(head) if "quotetitle" in cls else None
                author = ((m.group(1).strip() if m else None) or _head_author(head)
                          or (self.pending[1] if self.pending else None))
                self.pending = ("quote", author)
            else:
                self.pending = ("code", None)
            return
        kind: str | None = None
        author: str | None = None
        if tag == "table" and self.pending and self.pending[0] == "quote":
            # Old IPB skins: <!--QuoteBegin-Nick+date--> then a table whose td#QUOTE holds the quote.
            inner = next((td for td in el.iter("td") if td.get("id") == "QUOTE"), None)
            if inner is not None:
                author = self.pending[1]
                self.pending = None
                qbuf: list[str] = []
                self.walk(inner, qbuf, False)
                self.quotes.append(Quote(author=_quote_author(author), text=clean_lines("".join(qbuf))))
                self.emit(BLOCK, buf, True)
                return
        box_id = (el.get("id") or "").upper()  # IPB's td#QUOTE, the 2009 ForumFree skin's div#quote / div#code
        if tag == "blockquote" or "quote" in cls or box_id == "QUOTE" or "quotecontent" in cls:
            kind = "quote"
            if self.pending and self.pending[0] == "quote":
                author = self.pending[1]
            if self.pending and self.pending[0] == "spoiler":
                kind = "spoiler"
        elif ("code" in cls or "codecontent" in cls) and tag == "div":
            kind = self.pending[0] if self.pending else "code"
            if kind == "quote":
                author = self.pending[1] if self.pending else None
        elif "codebox" in cls or box_id == "CODE":
            kind, author = self._codebox_kind(el)
        elif ("spoiler" in cls or "spoiler_content" in cls
              or (tag == "details" and not (in_own and scan and self.dice_test is not None and self.dice_test(el)))):
            # a <details> is a spoiler, except ForumFree's roller (`details.dice-roll`), read as a dice block below
            kind = "spoiler"
        elif _NOT_CONTENT.intersection(cls):
            return
        elif in_own and scan and self.dice_test is not None and self.dice_test(el):
            self.dice.append(el)
            self.text.append(BLOCK)
            self.scan.append(BLOCK + DICE_MARK + BLOCK)  # where the roll sits among the text rolls
            if el.tag == "details":
                # ForumFree's roller: its dice and time are the roll's (read from the block), not the player's text
                self.emit(BLOCK, buf, True)
                return
            self.walk(el, buf, False, pre)
            self.emit(BLOCK, buf, True)
            return
        self.pending = None if kind else self.pending
        if kind == "quote":
            self._quote(el, author, buf)
            return
        if kind == "code":
            self._code(el, buf)
            return
        if kind == "spoiler":
            self._spoiler(el, buf, scan)
            return
        self._plain(el, tag, buf, scan, pre, in_own)

    def _plain(self, el: etree._Element, tag: str, buf: list[str], scan: bool, pre: bool, in_own: bool) -> None:
        if tag == "a" and in_own:
            href = (el.get("href") or "").strip()
            if href.lower().startswith(("http://", "https://", "/", "./", "?")):
                self.links.append((href, collapse_ws(_text_content(el))))
        if tag in CELL_TAGS:
            prev = el.getprevious()
            if prev is not None and isinstance(prev.tag, str) and prev.tag.lower() in CELL_TAGS:
                self.emit(" | ", buf, True)
            self.walk(el, buf, scan, pre)
            return
        if tag in BLOCK_TAGS:
            self.emit(BLOCK, buf, True)
            self.walk(el, buf, scan, pre or tag == "pre")
            self.emit(BLOCK, buf, True)
            return
        self.walk(el, buf, scan, pre)

    def _codebox_kind(self, el: etree._Element) -> tuple[str, str | None]:
        head_el = None
        for child in el:
            if isinstance(child.tag, str) and child.tag.lower() in ("dt", "p", "div", "cite"):
                head_el = child
                break
        head = _WS.sub(" ", _text_content(head_el)).strip() if head_el is not None else ""
        if _SPOILER_WORDS.search(head) or "spoiler" in _classes(el):
            return "spoiler", None
        if _QUOTE_WORDS.search(head):
            m = _CITE_AUTHOR.search(head)
            return "quote", (m.group(1).strip() if m else None)
        return "code", None

    def _box_head(self, el: etree._Element) -> etree._Element | None:
        """The head of a quote/code box (cite / dt / "Codice:" line), not one of a nested box."""
        for child in el.iter("cite", "dt"):
            anc = child.getparent()
            while anc is not None and anc is not el and anc.tag not in ("blockquote", "dl"):
                anc = anc.getparent()
            if anc is el:
                return child
        first = next((c for c in el if isinstance(c.tag, str)), None)
        if first is not None and first.tag == "p" and "codebox" in _classes(el):
            return first
        return None

    def _walk_box(self, el: etree._Element, buf: list[str], scan: bool, pre: bool = False) -> None:
        head = self._box_head(el)
        if head is None:
            self.walk(el, buf, scan, pre)
            return
        self._walk_without(el, head, buf, scan, pre)

    def _walk_without(self, el: etree._Element, head: etree._Element, buf: list[str], scan: bool,
                      pre: bool) -> None:
        """Walk `el` skipping `head` (the cite text says who is quoted, not what)."""
        if el.text:
            self.emit(el.text.replace("\n", BR) if pre else el.text, buf, scan)
        for child in el:
            if child is head:
                pass
            elif isinstance(child.tag, str) and _contains(child, head):
                self._walk_without(child, head, buf, scan, pre)
            else:
                self.node(child, buf, scan, pre)
            if child.tail:
                self.emit(child.tail.replace("\n", BR) if pre else child.tail, buf, scan)

    def _quote(self, el: etree._Element, author: str | None, buf: list[str]) -> None:
        if buf is not self.text:  # nested quote: its text belongs to the outer quote, its author to its `inner`
            if self.inner is not None:
                self.inner.append(_quote_author(author if author is not None else self._head_name(el)))
            self.emit(BLOCK, buf, False)
            self._walk_box(el, buf, False)
            self.emit(BLOCK, buf, False)
            return
        if author is None:
            author = self._head_name(el)
        qbuf: list[str] = []
        self.inner = []
        self._walk_box(el, qbuf, False)
        inner, self.inner = tuple(self.inner), None
        self.quotes.append(Quote(author=_quote_author(author), text=clean_lines("".join(qbuf)), inner=inner))
        self.emit(BLOCK, buf, True)

    def _head_name(self, el: etree._Element) -> str | None:
        """The quoted author as the box's own head (cite / dt / "Nick ha scritto:") names it."""
        head = self._box_head(el)
        if head is None:
            return None
        ht = _WS.sub(" ", _text_content(head)).strip()
        m = _CITE_AUTHOR.search(ht)
        if m:
            return m.group(1).strip()
        author = _head_author(ht) or (ht.rstrip(":").strip() or None)
        return None if author and _QUOTE_WORDS.fullmatch(author) else author

    def _code(self, el: etree._Element, buf: list[str]) -> None:
        cbuf: list[str] = []
        self._walk_box(el, cbuf, False, pre=True)
        code = clean_lines("".join(cbuf))
        self.codes.append(code)
        if buf is self.text:
            self.text.append(BLOCK + code.replace("\n", BR) + BLOCK)
            self.scan.append(BLOCK)
        else:
            buf.append(BLOCK + code.replace("\n", BR) + BLOCK)

    def _spoiler(self, el: etree._Element, buf: list[str], scan: bool) -> None:
        start = len(buf)
        self.emit(BLOCK, buf, scan)
        head = self._box_head(el)
        if head is not None:
            self._walk_box(el, buf, scan)
        else:
            self.walk(el, buf, scan)
        self.emit(BLOCK, buf, scan)
        self.spoilers.append(clean_lines("".join(buf[start:])))


def _head_author(head: str) -> str | None:
    """The name in a ForumFree quote head, "CITAZIONE (Nick @ 2/11/2026, 10:00)": from the first "(" to the last
    "@" (a name may hold brackets or an "@" itself: "Ryo (Lupo)", "Ryo@Home")."""
    i = head.find("(")
    if i < 0:
        return None
    j = head.rfind("@")
    return (head[i + 1:j].strip() or None) if j > i else None


def _quote_author(author: str | None) -> str | None:
    # read from attributes and quote heads, not through clean_lines: controls stripped here
    return (strip_controls(author) or None) if author else author


def split_post(el: etree._Element, *, dice_test: DiceTest | None = None, stop: DiceTest | None = None) -> PostText:
    """Split a post body element into own text, quotes, code, spoilers, dice blocks and links.

    `stop(el)` true skips an element and its content (e.g. a post nested inside this one by broken HTML).
    """
    w = _Walker(dice_test, stop)
    w.walk(el, w.text, True)
    raw_scan = "".join(w.scan)
    raw_text = "".join(w.text)
    marked = clean_lines(raw_scan.replace(DICE_MARK, DICE_MARK + " ")) if w.dice else ""
    scan = clean_lines(raw_scan.replace(DICE_MARK, "")) if w.dice else clean_lines(raw_scan)
    return PostText(
        # no code and no dice block: the own text is the scan text (the common case), cleaned once
        text=scan if raw_text == raw_scan else clean_lines(raw_text),
        scan=scan,
        marked=marked or scan,
        quotes=w.quotes,
        codes=w.codes,
        spoilers=w.spoilers,
        dice=w.dice,
        links=w.links,
    )


def element_text(el: etree._Element) -> str:
    """Block-aware clean text of an lxml element (quotes excluded; see `split_post` for the pieces)."""
    return split_post(el).text


def inline_text(el: etree._Element | None) -> str:
    """Whitespace-collapsed text content of a small element (a name, a date); scripts skipped."""
    if el is None:
        return ""
    if not len(el):  # a leaf (most names and dates): its text is all there is
        return collapse_ws(el.text or "")
    parts: list[str] = []
    _inline(el, parts)  # text_content() would include script text
    return collapse_ws("".join(parts))


def _inline(el: etree._Element, parts: list[str]) -> None:
    if el.text:
        parts.append(el.text)
    for child in el:
        if isinstance(child.tag, str) and child.tag.lower() not in SKIP_TAGS:
            if child.tag.lower() == "br":
                parts.append(" ")
            _inline(child, parts)
        if child.tail:
            parts.append(child.tail)


__all__ = ["DICE_MARK", "PostText", "split_post", "element_text", "inline_text", "clean_lines", "DiceTest",
           "strip_controls"]
