"""The audit report page, its downloads and security headers (Flask test client), and the page in Chromium."""
from __future__ import annotations

import re

import pytest

from tests.plugins.server import TINY, LiveServer, make_history

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def _store(app, history):
    from server.refresh import history_hash, run_replay

    svc = app.extensions["arbitro"]
    rec = svc.storage.get_or_create_thread(history.thread.url, TINY)
    audit = run_replay(history, TINY, None, None)
    h = history.to_dict()
    rec = svc.storage.save_refresh(rec.id, history=h, content_hash=history_hash(h), audit=audit.to_dict(),
                                   replayed=audit.replayed, pages=[], log=[])
    app.config["ARBITRO"]["refresh_after"] = 10**9  # no background refresh of these made-up threads
    return rec


def _hostile_history():
    from dataclasses import replace

    h = make_history(8, title=HOSTILE, bodies={2: "ERRORE " + HOSTILE, 3: "Sbilanciamento!"})
    posts = list(h.posts)
    posts[1] = replace(posts[1], url="javascript:window.__pwned=3", author=HOSTILE)
    posts[5] = replace(posts[5], character='Quincy"><svg onload="window.__pwned=4">')
    return replace(h, posts=tuple(posts))


def test_report_page_content(app, client):
    rec = _store(app, make_history(10, bodies={3: "ERRORE nel conto", 6: "Sbilanciamento subito"}))
    resp = client.get(f"/audit/{rec.id}")
    assert resp.status_code == 200 and resp.mimetype == "text/html"
    html = resp.get_data(as_text=True)
    assert '<html lang="it">' in html and "Cronologia dei turni" in html
    # per-turn timeline with verdicts linking back to the forum posts
    assert html.count('class="turn ') == 10
    assert 'href="https://gdr.forumfree.it/?t=1#entry1003"' in html
    assert "prova.errore" in html and "atteso <b>0</b>, trovato <b>1</b>" in html and "§ Prova › Errori" in html
    # chart: inline SVG, one polyline per fighter and resource, no external resources
    svgs = re.findall(r"<svg class=\"chart-svg\" data-resource=\"(\w+)\"", html)
    assert svgs == ["pv", "pe"]
    assert html.count("<polyline") == 4
    # no inline script: the one script is our own file (the BBCode copy button), and the CSP allows only that
    assert "cdn" not in html.lower() and re.findall(r"<script[^>]*>", html) == ['<script src="/static/report.js" defer>']
    assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    # stacks over time and the summary
    assert "Stack nel tempo" in html and "Sbilanciamento ×2" in html
    assert re.search(r'<span class="n">10</span> post', html)
    assert re.search(r'<span class="n">1</span> errori', html)
    assert '<b id="next-character">Hollow</b>' in html
    assert f'href="/audit/{rec.id}.json"' in html and f'href="/audit/{rec.id}.md"' in html
    assert "default-src 'none'" in resp.headers["Content-Security-Policy"]


def test_report_by_url_and_unknown(app, client):
    rec = _store(app, make_history(2, url="https://gdr.forumfree.it/?t=42"))
    assert client.get("/audit", query_string={"url": "https://gdr.forumfree.it/?t=42&st=0"}).status_code == 200
    resp = client.get("/audit/999")
    assert resp.status_code == 404 and "Errore 404" in resp.get_data(as_text=True)
    resp = client.get("/audit", query_string={"url": "https://evil.example.com/?t=1"})
    assert resp.status_code == 403 and resp.mimetype == "text/html"
    assert client.get("/audit").status_code == 200  # the form
    assert rec.id


def test_downloads(app, client):
    rec = _store(app, make_history(5, bodies={1: "ERRORE *grassetto* [link](javascript:x)"}))
    j = client.get(f"/audit/{rec.id}.json")
    assert j.status_code == 200 and j.get_json()["format"] == "arbitro.audit/1"
    assert "attachment" in j.headers["Content-Disposition"]
    md = client.get(f"/audit/{rec.id}.md")
    assert md.status_code == 200 and md.mimetype == "text/markdown"
    text = md.get_data(as_text=True)
    assert text.startswith("# ") and "prova.errore" in text and "Hollow" in text
    # a download, never rendered by the browser
    assert "attachment" in md.headers["Content-Disposition"] and md.headers["X-Content-Type-Options"] == "nosniff"


def test_markdown_fallback_neutralises_markup():
    from server.pages import markdown_report

    doc = {"format": "arbitro.audit/1", "ruleset": "x", "thread": {"title": "<b>T</b>"}, "characters": {}, "next": {},
           "posts": [{"id": "1", "author": "[a](javascript:x)", "url": "javascript:y", "state": {},
                      "verdicts": [{"code": "c", "severity": "error", "message": "*m* <img>", "rule": "R"}]}]}
    text = markdown_report(doc)
    assert "](javascript:" not in text and "<img>" not in text and "javascript:y" not in text


def test_hostile_content_escaped(app, client):
    rec = _store(app, _hostile_history())
    html = client.get(f"/audit/{rec.id}").get_data(as_text=True)
    assert "<script>window" not in html and "<img src=x" not in html and "<svg onload" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    assert "javascript:" not in html


def test_userscript_and_api_routes_linked(app, client):
    html = client.get("/").get_data(as_text=True)
    assert "/userscript/arbitro.user.js" in html and "/api/v1/docs" in html  # the readable reference; it links the JSON


@pytest.mark.browser
def test_report_in_chromium(app, page, build_dir):
    rec = _store(app, _hostile_history())
    live = LiveServer(app).start()
    try:
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        resp = page.goto(f"{live.url}/audit/{rec.id}")
        assert resp.status == 200
        assert page.locator("h1").first.inner_text().startswith("<script>")  # shown as text
        assert page.locator("svg.chart-svg").count() == 2
        assert page.locator("svg.chart-svg polyline").count() == 6  # 3 fighters (one with a hostile name) × PV, PE
        box = page.locator("svg.chart-svg").first.bounding_box()
        assert box and box["width"] > 300 and box["height"] > 80
        assert page.locator("ol.timeline > li").count() == 8
        assert page.evaluate("window.__pwned") is None and not dialogs
        shots = build_dir / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "audit-hostile.png"), full_page=True)
        assert (shots / "audit-hostile.png").stat().st_size > 10_000
    finally:
        live.stop()


@pytest.mark.browser
def test_report_of_the_fixture_fight_in_chromium(tmp_path, page, build_dir):
    """The bundled guida fight (parsed from the ForumFree fixture pages) as a reader sees its report."""
    from server.app import create_app
    from server.demo import seed_demo

    app = create_app({"database": str(tmp_path / "f.sqlite3"), "cache_dir": str(tmp_path / "c"),
                      "refresh_after": 1e9})
    info = seed_demo(app)
    live = LiveServer(app).start()
    try:
        page.goto(f"{live.url}/audit/{info['thread_id']}")
        audit = app.extensions["arbitro"].storage.audit(info["thread_id"])
        import json as _json
        doc = _json.loads(audit.raw)
        assert page.locator("ol.timeline > li").count() == len(doc["posts"])
        assert page.locator("svg.chart-svg polyline").count() >= 2 * len(doc["characters"])
        errors = sum(1 for p in doc["posts"] for v in p["verdicts"] if v["severity"] == "error")
        assert page.locator(".stat.err .n").inner_text() == str(errors)
        assert page.locator("#next-character").inner_text() == (doc["next"].get("character") or "—")
        # every post link goes back to the forum post
        hrefs = page.locator("a.post-link").evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert hrefs and all(h.startswith("https://bleach-gdr.forumfree.it/?t=62345678") and "#entry" in h for h in hrefs)
        shots = build_dir / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "audit.png"), full_page=True)
    finally:
        live.stop()
        app.extensions["arbitro"].close()


def test_report_dates_read_as_italian_readers_write_them():
    from server.pages import quando

    assert quando("2026-11-30T14:38:07.017992Z") == "30/11/2026 14:38 UTC"
    assert quando("2026-11-09T12:00:00+01:00") == "09/11/2026 11:00 UTC"
    assert quando("non una data") == "non una data"
