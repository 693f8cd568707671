"""Browser fixtures: Playwright driving Debian's system Chromium (never a downloaded browser build), plus the
userscript harness: GM.* stubs routed to a real HTTP service, a canned Arbitro service and a forum page server."""
from __future__ import annotations

import html
import json
import os
import pathlib
import re
import shutil
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest
import requests

CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]

ROOT = pathlib.Path(__file__).resolve().parents[2]
USERSCRIPT = ROOT / "userscript" / "dist" / "arbitro.user.js"


def chromium_path() -> str:
    path = os.environ.get("ARBITRO_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("Debian's chromium is not installed: run scripts/test.sh, which installs it")
    return path


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="it-IT")
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


# ---------------------------------------------------------------------------------------------------------------
# Small loopback HTTP servers


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 with a random port, run in a daemon thread."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _ServiceHandler(_QuietHandler):
    def _serve(self, method: str) -> None:
        svc: CannedService = self.server.owner.service  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parsed = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        svc.log.append({"method": method, "path": parsed.path, "query": query, "body": raw.decode("utf-8", "replace")})
        if svc.delay:
            time.sleep(svc.delay)
        status, payload = svc.answer(method, parsed.path, query, raw)
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        self.send(status, body, "application/json")

    def do_GET(self) -> None:  # noqa: N802
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")


@dataclass
class CannedService:
    """Stands in for the Flask service's userscript endpoint (`GET /api/v1/threads?url=…&create=1`, and the
    `POST /api/v1/audits` of older scripts) with canned arbitro.audit/1 documents."""

    stored: dict[str, dict[str, Any]] = field(default_factory=dict)  # canonical url -> audit (GET answers 200)
    postable: dict[str, dict[str, Any]] = field(default_factory=dict)  # url -> audit a create (or POST) makes
    pending: dict[str, int] = field(default_factory=dict)  # url -> how many 202s a create answers first
    override: tuple[int, Any] | None = None  # (status, body) for every request
    refreshing: bool = False
    fetched_at: str = "2026-11-30T12:00:00Z"  # when the canned audits were "made"
    delay: float = 0.0
    log: list[dict[str, Any]] = field(default_factory=list)
    server: _Server | None = None

    def answer(self, method: str, path: str, query: dict[str, str], raw: bytes) -> tuple[int, Any]:
        if self.override:
            return self.override
        if method == "GET" and path == "/api/v1/threads":
            url = query.get("url", "")
            create = query.get("create") == "1"
            if create and url not in self.stored and self.pending.get(url, 0) > 0:
                # the first audit takes longer than the service waits: 202, ask again after Retry-After
                self.pending[url] -= 1
                return 202, {"thread_id": 1, "url": url, "ruleset": "guida", "refreshing": True, "retry_after": 1,
                             "audit": None}
            if create and url in self.postable:
                self.stored[url] = self.postable.pop(url)
            if url in self.stored:
                return 200, {"thread_id": 1, "fetched_at": self.fetched_at, "refreshing": self.refreshing,
                             "audit": self.stored[url]}
            if create:
                return 422, {"error": {"code": "not_a_thread", "message": "non è un thread", "details": {}}}
            return 404, {"error": {"code": "not_found", "message": "thread sconosciuto", "details": {}}}
        if method == "POST" and path == "/api/v1/audits":
            try:
                url = json.loads(raw or b"{}").get("url", "")
            except ValueError:
                return 400, {"error": {"code": "bad_json", "message": "JSON non valido", "details": {}}}
            if url in self.postable:
                self.stored[url] = self.postable.pop(url)
                return 200, self.stored[url]
            return 422, {"error": {"code": "not_a_thread", "message": "non è un thread", "details": {}}}
        return 404, {"error": {"code": "not_found", "message": "nulla qui", "details": {}}}

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def api_calls(self) -> list[dict[str, Any]]:
        return [r for r in self.log if r["path"].startswith("/api/")]


class _ForumHandler(_QuietHandler):
    def do_GET(self) -> None:  # noqa: N802
        forum: ForumServer = self.server.owner.forum  # type: ignore[attr-defined]
        page = forum.pages.get(self.path.split("#")[0])
        if page is None and self.path.startswith("/fixtures/"):
            target = (forum.fixtures / urllib.parse.unquote(self.path[len("/fixtures/"):].split("?")[0])).resolve()
            if forum.fixtures.resolve() in target.parents and target.is_file():
                ctype = "text/html; charset=utf-8" if target.suffix in (".html", ".htm") else "application/octet-stream"
                self.send(200, target.read_bytes(), ctype)
                return
        if page is None:
            self.send(404, b"<!doctype html><title>404</title>", "text/html; charset=utf-8")
            return
        body = page.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if forum.csp:
            self.send_header("Content-Security-Policy", forum.csp)
        self.end_headers()
        self.wfile.write(body)


@dataclass
class ForumServer:
    """Serves forum pages under the platforms' URL schemes (`/?t=…`, `/t<id>-slug`, `/viewtopic.php?t=…`)."""

    pages: dict[str, str]
    fixtures: pathlib.Path
    server: _Server | None = None
    csp: str | None = None  # a Content-Security-Policy header for every page

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url


def _start(handler: type[BaseHTTPRequestHandler], attr: str, obj: Any) -> _Server:
    srv = _Server(handler)
    setattr(srv, attr, obj)
    obj.server = srv
    return srv


def free_port_closed() -> int:
    """A loopback port nobody listens on (for 'service down')."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------------------------
# The userscript harness


def userscript_source(service_url: str) -> str:
    """The built script as the service serves it: placeholders replaced by the service's URL and host."""
    if not USERSCRIPT.exists():
        pytest.fail("userscript/dist/arbitro.user.js missing: run python3 userscript/build.py")
    host = urllib.parse.urlsplit(service_url).hostname or ""
    return (USERSCRIPT.read_text(encoding="utf-8")
            .replace("__ARBITRO_SERVICE_URL__", service_url.rstrip("/"))
            .replace("__ARBITRO_SERVICE_HOST__", host))


GM_STUB = r"""
(() => {
  if (window.top !== window) return;
  window.__arbitroMenu = [];
  window.__arbitroDone = [];
  document.addEventListener("arbitro:done", (e) => window.__arbitroDone.push(e.detail));
  window.GM = {
    xmlHttpRequest(o) {
      window.__arbitroHttp({method: o.method, url: o.url, headers: o.headers || {}, data: o.data ?? null,
                            timeout: o.timeout || 0}).then((r) => {
        if (r.error === "timeout") o.ontimeout && o.ontimeout({});
        else if (r.error) o.onerror && o.onerror({error: r.error});
        else o.onload && o.onload({status: r.status, responseText: r.text, finalUrl: o.url});
      });
    },
    getValue: (k, d) => window.__arbitroStore("get", k, null).then((v) => (v === null || v === undefined ? d : v)),
    setValue: (k, v) => window.__arbitroStore("set", k, v),
    registerMenuCommand: (label, fn) => { window.__arbitroMenu.push({label, fn}); },
  };
})();
"""


# An older manager (Tampermonkey/Violentmonkey before GM.*, Greasemonkey 3): only the GM_* functions, synchronous
# storage, no `GM` object. Values live in the page (seeded from the harness store) and are mirrored test-side.
LEGACY_GM_STUB = r"""
(() => {
  if (window.top !== window) return;
  window.__arbitroMenu = [];
  window.__arbitroDone = [];
  document.addEventListener("arbitro:done", (e) => window.__arbitroDone.push(e.detail));
  const values = __SEED__;
  window.GM_xmlhttpRequest = (o) => {
    window.__arbitroHttp({method: o.method, url: o.url, headers: o.headers || {}, data: o.data ?? null,
                          timeout: o.timeout || 0}).then((r) => {
      if (r.error === "timeout") o.ontimeout && o.ontimeout({});
      else if (r.error) o.onerror && o.onerror({error: r.error});
      else o.onload && o.onload({status: r.status, responseText: r.text, finalUrl: o.url});
    });
  };
  window.GM_getValue = (k, d) => (k in values ? values[k] : d);
  window.GM_setValue = (k, v) => { values[k] = v; window.__arbitroStore("set", k, v); };
  window.GM_registerMenuCommand = (label, fn) => { window.__arbitroMenu.push({label, fn}); };
})();
"""


@dataclass
class GMHarness:
    """A browser context whose pages get the GM stub and the userscript; GM storage and HTTP live test-side."""

    context: Any
    service_url: str
    store: dict[str, Any] = field(default_factory=dict)
    http_log: list[dict[str, Any]] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    legacy: bool = False  # only GM_* functions, no GM object

    def install(self, with_script: bool = True) -> None:
        self.context.expose_binding("__arbitroHttp", self._http)
        self.context.expose_binding("__arbitroStore", self._store)
        if self.legacy:
            self.context.add_init_script(LEGACY_GM_STUB.replace("__SEED__", json.dumps(self.store)))
        else:
            self.context.add_init_script(GM_STUB)
        if with_script:
            src = userscript_source(self.service_url)
            # @run-at document-idle: after the DOM is parsed, like the managers do.
            self.context.add_init_script(
                "(() => { if (window.top !== window) return; const run = () => {\n" + src + "\n};\n"
                "if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run, {once: true});"
                " else run(); })();")

    def _http(self, source: Any, req: dict[str, Any]) -> dict[str, Any]:
        # Real HTTP to the service, as the manager's GM.xmlHttpRequest would do it.
        self.http_log.append(req)
        timeout = (req.get("timeout") or 30000) / 1000 + 0.5
        try:
            r = requests.request(req["method"], req["url"], headers=req.get("headers") or {},
                                 data=(req.get("data") or None), timeout=timeout)
        except requests.Timeout:
            return {"error": "timeout"}
        except requests.RequestException as e:
            return {"error": type(e).__name__}
        return {"status": r.status_code, "text": r.text}

    def _store(self, source: Any, op: str, key: str, value: Any = None) -> Any:
        if op == "set":
            self.store[key] = value
            return None
        return self.store.get(key)

    def set_settings(self, **values: Any) -> None:
        current = json.loads(self.store.get("settings") or "{}")
        current.update(values)
        self.store["settings"] = json.dumps(current)

    def new_page(self) -> Any:
        pg = self.context.new_page()
        pg.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        return pg

    def open(self, url: str, pg: Any = None, wait: bool = True) -> Any:
        pg = pg or self.new_page()
        pg.goto(url, wait_until="load")
        if wait:
            wait_done(pg)
        return pg


def wait_final(pg: Any, timeout: float = 15000) -> str:
    """The first outcome after any provisional page (a first view that waits for its audit shows one meanwhile)."""
    pg.wait_for_function("window.__arbitroDone && window.__arbitroDone.some(o => o !== 'provisional')",
                         timeout=timeout)
    return pg.evaluate("window.__arbitroDone.find(o => o !== 'provisional')")


def wait_done(pg: Any, count: int = 1, timeout: float = 15000) -> str:
    """Waits for the script's `arbitro:done` event (count-th one) and returns its outcome."""
    pg.wait_for_function(f"window.__arbitroDone && window.__arbitroDone.length >= {count}", timeout=timeout)
    return pg.evaluate(f"window.__arbitroDone[{count - 1}]")


# ---------------------------------------------------------------------------------------------------------------
# Synthetic fight pages per platform/skin, built from the platforms' documented markup (DESIGN.md), and the
# matching canned audits. Hostile strings sit where posts put user text: names, labels, hints, verdict values.

HOSTILE_HTML = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'
HOSTILE_LINK = '<a href="javascript:window.__pwned=1">clicca qui</a>'


@dataclass(frozen=True)
class FightPost:
    id: str
    author: str
    character: str | None
    rolls: tuple[tuple[str, int, int], ...]  # (expression, face, total)
    text: str
    in_audit: bool = True


@dataclass(frozen=True)
class Fight:
    key: str  # platform/skin key
    platform: str
    skin: str
    path: str  # URL path + query the forum server answers
    canonical_path: str  # what the script must send as the thread URL (after origin)
    posts: tuple[FightPost, ...]
    dark: bool = False
    hostile_names: bool = False

    def audit(self, origin: str) -> dict[str, Any]:
        return make_audit(self, origin)


def fight_posts(base: int, hostile_names: bool = False) -> tuple[FightPost, ...]:
    luca = f"Luca{HOSTILE_HTML}" if hostile_names else "Luca"
    hollow = f"Hollow{HOSTILE_HTML}" if hostile_names else "Hollow"
    return (
        FightPost(str(base + 1), "Marco", "Quincy", (("1d12+6", 7, 13),), "Quincy attacca con Colpo Rapido."),
        FightPost(str(base + 2), luca, hollow, (("1d12+4", 9, 13), ("1d15+2", 11, 13)),
                  "Hollow schiva e contrattacca."),
        FightPost(str(base + 3), "Marco", None, (), f"OT: scusate il ritardo {HOSTILE_HTML}", in_audit=False),
        FightPost(str(base + 4), "Marco", "Quincy", (("1d12+6", 10, 16),), "Quincy para."),
        FightPost(str(base + 5), luca, hollow, (("1d18+3", 12, 15),), "Hollow usa Lama Oscura."),
    )


def make_audit(fight: Fight, origin: str) -> dict[str, Any]:
    p = fight.posts
    quincy, hollow = p[0].character, p[1].character
    url = origin + fight.canonical_path
    def st(qpv: int, hpv: int, hstacks: Any = None) -> dict[str, Any]:
        return {
            quincy: {"pv": qpv, "pv_max": 52, "pe": 45, "pe_max": 45, "stacks": {}, "conditions": []},
            hollow: {"pv": hpv, "pv_max": 60, "pe": 38, "pe_max": 40, "stacks": hstacks or {}, "conditions": []},
        }
    posts = [
        {"id": p[0].id, "author": p[0].author, "character": quincy, "url": f"{url}#p{p[0].id}", "verdicts": [],
         "state": st(52, 60)},
        {"id": p[1].id, "author": p[1].author, "character": hollow, "url": f"{url}#p{p[1].id}", "verdicts": [
            {"code": "dice.missing_modifier", "severity": "error",
             "message": "Manca il malus di Sbilanciamento (−1) nel tiro di difesa.",
             "rule": "Stack › Sbilanciamento", "post": p[1].id, "roll": 1, "expected": 12, "found": 13},
            {"code": "registro.mismatch", "severity": "warning", "message": "Il Registro non torna con i danni subiti.",
             "rule": "Registro", "post": p[1].id, "roll": None, "expected": 44, "found": HOSTILE_LINK},
         ], "state": st(46, 60, {"Sbilanciamento": {"count": 1, "expires": f"post {p[3].id}"}})},
        {"id": p[3].id, "author": p[3].author, "character": quincy, "url": f"{url}#p{p[3].id}", "verdicts": [
            {"code": "damage.rounding", "severity": "warning", "message": "Danno arrotondato per eccesso.",
             "rule": "Calcolo dei Danni › Arrotondamenti", "post": p[3].id, "roll": 0, "expected": 8, "found": 9,
             "assumption": "arrotondamento per difetto (RULINGS 3)"},
         ], "state": st(46, 52, {"Sbilanciamento": 1})},
        {"id": p[4].id, "author": p[4].author, "character": hollow, "url": f"{url}#p{p[4].id}", "verdicts": [
            {"code": "ruling.needed", "severity": "info",
             "message": f"Serve il Potenziale di Lama Oscura {HOSTILE_HTML}", "rule": "Regolamento Tecniche",
             "post": p[4].id, "roll": None, "expected": None, "found": None},
         ], "state": st(40, 52)},
    ]
    return {
        "format": "arbitro.audit/1", "ruleset": "guida",
        "thread": {"url": url, "platform": fight.platform, "host": "127.0.0.1", "thread_id": "1",
                   "title": "Duello nel bosco", "pages": 1, "fetched_at": "2026-11-30T12:00:00Z", "skin": fight.skin},
        "settings": {},
        "posts": posts,
        "characters": posts[-1]["state"],
        "next": {
            "character": quincy,
            "incoming": [{"from": hollow, "action": "Attacco", "technique": "Lama Oscura", "total": 15, "roll": 0,
                          "post": p[4].id}],
            "stats": {"Destrezza": 6, "Forza": {"base": 4, "bonus": 2, "total": 6}},
            "stacks": [{"name": "Sbilanciamento", "count": 1, "effect": "−1 ai tiri della Fase Difensiva",
                        "remaining": 1}],
            "registro": ["−6 PV (Lama Oscura di Hollow)"],
            "dice_tags": [
                {"label": f"Difesa: Schivata {HOSTILE_HTML}",
                 "tag": "[dice=1d12+5]Difesa [Schivata] (Hollow vs Quincy): (+6 [Destrezza] −1 [Sbilanciamento])[/dice]"},
                {"label": "Attacco: Colpo Rapido",
                 "tag": "[dice=1d12+6]Attacco [Colpo Rapido] (Quincy vs Hollow): (+6 [Destrezza])[/dice]"},
            ],
            "hints": [f"Ricorda la Preparazione {HOSTILE_LINK}"],
            "future_field": {"ignored": True},
        },
    }


def _e(s: str) -> str:
    return html.escape(s, quote=True)


def _roll_html(platform: str, rolls: tuple[tuple[str, int, int], ...]) -> str:
    if platform == "phpbb":
        return "".join(f'<div class="dicebox">{e} =&gt; {f} =&gt; {t}</div>' for e, f, t in rolls)
    return "".join(f"<p>Lancio: <b>{e}</b> → {f} → {t}</p>" for e, f, t in rolls)


def _gm_dice_post(fight: Fight, post: FightPost, gm_id: int) -> str:
    lines = "".join(f"<br>'Dado {e}' : <span class=\"face\">{f}</span> (totale {t})" for e, f, t in post.rolls)
    body = (f"Il membro '{_e(post.author)}' ha effettuato la seguente azione : Lancio di dadi<br>{lines}")
    return _forumotion_post(fight, str(gm_id), "Game Master", body)


def _forumotion_post(fight: Fight, pid: str, author: str, body: str) -> str:
    a = f'<a href="/u{len(author)}">{_e(author)}</a>'
    if fight.skin == "phpbb2":
        return (f'<tr class="post--{pid}" id="p{pid}"><td class="row1" width="150"><span class="name"><strong>{a}'
                f'</strong></span><br><span class="postdetails">Membro</span></td><td class="row1">'
                f'<div class="postbody"><div>{body}</div></div></td></tr>')
    if fight.skin == "phpbb3":
        return (f'<div class="post row1 post--{pid}" id="p{pid}"><div class="inner"><div class="postbody" '
                f'style="float:left;width:75%"><p class="author">da {a}</p><div class="content"><div>{body}</div></div>'
                f'</div><dl class="postprofile" style="float:right;width:22%"><dt>{a}</dt><dd>Membro</dd></dl>'
                f'<div style="clear:both"></div></div></div>')
    return (f'<div class="post post--{pid}" id="p{pid}"><div class="postprofile-head"><div class="postprofile-name">'
            f'{a}</div></div><div class="post-entry"><div>{body}</div></div></div>')


def fight_page(fight: Fight) -> str:
    colors = ("#1b1b1f", "#d8d8d8", "#2a2a30") if fight.dark else ("#ffffff", "#222222", "#f2f2f6")
    css = (f"body{{background:{colors[0]};color:{colors[1]};font:14px/1.5 Verdana,sans-serif;margin:20px}}"
           f".post,li.post,.postbody,table.forumline td{{background:{colors[2]}}}"
           ".post,li.post{margin:0 0 12px;padding:8px;list-style:none}a{color:#4a8ad4}"
           "textarea{width:600px;height:120px;display:block}")
    rows: list[str] = []
    gm_id = int(fight.posts[-1].id) + 100
    for post in fight.posts:
        # Forumotion players do not roll in their post: the Game Master's post after it has the dice.
        rolls = "" if fight.platform == "forumotion" else _roll_html(fight.platform, post.rolls)
        body = f"<p>{_e(post.text)}</p>{rolls}"
        if fight.platform == "forumfree":
            if fight.skin == "ff-current":
                rows.append(
                    f'<li class="post" id="ee{post.id}"><a id="entry{post.id}"></a><table width="100%"><tr>'
                    f'<td class="left Item" width="160"><div class="nick"><a href="/?act=Profile&amp;MID=7">'
                    f'{_e(post.author)}</a></div><div class="u_rank">Membro</div></td><td class="right Item">'
                    f'<div class="when" title="30/11/2026, 12:00">30/11/2026</div><table class="color"><tr><td>'
                    f'{body}</td></tr></table></td></tr></table></li>')
            else:
                # the classic table skin as the real pages serve it (../shared/real/forumfree-classic/)
                rows.append(
                    f'<div class="anchor"><a id="entry{post.id}"></a></div><table id="ee{post.id}" width="100%"><tr>'
                    f'<td class="post"><table class="main6" width="100%"><tr><td class="left_top">'
                    f'<div class="nick"><a href="/?act=Profile&amp;MID=7">{_e(post.author)}</a></div></td>'
                    f'<td class="right_top"><a href="/?t=102#entry{post.id}" title="30/11/2026, 12:00:00">'
                    f'<b>Inviato il:</b> 30/11/2026, 12:00</a></td></tr><tr><td class="left" width="160"></td>'
                    f'<td class="right"><div class="color">{body}</div></td></tr></table></td></tr></table>')
        elif fight.platform == "forumotion":
            rows.append(_forumotion_post(fight, post.id, post.author, body))
            if post.rolls:
                rows.append(_gm_dice_post(fight, post, gm_id))
                gm_id += 1
        else:
            rows.append(
                f'<div class="post bg1" id="p{post.id}"><div class="inner"><div class="postbody" '
                f'style="float:left;width:76%"><h3><a href="#p{post.id}">Re: Duello nel bosco</a></h3>'
                f'<p class="author">da <strong><a href="./memberlist.php?mode=viewprofile&amp;u=2" class="username">'
                f'{_e(post.author)}</a></strong> » 30 nov 2026</p><div class="content">{body}</div></div><dl class="postprofile" style="float:right;width:22%">'
                f'<dt><a href="./memberlist.php?mode=viewprofile&amp;u=2" class="username">{_e(post.author)}</a></dt>'
                f'<dd>Messaggi: 12</dd></dl><div style="clear:both"></div></div></div>')
    if fight.platform == "forumfree":
        posts = f'<ul class="posts" style="padding:0">{"".join(rows)}</ul>' if fight.skin == "ff-current" else "".join(rows)
        reply = '<form id="send" name="REPLIER"><textarea name="Post"></textarea></form>'
        body_attr = ' id="topic"'
    elif fight.platform == "forumotion":
        posts = (f'<table class="forumline" width="100%">{"".join(rows)}</table>' if fight.skin == "phpbb2"
                 else "".join(rows))
        reply = '<form id="quick_reply"><textarea id="text_editor_textarea" name="message"></textarea></form>'
        body_attr = ""
    else:
        posts = "".join(rows)
        reply = '<form id="qr_postform"><textarea id="message" name="message"></textarea></form>'
        body_attr = ' id="phpbb"'
    return (f'<!doctype html><html lang="it"><head><meta charset="utf-8"><title>Duello nel bosco</title>'
            f"<style>{css}</style></head><body{body_attr}><h2 class=\"topic-title\">Duello nel bosco</h2>"
            f'<div id="posts">{posts}</div>{reply}<p><a id="forum-link" href="#bottom">fondo</a></p></body></html>')


FIGHTS: tuple[Fight, ...] = (
    Fight("forumfree", "forumfree", "ff-current", "/?t=101", "/?t=101", fight_posts(5000)),
    Fight("forumfree-classic", "forumfree", "ff-classic", "/?t=102&st=0", "/?t=102", fight_posts(5100)),
    Fight("forumotion-phpbb2", "forumotion", "phpbb2", "/t201-duello-nel-bosco", "/t201-duello-nel-bosco",
          fight_posts(6000)),
    Fight("forumotion-phpbb3", "forumotion", "phpbb3", "/t202p0-duello-nel-bosco", "/t202-duello-nel-bosco",
          fight_posts(6200)),
    Fight("forumotion-invision", "forumotion", "invision", "/t203-duello-nel-bosco", "/t203-duello-nel-bosco",
          fight_posts(6400), dark=True),
    Fight("phpbb", "phpbb", "prosilver", "/viewtopic.php?t=301", "/viewtopic.php?t=301", fight_posts(7000)),
)
HOSTILE_FIGHT = Fight("phpbb-hostile", "phpbb", "prosilver", "/viewtopic.php?t=302", "/viewtopic.php?t=302",
                      fight_posts(7100, hostile_names=True), hostile_names=True)
DARK_FF = Fight("forumfree-dark", "forumfree", "ff-current", "/?t=103", "/?t=103", fight_posts(5200), dark=True)


def sceditor_form(mode: str) -> str:
    """The quick reply as SCEditor leaves it: its container (toolbar, WYSIWYG iframe, source textarea) next to the
    forum's textarea, hidden; in WYSIWYG mode the source textarea is hidden, in source mode the iframe."""
    frame_style, source_style = ("", "display:none") if mode == "wysiwyg" else ("display:none", "")
    body = "<p>Rispondo così:</p>" if mode == "wysiwyg" else ""
    frame = _e(f'<!doctype html><html><body contenteditable="true">{body}</body></html>')
    return (f'<form id="quick_reply"><div class="sceditor-container ltr {mode}Mode">'
            f'<div class="sceditor-toolbar"><a class="sceditor-button">B</a></div>'
            f'<iframe frameborder="0" style="{frame_style}" srcdoc="{frame}"></iframe>'
            f'<textarea style="{source_style}">{"Rispondo così:" if mode == "source" else ""}</textarea></div>'
            f'<textarea id="text_editor_textarea" name="message" style="display:none"></textarea></form>')


def all_pages() -> dict[str, str]:
    pages = {f.path: fight_page(f) for f in (*FIGHTS, HOSTILE_FIGHT, DARK_FF)}
    # Not a fight: a forum index (no posts) and a plain discussion thread (the service finds no fight in it).
    pages["/index.php"] = ('<!doctype html><html><head><meta charset="utf-8"><title>Indice</title></head><body>'
                           '<h1>Indice del forum</h1><ul><li><a href="/?t=101">Duello</a></li></ul></body></html>')
    # Forumotion's SCEditor: the forum's textarea hidden behind the editor's own (source mode) or an iframe
    # (WYSIWYG mode); the editor copies its content back into it when the form is sent
    fo = next(f for f in FIGHTS if f.key == "forumotion-phpbb3")
    for mode in ("wysiwyg", "source"):
        pages[f"{fo.path}?sce={mode}"] = fight_page(fo).replace(
            '<form id="quick_reply"><textarea id="text_editor_textarea" name="message"></textarea></form>',
            sceditor_form(mode))
    chat = Fight("chat", "phpbb", "prosilver", "/viewtopic.php?t=399", "/viewtopic.php?t=399", fight_posts(7900))
    pages[chat.path] = fight_page(chat)
    return pages


def quiet_audit(fight: Fight, origin: str) -> dict[str, Any]:
    """An audit of a thread with no fight in it: posts without verdicts or state, no characters."""
    doc = make_audit(fight, origin)
    for p in doc["posts"]:
        p["verdicts"], p["state"] = [], {}
    doc["characters"], doc["next"] = {}, {}
    return doc


# ---------------------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session")
def forum_server(fixtures_dir: pathlib.Path):
    forum = ForumServer(pages=all_pages(), fixtures=fixtures_dir)
    srv = _start(_ForumHandler, "forum", forum)
    try:
        yield forum
    finally:
        srv.close()


@pytest.fixture()
def canned_service(forum_server: ForumServer):
    """A canned Arbitro service knowing every synthetic fight page (audits keyed by canonical thread URL)."""
    svc = CannedService()
    for f in (*FIGHTS, HOSTILE_FIGHT, DARK_FF):
        svc.stored[forum_server.url + f.canonical_path] = f.audit(forum_server.url)
    srv = _start(_ServiceHandler, "service", svc)
    try:
        yield svc
    finally:
        srv.close()


@pytest.fixture()
def gm_factory(browser) -> Any:
    """gm_factory(service_url, with_script=True, legacy=False) -> GMHarness on a fresh context (clipboard allowed);
    `legacy`: an older manager with only the GM_* functions."""
    contexts: list[Any] = []

    def make(service_url: str, with_script: bool = True, legacy: bool = False, **ctx_args: Any) -> GMHarness:
        ctx = browser.new_context(viewport=ctx_args.pop("viewport", {"width": 1280, "height": 900}), locale="it-IT",
                                  permissions=["clipboard-read", "clipboard-write"], **ctx_args)
        contexts.append(ctx)
        # No network in tests but loopback: the fixture pages link forum CDNs, and a hostile post redirects away.
        ctx.route(re.compile(r"^(?!(https?://127\.0\.0\.1[:/]|data:|blob:|about:))"), lambda route: route.abort())
        gm = GMHarness(ctx, service_url, legacy=legacy)
        gm.install(with_script)
        return gm

    yield make
    for ctx in contexts:
        ctx.close()


@pytest.fixture()
def gm(gm_factory: Callable[..., GMHarness], canned_service: CannedService) -> GMHarness:
    return gm_factory(canned_service.url)


# ---------------------------------------------------------------------------------------------------------------
# The shared fixture pages (fixtures/, generated by fixtures/make_fixtures.py) with canned audits of their posts.

GM_DICE_TEXT = "effettuato la seguente azione"


@dataclass(frozen=True)
class FixturePost:
    id: str
    author: str
    has_roll: bool
    dice_post: bool  # a Forumotion Game-Master dice post: belongs to the post before it


def fixture_fight_pages(fixtures_dir: pathlib.Path) -> list[dict[str, Any]]:
    entries = json.loads((fixtures_dir / "manifest.json").read_text(encoding="utf-8"))
    return [e for e in entries if e.get("kind") == "html" and e.get("story")]


def fixture_posts(data: bytes, platform: str, skin: str) -> list[FixturePost]:
    """The posts of a fixture page as the fixture generator writes them (what the script must find)."""
    import lxml.html

    doc = lxml.html.fromstring(data)
    out: list[FixturePost] = []
    # a roll of the poster's own: ForumFree's roller block (details.dice-roll), not one inside a quote
    ff_roll = ".//*[contains(@class,'dice-roll') or contains(@class,'dice_roll')][not(ancestor::div[contains(@class,'quote')])]"
    if platform == "forumfree" and skin == "ff-classic":
        # the real classic table skin: table#ee<id> > td.post, the nick in td.left_top
        for table in doc.xpath("//table[starts-with(@id,'ee')][.//td[contains(concat(' ',@class,' '),' post ')]]"):
            author = " ".join("".join(table.xpath(".//td[@class='left_top']//div[@class='nick']//text()")).split())
            out.append(FixturePost(table.get("id")[2:], author, bool(table.xpath(ff_roll)), False))
    elif platform == "forumfree":
        for li in doc.xpath("//li[starts-with(@id,'ee')]"):
            author = "".join(li.xpath(".//div[@class='nick']//a//text()")).strip()
            out.append(FixturePost(li.get("id")[2:], author, bool(li.xpath(ff_roll)), False))
    elif platform == "forumotion":
        els = [e for e in doc.xpath("//*[@id]") if re.fullmatch(r"p\d+", e.get("id"))]
        for i, el in enumerate(els):
            text = el.text_content()
            names = el.xpath(".//p[@class='author']//strong//text() | .//span[@class='name']//strong//text()"
                             " | .//h4[@class='author']//strong//text()"
                             " | .//div[@class='postprofile-name']//strong//text()")
            nxt = els[i + 1].text_content() if i + 1 < len(els) else ""
            out.append(FixturePost(el.get("id")[1:], (names[0] if names else "").strip(),
                                   GM_DICE_TEXT in nxt and GM_DICE_TEXT not in text, GM_DICE_TEXT in text))
    else:
        for el in doc.xpath("//div[starts-with(@id,'p')][contains(@class,'post')]"):
            names = el.xpath(".//p[@class='author']//a[contains(@class,'username')]//text()")
            has_roll = bool(el.xpath(".//div[@class='content']//div[@class='dicebox'][not(ancestor::blockquote)]"))
            out.append(FixturePost(el.get("id")[1:], (names[0] if names else "").strip(), has_roll, False))
    return out


def canonical_thread_url(url: str, platform: str) -> str:
    """What the script sends for a page URL: the thread without the page offset."""
    parts = urllib.parse.urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if platform == "forumfree":
        return f"{origin}/?t={dict(urllib.parse.parse_qsl(parts.query))['t']}"
    if platform == "forumotion":
        m = re.match(r"^/t(\d+)(?:p\d+)?(-[^/?#]*)?", parts.path)
        assert m
        return f"{origin}/t{m.group(1)}{m.group(2) or ''}"
    return f"{origin}{parts.path}?t={dict(urllib.parse.parse_qsl(parts.query))['t']}"


def fixture_audit(posts: list[FixturePost], thread_url: str, platform: str) -> dict[str, Any]:
    """A canned audit of a fixture page: the 2nd player post has an error on its first roll, the 3rd a warning,
    the 4th needs a ruling; state per author."""
    players = [p for p in posts if not p.dice_post]
    audited = []
    for i, p in enumerate(players):
        verdicts: list[dict[str, Any]] = []
        if i == 1:
            verdicts.append({"code": "dice.wrong_die", "severity": "error", "message": "Dado sbagliato per l'azione.",
                             "rule": "Azioni › Dadi", "post": p.id, "roll": 0 if p.has_roll else None,
                             "expected": "1d12", "found": "1d20"})
        elif i == 2:
            verdicts.append({"code": "registro.mismatch", "severity": "warning", "message": "Registro incompleto.",
                             "rule": "Registro", "post": p.id, "roll": None, "expected": 40, "found": 42})
        elif i == 3:
            verdicts.append({"code": "ruling.needed", "severity": "info", "message": "Serve una decisione.",
                             "rule": "Regolamento Tecniche", "post": p.id, "roll": None, "expected": None, "found": None})
        audited.append({"id": p.id, "author": p.author, "character": p.author, "url": thread_url, "verdicts": verdicts,
                        "state": {p.author: {"pv": 40 - i, "pv_max": 52, "pe": 30, "pe_max": 45}}})
    return {"format": "arbitro.audit/1", "ruleset": "guida",
            "thread": {"url": thread_url, "platform": platform, "host": "127.0.0.1", "thread_id": None, "title": None,
                       "pages": 1, "fetched_at": None, "skin": None},
            "settings": {}, "posts": audited, "characters": audited[-1]["state"] if audited else {},
            "next": {"character": players[0].author if players else None, "dice_tags": [
                {"label": "Attacco", "tag": "[dice=1d12+6]Attacco (A vs B)[/dice]"}]}}
