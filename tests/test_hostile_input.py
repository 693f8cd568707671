"""Hostile input to every route and command: a named 4xx (or a named CLI error), never a 500 or a traceback, nothing written."""
from __future__ import annotations

import json
import socket
import sqlite3
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.untrusted import MAX_DEPTH, nesting_depth
from tests.plugins.server import TINY, make_history

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PAGE1 = FIXTURES / "forumfree/topic_62345678_st0.html"
PAGE2 = FIXTURES / "forumfree/topic_62345678_st15.html"
OTHER_THREAD = FIXTURES / "forumfree/topic_63000001_st0.html"
HUGE_ID = "99999999999999999999999"
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def _deep_history() -> str:
    """A valid history document with an object nested 5,000 deep in one post (built as text: json.dumps would recurse)."""
    doc = make_history(2).to_dict()
    doc["posts"][0]["body"] = "@@"
    return json.dumps({"history": doc}).replace('"@@"', '{"a":' * 5000 + "1" + "}" * 5000)


def _other_version_of_page1() -> str:
    """Page 1 as saved at another time: the same page number, different content."""
    text = PAGE1.read_text(encoding="utf-8")
    changed = text.replace("</body>", "<p>salvata più tardi</p></body>", 1)
    assert changed != text
    return changed


# --- the database before and after --------------------------------------------------------------

class NoNetwork:
    """The fetcher of these tests: a body naming an allowed forum gets the forum's failure, and no packet leaves."""

    def get(self, url: str, *args, **kwargs):
        from scraper.errors import FetchFailed

        raise FetchFailed("rete non disponibile nei test", url=url)

    def close(self) -> None:
        pass


@pytest.fixture()
def hostile_app(server_config):
    """The app with a stored thread (so every table has rows) and a rate limit no table row needs to exhaust."""
    from server.app import create_app
    from server.refresh import history_hash, run_replay

    application = create_app({**server_config, "rate_limit_audits": 1_000_000, "refresh_after": 10**9},
                             fetcher_factory=NoNetwork)
    svc = application.extensions["arbitro"]
    history = make_history(4, url="https://gdr.forumfree.it/?t=5")
    rec = svc.storage.get_or_create_thread(history.thread.url, TINY)
    audit = run_replay(history, TINY, None, None)
    doc = history.to_dict()
    svc.storage.save_refresh(rec.id, history=doc, content_hash=history_hash(doc), audit=audit.to_dict(),
                             replayed=audit.replayed, pages=[], log=[])
    application.config["STORED_ID"] = rec.id
    yield application
    svc.close()


@pytest.fixture()
def hostile_client(hostile_app):
    return hostile_app.test_client()


def db_state(app) -> dict[str, object]:
    """Row count of every table and SQLite's integrity check: what "nothing written" is measured by."""
    with sqlite3.connect(app.config["ARBITRO"]["database"]) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        state: dict[str, object] = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
        state["integrity"] = conn.execute("PRAGMA integrity_check").fetchone()[0]
    return state


def assert_named_error(resp, status: int, code: str) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)[:300]
    assert resp.mimetype == "application/json"
    body = json.loads(resp.get_data(as_text=True))
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code, body
    assert "Traceback" not in resp.get_data(as_text=True)
    return body["error"]


# --- every route, the table --------------------------------------------------------------------

JSON = "application/json"
API_CASES = [
    # (name, method, path, request kwargs, status, code)
    ("deep array", "POST", "/api/v1/audits", {"data": DEEP_JSON, "content_type": JSON}, 400, "too_deep"),
    ("deep history", "POST", "/api/v1/audits", {"data": _deep_history(), "content_type": JSON}, 400, "too_deep"),
    ("deep registry TOML", "POST", "/api/v1/audits",
     {"data": json.dumps({"history": make_history(2).to_dict(), "registry": "a = " + "[" * 5000 + "]" * 5000}),
      "content_type": JSON}, 400, "too_deep"),
    ("surrogate in pages", "POST", "/api/v1/audits", {"data": '{"pages": ["\\ud800"]}', "content_type": JSON},
     400, "bad_unicode"),
    ("surrogate in a key", "POST", "/api/v1/audits", {"data": '{"history": {"\\udfff": 1}}', "content_type": JSON},
     400, "bad_unicode"),
    ("surrogate in url", "POST", "/api/v1/audits",
     {"data": '{"url": "https://a.forumfree.it/?t=1\\ud800"}', "content_type": JSON}, 400, "bad_unicode"),
    ("not UTF-8", "POST", "/api/v1/audits", {"data": b'{"pages": ["\xff\xfe"]}', "content_type": JSON}, 400, "bad_json"),
    ("NaN", "POST", "/api/v1/audits", {"data": '{"history": {}, "settings": {"soglia": NaN}}', "content_type": JSON},
     400, "bad_json"),
    ("5,000-digit number", "POST", "/api/v1/audits", {"data": '{"settings": ' + "9" * 5000 + "}",
                                                      "content_type": JSON}, 400, "bad_json"),
    ("text/plain JSON", "POST", "/api/v1/audits",
     {"data": json.dumps({"history": make_history(2).to_dict()}), "content_type": "text/plain"}, 415,
     "unsupported_media_type"),
    ("form body", "POST", "/api/v1/audits", {"data": {"history": "{}"}}, 415, "unsupported_media_type"),
    ("no content type", "POST", "/api/v1/audits", {"data": b"{}"}, 415, "unsupported_media_type"),
    ("JSON in latin-1", "POST", "/api/v1/audits", {"data": b"{}", "content_type": "application/json; charset=latin-1"},
     415, "unsupported_media_type"),
    ("body over the cap", "POST", "/api/v1/audits", {"data": b" " * 2_000_001, "content_type": JSON}, 413, "too_large"),
    ("mixed threads", "POST", "/api/v1/audits",
     {"json": {"pages": [PAGE1.read_text(encoding="utf-8"), OTHER_THREAD.read_text(encoding="utf-8")]}},
     400, "bad_source"),
    ("two versions of page 1", "POST", "/api/v1/audits",
     {"json": {"pages": [PAGE1.read_text(encoding="utf-8"), _other_version_of_page1()]}}, 400, "bad_source"),
    ("too many posts", "POST", "/api/v1/audits",
     {"json": {"history": {"format": "arbitro.history/1", "posts": [{}] * 10_001}}}, 422, "too_many_posts"),
    ("thread id past SQLite", "GET", f"/api/v1/threads/{HUGE_ID}", {}, 404, "thread_not_found"),
    ("next of id past SQLite", "GET", f"/api/v1/threads/{HUGE_ID}/next", {}, 404, "thread_not_found"),
    ("id just past SQLite", "GET", f"/api/v1/threads/{2**63}", {}, 404, "thread_not_found"),
    ("thread id 0", "GET", "/api/v1/threads/0", {}, 404, "thread_not_found"),
    ("negative id", "GET", "/api/v1/threads/-1", {}, 404, "not_found"),
    ("surrogate escape in url", "GET", "/api/v1/threads?url=https://a.forumfree.it/%ED%A0%80?t=1", {}, 404,
     "thread_not_stored"),
    ("deep url", "GET", "/api/v1/threads?url=" + "[" * 5000, {}, 400, "bad_url"),
    ("bad flag", "GET", "/api/v1/threads?url=https://a.forumfree.it/?t=1&create=%ED%A0%80", {}, 400, "bad_flag"),
    ("unknown character", "GET", "/api/v1/threads/{stored}/next?character=%ED%A0%80", {}, 404, "unknown_character"),
    ("POST on a GET route", "POST", "/api/v1/rulesets", {"data": DEEP_JSON, "content_type": JSON}, 405,
     "method_not_allowed"),
]


@pytest.mark.parametrize("name, method, path, kwargs, status, code", API_CASES, ids=[c[0] for c in API_CASES])
def test_every_api_input_gets_its_named_error_and_nothing_is_written(hostile_app, hostile_client, name, method, path,
                                                                     kwargs, status, code):
    before = db_state(hostile_app)
    path = path.replace("{stored}", str(hostile_app.config["STORED_ID"]))
    resp = hostile_client.open(path, method=method, **kwargs)
    err = assert_named_error(resp, status, code)
    assert err["message"] and err["message"].isprintable()
    assert db_state(hostile_app) == before


@pytest.mark.parametrize("path", [f"/audit/{HUGE_ID}", f"/audit/{HUGE_ID}.json", f"/audit/{HUGE_ID}.md",
                                  f"/audit/{2**63}", "/audit/0"])
def test_report_pages_of_ids_past_sqlite_are_404_pages(hostile_app, hostile_client, path):
    before = db_state(hostile_app)
    resp = hostile_client.get(path)
    assert resp.status_code == 404 and resp.mimetype == "text/html"
    assert "Traceback" not in resp.get_data(as_text=True)
    assert db_state(hostile_app) == before


def test_the_stored_thread_is_still_read(hostile_app, hostile_client):
    # the table's ids are refused because they are out of range, not because reads are broken
    resp = hostile_client.get(f"/api/v1/threads/{hostile_app.config['STORED_ID']}")
    assert resp.status_code == 200 and resp.get_json()["audit"]["ruleset"] == TINY


def test_the_same_page_twice_is_read_once_with_a_note(hostile_client):
    page = PAGE1.read_text(encoding="utf-8")
    once = hostile_client.post("/api/v1/audits", json={"pages": [page], "ruleset": "guida"}).get_json()
    twice = hostile_client.post("/api/v1/audits", json={"pages": [page, page], "ruleset": "guida"}).get_json()
    assert [p["id"] for p in twice["posts"]] == [p["id"] for p in once["posts"]]
    assert twice["thread"]["problems"] == once["thread"]["problems"] + [
        "pagina 1: data 2 volte (pages[0], pages[1]), letta una volta"]


def test_a_body_of_exactly_the_cap_is_read(hostile_client):
    body = json.dumps({"history": make_history(2).to_dict()})
    resp = hostile_client.post("/api/v1/audits", data=body + " " * (2_000_000 - len(body)), content_type=JSON)
    assert resp.status_code == 200


def test_depth_limit_is_exact():
    assert nesting_depth('{"a": "[[[[", "b": [[1]]}') == 3
    assert nesting_depth('["\\"[[["]') == 1
    assert nesting_depth("a = [[1]] # [[[[\nb = '[[['") == 2


def test_depth_at_the_limit_is_read_one_past_is_refused(hostile_client):
    def body(levels: int) -> str:
        # settings.x nested so the whole body is `levels` deep (body 1 + settings 1 + the arrays)
        doc = json.dumps({"history": make_history(2).to_dict(), "settings": {"soglia": 3, "x": "@@"}})
        return doc.replace('"@@"', "[" * (levels - 2) + "]" * (levels - 2))

    assert nesting_depth(body(MAX_DEPTH)) == MAX_DEPTH
    resp = hostile_client.post("/api/v1/audits", data=body(MAX_DEPTH), content_type=JSON)
    assert_named_error(resp, 400, "bad_setting")  # read, then judged: `x` is no setting of the ruleset
    err = assert_named_error(hostile_client.post("/api/v1/audits", data=body(MAX_DEPTH + 1), content_type=JSON),
                             400, "too_deep")
    assert err["details"] == {"max_depth": MAX_DEPTH, "depth": MAX_DEPTH + 1}


# --- through waitress, as `arbitro serve` runs it ------------------------------------------------

@pytest.fixture()
def served(hostile_app):
    from server.commands.serve import make_server

    server = make_server(hostile_app, "127.0.0.1", 0, threads=2)

    def run() -> None:
        try:
            server.run()
        except OSError:  # closing the socket under waitress's select loop is how it stops here
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}"
    server.close()
    thread.join(timeout=5)


def _chunks(total: int, size: int = 1_000_000):
    for _ in range(total // size):
        yield b" " * size


@pytest.mark.parametrize("name, kwargs", [
    ("50 MB chunked", {"data": _chunks(50_000_000)}),
    ("3 MB with Content-Length", {"data": b" " * 3_000_000}),
    ("one byte over, chunked", {"data": iter([b" " * 2_000_000, b" "])}),
])
def test_bodies_over_the_cap_get_the_json_413(hostile_app, served, name, kwargs):
    before = db_state(hostile_app)
    resp = requests.post(served + "/api/v1/audits", headers={"Content-Type": JSON}, timeout=30, **kwargs)
    assert resp.status_code == 413 and resp.headers["Content-Type"] == "application/json"
    assert resp.json() == {"error": {"code": "too_large", "message": "richiesta troppo grande",
                                     "details": {"max_bytes": 2_000_000}}}
    assert db_state(hostile_app) == before


def test_a_chunked_body_within_the_cap_is_read(served):
    body = json.dumps({"history": make_history(2).to_dict()}).encode()
    resp = requests.post(served + "/api/v1/audits", data=iter([body[:100], body[100:]]),
                         headers={"Content-Type": JSON}, timeout=30)
    assert resp.status_code == 200 and resp.json()["format"] == "arbitro.audit/1"


def test_huge_headers_and_broken_chunks_are_json_too(served):
    resp = requests.get(served + "/healthz", headers={"X-Lungo": "a" * 300_000}, timeout=30)
    assert resp.status_code == 431 and resp.json()["error"]["code"] == "headers_too_large"
    port = int(served.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /api/v1/audits HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
        answer = b""
        while b"}}" not in answer:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"Content-Type: application/json" in head
    assert json.loads(body)["error"]["code"] == "bad_request"


# --- the command line ---------------------------------------------------------------------------

def _cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    from server.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal_error" not in err
    return code, out, err


def _history_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cronologia.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


CLI_CASES = [
    # (name, command, files to write {name: text or bytes} → argv builder, exit status, error code)
    ("deep history file", "audit", lambda t: [_history_file(t, _deep_history()[len('{"history": '):-1])],
     2, "too_deep"),
    ("deep array file", "audit", lambda t: [_history_file(t, '{"format": "arbitro.history/1", "x": ' + DEEP_JSON + "}")],
     2, "too_deep"),
    ("surrogate in history file", "audit",
     lambda t: [_history_file(t, json.dumps(make_history(2).to_dict()).replace("Turno 1", "\\ud800"))], 2, "bad_unicode"),
    ("too many posts in history file", "audit",
     lambda t: [_history_file(t, json.dumps({"format": "arbitro.history/1", "posts": [{}] * 10_001}))],
     2, "too_many_posts"),
    ("saved page over --max-bytes (scrape)", "scrape", lambda t: [str(PAGE1), "--max-bytes", "1000"], 2,
     "page_too_large"),
    ("saved page over --max-bytes (audit)", "audit", lambda t: [str(PAGE1), "--max-bytes", "1000"], 2,
     "page_too_large"),
    ("history over 10x --max-bytes", "audit",
     lambda t: [_history_file(t, json.dumps(make_history(40).to_dict())), "--max-bytes", "1000"], 2, "page_too_large"),
    ("mixed threads (scrape)", "scrape", lambda t: [str(PAGE1), str(OTHER_THREAD)], 2, "bad_source"),
    ("mixed threads (audit)", "audit", lambda t: [str(PAGE1), str(OTHER_THREAD)], 2, "bad_source"),
    ("two versions of page 1", "scrape", lambda t: [str(PAGE1), _saved(t, "p1-dopo.html", _other_version_of_page1())],
     2, "bad_source"),
    ("deep registry", "scrape", lambda t: [str(PAGE1), "--registry", _saved(t, "reg.toml", "a = " + "[" * 100_000)],
     2, "too_deep"),
    ("deep registry (audit)", "audit", lambda t: [str(PAGE1), "--registry", _saved(t, "reg.toml", "a = " + "{b=" * 5000)],
     2, "too_deep"),
    ("deep forum config", "audit", lambda t: [str(PAGE1), "--forum-config", _saved(t, "f.toml", "a = " + "[" * 5000)],
     2, "too_deep"),
    ("a directory as a page", "scrape", lambda t: [str(t)], 2, "bad_source"),
]


def _saved(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name, command, argv, status, code", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_every_command_names_its_refusal_and_writes_nothing(tmp_path, capsys, name, command, argv, status, code):
    output = tmp_path / "uscita.json"
    got, out, err = _cli(capsys, [command, *argv(tmp_path), "-o", str(output)])
    assert got == status, err
    assert f"arbitro {command}: errore [{code}]: " in err
    assert out == "" and not output.exists()  # nothing half-written


def test_a_sparse_file_past_the_default_cap_is_refused_unread(tmp_path, capsys):
    big = tmp_path / "enorme.html"
    with big.open("wb") as fh:
        fh.truncate(600 * 1024 * 1024)  # 600 MB that occupy no disk: only cap + 1 bytes are ever read
    got, _out, err = _cli(capsys, ["scrape", str(big)])
    assert got == 2
    assert err.strip() == (f"arbitro scrape: errore [page_too_large]: il file {big} supera il limite di 5242880 byte; "
                           "--max-bytes N lo alza")


def test_the_same_file_twice_is_read_once_with_a_note(capsys):
    got, out, err = _cli(capsys, ["scrape", str(PAGE1), str(PAGE2), str(PAGE1)])
    assert got == 0
    once_code, once, _ = _cli(capsys, ["scrape", str(PAGE1), str(PAGE2)])
    assert [p["id"] for p in json.loads(out)["posts"]] == [p["id"] for p in json.loads(once)["posts"]]
    assert f"arbitro scrape: attenzione: lettura incerta, pagina 1: data 2 volte ({PAGE1}, {PAGE1}), letta una volta" \
        in err.splitlines()


def test_max_bytes_raises_the_cap(capsys):
    got, out, _err = _cli(capsys, ["scrape", str(PAGE1), str(PAGE2), "--max-bytes", str(10 * 1024 * 1024)])
    assert got == 0 and len(json.loads(out)["posts"]) == 18


def test_too_many_posts_is_a_named_scraper_error():
    from scraper.errors import NotAThread, TooManyPosts
    from scraper.parse import MAX_POSTS, check_post_count

    check_post_count(MAX_POSTS)
    with pytest.raises(TooManyPosts) as info:
        check_post_count(MAX_POSTS + 1)
    assert isinstance(info.value, NotAThread) and info.value.code == "too_many_posts"
    assert str(info.value) == "la discussione ha 10001 messaggi (al massimo 10000): non sembra un combattimento"


# --- Hypothesis: no body and no query makes a 500 -------------------------------------------------

FIELDS = ["url", "pages", "history", "ruleset", "settings", "registry", "platform"]
any_text = st.text(st.characters(codec=None), max_size=40) | st.sampled_from(
    ["\ud800", "\udfff", "https://gdr.forumfree.it/?t=1", "guida", TINY, "auto", "<html><body>[dice]", "a = [[1]]"])
json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text
json_value = st.recursive(json_leaf, lambda kids: st.lists(kids, max_size=4)
                          | st.dictionaries(any_text | st.sampled_from(FIELDS), kids, max_size=4), max_leaves=20)
HISTORY = make_history(3).to_dict()


def _mutated_history(draw_paths: list, value) -> dict:
    """The valid history with one subtree (chosen by the drawn path) replaced by a drawn JSON value."""
    doc = json.loads(json.dumps(HISTORY))
    node = doc
    for step in draw_paths[:-1]:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        nxt = node[keys[step % len(keys)]]
        if not isinstance(nxt, (dict, list)) or not nxt:
            break
        node = nxt
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    if keys:
        node[keys[draw_paths[-1] % len(keys)]] = value
    return doc


bodies = st.one_of(
    st.dictionaries(st.sampled_from(FIELDS), json_value, max_size=4),
    st.builds(lambda extra: {"history": HISTORY, **extra},  # a good history, hostile options
              st.dictionaries(st.sampled_from(["ruleset", "settings", "registry", "platform"]),
                              json_value | st.just(TINY) | st.just({"soglia": 3}), max_size=3)),
    st.builds(lambda path, v, extra: {"history": _mutated_history(path, v), **extra},
              st.lists(st.integers(0, 50), min_size=1, max_size=5), json_value,
              st.dictionaries(st.sampled_from(["ruleset", "settings", "registry"]), json_value, max_size=2)),
    st.builds(lambda pages, platform: {"pages": pages, "platform": platform},
              st.lists(any_text | st.builds(lambda h, u: {"html": h, "url": u}, any_text, json_value), max_size=3),
              st.sampled_from(["auto", "forumfree", "phpbb", "generic", "nope"])),
)
raw_bodies = st.binary(max_size=200) | st.builds(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass"),
                                                 json_value)
HYPO = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


def _no_500(resp) -> None:
    assert resp.status_code < 500, resp.get_data(as_text=True)[:500]
    if resp.status_code >= 400 and resp.request.path.startswith("/api/"):
        body = resp.get_json()
        assert set(body["error"]) == {"code", "message", "details"}


@HYPO
@given(body=bodies)
def test_hypothesis_audit_bodies_never_500(hostile_client, body):
    _no_500(hostile_client.post("/api/v1/audits", data=json.dumps(body), content_type=JSON))


@HYPO
@given(raw=raw_bodies, ctype=st.sampled_from([JSON, "application/json; charset=utf-8", "text/plain", ""]))
def test_hypothesis_raw_audit_bodies_never_500(hostile_client, raw, ctype):
    _no_500(hostile_client.post("/api/v1/audits", data=raw, content_type=ctype or None))


GET_ROUTES = ["/api/v1/threads", "/api/v1/threads/{id}", "/api/v1/threads/{id}/next", "/api/v1/rulesets",
              "/api/v1/openapi.json", "/healthz", "/audit", "/audit/{id}", "/audit/{id}.json", "/audit/{id}.md", "/",
              "/userscript/arbitro.meta.js", "/demo"]
query_text = st.text(st.characters(codec=None), max_size=30) | st.sampled_from(
    ["https://gdr.forumfree.it/?t=5", "https://gdr.forumfree.it/?t=404", "https://evil.example/?t=1", "1", "Hollow"])


@HYPO
@given(route=st.sampled_from(GET_ROUTES), thread_id=st.integers(0, 2**80) | st.just(1),
       query=st.dictionaries(st.sampled_from(["url", "ruleset", "character", "create", "x"]), query_text, max_size=3),
       body=st.none() | raw_bodies)
def test_hypothesis_every_get_route_never_500(hostile_app, hostile_client, route, thread_id, query, body):
    if query.get("create") not in (None, "", "0") or (route == "/audit" and "url" in query):
        # what would create a thread reads its forum: only the stored, fresh thread, so nothing leaves the machine
        query["url"] = "https://gdr.forumfree.it/?t=5"
        query.pop("ruleset", None)
    path = route.replace("{id}", str(thread_id))
    # the bytes a client would send: a lone surrogate percent-escaped as its (invalid) UTF-8
    qs = "&".join(f"{k}={quote(v.encode('utf-8', 'surrogatepass'), safe='')}" for k, v in query.items())
    _no_500(hostile_client.get(path, query_string=qs, data=body))


def test_after_the_fuzzing_the_database_is_intact(hostile_app, hostile_client):
    for body in ({"history": {"posts": [{"id": "\ud800"}]}}, {"pages": ["<p>\udfff</p>"]}):
        text = json.dumps(body)
        assert hostile_client.post("/api/v1/audits", data=text, content_type=JSON).status_code == 400
    assert db_state(hostile_app)["integrity"] == "ok"
