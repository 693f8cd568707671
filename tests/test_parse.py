"""parse_page / parse_pages: charset handling, named errors, ordering and dedupe, characters, JSON round trip."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.history import CombatHistory, Registry, Character
from scraper.errors import NotAThread, ParseError, ScrapeError, UnsupportedPlatform
from scraper.parse import decode_html, parse_page, parse_pages

FETCHED = "2026-11-09T12:00:00+01:00"
HVQ = ["forumfree/topic_62345678_st0.html", "forumfree/topic_62345678_st15.html"]


def _ff_page(body: str, *, charset: str = "utf-8", author: str = "Kurogane") -> str:
    return f"""<html><head><meta http-equiv="Content-Type" content="text/html; charset={charset}"></head>
<body id="topic"><div class="title"><h1>Prova</h1></div><ul><li class="post" id="ee1"><div class="nick">
<a href="/?act=Profile&amp;MID=3">{author}</a></div><td class="right Item"><span class="when" title="2/3/2026, 21:00">x</span>
<table class="color"><tr><td>{body}</td></tr></table></td></li></ul></body></html>"""


def test_iso_8859_1_is_read_as_cp1252():
    data = _ff_page("Città – “bella”", charset="iso-8859-1").encode("cp1252")
    page = parse_page(data, "https://a.forumfree.it/?t=1")
    assert page.posts[0].body == "Città – “bella”"


def test_http_charset_wins_over_guessing():
    data = _ff_page("perché").replace('charset=utf-8', '').encode("cp1252")
    page = parse_page(data, "https://a.forumfree.it/?t=1", charset="windows-1252")
    assert page.posts[0].body == "perché"


def test_unlabelled_legacy_bytes_are_not_garbled():
    data = _ff_page("Il Quincy è più rapido di così").replace('charset=utf-8', '').encode("cp1252")
    page = parse_page(data, "https://a.forumfree.it/?t=1")
    assert page.posts[0].body == "Il Quincy è più rapido di così"


def test_mixed_encodings_are_repaired():
    # a UTF-8 page where one pasted fragment is windows-1252
    data = _ff_page("Città già così — XX").encode("utf-8").replace(b"XX", "però".encode("cp1252"))
    page = parse_page(data, "https://a.forumfree.it/?t=1")
    assert page.posts[0].body == "Città già così — però"
    text, enc, repaired = decode_html(data)
    assert enc == "utf-8" and repaired


def test_utf8_fast_path_decodes_nothing():
    text, enc, repaired = decode_html(_ff_page("Città").encode("utf-8"))
    assert (text, enc, repaired) == (None, "utf-8", False)


def test_mislabelled_utf8():
    data = _ff_page("Città già", charset="iso-8859-1").encode("utf-8")
    assert parse_page(data, "https://a.forumfree.it/?t=1").posts[0].body == "Città già"


@pytest.mark.parametrize("data", [b"", b"   ", b"\x00\x00", b"<html><body><p>Ciao</p></body></html>",
                                  b"\xff\xfe\x00<", b"{not json", b"<?xml version='1.0'?><a/>"])
def test_not_a_thread(data):
    with pytest.raises(NotAThread):
        parse_page(data, "https://a.forumfree.it/?t=1")


def test_index_page_is_not_a_thread(fixture_page):
    with pytest.raises(NotAThread) as exc:
        parse_page(*fixture_page("forumfree/index.html"))
    assert exc.value.code == "not_a_thread" and "discussione" in str(exc.value)


def test_unknown_platform_name(fixture_page):
    with pytest.raises(UnsupportedPlatform):
        parse_page(*fixture_page(HVQ[0]), platform="vbulletin")


def test_forced_platform_that_does_not_match(fixture_page):
    with pytest.raises(NotAThread):
        parse_page(*fixture_page(HVQ[0]), platform="phpbb")


def test_malformed_page_is_parsed_leniently(fixture_page):
    page = parse_page(*fixture_page("forumfree/malformed_62000001.html"), fetched_at=FETCHED)
    assert [p.id for p in page.posts] == ["620010", "620020"]
    first, second = page.posts
    assert first.author == "Kurogane" and first.timestamp == "2026-11-03T21:00:00+01:00"
    assert [(r.expression, r.faces, r.total, r.authentic) for r in first.rolls] == [("1d12+6", (9,), 15, True)]
    assert first.schema.resources["PV"].current == 52
    assert "Il Quincy è in ritardo" in second.body  # the stray latin-1 byte repaired, the NUL dropped


def test_topic_without_schemas(fixture_page):
    history = parse_pages([fixture_page("forumfree/topic_63000001_st0.html")], fetched_at=FETCHED)
    assert [(p.author, p.role, p.schema, p.rolls, p.character) for p in history.posts] == [
        ("Kurogane", "player", None, (), None),  # nothing names a character: null, not the nick
        ("Seireitei_Ryo", "player", None, (), None),
        ("Niccolò", "master", None, (), None),
    ]


def test_pages_in_any_order_and_duplicates(fixture_page):
    p1, p2 = fixture_page(HVQ[0]), fixture_page(HVQ[1])
    a = parse_pages([p1, p2], fetched_at=FETCHED)
    b = parse_pages([p2, p1, p2], fetched_at=FETCHED)
    assert a == b
    assert [p.id for p in a.posts] == [str(600110 + 10 * i) for i in range(18)]
    assert a.thread.url == "https://bleach-gdr.forumfree.it/?t=62345678"


def test_pages_of_different_threads(fixture_page):
    with pytest.raises(ParseError):
        parse_pages([fixture_page(HVQ[0]), fixture_page("forumfree/topic_63000001_st0.html")])


def test_no_pages():
    with pytest.raises(ParseError):
        parse_pages([])


def test_character_from_registry(fixture_page):
    reg = Registry(characters={"Il Vuoto": Character(name="Il Vuoto", player="Seireitei_Ryo")})
    history = parse_pages([fixture_page("forumfree/topic_63000001_st0.html")], registry=reg)
    assert [p.character for p in history.posts] == [None, "Il Vuoto", None]
    assert history.registry is reg


def test_history_json_round_trip(fixture_page):
    history = parse_pages([fixture_page(p) for p in HVQ], fetched_at=FETCHED)
    assert CombatHistory.from_dict(history.to_dict()) == history


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600) | st.text(max_size=400).map(lambda s: _ff_page(s).encode("utf-8", "surrogatepass")))
def test_random_bytes_raise_only_named_errors(data):
    try:
        page = parse_page(data, "https://a.forumfree.it/?t=1")
    except ScrapeError:
        return
    for post in page.posts:
        assert "<script" not in post.body


_PIECES = [
    '<li class="post" id="ee12">', '<div id="p7" class="post">', '<tr class="post" id="p9">', '<div class="post-entry">',
    '<dl class="postprofile"><dt><a class="username" href="./memberlist.php?u=3">N</a></dt></dl>',
    '<div class="nick"><a href="/?act=Profile&MID=x">Nick</a></div>', '<span class="when" title="31/2/2026">',
    '<td class="right Item"><table class="color"><tr><td>', '<div class="content">', '<div class="postbody">',
    '<blockquote><div><cite>A ha scritto:</cite>', '</div></blockquote>', '<div class="quote_top">CITAZIONE (x @',
    '<div class="quote">', '<div class="code_top">CODICE</div><div class="code">', '<dl class="codebox"><dt>',
    '<div class="dicebox">1d12+6 => 7 => 13</div>', '<div class="dice_roll">Lancio dadi 1d999999+1: 5 = 6</div>',
    '[dice=1d12+6]Attacco (A vs B): (+6 [Destrezza])[/dice]', "Il membro 'X' ha effettuato", '<img src="d12_99.png">',
    '<p class="author">da <strong><a href="/u1">Game Master</a></strong> Oggi alle 99:99</p>', '<!--QuoteBegin-x+-->',
    '<table><tr><td id="QUOTE">', 'PV: 44/52', 'Registro: -8 PV [Cero]', 'Calcolo Danni [X] (A vs B): Potenza 1 = ',
    '<a name="entry5"></a>', '<div class="postcolor">', '<a href="?t=1&st=-15">', '<a href="/t1p0-x">', '</div>', '</li>',
    '<meta name="generator" content="Forumotion">', '<body id="topic">', '<script>x</script>', '<br>', 'testo ',
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=40),
       st.sampled_from(["https://a.forumfree.it/?t=1&st=15", "https://b.forumattivo.com/t1p20-x",
                        "https://c.it/viewtopic.php?t=1&start=10", "https://d.example.org/x", "file:///tmp/x.html"]),
       st.sampled_from(["auto", "forumfree", "forumotion", "phpbb", "generic"]))
def test_forum_shaped_garbage_raises_only_named_errors(pieces, url, platform):
    try:
        history = parse_pages([("".join(pieces).encode(), url)], platform=platform)
    except ScrapeError:
        return
    CombatHistory.from_dict(history.to_dict())


# --- deeply nested markup: libxml2 stops building the tree at its depth limit -----------------------------

T606 = "phpbb/viewtopic_t606_start0.html"


def _nested_in_first_post(data: bytes, html: bytes) -> bytes:
    i = data.index(b'<div class="content">') + len(b'<div class="content">')
    return data[:i] + html + data[i:]


@pytest.mark.parametrize("depth", [250, 1000])
def test_deep_markup_in_a_post_keeps_every_post(fixture_page, depth):
    data, url = fixture_page(T606)
    plain = parse_page(data, url, fetched_at=FETCHED)
    page = parse_page(_nested_in_first_post(data, b"<b>" * depth + b"Attenzione!" + b"</b>" * depth + b"<br>"), url,
                      fetched_at=FETCHED)
    assert [p.id for p in page.posts] == [p.id for p in plain.posts] == ["910110", "910120", "910130", "910140",
                                                                         "910150"]
    assert page.posts[0].body == "Attenzione!\n" + plain.posts[0].body
    assert page.posts[1:] == plain.posts[1:]


def test_markup_beyond_the_depth_limit_is_a_named_error_not_a_partial_page(fixture_page):
    from scraper.errors import PageTooDeep

    data, url = fixture_page(T606)
    with pytest.raises(PageTooDeep, match="annidat"):
        parse_page(_nested_in_first_post(data, b"<span>" * 5000 + b"x"), url, fetched_at=FETCHED)
    assert issubclass(PageTooDeep, ParseError)
    # the next page is read whole again (the parser's error log is the last parse's)
    assert len(parse_page(data, url, fetched_at=FETCHED).posts) == 5


def test_deep_markup_in_an_api_message_is_a_named_error(fixture_page):
    import json

    from scraper.errors import PageTooDeep

    data, url = fixture_page("forumfree/api_62345678_st0.json")
    doc = json.loads(data)
    doc["messages"][0]["content"] = "<span>" * 5000 + "x" + doc["messages"][0]["content"]
    with pytest.raises(PageTooDeep):
        parse_page(json.dumps(doc).encode(), url)


# --- charsets: the documented order (docs/fetching.md), one decoder shared with scraper.fetch -------------

_CP1252_META = b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'


def test_unlabelled_cp1252_fixture_reads_as_windows_1252(fixture_page):
    # the repo's own cp1252 page with its <meta> removed: no label anywhere, not UTF-8 → windows-1252 (was cp1250)
    data, url = fixture_page("forumfree/topic_62345678_st15.html")
    assert _CP1252_META in data
    labelled = parse_page(data, url, fetched_at=FETCHED)
    bare = parse_page(data.replace(_CP1252_META, b""), url, fetched_at=FETCHED)
    assert [p.body for p in bare.posts] == [p.body for p in labelled.posts]
    assert "“Non è finita”" in bare.posts[0].body and bare.posts[-1].author == "Niccolò"
    assert decode_html(data.replace(_CP1252_META, b""))[1] == "windows-1252"


def test_unlabelled_cp1252_italian_is_not_guessed_as_another_charset():
    data = _ff_page("Prova: perché città € ’ — lì").replace("charset=utf-8", "").encode("cp1252")
    assert parse_page(data, "https://a.forumfree.it/?t=1").posts[0].body == "Prova: perché città € ’ — lì"


@pytest.mark.parametrize("charset", ["iso-8859-1", None])
def test_cp1252_page_with_pasted_utf8_is_repaired(charset):
    # a windows-1252 page (HTTP label iso-8859-1, or no label at all) where one player pasted UTF-8 text
    body = "Prova: XX e città €".encode("cp1252").replace(b"XX", "perché".encode("utf-8"))
    data = _ff_page("BODY").replace("charset=utf-8", "").encode("ascii").replace(b"BODY", body)
    page = parse_page(data, "https://a.forumfree.it/?t=1", charset=charset)
    assert page.posts[0].body == "Prova: perché e città €"
    text, enc, repaired = decode_html(data, charset=charset)
    assert (enc, repaired) == ("windows-1252", True) and "Prova: perché e città €" in text


def test_decode_html_is_fetchs_decoder():
    from scraper.charset import decode_text, detect_encoding

    samples = [_ff_page("città").encode("utf-8"),
               _ff_page("città").replace("charset=utf-8", "").encode("cp1252"),
               _ff_page("Łódź", charset="iso-8859-2").encode("iso-8859-2"),
               _ff_page("Città già così — XX").encode("utf-8").replace(b"XX", "però".encode("cp1252")),
               b"\xef\xbb\xbf" + _ff_page("città").encode("utf-8")]
    for data in samples:
        for charset in (None, "iso-8859-1", "utf-8"):
            text, enc, _ = decode_html(data, charset=charset)
            ctype = f"text/html; charset={charset}" if charset else None
            assert enc == detect_encoding(data, ctype)
            assert (text if text is not None else data.decode("utf-8")) == decode_text(data, enc).lstrip("\ufeff")


@pytest.mark.parametrize("link", ["/?t=555", "https://bleach-gdr.forumfree.it/?t=555#entry9",
                                  "https://BLEACH-GDR.forumfree.it:443/index.php?showtopic=555&st=0", "index.php?t=555"])
def test_a_sheet_link_in_another_form_still_names_the_registry_character(fixture_page, link):
    from dataclasses import replace

    from scraper.parse import assign_characters

    post = next(p for p in parse_pages([fixture_page(HVQ[0])]).posts if p.schema is not None and p.role == "player")
    post = replace(post, author="Ospite", character=None, schema=replace(post.schema, sheet_url=link))
    reg = Registry(characters={"Aiko": Character(
        name="Aiko", sheet_url="https://bleach-gdr.forumfree.it/index.php?showtopic=555")})
    assert assign_characters([post], reg)[0].character == "Aiko"
    other = replace(post, schema=replace(post.schema, sheet_url="/?t=556"))
    assert assign_characters([other], reg)[0].character is None  # another topic is another sheet


def test_a_schema_without_a_name_line_plays_no_character():
    """docs/history-format.md: the schema's name, else its sheet / the registry, else null — never the forum nick."""
    from engine.history import Post, PostSchema, Resource
    from scraper.parse import assign_characters

    schema = PostSchema(resources={"PV": Resource(40, 40)})
    nameless = Post(id="1", page=1, url="", author="Ronin_88", author_id=None, timestamp=None, role="player",
                    edited_by=None, edited_at=None, body="PV: 40/40", schema=schema)
    named = Post(id="2", page=1, url="", author="Hana_K", author_id=None, timestamp=None, role="player",
                 edited_by=None, edited_at=None, body="Personaggio: Mizuki", character="Mizuki")
    later = Post(id="3", page=1, url="", author="Hana_K", author_id=None, timestamp=None, role="player",
                 edited_by=None, edited_at=None, body="PV: 30/30", schema=schema)
    got = assign_characters([nameless, named, later])
    assert [p.character for p in got] == [None, "Mizuki", "Mizuki"]  # the author's own posts name Mizuki


def test_text_after_an_unclosed_embed_is_the_posts():
    """A real ForumFree post (held-out page 36061363): `<embed …><br><img> speriamo che era vuoto xD` — libxml2
    nested the text in the void <embed>, which every reader skips, and the body came out empty."""
    page = b"""<html><body><div class="anchor"><a id="entry1"></a></div><table id="ee1"><tr><td class="post">
    <table class="main6"><tr><td class="left_top"><div class="nick">Zebrick</div></td><td class="right_top">
    <a href="/?t=5#entry1" title="18/1/2009, 18:52:52"><b>Inviato il:</b> 18/1/2009, 18:52</a></td></tr><tr>
    <td class="left"></td><td class="right"><div class="color"><embed src="https://www.youtube.com/v/x" width="425">
    <br><img alt=":asd:" src="a.gif"> speriamo che era vuoto xD</div></td></tr></table></td></tr></table></body></html>"""
    post = parse_page(page, "https://youtubepoopita.forumfree.it/?t=5").posts[0]
    assert (post.id, post.author, post.body) == ("1", "Zebrick", "speriamo che era vuoto xD")
