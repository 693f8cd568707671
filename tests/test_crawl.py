"""The crawl over real HTTP: every fixture forum fetched page by page from the local forum server."""
from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from scraper.crawl import BadSource, crawl_thread, rescrape, scrape
from scraper.errors import FetchFailed, NotAThread
from scraper.fetch import Fetcher
from scraper.parse import parse_pages

THREAD_HOSTS = {  # forum host → (platform, skin, page paths in order)
    "bleach-gdr.forumfree.it": ("forumfree", "ff-current", ["/?t=62345678", "/?t=62345678&st=15"]),
    "arena-shinigami.forumattivo.com": ("forumotion", "phpbb3", ["/t87-arena-di-karakura-hollow-vs-quincy",
                                                                 "/t87p20-arena-di-karakura-hollow-vs-quincy"]),
    "tempio-kenshi.forumattivo.com": ("forumotion", "phpbb2", ["/t42-duello-al-tempio-kenshi-vs-mizuki",
                                                               "/t42p5-duello-al-tempio-kenshi-vs-mizuki"]),
    "ninja-gdr.forumattivo.it": ("forumotion", "invision", ["/t42-duello-al-tempio-kenshi-vs-mizuki",
                                                            "/t42p5-duello-al-tempio-kenshi-vs-mizuki"]),
    "forum.karakura-gdr.it": ("phpbb", "prosilver", ["/viewtopic.php?t=312", "/viewtopic.php?t=312&start=15"]),
}
FF = "bleach-gdr.forumfree.it"
FF_PAGES = THREAD_HOSTS[FF][2]


def _manifest(fixtures_dir):
    return json.loads((fixtures_dir / "manifest.json").read_text(encoding="utf-8"))


def _offline(fixtures_dir, host, kind="html"):
    """The same thread parsed from the fixture files under their real URLs: what the crawl must reproduce."""
    entries = sorted((e for e in _manifest(fixtures_dir) if host in e["url"] and e["kind"] == kind
                      and e.get("story")), key=lambda e: e["page"])
    return parse_pages([((fixtures_dir / e["path"]).read_bytes(), e["url"]) for e in entries])


def _essence(post):
    """What a post says, without the URLs that differ between the real forum and the local server."""
    schema = post.schema and replace(post.schema, sheet_url=None)
    return (post.id, post.page, post.author, post.author_id, post.timestamp, post.role, post.body, post.rolls,
            post.damage, schema, post.character, post.answers, post.edited_by, post.edited_at)


def _page_log(server):
    return [r for r in server.requests_log if r.path != "/robots.txt"]


@pytest.mark.parametrize("host", sorted(THREAD_HOSTS))
def test_multi_page_thread_fetched_in_order_equals_offline_parse(host, local_forum, local_fetcher, fixtures_dir):
    platform, skin, paths = THREAD_HOSTS[host]
    local_forum.load_forum(host)
    seen = []
    result = crawl_thread(local_forum.url(paths[0]), fetcher=local_fetcher,
                          progress=lambda d, t, u: seen.append((d, t, u)))
    history = result.history
    assert (history.thread.platform, history.thread.skin, history.thread.pages) == (platform, skin, len(paths))
    # pages in order, each once, before any sheet
    page_requests = [r.path for r in _page_log(local_forum)][:len(paths)]
    assert page_requests == paths
    assert [p.index for p in result.pages] == list(range(1, len(paths) + 1))
    assert all(p.changed and not p.not_modified for p in result.pages)
    expected = _offline(fixtures_dir, host)
    assert [_essence(p) for p in history.posts] == [_essence(p) for p in expected.posts]
    assert len(history.posts) >= 6
    assert seen[:len(paths)] == [(i, len(paths), local_forum.url(p)) for i, p in enumerate(paths, start=1)]


def test_starting_from_a_later_page_still_reads_the_whole_thread(local_forum, local_fetcher, fixtures_dir):
    local_forum.load_forum(FF)
    history = scrape([local_forum.url(FF_PAGES[1])], fetcher=local_fetcher, follow_sheets=False)
    assert [_essence(p) for p in history.posts] == [_essence(p) for p in _offline(fixtures_dir, FF).posts]


def test_sheets_followed_once_each_and_characters_set(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    result = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    sheet_requests = [r.path for r in _page_log(local_forum) if r.path not in FF_PAGES]
    assert sorted(sheet_requests) == ["/?t=70000101", "/?t=70000102"]  # 13 links, two sheets, one GET each
    assert [(s.outcome, s.characters) for s in result.sheets] == [("ok", ("Hollow",)), ("ok", ("Quincy",))]
    registry = result.history.registry
    hollow = registry.characters["Hollow"]
    assert (hollow.stats["Forza"].base, hollow.stats["Forza"].bonus, hollow.resources["PV"].max) == (5, 1, 52)
    assert registry.techniques["Artigli Affilati"].potenziale == 12
    players = {p.author: p.character for p in result.history.posts if p.role == "player" and p.schema}
    assert players == {"Kurogane": "Hollow", "Seireitei_Ryo": "Quincy"}


def test_registry_file_wins_over_sheets(local_forum, local_fetcher, fixtures_dir, tmp_path):
    text = (fixtures_dir / "registry" / "hollow_vs_quincy.toml").read_text(encoding="utf-8")
    assert "pv_max = 52" in text
    path = tmp_path / "registro.toml"
    path.write_text(text.replace("pv_max = 52", "pv_max = 60", 1), encoding="utf-8")
    local_forum.load_forum(FF)
    history = scrape([local_forum.url(FF_PAGES[0])], fetcher=local_fetcher, registry_file=path)
    assert history.registry.characters["Hollow"].resources["PV"].max == 60
    assert str(path) in " ".join(history.registry.sources)


def test_missing_sheet_is_recorded_not_fatal(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    local_forum.remove_page("/?t=70000102")
    result = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    outcomes = {s.url.rsplit("=", 1)[1]: s.outcome for s in result.sheets}
    assert outcomes == {"70000101": "ok", "70000102": "missing"}
    assert "Quincy" not in result.history.registry.characters and len(result.history.posts) == 18


@pytest.mark.parametrize("status,outcome", [(403, "forbidden"), (401, "forbidden"), (410, "missing"),
                                            (400, "unavailable"), (451, "unavailable")])
def test_sheet_refused_for_good_is_recorded_not_fatal(status, outcome, local_forum, local_fetcher, sleeps):
    local_forum.load_forum(FF)
    local_forum.set_behaviour("/?t=70000102", statuses=[status] * 10)
    result = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    url = local_forum.url("/?t=70000102")
    records = {s.url.rsplit("=", 1)[1]: (s.outcome, s.characters, s.message) for s in result.sheets}
    assert records == {"70000101": ("ok", ("Hollow",), None),
                       "70000102": (outcome, (), f"il server ha risposto {status} per {url}")}
    assert "Quincy" not in result.history.registry.characters and len(result.history.posts) == 18
    assert sleeps == []  # a permanent refusal is not retried


@pytest.mark.parametrize("status", [408, 429, 500, 503])
def test_sheet_failing_for_a_transient_reason_fails_the_crawl(status, local_forum, local_fetcher):
    local_forum.load_forum(FF)
    local_forum.set_behaviour("/?t=70000102", statuses=[status] * 10)
    with pytest.raises(FetchFailed) as info:
        crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    assert info.value.status == status


def test_sheet_failing_for_good_fails_the_crawl(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    local_forum.set_behaviour("/?t=70000101", statuses=[503] * 10)
    with pytest.raises(FetchFailed) as info:
        crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    assert info.value.status == 503


def test_rescrape_of_an_unchanged_thread_costs_304s(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    first = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    local_forum.reset_log()
    again = rescrape(first, fetcher=local_fetcher)
    log = _page_log(local_forum)
    assert [r.path for r in log[:2]] == FF_PAGES
    assert all(r.conditional and r.status == 304 and r.bytes_sent == 0 for r in log)  # pages and sheets
    assert again.changed_pages == () and again.first_changed_page is None
    assert all(p.not_modified and p.from_cache for p in again.pages)
    assert [_essence(p) for p in again.history.posts] == [_essence(p) for p in first.history.posts]
    assert again.history.registry == first.history.registry


def _new_ff_post(page_bytes: bytes, new_id: str, text: str) -> bytes:
    last = re.findall(rb'<li class="post" id="ee\d+">.*?\n</li>\n', page_bytes, re.S)[-1]
    old_id = re.search(rb'id="ee(\d+)"', last).group(1)
    post = last.replace(old_id, new_id.encode())
    body = re.search(rb"\n(La freccia[^<]*)<br>", post)
    return post.replace(body.group(1), text.encode("cp1252"))


def test_new_post_on_the_last_page_is_picked_up(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    first = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    post = _new_ff_post(local_forum.page(FF_PAGES[1]), "600999", "Hollow si rialza e carica di nuovo.")
    local_forum.add_post(FF_PAGES[1], post, before=b'</ul>\n</div>\n<div class="pages Bottom">')
    local_forum.reset_log()
    again = rescrape(first, fetcher=local_fetcher)
    statuses = [(r.path, r.status) for r in _page_log(local_forum)][:2]
    assert statuses == [(FF_PAGES[0], 304), (FF_PAGES[1], 200)]
    assert again.changed_pages == (2,) and again.first_changed_page == 2
    assert [p.id for p in again.history.posts] == [p.id for p in first.history.posts] + ["600999"]
    assert "Hollow si rialza e carica di nuovo." in again.history.posts[-1].body


def test_rescrape_from_a_stored_history_uses_page_hashes(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    first = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    post = _new_ff_post(local_forum.page(FF_PAGES[1]), "600998", "Il Quincy cade.")
    local_forum.add_post(FF_PAGES[1], post, before=b'</ul>\n</div>\n<div class="pages Bottom">')
    # a new fetcher with an empty cache: every page answers 200, the stored hashes tell what changed
    fresh = Fetcher(replace(local_fetcher.policy, cache_dir=None))
    again = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=fresh, previous=first.page_hashes)
    assert [p.not_modified for p in again.pages] == [False, False]
    assert again.changed_pages == (2,)


def test_a_page_that_appears_later_is_found_from_the_last_page(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    first = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher, follow_sheets=False)
    page2 = local_forum.page(FF_PAGES[1])
    link3 = b'<li><a href="/?t=62345678&amp;st=30" title="Pagina 3">3</a></li>'
    page3 = re.sub(rb'id="(ee|entry)6002(\d)0"', rb'id="\g<1>6003\g<2>0"', page2)
    page3 = page3.replace(b'<li class="current"><span>2</span></li>',
                          b'<li><a href="/?t=62345678&amp;st=15" title="Pagina 2">2</a></li>'
                          b'<li class="current"><span>3</span></li>')
    local_forum.set_page("/?t=62345678&st=30", page3, content_type="text/html; charset=iso-8859-1")
    # only page 2 learns about page 3; page 1 stays as it was (and answers 304)
    local_forum.replace_in_page(FF_PAGES[1], b'<li class="current"><span>2</span></li>',
                                 b'<li class="current"><span>2</span></li>' + link3)
    local_forum.reset_log()
    again = rescrape(first, fetcher=local_fetcher, follow_sheets=False)
    assert [(r.path, r.status) for r in _page_log(local_forum)] == [
        (FF_PAGES[0], 304), (FF_PAGES[1], 200), ("/?t=62345678&st=30", 200)]
    assert [p.index for p in again.pages] == [1, 2, 3] and again.changed_pages == (2, 3)
    new_ids = [p.id for p in again.history.posts if p.id.startswith("6003")]
    assert new_ids and again.history.posts[-1].page == 3


def test_a_failed_page_fails_the_whole_crawl(local_forum, local_fetcher, sleeps):
    local_forum.load_forum(FF)
    local_forum.set_behaviour(FF_PAGES[1], statuses=[500] * 10)
    with pytest.raises(FetchFailed) as info:
        scrape([local_forum.url(FF_PAGES[0])], fetcher=local_fetcher)
    assert info.value.status == 500 and len(sleeps) == 3


def test_500_then_success_during_a_crawl(local_forum, local_fetcher, fixtures_dir, sleeps):
    local_forum.load_forum(FF)
    local_forum.set_behaviour(FF_PAGES[1], statuses=[500])
    history = scrape([local_forum.url(FF_PAGES[0])], fetcher=local_fetcher, follow_sheets=False)
    assert sleeps == [0.5]
    assert [_essence(p) for p in history.posts] == [_essence(p) for p in _offline(fixtures_dir, FF).posts]


def test_a_page_of_another_thread_is_refused(local_forum, local_fetcher):
    local_forum.load_forum(FF)
    local_forum.set_behaviour(FF_PAGES[1], redirect="/?t=63000001")
    with pytest.raises(NotAThread):
        scrape([local_forum.url(FF_PAGES[0])], fetcher=local_fetcher, follow_sheets=False)


def test_saved_pages_in_any_order_use_their_canonical_url(fixtures_dir):
    folder = fixtures_dir / "forumotion" / "phpbb3"
    result = crawl_thread([str(folder / "t87p20.html"), str(folder / "t87p0.html")])
    assert [p.index for p in result.pages] == [1, 2]
    assert result.pages[0].url == "https://arena-shinigami.forumattivo.com/t87-arena-di-karakura-hollow-vs-quincy"
    assert result.sheets == ()  # offline: no sheet fetched
    expected = _offline(fixtures_dir, "arena-shinigami.forumattivo.com")
    assert result.history.posts == expected.posts and result.history.thread.host == expected.thread.host


def test_saved_pages_that_do_not_say_their_number_keep_the_given_order(fixtures_dir):
    folder = fixtures_dir / "forumfree"
    result = crawl_thread([str(folder / "topic_62345678_st0.html"), str(folder / "topic_62345678_st15.html")])
    assert [p.index for p in result.pages] == [1, 2]
    expected = _offline(fixtures_dir, FF)
    assert [(p.id, p.author, p.body, p.rolls) for p in result.history.posts] == \
        [(p.id, p.author, p.body, p.rolls) for p in expected.posts]


def test_saved_page_url_sniffing():
    from scraper.crawl import saved_page_url

    assert saved_page_url(b"<!-- saved from url=(0040)https://gdr.forumfree.it/?t=5&st=15 -->\n<html>") == \
        "https://gdr.forumfree.it/?t=5&st=15"
    assert saved_page_url(b'<head><link href="https://x.forumattivo.com/t1p15-a" rel="canonical"></head>') == \
        "https://x.forumattivo.com/t1p15-a"
    assert saved_page_url(b"<meta property='og:url' content='https://f.it/viewtopic.php?t=3&amp;start=10'>") == \
        "https://f.it/viewtopic.php?t=3&start=10"
    assert saved_page_url(b'<link rel="canonical" href="javascript:alert(1)">') is None
    assert saved_page_url(b"<html><body>niente</body></html>") is None


def test_saved_api_json_pages(fixtures_dir):
    files = sorted((fixtures_dir / "forumfree").glob("api_62345678_st*.json"))
    history = scrape([str(f) for f in files])
    html = _offline(fixtures_dir, FF)
    assert [p.id for p in history.posts] == [p.id for p in html.posts]


def test_saved_pages_with_a_registry_file(fixtures_dir):
    history = scrape([str(fixtures_dir / "forumfree" / "topic_62345678_st0.html")],
                     registry_file=fixtures_dir / "registry" / "hollow_vs_quincy.toml")
    assert set(history.registry.characters) >= {"Hollow", "Quincy"}


@pytest.mark.parametrize("sources,match", [
    ([], "nessuna sorgente"),
    (["/non/esiste.html"], "file non trovato"),
    (["http://127.0.0.1/?t=1", "pagina.html"], "mescolare"),
    (["http://127.0.0.1/?t=1", "http://127.0.0.1/?t=2"], "una discussione alla volta"),
])
def test_bad_sources_are_named(sources, match):
    with pytest.raises(BadSource, match=match) as info:
        scrape(sources)
    # a missing file is a BadSource too, with the code every command gives a missing file
    assert info.value.code == ("not_found" if match == "file non trovato" else "bad_source")


@pytest.mark.parametrize("name", ["forumfree/topic_62345678_st0.html", "forumotion/phpbb3/t87p0.html"])
def test_the_same_page_twice_is_read_once_and_said(fixtures_dir, name):
    """The same saved page given twice is read once, as the API reads `pages` (one behaviour, issue #15), and the
    history says so."""
    page = str(fixtures_dir / name)
    twice, once = scrape([page, page]), scrape([page])
    assert twice.posts == once.posts
    assert twice.thread.problems == (f"pagina 1: data 2 volte ({page}, {page}), letta una volta",)


def test_missing_registry_file_is_named(fixtures_dir, tmp_path):
    with pytest.raises(BadSource, match="registro"):
        scrape([str(fixtures_dir / "forumfree" / "topic_62345678_st0.html")], registry_file=tmp_path / "no.toml")


def test_http_charset_wins_over_a_stale_meta(local_forum, local_fetcher):
    # an iso-8859-15 page whose <meta> wrongly says utf-8, with "€" written in it: byte A4, which a reader
    # trusting the meta would turn into "¤" (a stray byte read as windows-1252); the HTTP header is right and wins
    # changed 2026-12-01: was a windows-1252 header with "Ã©" (C3 A9) kept literal; the documented repair
    # (docs/fetching.md, now the parser's too) reads a UTF-8 sequence in a 1252 page as UTF-8, so for UTF-8 vs
    # 1252 both readings agree: an encoding whose bytes differ from 1252 shows which label won
    local_forum.load_forum(FF)
    body = local_forum.page(FF_PAGES[1])
    meta = b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    assert meta in body
    body = body.replace(meta, b'<meta charset="utf-8">').replace(b"La freccia", "€ La freccia".encode("iso-8859-15"))
    local_forum.set_page(FF_PAGES[1], body, content_type="text/html; charset=iso-8859-15")
    history = scrape([local_forum.url(FF_PAGES[0])], fetcher=local_fetcher, follow_sheets=False)
    (post,) = [p for p in history.posts if p.page == 2 and "La freccia" in p.body]
    assert "€ La freccia è troppo veloce" in post.body


def test_forumfree_thread_through_api_php(local_forum, local_fetcher, fixtures_dir):
    local_forum.load_forum(FF)
    result = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher, use_api=True, follow_sheets=False)
    paths = [r.path for r in _page_log(local_forum)]
    assert paths == ["/api.php?t=62345678&st=0", "/api.php?t=62345678&st=15"]
    html = _offline(fixtures_dir, FF)
    assert [(p.id, p.author, p.rolls) for p in result.history.posts] == [(p.id, p.author, p.rolls) for p in html.posts]
    # the history names the thread as readers open it, and a refresh from the history alone reads the JSON again
    assert result.history.thread.url == local_forum.url("/?t=62345678")
    local_forum.reset_log()
    again = rescrape(result.history, fetcher=local_fetcher, follow_sheets=False)
    assert [r.path for r in _page_log(local_forum)] == paths
    assert [p.id for p in again.history.posts] == [p.id for p in result.history.posts]


def test_api_php_only_for_forumfree_urls(local_fetcher):
    with pytest.raises(BadSource, match="api.php"):
        scrape(["http://127.0.0.1/t87-arena"], fetcher=local_fetcher, use_api=True)


def test_each_page_is_parsed_once(local_forum, local_fetcher, fixtures_dir, monkeypatch, tmp_path):
    """The crawl reads every page as it arrives and builds the history from those readings: parsing a page is
    the costly step, and a second parse with the registry would double it for nothing."""
    import scraper.parse as parse_mod

    calls: list[str] = []
    real = parse_mod.parse_page

    def counting(data, url, **kw):
        calls.append(url)
        return real(data, url, **kw)

    monkeypatch.setattr(parse_mod, "parse_page", counting)
    local_forum.load_forum(FF)
    history = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher).history
    # changed 2026-12-01: a sheet that is a thread post is read once by parse_page too (its author is the player)
    sheets = [u for u in calls if "7000010" in u]
    assert sheets == [local_forum.url("/?t=70000102")]  # the phpBB sheet; the ForumFree one names its player
    assert len([u for u in calls if u not in sheets]) == len(FF_PAGES) == history.thread.pages
    # same history as the offline parse of the same pages, characters from the sheets included
    offline = _offline(fixtures_dir, FF)
    assert [_essence(p)[:3] for p in history.posts] == [_essence(p)[:3] for p in offline.posts]
    assert {p.character for p in history.posts} == {p.character for p in offline.posts}
    # saved files too: one parse each
    calls.clear()
    files = []
    for e in sorted((e for e in _manifest(fixtures_dir) if FF in e["url"] and e["kind"] == "html"
                                  and e.get("story")), key=lambda e: e["page"]):
        files.append(fixtures_dir / e["path"])
    scrape([str(f) for f in files], saved_at="2026-11-09T12:00:00+01:00")
    assert len(calls) == len(files)


@pytest.mark.parametrize("link", ["https://www.example.com/index.php?st=3000",                 # was 601 pages
                                  "https://santuario-gdr.forumfree.it/?t=61234567&amp;st=45",   # was 10 pages
                                  "https://www.example.com/watch?v=x&amp;st=999999999999"])     # was MemoryError
def test_a_link_in_a_post_does_not_change_the_pages_crawled(link, local_forum, local_fetcher, fixtures_dir):
    local_forum.load_forum("santuario-gdr.forumfree.it")
    body = local_forum.page("/?t=64600001")
    i = body.index(b'class="color">') + len(b'class="color">')
    i = body.index(b"<td", i)
    j = body.index(b">", i) + 1
    local_forum.set_page("/?t=64600001", body[:j] + f'Regolamento: <a href="{link}">qui</a><br>'.encode() + body[j:])
    local_forum.reset_log()
    history = crawl_thread(local_forum.url("/?t=64600001"), fetcher=local_fetcher, follow_sheets=False).history
    assert (history.thread.pages, history.thread.pages_read) == (3, (1, 2, 3))
    assert [r.path for r in _page_log(local_forum)] == ["/?t=64600001", "/?t=64600001&st=5", "/?t=64600001&st=10"]
    assert [p.id for p in history.posts] == [p.id for p in _offline(fixtures_dir, "santuario-gdr.forumfree.it").posts]


@pytest.mark.parametrize("ctype", ["text/html; charset=iso-8859-1", "text/html"])
def test_cp1252_page_with_pasted_utf8_over_http(ctype, local_forum, local_fetcher, fixtures_dir):
    # no <meta>: a windows-1252 page (labelled iso-8859-1 by HTTP, or not at all) where "perché" was pasted as UTF-8
    local_forum.load_forum("forum.cavalieri-gdr.it")
    text = (fixtures_dir / "phpbb/viewtopic_t606_start0.html").read_text(encoding="utf-8").replace('<meta charset="utf-8">', "")
    at = text.index('<div class="content">') + len('<div class="content">')
    text = text[:at] + "<p>Prova: perch\x00 e citt\x01</p>" + text[at:]
    body = text.encode("cp1252").replace(b"perch\x00", "perché".encode("utf-8")).replace(b"citt\x01", "città".encode("cp1252"))
    local_forum.set_page("/viewtopic.php?t=606", body, content_type=ctype)
    result = crawl_thread(local_forum.url("/viewtopic.php?t=606"), fetcher=local_fetcher, follow_sheets=False)
    first = result.history.posts[0]
    assert first.body.startswith("Prova: perché e città\nPersonaggio: Elettra")
    assert not any(bad in p.body for p in result.history.posts for bad in ("Ã", "\ufffd", "ŕ", "č"))


def test_sheet_url_variants_are_one_sheet_fetched_once(local_forum, local_fetcher):
    # review: `&st=0`, `/index.php?showtopic=` vs `/?t=`, a trailing `#entry` each cost another GET of the sheet
    local_forum.load_forum(FF)
    real = f"https://{FF}"  # the pages keep the forum's links; the server rewrites them to itself when serving
    local_forum.replace_in_page(FF_PAGES[0], f'href="{real}/?t=70000101"', f'href="{real}/?t=70000101&amp;st=0"')
    local_forum.replace_in_page(FF_PAGES[0], f'href="{real}/?t=70000102"', f'href="{real}/?t=70000102#entry77"')
    local_forum.replace_in_page(FF_PAGES[1], f'href="{real}/?t=70000101"',
                                f'href="{real}/index.php?showtopic=70000101#entry5"')
    local_forum.replace_in_page(FF_PAGES[1], f'href="{real}/?t=70000102"', f'href="{real}/index.php?t=70000102"')
    result = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    assert sorted(r.path for r in _page_log(local_forum) if r.path not in FF_PAGES) == ["/?t=70000101",
                                                                                       "/?t=70000102"]
    assert [(s.url, s.outcome, s.characters) for s in result.sheets] == [
        (local_forum.url("/?t=70000101"), "ok", ("Hollow",)), (local_forum.url("/?t=70000102"), "ok", ("Quincy",))]


def test_sheet_on_another_port_of_the_same_hostname_is_another_host(local_forum, local_fetcher, fixtures_dir):
    from tests.forumserver import ForumServer

    local_forum.load_forum(FF)
    with ForumServer(fixtures_dir) as other:
        other.set_page("/?t=70000101", fixtures_dir / "sheets" / "hollow.html", content_type="text/html; charset=utf-8")
        other_url = other.url("/?t=70000101")
        for page in FF_PAGES:
            local_forum.replace_in_page(page, f'href="https://{FF}/?t=70000101"', f'href="{other_url}"')
        # and a sheet that redirects there: fetched (the fetcher allows 127.0.0.1), but not read
        local_forum.set_behaviour("/?t=70000102", redirect=other_url)
        result = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
        assert [r.path for r in other.requests_log if r.path != "/robots.txt"] == ["/?t=70000101"]  # the redirect
    assert [(s.url, s.outcome, s.characters, s.message) for s in result.sheets] == [
        (other_url, "other_host", (), "scheda su un altro host: non seguita"),
        (local_forum.url("/?t=70000102"), "other_host", (),
         f"la scheda rimanda a un altro host ({other_url}): non letta")]
    assert result.history.registry.characters == {}


def test_sheet_charset_from_http_and_too_deep_sheet(local_forum, local_fetcher, fixtures_dir):
    # review: the sheet's bytes ignored the HTTP charset; a sheet nested beyond the reader's limit must be named
    # (PageTooDeep) and recorded, and the crawl go on
    local_forum.load_forum(FF)
    text = (fixtures_dir / "sheets" / "hollow.html").read_text(encoding="utf-8")
    assert "Sonìdo" in text and '<meta charset="utf-8">' in text and "<i>Descrizione:</i> Lunghi" in text
    # iso-8859-15 bytes under a stale utf-8 <meta>: "€" is byte A4, which the meta's reading turns into "¤"
    latin = text.replace("<i>Descrizione:</i> Lunghi", "<i>Descrizione:</i> € Lunghi").encode("iso-8859-15", "xmlcharrefreplace")
    local_forum.set_page("/?t=70000101", latin, content_type="text/html; charset=iso-8859-15")
    deep = text.replace("</body>", "<div>" * 3000 + "</div>" * 3000 + "</body>").encode("utf-8")
    local_forum.set_page("/?t=70000102", deep, content_type="text/html; charset=utf-8")
    result = crawl_thread(local_forum.url(FF_PAGES[0]), fetcher=local_fetcher)
    assert [(s.outcome, s.characters) for s in result.sheets] == [("ok", ("Hollow",)), ("unreadable", ())]
    assert result.sheets[1].message.startswith("pagina annidata troppo in profondità")
    techniques = result.history.registry.techniques
    assert "Sonìdo" in techniques and techniques["Artigli Affilati"].extra["effetto"].startswith("€ Lunghi")
    assert len(result.history.posts) == 18


# --- a thread read from the link of a POST (what users paste), on any of its pages ------------------------

POST_LINKS = [  # host, fixture page the post is on, post link path, the other pages fetched after it (in order)
    ("forum.cavalieri-gdr.it", "phpbb/viewtopic_t606_start5.html", "/viewtopic.php?p=910180",
     ["/viewtopic.php?t=606", "/viewtopic.php?t=606&start=10"]),
    ("forum.cavalieri-gdr.it", "phpbb/viewtopic_t606_start10.html", "/viewtopic.php?p=910230",
     ["/viewtopic.php?t=606", "/viewtopic.php?t=606&start=5"]),
    ("forum.karakura-gdr.it", "phpbb/viewtopic_t312_start15.html", "/viewtopic.php?p=600270",
     ["/viewtopic.php?t=312"]),
    ("forum.torre-di-vetro.it", "phpbb/viewtopic_t505_start0.html", "/viewtopic.php?p=900140",
     ["/viewtopic.php?t=505&start=6"]),
    ("santuario-gdr.forumfree.it", "forumfree/topic_64600001_st5.html", "/?t=64600001&view=findpost&p=910180",
     ["/?t=64600001", "/?t=64600001&st=10"]),
    ("santuario-gdr.forumfree.it", "forumfree/topic_64600001_st5.html", "/?act=findpost&pid=910180",
     ["/?t=64600001", "/?t=64600001&st=10"]),
    ("torre-gdr.forumfree.it", "forumfree/topic_64500001_st6.html", "/?t=64500001&view=findpost&p=900190",
     ["/?t=64500001"]),
    ("santuario.forumattivo.com", "forumotion/phpbb2/t166p10.html", "/post910190",
     ["/t166-santuario-elettra-vs-orione", "/t166p5-santuario-elettra-vs-orione",
      "/t166p15-santuario-elettra-vs-orione"]),
]


@pytest.mark.parametrize("host, path, link, others", POST_LINKS)
def test_a_post_link_reads_the_whole_thread_every_page_once(host, path, link, others, local_forum, local_fetcher,
                                                            fixtures_dir):
    # the forum serves the post's page at the post link itself (phpBB viewtopic.php?p=, a findpost page)
    local_forum.load_forum(host)
    local_forum.set_page(link, fixtures_dir / path, content_type="text/html; charset=utf-8")
    result = crawl_thread(local_forum.url(link), fetcher=local_fetcher, follow_sheets=False)
    assert [r.path for r in _page_log(local_forum)] == [link] + others
    expected = _offline(fixtures_dir, host)
    history = result.history
    n = len(others) + 1
    assert (history.thread.pages, history.thread.pages_read) == (n, tuple(range(1, n + 1)))
    assert [_essence(p) for p in history.posts] == [_essence(p) for p in expected.posts]
    origin = local_forum.base_url
    assert [p.url.replace(origin, "") for p in history.posts] == [
        p.url.replace(f"https://{host}", "") for p in expected.posts]
    assert [p.index for p in result.pages] == list(range(1, n + 1))


def test_a_forumotion_post_link_redirected_to_its_page(local_forum, local_fetcher, fixtures_dir):
    # Forumotion answers /post<id> with a redirect to /t<tid>p<offset>-slug#<id>
    host = "santuario.forumattivo.com"
    local_forum.load_forum(host)
    local_forum.set_behaviour("/post910160", redirect="/t166p5-santuario-elettra-vs-orione#910160")
    result = crawl_thread(local_forum.url("/post910160"), fetcher=local_fetcher, follow_sheets=False)
    assert [r.path for r in _page_log(local_forum)] == [
        "/post910160", "/t166p5-santuario-elettra-vs-orione", "/t166-santuario-elettra-vs-orione",
        "/t166p10-santuario-elettra-vs-orione", "/t166p15-santuario-elettra-vs-orione"]
    assert [_essence(p) for p in result.history.posts] == [_essence(p) for p in _offline(fixtures_dir, host).posts]
