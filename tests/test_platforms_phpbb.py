"""phpBB prosilver: fancydice dicebox rolls, typed [dice] tags, <time datetime>, quotes with cite, codebox, notices."""
from __future__ import annotations

import pytest

from scraper.parse import parse_page
from scraper.platforms.config import ForumConfig

FETCHED = "2026-11-09T12:00:00+01:00"

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Duello</title></head>
<body id="phpbb" class="section-viewtopic">
<h2 class="topic-title"><a href="./viewtopic.php?t=9">Duello</a></h2>
<div class="pagination"><ul><li class="active"><span>1</span></li><li><a href="./viewtopic.php?t=9&amp;start=10">2</a></li>
<li><a href="./viewtopic.php?t=9&amp;start=20">3</a></li></ul></div>
<div id="p501" class="post has-profile bg2"><div class="inner">
<dl class="postprofile"><dt><a href="./memberlist.php?mode=viewprofile&amp;u=5" class="username">Renji</a></dt><dd class="profile-rank">Giocatori</dd></dl>
<div class="postbody"><div id="post_content501">
<p class="author"><span class="responsive-hide">da <strong><a href="./memberlist.php?mode=viewprofile&amp;u=5" class="username">Renji</a></strong> &raquo; </span><time datetime="2026-07-01T18:30:00+00:00">mer 01 lug 2026, 20:30</time></p>
<div class="content">
<blockquote><div><cite>Rukia ha scritto:</cite><div class="dicebox">1d12+5 => 9, 5 => 14 </div>PV: 30/40</div></blockquote>
PV: 38/40<br>PE: 20/30<br>Registro: -2 PV [Zanpakuto di Rukia]<br>
[dice=1d18+4]Parata [Zabimaru] (Renji vs Rukia): (+4 [Destrezza])[/dice]<br>
Attacco [Zabimaru] (Renji vs Rukia): (+2 [Raggio Corto] +4 [Destrezza])<br>
<div class="dicebox">2d6+6 => 3, 4, 6 => 13 </div>
<div class="codebox"><p>Codice: <a href="#">Seleziona tutto</a></p><pre><code>[dice=1d12+6]Esempio[/dice]
1d12+6 =&gt; 6 =&gt; 12</code></pre></div>
</div>
<div class="notice">Ultima modifica di <a class="username">Renji</a> il mer 01 lug 2026, 21:00, modificato 1 volta in totale.</div>
</div></div></div></div>
</body></html>"""


def test_prosilver_post():
    page = parse_page(PAGE.encode(), "https://gdr.example.it/viewtopic.php?t=9&start=0", fetched_at=FETCHED)
    assert (page.platform, page.skin, page.thread_id, page.page, page.page_count, page.page_size) == (
        "phpbb", "prosilver", "9", 1, 3, 10)
    assert page.page_urls[-1] == "https://gdr.example.it/viewtopic.php?t=9&start=20"
    (post,) = page.posts
    assert (post.id, post.author, post.author_id, post.timestamp) == ("501", "Renji", "5", "2026-07-01T20:30:00+02:00")
    assert (post.edited_by, post.edited_at) == ("Renji", "2026-07-01T21:00:00+02:00")
    assert post.url == "https://gdr.example.it/viewtopic.php?p=501#p501"
    rolls = [(r.expression, r.faces, r.total, r.source, r.authentic) for r in post.rolls]
    assert rolls == [("1d18+4", None, None, "typed_text", False), ("2d6+6", (3, 4), 13, "phpbb_dice", True)]
    assert post.rolls[1].label == "Attacco [Zabimaru] (Renji vs Rukia): (+2 [Raggio Corto] +4 [Destrezza])"
    assert post.rolls[0].tag.action == "Parata"
    assert [(q.author, q.text) for q in post.quotes] == [("Rukia", "1d12+5 => 9, 5 => 14\nPV: 30/40")]
    assert post.schema.resources["PV"].current == 38
    assert [(e.amount, e.label) for e in post.schema.registro] == [(-2, "Zanpakuto di Rukia")]
    assert "[dice=1d12+6]Esempio[/dice]" in post.body and "Seleziona tutto" not in post.body


def test_admin_pattern_override():
    page_html = PAGE.replace("2d6+6 => 3, 4, 6 => 13 ", "Tiro 2d6+6 -- risultati 3 e 4 -- totale 13")
    cfg = ForumConfig(dice_patterns=(r"Tiro (?P<expr>\S+) -- risultati (?P<faces>[\d e]+) -- totale (?P<total>\d+)",))
    page = parse_page(page_html.encode(), "https://gdr.example.it/viewtopic.php?t=9", config=cfg)
    r = page.posts[0].rolls[1]
    assert (r.expression, r.faces, r.total, r.authentic) == ("2d6+6", (3, 4), 13, True)
    assert r.label == "Attacco [Zabimaru] (Renji vs Rukia): (+2 [Raggio Corto] +4 [Destrezza])"


def test_username_coloured_master(fixture_page):
    page = parse_page(*fixture_page("phpbb/viewtopic_t312_start0.html"), fetched_at=FETCHED)
    master = page.posts[0]
    assert (master.author, master.author_id, master.role) == ("Niccolò", "2", "master")
    assert "GdR Karakura" not in master.body  # signature


# --- pagination only from the page's .pagination boxes (links in posts are the players') ----------------

T606 = "phpbb/viewtopic_t606_start0.html"
T606_URLS = ("https://forum.cavalieri-gdr.it/viewtopic.php?t=606", "https://forum.cavalieri-gdr.it/viewtopic.php?t=606&start=5",
             "https://forum.cavalieri-gdr.it/viewtopic.php?t=606&start=10")


def _in_first_post(data: bytes, html: str) -> bytes:
    i = data.index(b'<div class="content">') + len(b'<div class="content">')
    return data[:i] + html.encode("utf-8") + data[i:]


@pytest.mark.parametrize("link", [
    "./viewtopic.php?t=606&amp;start=999999999999",                  # was a MemoryError
    "https://example.com/viewtopic.php?t=606&amp;start=3000",        # another site
    "https://forum.cavalieri-gdr.it/viewtopic.php?t=61234&amp;start=45",  # another thread
    "./viewtopic.php?t=606&amp;start=7#p123",                        # a post of this thread: was step 1
])
def test_links_in_a_post_are_no_pagination(fixture_page, link):
    data, url = fixture_page(T606)
    page = parse_page(_in_first_post(data, f'Vedi <a href="{link}">qui</a><br>'), url, fetched_at=FETCHED)
    assert (page.page, page.page_count, page.page_size, page.last_offset) == (1, 3, 5, 10)
    assert page.page_urls == T606_URLS and page.next_url == T606_URLS[1]


def test_a_pagination_beyond_the_bound_is_a_named_error():
    from scraper.errors import TooManyPages

    huge = PAGE.replace("start=20", "start=999999999990")
    with pytest.raises(TooManyPages):
        parse_page(huge.encode(), "https://gdr.example.it/viewtopic.php?t=9")


# --- a page reached by a post link (`viewtopic.php?p=…#p…`: no t=, no start=) -------------------------------

T606_PAGES = {  # fixture → page number, first post id (each page's posts on the page the pagination marks)
    "phpbb/viewtopic_t606_start0.html": (1, "910110"),
    "phpbb/viewtopic_t606_start5.html": (2, "910160"),
    "phpbb/viewtopic_t606_start10.html": (3, "910210"),
}


@pytest.mark.parametrize("path", sorted(T606_PAGES))
def test_post_link_to_a_page_of_three_names_the_whole_thread(fixture_page, path):
    # page 2 links only pages 1 and 3 (offsets 0 and 10): the step is 5 (the "3" link), not their gcd 10
    data, _ = fixture_page(path)
    page_no, pid = T606_PAGES[path]
    page = parse_page(data, f"https://forum.cavalieri-gdr.it/viewtopic.php?p={pid}#p{pid}", fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size, page.last_offset) == (page_no, "606", 3, 5, 10)
    assert page.page_urls == T606_URLS
    assert page.next_url == (T606_URLS[page_no] if page_no < 3 else None)
    assert {p.page for p in page.posts} == {page_no}
    assert page.posts[0].url == f"https://forum.cavalieri-gdr.it/viewtopic.php?p={pid}#p{pid}"


T312_URLS = ("https://forum.karakura-gdr.it/viewtopic.php?t=312",
             "https://forum.karakura-gdr.it/viewtopic.php?t=312&start=15")


def test_post_link_to_the_last_of_two_pages_names_both(fixture_page):
    # the reviewer's case: page 2 of 2 links page 1 only; "18 messaggi" less its 3 posts put it at start=15
    data, _ = fixture_page("phpbb/viewtopic_t312_start15.html")
    page = parse_page(data, "https://forum.karakura-gdr.it/viewtopic.php?p=600270#p600270", fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size, page.last_offset) == (2, "312", 2, 15, 15)
    assert page.page_urls == T312_URLS and page.next_url is None
    assert [p.id for p in page.posts] == ["600260", "600270", "600280"]
    assert {p.page for p in page.posts} == {2}


def test_post_link_to_the_first_of_two_pages(fixture_page):
    data, _ = fixture_page("phpbb/viewtopic_t312_start0.html")
    page = parse_page(data, "https://forum.karakura-gdr.it/viewtopic.php?p=600180#p600180", fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size) == (1, "312", 2, 15)
    assert page.page_urls == T312_URLS and page.next_url == T312_URLS[1]


def test_post_link_to_the_last_page_without_a_post_count_names_itself_as_page_two(fixture_page):
    # nothing says the step: page 1 is named, and page 2 is the page the link serves
    data, _ = fixture_page("phpbb/viewtopic_t312_start15.html")
    data = data.replace("18 messaggi".encode(), b"")
    page = parse_page(data, "https://forum.karakura-gdr.it/viewtopic.php?p=600270#p600270", fetched_at=FETCHED)
    assert (page.page, page.thread_id, page.page_count, page.page_size) == (2, "312", 2, None)
    assert page.page_urls == (T312_URLS[0], "https://forum.karakura-gdr.it/viewtopic.php?p=600270")


def test_post_link_page_offset_from_the_canonical_link(fixture_page):
    # phpBB's own canonical names the page's start=: it gives the step when the box does not
    data, _ = fixture_page("phpbb/viewtopic_t312_start15.html")
    data = data.replace("18 messaggi".encode(), b"").replace(
        b'<link rel="canonical" href="https://forum.karakura-gdr.it/viewtopic.php?t=312">',
        b'<link rel="canonical" href="https://forum.karakura-gdr.it/viewtopic.php?t=312&amp;start=15">')
    page = parse_page(data, "https://forum.karakura-gdr.it/viewtopic.php?p=600270#p600270", fetched_at=FETCHED)
    assert (page.page, page.page_count, page.page_size, page.last_offset) == (2, 2, 15, 15)
    assert page.page_urls == T312_URLS
