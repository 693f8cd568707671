"""The userscript against the real service: Chromium on a fixture forum served by tests/forumserver.py, GM
requests going over real HTTP to the Flask app on waitress, which scrapes that forum and replays the fight."""
from __future__ import annotations

import collections
import json
import urllib.parse

import pytest
import requests

from tests.plugins.browser import wait_done

from scraper.policy import default_user_agent

pytestmark = pytest.mark.browser


# (forum host, path of the thread's last page on that forum, platform/skin key for the screenshot): every platform
# and skin of fixtures/manifest.json
THREADS = [
    ("bleach-gdr.forumfree.it", "/?t=62345678&st=15", "forumfree"),
    ("tempio-antico.forumcommunity.net", "/?t=61110022", "forumfree-classic"),
    ("arena-shinigami.forumattivo.com", "/t87p20-arena-di-karakura-hollow-vs-quincy", "forumotion-phpbb3"),
    ("tempio-kenshi.forumattivo.com", "/t42p5-duello-al-tempio-kenshi-vs-mizuki", "forumotion-phpbb2"),
    ("ninja-gdr.forumattivo.it", "/t42p5-duello-al-tempio-kenshi-vs-mizuki", "forumotion-invision"),
    ("forum.karakura-gdr.it", "/viewtopic.php?t=312&start=15", "phpbb"),
]

SEVERITY_KEYS = {"error": "errors", "warning": "warnings"}


@pytest.fixture()
def live_service(tmp_path):
    from server.app import create_app
    from tests.plugins.server import LiveServer

    app = create_app({
        "database": str(tmp_path / "arbitro.sqlite3"), "cache_dir": str(tmp_path / "cache"),
        "default_ruleset": "guida", "allowed_hosts": ["127.0.0.1"], "private_allowlist": ["127.0.0.1:*"],
        "fetch_min_interval": 0.0, "fetch_retries": 0, "obey_robots": False, "follow_sheets": True,
        "secret_key": "prova-userscript",
    })
    srv = LiveServer(app).start()
    yield srv
    srv.stop()
    app.extensions["arbitro"].close()


@pytest.fixture()
def live_forum(fixtures_dir):
    from tests.forumserver import ForumServer

    servers = []

    def make(host: str):
        srv = ForumServer(fixtures_dir)
        srv.start()
        srv.load_forum(host)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()


def _no_page_scripts(route):
    # The fixture pages carry hostile posts a careless forum lets through: the forum's own scripts stay off.
    resp = route.fetch()
    route.fulfill(response=resp, headers={**resp.headers, "content-security-policy": "script-src 'unsafe-eval'"})


def _drawn(pg, timeout: float = 60000) -> None:
    """The full audit drawn (a first view may show the provisional page before it: outcome "provisional")."""
    pg.wait_for_function("window.__arbitroDone && window.__arbitroDone.includes('drawn')", timeout=timeout)
    assert set(pg.evaluate("window.__arbitroDone")) <= {"provisional", "drawn"}


def _thread_url_asked(gm) -> str:
    """The request of the page view: GET /api/v1/threads?url=…&create=1, and on a first view that takes longer than
    the userscript waits, the open page's provisional audit beside it. Returns the thread URL the GET named."""
    methods = [r["method"] for r in gm.http_log]
    assert methods in (["GET"], ["GET", "POST"]), gm.http_log
    if methods == ["GET", "POST"]:
        assert gm.http_log[1]["url"].endswith("/api/v1/threads/provisional")
    parts = urllib.parse.urlsplit(gm.http_log[0]["url"])
    query = dict(urllib.parse.parse_qsl(parts.query))
    assert parts.path == "/api/v1/threads" and query["create"] == "1"
    return query["url"]


def _expected_badges(pg, audit) -> dict:
    on_page = pg.evaluate("""() => [...document.querySelectorAll('[id]')].map(e => e.id)""")
    page_ids = {i[2:] if i.startswith("ee") else i[1:] for i in on_page if i[:2] == "ee" or i[:1] == "p"}
    page_ids |= set(pg.evaluate("""() => [...document.querySelectorAll('a[name^=entry]')].map(a => a.name.slice(5))"""))
    expected = {}
    for post in audit["posts"]:
        if post["id"] not in page_ids:
            continue
        c = collections.Counter(v["severity"] for v in post["verdicts"])
        rulings = sum(1 for v in post["verdicts"] if "ruling" in v["code"] and v["severity"] == "info")
        expected[post["id"]] = (c["error"], c["warning"], rulings)
    return expected


def _badges(pg) -> dict:
    return {r[0]: tuple(r[1:]) for r in pg.locator("arbitro-badge").evaluate_all(
        "els => els.map(e => [e.dataset.post, +e.dataset.errors, +e.dataset.warnings, +e.dataset.rulings])")}


@pytest.mark.parametrize("host,path,key", THREADS, ids=[t[2] for t in THREADS])
def test_overlay_from_the_real_service(host, path, key, live_service, live_forum, gm_factory, build_dir):
    forum = live_forum(host)
    gm = gm_factory(live_service.url)
    gm.context.route(forum.url("/") + "**", _no_page_scripts)
    pg = gm.new_page()
    pg.goto(forum.url(path))
    _drawn(pg)

    # first view of an unknown thread: one request, which creates the audit (and the provisional page if slow)
    thread_url = _thread_url_asked(gm)
    r = requests.get(f"{live_service.url}/api/v1/threads", params={"url": thread_url}, timeout=30)
    assert r.status_code == 200, r.text[:300]
    audit = r.json()["audit"]

    expected = _expected_badges(pg, audit)
    assert expected, "the audit has no post of this page"
    assert _badges(pg) == expected

    # the tooltip of a post with errors shows the service's words
    worst = next((p for p in audit["posts"] if p["id"] in expected and expected[p["id"]][0]), None)
    if worst:
        pg.evaluate("pid => document.querySelector(`arbitro-badge[data-post='${pid}']`).scrollIntoView({block: 'start'})",
                    worst["id"])
        pg.hover(f"arbitro-badge[data-post='{worst['id']}'] .badge")
        tip = pg.locator("arbitro-layer .tip")
        tip.wait_for(state="visible")
        first_error = next(v for v in worst["verdicts"] if v["severity"] == "error")
        assert first_error["message"] in tip.inner_text()

    # this is the last page: the "Tocca a" panel with the service's next character and its dice tags
    nxt = audit["next"]
    if nxt.get("character"):
        assert f"Tocca a {nxt['character']}" in pg.locator("arbitro-layer .turn").inner_text()
        tags = [d["tag"] for d in (nxt.get("dice_tags") or []) + (nxt.get("dice") or []) if d.get("tag")]
        assert pg.locator("arbitro-layer .dice code").all_inner_texts() == tags
    href = pg.locator("arbitro-layer [data-action=report]").get_attribute("href")
    assert href == f"{live_service.url}/audit?url={urllib.parse.quote(thread_url, safe='')}"

    (build_dir / "screenshots").mkdir(exist_ok=True)
    pg.screenshot(path=str(build_dir / "screenshots" / f"userscript-live-{key}.png"), full_page=True)
    assert gm.dialogs == []

    # the next view of the thread is answered from the service's store: still one request, the forum not asked
    forum.reset_log()
    gm.http_log.clear()
    pg2 = gm.new_page()
    pg2.goto(forum.url(path))
    assert wait_done(pg2, timeout=60000) == "drawn"
    assert [r["method"] for r in gm.http_log] == ["GET"]  # a stored audit answers before any provisional page
    assert _thread_url_asked(gm) == thread_url
    crawler = default_user_agent()
    assert [e.path for e in forum.requests_log if e.user_agent == crawler] == []


def test_legacy_gm_functions_only(live_service, live_forum, gm_factory, build_dir):
    """An older manager: GM_xmlhttpRequest/GM_getValue/GM_setValue/GM_registerMenuCommand, no GM object."""
    host, path, key = THREADS[-1]
    forum = live_forum(host)
    gm = gm_factory(live_service.url, legacy=True)
    gm.context.route(forum.url("/") + "**", _no_page_scripts)
    pg = gm.new_page()
    pg.goto(forum.url(path))
    assert pg.evaluate("typeof window.GM") == "undefined"
    _drawn(pg)
    thread_url = _thread_url_asked(gm)
    audit = requests.get(f"{live_service.url}/api/v1/threads", params={"url": thread_url}, timeout=30).json()["audit"]
    assert _badges(pg) == _expected_badges(pg, audit)
    assert pg.evaluate("window.__arbitroMenu.map(m => m.label)") == [
        "Arbitro: impostazioni", "Arbitro: attiva/disattiva su questo forum"]
    (build_dir / "screenshots").mkdir(exist_ok=True)
    pg.screenshot(path=str(build_dir / "screenshots" / f"userscript-live-legacy-gm-{key}.png"), full_page=True)
    # settings go through GM_setValue: switching the overlay off here is stored and honoured
    pg.evaluate("window.__arbitroMenu[1].fn()")
    pg.wait_for_function("window.__arbitroDone.at(-1) === 'disabled'", timeout=30000)
    assert "settings" in gm.store and pg.locator("arbitro-badge").count() == 0


def test_an_unseen_thread_shows_the_provisional_page_at_once_then_the_full_audit(tmp_path, live_forum, gm_factory):
    """The first reader of a thread the service is still crawling (page 1 is slow): the open page's provisional
    audit is drawn at once from its posts' markup, then the full audit replaces it without a reload (issue #16)."""
    from server.app import create_app
    from tests.plugins.server import LiveServer

    app = create_app({
        "database": str(tmp_path / "arbitro.sqlite3"), "cache_dir": str(tmp_path / "cache"),
        "default_ruleset": "guida", "allowed_hosts": ["127.0.0.1"], "private_allowlist": ["127.0.0.1:*"],
        "fetch_min_interval": 0.0, "fetch_retries": 0, "obey_robots": False, "follow_sheets": False,
        "secret_key": "prova-provvisorio", "create_wait": 0.2,
    })
    service = LiveServer(app).start()
    try:
        host, path = THREADS[0][0], "/?t=62345678"
        forum = live_forum(host)
        forum.set_behaviour("/?t=62345678&st=15", slow=3.0)  # the crawl's second page; the reader has page 1 open
        gm = gm_factory(service.url)
        gm.context.route(forum.url("/") + "**", _no_page_scripts)
        pg = gm.new_page()
        pg.goto(forum.url(path))
        assert wait_done(pg, timeout=30000) == "provisional"
        assert pg.locator("arbitro-layer").get_attribute("data-provisional") == "1"
        assert pg.locator("arbitro-layer section.status").inner_text().startswith("provvisorio — analisi completa in corso (pagina 1")
        assert pg.locator("arbitro-badge").count() >= 1
        [post] = [r for r in gm.http_log if r["method"] == "POST"]
        assert post["url"] == f"{service.url}/api/v1/threads/provisional"
        sent = json.loads(post["data"])
        assert set(sent) == {"url", "posts"} and len(sent["posts"]) == 15
        for markup in sent["posts"]:
            assert markup.startswith("<li") and not any(t in markup for t in ("<form", "<script", "<input", "<textarea"))
        assert "_userdata" not in post["data"]
        # the full audit follows on its own, and replaces the provisional one
        pg.wait_for_function("window.__arbitroDone.includes('drawn')", timeout=60000)
        assert pg.locator("arbitro-layer").get_attribute("data-provisional") is None
        thread_url = next(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(r["url"]).query))["url"]
                          for r in gm.http_log if r["method"] == "GET")
        audit = requests.get(f"{service.url}/api/v1/threads", params={"url": thread_url}, timeout=30).json()["audit"]
        assert _badges(pg) == _expected_badges(pg, audit)
        assert [r["method"] for r in gm.http_log].count("POST") == 1  # asked once per page view
    finally:
        service.stop()
        app.extensions["arbitro"].close()
