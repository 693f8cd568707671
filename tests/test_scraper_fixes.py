"""Scraper correctness fixes: URL origins, saved files without an origin, page numbers of saved pages,
damage forms, Registro entries, schema values inside action lines, control characters."""
from __future__ import annotations

import json
import pathlib

import pytest

from scraper.crawl import scrape
from scraper.parse import parse_page
from scraper.platforms.base import origin_of

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"

THREADS = {  # forum host → first page path, a post id of the thread, that post's URL path and anchor
    "bleach-gdr.forumfree.it": ("/?t=62345678", "600110", "/?t=62345678#entry600110"),
    "arena-shinigami.forumattivo.com": ("/t87-arena-di-karakura-hollow-vs-quincy", None, None),
    "forum.karakura-gdr.it": ("/viewtopic.php?t=312", "600260", "/viewtopic.php?p=600260#p600260"),
}


# --- 1. URLs keep the scheme and port of the page they were read from ---------------------------------

@pytest.mark.parametrize("host", sorted(THREADS))
def test_urls_built_from_the_page_origin_keep_scheme_and_port(host, local_forum, local_fetcher):
    first, pid, post_path = THREADS[host]
    local_forum.load_forum(host)
    history = scrape([local_forum.url(first)], fetcher=local_fetcher, follow_sheets=False)
    origin = local_forum.base_url
    assert origin.startswith("http://127.0.0.1:")
    assert history.thread.url == origin + first
    assert history.thread.host == "127.0.0.1"
    assert history.posts and all(p.url.startswith(origin + "/") for p in history.posts)
    if pid is not None:
        assert {p.id: p.url for p in history.posts}[pid] == origin + post_path


def test_forumfree_page_urls_and_post_anchor_on_a_port():
    data = (FIXTURES / "forumfree" / "topic_62345678_st15.html").read_bytes()
    page = parse_page(data, "http://127.0.0.1:38305/?t=62345678&st=15")
    assert page.page_urls == ("http://127.0.0.1:38305/?t=62345678", "http://127.0.0.1:38305/?t=62345678&st=15")
    assert page.posts[0].url == "http://127.0.0.1:38305/?t=62345678&st=15#entry600260"


def test_phpbb_under_a_folder_names_pages_and_posts_in_that_folder():
    data = (FIXTURES / "phpbb" / "viewtopic_t312_start0.html").read_bytes()
    page = parse_page(data, "http://127.0.0.1:8080/forum/viewtopic.php?t=312")
    assert page.page_urls == ("http://127.0.0.1:8080/forum/viewtopic.php?t=312",
                              "http://127.0.0.1:8080/forum/viewtopic.php?t=312&start=15")
    assert page.posts[0].url == f"http://127.0.0.1:8080/forum/viewtopic.php?p={page.posts[0].id}#p{page.posts[0].id}"


@pytest.mark.parametrize("url, origin", [
    ("http://127.0.0.1:38305/?t=1", "http://127.0.0.1:38305"),
    ("HTTPS://Forum.Example.IT/x", "https://forum.example.it"),
    ("https://user:secret@forum.example.it:8443/x", "https://forum.example.it:8443"),
    ("http://[::1]:8000/?t=1", "http://[::1]:8000"),
    ("file:///tmp/topic.html", ""),
    ("/?t=1", ""),
])
def test_origin_of(url, origin):
    assert origin_of(url) == origin


# --- 2. saved files with no known origin: relative URLs, never "https:///" nor "None" ----------------------

def _bad_url(u: str) -> bool:
    return "https:///" in u or "None" in u


def test_saved_api_json_without_origin_gives_relative_urls():
    files = [str(FIXTURES / "forumfree" / f"api_62345678_st{o}.json") for o in (0, 15)]
    history = scrape(files, follow_sheets=False)
    assert history.thread.url == "/api.php?t=62345678&st=0"
    assert history.thread.host == ""
    urls = {p.id: p.url for p in history.posts}
    assert urls["600110"] == "/?t=62345678#entry600110"
    assert urls["600260"] == "/?t=62345678&st=15#entry600260"
    assert not any(_bad_url(u) for u in urls.values())


def test_api_json_naming_its_forum_uses_that_origin():
    data = json.loads((FIXTURES / "forumfree" / "api_62345678_st15.json").read_text(encoding="utf-8"))
    data["info"]["url"] = "https://bleach-gdr.forumfree.it/?t=62345678"
    page = parse_page(json.dumps(data).encode("utf-8"), "file:///tmp/api_62345678_st15.json")
    assert page.host == "bleach-gdr.forumfree.it"
    assert page.page_urls == ("https://bleach-gdr.forumfree.it/api.php?t=62345678&st=0",
                              "https://bleach-gdr.forumfree.it/api.php?t=62345678&st=15")
    assert page.posts[0].url == "https://bleach-gdr.forumfree.it/?t=62345678&st=15#entry600260"
    del data["info"]["url"]
    data["info"]["host"] = "bleach-gdr.forumfree.it"
    page = parse_page(json.dumps(data).encode("utf-8"), "file:///tmp/api_62345678_st15.json")
    assert page.posts[0].url == "https://bleach-gdr.forumfree.it/?t=62345678&st=15#entry600260"
    data["info"]["host"] = "not a host/../x"  # not a host name: ignored
    page = parse_page(json.dumps(data).encode("utf-8"), "file:///tmp/api_62345678_st15.json")
    assert (page.host, page.posts[0].url) == ("", "/?t=62345678&st=15#entry600260")


def test_saved_malformed_page_without_thread_id_gives_bare_anchors():
    history = scrape([str(FIXTURES / "forumfree" / "malformed_62000001.html")], follow_sheets=False)
    assert [p.url for p in history.posts][:2] == ["#entry620010", "#entry620020"]
    assert not any(_bad_url(p.url) for p in history.posts)


def test_saved_pages_without_origin_relative_on_every_platform():
    cases = {
        "forumfree-classic/topic_61110022_st0.html": "/?t=61110022#entry700110",
        "forumotion/phpbb3/t87p20.html": "/t87p20-arena-di-karakura-hollow-vs-quincy#600220",
        "phpbb/viewtopic_t312_start15.html": "viewtopic.php?p=600260#p600260",
    }
    for path, url in cases.items():
        data = (FIXTURES / path).read_bytes()
        page = parse_page(data, (FIXTURES / path).as_uri())
        assert page.posts[0].url == url, path
        assert not any(_bad_url(u) for u in (*page.page_urls, *(p.url for p in page.posts))), path


# --- 3. a saved later page is labelled with the page its pagination marks -------------------------------

def test_saved_phpbb_page_two_is_page_two():
    # the saved page names `viewtopic.php?t=312` (no start=) as its canonical URL
    history = scrape([str(FIXTURES / "phpbb" / "viewtopic_t312_start15.html")], follow_sheets=False)
    assert history.thread.pages == 2
    assert history.thread.pages_read == (2,)
    assert {p.page for p in history.posts} == {2}
    assert history.thread.url == "https://forum.karakura-gdr.it/viewtopic.php?t=312"


def test_saved_phpbb_pages_given_in_any_order_are_put_in_thread_order():
    files = [str(FIXTURES / "phpbb" / f"viewtopic_t312_start{s}.html") for s in (15, 0)]
    history = scrape(files, follow_sheets=False)
    assert history.thread.pages == 2 and history.thread.pages_read == (1, 2)
    pages = [(p.id, p.page) for p in history.posts]
    assert pages[0] == ("600110", 1) and ("600260", 2) in pages
    assert [p for _, p in pages] == sorted(p for _, p in pages)


@pytest.mark.parametrize("path, page_no, first_url", [
    ("forumfree/topic_62345678_st15.html", 2, "/?t=62345678&st=15#entry600260"),
    ("forumfree/topic_62345678_st0.html", 1, "/?t=62345678#entry600110"),
    ("phpbb/viewtopic_t312_start15.html", 2, "viewtopic.php?p=600260#p600260"),
    ("phpbb/viewtopic_t312_start0.html", 1, "viewtopic.php?p=600110#p600110"),
    ("forumotion/phpbb3/t87p20.html", 2, "/t87p20-arena-di-karakura-hollow-vs-quincy#600220"),
    ("forumotion/invision/t42p5.html", 2, "/t42p5-duello-al-tempio-kenshi-vs-mizuki#700131"),
    ("forumotion/phpbb2/t42p0.html", 1, None),
])
def test_page_number_from_the_pagination_when_the_url_does_not_say(path, page_no, first_url):
    f = FIXTURES / path
    page = parse_page(f.read_bytes(), f.as_uri())  # a file URI: no st=/start=/p<offset> in it
    assert (page.page, page.page_count) == (page_no, 2)
    assert {p.page for p in page.posts} == {page_no}
    if first_url is not None:
        assert page.posts[0].url == first_url


# --- 4. damage forms: a "Danno <tipo>:" before the terms, the kind written after the result -------------

DMG = "Calcolo Danni [Artigli Affilati] (Hollow vs Quincy): "


@pytest.mark.parametrize("line, kind, terms, result", [
    (DMG + "Danno Puro: Potenza 14 = 14 Danni", "puro", [("+", "Potenza", 14.0)], 14),
    (DMG + "Danno Semi-Puro: Potenza 14 - Resistenza 6 / 2 = 11 Danni", "semi-puro",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 11),
    (DMG + "Danni Puri - Potenza 14 = 14 Danni", "puro", [("+", "Potenza", 14.0)], 14),
    (DMG + "Potenza 14 = 14 Danni Puri", "puro", [("+", "Potenza", 14.0)], 14),
    (DMG + "Potenza 14 - Resistenza 6 = 8 Danni [Danno Semi-Puro]", "semi-puro",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0)], 8),
    (DMG + "Potenza 14 - Resistenza 6 / 2 = 11 Danni Semi-Puri", "semi-puro",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 11),
    # a named term keeps its name; a minus followed by a number stays a subtraction
    (DMG + "Danno Puro 10 = 10 Danni", "puro", [("+", "Danno Puro", 10.0)], 10),
    (DMG + "Potenza 14 - Resistenza 6 = 8 Danni", "normale", [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0)], 8),
])
def test_damage_kind_prefix_and_kind_after_the_result(line, kind, terms, result):
    from scraper.damage import parse_damage_calcs

    (calc,) = parse_damage_calcs(line)
    assert (calc.kind, [(t.op, t.name, t.value) for t in calc.terms], calc.result) == (kind, terms, result)
    assert (calc.technique, calc.actor, calc.target, calc.resource) == ("Artigli Affilati", "Hollow", "Quincy", "PV")


# --- 5. "- 8 PV [..]" inside a Registro is a loss, never the pool's value ---------------------------------

def test_registro_dash_space_number_is_a_negative_entry():
    from scraper.schema import parse_schema

    schema = parse_schema("Registro:\n- 8 PV [Artigli]\n-5 PE [Cero]")
    assert schema.resources == {}
    assert [(e.amount, e.resource, e.label) for e in schema.registro] == [(-8, "PV", "Artigli"), (-5, "PE", "Cero")]
    assert "PV" in schema.missing


def test_registro_bullets_and_pools_after_it():
    from scraper.schema import parse_schema

    schema = parse_schema("PV 44/52\nRegistro:\n- 8 PV [Artigli]\n- +4 PV (Cura)\n• -5 PE [Cero]\n- 40/50 PE")
    assert [(e.amount, e.resource, e.label) for e in schema.registro] == [
        (-8, "PV", "Artigli"), (4, "PV", "Cura"), (-5, "PE", "Cero")]
    assert {k: (r.current, r.max) for k, r in schema.resources.items()} == {"PV": (44, 52), "PE": (40, 50)}
