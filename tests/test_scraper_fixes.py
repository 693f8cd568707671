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
        "forumotion/phpbb3/t87p20.html": "#600220",
        "phpbb/viewtopic_t312_start15.html": "viewtopic.php?p=600260#p600260",
    }
    for path, url in cases.items():
        data = (FIXTURES / path).read_bytes()
        page = parse_page(data, (FIXTURES / path).as_uri())
        assert page.posts[0].url == url, path
        assert not any(_bad_url(u) for u in (*page.page_urls, *(p.url for p in page.posts))), path
