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
    from scraper.fetch import detect_encoding

    # served as UTF-8 whatever the page's own charset (the HTTP header wins over its <meta>)
    html = data.decode(detect_encoding(data), "replace")
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
