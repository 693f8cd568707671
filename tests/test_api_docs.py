"""`/api/v1/docs`: the OpenAPI document as an Italian page (server/apidocs.py), and openapi.json naming every error
code the service can answer."""
from __future__ import annotations

import json
import pathlib
import re
from html.parser import HTMLParser

import pytest

from server.apidocs import build_docs, schema_view, Resolver

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = json.loads((ROOT / "server" / "openapi.json").read_text(encoding="utf-8"))
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class _Page(HTMLParser):
    """Tags with their attributes, ids, and the visible text of the whole page and of each element with an id."""

    BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "tr", "div", "section", "summary", "pre", "br", "nav"}
    VOID = {"br", "img", "link", "meta", "input", "hr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()
        self.text_parts: list[str] = []
        self._open: list[tuple[str, str | None, int]] = []  # (tag, id, text index where it opened)
        self.by_id: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids.add(a["id"])
        if tag in self.BLOCKS:
            self.text_parts.append(" ")
        if tag not in self.VOID:
            self._open.append((tag, a.get("id"), len(self.text_parts)))

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag in self.BLOCKS:
            self.text_parts.append(" ")
        while self._open:
            t, ident, start = self._open.pop()
            if ident:
                self.by_id[ident] = _norm("".join(self.text_parts[start:]))
            if t == tag:
                break

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.text_parts.append(data)

    @property
    def text(self) -> str:
        return _norm("".join(self.text_parts))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _plain(text: str) -> list[str]:
    """A description as the page shows it: its paragraphs, backticks gone, whitespace collapsed."""
    return [_norm(p.replace("`", "")) for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


@pytest.fixture()
def docs(client):
    resp = client.get("/api/v1/docs")
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return resp, _parse(resp.get_data(as_text=True))


def _operations(doc):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def _texts(node, keys=("summary", "description")):
    """Every human-readable text of the document (summaries and descriptions, anywhere)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in keys and isinstance(v, str):
                yield v
            yield from _texts(v, keys)
    elif isinstance(node, list):
        for v in node:
            yield from _texts(v, keys)


# --- the page ------------------------------------------------------------------------------------

def test_docs_page_is_html_under_the_pages_csp(docs):
    from server.security import PAGE_CSP

    resp, page = docs
    assert resp.mimetype == "text/html"
    assert resp.headers["Content-Security-Policy"] == PAGE_CSP
    assert "default-src 'none'" in PAGE_CSP and "script-src" not in PAGE_CSP
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    html = resp.get_data(as_text=True)
    assert '<html lang="it">' in html
    # nothing the CSP would block: no script at all, no inline style, no event handler
    assert not [t for t, _ in page.tags if t in ("script", "style", "iframe", "object", "embed")]
    assert not [(t, a) for t, a in page.tags if "style" in a or any(k.startswith("on") for k in a)]


def test_docs_page_loads_nothing_from_elsewhere(docs):
    _, page = docs
    for tag, attrs in page.tags:
        for key in ("src", "href", "action", "srcset"):
            value = attrs.get(key)
            if value is None:
                continue
            assert value.startswith(("/", "#")) and not value.startswith("//"), (tag, key, value)
    styles = [a["href"] for t, a in page.tags if t == "link" and a.get("rel") == "stylesheet"]
    assert "/static/apidocs.css" in styles and "/static/report.css" in styles


def test_stylesheets_are_served(client):
    for name in ("apidocs.css", "report.css"):
        resp = client.get(f"/static/{name}")
        assert resp.status_code == 200 and resp.mimetype == "text/css"
        assert "url(" not in resp.get_data(as_text=True)  # no font, image or import from anywhere


def test_every_in_page_link_has_its_target(docs):
    _, page = docs
    targets = {a["href"][1:] for t, a in page.tags if t == "a" and (a.get("href") or "").startswith("#")}
    assert targets and targets <= page.ids, sorted(targets - page.ids)


def test_every_path_and_method_with_its_responses(docs):
    _, page = docs
    toc = page.by_id.get("indice") or ""
    ops = list(_operations(DOC))
    assert len(ops) == 9  # every route of the API (test_api.py keeps the document in sync with them)
    for path, method, op in ops:
        anchor = "op-" + op["operationId"]
        section = page.by_id[anchor]
        assert section.startswith(f"{method.upper()} {path} "), section[:120]
        assert any(t == "a" and a.get("href") == f"#{anchor}" for t, a in page.tags)  # in the table of contents
        assert f"{method.upper()} {path}" in toc
        for para in _plain(op["summary"]) + _plain(op.get("description", "")):
            assert para in section, (anchor, para)
        for status in op["responses"]:
            assert re.search(rf"(^| ){re.escape(status)} ", section), (anchor, status)
        for param in op.get("parameters", []):
            if "$ref" in param:
                param = Resolver(DOC).lookup(param["$ref"])
            assert param["name"] in section


def test_parameters_are_a_table_with_where_type_and_required(docs):
    _, page = docs
    section = page.by_id["op-getThreadByUrl"]
    assert "nome dove tipo obbligatorio descrizione" in section
    assert "url query stringa (uri) sì L'indirizzo di una pagina qualsiasi della discussione" in section
    assert "create query stringa no 1: avvia il primo audit" in section
    assert "If-None-Match intestazione stringa no" in section
    assert "valori ammessi: 0, 1, true, false, yes, no" in section
    ids = page.by_id["op-getThread"]
    assert "thread_id percorso intero sì" in ids and "massimo: 9.223.372.036.854.775.807" in ids


def test_the_texts_are_the_documents_italian_ones(docs):
    _, page = docs
    text = page.text
    for heading in ("API di Arbitro", "Indice", "Parametri", "Corpo della richiesta", "Risposte", "Formato degli errori",
                    "Codici di errore", "Risposte di errore comuni", "Schemi", "Nessun parametro.", "Obbligatorio.",
                    "obbligatorio", "Esempio"):
        assert heading in text, heading
    for para in (p for t in _texts(DOC) for p in _plain(t)):
        assert para in text, para
    assert "Analizza un combattimento da un URL, da pagine salvate o da una cronologia" in text


def test_a_ref_schema_is_shown_with_its_fields(docs):
    _, page = docs
    audit_op = page.by_id["op-createAudit"]
    # the request body (AuditRequest) and the 200 answer (Audit) are both $refs: their fields are listed
    assert "Schema: AuditRequest (oggetto)" in audit_op
    assert "platform stringa La piattaforma del forum" in audit_op
    assert "Schema: Audit (oggetto)" in audit_op
    for field in ("format obbligatorio costante", "posts obbligatorio array di oggetto", "verdicts obbligatorio array di Verdict",
                  "next obbligatorio NextHint"):
        assert field in audit_op, field
    # nested $refs are links to their own section, where the component shows its fields
    assert page.by_id["schema-Verdict"].startswith("Verdict Tipo: oggetto")
    assert "severity obbligatorio valore" in page.by_id["schema-Verdict"]
    assert "StoredThread" in page.by_id["op-getThread"] and "audit obbligatorio Audit" in page.by_id["op-getThread"]
    for name in DOC["components"]["schemas"]:
        assert f"schema-{name}" in page.ids


def test_error_format_codes_and_examples(docs):
    _, page = docs
    fmt = page.by_id["errori"]
    assert "code obbligatorio stringa Il nome stabile dell'errore" in fmt
    assert '"code": "too_deep"' in fmt  # the schema's example
    codes = page.by_id["codici"]
    for code, status in (("too_deep", "400"), ("bad_unicode", "400"), ("too_large", "413"),
                         ("unsupported_media_type", "415"), ("thread_not_found", "404"), ("rate_limited", "429"),
                         ("method_not_allowed", "405"), ("headers_too_large", "431"), ("not_implemented", "501")):
        assert re.search(rf"{code} (\d+, )*{status}\b", codes), (code, status)
    shared = page.by_id["risposta-RateLimited"]
    assert "Retry-After intero" in shared and '"retry_after": 17' in shared
    # an operation's 404 lists the codes it says it answers, not the shared response's whole list
    nxt = page.by_id["op-getNextHint"]
    assert "unknown_character" in nxt and "thread_not_stored" not in nxt


def test_index_links_to_the_docs(client):
    page = _parse(client.get("/").get_data(as_text=True))
    assert any(t == "a" and a.get("href") == "/api/v1/docs" for t, a in page.tags)
    assert "documentazione dell'API" in page.text


def test_docs_route_refuses_like_the_api(client):
    # a lone surrogate's (invalid) UTF-8 and markup in the query: nothing is read from it
    assert client.get("/api/v1/docs", query_string="x=%ED%A0%80&url=%3Cscript%3E").status_code == 200
    resp = client.post("/api/v1/docs", data=b"{}", content_type="application/json")
    assert resp.status_code == 405 and resp.get_json()["error"]["code"] == "method_not_allowed"


@pytest.mark.browser
def test_docs_page_in_chromium_under_its_csp(app, page):
    from tests.plugins.server import LiveServer

    live = LiveServer(app).start()
    try:
        problems: list[str] = []
        # a CSP refusal is a console error ("Refused to load…"); the browser's own /favicon.ico 404 is not ours
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" and "Failed to load" not in m.text else None)
        page.on("requestfailed", lambda r: problems.append(r.url))
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
                if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
        resp = page.goto(f"{live.url}/api/v1/docs")
        assert resp.status == 200
        assert page.locator("section.operazione").count() == 9
        # the stylesheet passed the CSP: the method badges are coloured, not plain text
        bg = page.locator("span.metodo.post").first.evaluate("e => getComputedStyle(e).backgroundColor")
        assert bg == "rgb(34, 153, 84)"
        assert problems == []
    finally:
        live.stop()


# --- the view model ------------------------------------------------------------------------------

def test_build_docs_resolves_refs_without_following_cycles():
    doc = {
        "openapi": "3.1.0", "info": {"title": "Prova", "version": "9", "description": "Usa `x`.\n\nSecondo paragrafo."},
        "paths": {"/a/{id}": {
            "parameters": [{"$ref": "#/components/parameters/Id"}],
            "get": {"summary": "Leggi", "operationId": "leggi",
                    "responses": {"200": {"description": "ok", "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Nodo"}, "example": {"nome": "n"}}}},
                                  "404": {"$ref": "#/components/responses/Manca", "description": "Nessun `nodo`."},
                                  "default": {"$ref": "#/components/responses/Manca"}}}}},
        "components": {
            "parameters": {"Id": {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}},
            "responses": {"Manca": {"description": "Non c'è.", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Inesistente"},
                "examples": {"manca": {"summary": "manca", "value": {"error": {"code": "manca", "message": "m", "details": {}}},
                                       "x-status": 410}}}}}},
            "schemas": {"Nodo": {"type": "object", "required": ["nome"], "properties": {
                "nome": {"type": "string", "description": "Il `nome`"},
                "figli": {"type": "array", "items": {"$ref": "#/components/schemas/Nodo"}},
                "padre": {"$ref": "#/components/schemas/Nodo"}}}},
        },
    }
    d = build_docs(doc)
    assert d["title"] == "Prova" and len(d["description"]) == 2
    assert d["description"][0] == [{"text": "Usa ", "code": False}, {"text": "x", "code": True}, {"text": ".", "code": False}]
    (op,) = d["operations"]
    assert op["anchor"] == "op-leggi" and op["method"] == "GET"
    assert [(p["name"], p["where"], p["required"], p["schema"]["label"]) for p in op["parameters"]] == [
        ("id", "percorso", True, "intero")]
    ok, missing, other = op["responses"]
    body = ok["contents"][0]["schema"]
    assert body["ref"]["name"] == "Nodo" and [f["name"] for f in body["fields"]] == ["nome", "figli", "padre"]
    figli = body["fields"][1]["schema"]
    assert figli["label"] == "array di Nodo" and figli["element"]["ref"]["anchor"] == "schema-Nodo"
    assert figli["element"]["fields"] == []  # a nested $ref is a link, not expanded again
    assert ok["contents"][0]["examples"][0]["json"] == '{\n  "nome": "n"\n}'
    assert missing["component"]["anchor"] == "risposta-Manca" and missing["description"][0][1]["text"] == "nodo"
    assert missing["codes"] == ["manca"]
    assert d["errors"] == [{"code": "manca", "statuses": ["410"], "summary": [[{"text": "manca", "code": False}]],
                            "section": {"name": "Manca", "anchor": "risposta-Manca", "known": True}}]
    # a $ref to nothing is named, not a crash
    (shared,) = d["responses"]
    assert shared["contents"][0]["schema"]["label"] == "riferimento non risolto"


def test_schema_view_of_a_self_referencing_inline_schema_stops():
    deep: dict = {"type": "object", "properties": {}}
    node = deep
    for _ in range(50):
        child: dict = {"type": "object", "properties": {}}
        node["properties"]["dentro"] = child
        node = child
    view = schema_view(Resolver({}), deep)
    depth = 0
    while view["fields"]:
        view = view["fields"][0]["schema"]
        depth += 1
    assert depth <= 9


def test_the_real_document_builds():
    d = build_docs(DOC)
    assert [o["operation_id"] for o in d["operations"]] == [op["operationId"] for _, _, op in _operations(DOC)]
    assert {s["name"] for s in d["schemas"]} == set(DOC["components"]["schemas"])


# --- every error code the service answers is in openapi.json ---------------------------------------

# Codes the service has that no /api route can answer, each with why (every other code must be documented).
NOT_FROM_THE_API = {
    "service_url_not_configured": "only /userscript/* (an HTML page route) answers it",
    "userscript_not_built": "only /userscript/*",
    "demo_not_running": "only /demo",
    "bad_saved_at": "scraper: only `arbitro scrape/audit --saved-at`",
    "registry_file": "scraper: a request's registry TOML errors are answered 400 bad_registry",
    "forum_config": "scraper: the forum config is read at start-up (ConfigError), never per request",
}


def _documented() -> dict[str, set[str]]:
    """error.code → the statuses openapi.json gives it (the response key, or an example's `x-status`)."""
    found: dict[str, set[str]] = {}
    r = Resolver(DOC)

    def codes_in(response, status):
        for media in (response.get("content") or {}).values():
            values = [(media["example"], None)] if "example" in media else []
            values += [(ex.get("value"), ex.get("x-status")) for ex in (media.get("examples") or {}).values()]
            for value, x_status in values:
                err = value.get("error") if isinstance(value, dict) else None
                if isinstance(err, dict) and isinstance(err.get("code"), str):
                    found.setdefault(err["code"], set()).add(str(x_status or status))

    for _, _, op in _operations(DOC):
        for status, node in op["responses"].items():
            resp, _, _ = r.deref(node)
            codes_in(resp, status)
    return found


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def _raised_codes() -> set[str]:
    """Every error code the server package names: ServiceError classes, `code="…"` and `Refused("…")` in its
    source, the werkzeug and waitress tables; and every scraper error (they reach clients through
    errors.from_scrape_error)."""
    import server.api  # noqa: F401 - defines UnsupportedMediaType
    import server.demo  # noqa: F401
    import server.userscript  # noqa: F401
    import scraper.crawl  # noqa: F401 - BadSource and its subclasses
    import scraper.platforms.config  # noqa: F401 - ForumConfigError
    from scraper.errors import ScrapeError
    from server import errors
    from server.commands.serve import _WAITRESS_ERRORS

    codes = {cls.code for cls in _all_subclasses(errors.ServiceError)} | {errors.ServiceError.code}
    codes |= {cls.code for cls in _all_subclasses(ScrapeError)} | {ScrapeError.code}
    codes |= set(errors._WERKZEUG_CODES.values()) | {code for code, _ in _WAITRESS_ERRORS.values()}
    for path in (ROOT / "server").rglob("*.py"):
        src = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r'\bcode\s*=\s*"([a-z_]+)"', src))
        codes |= set(re.findall(r'\bRefused\(\s*"([a-z_]+)"', src))
    return codes


def test_every_error_code_the_service_raises_is_documented():
    raised = _raised_codes()
    documented = _documented()
    assert set(NOT_FROM_THE_API) <= raised, "an exclusion names a code that no longer exists"
    missing = sorted(raised - set(NOT_FROM_THE_API) - set(documented))
    assert not missing, f"error codes missing from server/openapi.json: {missing}"
    for code in ("too_large", "unsupported_media_type", "too_deep", "bad_unicode", "thread_not_found", "rate_limited"):
        assert code in documented


def test_documented_codes_come_with_their_real_status():
    """A code's status in openapi.json is the one the service answers it with."""
    import server.api  # noqa: F401
    import scraper.crawl  # noqa: F401
    from scraper.errors import ScrapeError
    from server import errors
    from server.commands.serve import _WAITRESS_ERRORS

    documented = _documented()
    expected: dict[str, set[str]] = {}
    for cls in _all_subclasses(errors.ServiceError):
        if cls.code not in NOT_FROM_THE_API:
            expected.setdefault(cls.code, set()).add(str(cls.status))
    for cls in [ScrapeError, *_all_subclasses(ScrapeError)]:
        if cls.code in NOT_FROM_THE_API or cls.code in ("not_found",):  # SourceNotFound: a file path, CLI only
            continue
        err = errors.from_scrape_error(cls())
        expected.setdefault(err.code, set()).add(str(err.status))
    for status, code in errors._WERKZEUG_CODES.items():
        expected.setdefault(code, set()).add(str(status))
    for status, (code, _) in _WAITRESS_ERRORS.items():
        expected.setdefault(code, set()).add(str(status))
    wrong = {code: (sorted(st), sorted(documented.get(code, ()))) for code, st in expected.items()
             if not st <= documented.get(code, set())}
    assert not wrong, f"code: (status answered, status documented): {wrong}"


def test_the_415_and_413_answers_match_the_document(client):
    """Two refusals of a body as the document shows them: a text/plain body, one over max_body_bytes."""
    documented = _documented()
    resp = client.post("/api/v1/audits", data="{}", content_type="text/plain")
    assert resp.status_code == 415 and "415" in documented[resp.get_json()["error"]["code"]]
    cap = client.application.config["MAX_CONTENT_LENGTH"]
    resp = client.post("/api/v1/audits", data=b"[" * (cap + 1), content_type="application/json")
    body = resp.get_json()
    assert resp.status_code == 413 and "413" in documented[body["error"]["code"]]
    assert body["error"]["details"] == {"max_bytes": cap}
