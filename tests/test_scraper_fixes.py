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
    assert history.thread.url == "/?t=62345678"  # the thread, as readers open it: not its api.php JSON
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


# --- 6. values inside an action line's brackets are not the schema's ----------------------------------------

def _read(text):
    from scraper.schema import parse_schema

    s = parse_schema(text)
    if s is None:
        return None
    return ({k: (r.current, r.max) for k, r in s.resources.items()}, {k: (v.base, v.bonus) for k, v in s.stats.items()})


def test_action_line_brackets_alone_are_no_schema():
    assert _read("Liberazione [Cosmo 100]\nDifesa [Volontà 220] (Orione vs Elettra)") is None
    assert _read("Attacco [Freccia di Orione] {Special 1} [Mente 250] [Pool 360] [Cosmo 120]") is None


def test_action_lines_before_the_schema_do_not_win():
    text = ("Il cosmo di Orione arde contro le catene.\nLiberazione [Cosmo 100]\nDifesa [Volontà 220]\n"
            "Personaggio: Orione\nPunti Salute: 815/900\nCosmo: 180/400\n"
            "Forza 230 | Mente 250 | Resistenza 200 | Volontà 210 | Reattività 235")
    resources, stats = _read(text)
    assert resources == {"PV": (815, 900), "Cosmo": (180, 400)}
    assert stats == {"Forza": (230, 0), "Mente": (250, 0), "Resistenza": (200, 0), "Volontà": (210, 0),
                     "Reattività": (235, 0)}


def test_a_schema_line_wins_over_an_earlier_mention_in_a_sentence():
    assert _read("Orione brucia Cosmo 100 in un lampo\nCosmo: 180/400") == ({"Cosmo": (180, 400)}, {})
    # the first of two schema lines still stands
    assert _read("Cosmo: 180/400\nCosmo: 90/400") == ({"Cosmo": (180, 400)}, {})


def test_bracketed_schema_values_without_an_action_are_kept():
    assert _read("[Forza 5 (+1)] [Destrezza 4]\nStatistiche: [Mente 3 (+2)]\nPV 44/52 | PE 10/40") == (
        {"PV": (44, 52), "PE": (10, 40)}, {"Forza": (5, 1), "Destrezza": (4, 0), "Mente": (3, 2)})


# --- 7. control characters never reach the history (nor a terminal through `arbitro audit`) ----------------

_CONTROL_CHARS = {chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0))} - {"\n", "\t"}


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def test_control_characters_stripped_from_author_title_text_and_labels():
    from scraper.parse import parse_pages

    data = (FIXTURES / "forumfree" / "topic_62345678_st0.html").read_bytes()
    hostile = (data.replace(b"Kurogane", b"Kuro&#27;[31m&#27;]0;pwned&#7;gane")
               .replace(b"<h1>Arena di Karakura", b"<h1>Arena&#27;[2J di\x1b[0m Karakura")
               .replace(b"Quincy", b"Quin&#27;[0mcy\x08"))
    assert hostile != data and b"Quin&#27;[0mcy" in hostile
    history = parse_pages([(hostile, "https://bleach-gdr.forumfree.it/?t=62345678")])
    authors = {p.author for p in history.posts}
    assert "Kuro[31m]0;pwnedgane" in authors
    assert history.thread.title == "Arena[2J di[0m Karakura — Hollow vs Quin[0mcy"
    labels = [r.label for p in history.posts for r in p.rolls]
    assert any("Quin[0mcy" in lab for lab in labels)
    assert any("Quin[0mcy" in p.body for p in history.posts)
    bad = [s for s in _strings(history.to_dict()) if _CONTROL_CHARS & set(s)]
    assert bad == []


def test_control_characters_stripped_from_api_json_names():
    data = json.loads((FIXTURES / "forumfree" / "api_62345678_st0.json").read_text(encoding="utf-8"))
    data["info"]["title"] = "Arena\x1b[2J di Karakura"
    data["messages"][0]["user"]["name"] = "Kuro\x1b[31m\x1b]0;pwned\x07gane"
    data["messages"][0]["content"] = "Testo\x1b[0m del post\x9b2J"
    page = parse_page(json.dumps(data).encode("utf-8"), "https://bleach-gdr.forumfree.it/api.php?t=62345678&st=0")
    assert page.title == "Arena[2J di Karakura"
    assert page.posts[0].author == "Kuro[31m]0;pwnedgane"
    assert page.posts[0].body == "Testo[0m del post2J"


@pytest.mark.parametrize("raw, clean", [
    ("a\x1b[31mb", "a[31mb"), ("riga\nriga\tcol", "riga\nriga\tcol"), ("\x00\x7f\x9f", ""), ("Forza\x1cDestrezza\x85Mente\rVolontà", "Forza Destrezza Mente Volontà"),
    ("Volontà — ok\u00ad", "Volontà — ok\u00ad"),
])
def test_strip_controls(raw, clean):
    from scraper.htmltext import strip_controls

    assert strip_controls(raw) == clean


def test_control_characters_stripped_from_sheet_links():
    from scraper.platforms.base import post_schema

    schema = post_schema("PV 44/52", [("/?t=70000101\x1b[2J", "Scheda")], "https://bleach-gdr.forumfree.it/?t=1")
    assert schema.sheet_url == "https://bleach-gdr.forumfree.it/?t=70000101[2J"


# --- the reported commands, end to end through the CLI -------------------------------------------------------

def _cli(*args):
    import os
    import subprocess
    import sys

    root = str(FIXTURES.parent)
    env = {**os.environ, "PYTHONPATH": root, "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "server", "scrape", *args], cwd=root, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode("utf-8"), json.loads(proc.stdout.decode("utf-8"))


def test_cli_saved_api_json_and_malformed_page_print_no_invented_urls():
    out, doc = _cli("fixtures/forumfree/api_62345678_st0.json", "fixtures/forumfree/api_62345678_st15.json")
    assert "https:///" not in out and "None" not in out
    assert (doc["thread"]["url"], doc["thread"]["host"]) == ("/?t=62345678", "")
    assert doc["posts"][0]["url"] == "/?t=62345678#entry600110"
    out, doc = _cli("fixtures/forumfree/malformed_62000001.html")
    assert "https:///" not in out and "t=None" not in out
    assert doc["posts"][0]["url"] == "#entry620010"
