"""Generic fallback, platform detection, the per-forum config file, and the committed fixtures."""
from __future__ import annotations

import pytest

from scraper.parse import parse_document, parse_page
from scraper.platforms.base import detect_platform
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
