"""The JSON API through Flask's test client: inputs, error statuses, CORS, limits, OpenAPI in sync."""
from __future__ import annotations

import json
import re

import pytest

from engine.history import registry_to_dict, Registry, Character
from tests.plugins.server import TINY, make_history


def _error(resp, status: int, code: str | None = None) -> dict:
    assert resp.status_code == status, resp.data[:300]
    assert resp.mimetype == "application/json"
    body = resp.get_json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    if code:
        assert body["error"]["code"] == code, body
    assert "Traceback" not in resp.get_data(as_text=True)
    return body["error"]


def test_audit_from_history_document(client):
    history = make_history(6).to_dict()
    resp = client.post("/api/v1/audits", json={"history": history})
    assert resp.status_code == 200
    doc = resp.get_json()
    assert doc["format"] == "arbitro.audit/1" and doc["ruleset"] == TINY
    assert [p["id"] for p in doc["posts"]] == [p["id"] for p in history["posts"]]
    assert doc["posts"][4]["verdicts"][0]["code"] == "prova.tiro_basso"
    assert doc["characters"]["Quincy"]["pv"] == 52 - 5 * 2
    assert doc["next"]["character"] == "Hollow"


def test_audit_with_settings_and_registry(client):
    reg = registry_to_dict(Registry(characters={"Hollow": Character("Hollow")}))
    resp = client.post("/api/v1/audits", json={"history": make_history(2).to_dict(), "settings": {"soglia": 3},
                                               "registry": reg})
    assert resp.status_code == 200 and resp.get_json()["settings"] == {"soglia": 3}
    err = _error(client.post("/api/v1/audits", json={"history": make_history(2).to_dict(), "settings": {"nope": 1}}),
                 400, "bad_setting")
    assert err["details"]["field"] == "settings"
    _error(client.post("/api/v1/audits", json={"history": make_history(2).to_dict(), "registry": 12}), 400, "bad_registry")


@pytest.mark.parametrize("body, code", [
    ({}, "bad_source"),
    ({"url": "https://a.forumfree.it/?t=1", "history": {}}, "bad_source"),
    ({"history": {"format": "nope"}}, "bad_history"),
    ({"history": [1, 2]}, "bad_history"),
    ({"history": {"format": "arbitro.history/1", "thread": 3, "posts": []}}, "bad_history"),
    ({"history": {}, "ruleset": "inesistente"}, "unknown_ruleset"),
    ({"history": {}, "ruleset": 12}, "bad_ruleset"),
    ({"history": {}, "colore": "rosso"}, "unknown_field"),
    ({"pages": []}, "bad_pages"),
    ({"pages": [12]}, "bad_pages"),
    ({"url": ""}, "bad_url"),
    ({"url": "ftp://a.forumfree.it/x"}, "bad_url"),
    ({"url": 42}, "bad_url"),
])
def test_bad_input_is_400_with_what_was_wrong(client, body, code):
    err = _error(client.post("/api/v1/audits", json=body), 400, code)
    assert err["message"]


def test_unknown_ruleset_lists_known(client):
    err = _error(client.post("/api/v1/audits", json={"history": {}, "ruleset": "inesistente"}), 400)
    assert TINY in err["details"]["known"]


def test_not_json_body(client):
    _error(client.post("/api/v1/audits", data="non è json", content_type="application/json"), 400, "bad_json")
    _error(client.post("/api/v1/audits", data="[1,2]", content_type="application/json"), 400, "bad_json")


def test_host_not_allowed_is_403(client):
    err = _error(client.post("/api/v1/audits", json={"url": "https://evil.example.com/?t=1"}), 403, "host_not_allowed")
    assert err["details"]["host"] == "evil.example.com"
    _error(client.get("/api/v1/threads", query_string={"url": "https://evil.example.com/?t=1"}), 403)


def test_private_addresses_refused_unless_configured(server_config):
    from server.app import create_app

    cfg = dict(server_config, private_allowlist=[], allowed_hosts=["*.forumfree.it", "10.0.0.1", "localhost"])
    app = create_app(cfg)
    try:
        c = app.test_client()
        for url in ("http://10.0.0.1/?t=1", "http://localhost/?t=1", "http://127.0.0.1/?t=1", "http://[::1]/?t=1"):
            _error(c.post("/api/v1/audits", json={"url": url}), 403, "host_not_allowed")
    finally:
        app.extensions["arbitro"].close()


def test_404s(client):
    _error(client.get("/api/v1/threads", query_string={"url": "https://a.forumfree.it/?t=9"}), 404, "thread_not_stored")
    _error(client.get("/api/v1/threads/12345"), 404, "thread_not_found")
    _error(client.get("/api/v1/threads/12345/next"), 404, "thread_not_found")
    _error(client.get("/api/v1/nothing-here"), 404, "not_found")
    _error(client.get("/api/v1/threads"), 400, "bad_url")
    _error(client.delete("/api/v1/audits"), 405, "method_not_allowed")


def test_body_too_large_is_413(server_config):
    from server.app import create_app

    app = create_app(dict(server_config, max_body_bytes=10_000))
    try:
        c = app.test_client()
        big = {"history": {"format": "arbitro.history/1", "pad": "x" * 20_000}}
        err = _error(c.post("/api/v1/audits", json=big), 413, "too_large")
        assert err["details"]["max_bytes"] == 10_000
        # too many pages in one request is also 413
        app.config["ARBITRO"]["max_pages"] = 2
        _error(c.post("/api/v1/audits", json={"pages": ["<p>a</p>"] * 3}), 413, "too_many_pages")
    finally:
        app.extensions["arbitro"].close()


def test_rate_limit_is_429_with_retry_after(server_config):
    from server.app import create_app

    app = create_app(dict(server_config, rate_limit_audits=3, rate_limit_window=60))
    try:
        c = app.test_client()
        body = {"history": make_history(2).to_dict()}
        for _ in range(3):
            assert c.post("/api/v1/audits", json=body).status_code == 200
        resp = c.post("/api/v1/audits", json=body)
        err = _error(resp, 429, "rate_limited")
        assert 1 <= int(resp.headers["Retry-After"]) <= 60 and err["details"]["limit"] == 3
        # another client is not affected; reads are not limited
        assert c.post("/api/v1/audits", json=body, environ_base={"REMOTE_ADDR": "10.1.1.1"}).status_code == 200
        assert c.get("/api/v1/rulesets").status_code == 200
    finally:
        app.extensions["arbitro"].close()


def test_cors_only_for_forum_origins(client):
    ok = client.get("/api/v1/rulesets", headers={"Origin": "https://gdr.forumfree.it"})
    assert ok.headers["Access-Control-Allow-Origin"] == "https://gdr.forumfree.it"
    pre = client.options("/api/v1/audits", headers={"Origin": "https://gdr.forumfree.it",
                                                    "Access-Control-Request-Method": "POST"})
    assert pre.status_code == 200 and "POST" in pre.headers["Access-Control-Allow-Methods"]
    for origin in ("https://evil.example.com", "http://gdr.forumfree.it", "https://forumfree.it.evil.com", "null"):
        resp = client.get("/api/v1/rulesets", headers={"Origin": origin})
        assert "Access-Control-Allow-Origin" not in resp.headers, origin
    assert "Origin" in client.get("/api/v1/rulesets").headers.get("Vary", "")


def test_rulesets(client):
    doc = client.get("/api/v1/rulesets").get_json()
    assert doc["default"] == TINY
    tiny = next(r for r in doc["rulesets"] if r["id"] == TINY)
    assert tiny["default"] is True
    assert tiny["settings"] == [{"name": "soglia", "default": 5, "description": "tiro minimo senza avviso",
                                 "ours": True, "required": False}]


def test_healthz(client):
    resp = client.get("/healthz")
    assert resp.status_code == 200 and resp.get_json() == {"status": "ok"}


def test_unexpected_errors_are_json_without_traceback(app, client):
    from engine.core import _RULESETS

    class Broken:
        id, title, settings = "rotto", "rotto", ()

        def initial_state(self, *a):
            raise RuntimeError("segreto interno /etc/passwd")

    _RULESETS["rotto"] = Broken()
    try:
        resp = client.post("/api/v1/audits", json={"history": make_history(1).to_dict(), "ruleset": "rotto"})
        err = _error(resp, 500, "internal")
        assert "passwd" not in resp.get_data(as_text=True)
    finally:
        del _RULESETS["rotto"]


def test_secret_never_in_responses(app, client):
    secret = app.config["ARBITRO"]["secret_key"]
    for resp in (client.get("/healthz"), client.get("/api/v1/rulesets"), client.get("/api/v1/openapi.json"),
                 client.post("/api/v1/audits", json={}), client.get("/nope"), client.get("/")):
        assert secret not in resp.get_data(as_text=True)


def _flask_path(rule: str) -> str:
    return re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule)


def test_openapi_in_sync_with_routes(app, client):
    doc = client.get("/api/v1/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    documented = {(path, m.upper()) for path, ops in doc["paths"].items() for m in ops}
    routed = set()
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/") or rule.rule == "/healthz":
            for m in rule.methods - {"HEAD", "OPTIONS"}:
                routed.add((_flask_path(rule.rule), m))
    assert routed == documented
    # every documented error status is one the API produces, and every ref resolves
    text = json.dumps(doc)
    for ref in set(re.findall(r'"\$ref": "#/([^"]+)"', text)):
        node = doc
        for part in ref.split("/"):
            node = node[part]
    # every error answer is documented as the JSON error format, with an example of each code it may carry; the
    # codes of the service's error classes and of werkzeug's refusals are all there (tests/test_api_docs.py checks
    # every code the server names, and each one's status)
    from server import api, errors

    def resolve(node):
        while "$ref" in node:
            ref = node["$ref"]
            node = doc
            for part in ref[2:].split("/"):
                node = node[part]
        return node

    codes = set()
    for path, ops in doc["paths"].items():
        for m, op in ops.items():
            for status, resp in op["responses"].items():
                assert status == "default" or re.fullmatch(r"[1-5]\d\d", status), (path, m, status)
                if status == "default" or int(status) >= 400:
                    media = resolve(resp)["content"]["application/json"]
                    assert media["schema"] == {"$ref": "#/components/schemas/Error"}, (path, m, status)
                    assert media["examples"], (path, m, status)
                    codes |= {ex["value"]["error"]["code"] for ex in media["examples"].values()}
    raised = {cls.code for cls in (errors.BadRequest, errors.Forbidden, errors.NotFound, errors.TooLarge,
                                   errors.Unprocessable, errors.RateLimited, errors.ForumFailed, errors.ForumTimeout,
                                   errors.ServiceError, api.UnsupportedMediaType)}
    assert raised | set(errors._WERKZEUG_CODES.values()) <= codes


def test_next_hint_for_a_character(app, client):
    svc = app.extensions["arbitro"]
    rec = _store(app, make_history(4))
    doc = client.get(f"/api/v1/threads/{rec.id}/next").get_json()
    assert doc["next"]["character"] == "Hollow" and doc["thread_id"] == rec.id
    doc = client.get(f"/api/v1/threads/{rec.id}/next", query_string={"character": "Quincy"}).get_json()
    assert doc["character"] == "Quincy" and doc["next"]["character"] == "Quincy"
    err = _error(client.get(f"/api/v1/threads/{rec.id}/next", query_string={"character": "Nessuno"}), 404,
                 "unknown_character")
    assert err["details"]["known"] == ["Hollow", "Quincy"]
    # after a restart (no audit in memory) the hint is replayed from the stored history
    svc.refresher._audits.clear()
    doc = client.get(f"/api/v1/threads/{rec.id}/next", query_string={"character": "Hollow"}).get_json()
    assert doc["next"]["character"] == "Hollow"


def _store(app, history):
    """Store a thread as a refresh would (real storage, real replay)."""
    from server.refresh import history_hash, run_replay

    svc = app.extensions["arbitro"]
    rec = svc.storage.get_or_create_thread(history.thread.url, TINY)
    audit = run_replay(history, TINY, None, None)
    h = history.to_dict()
    return svc.storage.save_refresh(rec.id, history=h, content_hash=history_hash(h), audit=audit.to_dict(),
                                    replayed=audit.replayed, pages=[], log=[])


def test_stored_thread_by_url_and_etag(app, client):
    rec = _store(app, make_history(3, url="https://gdr.forumfree.it/?t=77"))
    app.config["ARBITRO"]["refresh_after"] = 3600
    app.extensions["arbitro"].storage.save_unchanged(rec.id, pages=[], log=[])  # fresh
    # any page of the thread finds it (offsets dropped), fragments ignored
    resp = client.get("/api/v1/threads", query_string={"url": "https://GDR.forumfree.it/?t=77&st=15#entry3"})
    assert resp.status_code == 200
    doc = resp.get_json()
    assert doc["thread_id"] == rec.id and doc["refreshing"] is False and doc["stale"] is False
    assert doc["audit"]["format"] == "arbitro.audit/1" and len(doc["audit"]["posts"]) == 3
    again = client.get("/api/v1/threads", query_string={"url": "https://gdr.forumfree.it/?t=77"},
                       headers={"If-None-Match": resp.headers["ETag"]})
    assert again.status_code == 304
    assert client.get(f"/api/v1/threads/{rec.id}").get_json()["audit"] == doc["audit"]
    # gzip when accepted, with its own ETag; same document once decoded
    import gzip as _gzip
    z = client.get(f"/api/v1/threads/{rec.id}", headers={"Accept-Encoding": "gzip, deflate"})
    assert z.headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in z.headers["Vary"]
    assert json.loads(_gzip.decompress(z.data)) == doc and z.headers["ETag"] != resp.headers["ETag"]


def test_userscript_served_with_service_url(app, client, tmp_path, monkeypatch):
    import server.userscript as us

    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "arbitro.user.js").write_text(
        "// ==UserScript==\n// @connect __ARBITRO_SERVICE_HOST__\n// @updateURL __ARBITRO_SERVICE_URL__/userscript/"
        "arbitro.meta.js\n// ==/UserScript==\nconst SERVICE = '__ARBITRO_SERVICE_URL__';\n", encoding="utf-8")
    monkeypatch.setattr(us, "DIST", dist)
    # no service_url configured: the request's own URL only on loopback, never a client's Host header
    resp = client.get("/userscript/arbitro.user.js", base_url="http://evil.example:666")
    assert resp.status_code == 503 and "service_url" in resp.get_data(as_text=True)
    resp = client.get("/userscript/arbitro.user.js", base_url="http://127.0.0.1:8080")
    text = resp.get_data(as_text=True)
    assert resp.status_code == 200 and "javascript" in resp.mimetype
    assert "// @connect 127.0.0.1\n" in text
    assert "// @updateURL http://127.0.0.1:8080/userscript/arbitro.meta.js" in text
    assert "__ARBITRO" not in text
    app.config["ARBITRO"]["service_url"] = "https://arbitro.gdr.it/"
    text = client.get("/userscript/arbitro.user.js").get_data(as_text=True)
    assert "const SERVICE = 'https://arbitro.gdr.it';" in text and "@connect arbitro.gdr.it" in text
    # not built yet: a named error page, not a crash
    resp = client.get("/userscript/arbitro.meta.js")
    assert resp.status_code == 404 and "userscript_not_built" in resp.get_data(as_text=True)


def test_real_userscript_served_with_placeholders_replaced(client):
    from server.userscript import DIST

    if not (DIST / "arbitro.user.js").exists():
        pytest.fail("userscript/dist/arbitro.user.js missing: run python3 userscript/build.py")
    client.application.config["ARBITRO"]["service_url"] = "http://arbitro.local:9000"
    for name in ("arbitro.user.js", "arbitro.meta.js"):
        text = client.get(f"/userscript/{name}", base_url="http://other.host").get_data(as_text=True)
        assert "==UserScript==" in text and "__ARBITRO_SERVICE" not in text
        assert re.search(r"@connect\s+arbitro\.local\b", text)
        assert re.search(r"@updateURL\s+http://arbitro\.local:9000/userscript/arbitro\.meta\.js", text)


def test_secret_not_logged(server_config, caplog):
    import logging

    from server.app import create_app

    caplog.set_level(logging.DEBUG)
    app = create_app(dict(server_config, log_level="DEBUG"))
    try:
        app.test_client().post("/api/v1/audits", json={"history": {"format": "x"}})
        assert "configurazione" in caplog.text
        assert server_config["secret_key"] not in caplog.text
    finally:
        app.extensions["arbitro"].close()


def _manifest_pages(fixtures_dir, story="hollow_vs_quincy", skin="ff-current"):
    import json as _json

    manifest = _json.loads((fixtures_dir / "manifest.json").read_text(encoding="utf-8"))
    entries = sorted((e for e in manifest if e.get("story") == story and e.get("skin") == skin
                      and e.get("kind") == "html"), key=lambda e: e["page"])
    return [{"url": e["url"], "html": (fixtures_dir / e["path"]).read_bytes().decode(e["charset"])} for e in entries]


def test_audit_from_saved_pages(client, fixtures_dir):
    pages = _manifest_pages(fixtures_dir)
    resp = client.post("/api/v1/audits", json={"pages": pages, "ruleset": TINY})
    assert resp.status_code == 200, resp.data[:300]
    doc = resp.get_json()
    assert doc["thread"]["platform"] == "forumfree" and len(doc["posts"]) == 18
    assert resp.headers["X-Arbitro-Source"] == "request"
    assert "Niccolò" in {p["author"] for p in doc["posts"]}  # page 2 is ISO-8859-1 on the forum
    _error(client.post("/api/v1/audits", json={"pages": pages, "platform": "myspace"}), 400, "bad_platform")
    err = _error(client.post("/api/v1/audits", json={"pages": ["<html><body><p>ciao</p></body></html>"]}), 422)
    assert err["code"] in ("not_a_thread", "unsupported_platform", "parse_error")



@pytest.mark.parametrize("make, status, code", [
    (lambda e: e.HostNotAllowed(), 403, "host_not_allowed"),
    (lambda e: e.BlockedByRobots(), 403, "blocked_by_robots"),
    (lambda e: e.NotAThread(), 422, "not_a_thread"),
    (lambda e: e.UnsupportedPlatform(), 422, "unsupported_platform"),
    (lambda e: e.SchemaError(), 422, "schema"),
    (lambda e: e.PageTooLarge(), 413, "page_too_large"),
    (lambda e: e.FetchFailed(status=503, url="https://x.forumfree.it/?t=1"), 502, "fetch_failed"),
    (lambda e: e.FetchTimeout(), 504, "fetch_timeout"),
])
def test_scrape_errors_map_to_statuses(make, status, code):
    import scraper.errors as se
    from server.errors import from_scrape_error

    err = from_scrape_error(make(se))
    assert (err.status, err.code) == (status, code) and err.message
    if code == "fetch_failed":
        assert err.details == {"forum_status": 503, "url": "https://x.forumfree.it/?t=1"}


def test_registry_as_toml_text(client, fixtures_dir):
    toml_text = (fixtures_dir / "registry" / "hollow_vs_quincy.toml").read_text(encoding="utf-8")
    ok = client.post("/api/v1/audits", json={"history": make_history(2).to_dict(), "registry": toml_text})
    assert ok.status_code == 200, ok.data[:300]
    err = _error(client.post("/api/v1/audits", json={"history": make_history(2).to_dict(),
                                                     "registry": "[personaggi\nnome = "}), 400, "bad_registry")
    assert err["details"]["line"]
    # a one-line string is TOML text, never a file the service would read
    resp = client.post("/api/v1/audits", json={"history": make_history(2).to_dict(), "registry": "/etc/passwd"})
    assert resp.status_code == 400 and "root:" not in resp.get_data(as_text=True)


def test_canonical_thread_url_one_key_per_thread():
    from server.security import canonical_thread_url as canon

    assert canon("https://f.it/viewtopic.php?f=2&t=312&start=15&sid=abc") == "https://f.it/viewtopic.php?t=312"
    assert canon("https://f.it/viewtopic.php?t=312") == "https://f.it/viewtopic.php?t=312"
    assert canon("https://x.forumfree.it/?t=62345678&st=15") == "https://x.forumfree.it/?t=62345678"
    assert canon("https://x.forumattivo.com/t42p15-duello") == "https://x.forumattivo.com/t42-duello"


def test_report_tolerates_registro_entry_without_amount():
    from server.pages import _registro_text

    assert _registro_text({"amount": None, "resource": "PV", "label": "Cero"}) == "PV [Cero]"
    assert _registro_text({"amount": -8, "resource": "PV", "label": "Cero"}) == "-8 PV [Cero]"


def test_pages_mode_records_which_pages_were_read(client, fixtures_dir):
    page2 = (fixtures_dir / "forumfree" / "topic_62345678_st15.html").read_bytes().decode("utf-8", "replace")
    resp = client.post("/api/v1/audits", json={"pages": [{"html": page2,
                                                          "url": "https://bleach-gdr.forumfree.it/?t=62345678&st=15"}]})
    assert resp.status_code == 200, resp.data[:300]
    thread = resp.get_json()["thread"]
    assert thread["pages"] == 2 and thread["pages_read"] == [2]  # a partial thread says so


def test_url_that_is_not_a_topic_is_refused_before_anything_is_stored(client, app):
    cfg = app.config["ARBITRO"]
    cfg["allowed_hosts"] = [*cfg["allowed_hosts"], "*.forumattivo.com", "forum.example.it"]
    for url in ("https://nonexist-zz-qq.forumfree.it/", "https://arena.forumattivo.com/f3-sezione",
                "https://forum.example.it/viewtopic.php?f=2"):
        resp = client.post("/api/v1/audits", json={"url": url})
        assert resp.status_code == 422, url
        assert resp.get_json()["error"]["code"] == "not_a_thread"
    assert app.extensions["arbitro"].storage.find_thread("https://nonexist-zz-qq.forumfree.it/", "guida") is None
