"""`POST /api/v1/threads/provisional`: the page a reader has open, audited at once from its posts' markup, while the
thread's polite crawl starts; the full audit then follows (issue #16, "Instant overlay")."""
from __future__ import annotations

import pytest
import requests
from lxml import etree, html as lxml_html

from tests.plugins.server import FF_PAGES as PAGES, FF_TID as TID, wait_until


def post_markup(path, *, extra=""):
    """The posts as the userscript sends them: each post element's own markup (li.post#ee…), nothing else."""
    doc = lxml_html.fromstring(path.read_bytes())
    els = doc.xpath('//li[contains(concat(" ", @class, " "), " post ") and starts-with(@id, "ee")]')
    return [etree.tostring(el, encoding="unicode", method="html").replace("</li>", extra + "</li>", 1)
            if extra else etree.tostring(el, encoding="unicode", method="html") for el in els]


def _provisional(live, **body):
    return requests.post(f"{live.url}/api/v1/threads/provisional", json=body, timeout=30)


def test_a_page_is_answered_at_once_and_the_full_audit_follows(app, live_server, ff, fixtures_dir):
    page_url = ff.url(f"/?t={TID}&st=15")
    r = _provisional(live_server, url=page_url, posts=post_markup(fixtures_dir / PAGES[1]), page=2, pages=2,
                     ruleset="guida")
    assert r.status_code == 200, r.text[:400]
    doc = r.json()
    assert doc["format"] == "arbitro.audit/1" and doc["ruleset"] == "guida"
    assert len(doc["posts"]) == 3  # the three posts of page 2
    prov = doc["provisional"]
    assert (prov["page"], prov["pages"]) == (2, 2) and prov["retry_after"] == int(r.headers["Retry-After"])
    assert all(p["state"] == {} for p in doc["posts"]) and doc["characters"] == {}
    assert r.headers["Cache-Control"] == "no-store" and r.headers["X-Arbitro-Source"] == "provisional"
    # the crawl was started: the full audit appears without anyone asking for it again
    tid = int(r.headers["X-Arbitro-Thread-Id"])
    full = None

    def stored():
        nonlocal full
        got = requests.get(f"{live_server.url}/api/v1/threads/{tid}", timeout=30)
        full = got.json() if got.status_code == 200 else None
        return full is not None and full.get("audit")

    wait_until(stored, timeout=30)
    keys = {(p["id"], v["code"], v["roll"]) for p in full["audit"]["posts"] for v in p["verdicts"]}
    assert {(p["id"], v["code"], v["roll"]) for p in doc["posts"] for v in p["verdicts"]} <= keys
    assert {p["id"] for p in doc["posts"]} <= {p["id"] for p in full["audit"]["posts"]}


def test_scripts_and_forms_inside_the_posts_are_not_read(app, live_server, ff, fixtures_dir):
    page_url = ff.url(f"/?t={TID}&st=15")
    plain = _provisional(live_server, url=page_url, posts=post_markup(fixtures_dir / PAGES[1]), page=2,
                         ruleset="guida").json()
    hostile = '<script>alert(1)</script><form><input name="sid" value="segreto">[dice=1d12+99]x[/dice]</form>'
    dirty = _provisional(live_server, url=page_url, posts=post_markup(fixtures_dir / PAGES[1], extra=hostile),
                         page=2, ruleset="guida").json()
    strip = lambda d: [[(v["code"], v["roll"]) for v in p["verdicts"]] for p in d["posts"]]  # noqa: E731
    assert strip(dirty) == strip(plain)


@pytest.mark.parametrize("body,status,code", [
    ({"posts": ["<li class='post' id='ee1'></li>"]}, 400, "bad_url"),
    ({"url": "URL", "posts": []}, 400, "bad_pages"),
    ({"url": "URL", "posts": [3]}, 400, "bad_pages"),
    ({"url": "URL", "posts": ["<li></li>"] * 201}, 413, "too_many_posts"),
    ({"url": "URL", "posts": ["<li></li>"], "page": 0}, 400, "bad_pages"),
    ({"url": "URL", "posts": ["<li></li>"], "cookie": "x"}, 400, "unknown_field"),
    ({"url": "https://evil.example.org/?t=1", "posts": ["<li></li>"]}, 403, "host_not_allowed"),
])
def test_bad_requests_are_named_errors(app, live_server, ff, body, status, code):
    if body.get("url") == "URL":
        body = {**body, "url": ff.url(f"/?t={TID}")}
    r = _provisional(live_server, **body)
    assert (r.status_code, r.json()["error"]["code"]) == (status, code), r.text[:300]
