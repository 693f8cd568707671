"""The parse's fast paths give what their plain definitions gave (text cleaning, selectors, container search, query
parameters): those definitions, kept here until issue #17, are frozen as their outputs on a fixed corpus in
tests/golden/parse.json.gz (hypothesis samples of the strategies below and of random element trees, and every
argument the parser passes on the fixture and real pages; tests/golden/make_fastpath_golden.py says how)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from scraper.htmltext import BLOCK, BR, clean_lines, collapse_ws
from scraper.platforms.base import Css, dice_class_test, in_containers, query_param
from tests.golden.fastpath import assert_reproduces, load


# --- the frozen reference outputs --------------------------------------------------------------------------------

def test_clean_lines_gives_the_reference_outputs():
    # the regexes-then-a-loop definition, control characters stripped (never printed to a terminal)
    assert_reproduces("parse", "clean_lines", clean_lines)


def test_collapse_ws_gives_the_reference_outputs():
    assert_reproduces("parse", "collapse_ws", collapse_ws)  # what `_WS.sub(" ", s).strip()` gave


def _position(root: etree._Element, el: etree._Element | None) -> int | None:
    """An element as the golden file names it: its position in root.iter() (document order, the root 0)."""
    return None if el is None else next(i for i, e in enumerate(root.iter()) if e is el)


def test_css_alternatives_in_one_walk_give_the_alternative_by_alternative_match():
    # the reference: each alternative's XPath in turn, the first that matches
    golden = load("parse")["functions"]["Css.first"]
    css = Css(golden["selector"])
    assert css.flat is not None  # the one-walk path

    def run(xml: str) -> int | None:
        root = etree.fromstring(xml)
        return _position(root, css.first(root))

    assert_reproduces("parse", "Css.first", run)


def test_container_walk_gives_the_descendant_path():
    # the reference: `//*[container]//inner` in one XPath, on the tree put under an <html>
    golden = load("parse")["functions"]["in_containers"]

    def run(xml: str) -> list[int | None]:
        doc = etree.Element("html")
        doc.append(etree.fromstring(xml))
        return [_position(doc, e) for e in in_containers(doc, golden["container"], golden["inner"])]

    assert_reproduces("parse", "in_containers", run)


def test_query_param_gives_the_reference_outputs():
    # the reference: parse_qs of the query urlsplit reads, of the raw query when urlsplit refuses the host
    assert_reproduces("parse", "query_param", lambda x: query_param(*x))


# --- properties on random inputs ----------------------------------------------------------------------------------

# Words, marks, the whitespace _WS collapses and the whitespace only str.split() knows (the slow path).
PIECES = ["Forza", "5", "PV", "è", "—", "«", " ", "  ", "\n", "\t", "\r", "\x0b", "\x0c", "\u00a0", "\u200b",
          BLOCK, BR, BLOCK + BLOCK, BR + BR, " " + BR + " ", "\x1c", "\x85", "\u2028", "\u3000", "\u2009"]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_clean_lines_leaves_stripped_lines_and_single_blank_lines(raw):
    out = clean_lines(raw)
    assert BLOCK not in out and BR not in out and "\t" not in out and "\r" not in out
    assert "\n\n\n" not in out and out == out.strip("\n")
    assert all(line == line.strip(" ") for line in out.split("\n"))


def test_clean_lines_examples():
    assert clean_lines(f"  PV 44/52 {BR} PE 10/40 {BR}{BR} Registro:{BLOCK}{BLOCK} -8 PV ") == \
        "PV 44/52\nPE 10/40\n\nRegistro:\n-8 PV"
    assert clean_lines(f"{BLOCK} a \u3000 b {BLOCK}") == "a \u3000 b"  # odd whitespace: the regex path


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


@settings(max_examples=200, deadline=None)
@given(st.lists(_URL_PIECES, max_size=12), st.sampled_from(["t", "st", "start", "f", "u"]))
def test_query_param_never_raises(pieces, name):
    got = query_param("".join(pieces), name)  # malformed hosts included
    assert got is None or isinstance(got, str)


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
