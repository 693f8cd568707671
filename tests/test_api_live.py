"""The service over real HTTP (waitress on 127.0.0.1) reading a forum served by the local fixture forum server."""
from __future__ import annotations

import html
import re
import threading

import pytest
import requests

from tests.plugins.server import wait_until


TID = 62345678
HOST = "bleach-gdr.forumfree.it"
PAGE1 = "forumfree/topic_62345678_st0.html"
PAGE2 = "forumfree/topic_62345678_st15.html"


@pytest.fixture()
def ff(fixtures_dir):
    """The ForumFree fixture thread (2 pages) on the local forum server, absolute links pointing at it."""
    from tests.forumserver import ForumServer

    srv = ForumServer(fixtures_dir, rewrite_hosts=[HOST])
    srv.start()
    paths = srv.add_thread("forumfree", TID, [fixtures_dir / PAGE1, fixtures_dir / PAGE2])
    srv.thread_url = srv.url(f"/?t={TID}")
    srv.paths = [f"/?t={TID}", paths[1]]  # page 1 as the crawler asks for it (the thread URL itself)
    yield srv
    srv.stop()


@pytest.fixture()
def live(live_server):
    return live_server


def _post(live, **body) -> requests.Response:
    return requests.post(f"{live.url}/api/v1/audits", json=body, timeout=30)


def _page_requests(forum, path):
    return [r for r in forum.log_for(path)]


def _clone_post(page: bytes, old_id: str, new_id: str) -> bytes:
    """A copy of the post `old_id` of a page, renumbered: what a new reply looks like."""
    text = page.decode("latin-1")
    m = re.search(rf'<li class="post[^"]*" id="ee{old_id}">.*?</li>\n(?=<li class="post|</ul>)', text, re.S)
    assert m, "post not found in fixture"
    return m.group(0).replace(old_id, new_id).replace('class="post last"', 'class="post"').encode("latin-1")


def test_first_audit_then_cached(app, live, ff):
    r = _post(live, url=ff.thread_url)
    assert r.status_code == 200, r.text[:500]
    doc = r.json()
    assert doc["format"] == "arbitro.audit/1" and len(doc["posts"]) >= 15
    assert r.headers["X-Arbitro-Source"] == "refresh"
    assert int(r.headers["X-Arbitro-Replayed"]) == len(doc["posts"])
    thread_id = int(r.headers["X-Arbitro-Thread-Id"])
    assert len(_page_requests(ff, ff.paths[1])) == 1

    # fresh: answered from the store, the forum is not asked again
    ff.reset_log()
    r2 = _post(live, url=ff.thread_url + "&st=15")  # any page of the thread is the thread
    assert r2.status_code == 200 and r2.headers["X-Arbitro-Source"] == "store"
    assert r2.json() == doc and ff.requests_log == []

    # readers get it by URL, with when it was fetched
    g = requests.get(f"{live.url}/api/v1/threads", params={"url": ff.thread_url}, timeout=10)
    assert g.status_code == 200
    body = g.json()
    assert body["thread_id"] == thread_id and body["audit"] == doc and body["fetched_at"] and body["refreshing"] is False

    # stale but unchanged: conditional requests, 304s, nothing replayed, same audit
    app.config["ARBITRO"]["refresh_after"] = 0
    ff.reset_log()
    r3 = _post(live, url=ff.thread_url)
    assert r3.status_code == 200 and r3.headers["X-Arbitro-Source"] == "store"
    assert r3.headers["X-Arbitro-Replayed"] == "0" and r3.json() == doc
    page_reqs = [e for e in ff.requests_log if "t=" in e.path]
    assert page_reqs and all(e.conditional and e.status == 304 for e in page_reqs)


def test_refresh_after_new_post_and_new_page(app, live, ff, fixtures_dir):
    first = _post(live, url=ff.thread_url)
    assert first.status_code == 200
    n0 = len(first.json()["posts"])
    thread_id = first.headers["X-Arbitro-Thread-Id"]
    app.config["ARBITRO"]["refresh_after"] = 0

    # a reply appears on the last page: only that page transfers, only the new post is replayed
    page2 = ff.page(ff.paths[1])
    ff.add_post(ff.paths[1], _clone_post(page2, "600280", "600290"), before=b"</ul>\n</div>")
    ff.reset_log()
    r = _post(live, url=ff.thread_url)
    assert r.status_code == 200 and r.headers["X-Arbitro-Source"] == "refresh"
    assert len(r.json()["posts"]) == n0 + 1 and r.json()["posts"][-1]["id"] == "600290"
    assert r.headers["X-Arbitro-Replayed"] == "1"
    assert [e.status for e in ff.log_for(ff.paths[0]) if e.conditional] == [304]
    assert [e.status for e in ff.log_for(ff.paths[1])] == [200]

    # a third page appears (page 2's pagination now links it): page 1 stays 304, only new posts are replayed
    page2 = ff.page(ff.paths[1])
    new_page = _clone_post(page2, "600260", "600300") + _clone_post(page2, "600270", "600310")
    text = page2.decode("latin-1")
    start, end = text.index('<li class="post"'), text.rindex("</ul>\n</div>")
    page3 = text[:start].encode("latin-1") + new_page + text[end:].encode("latin-1")
    page3 = page3.replace(b'<li class="current"><span>2</span></li>',
                          f'<li><a href="/?t={TID}&amp;st=15">2</a></li><li class="current"><span>3</span></li>'.encode())
    ff.set_page(f"/?t={TID}&st=30", page3)
    ff.replace_in_page(ff.paths[1], '<li class="current"><span>2</span></li></ul>',
                       f'<li class="current"><span>2</span></li><li><a href="/?t={TID}&amp;st=30" title="Pagina 3">3</a></li></ul>')
    ff.reset_log()
    r = _post(live, url=ff.thread_url)
    assert r.status_code == 200, r.text[:300]
    ids = [p["id"] for p in r.json()["posts"]]
    assert ids[-2:] == ["600300", "600310"] and len(ids) == n0 + 3
    assert r.headers["X-Arbitro-Replayed"] == "2"
    assert [e.status for e in ff.log_for(ff.paths[0]) if e.conditional] == [304]
    assert [e.status for e in ff.log_for(f"/?t={TID}&st=30")] == [200]
    # the store knows the pages with their validators and hashes
    pages = app.extensions["arbitro"].storage.pages(int(thread_id))
    assert len(pages) == 3 and all(p.content_hash and p.etag for p in pages)


def test_forum_down_keeps_previous_audit(app, live, ff):
    first = _post(live, url=ff.thread_url)
    assert first.status_code == 200
    doc = first.json()
    app.config["ARBITRO"]["refresh_after"] = 0
    ff.set_behaviour(None, statuses=[503] * 20)

    r = _post(live, url=ff.thread_url)
    assert r.status_code == 502
    err = r.json()["error"]
    assert err["code"] == "fetch_failed" and err["details"]["forum_status"] == 503
    assert err["details"]["stored_audit"].startswith("/api/v1/threads/")

    # readers still get the last good audit, with the error reported, and a background refresh is tried
    g = requests.get(f"{live.url}/api/v1/threads", params={"url": ff.thread_url}, timeout=10)
    assert g.status_code == 200
    body = g.json()
    assert body["audit"] == doc and body["last_error"]["code"] == "fetch_failed"
    assert body["last_error"]["details"]["forum_status"] == 503
    log = app.extensions["arbitro"].storage.fetch_log(body["thread_id"])
    assert any(e.status == 503 and e.error for e in log)
    # the report page says so too
    page = requests.get(f"{live.url}/audit/{body['thread_id']}", timeout=10).text
    assert "Ultimo aggiornamento non riuscito" in page

    # the forum is back: the next refresh clears the error
    ff.clear_behaviour(None)
    wait_until(lambda: not app.extensions["arbitro"].refresher.is_refreshing(body["thread_id"]))
    r = _post(live, url=ff.thread_url)
    assert r.status_code == 200
    assert requests.get(f"{live.url}/api/v1/threads/{body['thread_id']}", timeout=10).json()["last_error"] is None


def test_forum_timeout_is_504_and_missing_thread_502(app, live, ff):
    app.config["ARBITRO"]["fetch_read_timeout"] = 0.5
    app.extensions["arbitro"].refresher._fetcher = None  # rebuilt with the shorter timeout
    ff.set_behaviour(ff.paths[0], slow=3.0)
    ff.set_behaviour(f"/?t={TID}", slow=3.0)
    r = _post(live, url=ff.thread_url)
    assert r.status_code == 504, r.text[:300]
    assert r.json()["error"]["code"] == "fetch_timeout"
    ff.clear_behaviour(all=True)
    r = _post(live, url=ff.url("/?t=99999"))  # the forum answers 404
    assert r.status_code == 502 and r.json()["error"]["details"]["forum_status"] == 404


def test_not_a_thread_is_422(live, ff):
    ff.set_page("/?t=555", "<html><body><h1>Benvenuti</h1><p>Nessuna discussione qui.</p></body></html>")
    r = _post(live, url=ff.url("/?t=555"))
    assert r.status_code == 422, r.text[:300]
    assert set(r.json()["error"]) == {"code", "message", "details"}


def test_page_too_large_is_413(app, live, ff):
    app.config["ARBITRO"]["fetch_max_bytes"] = 50_000
    app.extensions["arbitro"].refresher._fetcher = None
    ff.set_behaviour(f"/?t={TID}", too_large=2_000_000)
    ff.set_behaviour(ff.paths[0], too_large=2_000_000)
    r = _post(live, url=ff.thread_url)
    assert r.status_code == 413 and r.json()["error"]["code"] == "page_too_large"


def test_many_readers_one_refresher(app, live, ff):
    first = _post(live, url=ff.thread_url)
    thread_id = int(first.headers["X-Arbitro-Thread-Id"])
    app.config["ARBITRO"]["refresh_after"] = 0
    ff.set_behaviour(None, slow=2.0)  # a slow forum: the one refresh outlasts the burst of readers
    ff.reset_log()
    results: list[requests.Response] = []
    start = threading.Barrier(16)

    def reader():
        start.wait(timeout=10)  # all readers at once, however loaded the machine is
        results.append(requests.get(f"{live.url}/api/v1/threads", params={"url": ff.thread_url}, timeout=10))

    threads = [threading.Thread(target=reader) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # nobody waited for the forum: every reader got the stored audit at once
    assert all(r.status_code == 200 for r in results)
    assert all(r.elapsed.total_seconds() < 1.5 for r in results)
    assert any(r.json()["refreshing"] for r in results)
    assert wait_until(lambda: not app.extensions["arbitro"].refresher.is_refreshing(thread_id), timeout=20)
    # exactly one refresh fetched the thread: each page was asked once
    assert len(ff.log_for(ff.paths[0])) == 1
    assert len(ff.log_for(ff.paths[1])) == 1


def test_hostile_post_content_is_escaped(app, live, ff, fixtures_dir):
    hostile = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    page2 = ff.page(ff.paths[1])
    # the forum escapes it in its HTML; once parsed it is live markup text, which must never become markup again
    evil = _clone_post(page2, "600270", "600666").replace(b"Kurogane", html.escape(hostile).encode())
    ff.add_post(ff.paths[1], evil, before=b"</ul>\n</div>")
    r = _post(live, url=ff.thread_url)
    assert r.status_code == 200
    doc = r.json()
    assert any("<script>" in (p["author"] or "") for p in doc["posts"])  # kept as data in JSON
    page = requests.get(f"{live.url}/audit/{r.headers['X-Arbitro-Thread-Id']}", timeout=10).text
    assert "<script>window.__pwned" not in page and "&lt;script&gt;window.__pwned" in page
    assert "<img src=x" not in page


def test_report_page_first_visit_by_url(live, ff):
    r = requests.get(f"{live.url}/audit", params={"url": ff.thread_url + "&st=15"}, timeout=30)
    assert r.status_code == 200 and "Cronologia dei turni" in r.text
    assert r.text.count('class="turn ') >= 15 and "<svg" in r.text
    # links back to the posts on the forum
    assert re.search(r'href="https?://127\.0\.0\.1[^"]*\?t=62345678[^"]*#entry600110"', r.text)


def test_engine_crash_is_named_and_recorded(app, live, ff):
    """A ruleset bug during a refresh: a named 500, recorded as the thread's last error."""
    from engine.core import _RULESETS

    class Crashing:
        id, title, settings = "crash", "crash", ()

        def initial_state(self, *a):
            raise KeyError("boom")

    _RULESETS["crash"] = Crashing()
    try:
        r = _post(live, url=ff.thread_url, ruleset="crash")
        assert r.status_code == 500 and r.json()["error"]["code"] == "engine_crashed"
        assert "boom" not in r.text and "Traceback" not in r.text
        rec = app.extensions["arbitro"].storage.find_thread(ff.thread_url, "crash")
        assert rec.last_error["code"] == "engine_crashed" and rec.audit_id is None
    finally:
        del _RULESETS["crash"]


def test_concurrent_first_audits_fetch_once(app, live, ff):
    """Many readers ask for a thread nobody stored yet: one crawl, everyone gets its audit."""
    ff.set_behaviour(None, slow=0.3)
    results: list[requests.Response] = []

    def creator():
        results.append(_post(live, url=ff.thread_url))

    threads = [threading.Thread(target=creator) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in results] == [200] * 8
    assert len({r.text for r in results}) == 1
    assert len(ff.log_for(ff.paths[0])) == 1 and len(ff.log_for(ff.paths[1])) == 1
    assert {r.headers["X-Arbitro-Source"] for r in results} == {"refresh", "store"}


def test_concurrent_first_audits_share_a_failure(app, live, ff):
    app.config["ARBITRO"]["failure_backoff"] = 60
    ff.set_behaviour(None, statuses=[500] * 50)
    results: list[requests.Response] = []
    threads = [threading.Thread(target=lambda: results.append(_post(live, url=ff.thread_url))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in results] == [502] * 6
    assert all(r.json()["error"]["details"]["forum_status"] == 500 for r in results)
    # one attempt (retries are off in the tests' config), shared by the callers that waited and repeated to
    # the later ones for failure_backoff seconds
    assert len(ff.log_for(ff.paths[0])) == 1
    assert requests.get(f"{live.url}/api/v1/threads", params={"url": ff.thread_url}, timeout=10).status_code == 404
