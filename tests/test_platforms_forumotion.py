"""Forumotion: every field read on each version's template, Game-Master messages paired within and across pages,
pagination, post links."""
from __future__ import annotations

import pytest
from lxml import html as lxml_html

from scraper.parse import parse_page, parse_pages
from scraper.platforms.config import ForumConfig
from scraper.platforms.forumotion import gm_rolls

FETCHED = "2026-11-09T12:00:00+01:00"


def test_pairing_within_a_page(fixture_page):
    page = parse_page(*fixture_page("forumotion/phpbb3/t87p0.html"), fetched_at=FETCHED)
    by_id = {p.id: p for p in page.posts}
    gm = by_id["600181"]
    assert (gm.author, gm.role, gm.answers, gm.rolls, gm.author_id) == ("Game Master", "gm_bot", "600180", (), None)
    player = by_id["600180"]
    assert [(r.expression, r.faces, r.label.split(":")[0]) for r in player.rolls] == [
        ("1d12", (8,), "Attacco [Cero] (Hollow vs Quincy)"),
        ("1d12", (6,), "Attacco [Artigli Affilati] (Hollow vs Quincy)")]
    assert all(r.source == "forumotion_gm" for r in player.rolls)
    assert player.rolls[0].tag.modifiers[0].label == "Raggio Ottimale"


def test_pairing_across_pages(fixture_page):
    p1 = parse_page(*fixture_page("forumotion/phpbb2/t42p0.html"), fetched_at=FETCHED)
    p2 = parse_page(*fixture_page("forumotion/phpbb2/t42p5.html"), fetched_at=FETCHED)
    # alone, page 2's first post (a Game-Master message) has nobody to answer yet
    assert p2.posts[0].role == "gm_bot" and p2.posts[0].answers is None and len(p2.posts[0].rolls) == 2
    assert p1.posts[-1].id == "700130" and p1.posts[-1].rolls == ()
    history = parse_pages([fixture_page("forumotion/phpbb2/t42p5.html"), fixture_page("forumotion/phpbb2/t42p0.html")],
                          fetched_at=FETCHED)
    by_id = {p.id: p for p in history.posts}
    assert by_id["700131"].answers == "700130" and by_id["700131"].rolls == ()
    assert [(r.expression, r.faces, r.label.split(" (")[0]) for r in by_id["700130"].rolls] == [
        ("1d12", (8,), "Schivata"), ("1d12", (11,), "Attacco [Katana]")]
    assert [p.id for p in history.posts][:6] == ["700110", "700111", "700120", "700121", "700130", "700131"]


# --- pagination only from the page's .pagination boxes (links in posts are the players') ----------------

T166 = "forumotion/phpbb2/t166p0.html"


def _in_first_post(data: bytes, html: str) -> bytes:
    i = data.index(b'<div class="postbody">') + len(b'<div class="postbody">')
    i = data.index(b"<div>", i) + len(b"<div>")
    return data[:i] + html.encode("utf-8") + data[i:]


@pytest.mark.parametrize("link", [
    "/t166p999999999999-santuario-elettra-vs-orione",             # was a MemoryError
    "https://example.com/t166p3000-x",                            # another site, same shape
    "/t999p45-altra-discussione",                                 # another thread
    "/t166p7-santuario-elettra-vs-orione#600",                    # a post of this thread: was step 1
])
def test_links_in_a_post_are_no_pagination(fixture_page, link):
    data, url = fixture_page(T166)
    page = parse_page(_in_first_post(data, f'Vedi <a href="{link}">qui</a><br>'), url, fetched_at=FETCHED)
    base = "https://santuario.forumattivo.com/t166"
    urls = (f"{base}-santuario-elettra-vs-orione",) + tuple(f"{base}p{o}-santuario-elettra-vs-orione" for o in (5, 10, 15))
    assert (page.page, page.page_count, page.page_size, page.last_offset) == (1, 4, 5, 15)
    assert page.page_urls == urls and page.next_url == urls[1]


def test_two_dice_messages_answering_one_post_take_successive_label_lines(fixture_page):
    """One Game-Master message per roll: the second message's die (named only 'Dado') takes the player's next
    label line, not the first one again (the Attacco d12 was paired as a second Protezione)."""
    data, url = fixture_page("forumotion/phpbb3/t87p0.html")
    s = data.decode("utf-8")
    a = s.index('<div id="p600131"')
    b = s.index('<div id="p600140"', a)
    gm = s[a:b]
    img24 = '<img src="https://i.servimg.com/u/f60/19/84/21/99/d24_9.png" alt="" title="9" border="0" />'
    img12 = '<img src="https://i.servimg.com/u/f60/19/84/21/99/d12_10.png" alt="" border="0" />'
    assert f"#1 'Protezione (d24)' : {img24}<br />#2 'Attacco (d12)' : {img12}" in gm
    first = gm.replace(f"<br />#2 'Attacco (d12)' : {img12}", "").replace("'Protezione (d24)'", "'Dado (d24)'")
    second = gm.replace("600131", "600132").replace(
        f"#1 'Protezione (d24)' : {img24}<br />#2 'Attacco (d12)'", "#1 'Dado (d12)'")
    page = parse_page((s[:a] + first + second + s[b:]).encode("utf-8"), url, fetched_at=FETCHED)
    by_id = {p.id: p for p in page.posts}
    assert (by_id["600131"].answers, by_id["600132"].answers) == ("600130", "600130")
    assert [(r.expression, r.faces, r.label) for r in by_id["600130"].rolls] == [
        ("1d24", (9,), "Protezione [Blut Vene] (Quincy vs Hollow): (+2 [Bonus Protezione] +6 [Destrezza])"),
        ("1d12", (10,), "Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +6 [Destrezza])")]


def test_dice_message_for_a_member_with_an_apostrophe(fixture_page):
    # "Il membro 'D'Artagnan' …" was read as member "D": nobody matched and the dice stayed on the bot's post
    data, url = fixture_page("forumotion/phpbb3/t87p0.html")
    s = data.decode("utf-8")
    for old in ('<strong>Seireitei_Ryo</strong>', "Il membro 'Seireitei_Ryo'"):
        assert old in s
        s = s.replace(old, old.replace("Seireitei_Ryo", "D'Artagnan"))
    by_id = {p.id: p for p in parse_page(s.encode("utf-8"), url, fetched_at=FETCHED).posts}
    assert (by_id["600130"].author, by_id["600131"].answers, by_id["600131"].rolls) == ("D'Artagnan", "600130", ())
    assert [(r.expression, r.faces, r.label.split(":")[0]) for r in by_id["600130"].rolls] == [
        ("1d24", (9,), "Protezione [Blut Vene] (Quincy vs Hollow)"),
        ("1d12", (10,), "Attacco [Freccia Sacra] (Quincy vs Hollow)")]


# --- a page reached by a post link (`/post<id>` served as is, or saved): nothing in its URL says its offset ----

T144_BASE = "https://absalom.forumattivo.com/t144"
T144_URLS = (f"{T144_BASE}-stazione-absalom-kira-vs-vesk",) + tuple(
    f"{T144_BASE}p{o}-stazione-absalom-kira-vs-vesk" for o in (6, 12, 18))


@pytest.mark.parametrize("post_link", ["https://absalom.forumattivo.com/post800140",
                                       "https://absalom.forumattivo.com/post800140#800140"])
def test_post_link_page_of_four_step_from_the_numbered_links(fixture_page, post_link):
    # no link to itself (title, permalinks) and a box "1 [2] 3": offsets 0 and 12, gcd 12; the "3" link says 6, and
    # prosilver's {PAGE_NUMBER} box "Pagina 2 di 4" the count
    data, _ = fixture_page("forumotion/phpbb3/t144p6.html")
    data = data.replace(b'href="/t144p6-stazione-absalom-kira-vs-vesk', b'href="#').replace(
        b', <a href="/t144p18-stazione-absalom-kira-vs-vesk">4</a>', b"")
    page = parse_page(data, post_link, fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size, page.last_offset) == (2, "144", 4, 6, 18)
    assert page.page_urls == T144_URLS and page.next_url == T144_URLS[2]
    assert page.posts[0].url == f"{T144_URLS[1]}#{page.posts[0].id}"
    assert {p.page for p in page.posts} == {2}


def test_post_link_to_the_last_of_two_pages_names_both(fixture_page):
    # page 2 of 2 links page 1 only and says nothing of its offset: page 2 is the page the link serves
    data, _ = fixture_page("forumotion/invision/t42p5.html")
    data = data.replace(b'href="/t42p5-duello-al-tempio-kenshi-vs-mizuki', b'href="#')
    page = parse_page(data, "https://ninja-gdr.forumattivo.it/post700141#700141", fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size) == (2, "42", 2, None)
    assert page.page_urls == ("https://ninja-gdr.forumattivo.it/t42-duello-al-tempio-kenshi-vs-mizuki",
                              "https://ninja-gdr.forumattivo.it/post700141")
    assert {p.page for p in page.posts} == {2}
