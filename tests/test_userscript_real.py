"""The userscript on real ForumFree pages (../shared/real/forumfree-classic/): each served by the local test forum
under its real URL, the real service auditing it, and in Chromium a badge on every post beside its real author,
none on the page's chrome, the "Tocca a" panel on the thread's last page."""
from __future__ import annotations

import collections
import pathlib
import urllib.parse
from dataclasses import dataclass

import pytest
import requests

from tests.plugins.browser import wait_final
from tests.test_userscript_live import _badges, _no_page_scripts, _thread_url_asked, live_service  # noqa: F401

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class RealPage:
    file: str
    url: str  # where the page was saved from (SOURCES.md)
    posts: tuple[tuple[str, str], ...]  # (post id, author as the page shows it), in page order
    last: bool  # the thread's last page: the "Tocca a" panel opens here
    post_table: str = "ee{}"  # the id of the post's table


THREAD_41935930 = "https://youtubepoopita.forumfree.it/?t=41935930"

PAGES = (
    RealPage("s00.html", "https://youtubepoopita.forumfree.it/?t=36772963", (
        ("303073210", "-Lucario93-"), ("303118158", "Pennaz91"), ("303118610", "-Lucario93-"),
        ("303165041", "Felix96"), ("303243084", "-Lucario93-"), ("303255384", "BB64"), ("303315066", "BB64"),
        ("303389109", "Morshu The Shopkeeper"), ("303393560", "Zebrick"), ("303414918", "Felix96"),
        ("306401743", "geogeobananarap"), ("404035284", "Squadala Voyager"),
    ), last=True),
    # pages 1 and 3 of one thread (page 2 was never saved: the local forum answers 404 for it)
    RealPage("s01.html", THREAD_41935930, (
        ("342921374", "Zannabluke"), ("343116932", "·†°•.Mello-Kun.•°†·"), ("343197714", "SilverRathalos"),
        ("343258476", "Furio The Shopkeeper"), ("343260467", "Zebrick"), ("343260630", "Zannabluke"),
        ("343261064", "Furio The Shopkeeper"), ("343262339", "bassman85"), ("343262776", "Zannabluke"),
        ("343263139", "Furio The Shopkeeper"), ("343263697", "Zannabluke"), ("343264341", "Furio The Shopkeeper"),
        ("343265284", "Zannabluke"), ("343265289", "Zebrick"), ("343266046", "Furio The Shopkeeper"),
    ), last=False),
    RealPage("s02.html", THREAD_41935930 + "&st=30", (
        ("343345904", "Wario_The King"), ("343347916", "Zebrick"), ("343348685", "-Lucario93-"),
        ("343726903", "Pennaz91"), ("343727671", "Duke_Nume"), ("343900997", "The Man-Erg"),
        ("344135720", "Zebrick"), ("358258971", "~Zah Keeng!"), ("358396901", "Zebrick"),
        ("358434363", "PillsEater"), ("358437695", "Weegee64"),
    ), last=True),
    RealPage("s03.html", "https://youtubepoopita.forumfree.it/?t=59366178", (
        ("483163023", "karl90"), ("483379257", "ShadowChuppolo"), ("483409729", "karl90"),
    ), last=True),
    RealPage("s04.html", "https://youtubepoopita.forumfree.it/?t=47381008", (
        ("389567512", "nocoldin"), ("389573605", "°°the piton°°"), ("389598060", "Felix96"),
        ("389603519", "turbofa"), ("389603547", "The Scout"),
    ), last=True),
    RealPage("s05.html", "https://youtubepoopita.forumfree.it/?t=57526963", (
        ("469026617", "pokemoncolor32"), ("469704086", "Vikkio"), ("470314366", "romoloakastone"),
        ("470423773", "Vikkio"),
    ), last=True),
    # The 2009 skin page has no real URL (a skin editor saved it): ours, on a forum of the skin editor's name.
    # Its td.post has no id anywhere: the id is made from its author and date ("Nome Utente", "31/8/2009, 06:00"),
    # by the scraper and the script alike; its table is the editor's `table#XXX`.
    RealPage("s06.html", "https://forumfreeskinner.forumfree.it/?t=4700037", (
        ("h4691a8aa", "Nome Utente"),
    ), last=True, post_table="XXX"),
)


@pytest.fixture()
def real_forum(real_dir):
    """The real pages of one forum host served at their real paths: real_forum(host) -> ForumServer."""
    from tests.forumserver import ForumServer

    servers = []

    def make(host: str):
        srv = ForumServer()
        srv.start()
        for p in PAGES:
            if urllib.parse.urlsplit(p.url).hostname == host:
                srv.serve_saved(p.url, real_dir / "forumfree-classic" / p.file)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()


def _placed(pg) -> list[dict]:
    """Each badge in page order: its post id, the author element it sits in, and the post table around it."""
    return pg.locator("arbitro-badge").evaluate_all("""els => els.map(b => {
        const cell = b.closest('td.post');
        const author = b.parentElement.closest('.nick');
        return {post: b.dataset.post, author: author ? author.textContent.replace(/\\s+/g, ' ').trim() : null,
                header: !!b.closest('td.left_top'), table: cell ? cell.closest('table').id : null};
    })""")


def _expected_counts(audit: dict, ids: list[str]) -> dict:
    """(errors, warnings, rulings) the service's audit gives each of these posts: what its badge must count."""
    out = {}
    for post in audit["posts"]:
        if post["id"] in ids:
            c = collections.Counter(v["severity"] for v in post["verdicts"])
            rulings = sum(1 for v in post["verdicts"] if "ruling" in v["code"] and v["severity"] == "info")
            out[post["id"]] = (c["error"], c["warning"], rulings)
    return out


def _open(gm, forum, real):
    """The page opened at its real path and query on the local forum, the forum's own scripts off."""
    # The saved DOM is the one the forum's scripts already made (and their sources are on the network): they stay off.
    gm.context.route(forum.url("/") + "**", _no_page_scripts)
    pg = gm.new_page()
    parts = urllib.parse.urlsplit(real.url)
    pg.goto(forum.url(parts.path + "?" + parts.query))
    return pg


def _thread(forum, real) -> str:
    """The thread's URL on the local forum, as the script names it: `/?t=<tid>`, no page offset."""
    return forum.url(f"/?t={dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(real.url).query))['t']}")


def _check_overlay(pg, real, audit, service_url: str, thread_url: str, shot: pathlib.Path) -> None:
    # a badge on every post, by its real id, inside the post's own header beside its real author; nothing else
    ids = [pid for pid, _ in real.posts]
    assert _placed(pg) == [{"post": pid, "author": author, "header": True, "table": real.post_table.format(pid)}
                           for pid, author in real.posts]
    assert [p["author"] for p in audit["posts"] if p["id"] in ids] == [a for _, a in real.posts]
    assert _badges(pg) == _expected_counts(audit, ids)
    assert pg.locator("arbitro-mark").count() == 0  # no rolls on these pages, so no roll marks

    # the "Tocca a" panel on the thread's last page; collapsed on the others
    panel = pg.locator("arbitro-layer .panel")
    turn = pg.locator("arbitro-layer .turn")
    if real.last:
        assert audit["posts"][-1]["id"] == ids[-1]
        who = audit["next"]["character"]
        assert (f"Tocca a {who}" if who else "Nessun suggerimento per il prossimo turno.") in turn.inner_text()
        assert "collapsed" not in panel.get_attribute("class")
    else:
        assert audit["posts"][-1]["id"] not in ids
        assert turn.is_hidden()
        assert "collapsed" in panel.get_attribute("class")
    href = pg.locator("arbitro-layer [data-action=report]").get_attribute("href")
    assert href == f"{service_url}/audit?url={urllib.parse.quote(thread_url, safe='')}"
    pg.screenshot(path=str(shot), full_page=True)


GAP = [p for p in PAGES if p.url.startswith(THREAD_41935930)]
SKIN_2009 = PAGES[-1]
ONE_PAGE = [p for p in PAGES if p not in GAP and p is not SKIN_2009]


@pytest.mark.parametrize("real", ONE_PAGE, ids=[p.file for p in ONE_PAGE])
def test_overlay_on_a_real_page(real, real_forum, live_service, gm_factory, build_dir):
    forum = real_forum(urllib.parse.urlsplit(real.url).hostname)
    gm = gm_factory(live_service.url)
    pg = _open(gm, forum, real)
    assert wait_final(pg, timeout=60000) == "drawn"
    # one request, naming the thread without its page offset; the service read the thread from the forum
    thread_url = _thread(forum, real)
    assert _thread_url_asked(gm) == thread_url
    r = requests.get(f"{live_service.url}/api/v1/threads", params={"url": thread_url}, timeout=30)
    assert r.status_code == 200, r.text[:300]
    (build_dir / "screenshots").mkdir(exist_ok=True)
    _check_overlay(pg, real, r.json()["audit"], live_service.url, thread_url,
                   build_dir / "screenshots" / f"userscript-real-{real.file[:-5]}.png")
    assert gm.dialogs == []


def test_thread_with_an_unsaved_page_is_refused_in_the_panel(real_forum, live_service, gm_factory):
    """Page 2 of the saved thread answers 404: the service does not audit a thread it cannot read whole (its
    posts would go unchecked); the panel says why, no badge is drawn, the page keeps working."""
    forum = real_forum("youtubepoopita.forumfree.it")
    gm = gm_factory(live_service.url)
    pg = _open(gm, forum, GAP[0])
    assert wait_final(pg, timeout=60000) == "error"
    assert _thread_url_asked(gm) == _thread(forum, GAP[0])
    assert [e.status for e in forum.requests_log if "st=15" in e.path] == [404]
    assert pg.locator("arbitro-layer").get_attribute("data-error") == "HttpError"
    assert pg.locator("arbitro-layer .status").inner_text() == (
        "Il servizio Arbitro ha risposto con un errore (502): il server ha risposto 404 per "
        f"{forum.url('/?t=41935930&st=15')} Riprova")
    assert pg.locator("arbitro-badge").count() == 0


@pytest.mark.parametrize("real", GAP, ids=[p.file for p in GAP])
def test_two_saved_pages_of_one_thread(real, real_dir, real_forum, live_service, canned_service, gm_factory,
                                       build_dir):
    """Pages 1 and 3 of one thread: the service's audit of the two saved pages (one history, page 2 missing),
    answered for the thread's URL; each page gets the badges of its own posts, page 3 the "Tocca a" panel."""
    pages = [{"html": (real_dir / "forumfree-classic" / p.file).read_text(encoding="utf-8"), "url": p.url} for p in GAP]
    r = requests.post(f"{live_service.url}/api/v1/audits", json={"pages": pages}, timeout=60)
    assert r.status_code == 200, r.text[:300]
    audit = r.json()
    assert audit["thread"]["pages"] == 3 and audit["thread"]["pages_read"] == [1, 3]
    forum = real_forum("youtubepoopita.forumfree.it")
    thread_url = _thread(forum, real)
    canned_service.stored[thread_url] = audit
    gm = gm_factory(canned_service.url)
    pg = _open(gm, forum, real)
    assert wait_final(pg, timeout=60000) == "drawn"
    assert _thread_url_asked(gm) == thread_url
    (build_dir / "screenshots").mkdir(exist_ok=True)
    _check_overlay(pg, real, audit, canned_service.url, thread_url,
                   build_dir / "screenshots" / f"userscript-real-{real.file[:-5]}.png")
    assert gm.dialogs == []


def test_the_2009_skin_page(real_dir, real_forum, live_service, canned_service, gm_factory, build_dir):
    """The skin editor's page: one post with no id anywhere. The service reads it (its id made from author and
    date) and finds no fight in it, so the page stays untouched; with a ruling on that post (the only thing added
    to the service's own audit) the badge lands on it, beside "Nome Utente", the script giving it the same id."""
    real = SKIN_2009
    forum = real_forum(urllib.parse.urlsplit(real.url).hostname)
    thread_url = _thread(forum, real)
    gm = gm_factory(live_service.url)
    pg = _open(gm, forum, real)
    assert wait_final(pg, timeout=60000) == "untouched"
    assert _thread_url_asked(gm) == thread_url
    assert pg.locator("arbitro-layer, arbitro-badge").count() == 0
    audit = requests.get(f"{live_service.url}/api/v1/threads", params={"url": thread_url}, timeout=30).json()["audit"]
    assert [(p["id"], p["author"], p["verdicts"]) for p in audit["posts"]] == [("h4691a8aa", "Nome Utente", [])]

    audit["posts"][0]["verdicts"] = [{"code": "ruling.needed", "severity": "info", "message": "Serve una decisione.",
                                      "rule": "Regolamento", "post": "h4691a8aa", "roll": None}]
    canned_service.stored[thread_url] = audit
    gm = gm_factory(canned_service.url)
    pg = _open(gm, forum, real)
    assert wait_final(pg, timeout=60000) == "drawn"
    (build_dir / "screenshots").mkdir(exist_ok=True)
    _check_overlay(pg, real, audit, canned_service.url, thread_url,
                   build_dir / "screenshots" / f"userscript-real-{real.file[:-5]}.png")
