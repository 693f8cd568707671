"""The parse's fast paths give what their plain definitions give (text cleaning, selectors, container search)."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from scraper.htmltext import BLOCK, BR, clean_lines, collapse_ws, strip_controls
from scraper.platforms.base import Css, dice_class_test, in_containers, query_param, xp

_WS = re.compile(r"[ \t\r\n\f\v\u00a0\u200b]+")
_PARA = re.compile(r"\x03[ \x01]*\x03[ \x01\x03]*")
_BREAK = re.compile(r"[ \x01\x03]*[\x01\x03][ \x01\x03]*")


def reference_clean_lines(raw: str) -> str:
    """clean_lines as first written: regexes, then a loop over the lines."""
    raw = _WS.sub(" ", raw)
    if BR in raw:
        raw = _PARA.sub("\n\n", raw)
    raw = _BREAK.sub("\n", raw)
    out: list[str] = []
    blank = False
    for line in raw.split("\n"):
        line = line.strip()
        if not line:
            blank = bool(out)
            continue
        if blank:
            out.append("")
            blank = False
        out.append(line)
    return "\n".join(out)


# Words, marks, the whitespace _WS collapses and the whitespace only str.split() knows (the slow path).
PIECES = ["Forza", "5", "PV", "è", "—", "«", " ", "  ", "\n", "\t", "\r", "\x0b", "\x0c", "\u00a0", "\u200b",
          BLOCK, BR, BLOCK + BLOCK, BR + BR, " " + BR + " ", "\x1c", "\x85", "\u2028", "\u3000", "\u2009"]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
plain_texts = st.lists(st.sampled_from([p for p in PIECES if p not in ("\x1c", "\x85", "\u2028", "\u3000", "\u2009")]),
                       max_size=30).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_clean_lines_matches_its_definition(raw):
    # the definition, then control characters stripped (never printed to a terminal)
    assert clean_lines(raw) == strip_controls(reference_clean_lines(raw))


@settings(max_examples=150, deadline=None)
@given(plain_texts)
def test_clean_lines_fast_path_matches_its_definition(raw):
    assert clean_lines(raw) == strip_controls(reference_clean_lines(raw))


@settings(max_examples=100, deadline=None)
@given(texts)
def test_collapse_ws_matches_the_regex(raw):
    assert collapse_ws(raw) == strip_controls(_WS.sub(" ", raw).strip())


def test_clean_lines_examples():
    assert clean_lines(f"  PV 44/52 {BR} PE 10/40 {BR}{BR} Registro:{BLOCK}{BLOCK} -8 PV ") == \
        "PV 44/52\nPE 10/40\n\nRegistro:\n-8 PV"
    assert clean_lines(f"{BLOCK} a \u3000 b {BLOCK}") == "a \u3000 b"  # odd whitespace: the regex path


# --- selectors on random trees ---------------------------------------------------------------------

TAGS = ["div", "span", "p", "a"]
CLASSES = ["", "edit", "edited-by", "x edit", "navigation", "nav", "breadcrumbs", "post"]


@st.composite
def trees(draw, depth=0):
    tag = draw(st.sampled_from(TAGS))
    el = etree.Element(tag)
    cls = draw(st.sampled_from(CLASSES))
    if cls:
        el.set("class", cls)
    if tag == "a":
        el.set("href", draw(st.sampled_from(["/?f=3", "/?t=1", "/f12-arena", "/forum"])))
    if depth < 3:
        for child in draw(st.lists(trees(depth=depth + 1), max_size=3)):
            el.append(child)
    return el


def _sequential(el, alts):
    for alt in alts:
        found = xp(alt)(el)
        if found:
            return found[0]
    return None


@settings(max_examples=100, deadline=None)
@given(trees())
def test_css_alternatives_in_one_walk_match_alternative_by_alternative(root):
    css = Css("div.edit, span.edit")
    assert css.flat is not None
    expected = _sequential(root, [
        "descendant::div[contains(concat(' ', normalize-space(@class), ' '), ' edit ')]",
        "descendant::span[contains(concat(' ', normalize-space(@class), ' '), ' edit ')]"])
    assert css.first(root) is expected


@settings(max_examples=100, deadline=None)
@given(trees())
def test_container_walk_matches_the_descendant_path(root):
    doc = etree.Element("html")
    doc.append(root)
    pred = "contains(@class, 'nav') or contains(@class, 'breadcrumbs')"
    expected = xp(f"//*[{pred}]//a[contains(@href, 'f')]")(doc)
    assert list(in_containers(doc, pred, "descendant::a[contains(@href, 'f')]")) == expected


def test_dice_class_test_words():
    test = dice_class_test(("box",))
    root = etree.fromstring('<div><div class="Dice_Roll"><span class="dice_label">x</span></div>'
                            '<p id="mybox">y</p><p class="scroll">z</p><p class="post">w</p></div>')
    block, label = root[0], root[0][0]
    assert test(block) and not test(label)  # the block, not a piece inside it
    assert test(root[1]) and test(root[2]) and not test(root[3])  # "scroll" names a roll: tolerant on purpose
    assert not dice_class_test(("",))(block)  # an empty configured word is in every name: never a block


_URL_PIECES = st.sampled_from(["t", "st", "start", "f", "u", "=", "&", "?", "#", "12", "ab", "%20", "+", ";", "x=",
                               "t=", "st=1", "t=5&", "", "-", ".", "/", "http://h/", "viewtopic.php",
                               "\t", "\n", "[", "]", "http://[::1/", "\uff03"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_URL_PIECES, max_size=12), st.sampled_from(["t", "st", "start", "f", "u"]))
def test_query_param_fast_path_matches_parse_qs(pieces, name):
    url = "".join(pieces)
    got = query_param(url, name)  # never raises, malformed hosts included
    try:
        values = parse_qs(urlsplit(url).query).get(name)
    except ValueError:  # urlsplit refuses the host: the raw query is read
        values = parse_qs(url.partition("#")[0].partition("?")[2]).get(name)
    assert got == (values[0] if values else None)


def test_query_param_of_a_malformed_host_is_read_on_both_paths():
    assert query_param("http://[::1/?t=5", "t") == "5"  # fast path
    assert query_param("http://[::1/?t=5%35", "t") == "55"  # decoding path, urlsplit refuses the host
    assert query_param("http://[::1/?x=1", "t") is None


def test_parse_page_pauses_the_collector_and_restores_it_as_it_was(monkeypatch):
    import gc

    from scraper import parse as parse_mod
    from scraper.errors import NotAThread

    seen = []
    real = parse_mod.detect_platform

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(parse_mod, "detect_platform", spy)
    page = b"<html><body><li class='post' id='ee1'><div class='nick'><a>A</a></div><table class='color'>" \
           b"<tr><td>PV 10/10</td></tr></table></li></body></html>"
    assert gc.isenabled()
    parse_mod.parse_page(page, "https://x.forumfree.it/?t=1")
    assert seen == [False] and gc.isenabled()
    with pytest.raises(NotAThread):  # a failed parse resumes it too
        parse_mod.parse_page(b"<html><body><p>nulla</p></body></html>", "https://x.forumfree.it/?t=1")
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        parse_mod.parse_page(page, "https://x.forumfree.it/?t=1")
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()
