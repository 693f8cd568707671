"""ForumFree: HTML == api.php history, cp1252 page, relative dates, classic skin, roles, dice fallback."""
from __future__ import annotations

from dataclasses import replace

import pytest

from scraper.parse import parse_page, parse_pages
from scraper.platforms.config import ForumConfig

FETCHED = "2026-11-09T12:00:00+01:00"
HTML = ["forumfree/topic_62345678_st0.html", "forumfree/topic_62345678_st15.html"]
API = ["forumfree/api_62345678_st0.json", "forumfree/api_62345678_st15.json"]


def _strip(post):
    return replace(post, digest=None)


def test_html_and_api_give_the_same_history(fixture_page):
    html = parse_pages([fixture_page(p) for p in HTML], fetched_at=FETCHED)
    api = parse_pages([fixture_page(p) for p in API], fetched_at=FETCHED)
    assert len(html.posts) == 18
    assert [_strip(p) for p in html.posts] == [_strip(p) for p in api.posts]
    assert (html.thread.thread_id, html.thread.title, html.thread.pages) == (
        api.thread.thread_id, api.thread.title, api.thread.pages)
    assert html.thread.skin == "ff-current" and api.thread.skin == "ff-api"


def test_cp1252_page_decodes_accents(fixture_page, fixture_manifest):
    assert fixture_manifest[HTML[1]]["charset"] == "iso-8859-1"
    data, url = fixture_page(HTML[1])
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    page = parse_page(data, url, fetched_at=FETCHED)
    master = page.posts[-1]
    assert master.author == "Niccolò" and master.role == "master"
    quincy = page.posts[0]
    # ’ “ ” exist in windows-1252 only (0x92, 0x93, 0x94): iso-8859-1 is decoded as cp1252 (WHATWG)
    assert "un’altura della città" in quincy.body and "“Non è finita”" in quincy.body
    assert page.title == "Arena di Karakura — Hollow vs Quincy"


def test_relative_dates_follow_the_fetch_time(fixture_page):
    data, url = fixture_page(HTML[1])
    page = parse_page(data, url, fetched_at=FETCHED)
    by_id = {p.id: p for p in page.posts}
    assert by_id["600270"].timestamp == "2026-11-08T21:40:00+01:00"  # "Ieri, 21:40"
    assert by_id["600280"].timestamp == "2026-11-09T10:05:00+01:00"  # "Oggi, 10:05"
    later = parse_page(data, url, fetched_at="2026-11-10T09:00:00+01:00")
    assert {p.id: p.timestamp for p in later.posts}["600280"] == "2026-11-10T10:05:00+01:00"


def test_summer_time_offset(fixture_page):
    page = parse_page(*fixture_page(HTML[0]), fetched_at=FETCHED)
    by_id = {p.id: p for p in page.posts}
    assert by_id["600120"].timestamp == "2026-10-24T22:10:00+02:00"  # CEST
    assert by_id["600130"].timestamp == "2026-10-25T10:30:00+01:00"  # CET after the switch


def test_timezone_from_config(fixture_page):
    cfg = ForumConfig(timezone="UTC")
    page = parse_page(*fixture_page(HTML[0]), config=cfg, fetched_at=FETCHED)
    assert page.posts[1].timestamp == "2026-10-24T22:10:00+00:00"


def test_post_urls_and_ids(fixture_page):
    page = parse_page(*fixture_page(HTML[1]), fetched_at=FETCHED)
    assert page.posts[0].url == "https://bleach-gdr.forumfree.it/?t=62345678&st=15#entry600260"
    assert page.posts[0].page == 2
    assert page.section == "9988"


def test_masters_by_name_from_config(fixture_page):
    cfg = ForumConfig(masters=("Kurogane",), master_groups=())
    page = parse_page(*fixture_page(HTML[0]), config=cfg, fetched_at=FETCHED)
    roles = {p.author: p.role for p in page.posts}
    assert roles == {"Niccolò": "player", "Kurogane": "master", "Seireitei_Ryo": "player"}


def test_classic_skin(fixture_page):
    page = parse_page(*fixture_page("forumfree-classic/topic_61110022_st0.html"), fetched_at=FETCHED)
    assert (page.platform, page.skin, page.thread_id) == ("forumfree", "ff-classic", "61110022")
    assert [p.id for p in page.posts] == ["700110", "700120", "700130", "700140", "700150", "700160"]
    assert page.posts[0].url == "https://tempio-antico.forumcommunity.net/?t=61110022#entry700110"
    assert "__________________" not in page.posts[0].body  # the signature is not the post


CLASSIC_QUOTE = """<html><body><div class="maintitle">Prova</div>
<table class="maintable"><tr><td><a name="entry9001"></a><span class="normalname"><a href="?act=Profile&amp;MID=7">Kira</a></span></td>
<td><span class="postdetails"><a href="#entry9001">Inviato il</a> 1/2/2009, 10:00</span></td></tr>
<tr><td class="post1"><span class="postdetails">Gruppo: Master</span></td><td class="post1"><div class="postcolor">
<!--QuoteBegin-Rukia+31/1/2009, 22:00--></div><table border="0" align="center" width="95%"><tr><td>QUOTE (Rukia @ 31/1/2009, 22:00)</td></tr>
<tr><td id="QUOTE"><!--QuoteEBegin-->Lancio dadi 1d12+6: 7 + 6 = 13 PV: 30/40<!--QuoteEnd--></td></tr></table><div class="postcolor"><!--QuoteEEnd-->
Confermo il colpo.</div></td></tr></table></body></html>"""


def test_classic_ipb_quote_comments():
    page = parse_page(CLASSIC_QUOTE.encode(), "https://vecchio.forumfree.it/?t=5")
    post = page.posts[0]
    assert post.author == "Kira" and post.role == "master" and post.timestamp == "2009-02-01T10:00:00+01:00"
    assert post.rolls == () and post.schema is None
    assert [(q.author, q.text) for q in post.quotes] == [("Rukia", "Lancio dadi 1d12+6: 7 + 6 = 13 PV: 30/40")]
    assert post.body == "Confermo il colpo."


ROLLER_VARIANT = """<html><body id="topic"><div class="title"><h1>T</h1></div><ul>
<li class="post" id="ee1"><div class="nick"><a href="/?act=Profile&amp;MID=3">Ichigo</a></div>
<td class="right Item"><span class="when" title="2/3/2026, 21:00">x</span><table class="color"><tr><td>
<div class="ff_dado">Tiro di dado: 2d6+1 = [3, 5] + 1 = 9<br><span class="motivo">Schivata (Ichigo vs Byakuya): (+1 [Destrezza])</span></div>
Scrivo a mano: 1d12+6 = 18 e poi [dice=1d12+6]Attacco (Ichigo vs Byakuya): (+6 [Destrezza])[/dice]
Testo che sembra reso: 1d8 => 3 => 3
</td></tr></table></td></li></ul></body></html>"""


def test_dice_markup_is_read_tolerantly():
    page = parse_page(ROLLER_VARIANT.encode(), "https://x.forumfree.it/?t=1")
    rolls = [(r.expression, r.faces, r.total, r.source, r.authentic, r.label) for r in page.posts[0].rolls]
    assert rolls[0] == ("2d6+1", (3, 5), 9, "forum_roller", True, "Schivata (Ichigo vs Byakuya): (+1 [Destrezza])")
    assert rolls[1][:5] == ("1d12+6", None, 18, "typed_text", False)
    assert rolls[2][:5] == ("1d12+6", None, None, "typed_text", False)
    # rendered-looking text outside any dice block could be typed by hand: not authentic by default…
    assert rolls[3][:5] == ("1d8", (3,), 3, "typed_text", False)
    # …unless the forum config trusts text rolls (skins whose roller leaves no markup)
    trusted = parse_page(ROLLER_VARIANT.encode(), "https://x.forumfree.it/?t=1", config=ForumConfig(text_rolls="forum"))
    assert trusted.posts[0].rolls[3].source == "forum_roller" and trusted.posts[0].rolls[3].authentic
    assert trusted.posts[0].rolls[1].source == "typed_text"


def test_configured_dice_pattern():
    html = ROLLER_VARIANT.replace("Tiro di dado: 2d6+1 = [3, 5] + 1 = 9", "LANCIO 2d6+1 :: 3|5 :: 9")
    cfg = ForumConfig(dice_patterns=(r"(?P<expr>\d+d\d+(?:[+-]\d+)?) :: (?P<faces>[\d|]+) :: (?P<total>\d+)",))
    page = parse_page(html.encode(), "https://x.forumfree.it/?t=1", config=cfg)
    r = page.posts[0].rolls[0]
    assert (r.expression, r.faces, r.total, r.authentic) == ("2d6+1", (3, 5), 9, True)


def test_dice_selector_from_config():
    html = ROLLER_VARIANT.replace('class="ff_dado"', 'class="risultato-lancio"')
    plain = parse_page(html.encode(), "https://x.forumfree.it/?t=1")
    assert plain.posts[0].rolls[0].source == "typed_text"  # no dice block recognised: text only
    cfg = ForumConfig(selectors={"dice": ".//div[@class='risultato-lancio']"})
    page = parse_page(html.encode(), "https://x.forumfree.it/?t=1", config=cfg)
    r = page.posts[0].rolls[0]
    assert (r.expression, r.faces, r.total, r.source, r.authentic) == ("2d6+1", (3, 5), 9, "forum_roller", True)
    assert r.label == "Schivata (Ichigo vs Byakuya): (+1 [Destrezza])"


def _paged(st: int, links: list[int]) -> bytes:
    nav = "".join(f'<a href="/?t=9&amp;st={o}">{o}</a>' for o in links)
    return f"""<html><body id="topic"><div class="pages">{nav}</div><ul><li class="post" id="ee{st + 1}">
<div class="nick"><a href="/?act=Profile&amp;MID=1">A</a></div><td class="right Item"><table class="color"><tr><td>ciao
</td></tr></table></td></li></ul></body></html>""".encode()


@pytest.mark.parametrize("st,links,page,count,size", [
    (0, [6, 12], 1, 3, 6),                      # a forum with 6 posts per page
    (12, [0, 6], 3, 3, 6),                      # the last page
    (150, [0, 105, 120, 135, 165, 180, 285], 11, 20, 15),  # a window of page links: gcd of the offsets
    (0, [], 1, 1, 15),                          # a single page: the usual 15
])
def test_page_size_from_the_pagination(st, links, page, count, size):
    p = parse_page(_paged(st, links), f"https://x.forumfree.it/?t=9&st={st}")
    assert (p.page, p.page_count, p.page_size) == (page, count, size)
    assert len(p.page_urls) == count and p.page_urls[page - 1].endswith(f"st={st}" if st else "?t=9")


# --- pagination only from the page's pagination boxes (links in posts are the players') -------------------

SANTUARIO = "forumfree/topic_64600001_st0.html"
SANTUARIO_URLS = ("https://santuario-gdr.forumfree.it/?t=64600001", "https://santuario-gdr.forumfree.it/?t=64600001&st=5",
                  "https://santuario-gdr.forumfree.it/?t=64600001&st=10")


def _in_first_post(data: bytes, html: str) -> bytes:
    """The page with `html` at the start of the first post's body cell."""
    i = data.index(b'class="color">') + len(b'class="color">')
    i = data.index(b"<td", i)
    j = data.index(b">", i) + 1
    return data[:j] + html.encode("utf-8") + data[j:]


@pytest.mark.parametrize("link", [
    "https://www.example.com/watch?v=x&amp;st=999999999999",       # was ~6·10^10 page URLs: MemoryError
    "https://example.com/index.php?st=3000",                        # was 601 pages
    "https://santuario-gdr.forumfree.it/?t=61234567&amp;st=45",     # another thread: was 10 pages
    "https://santuario-gdr.forumfree.it/?t=64600001&amp;st=7#entry910120",  # a post of this thread: was step 1
    "/?t=64600001&amp;st=45",                                       # this thread, relative, in a post
])
def test_links_in_a_post_are_no_pagination(fixture_page, link):
    data, url = fixture_page(SANTUARIO)
    page = parse_page(_in_first_post(data, f'Regolamento: <a href="{link}">qui</a><br>'), url, fetched_at=FETCHED)
    assert (page.page, page.page_count, page.page_size, page.last_offset) == (1, 3, 5, 10)
    assert page.page_urls == SANTUARIO_URLS
    assert page.next_url == SANTUARIO_URLS[1]
    assert [p.id for p in page.posts] == [p.id for p in parse_page(data, url, fetched_at=FETCHED).posts]


def test_a_pagination_box_inside_a_post_is_the_players(fixture_page):
    data, url = fixture_page(SANTUARIO)
    box = '<div class="pages"><ul><li><a href="/?t=64600001&amp;st=45">10</a></li></ul></div>'
    page = parse_page(_in_first_post(data, box), url, fetched_at=FETCHED)
    assert (page.page_count, page.page_size, page.page_urls) == (3, 5, SANTUARIO_URLS)


def test_a_pagination_link_to_another_host_is_not_this_threads():
    html = _paged(0, [6]).replace(b'<a href="/?t=9&amp;st=6">6</a>',
                                  b'<a href="/?t=9&amp;st=6">2</a><a href="https://evil.example/?t=9&amp;st=60">x</a>')
    p = parse_page(html, "https://x.forumfree.it/?t=9")
    assert (p.page_count, p.page_size, p.page_urls) == (2, 6, ("https://x.forumfree.it/?t=9",
                                                               "https://x.forumfree.it/?t=9&st=6"))


def test_a_url_offset_off_the_step_keeps_the_paginations_step():
    # a shared post link (`&st=7`) fetched as the page: the pagination's step (6) stays the step
    p = parse_page(_paged(7, [0, 6, 12]), "https://x.forumfree.it/?t=9&st=7")
    assert (p.page, p.page_count, p.page_size, p.last_offset) == (2, 3, 6, 12)
    assert p.page_urls == tuple(f"https://x.forumfree.it/?t=9{f'&st={o}' if o else ''}" for o in (0, 6, 12))


def test_a_pagination_beyond_the_bound_is_a_named_error():
    from scraper.errors import NotAThread, TooManyPages
    from scraper.platforms.base import MAX_PAGES

    assert issubclass(TooManyPages, NotAThread)
    ok = parse_page(_paged(0, [15, 15 * (MAX_PAGES - 1)]), "https://x.forumfree.it/?t=9&st=0")
    assert (ok.page_count, len(ok.page_urls)) == (MAX_PAGES, MAX_PAGES)
    with pytest.raises(TooManyPages, match=f"{MAX_PAGES + 1} pagine"):
        parse_page(_paged(0, [15, 15 * MAX_PAGES]), "https://x.forumfree.it/?t=9&st=0")
    with pytest.raises(TooManyPages):
        parse_page(_paged(0, [15, 999999999990]), "https://x.forumfree.it/?t=9&st=0")


def test_api_pages_beyond_the_bound_is_a_named_error(fixture_page):
    import json

    from scraper.errors import TooManyPages

    data, url = fixture_page(API[0])
    doc = json.loads(data)
    doc["info"]["pages"] = 10 ** 12
    with pytest.raises(TooManyPages):
        parse_page(json.dumps(doc).encode(), url)


def test_max_pages_is_the_crawls_bound():
    from scraper.crawl import MAX_PAGES as CRAWL_MAX
    from scraper.platforms.base import MAX_PAGES

    assert MAX_PAGES == CRAWL_MAX


_NICK = '<div class="nick"><a href="/?act=Profile&amp;MID=2" title="Profilo di Niccolò">Niccolò</a></div>'


def _first_post_with(fixture_page, nick_html):
    data, url = fixture_page(HTML[0])
    s = data.decode("utf-8")
    assert s.count(_NICK) >= 1
    page = parse_page(s.replace(_NICK, nick_html, 1).encode("utf-8"), url, fetched_at=FETCHED)
    return page.posts[0]


def test_a_guest_or_deleted_member_keeps_the_name(fixture_page):
    # no profile link in .nick: the name was lost ("")
    post = _first_post_with(fixture_page, '<div class="nick">Ospite Misterioso</div>')
    assert (post.id, post.author, post.author_id) == ("600110", "Ospite Misterioso", None)


def test_invisible_marks_around_a_name_are_dropped(fixture_page):
    # an RTL mark / BOM pasted with the nick made another name than the same member's other posts
    post = _first_post_with(fixture_page, '<div class="nick"><a href="/?act=Profile&amp;MID=2">'
                                          '\ufeff<span style="color:red"><b>Dark&nbsp;Niccolò</b> 🔥\u200e</span></a></div>')
    assert (post.author, post.author_id) == ("Dark Niccolò 🔥", "2")
    emoji = _first_post_with(fixture_page, '<div class="nick"><a href="/?act=Profile&amp;MID=2">Ryo 👨\u200d🚀</a></div>')
    assert emoji.author == "Ryo 👨\u200d🚀"  # a joiner inside the name is part of it


@pytest.mark.parametrize("group,role", [("Narratori", "master"), ("Masters", "master"),
                                        ("Amministratori", "master"), ("Moderatori", "player")])
def test_plural_master_groups(fixture_page, group, role):
    # a master in the group "Narratori" was read as a player (his posts as turns)
    data, url = fixture_page(HTML[0])
    s = data.decode("utf-8")
    old = '<p class="u_group"><span class="u_title">Gruppo:</span> Master</p>'
    assert old in s
    page = parse_page(s.replace(old, f'<p class="u_group"><span class="u_title">Gruppo:</span> {group}</p>', 1)
                      .encode("utf-8"), url, fetched_at=FETCHED)
    assert (page.posts[0].author, page.posts[0].role) == ("Niccolò", role)


@pytest.mark.parametrize("date", [1793307600, "1793307600", 1793307600.0])
def test_api_unix_time_dates(fixture_page, date):
    # a Unix time in the api.php JSON (its date format is not confirmed) gave no timestamp at all
    import json

    data, url = fixture_page(API[0])
    doc = json.loads(data)
    doc["messages"][0]["info"] = {"date": date, "edit": {"user": "Niccolò", "date": date + 60 if not isinstance(date, str) else "1793307660"}}
    post = parse_page(json.dumps(doc).encode("utf-8"), url, fetched_at=FETCHED).posts[0]
    assert (post.id, post.timestamp, post.edited_by, post.edited_at) == (
        "600110", "2026-10-29T22:00:00+01:00", "Niccolò", "2026-10-29T22:01:00+01:00")


def test_an_icon_link_before_the_name_link(fixture_page):
    # the first `.nick a` is an online-status icon: the author was ""
    post = _first_post_with(fixture_page, '<div class="nick"><a href="/?act=Profile&amp;MID=2"><i class="ico_online">'
                                          '</i></a> <a href="/?act=Profile&amp;MID=2">Niccolò</a></div>')
    assert (post.author, post.author_id) == ("Niccolò", "2")


def test_a_roll_written_inside_the_dice_blocks_label():
    # the roller's only child is its "label" and the roll is in it: the roll was lost (neither block nor text roll)
    html = ROLLER_VARIANT.replace(
        '<div class="ff_dado">Tiro di dado: 2d6+1 = [3, 5] + 1 = 9<br><span class="motivo">Schivata (Ichigo vs Byakuya): '
        '(+1 [Destrezza])</span></div>',
        '<div class="ff_dado"><span class="motivo">Schivata (Ichigo vs Byakuya): 2d6+1 = [3, 5] + 1 = 9</span></div>')
    assert html != ROLLER_VARIANT
    r = parse_page(html.encode(), "https://x.forumfree.it/?t=1").posts[0].rolls[0]
    assert (r.expression, r.faces, r.total, r.source, r.authentic, r.label) == (
        "2d6+1", (3, 5), 9, "forum_roller", True, "Schivata (Ichigo vs Byakuya)")


# --- a page reached by a post link (`?t=…&view=findpost&p=…`, `?act=findpost&pid=…`: no st=) ----------------

SANTUARIO_PAGES = {  # fixture → page number, a post of it
    "forumfree/topic_64600001_st0.html": (1, "910130"),
    "forumfree/topic_64600001_st5.html": (2, "910180"),
    "forumfree/topic_64600001_st10.html": (3, "910230"),
}


@pytest.mark.parametrize("link", ["/?t=64600001&view=findpost&p={pid}", "/?act=findpost&pid={pid}"])
@pytest.mark.parametrize("path", sorted(SANTUARIO_PAGES))
def test_post_link_to_a_page_of_three_names_the_whole_thread(fixture_page, path, link):
    # page 2 links only pages 1 and 3 (st=0, st=10): the step is 5 (the "3" link), not their gcd 10
    data, _ = fixture_page(path)
    page_no, pid = SANTUARIO_PAGES[path]
    page = parse_page(data, "https://santuario-gdr.forumfree.it" + link.format(pid=pid), fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size, page.last_offset) == (
        page_no, "64600001", 3, 5, 10)
    assert page.page_urls == SANTUARIO_URLS
    assert page.next_url == (SANTUARIO_URLS[page_no] if page_no < 3 else None)
    own = SANTUARIO_URLS[page_no - 1]
    assert [p.url for p in page.posts][:2] == [f"{own}#entry{p.id}" for p in page.posts[:2]]
    assert {p.page for p in page.posts} == {page_no}


TORRE_URLS = ("https://torre-gdr.forumfree.it/?t=64500001", "https://torre-gdr.forumfree.it/?t=64500001&st=6")


def test_post_link_to_the_last_of_two_pages_reads_its_offset_from_og_url(fixture_page):
    # 6 posts a page: page 2 links page 1 only; its og:url (…&st=6) says where it is (was st=15, the usual size)
    data, _ = fixture_page("forumfree/topic_64500001_st6.html")
    page = parse_page(data, "https://torre-gdr.forumfree.it/?t=64500001&view=findpost&p=900190", fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size, page.last_offset) == (2, "64500001", 2, 6, 6)
    assert page.page_urls == TORRE_URLS and page.next_url is None
    assert page.posts[0].url == "https://torre-gdr.forumfree.it/?t=64500001&st=6#entry900170"


def test_post_link_to_the_last_page_when_nothing_says_the_step(fixture_page):
    # no og:url offset, no numbered link past page 1: the usual 15 posts a page is assumed
    data, _ = fixture_page("forumfree/topic_64500001_st6.html")
    data = data.replace(b'content="https://torre-gdr.forumfree.it/?t=64500001&amp;st=6"',
                        b'content="https://torre-gdr.forumfree.it/?t=64500001"')
    page = parse_page(data, "https://torre-gdr.forumfree.it/?t=64500001&view=findpost&p=900190", fetched_at=FETCHED)
    assert (page.page, page.page_count, page.page_size) == (2, 2, 15)
    assert page.page_urls == (TORRE_URLS[0], "https://torre-gdr.forumfree.it/?t=64500001&st=15")
