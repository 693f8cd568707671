"""A page view costs a page: `GET /api/v1/threads?url=…&posts=…` answers those posts only, with the fighters' state,
the next turn and the audit's extent; conditional requests per page (issue #16)."""
from __future__ import annotations

import json

import pytest
import requests

TID = 62345678
HOST = "bleach-gdr.forumfree.it"
PAGES = ["forumfree/topic_62345678_st0.html", "forumfree/topic_62345678_st15.html"]


@pytest.fixture()
def stored(app, live_server, fixtures_dir):
    from tests.forumserver import ForumServer

    srv = ForumServer(fixtures_dir, rewrite_hosts=[HOST])
    srv.start()
    srv.add_thread("forumfree", TID, [fixtures_dir / p for p in PAGES])
    url = srv.url(f"/?t={TID}")
    r = requests.get(f"{live_server.url}/api/v1/threads", params={"url": url, "create": "1", "ruleset": "guida"},
                     timeout=60)
    assert r.status_code == 200, r.text[:300]
    yield url, r.json()
    srv.stop()


def test_a_page_view_carries_its_posts_only(live_server, stored):
    url, whole = stored
    posts = whole["audit"]["posts"]
    page = [p["id"] for p in posts[15:]]
    r = requests.get(f"{live_server.url}/api/v1/threads",
                     params={"url": url, "ruleset": "guida", "posts": ",".join("ee" + i for i in page)}, timeout=30)
    assert r.status_code == 200
    audit = r.json()["audit"]
    assert [p["id"] for p in audit["posts"]] == page  # "ee600270" and "600270" are one post
    assert audit["posts"] == posts[15:]
    assert audit["characters"] == whole["audit"]["characters"] and audit["next"] == whole["audit"]["next"]
    assert audit["page_of"] == {"posts": len(posts), "last_post": posts[-1]["id"], "asked": len(page)}
    assert len(r.content) < len(json.dumps(whole).encode()) / 2
    # per page validators: the same page again is a 304, another page has another ETag
    again = requests.get(f"{live_server.url}/api/v1/threads", params={"url": url, "ruleset": "guida",
                         "posts": ",".join(page)}, headers={"If-None-Match": r.headers["ETag"]}, timeout=30)
    other = requests.get(f"{live_server.url}/api/v1/threads", params={"url": url, "ruleset": "guida",
                         "posts": posts[0]["id"]}, timeout=30)
    assert again.status_code == 304
    assert other.headers["ETag"] != r.headers["ETag"] and [p["id"] for p in other.json()["audit"]["posts"]] == [
        posts[0]["id"]]


@pytest.mark.parametrize("value", ["", ",,", ",".join(str(i) for i in range(201)), "x" * 65])
def test_bad_post_lists_are_named_errors(live_server, stored, value):
    url, _ = stored
    r = requests.get(f"{live_server.url}/api/v1/threads", params={"url": url, "ruleset": "guida", "posts": value},
                     timeout=30)
    assert (r.status_code, r.json()["error"]["code"]) == (400, "bad_posts")
