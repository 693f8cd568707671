"""Pure text and Markdown rendering of an Audit (the `arbitro audit` report and the server's Markdown download)."""
from __future__ import annotations

import re

from typing import Any, Iterable

from .core import Audit, PostAudit
from .verdicts import Verdict

SEVERITY_IT = {"error": "errore", "warning": "avviso", "info": "info"}
_MARK = {"error": "✗", "warning": "!", "info": "·"}
_COLOUR = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD = "\033[1m"
_RESET = "\033[0m"


def _num(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        return "[" + ", ".join(_num(x) for x in v) + "]"
    return str(v)


def _numbers(v: Verdict) -> str:
    if v.expected is None and v.found is None:
        return ""
    return f" (atteso {_num(v.expected)}, trovato {_num(v.found)})"


def _resource(c: dict[str, Any], key: str) -> str:
    cur, mx = c.get(key), c.get(f"{key}_max")
    if cur is None:
        return f"{key.upper()} ?"
    return f"{key.upper()} {cur}/{mx}" if mx is not None else f"{key.upper()} {cur}"


def character_line(name: str, c: dict[str, Any]) -> str:
    parts = [_resource(c, "pv"), _resource(c, "pe")]
    stacks = c.get("stacks") or {}
    if stacks:
        parts.append("Stack: " + ", ".join(f"{k} {n}" for k, n in stacks.items()))
    if c.get("conditions"):
        parts.append("Condizioni: " + ", ".join(c["conditions"]))
    return f"{name}: " + ", ".join(parts)


def _posts(audit: Audit, character: str | None) -> Iterable[tuple[int, PostAudit]]:
    for i, p in enumerate(audit.posts, 1):
        if character is None or (p.character or p.author).lower() == character.lower():
            yield i, p


def counts(audit: Audit) -> dict[str, int]:
    out = {"error": 0, "warning": 0, "info": 0}
    for p in audit.posts:
        for v in p.verdicts:
            out[v.severity] = out.get(v.severity, 0) + 1
    return out


def _next_title(nxt: dict[str, Any], name=str) -> str:
    who, upcoming = nxt.get("character"), nxt.get("next_to_post", nxt.get("character"))
    who, upcoming = name(who), name(upcoming) if upcoming else upcoming
    if upcoming and upcoming != who:
        return f"Suggerimento per {who} (il prossimo a postare è {upcoming})"
    return f"Prossimo turno: {who}"


def render_text(audit: Audit, *, colour: bool = False, character: str | None = None) -> str:
    """A readable per-turn report; ANSI colour only when asked (the command asks on a TTY)."""
    def paint(s: str, sev: str | None = None, bold: bool = False) -> str:
        if not colour:
            return s
        return (_BOLD if bold else "") + (_COLOUR.get(sev or "", "")) + s + _RESET

    t = audit.thread
    lines = [paint(f"Arbitro — {t.title or t.url} (regolamento {audit.ruleset})", bold=True), t.url]
    c = counts(audit)
    lines.append(f"{len(audit.posts)} post · {c['error']} errori · {c['warning']} avvisi · {c['info']} info")
    for i, p in _posts(audit, character):
        who = p.character or p.author
        lines.append("")
        lines.append(paint(f"#{i} post {p.id} · {who}" + (f" (autore {p.author})" if p.author != who else ""), bold=True))
        for v in p.verdicts:
            roll = f" lancio {v.roll + 1}" if v.roll is not None else ""
            head = f"  {_MARK[v.severity]} {SEVERITY_IT[v.severity]:<7} {v.code}{roll}"
            lines.append(paint(head, v.severity) + f"  {v.message}{_numbers(v)}")
            lines.append(f"      ↳ {v.rule}" + (f" · decisione del master: {v.details['ruling']}" if v.details.get("ruling") else ""))
        if not p.verdicts:
            lines.append("  nessuna osservazione")
    lines.append("")
    lines.append(paint("Stato finale", bold=True))
    for name, ch in audit.characters.items():
        lines.append("  " + character_line(name, ch))
    nxt = audit.next or {}
    if nxt.get("character"):
        lines.append("")
        lines.append(paint(_next_title(nxt), bold=True))
        for h in nxt.get("hints", []):
            lines.append(f"  - {h}")
        dice = nxt.get("dice_tags") or []
        if dice:
            lines.append("  Dadi pronti da incollare:")
            for d in dice:
                lines.append(f"    {d['tag']}")
    return "\n".join(lines) + "\n"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def _md_escape(s: str) -> str:
    """Post-derived text as inert Markdown: no HTML, links, emphasis or table breaks survive."""
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", s).replace("\r", " ").replace("\n", " ")


def _md_link(label: str, url: str) -> str:
    if re.match(r"https?://", url or "", re.I) and not re.search(r"[\s<>()]", url):
        return f"[{_md_escape(label)}]({url})"
    return _md_escape(label)


def _md_code_block(lines: list[str]) -> list[str]:
    longest = max((len(m) for ln in lines for m in re.findall(r"`+", ln)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence] + [ln.replace("\n", " ") for ln in lines] + [fence]


def render_markdown(audit: Audit, *, character: str | None = None) -> str:
    """A Markdown report: summary, one table per post with verdicts, final state, next-turn hint."""
    t = audit.thread
    c = counts(audit)
    out = [f"# Arbitro — {_md_escape(t.title or t.url)}", "",
           f"Discussione: {_md_link(t.url, t.url)} · regolamento `{audit.ruleset}` · {len(audit.posts)} post · "
           f"**{c['error']}** errori · **{c['warning']}** avvisi · {c['info']} info", ""]
    out += ["## Turni", ""]
    for i, p in _posts(audit, character):
        who = p.character or p.author
        out.append(f"### #{i} — post {_md_link(p.id, p.url)} · {_md_escape(who)}")
        out.append("")
        if not p.verdicts:
            out += ["Nessuna osservazione.", ""]
            continue
        out.append("| gravità | codice | lancio | messaggio | atteso | trovato | regola |")
        out.append("|---|---|---|---|---|---|---|")
        for v in p.verdicts:
            msg = v.message + (f" — *decisione del master: {v.details['ruling']}*" if v.details.get("ruling") else "")
            out.append(f"| {SEVERITY_IT[v.severity]} | {_md_escape(v.code)} | {'' if v.roll is None else v.roll + 1} | "
                       f"{_md_escape(msg)} | {_md_escape(_num(v.expected))} | {_md_escape(_num(v.found))} | "
                       f"{_md_escape(v.rule)} |")
        out.append("")
    out += ["## Stato finale", ""]
    for name, ch in audit.characters.items():
        out.append(f"- {_md_escape(character_line(name, ch))}")
    nxt = audit.next or {}
    if nxt.get("character"):
        out += ["", f"## {_next_title(nxt, _md_escape)}", ""]
        out += [f"- {_md_escape(h)}" for h in nxt.get("hints", [])]
        if nxt.get("dice_tags"):
            out += [""] + _md_code_block([d["tag"] for d in nxt["dice_tags"]])
    return "\n".join(out) + "\n"


__all__ = ["render_text", "render_markdown", "character_line", "counts"]
