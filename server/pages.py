"""HTML pages for humans: the audit report (`/audit`), its JSON/Markdown/BBCode downloads, `/demo`, `/healthz`."""
from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Response, current_app, render_template, request, url_for

from engine.report import SEVERITY_IT, resources

from .errors import NotFound, ServiceError
from .security import PAGE_CSP, check_forum_url, client_key

bp = Blueprint("pages", __name__, template_folder="templates", static_folder="static", static_url_path="/static")


@bp.app_template_filter("quando")
def quando(value: Any) -> str:
    """An ISO 8601 moment as Italian readers write it: `30/11/2026 14:38 UTC`; anything else as given."""
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if moment.tzinfo is None:
        return moment.strftime("%d/%m/%Y %H:%M")
    return moment.astimezone(timezone.utc).strftime("%d/%m/%Y %H:%M UTC")

SEVERITY_ICON = {"error": "✗", "warning": "⚠", "info": "ℹ"}  # ℹ: in the fonts headless browsers ship
SEVERITY_LABEL = SEVERITY_IT  # errore / avviso / info: the words of every report
# the report page runs one script of ours (the BBCode copy button), nothing inline
REPORT_CSP = f"{PAGE_CSP}; script-src 'self'"
PALETTE = ["#c0392b", "#2471a3", "#229954", "#b9770e", "#7d3c98", "#17a589", "#a04000", "#566573"]


def services() -> Any:
    return current_app.extensions["arbitro"]


@bp.get("/healthz")
def healthz() -> Response:
    svc = services()
    svc.storage.schema_version()  # touches the database: a broken store is not healthy
    return Response('{"status":"ok"}', mimetype="application/json")


# --- view model --------------------------------------------------------------------------------

def safe_url(url: Any) -> str | None:
    """Only http(s) links reach the page (a hostile history could carry `javascript:` URLs)."""
    if not isinstance(url, str):
        return None
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url.strip() if scheme in ("http", "https") else None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def format_stacks(stacks: Any) -> list[str]:
    """Stacks in any of the engine's shapes ({name: n}, {name: {count, expires}}, [names]) as short texts."""
    out: list[str] = []
    if isinstance(stacks, dict):
        for name, v in stacks.items():
            if isinstance(v, dict):
                count = v.get("count", v.get("stacks"))
                text = f"{name} ×{count}" if count not in (None, 1) else str(name)
                exp = v.get("expires", v.get("remaining"))
                if exp not in (None, ""):
                    text += f" (scade: {exp})"
                out.append(text)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                if v:
                    out.append(f"{name} ×{v:g}")
            else:
                out.append(f"{name}: {v}")
    elif isinstance(stacks, (list, tuple)):
        for item in stacks:
            if isinstance(item, dict):
                name = item.get("name") or item.get("type") or "?"
                count = item.get("count")
                text = f"{name} ×{count}" if count not in (None, 1) else str(name)
                exp = item.get("expires", item.get("remaining"))
                if exp not in (None, ""):
                    text += f" (scade: {exp})"
                out.append(text)
            else:
                out.append(str(item))
    return out


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def versions(v: dict[str, Any]) -> dict[str, Any] | None:
    """Both readings of a post a tamper-evidence verdict carries, line by line for a side-by-side table (None for
    any other verdict)."""
    from engine.evidence import described

    details = v.get("details") if isinstance(v.get("details"), dict) else {}
    before, after = details.get("before"), details.get("after")
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return None
    try:
        old, new = dict(described(before)), dict(described(after))
    except (AttributeError, TypeError, ValueError):
        return None  # not one of ours: the message still says what changed
    rows = [{"what": what, "before": old.get(what, "—"), "after": new.get(what, "—"),
             "changed": old.get(what) != new.get(what)} for what in dict.fromkeys([*old, *new])]
    return {"before_at": before.get("fetched_at"), "after_at": after.get("fetched_at"), "rows": rows}


def copy_of(v: dict[str, Any]) -> dict[str, Any] | None:
    """What Arbitro kept of a deleted post (`post.deleted`), for the report."""
    from engine.evidence import described

    details = v.get("details") if isinstance(v.get("details"), dict) else {}
    copy = details.get("copy")
    if not isinstance(copy, dict):
        return None
    try:
        lines = described(copy)
    except (AttributeError, TypeError, ValueError):
        lines = []
    return {"id": _fmt(copy.get("id")), "author": _fmt(copy.get("author")), "timestamp": copy.get("timestamp"),
            "url": safe_url(copy.get("url")), "body": _fmt(copy.get("body") or ""),
            "lines": [{"what": w, "text": t} for w, t in lines],
            "last_seen_at": details.get("last_seen_at"), "detected_at": details.get("detected_at"),
            "moved": [m for m in details.get("moved") or [] if isinstance(m, dict)]}


def _verdict_view(v: dict[str, Any]) -> dict[str, Any]:
    sev = v.get("severity") if v.get("severity") in SEVERITY_ICON else "info"
    return {
        "code": _fmt(v.get("code")), "severity": sev, "icon": SEVERITY_ICON[sev],
        "severity_label": SEVERITY_LABEL[sev], "message": _fmt(v.get("message")), "rule": v.get("rule"),
        "roll": v.get("roll"), "expected": v.get("expected"), "found": v.get("found"),
        # an info verdict's message tells what happened: "atteso/trovato" would read as a mismatch
        "has_numbers": sev != "info" and (v.get("expected") is not None or v.get("found") is not None),
        "expected_text": _fmt(v.get("expected")), "found_text": _fmt(v.get("found")),
        "assumption": v.get("assumption"), "versions": versions(v), "kept": copy_of(v),
    }


def build_chart(posts: list[dict[str, Any]], key: str, label: str, names: list[str], colors: dict[str, str]) -> dict[str, Any] | None:
    """One inline-SVG line chart: `key` of every fighter after each post (geometry computed here)."""
    series: dict[str, list[tuple[int, float]]] = {}
    top = 0.0
    for i, post in enumerate(posts):
        state = post.get("state") or {}
        if not isinstance(state, dict):
            continue
        for name in names:
            ch = state.get(name)
            if not isinstance(ch, dict):
                continue
            v = _num(ch.get(key))
            if v is None:
                continue
            series.setdefault(name, []).append((i, v))
            top = max(top, v, _num(ch.get(key + "_max")) or 0.0)
    if not series:
        return None
    width, height, left, right, pad_top, bottom = 760, 240, 44, 12, 12, 28
    n = max(1, len(posts) - 1)
    levels = whole_ticks(top)
    top = float(levels[-1])

    def x(i: int) -> float:
        return round(left + (width - left - right) * i / n, 1)

    def y(v: float) -> float:
        return round(pad_top + (height - pad_top - bottom) * (1 - max(0.0, v) / top), 1)

    lines = []
    for name, pts in series.items():
        lines.append({
            "name": name, "color": colors[name], "cls": f"c{PALETTE.index(colors[name])}",
            "points": " ".join(f"{x(i)},{y(v)}" for i, v in pts),
            "dots": [{"x": x(i), "y": y(v), "title": f"{name}: {v:g} {label} dopo il post {i + 1}"} for i, v in pts],
        })
    ticks = [{"y": y(v), "label": str(v)} for v in levels]
    step = max(1, len(posts) // 12)
    xticks = [{"x": x(i), "label": str(i + 1)} for i in range(0, len(posts), step)]
    return {"key": key, "label": label, "width": width, "height": height, "left": left, "bottom": height - bottom,
            "right": width - right, "top": pad_top, "lines": lines, "ticks": ticks, "xticks": xticks}


def whole_ticks(top: float, most: int = 4) -> list[int]:
    """The y-axis levels for 0…top: 0, step, 2·step… up to the first level ≥ top, the step a whole 1, 2, 2.5 or
    5 × 10ⁿ giving at most `most` intervals (PV 52 → 0, 20, 40, 60; never a 12.5 tick)."""
    top = max(float(top), 1.0)
    k = 1
    while True:
        for m in (1, 2, 2.5, 5):
            step = m * k
            if step == int(step) and math.ceil(top / step) <= most:
                return [int(step) * i for i in range(math.ceil(top / step) + 1)]
        k *= 10


def _registro_text(entry: Any) -> str:
    if isinstance(entry, dict):
        if entry.get("raw"):
            return str(entry["raw"])
        if isinstance(entry.get("amount"), (int, float)):
            return f"{entry['amount']:+} {entry.get('resource', '')} [{entry.get('label', '')}]".strip()
        if entry.get("label"):
            return f"{entry.get('resource', '')} [{entry['label']}]".strip()
    return _fmt(entry)


def build_report(doc: dict[str, Any]) -> dict[str, Any]:
    """Everything the report template shows, from an `arbitro.audit/1` document (tolerant of missing fields)."""
    posts = [p for p in doc.get("posts") or [] if isinstance(p, dict)]
    characters = doc.get("characters") if isinstance(doc.get("characters"), dict) else {}
    ruleset = doc.get("ruleset") if isinstance(doc.get("ruleset"), str) else None
    names: list[str] = list(characters)
    for p in posts:
        for name in (p.get("state") or {}) if isinstance(p.get("state"), dict) else {}:
            if name not in names:
                names.append(name)
    colors = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}
    # CSS classes, not inline styles: the page's CSP allows no inline style
    classes = {name: f"c{i % len(PALETTE)}" for i, name in enumerate(names)}

    by_code: Counter[tuple[str, str]] = Counter()
    severities: Counter[str] = Counter()
    timeline = []
    stacks_rows = []
    for i, p in enumerate(posts):
        verdicts = []
        for v in p.get("verdicts") or []:
            if not isinstance(v, dict):
                continue
            view = _verdict_view(v)
            severities[view["severity"]] += 1
            by_code[(str(v.get("code")), view["severity"])] += 1
            verdicts.append(view)
        worst = next((s for s in ("error", "warning", "info") if any(v["severity"] == s for v in verdicts)), None)
        state = p.get("state") if isinstance(p.get("state"), dict) else {}
        who = p.get("character") or p.get("author")
        summary = []
        for name in names:
            ch = state.get(name)
            if not isinstance(ch, dict):
                continue
            res = [f"{lab} {_fmt(cur)}" + (f"/{_fmt(mx)}" if mx is not None else "")
                   for _k, lab, cur, mx in resources(ch, ruleset) if cur is not None]
            st = format_stacks(ch.get("stacks"))
            summary.append({"name": name, "resources": ", ".join(res), "stacks": st, "cls": classes[name]})
            if st:
                stacks_rows.append({"post": i + 1, "name": name, "stacks": st, "cls": classes[name]})
        timeline.append({
            "n": i + 1, "id": _fmt(p.get("id")), "author": _fmt(p.get("author")), "character": p.get("character"),
            "who": _fmt(who), "url": safe_url(p.get("url")), "verdicts": verdicts, "worst": worst,
            "icon": SEVERITY_ICON.get(worst or "", "✓"), "state": summary,
        })

    deleted = [_verdict_view(v) for v in doc.get("deleted_posts") or [] if isinstance(v, dict)]
    for view in deleted:
        severities[view["severity"]] += 1
        by_code[(view["code"], view["severity"])] += 1

    pools: dict[str, str] = {}  # every pool any state has, in the ruleset's words and order
    for ch in [*characters.values(), *(st for p in posts if isinstance(p.get("state"), dict)
                                       for st in p["state"].values())]:
        if isinstance(ch, dict):
            for k, lab, _cur, _mx in resources(ch, ruleset):
                pools.setdefault(k, lab)
    charts = [c for c in (build_chart(posts, k, lab, names, colors) for k, lab in pools.items()) if c]
    nxt = doc.get("next") if isinstance(doc.get("next"), dict) else {}
    thread = doc.get("thread") if isinstance(doc.get("thread"), dict) else {}
    finals = []
    for name in names:
        ch = characters.get(name) if isinstance(characters.get(name), dict) else {}
        finals.append({
            "name": name, "cls": classes[name],
            "resources": [{"label": lab, "value": _fmt(cur), "max": mx}
                          for _k, lab, cur, mx in resources(ch, ruleset) if cur is not None],
            "stacks": format_stacks(ch.get("stacks")),
            "conditions": [str(c) for c in ch.get("conditions") or []] if isinstance(ch.get("conditions"), list) else [],
        })
    incoming = []
    for a in nxt.get("incoming") or []:
        if isinstance(a, dict):
            incoming.append({k: _fmt(a.get(k)) for k in ("from", "action", "technique", "total")})
    # rulesets name the ready tags `dice_tags` ({label, tag}) or `dice` ({phase, action, tag})
    tags = [{"label": _fmt(t.get("label") or t.get("action")), "tag": _fmt(t.get("tag"))}
            for t in (nxt.get("dice_tags") or nxt.get("dice") or []) if isinstance(t, dict) and t.get("tag")]
    stats = []
    if isinstance(nxt.get("stats"), dict):
        for name, st in nxt["stats"].items():
            total = st.get("total") if isinstance(st, dict) else st
            stats.append(f"{name} {_fmt(total)}")
    return {
        "title": _fmt(thread.get("title") or thread.get("url") or "Combattimento"),
        "thread_url": safe_url(thread.get("url")), "platform": _fmt(thread.get("platform")),
        "ruleset": _fmt(doc.get("ruleset")), "fetched_at": thread.get("fetched_at"),
        "turns": len(posts), "severities": dict(severities), "deleted": deleted,
        "codes": [{"code": c, "severity": s, "icon": SEVERITY_ICON[s], "severity_label": SEVERITY_LABEL[s], "count": n}
                  for (c, s), n in sorted(by_code.items(), key=lambda kv: (-kv[1], kv[0]))],
        "next_character": nxt.get("character"), "incoming": incoming, "dice_tags": tags,
        "hints": [_fmt(h) for h in nxt.get("hints") or []],
        "registro": [_registro_text(r) for r in nxt.get("registro") or []], "next_stats": stats,
        "timeline": timeline, "charts": charts, "stacks_rows": stacks_rows, "finals": finals,
    }


def markdown_report(doc: dict[str, Any], audit: Any = None) -> str:
    """Markdown of the audit: the engine's renderer (engine.report) on the engine Audit when there is one (given,
    else rebuilt from the document), else a compact rendering of the stored document."""
    audit = audit if audit is not None else engine_audit_of(doc)
    if audit is not None:
        try:
            from engine.report import render_markdown
        except ImportError:
            render_markdown = None
        if render_markdown is not None:
            return render_markdown(audit, min_severity="info")  # the download is the whole audit, as the page
    r = build_report(doc)
    out = [f"# {_md(r['title'])}", "", f"Ruleset: `{r['ruleset']}` · Turni: {r['turns']}"
           + (f" · Prossimo: **{_md(str(r['next_character']))}**" if r["next_character"] else ""), ""]
    if r["codes"]:
        out += ["## Verdetti per codice", "", "| codice | gravità | numero |", "|---|---|---|"]
        out += [f"| `{c['code']}` | {SEVERITY_LABEL[c['severity']]} | {c['count']} |" for c in r["codes"]]
        out.append("")
    out += ["## Turni", ""]
    for t in r["timeline"]:
        link = f" ([post]({t['url']}))" if t["url"] else ""
        out.append(f"### {t['n']}. {_md(t['who'])}{link}")
        for v in t["verdicts"]:
            nums = f" (atteso {_md(v['expected_text'])}, trovato {_md(v['found_text'])})" if v["has_numbers"] else ""
            rule = f" — _{_md(str(v['rule']))}_" if v["rule"] else ""
            out.append(f"- {v['icon']} `{v['code']}`: {_md(v['message'])}{nums}{rule}")
        if not t["verdicts"]:
            out.append("- ✓ nessun rilievo")
        out.append("")
    return "\n".join(out)


def engine_audit_of(doc: dict[str, Any]) -> Any:
    """The engine Audit an `arbitro.audit/1` document was made from (no snapshots): what the engine's renderers
    read. None when the document is not one of ours."""
    from engine.core import Audit, PostAudit
    from engine.history import Thread
    from engine.verdicts import Verdict

    def verdict(v: dict[str, Any]) -> Verdict:  # as the page reads it: an unknown severity is info
        return Verdict.from_dict({**v, "severity": v.get("severity") if v.get("severity") in SEVERITY_ICON else "info"})

    try:
        t = doc.get("thread") or {}
        thread = Thread(url=str(t.get("url") or ""), platform=str(t.get("platform") or ""),
                        host=str(t.get("host") or ""), thread_id=t.get("thread_id"), title=t.get("title"),
                        pages=int(t.get("pages") or 0), fetched_at=t.get("fetched_at"))
        posts = tuple(PostAudit(id=str(p["id"]), author=str(p.get("author") or ""), character=p.get("character"),
                                url=str(p.get("url") or ""), state=p.get("state") or {},
                                verdicts=tuple(verdict(v) for v in p.get("verdicts") or []))
                      for p in doc.get("posts") or [])
        characters = {str(k): v for k, v in (doc.get("characters") or {}).items() if isinstance(v, dict)}
        return Audit(ruleset=str(doc.get("ruleset") or ""), thread=thread, posts=posts, characters=characters,
                     next=dict(doc.get("next") or {}), settings=dict(doc.get("settings") or {}),
                     deleted=tuple(verdict(v) for v in doc.get("deleted_posts") or []))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def bbcode_report(doc: dict[str, Any], report_url: str | None = None) -> str | None:
    """The forum BBCode of the audit (engine.report.render_bbcode: errors and warnings, state, next turn)."""
    from engine.report import render_bbcode

    audit = engine_audit_of(doc)
    return render_bbcode(audit, report_url=report_url) if audit is not None else None


def _md(text: str) -> str:
    # neutralise Markdown/HTML in hostile text
    return "".join("\\" + ch if ch in "\\`*_{}[]<>()#|!" else ch for ch in str(text)).replace("\n", " ")


# --- routes ------------------------------------------------------------------------------------

def _load(thread_id: int) -> tuple[Any, dict[str, Any]]:
    from .storage import ThreadNotFound

    svc = services()
    try:
        rec = svc.storage.get_thread(thread_id)
    except ThreadNotFound:
        raise NotFound("discussione sconosciuta", code="thread_not_found") from None
    stored = svc.storage.audit(rec.id)
    if stored is None:
        raise NotFound("questa discussione non ha ancora un audit", code="thread_not_ready",
                       details={"last_error": rec.last_error})
    if svc.refresher.is_stale(rec):
        svc.refresher.refresh_in_background(rec.id)
    return rec, json.loads(stored.raw)


def _render(rec: Any, doc: dict[str, Any]) -> Response:
    svc = services()
    bbcode = bbcode_report(doc, url_for("pages.audit_by_id", thread_id=rec.id, _external=True))
    resp = Response(render_template("report.html", r=build_report(doc), rec=rec, bbcode=bbcode,
                                    refreshing=svc.refresher.is_refreshing(rec.id), last_error=rec.last_error),
                    mimetype="text/html")
    resp.headers["Content-Security-Policy"] = REPORT_CSP
    return resp


@bp.get("/audit")
def audit_by_url() -> Any:
    svc = services()
    url = request.args.get("url")
    if not url:
        return render_template("audit_form.html", demo=bool(current_app.config.get("ARBITRO_DEMO")))
    url = check_forum_url(url, svc.cfg)
    ruleset = request.args.get("ruleset") or None
    rec = svc.storage.find_thread(url, ruleset)
    if rec is None or rec.audit_id is None:
        # first visit: analyse now (same limit as the API's audit creation)
        svc.limiter.hit(client_key(request, svc.cfg["trust_proxy"]))
        if rec is None:
            # the forum config picks the ruleset per forum/section, as the API does
            chosen = ruleset or svc.refresher.ruleset_for_url(url, probe=True) or svc.cfg["default_ruleset"]
            rec = svc.storage.get_or_create_thread(url, chosen)
        svc.refresher.refresh(rec.id)
    rec, doc = _load(rec.id)
    return _render(rec, doc)


@bp.get("/audit/<int:thread_id>")
def audit_by_id(thread_id: int) -> Any:
    rec, doc = _load(thread_id)
    return _render(rec, doc)


@bp.get("/audit/<int:thread_id>.json")
def audit_json(thread_id: int) -> Response:
    rec, _doc = _load(thread_id)
    stored = services().storage.audit(rec.id)
    resp = Response(stored.raw, mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="arbitro-audit-{rec.id}.json"'
    return resp


@bp.get("/audit/<int:thread_id>.md")
def audit_markdown(thread_id: int) -> Response:
    rec, doc = _load(thread_id)
    try:
        audit = services().refresher.engine_audit(rec.id)
    except ServiceError:
        audit = None  # the stored document is still there: render it
    resp = Response(markdown_report(doc, audit), mimetype="text/markdown")
    resp.headers["Content-Disposition"] = f'attachment; filename="arbitro-audit-{thread_id}.md"'
    return resp


@bp.get("/audit/<int:thread_id>.bbcode")
def audit_bbcode(thread_id: int) -> Response:
    rec, doc = _load(thread_id)
    text = bbcode_report(doc, url_for("pages.audit_by_id", thread_id=rec.id, _external=True))
    if text is None:
        raise NotFound("questo audit non si può rendere in BBCode", code="thread_not_ready")
    resp = Response(text, mimetype="text/plain")
    resp.headers["Content-Disposition"] = f'attachment; filename="arbitro-audit-{thread_id}.bbcode.txt"'
    return resp


@bp.get("/")
def index() -> Any:
    return render_template("audit_form.html", demo=bool(current_app.config.get("ARBITRO_DEMO")))


__all__ = ["bp", "build_report", "markdown_report", "bbcode_report", "engine_audit_of", "safe_url", "whole_ticks"]
