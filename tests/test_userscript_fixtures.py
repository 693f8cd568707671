"""The userscript on the shared fixture pages (fixtures/, the scraper's test pages) served over HTTP by the local
fixture forum (tests/forumserver.py) under the platforms' URL schemes: it finds the same posts, by the same ids."""
from __future__ import annotations

import urllib.parse

import pytest

from tests.plugins.browser import (
    canonical_thread_url, fixture_audit, fixture_fight_pages, fixture_posts, wait_done,
)

pytestmark = pytest.mark.browser

FIXTURES = __import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures"
PAGES = fixture_fight_pages(FIXTURES)


def no_page_scripts(route):
    """The fixture pages carry hostile posts a careless forum would let through (<script>, onerror): they are
    the forum's own page, not ours, so its scripts are switched off by CSP; the overlay needs none of them."""
    resp = route.fetch()
    route.fulfill(response=resp, headers={**resp.headers, "content-security-policy": "script-src 'unsafe-eval'"})


@pytest.fixture()
def fixture_forum(fixtures_dir):
    """fixture_forum(host) -> the local forum server playing that forum host (one server per host)."""
    from tests.forumserver import ForumServer

    servers = []

    def make(host: str):
        srv = ForumServer(fixtures_dir)
        srv.start()
        servers.append(srv)
        srv.load_forum(host)
        return srv

    yield make
    for srv in servers:
        srv.stop()


@pytest.mark.parametrize("entry", PAGES, ids=lambda e: e["path"])
def test_fixture_page(entry, fixture_forum, gm, canned_service, fixtures_dir):
    parts = urllib.parse.urlsplit(entry["url"])
    forum = fixture_forum(parts.hostname)
    local = forum.url(parts.path + (f"?{parts.query}" if parts.query else ""))
    posts = fixture_posts((fixtures_dir / entry["path"]).read_bytes(), entry["platform"], entry["skin"])
    assert posts  # a last page may hold a single post or two
    thread = canonical_thread_url(local, entry["platform"])
    audit = fixture_audit(posts, thread, entry["platform"])
    canned_service.stored[thread] = audit

    gm.context.route(forum.url("/") + "**", no_page_scripts)
    pg = gm.new_page()
    pg.goto(local)
    assert wait_done(pg) == "drawn"
    assert canned_service.api_calls()[0]["query"]["url"] == thread

    players = [p for p in posts if not p.dice_post]
    want = {}
    for i, p in enumerate(players):
        sev = {1: "error", 2: "warning", 3: "ruling"}.get(i, "ok")
        want[p.id] = sev
    got = dict(pg.locator("arbitro-badge").evaluate_all("els => els.map(e => [e.dataset.post, e.dataset.severity])"))
    assert got == want  # the Game Master's dice posts get none: they belong to the post before them

    # every badge right after its author's name
    for p in players:
        prev = pg.evaluate("pid => { const b = document.querySelector(`arbitro-badge[data-post='${pid}']`);"
                           " return b.previousSibling ? b.previousSibling.textContent.trim() : null; }", p.id)
        assert prev == p.author, p.id

    # the roll verdict marks the post's first roll (for Forumotion, in the Game Master's post after it)
    marks = pg.locator("arbitro-mark").evaluate_all("els => els.map(e => [e.dataset.post, +e.dataset.roll])")
    assert marks == ([[players[1].id, 0]] if players[1].has_roll else [])
    if players[1].has_roll:
        inside = pg.evaluate("""pid => { const m = document.querySelector(`arbitro-mark[data-post='${pid}']`);
            const post = m.closest('[id^=p], [id^=ee], table.maintable'); return post ? post.id || 'table' : null; }""",
                             players[1].id)
        if entry["platform"] == "forumotion":
            dice = posts[posts.index(players[1]) + 1]
            assert dice.dice_post and inside == f"p{dice.id}"
        elif entry["skin"] == "ff-current":
            assert inside == f"ee{players[1].id}"

    pg.hover(f"arbitro-badge[data-post='{players[1].id}'] .badge")
    tip = pg.locator("arbitro-layer .tip")
    tip.wait_for(state="visible")
    assert "Dado sbagliato per l'azione." in tip.inner_text() and "atteso: 1d12 · trovato: 1d20" in tip.inner_text()
    assert pg.evaluate("window.__pwned") is None


MEASURE = """() => [...document.querySelectorAll('[id], .post, table, a, img, .dice_roll, .dicebox, textarea')]
    .filter(e => !e.closest('[data-arbitro]'))
    .map(e => { const r = e.getBoundingClientRect(); return [e.tagName, e.id, r.x, r.y, r.width, r.height]; })"""


@pytest.mark.parametrize("entry", PAGES, ids=lambda e: e["path"])
def test_fixture_page_no_layout_shift(entry, fixture_forum, gm_factory, canned_service, fixtures_dir):
    parts = urllib.parse.urlsplit(entry["url"])
    forum = fixture_forum(parts.hostname)
    local = forum.url(parts.path + (f"?{parts.query}" if parts.query else ""))
    posts = fixture_posts((fixtures_dir / entry["path"]).read_bytes(), entry["platform"], entry["skin"])
    thread = canonical_thread_url(local, entry["platform"])
    audit = fixture_audit(posts, thread, entry["platform"])
    for p in audit["posts"]:  # a roll verdict on every roll of the page: every mark must leave the layout alone
        p["verdicts"].append({"code": "dice.x", "severity": "warning", "message": "x", "rule": "x", "post": p["id"],
                              "roll": 0, "expected": 1, "found": 2})
    canned_service.stored[thread] = audit
    boxes = []
    for with_script in (False, True):
        gm = gm_factory(canned_service.url, with_script=with_script)
        gm.context.route(forum.url("/") + "**", no_page_scripts)
        pg = gm.new_page()
        pg.goto(local)
        if with_script:
            assert wait_done(pg) == "drawn"
            assert pg.locator("arbitro-mark").count() == sum(1 for p in posts if p.has_roll and not p.dice_post)
        boxes.append(pg.evaluate(MEASURE))
    moved = [(a, b) for a, b in zip(boxes[0], boxes[1]) if a != b]
    assert len(boxes[0]) == len(boxes[1]) and moved[:3] == []
