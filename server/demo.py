"""The bundled demo: a fixture fight stored at start-up and shown as a forum page with the userscript running."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, redirect, request, url_for
from markupsafe import escape

from .errors import NotFound, ServerError
from .refresh import history_hash, run_replay

bp = Blueprint("demo", __name__)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# The demo fight: the main story on ForumFree's current skin (fixtures/manifest.json lists the fixture pages),
# audited under the registry it was written for (the README's examples give the same numbers).
DEMO_STORY = ("hollow_vs_quincy", "ff-current")
DEMO_REGISTRY = FIXTURES / "registry" / f"{DEMO_STORY[0]}.toml"
DEMO_CSP = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class DemoError(ServerError):
    """The demo fixture is missing or unreadable."""


def find_demo_pages(spec: str = "") -> list[tuple[Path, str]]:
    """(page file, forum URL it stands for) of the demo thread in page order: `spec` (a directory of HTML
    pages or one file) or the bundled fight from the fixtures' manifest."""
    if spec:
        p = Path(spec)
        files = [p] if p.is_file() else _sorted_pages(p) if p.is_dir() else []
        if not files:
            raise DemoError(f"demo fixture not found: {spec}")
        return [(f, page_url(f.read_bytes(), i)) for i, f in enumerate(files)]
    try:
        manifest = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DemoError(f"fixtures/manifest.json not readable: {exc}") from None
    story, skin = DEMO_STORY
    entries = sorted((e for e in manifest if e.get("story") == story and e.get("skin") == skin
                      and e.get("kind") == "html"), key=lambda e: e.get("page", 0))
    pages = [(FIXTURES / e["path"], e["url"]) for e in entries]
    if not pages or not all(p.is_file() for p, _ in pages):
        raise DemoError(f"demo fight {story} ({skin}) missing from fixtures/")
    return pages


def demo_registry(spec: str = "", *, bundled: bool = True) -> Any:
    """The registry the demo fight is audited under: the file `spec` names, else (for the bundled fight) the one
    it was written for, else none."""
    from scraper.errors import RegistryFileError
    from scraper.registry_file import load_registry

    path = Path(spec) if spec else (DEMO_REGISTRY if bundled else None)
    if path is None:
        return None
    try:
        return load_registry(path)
    except (OSError, RegistryFileError) as exc:
        raise DemoError(f"registro del combattimento dimostrativo non leggibile ({path}): {exc}") from None


def _sorted_pages(d: Path) -> list[Path]:
    def key(p: Path) -> tuple[int, str]:
        m = re.search(r"(\d+)$", p.stem)
        return (int(m.group(1)) if m else 0, p.name)

    return sorted((p for p in d.glob("*.html") if p.is_file()), key=key)


def page_url(data: bytes, index: int) -> str:
    """The forum URL a saved page stands for: its canonical link if it has one, else a demo forum URL."""
    m = re.search(rb'<link[^>]+rel=["\']canonical["\'][^>]*href=["\']([^"\']+)', data, re.I)
    if m:
        return m.group(1).decode("utf-8", "replace").replace("&amp;", "&")
    tid = re.search(rb"ff_t\s*=\s*(\d+)", data) or re.search(rb'name=["\']t["\'][^>]*value=["\'](\d+)', data)
    return f"https://demo.forumfree.it/?t={tid.group(1).decode() if tid else 1}&st={index * 15}"


def seed_demo(app: Flask) -> dict[str, Any]:
    """Parse the demo pages, replay them and store the thread (as if fetched), so the demo needs no network."""
    from scraper import parse_pages

    cfg = app.config["ARBITRO"]
    svc = app.extensions["arbitro"]
    pages = find_demo_pages(cfg.get("demo_fixture", ""))
    items = [(p.read_bytes(), url) for p, url in pages]
    registry = demo_registry(cfg.get("demo_registry", ""), bundled=not cfg.get("demo_fixture"))
    history = parse_pages(items, registry=registry)
    audit = run_replay(history, cfg["default_ruleset"], registry, None)
    hdoc = history.to_dict()
    url = hdoc["thread"].get("url") or items[0][1]
    from .security import canonical_thread_url
    url = canonical_thread_url(url)
    rec = svc.storage.get_or_create_thread(url, audit.ruleset)
    rec = svc.storage.save_refresh(rec.id, history=hdoc, content_hash=history_hash(hdoc), audit=audit.to_dict(),
                                   replayed=audit.replayed, pages=[], log=[])
    svc.refresher.remember(rec.id, audit)
    info = {"thread_id": rec.id, "url": url, "tid": hdoc["thread"].get("thread_id") or "1", "pages": [str(p) for p, _ in pages], "page_urls": [u for _, u in items]}
    app.config["ARBITRO_DEMO"] = info
    return info


def _demo_info() -> dict[str, Any]:
    info = current_app.config.get("ARBITRO_DEMO")
    if not info:
        raise NotFound("demo non attiva: avvia il servizio con `arbitro demo`", code="demo_not_running")
    return info


@bp.get("/demo")
def demo() -> Response:
    info = _demo_info()
    n = len(info["pages"])
    if request.args.get("t") != str(info["tid"]):
        # the userscript reads the thread id from the address, as on the forum (`?t=<id>`)
        return redirect(url_for("demo.demo", t=info["tid"], page=request.args.get("page", n)))
    try:
        page = int(request.args.get("page", n))  # the last page shows the "Tocca a" panel
    except ValueError:
        page = n
    page = min(max(page, 1), n)
    data = Path(info["pages"][page - 1]).read_bytes()
    from scraper.charset import detect_encoding

    # served as UTF-8 whatever the page's own charset (the HTTP header wins over its <meta>)
    html = local_assets(data.decode(detect_encoding(data), "replace"))
    inject = (f'<script src="{escape(url_for("demo.shim"))}" data-thread-url="{escape(info["url"])}"></script>'
              f'<script src="{escape(url_for("userscript.user_js"))}"></script>')
    banner = (f'<div style="font:14px sans-serif;background:#2c2a26;color:#fff;padding:6px 10px">'
              f'Demo di Arbitro · pagina {page} di {n} · '
              + " ".join(f'<a style="color:#9cf" href="{escape(url_for("demo.demo", t=info["tid"], page=i))}">{i}</a>' for i in range(1, n + 1))
              + f' · <a style="color:#9cf" href="{escape(url_for("pages.audit_by_id", thread_id=info["thread_id"]))}">report completo</a></div>')
    html = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + banner, html, count=1, flags=re.I)
    if re.search(r"</body>", html, re.I):
        html = re.sub(r"</body>", lambda m: inject + m.group(0), html, count=1, flags=re.I)
    else:
        html += inject
    resp = Response(html, mimetype="text/html")  # utf-8
    resp.headers["Content-Security-Policy"] = DEMO_CSP
    return resp


# The fixture page's own assets live on the forum's CDNs, which the demo's CSP (and the lack of network) keeps
# out: its stylesheets become the demo's own, its images a blank of the same place, its scripts go (the page works
# without them); nothing is fetched from outside.
_EXTERNAL_SHEET = re.compile(r"<link\b[^>]*\brel=[\"']?(?:stylesheet|icon|apple-touch-icon|preconnect|preload|"
                             r"dns-prefetch|manifest)\b[^>]*>", re.I)
_EXTERNAL_SRC = re.compile(r"(<img\b[^>]*?\bsrc=)([\"'])(?:https?:)?//[^\"']*\2", re.I)
_EXTERNAL_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=[\"']?(?:https?:)?//[^>]*>\s*</script>", re.I)


def local_assets(html: str) -> str:
    sheet = f'<link rel="stylesheet" href="{escape(url_for("demo.forum_css"))}">'
    html = _EXTERNAL_SHEET.sub("", html)
    html = re.sub(r"</head>", lambda m: sheet + m.group(0), html, count=1, flags=re.I)
    html = _EXTERNAL_SRC.sub(lambda m: f'{m.group(1)}{m.group(2)}{url_for("demo.blank_img")}{m.group(2)}', html)
    return _EXTERNAL_SCRIPT.sub("", html)


FORUM_CSS = """
body { margin: 0; background: #efe9df; color: #2c2a26; font: 13px/1.45 Verdana, Tahoma, Arial, sans-serif; }
a { color: #8a3b12; }
#ffHeader, .menuwrap, .ffUserbar, .navigation, .title, .pages, .topic, .footer, .skin_tbl { max-width: 1100px;
  margin: 8px auto; }
.menuwrap ul, .submenu, .drop { list-style: none; margin: 0; padding: 0; }
.menuwrap li { display: inline-block; margin-right: 12px; }
.submenu, .drop { display: none; }
.title h1 { margin: 4px 0; font-size: 20px; }
.title h2 { margin: 0; font-size: 13px; font-weight: normal; color: #6b655b; }
.pages ul { display: inline; margin: 0; padding: 0; list-style: none; }
.pages li { display: inline-block; margin: 0 2px; padding: 1px 6px; border: 1px solid #c9bfae; background: #fff; }
.pages li.current { font-weight: bold; background: #f6e7c9; }
.pages .pc { margin-right: 6px; font-weight: bold; }
ul.list { list-style: none; margin: 0; padding: 0; }
li.post { margin: 10px 0; background: #fff; border: 1px solid #d8cfbf; border-radius: 6px; }
li.post > table.color { width: 100%; border-collapse: collapse; }
td.left { width: 180px; vertical-align: top; padding: 10px; background: #f7f2ea; border-right: 1px solid #e4dccd; }
td.right { vertical-align: top; padding: 10px; }
.nick { font-weight: bold; font-size: 14px; margin-bottom: 6px; }
.avatar img { width: 100px; height: 100px; background: #d9cfbf; border-radius: 4px; }
.details p, .u_fields, .u_extra, .u_contacts, .u_awards { margin: 2px 0; font-size: 11px; color: #6b655b; }
.u_title { font-weight: bold; }
.post_header { font-size: 11px; color: #6b655b; border-bottom: 1px solid #eee; margin-bottom: 8px; }
.mini_buttons, .post_footer { font-size: 11px; }
.rt { float: right; }
.signature { margin-top: 10px; padding-top: 6px; border-top: 1px dashed #d8cfbf; font-size: 11px; color: #6b655b; }
.signature img { display: none; }
.quote_top, .code_top { margin-top: 6px; font-size: 11px; font-weight: bold; }
.quote, .code { margin: 2px 0 8px; padding: 6px 8px; background: #f4efe6; border-left: 3px solid #c9bfae; }
details.dice-roll { margin: .7em 0; padding: 4px 8px; background: #f6f1e8; border: 1px solid #e0d6c4; border-radius: 4px; }
.dice-roll dt, .dice-roll dd { display: inline; margin: 0 .4em 0 0; }
.dice-roll dt:after { content: ':'; }
.dice-roll dd:not(:last-child):after { content: ' -'; }
.dice-time { font-size: .75em; color: #6b655b; }
.dice-low { color: indianred; } .dice-medium { color: darkorange; } .dice-high { color: seagreen; }
.dice-highest { color: forestgreen; font-weight: bold; }
.ad_box, .ad_wrap, [class^="ico_"] { display: none; }
.footer { color: #6b655b; font-size: 11px; text-align: center; }
"""

BLANK_IMG = ('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1" viewBox="0 0 1 1">'
             '<rect width="1" height="1" fill="#d9cfbf" fill-opacity="0.6"/></svg>')


@bp.get("/demo/forum.css")
def forum_css() -> Response:
    _demo_info()
    return Response(FORUM_CSS, mimetype="text/css")


@bp.get("/demo/blank.svg")
def blank_img() -> Response:
    _demo_info()
    return Response(BLANK_IMG, mimetype="image/svg+xml")


# The userscript manager's API, shimmed for the demo page: requests go to this service (same origin), the
# thread URL the script computes from the demo address is replaced by the stored demo thread's, values live in
# localStorage.
SHIM = r"""
(function () {
  "use strict";
  var me = document.currentScript;
  var THREAD = me.getAttribute("data-thread-url");
  function fix(url, data) {
    try {
      var u = new URL(url, location.href);
      if (u.origin === location.origin && u.searchParams.has("url")) u.searchParams.set("url", THREAD);
      url = u.toString();
    } catch (e) {}
    if (typeof data === "string" && data.indexOf('"url"') >= 0) {
      try { var b = JSON.parse(data); if (b && b.url) { b.url = THREAD; data = JSON.stringify(b); } } catch (e) {}
    }
    return [url, data];
  }
  var GMshim = {
    xmlHttpRequest: function (d) {
      var f = fix(d.url, d.data);
      var ctl = new AbortController();
      var timer = d.timeout ? setTimeout(function () { ctl.abort(); }, d.timeout) : null;
      fetch(f[0], { method: d.method || "GET", headers: d.headers || {}, body: f[1], signal: ctl.signal, credentials: "omit" })
        .then(function (r) {
          return r.text().then(function (t) {
            if (timer) clearTimeout(timer);
            var h = ""; r.headers.forEach(function (v, k) { h += k + ": " + v + "\r\n"; });
            d.onload && d.onload({ status: r.status, responseText: t, responseHeaders: h, finalUrl: r.url });
          });
        })
        .catch(function (e) {
          if (timer) clearTimeout(timer);
          if (ctl.signal.aborted) { d.ontimeout && d.ontimeout({}); } else { d.onerror && d.onerror({ error: String(e) }); }
        });
      return { abort: function () { ctl.abort(); } };
    },
    getValue: function (k, def) {
      var v = localStorage.getItem("arbitro-demo:" + k);
      return Promise.resolve(v === null ? def : JSON.parse(v));
    },
    setValue: function (k, v) { localStorage.setItem("arbitro-demo:" + k, JSON.stringify(v)); return Promise.resolve(); },
    registerMenuCommand: function () {},
    setClipboard: function (t) { if (navigator.clipboard) navigator.clipboard.writeText(t); }
  };
  window.GM = GMshim;
  window.GM_info = { script: { name: "Arbitro (demo)" } };
})();
"""


@bp.get("/demo/gm-shim.js")
def shim() -> Response:
    _demo_info()
    return Response(SHIM, mimetype="text/javascript")
