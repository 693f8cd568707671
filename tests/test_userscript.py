"""The userscript overlay in real Chromium: badges, tooltips, roll marks, state strips, the "Tocca a" panel,
settings, failures of the service, hostile content, untouched non-fight pages, no layout shift."""
from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from tests.plugins.browser import (
    DARK_FF, FIGHTS, HOSTILE_FIGHT, Fight, free_port_closed, quiet_audit, wait_done,
)

pytestmark = pytest.mark.browser

EXPR_RE = re.compile(r"1d\d+(?:[+-]\d+)?")  # every synthetic roll is 1dX: block texts run together in a Range

POST_SELECTOR = {"forumfree": "[id^=ee]", "forumotion": "[id^=p]", "phpbb": "div.post[id^=p]"}


def ids(fight: Fight) -> list[str]:
    return [p.id for p in fight.posts]


def badge_data(pg) -> dict[str, tuple[str, int, int, int]]:
    rows = pg.locator("arbitro-badge").evaluate_all(
        "els => els.map(e => [e.dataset.post, e.dataset.severity, +e.dataset.errors, +e.dataset.warnings, +e.dataset.rulings])")
    return {r[0]: tuple(r[1:]) for r in rows}


def hover_badge(pg, pid: str) -> None:
    """Hovers a post's badge brought to the top of the window (the corner panel may cover the bottom)."""
    sel = f"arbitro-badge[data-post='{pid}']"
    pg.evaluate("sel => document.querySelector(sel).scrollIntoView({block: 'start'})", sel)
    pg.hover(f"{sel} .badge")


def layer_text(pg, selector: str) -> str:
    return pg.locator(f"arbitro-layer {selector}").first.inner_text()


def exprs_before(pg, host_selector: str) -> list[str]:
    """The dice expressions in the page's text before an overlay element (where a roll mark sits)."""
    text = pg.evaluate("""sel => { const host = document.querySelector(sel); const r = document.createRange();
        r.setStart(document.body, 0); r.setEndBefore(host); return r.toString(); }""", host_selector)
    return EXPR_RE.findall(text)


@pytest.mark.parametrize("fight", FIGHTS, ids=lambda f: f.key)
def test_overlay_on_each_platform(fight, gm, canned_service, forum_server, build_dir):
    pg = gm.new_page()
    pg.goto(forum_server.url + fight.path)
    assert wait_done(pg) == "drawn"
    p = ids(fight)

    # one request, for the canonical thread URL
    calls = canned_service.api_calls()
    assert [(c["method"], c["path"]) for c in calls] == [("GET", "/api/v1/threads")]
    assert calls[0]["query"]["url"] == forum_server.url + fight.canonical_path

    # badges on exactly the audited posts (not the off-topic post, not the Game Master's dice posts), right counts
    assert badge_data(pg) == {
        p[0]: ("ok", 0, 0, 0), p[1]: ("error", 1, 1, 0), p[3]: ("warning", 0, 1, 0), p[4]: ("ruling", 0, 0, 1),
    }
    assert pg.locator(f"arbitro-badge[data-post='{p[1]}'] .badge").inner_text().split() == ["✗", "1", "⚠", "1"]
    assert pg.locator(f"arbitro-badge[data-post='{p[0]}'] .badge").inner_text() == "✓"
    # next to the author's name, inside the post
    for pid in (p[0], p[1]):
        where = pg.evaluate("""([pid, sel]) => { const b = document.querySelector(`arbitro-badge[data-post='${pid}']`);
            const prev = b.previousSibling; const post = b.closest(sel);
            return [prev ? prev.textContent.trim() : b.parentElement.textContent.trim(), post ? post.id : null]; }""",
                            [pid, POST_SELECTOR[fight.platform]])
        author = next(x.author for x in fight.posts if x.id == pid)
        assert where[0] == author
        assert re.sub(r"\D", "", where[1]) == pid

    # state strip: PV/PE of the poster after the turn and the Stacks
    strip = pg.locator(f"arbitro-badge[data-post='{p[1]}'] .strip").inner_text()
    assert strip == f"PV 60/60 · PE 38/40 · Sbilanciamento (scade: post {p[3]})"
    assert pg.locator(f"arbitro-badge[data-post='{p[3]}'] .strip").inner_text() == "PV 46/52 · PE 45/45"

    # rolls marked where a verdict concerns them: 2nd roll of post 2, 1st roll of post 4
    marks = pg.locator("arbitro-mark").evaluate_all("els => els.map(e => [e.dataset.post, +e.dataset.roll, e.dataset.severity])")
    assert sorted(marks) == sorted([[p[1], 1, "error"], [p[3], 0, "warning"]])
    assert exprs_before(pg, f"arbitro-mark[data-post='{p[1]}']")[-1] == "1d15+2"
    assert exprs_before(pg, f"arbitro-mark[data-post='{p[3]}']")[-1:] == ["1d12+6"]
    assert len(exprs_before(pg, f"arbitro-mark[data-post='{p[3]}']")) == 4  # after the 4th roll of the page

    # tooltip on hover: Italian verdicts with numbers compared and rule paragraph
    hover_badge(pg, p[1])
    tip = pg.locator("arbitro-layer .tip")
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert "Manca il malus di Sbilanciamento (−1) nel tiro di difesa." in text
    assert "atteso: 12 · trovato: 13 · tiro n. 2" in text
    assert "Regola: Stack › Sbilanciamento" in text
    assert "Il Registro non torna con i danni subiti." in text
    assert '<a href="javascript:window.__pwned=1">clicca qui</a>' in text  # a hostile value, shown as text
    pg.mouse.move(1, 1)  # leaving the badge hides its tooltip (which may cover the next badge)
    tip.wait_for(state="hidden")
    hover_badge(pg, p[3])
    pg.wait_for_function(f"document.querySelector('arbitro-layer').shadowRoot.querySelector('.tip').dataset.post === '{p[3]}'")
    assert "Ipotesi nostra: arrotondamento per difetto (RULINGS 3)" in tip.inner_text()

    # the "Tocca a" panel on the last page
    turn = layer_text(pg, ".turn")
    assert "Tocca a Quincy" in turn
    assert "Hollow: Attacco «Lama Oscura» — totale da battere: 15" in turn
    assert "Forza: 6 (base 4, bonus 2)" in turn and "Destrezza: 6" in turn
    assert "Sbilanciamento (1 restanti) — −1 ai tiri della Fase Difensiva" in turn
    assert "−6 PV (Lama Oscura di Hollow)" in turn
    tags = [d["tag"] for d in canned_service.stored[forum_server.url + fight.canonical_path]["next"]["dice_tags"]]
    assert pg.locator("arbitro-layer .dice code").all_inner_texts() == tags

    # copy puts the tag on the clipboard; "inserisci" puts it in the forum's reply box
    pg.locator("arbitro-layer .dice [data-action=copy]").nth(1).click()
    pg.wait_for_function("document.querySelector('arbitro-layer').shadowRoot.querySelector('.dice [data-done]')")
    assert pg.evaluate("navigator.clipboard.readText()") == tags[1]
    pg.locator("arbitro-layer .dice [data-action=insert]").nth(0).click()
    assert pg.locator("textarea").first.input_value() == tags[0]
    pg.locator("arbitro-layer .dice [data-action=insert]").nth(1).click()
    assert pg.locator("textarea").first.input_value() == tags[0] + "\n" + tags[1]

    # the link to the full report
    href = pg.locator("arbitro-layer [data-action=report]").get_attribute("href")
    assert href == f"{canned_service.url}/audit?url={urllib.parse.quote(forum_server.url + fight.canonical_path, safe='')}"

    hover_badge(pg, p[1])
    tip.wait_for(state="visible")
    shots = build_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    pg.screenshot(path=str(shots / f"userscript-{fight.key}.png"), full_page=True)
    assert pg.evaluate("window.__pwned") is None and gm.dialogs == []


@pytest.mark.parametrize("fight", FIGHTS, ids=lambda f: f.key)
def test_no_layout_shift_of_forum_content(fight, gm_factory, canned_service, forum_server):
    """Posts, authors and the reply box sit where they sit without the script."""
    measure = """sel => [...document.querySelectorAll(sel + ', textarea, a, h2')].map(e => {
        const r = e.getBoundingClientRect(); return [e.tagName, e.id, r.x, r.y, r.width, r.height]; })"""
    boxes = []
    for with_script in (False, True):
        gm = gm_factory(canned_service.url, with_script=with_script)
        pg = gm.new_page()
        pg.goto(forum_server.url + fight.path)
        if with_script:
            assert wait_done(pg) == "drawn"
        boxes.append(pg.evaluate(measure, POST_SELECTOR[fight.platform]))
    assert len(boxes[0]) > 10
    moved = [(a, b) for a, b in zip(boxes[0], boxes[1]) if a != b]
    assert len(boxes[0]) == len(boxes[1]) and moved == []


def test_hostile_content_never_runs(gm, canned_service, forum_server):
    fight = HOSTILE_FIGHT
    pg = gm.new_page()
    pg.goto(forum_server.url + fight.path)
    assert wait_done(pg) == "drawn"
    p = ids(fight)
    hover_badge(pg, p[4])
    tip = pg.locator("arbitro-layer .tip")
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert '<img src=x onerror="window.__pwned=1">' in text  # the name and the message, as text
    assert text.count("<script>window.__pwned=1</script>") >= 2
    strip = pg.locator(f"arbitro-badge[data-post='{p[1]}'] .strip")
    assert strip.inner_text().startswith("PV 60/60")  # the hostile character name still finds its state
    turn = layer_text(pg, ".turn")
    assert 'Ricorda la Preparazione <a href="javascript:window.__pwned=1">clicca qui</a>' in turn
    assert "Difesa: Schivata <img src=x" in turn
    pg.locator("arbitro-layer .hints li").click()
    # nothing we drew is an element made from data: no img, no script, only our own http(s) link
    made = pg.evaluate("""() => { const out = [];
        for (const host of document.querySelectorAll('[data-arbitro]')) for (const el of host.shadowRoot.querySelectorAll('img,script,iframe,a,[onerror],[onclick]'))
          out.push([el.tagName, el.getAttribute('href')]); return out; }""")
    assert made and all(tag == "A" and href.startswith(canned_service.url + "/audit?url=") for tag, href in made)
    pg.wait_for_timeout(200)  # a broken image would have fired its onerror by now
    assert pg.evaluate("window.__pwned") is None
    assert gm.dialogs == []


def test_settings_refuse_a_javascript_service_url(gm, forum_server):
    pg = gm.open(forum_server.url + FIGHTS[0].path)
    pg.locator("arbitro-layer [data-action=settings]").click()
    pg.locator("arbitro-layer input[name=serviceUrl]").fill("javascript:window.__pwned=1")
    pg.locator("arbitro-layer [data-action=save]").click()
    assert "Indirizzo del servizio non valido" in layer_text(pg, "[data-part=message]")
    assert "settings" not in gm.store and pg.evaluate("window.__pwned") is None


@pytest.mark.parametrize("fight", [FIGHTS[0], FIGHTS[3], FIGHTS[5]], ids=lambda f: f.key)
def test_settings_persist_across_reloads(fight, gm, canned_service, forum_server):
    url = forum_server.url + fight.path
    pg = gm.open(url)
    labels = pg.evaluate("window.__arbitroMenu.map(m => m.label)")
    assert labels == ["Arbitro: impostazioni", "Arbitro: attiva/disattiva su questo forum"]
    pg.locator("arbitro-layer [data-action=settings]").click()
    pg.locator("arbitro-layer input[name=character]").fill("quincy")
    pg.locator("arbitro-layer select[name=language]").select_option("en")
    pg.locator("arbitro-layer [data-action=save]").click()
    assert wait_done(pg, 2) == "drawn"
    assert "Your turn (Quincy)" in layer_text(pg, ".turn")
    saved = json.loads(gm.store["settings"])
    assert saved["character"] == "quincy" and saved["language"] == "en"

    pg.reload()
    assert wait_done(pg) == "drawn"
    assert "Your turn (Quincy)" in layer_text(pg, ".turn")
    assert "Full report" in layer_text(pg, ".links")

    # switched off for this forum from the manager's menu: after a reload nothing is drawn
    pg.evaluate("window.__arbitroMenu[1].fn()")
    pg.wait_for_function("!document.querySelector('[data-arbitro]')")
    pg.reload()
    assert wait_done(pg) == "disabled"
    assert pg.locator("[data-arbitro]").count() == 0
    # and the menu's settings entry still opens the settings, where it can be switched on again
    pg.evaluate("window.__arbitroMenu[0].fn()")
    box = pg.locator("arbitro-layer input[name=enabledHere]")
    assert not box.is_checked()
    box.check()
    pg.locator("arbitro-layer [data-action=save]").click()
    assert wait_done(pg, 2) == "drawn"
    assert pg.locator("arbitro-badge").count() == 4


def test_other_character_followed_keeps_the_panel_collapsed(gm, forum_server):
    gm.set_settings(character="Hollow")
    pg = gm.open(forum_server.url + FIGHTS[0].path)
    assert pg.evaluate("document.querySelector('arbitro-layer').shadowRoot.querySelector('.panel').classList.contains('collapsed')")
    pg.locator("arbitro-layer [data-action=collapse]").click()
    assert "Tocca a Quincy" in layer_text(pg, ".turn")


def test_session_cache_one_request_per_view(gm, canned_service, forum_server):
    url = forum_server.url + FIGHTS[5].path
    pg = gm.open(url)
    assert len(canned_service.api_calls()) == 1
    pg.reload()
    assert wait_done(pg) == "drawn"
    assert len(canned_service.api_calls()) == 1  # answered from sessionStorage
    assert pg.locator("arbitro-badge").count() == 4
    pg2 = gm.open(url)  # a new tab is a new session
    assert len(canned_service.api_calls()) == 2 and pg2.locator("arbitro-badge").count() == 4


def test_refreshing_audit_is_said_and_not_cached(gm, canned_service, forum_server):
    canned_service.refreshing = True
    pg = gm.open(forum_server.url + FIGHTS[0].path)
    assert "Audit in aggiornamento" in layer_text(pg, ".status")
    pg.reload()
    assert wait_done(pg) == "drawn"
    assert len(canned_service.api_calls()) == 2


def test_unknown_thread_is_audited_with_one_request(gm, canned_service, forum_server):
    fight = FIGHTS[2]
    key = forum_server.url + fight.canonical_path
    canned_service.postable[key] = canned_service.stored.pop(key)
    pg = gm.open(forum_server.url + fight.path)
    assert pg.evaluate("window.__arbitroDone[0]") == "drawn"
    calls = canned_service.api_calls()
    assert [(c["method"], c["path"]) for c in calls] == [("GET", "/api/v1/threads")]
    # the page's own posts are named: the answer is that page's slice of the audit
    ids = pg.evaluate("() => [...document.querySelectorAll('arbitro-badge')].map(b => b.dataset.post)")
    assert calls[0]["query"]["url"] == key and calls[0]["query"]["create"] == "1"
    assert set(ids) <= set(calls[0]["query"]["posts"].split(","))
    assert pg.locator("arbitro-badge").count() == 4


def test_first_audit_under_way_says_so_and_asks_again(gm, canned_service, forum_server):
    fight = FIGHTS[0]
    key = forum_server.url + fight.canonical_path
    canned_service.postable[key] = canned_service.stored.pop(key)
    canned_service.pending[key] = 1  # the service answers 202 once, then the audit
    pg = gm.open(forum_server.url + fight.path, wait=False)
    assert wait_done(pg) == "pending"
    assert "Analisi in corso" in layer_text(pg, ".status")
    assert pg.locator("arbitro-badge").count() == 0
    assert wait_done(pg, count=2) == "drawn"  # asked again after Retry-After (1 s)
    # the GET, the provisional page (a service without that route: "analisi in corso" as before), the GET again
    assert [(c["path"], c["query"].get("create")) for c in canned_service.api_calls()] == [
        ("/api/v1/threads", "1"), ("/api/v1/threads/provisional", None), ("/api/v1/threads", "1")]
    assert pg.locator("arbitro-badge").count() == 4
    assert "Analisi in corso" not in layer_text(pg, ".status")


def test_first_audit_under_way_then_not_a_fight_leaves_the_page_untouched(gm_factory, canned_service, forum_server):
    path = "/viewtopic.php?t=399"
    canned_service.pending[forum_server.url + path] = 1  # 202, then 422: no thread after all
    plain = gm_factory(canned_service.url, with_script=False).new_page()
    plain.goto(forum_server.url + path)
    pg = gm_factory(canned_service.url).new_page()
    pg.goto(forum_server.url + path)
    assert wait_done(pg) == "pending"
    assert wait_done(pg, count=2) == "untouched"
    assert _dom(pg) == _dom(plain)


def _dom(pg) -> str:
    return pg.evaluate("document.documentElement.outerHTML")


@pytest.mark.parametrize("case", ["index", "no-fight", "not-a-thread"])
def test_pages_that_are_not_fights_are_untouched(case, gm_factory, canned_service, forum_server):
    from tests.plugins.browser import all_pages  # noqa: F401  (the pages live in the forum server)

    chat = Fight("chat", "phpbb", "prosilver", "/viewtopic.php?t=399", "/viewtopic.php?t=399", ())
    path = "/index.php" if case == "index" else chat.path
    if case == "no-fight":
        from tests.plugins.browser import fight_posts
        full = Fight("chat", "phpbb", "prosilver", chat.path, chat.canonical_path, fight_posts(7900))
        canned_service.stored[forum_server.url + chat.canonical_path] = quiet_audit(full, forum_server.url)
    plain = gm_factory(canned_service.url, with_script=False).new_page()
    plain.goto(forum_server.url + path)
    pg = gm_factory(canned_service.url).new_page()
    pg.goto(forum_server.url + path)
    outcome = wait_done(pg)
    assert outcome == {"index": "not-a-thread", "no-fight": "untouched", "not-a-thread": "untouched"}[case]
    assert _dom(pg) == _dom(plain)
    if case == "not-a-thread":  # unknown to the service, and the service says it is no thread: one GET, 422
        assert [(c["method"], c["query"].get("create")) for c in canned_service.api_calls()] == [("GET", "1")]
        # remembered for the session: a reload does not ask again, and the page stays untouched
        pg.reload()
        assert wait_done(pg) == "untouched"
        assert len(canned_service.api_calls()) == 1
        assert _dom(pg) == _dom(plain)


def _assert_page_usable(pg, fight):
    pg.locator("textarea").first.fill("sto scrivendo")
    assert pg.locator("textarea").first.input_value() == "sto scrivendo"
    pg.click("#forum-link")
    assert pg.url.endswith("#bottom")
    assert pg.locator("arbitro-badge").count() == 0
    assert pg.evaluate("document.querySelectorAll('[id^=p], [id^=ee]').length") >= len(fight.posts)


def test_service_down_message_and_page_usable(gm_factory, forum_server):
    gm = gm_factory(f"http://127.0.0.1:{free_port_closed()}")
    fight = FIGHTS[5]
    pg = gm.open(forum_server.url + fight.path)
    assert pg.evaluate("window.__arbitroDone[0]") == "error"
    status = layer_text(pg, ".status")
    assert "Servizio Arbitro non raggiungibile" in status
    assert pg.locator("arbitro-layer").get_attribute("data-error") == "NetworkError"
    _assert_page_usable(pg, fight)


def test_service_slow_times_out_with_a_message(gm, canned_service, forum_server):
    canned_service.delay = 3.0
    gm.set_settings(timeoutMs=800)
    fight = FIGHTS[0]
    pg = gm.open(forum_server.url + fight.path)
    assert pg.evaluate("window.__arbitroDone[0]") == "error"
    assert pg.locator("arbitro-layer").get_attribute("data-error") == "TimeoutError"
    assert "non ha risposto in tempo" in layer_text(pg, ".status")
    _assert_page_usable(pg, fight)
    # "Riprova" asks again (and gets its answer once the service is quick again)
    canned_service.delay = 0
    pg.locator("arbitro-layer [data-action=retry]").click()
    assert wait_done(pg, 2) == "drawn"


@pytest.mark.parametrize("status,body,expected", [
    (500, {"error": {"code": "internal", "message": "database non disponibile", "details": {}}},
     "Il servizio Arbitro ha risposto con un errore (500): database non disponibile"),
    (502, b"<html>Bad Gateway</html>", "Il servizio Arbitro ha risposto con un errore (502)"),
    (200, b"{not json", "Risposta del servizio non valida."),
    (200, {"thread_id": 1, "audit": {"format": "altro/9"}}, "Risposta del servizio non valida."),
])
def test_service_errors_are_explained(status, body, expected, gm, canned_service, forum_server):
    canned_service.override = (status, body)
    pg = gm.open(forum_server.url + FIGHTS[1].path)
    assert pg.evaluate("window.__arbitroDone[0]") == "error"
    assert layer_text(pg, ".status").startswith(expected)
    assert pg.locator("arbitro-badge").count() == 0


def _contrast(pg, host: str, part: str) -> float:
    return pg.evaluate("""([host, part]) => {
        const el = document.querySelector(host).shadowRoot.querySelector(part);
        const cs = getComputedStyle(el);
        const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
        const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                           return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
        const a = lum(rgb(cs.color)), b = lum(rgb(cs.backgroundColor));
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }""", [host, part])


@pytest.mark.parametrize("fight,theme", [(FIGHTS[0], "light"), (DARK_FF, "dark"), (FIGHTS[4], "dark")],
                         ids=["light", "dark", "forumotion-dark"])
def test_dark_and_light_skins_readable(fight, theme, gm, forum_server, build_dir):
    pg = gm.open(forum_server.url + fight.path)
    p = ids(fight)
    assert pg.locator("arbitro-layer").get_attribute("data-theme") == theme
    assert pg.locator(f"arbitro-badge[data-post='{p[1]}']").get_attribute("data-theme") == theme
    for host, part in [(f"arbitro-badge[data-post='{p[1]}']", ".badge"), (f"arbitro-badge[data-post='{p[0]}']", ".badge"),
                       (f"arbitro-badge[data-post='{p[1]}']", ".strip"), ("arbitro-layer", ".panel"),
                       ("arbitro-layer", ".panel code")]:
        assert _contrast(pg, host, part) >= 4.5, (host, part)
    if fight is DARK_FF:
        (build_dir / "screenshots").mkdir(exist_ok=True)
        pg.screenshot(path=str(build_dir / "screenshots" / "userscript-forumfree-dark.png"))


def test_strict_csp_forum_still_styled(gm, forum_server):
    """A forum whose CSP forbids inline styles and scripts: the overlay is still drawn, styled and zero-size."""
    forum_server.csp = "default-src 'self'; style-src 'self'; script-src 'self' 'unsafe-eval'"  # eval: Playwright's waits
    try:
        pg = gm.open(forum_server.url + FIGHTS[5].path)
    finally:
        forum_server.csp = None
    assert pg.locator("arbitro-badge").count() == 4
    host = pg.locator("arbitro-badge").first
    assert host.evaluate("e => [e.offsetWidth, e.offsetHeight, getComputedStyle(e).position]") == [0, 0, "relative"]
    assert host.evaluate("e => getComputedStyle(e.shadowRoot.querySelector('.badge')).borderTopLeftRadius") == "9px"
    assert pg.locator("arbitro-layer").evaluate("e => getComputedStyle(e).position") == "fixed"


def test_tap_pins_the_tooltip_escape_and_outside_click_close_it(gm, forum_server):
    fight = FIGHTS[0]
    p = ids(fight)
    pg = gm.open(forum_server.url + fight.path)
    tip = pg.locator("arbitro-layer .tip")
    badge = f"arbitro-badge[data-post='{p[1]}'] .badge"
    pg.evaluate("sel => document.querySelector(sel).scrollIntoView({block: 'start'})", f"arbitro-badge[data-post='{p[1]}']")
    pg.click(badge)
    tip.wait_for(state="visible")
    pg.mouse.move(1, 1)  # pinned: leaving the badge does not close it
    pg.wait_for_timeout(400)
    assert tip.is_visible()
    y0 = tip.bounding_box()["y"]
    pg.mouse.wheel(0, -120)  # it follows its badge when the page scrolls
    pg.wait_for_function(f"document.querySelector('arbitro-layer').shadowRoot.querySelector('.tip').getBoundingClientRect().y > {y0 + 50}")
    pg.keyboard.press("Escape")
    tip.wait_for(state="hidden")
    # a roll mark opens the same tooltip; a click on the forum's own content closes it
    pg.click(f"arbitro-mark[data-post='{p[1]}'] .mark")
    tip.wait_for(state="visible")
    assert "Manca il malus di Sbilanciamento" in tip.inner_text()
    pg.click("h2.topic-title")
    tip.wait_for(state="hidden")


def test_not_the_last_page_keeps_the_turn_panel_away(gm, canned_service, forum_server):
    fight = FIGHTS[5]
    doc = canned_service.stored[forum_server.url + fight.canonical_path]
    later = dict(doc["posts"][-1], id="99999", verdicts=[])
    doc["posts"].append(later)  # the thread goes on on a later page
    pg = gm.open(forum_server.url + fight.path)
    assert pg.locator("arbitro-badge").count() == 4
    assert pg.evaluate("document.querySelector('arbitro-layer').shadowRoot.querySelector('.panel').classList.contains('collapsed')")
    assert pg.locator("arbitro-layer .turn").is_hidden()
    assert pg.locator("arbitro-layer [data-action=report]").count() == 1
    assert pg.locator("arbitro-layer section.status").is_hidden()


def test_audit_behind_the_page_is_said_and_asked_again(gm, canned_service, forum_server):
    fight = FIGHTS[5]
    doc = canned_service.stored[forum_server.url + fight.canonical_path]
    doc["posts"].pop()  # the page shows a post the stored audit does not have yet
    pg = gm.open(forum_server.url + fight.path)
    assert "Questa pagina ha post che il servizio non ha ancora valutato." in layer_text(pg, ".status")
    assert pg.locator("arbitro-badge").count() == 3
    pg.reload()
    assert wait_done(pg) == "drawn"
    assert len(canned_service.api_calls()) == 2  # a cached audit that is behind the page is not reused


@pytest.mark.parametrize("mode", ["wysiwyg", "source"])
def test_insert_into_forumotion_sceditor(mode, gm, canned_service, forum_server):
    """Forumotion's reply box is SCEditor: the tag goes where the editor keeps its text (the iframe's body in
    WYSIWYG mode, its own textarea in source mode), not into the hidden textarea the editor overwrites on send."""
    fight = next(f for f in FIGHTS if f.key == "forumotion-phpbb3")
    pg = gm.new_page()
    pg.goto(forum_server.url + fight.path + f"?sce={mode}")
    assert wait_done(pg) == "drawn"
    tags = [d["tag"] for d in canned_service.stored[forum_server.url + fight.canonical_path]["next"]["dice_tags"]]
    pg.locator("arbitro-layer .dice [data-action=insert]").nth(0).click()
    pg.locator("arbitro-layer .dice [data-action=insert]").nth(1).click()
    hidden = pg.locator("#text_editor_textarea").input_value()
    if mode == "wysiwyg":
        lines = pg.frame_locator(".sceditor-container iframe").locator("body > *").all_inner_texts()
        assert lines == ["Rispondo così:", tags[0], tags[1]]
        # as text, never as markup: the tag's brackets and any < > stay literal
        assert pg.frame_locator(".sceditor-container iframe").locator("body div").count() == 2
    else:
        assert pg.locator(".sceditor-container textarea").input_value() == "Rispondo così:\n" + tags[0] + "\n" + tags[1]
    assert hidden == ""  # the editor writes it when the form is sent
    assert pg.evaluate("window.__pwned") is None


def test_the_panel_says_when_the_audit_was_made(gm_factory, canned_service, forum_server):
    """"aggiornato alle 22:30 (3 min fa)" in the reader's own zone, not an ISO timestamp."""
    from datetime import datetime, timedelta, timezone
    from zoneinfo import ZoneInfo

    made = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=3)
    canned_service.fetched_at = made.isoformat().replace("+00:00", "Z")
    gm = gm_factory(canned_service.url, timezone_id="Europe/Rome")
    pg = gm.open(forum_server.url + FIGHTS[0].path)
    local = made.astimezone(ZoneInfo("Europe/Rome"))
    assert f"aggiornato alle {local:%H:%M} (3 min fa)" in layer_text(pg, "section.links")
    assert "T" not in layer_text(pg, "section.links").split("aggiornato", 1)[1]  # no ISO left


def test_the_panel_is_a_bar_on_a_narrow_screen(gm_factory, canned_service, forum_server):
    """At 420 px the open panel would cover most of the page: collapsed to its bar, opened by its toggle."""
    gm = gm_factory(canned_service.url, viewport={"width": 420, "height": 800})
    pg = gm.open(forum_server.url + FIGHTS[0].path)
    panel = "document.querySelector('arbitro-layer').shadowRoot.querySelector('.panel')"
    assert pg.evaluate(f"{panel}.classList.contains('collapsed')")
    height = pg.evaluate(f"{panel}.getBoundingClientRect().height")
    assert height < 80  # a bar, not a sheet over the page
    pg.locator("arbitro-layer [data-action=collapse]").click()
    assert not pg.evaluate(f"{panel}.classList.contains('collapsed')")
    assert "Tocca a" in layer_text(pg, ".turn")


def test_changed_and_deleted_posts_are_shown_in_the_overlay(gm_factory, canned_service, forum_server):
    """A post whose roll changed between two readings carries "modificato dopo la pubblicazione" with both reading
    times beside its badge; the posts gone from the thread are named in the panel (issue #16)."""
    fight = FIGHTS[0]
    url = forum_server.url + fight.canonical_path
    audit = json.loads(json.dumps(canned_service.stored[url]))
    target = audit["posts"][1]
    target["verdicts"].append({
        "code": "dice.changed_after_publication", "severity": "error", "rule": "Arbitro › Prove di modifica",
        "post": target["id"], "roll": None, "expected": None, "found": None,
        "message": "I tiri del post sono cambiati dopo la pubblicazione: tiro 1: era 1d12+5 = 9, ora 1d12+5 = 16.",
        "details": {"before": {"fetched_at": "2026-11-30T10:00:00Z", "rolls": []},
                    "after": {"fetched_at": "2026-11-30T11:00:00Z", "rolls": []}}})
    audit["deleted_posts"] = [{"code": "post.deleted", "severity": "warning", "rule": "Arbitro › Prove di modifica",
                               "post": "999", "message": "Il post 999 di Tizio non è più nella discussione."}]
    canned_service.stored[url] = audit
    gm = gm_factory(canned_service.url, timezone_id="Europe/Rome")
    pg = gm.open(forum_server.url + fight.path)
    tag = pg.locator(f"arbitro-badge[data-post='{target['id']}'] .tamper")
    text = tag.inner_text()
    assert text.startswith("modificato dopo la pubblicazione (letto il 30/11")
    assert "alle 11:00" in text and "poi di nuovo il 30/11 alle 12:00" in text  # the reader's zone (UTC+1)
    assert tag.get_attribute("class") == "tamper sev-error"
    others = [p["id"] for p in audit["posts"] if p["id"] != target["id"]]
    assert all(pg.locator(f"arbitro-badge[data-post='{pid}'] .tamper").count() == 0 for pid in others)
    gone = pg.locator("arbitro-layer section.links [data-part=deleted]")
    assert gone.inner_text().strip() == "· 1 post eliminati dopo la lettura"
    assert gone.get_attribute("title") == "Il post 999 di Tizio non è più nella discussione."
