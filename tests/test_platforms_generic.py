"""Generic fallback, platform detection, the per-forum config file, and the committed fixtures."""
from __future__ import annotations

import pytest

from scraper.parse import parse_document, parse_page
from scraper.platforms.detect import detect_platform
from scraper.platforms.config import ForumConfig, ForumConfigError, load_config

UNKNOWN_SKIN = """<html><head><title>Arena - GdR Sconosciuto</title></head><body>
<h1>Scontro al porto</h1><nav><a href="/">Home</a></nav>
<article class="message" id="msg-81"><header><a class="who" href="/profile/12">Yoruichi</a>
<time datetime="2026-05-04T19:00:00Z">4 maggio</time></header>
<div class="message-text">Nome: Yoruichi<br>PV: 40/40<br>PE: 35/35<br>Registro: nessuna variazione<br>
Attacco (Yoruichi vs Soi Fon): (+5 [Destrezza]) 1d12+5 => 8 => 13</div></article>
<article class="message" id="msg-82"><header><a class="who" href="/profile/14">Soi Fon</a>
<time datetime="2026-05-04T20:15:00Z">4 maggio</time></header>
<div class="message-text">Nome: Soi Fon<br>PV: 38/38<br>Schivata (Soi Fon vs Yoruichi): 1d12+6 => 4 => 10</div></article>
<a rel="next" href="/topic/7?page=2">Avanti</a>
</body></html>"""


def test_generic_skin_posts_and_text_rolls():
    page = parse_page(UNKNOWN_SKIN.encode(), "https://gdr.example.net/topic/7")
    assert page.platform == "generic"
    assert [(p.id, p.author, p.author_id, p.timestamp) for p in page.posts] == [
        ("81", "Yoruichi", "12", "2026-05-04T21:00:00+02:00"), ("82", "Soi Fon", "14", "2026-05-04T22:15:00+02:00")]
    r = page.posts[0].rolls[0]
    assert (r.expression, r.faces, r.total, r.source, r.authentic) == ("1d12+5", (8,), 13, "typed_text", False)
    assert r.tag.actor == "Yoruichi" and r.tag.action == "Attacco"
    assert page.posts[0].schema.resources["PV"].current == 40 and page.posts[0].schema.character == "Yoruichi"
    assert page.next_url == "https://gdr.example.net/topic/7?page=2"
    trusted = parse_page(UNKNOWN_SKIN.encode(), "https://gdr.example.net/topic/7",
                         config=ForumConfig(text_rolls="forum"))
    assert trusted.posts[1].rolls[0].source == "forum_roller" and trusted.posts[1].rolls[0].authentic


def test_generic_selectors_from_config():
    cfg = load_config("""
[forums."gdr.example.net"]
platform = "generic"
timezone = "UTC"
[forums."gdr.example.net".selectors]
post = "//article"
author = ".//a[@class='who']"
body = ".//div[@class='message-text']"
date = ".//time"
""")
    page = parse_page(UNKNOWN_SKIN.encode(), "https://gdr.example.net/topic/7", config=cfg)
    assert [p.author for p in page.posts] == ["Yoruichi", "Soi Fon"]
    assert page.posts[0].timestamp == "2026-05-04T19:00:00+00:00"


@pytest.mark.parametrize("path,name", [
    ("forumfree/topic_62345678_st0.html", "forumfree"),
    ("forumfree-classic/topic_61110022_st0.html", "forumfree"),
    ("forumotion/phpbb3/t87p0.html", "forumotion"),
    ("forumotion/invision/t42p5.html", "forumotion"),
    ("phpbb/viewtopic_t312_start0.html", "phpbb"),
])
def test_detection(fixture_page, path, name):
    data, url = fixture_page(path)
    assert detect_platform(parse_document(data), url).name == name
    # detection does not lean on the host alone: the same page under another host is still recognised
    assert detect_platform(parse_document(data), "https://altrove.example.org/x").name == name


def test_config_file_layout(tmp_path):
    path = tmp_path / "forums.toml"
    path.write_text("""
[default]
timezone = "Europe/Rome"
master_groups = ["Master", "Narratore"]

[forums."bleach-gdr.forumfree.it"]
platform = "forumfree"
ruleset = "guida"
masters = ["Niccolò"]
dice_classes = ["lanciodadi"]
[forums."bleach-gdr.forumfree.it".sections]
"4411" = "cosmo"
""", encoding="utf-8")
    cfgs = load_config(path)
    ff = cfgs.for_host("BLEACH-GDR.forumfree.it")
    assert (ff.platform, ff.ruleset, ff.ruleset_for("4411"), ff.ruleset_for("9988")) == ("forumfree", "guida", "cosmo", "guida")
    assert ff.master_groups == ("Master", "Narratore")  # inherited from [default]
    assert ff.is_master("niccolò") and ff.is_master("x", "Gruppo: Narratore") and not ff.is_master("x", "Giocatori")
    assert cfgs.for_host("altro.it").platform == "auto"


@pytest.mark.parametrize("text", [
    "[forums.x]\nplatform = 'vbulletin'",
    "[forums.x]\ntimezone = 'Marte/Olympus'",
    "[forums.x]\ncolour = 'red'",
    "[forums.x.selectors]\npost = '//div[['",
    "[forums.x.selectors]\nposts = '//div'",
    "[forums.x]\ndice_patterns = ['(?P<expr>x)']",
    "[forums.x]\nmasters = 'Niccolò'",
    "[altro]\na = 1",
    "[forums.x\n",
])
def test_bad_config_is_a_named_error(text):
    with pytest.raises(ForumConfigError) as exc:
        load_config(text)
    assert exc.value.code == "forum_config"


def test_committed_fixtures_match_the_generator(fixture_generator, fixtures_dir):
    built = fixture_generator.build_all()
    for rel, (_url, data, _meta) in built.items():
        assert (fixtures_dir / rel).read_bytes() == data, f"{rel}: run python fixtures/make_fixtures.py"
    assert (fixtures_dir / "manifest.json").read_bytes() == fixture_generator.manifest_bytes(built)


def test_story_lists_intended_mistakes(fixture_generator):
    story = fixture_generator.load_story("hollow_vs_quincy")
    ids = {p["id"] for p in story["posts"]}
    assert len(story["expected"]) >= 10
    assert all(e["post"] in ids and e["code"] and e["note"] for e in story["expected"])


# --- the generic reading of a skin no adapter knows: real ForumFree pages with every name changed ---------------

import re as _re  # noqa: E402

from engine.history import CombatHistory  # noqa: E402
from scraper.errors import NotAThread  # noqa: E402
from scraper.parse import parse_pages  # noqa: E402
from scraper.platforms.base import content_post_id  # noqa: E402

# Classes and ids of the classic ForumFree skin renamed, its host replaced: no adapter knows the page any more.
RENAMES = [
    (r'id="ee(\d+)"', r'class="msg" id="m\1"'), (r'class="nick"', 'class="who"'), (r'class="post ', 'class="cella '),
    (r'left_top', 'testa'), (r'right_top', 'capo'), (r'class="right"', 'class="corpo"'),
    (r'class="color"', 'class="testo"'), (r'class="left"', 'class="lato"'), (r'#entry', '#msg'),
    (r'id="entry', 'id="ancora'), (r'class="topic"', 'class="fili"'),
    (r'youtubepoopita\.forumfree\.it', 'gdr.example.net'), (r'forumfree|forumcommunity|ffmaster', 'esempio'),
]
NO_BLOCK_IDS = [(r' id="(?:m|ancora)\d+"', '')]
NO_POST_LINKS = [(r'href="[^"]*(?:&amp;|[?&#])(?:p=|msg)\d+[^"]*"', 'href="#"')]


def unknown_skin(real_dir, name, *more):
    text = (real_dir / "forumfree-classic" / f"{name}.html").read_text(encoding="utf-8")
    for rx, repl in RENAMES + [r for rules in more for r in rules]:
        text = _re.sub(rx, repl, text, flags=_re.I)
    return text.encode("utf-8")


def real_ids(real_dir, name):
    return _re.findall(r'id="ee(\d+)"', (real_dir / "forumfree-classic" / f"{name}.html").read_text(encoding="utf-8"))


S01 = "https://gdr.example.net/?t=41935930"


def test_unknown_skin_every_post_with_its_page_id_author_date(real_dir):
    page = parse_page(unknown_skin(real_dir, "s01"), S01)
    assert page.platform == "generic" and page.problems == ()
    assert [p.id for p in page.posts] == real_ids(real_dir, "s01")
    first, last = page.posts[0], page.posts[-1]
    assert (first.id, first.author, first.timestamp, first.url) == (
        "342921374", "Zannabluke", "2009-08-18T13:09:38+02:00", "https://gdr.example.net/?t=41935930#m342921374")
    assert (first.edited_by, first.edited_at) == ("Zannabluke", "2009-08-20T15:31:00+02:00")
    assert first.body.startswith("LOL Gente mi sono sempre chiesto") and "Inviato il" not in first.body
    assert (last.id, last.author, last.timestamp, [q.author for q in last.quotes]) == (
        "343266046", "Furio The Shopkeeper", "2009-08-20T14:50:42+02:00", ["Zebrick"])
    assert [p.author for p in page.posts[:3]] == ["Zannabluke", "·†°•.Mello-Kun.•°†·", "SilverRathalos"]
    assert (page.thread_id, page.page, page.page_count, page.page_size, page.next_url) == (
        "41935930", 1, 3, 15, "https://gdr.example.net/?t=41935930&st=15")
    assert page.page_urls == (S01, S01 + "&st=15", S01 + "&st=30")


def test_unknown_skin_edit_note_keeps_the_dash_of_the_name(real_dir):
    page = parse_page(unknown_skin(real_dir, "s00"), "https://gdr.example.net/?t=36772963")
    assert len(page.posts) == 12
    assert (page.posts[0].author, page.posts[0].edited_by, page.posts[0].timestamp) == (
        "-Lucario93-", "-Lucario93-", "2009-02-11T18:01:44+01:00")


def test_pages_one_and_three_are_one_history_in_order(real_dir):
    history = parse_pages([(unknown_skin(real_dir, "s02"), S01 + "&st=30"), (unknown_skin(real_dir, "s01"), S01)])
    assert isinstance(history, CombatHistory) and history.thread.platform == "generic"
    assert [p.id for p in history.posts] == real_ids(real_dir, "s01") + real_ids(real_dir, "s02")
    assert [p.page for p in history.posts] == [1] * 15 + [3] * 11
    assert history.thread.pages == 3
    assert history.posts[17].author == "-Lucario93-"


def test_ids_from_the_post_links_when_the_blocks_have_none(real_dir):
    page = parse_page(unknown_skin(real_dir, "s01", NO_BLOCK_IDS), S01)
    assert [p.id for p in page.posts] == real_ids(real_dir, "s01")


def test_no_id_on_the_page_gives_stable_content_ids_and_says_so(real_dir):
    data = unknown_skin(real_dir, "s01", NO_BLOCK_IDS, NO_POST_LINKS)
    page = parse_page(data, S01)
    ids = [p.id for p in page.posts]
    assert len(ids) == 15 and len(set(ids)) == 15 and all(_re.fullmatch(r"h[0-9a-f]{8}", i) for i in ids)
    assert ids == [p.id for p in parse_page(data, S01).posts]  # stable
    assert ids[0] == content_post_id("Zannabluke", "18/8/2009, 13:09:38", set())
    assert page.problems[0] == f"messaggio 1 (Zannabluke): la pagina non gli dà un id, id dal contenuto {ids[0]}"
    assert len(page.problems) == 15
    # the same page 3 does not collide with page 1
    other = parse_page(unknown_skin(real_dir, "s02", NO_BLOCK_IDS, NO_POST_LINKS), S01 + "&st=30")
    assert not set(ids) & {p.id for p in other.posts}


def test_page_chrome_alone_is_not_a_thread():
    chrome = b"""<html><body><h1>Forum</h1><ul class="menu"><li><a href="/u1">Tizio</a></li><li><a href="/u2">Caio</a>
    </li></ul><div class="footer">Oggi, 21:14</div></body></html>"""
    with pytest.raises(NotAThread):
        parse_page(chrome, "https://gdr.example.net/?t=1", platform="generic")


@pytest.mark.parametrize("path", [
    "forumfree/topic_62345678_st0.html", "forumfree-classic/topic_61110022_st0.html",
    "forumotion/phpbb3/t87p0.html", "forumotion/phpbb2/t42p0.html", "forumotion/invision/t42p5.html",
    "phpbb/viewtopic_t606_start10.html", "phpbb/viewtopic_t312_start0.html",
])
def test_fixture_pages_read_by_structure_alone(fixture_page, path):
    """Every fixture page read as if no adapter knew it: the same posts, ids, authors and dates."""
    data, url = fixture_page(path)
    known = parse_page(data, url)
    generic = parse_page(data, url, platform="generic")
    assert generic.platform == "generic"
    assert [(p.id, p.author, p.timestamp) for p in generic.posts] == [
        (p.id, p.author, p.timestamp) for p in known.posts]
    assert (generic.page, generic.page_count) == (known.page, known.page_count)


def test_the_readings_doubts_reach_the_history(real_dir):
    """A page read by structure with doubts: the history's thread lists them, with the page they come from."""
    from scraper import parse_pages

    data = unknown_skin(real_dir, "s01", NO_BLOCK_IDS, NO_POST_LINKS)
    history = parse_pages([(data, S01)])
    assert len(history.thread.problems) == 15
    assert history.thread.problems[0].startswith("pagina 1: messaggio 1 (Zannabluke): la pagina non gli dà un id")
    assert history.to_dict()["thread"]["problems"][0] == history.thread.problems[0]
