"""One request per page view: `GET /api/v1/threads?url=…&create=1` makes the first audit (200, or 202 when slow),
and a URL that is not a fight is answered from the store for a while instead of being crawled on every view."""
from __future__ import annotations

import pytest
import requests

from tests.plugins.server import FF_TID as TID, TinyRuleset, wait_until


@pytest.fixture()
def ff(ff, fixtures_dir):  # noqa: F811 - the plugin's thread, plus two pages that are no fight
    # a forum page that is not a thread (the board index), and a thread with no fight in it
    ff.set_page("/", fixtures_dir / "forumfree/index.html", content_type="text/html; charset=utf-8")
    ff.set_page("/?t=63000001", fixtures_dir / "forumfree/topic_63000001_st0.html",
                content_type="text/html; charset=utf-8")
    return ff


def _get(live, url, **params):
    return requests.get(f"{live.url}/api/v1/threads", params={"url": url, **params}, timeout=30)


def _thread_requests(forum, path=None):
    return [e for e in forum.requests_log if (path is None and e.path != "/robots.txt") or e.path == path]


def test_create_first_audit_in_one_request(app, live_server, ff):
    r = _get(live_server, ff.thread_url, create="1")
    assert r.status_code == 200, r.text[:300]
    body = r.json()
    assert body["audit"]["format"] == "arbitro.audit/1" and len(body["audit"]["posts"]) >= 15
    assert body["refreshing"] is False and body["thread_id"] == int(r.headers["X-Arbitro-Thread-Id"])
    # the next view is answered from the store: the forum is not asked
    ff.reset_log()
    again = _get(live_server, ff.thread_url, create="1")
    assert again.status_code == 200 and again.json()["audit"] == body["audit"]
    assert _thread_requests(ff) == []
    # without create, an unknown thread is still a 404 that says how to create it
    r = _get(live_server, ff.url("/?t=999"))
    assert r.status_code == 404 and r.json()["error"]["code"] == "thread_not_stored"
    assert "create=1" in r.json()["error"]["details"]["create"]


def test_create_slow_forum_answers_202_then_200(app, live_server, ff):
    app.config["ARBITRO"]["create_wait"] = 0.2
    ff.set_behaviour(ff.paths[1], slow=1.5)
    r = _get(live_server, ff.thread_url, create="1")
    assert r.status_code == 202, r.text[:300]
    body = r.json()
    assert body["refreshing"] is True and body["audit"] is None and body["retry_after"] >= 1
    assert r.headers["Retry-After"] == str(body["retry_after"])
    assert r.headers["Location"] == f"/api/v1/threads/{body['thread_id']}"
    # asked again while the audit is being made: still 202, and no second crawl starts
    r2 = _get(live_server, ff.thread_url, create="1")
    assert r2.status_code == 202 and r2.json()["thread_id"] == body["thread_id"]
    assert wait_until(lambda: _get(live_server, ff.thread_url).status_code == 200, timeout=20)
    assert len(ff.log_for(ff.paths[1])) == 1


def test_not_a_thread_is_remembered(app, live_server, ff):
    r = _get(live_server, ff.url("/"), create="1")
    assert r.status_code == 422, r.text[:300]
    code = r.json()["error"]["code"]
    ff.reset_log()
    for _ in range(3):
        again = _get(live_server, ff.url("/"), create="1")
        assert again.status_code == 422
        err = again.json()["error"]
        assert err["code"] == code and err["details"]["cached"] is True and err["details"]["checked_at"]
    assert _thread_requests(ff) == []  # nobody crawls it again while the negative result is fresh
    # once it is older than negative_ttl, the forum is asked again
    app.config["ARBITRO"]["negative_ttl"] = 0.0
    assert _get(live_server, ff.url("/"), create="1").status_code == 422
    assert _thread_requests(ff, "/")


class _NoFight(TinyRuleset):
    """Reads every post and finds no fight: no characters, no verdicts."""

    id = "prova-nessun-combattimento"

    def step(self, state, post):
        return state, []

    def characters(self, state):
        return {}


@pytest.fixture()
def no_fight_ruleset():
    from engine.core import _RULESETS, register

    rs = register(_NoFight())
    yield rs
    _RULESETS.pop(rs.id, None)


def test_audit_without_a_fight_is_not_refreshed_on_every_view(app, live_server, ff, no_fight_ruleset):
    from server.refresh import is_fight

    # the fight is stored first, with the default freshness: with refresh_after=0 its own creation would queue a
    # background refresh whose fetches could land before the log is reset below
    assert _get(live_server, ff.thread_url, create="1").status_code == 200
    cfg = app.config["ARBITRO"]
    cfg["refresh_after"] = 0.0  # a fight is now refreshed in the background on every read
    url = ff.url("/?t=63000001")
    r = _get(live_server, url, create="1", ruleset=no_fight_ruleset.id)
    assert r.status_code == 200, r.text[:300]
    assert not is_fight(r.json()["audit"])
    ff.reset_log()
    for _ in range(3):
        assert _get(live_server, url, ruleset=no_fight_ruleset.id).json()["refreshing"] is False
    assert _thread_requests(ff) == []
    # a fight with the same freshness settings is refreshed when read
    ff.reset_log()
    _get(live_server, ff.thread_url)
    assert wait_until(lambda: _thread_requests(ff, f"/?t={TID}"), timeout=30)


def test_create_counts_against_the_rate_limit(server_config, ff):
    from server.app import create_app

    app = create_app({**server_config, "rate_limit_audits": 1})
    try:
        client = app.test_client()
        assert client.get("/api/v1/threads", query_string={"url": ff.thread_url, "create": "1"}).status_code == 200
        # a stored thread is a read, not a creation: never limited
        assert client.get("/api/v1/threads", query_string={"url": ff.thread_url, "create": "1"}).status_code == 200
        r = client.get("/api/v1/threads", query_string={"url": ff.url("/?t=63000001"), "create": "1"})
        assert r.status_code == 429 and r.headers["Retry-After"]
    finally:
        app.extensions["arbitro"].close()


@pytest.mark.parametrize("value", ["forse", "2"])
def test_bad_create_flag_is_400(client, value):
    r = client.get("/api/v1/threads", query_string={"url": "https://gdr.forumfree.it/?t=1", "create": value})
    assert r.status_code == 400 and r.get_json()["error"]["details"]["field"] == "create"


def test_create_on_a_host_not_allowed_is_403(client):
    r = client.get("/api/v1/threads", query_string={"url": "https://example.com/?t=1", "create": "1"})
    assert r.status_code == 403
