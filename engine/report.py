"""Text, Markdown and BBCode rendering of an Audit (`arbitro audit`, the server's downloads and BBCode copy)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from .core import Audit, EngineError, PostAudit, get_ruleset
from .verdicts import Verdict

SEVERITY_IT = {"error": "errore", "warning": "avviso", "info": "info"}
SEVERITIES = ("info", "warning", "error")  # least severe first: --min-severity keeps its own and those after it
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


def _compared(v: Verdict) -> tuple[str, str] | None:
    """(atteso, trovato) of a verdict that compares numbers; None for an info verdict, whose message tells what
    happened (a successful Schivata is no mismatch)."""
    if v.severity == "info" or (v.expected is None and v.found is None):
        return None
    return _num(v.expected), _num(v.found)


def _numbers(v: Verdict) -> str:
    nums = _compared(v)
    return f" (atteso {nums[0]}, trovato {nums[1]})" if nums else ""


# --- the fighters' pools, in each ruleset's words ------------------------------------------------------------------

def pool_labels(ruleset: str | None) -> dict[str, str]:
    """State key → the ruleset's own name of a schema pool ("pv" → "PV", "cosmo" → "Cosmo"), from its post
    conventions; {} for a ruleset that declares none."""
    try:
        conv = getattr(get_ruleset(ruleset), "conventions", None) if ruleset else None
    except EngineError:
        conv = None
    return {p.lower(): p for p in conv.pools} if conv is not None else {}


def resources(c: dict[str, Any], ruleset: str | None) -> list[tuple[str, str, Any, Any]]:
    """(key, label, value, max) of every pool the character's state has: the ruleset's schema pools in its order
    (a pool it has but does not know yet reads "?"), then any other `<key>`/`<key>_max` pair (poteri's slots)."""
    labels = pool_labels(ruleset)
    out = [(k, lab, c.get(k), c.get(f"{k}_max")) for k, lab in labels.items() if k in c]
    for key, mx in c.items():
        k = key[:-4] if key.endswith("_max") else None
        if k and k not in labels and isinstance(mx, (int, float)) and not isinstance(mx, bool):
            out.append((k, k.upper() if len(k) <= 3 else k.capitalize(), c.get(k), mx))
    return out


def resource_texts(c: dict[str, Any], ruleset: str | None) -> list[str]:
    """["PV 47/52", "PE 25/40"]: each pool as the report prints it."""
    out = []
    for _k, label, cur, mx in resources(c, ruleset):
        value = "?" if cur is None else f"{cur}/{mx}" if mx is not None else f"{cur}"
        out.append(f"{label} {value}")
    return out


def character_line(name: str, c: dict[str, Any], ruleset: str | None = None) -> str:
    parts = resource_texts(c, ruleset)
    stacks = c.get("stacks") or {}
    if stacks:
        items = stacks.items() if isinstance(stacks, dict) else ((s, None) for s in stacks)
        parts.append("Stack: " + ", ".join(f"{k} {n}" if n is not None else str(k) for k, n in items))
    if c.get("conditions"):
        parts.append("Condizioni: " + ", ".join(str(x) for x in c["conditions"]))
    return f"{name}: " + ", ".join(parts)


# --- which posts and verdicts a report shows ------------------------------------------------------------------------

@dataclass(frozen=True)
class Selection:
    """What a report lists: (number, post, verdicts shown) per post, every verdict counted, the ones filtered out."""

    posts: tuple[tuple[int, PostAudit, tuple[Verdict, ...]], ...]
    counts: dict[str, int]  # every verdict of the audit, by severity
    hidden: dict[str, int]  # verdicts of the chosen posts below min_severity, by severity
    min_severity: str

    @property
    def filtered(self) -> bool:
        return self.min_severity != SEVERITIES[0]


def check_severity(min_severity: str) -> str:
    if min_severity not in SEVERITIES:
        raise ValueError(f"gravità sconosciuta {min_severity!r}: una tra {', '.join(SEVERITIES)}")
    return min_severity


def select(audit: Audit, character: str | None = None, min_severity: str = "warning") -> Selection:
    """The posts of `character` (all when None) with their verdicts at or above `min_severity`. With nothing
    filtered every post is listed, a clean one too; otherwise only the posts that keep a verdict, so a post whose
    verdicts are all below the threshold is not listed as if it had none."""
    floor = SEVERITIES.index(check_severity(min_severity))
    posts = []
    hidden = {s: 0 for s in SEVERITIES}
    for i, p in enumerate(audit.posts, 1):
        if character is not None and (p.character or p.author).lower() != character.lower():
            continue
        shown = tuple(v for v in p.verdicts if SEVERITIES.index(v.severity) >= floor)
        for v in p.verdicts:
            if SEVERITIES.index(v.severity) < floor:
                hidden[v.severity] += 1
        if shown or floor == 0:
            posts.append((i, p, shown))
    return Selection(tuple(posts), counts(audit), {s: n for s, n in hidden.items() if n}, min_severity)


def counts(audit: Audit) -> dict[str, int]:
    out = {"error": 0, "warning": 0, "info": 0}
    for p in audit.posts:
        for v in p.verdicts:
            out[v.severity] = out.get(v.severity, 0) + 1
    for v in audit.deleted:
        out[v.severity] = out.get(v.severity, 0) + 1
    return out


DELETED_TITLE = "Post eliminati"  # the verdicts about posts no longer in the thread (engine.evidence)


_WORDS = {"error": ("errore", "errori"), "warning": ("avviso", "avvisi"), "info": ("info", "info")}


def _count(n: int, sev: str) -> str:
    return f"{n} {_WORDS[sev][n != 1]}"


def _summary(audit: Audit, c: dict[str, int], paint: Callable[[str, str], str] = lambda _sev, s: s) -> str:
    """"18 post · 10 errori · 3 avvisi · 19 info"; `paint(severity, text)` marks up the errors and warnings."""
    return " · ".join([f"{len(audit.posts)} post", paint("error", _count(c["error"], "error")),
                       paint("warning", _count(c["warning"], "warning")), _count(c["info"], "info")])


def hidden_note(sel: Selection, *, how: bool = True) -> str | None:
    """"19 info nascoste: --min-severity info per vederle" (`how`: with the option that shows them), else
    "19 info non riportate qui" (a forum post, where the option means nothing)."""
    if not sel.hidden:
        return None
    order = sorted(sel.hidden, key=SEVERITIES.index, reverse=True)
    total = sum(sel.hidden.values())
    # "info" is feminine (informazioni), "avviso"/"errore" masculine: a mixed list agrees in the masculine
    ending = ("a" if total == 1 else "e") if set(sel.hidden) == {"info"} else ("o" if total == 1 else "i")
    text = " e ".join(_count(sel.hidden[s], s) for s in order)
    if not how:
        return f"{text} non riportat{ending} qui"
    them = {"a": "la", "e": "le", "o": "lo", "i": "li"}[ending]
    return f"{text} nascost{ending}: --min-severity {order[-1]} per veder{them}"


def _nothing_shown(sel: Selection) -> str:
    return "Nessun errore." if sel.min_severity == "error" else "Nessun avviso né errore."


def _next_title(nxt: dict[str, Any], name: Callable[[str], str] = str) -> str:
    who, upcoming = nxt.get("character"), nxt.get("next_to_post", nxt.get("character"))
    who, upcoming = name(who), name(upcoming) if upcoming else upcoming
    if upcoming and upcoming != who:
        return f"Suggerimento per {who} (il prossimo a postare è {upcoming})"
    return f"Prossimo turno: {who}"


def _ruling(v: Verdict) -> str | None:
    return v.details.get("ruling") or None


# --- text -----------------------------------------------------------------------------------------------------------

def render_text(audit: Audit, *, colour: bool = False, character: str | None = None,
                min_severity: str = "warning") -> str:
    """A readable per-turn report; ANSI colour only when asked (the command asks on a TTY)."""
    def paint(s: str, sev: str | None = None, bold: bool = False) -> str:
        if not colour:
            return s
        return (_BOLD if bold else "") + (_COLOUR.get(sev or "", "")) + s + _RESET

    t = audit.thread
    sel = select(audit, character, min_severity)
    lines = [paint(f"Arbitro — {t.title or t.url} (regolamento {audit.ruleset})", bold=True), t.url,
             _summary(audit, sel.counts)]
    note = hidden_note(sel)
    if note:
        lines.append(note)
    for i, p, verdicts in sel.posts:
        who = p.character or p.author
        lines.append("")
        lines.append(paint(f"#{i} post {p.id} · {who}" + (f" (autore {p.author})" if p.author != who else ""), bold=True))
        for v in verdicts:
            roll = f" lancio {v.roll + 1}" if v.roll is not None else ""
            head = f"  {_MARK[v.severity]} {SEVERITY_IT[v.severity]:<7} {v.code}{roll}"
            lines.append(paint(head, v.severity) + f"  {v.message}{_numbers(v)}")
            lines.append(f"      ↳ {v.rule}" + (f" · decisione del master: {_ruling(v)}" if _ruling(v) else ""))
        if not verdicts:
            lines.append("  nessuna osservazione")
    if not sel.posts and sel.filtered:
        lines += ["", _nothing_shown(sel)]
    if audit.deleted:
        lines += ["", paint(DELETED_TITLE, bold=True)]
        for v in audit.deleted:
            lines.append(paint(f"  {_MARK[v.severity]} {SEVERITY_IT[v.severity]:<7} {v.code}", v.severity)
                         + f"  {v.message}")
    lines.append("")
    lines.append(paint("Stato finale", bold=True))
    for name, ch in audit.characters.items():
        lines.append("  " + character_line(name, ch, audit.ruleset))
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


# --- Markdown -------------------------------------------------------------------------------------------------------

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


def render_markdown(audit: Audit, *, character: str | None = None, min_severity: str = "warning") -> str:
    """A Markdown report: summary, one table per post with verdicts, final state, next-turn hint."""
    t = audit.thread
    sel = select(audit, character, min_severity)
    out = [f"# Arbitro — {_md_escape(t.title or t.url)}", "",
           f"Discussione: {_md_link(t.url, t.url)} · regolamento `{audit.ruleset}` · "
           + _summary(audit, sel.counts, lambda _sev, s: f"**{s}**"), ""]
    note = hidden_note(sel)
    if note:
        out += [_md_escape(note), ""]
    out += ["## Turni", ""]
    for i, p, verdicts in sel.posts:
        who = p.character or p.author
        out.append(f"### #{i} — post {_md_link(p.id, p.url)} · {_md_escape(who)}")
        out.append("")
        if not verdicts:
            out += ["Nessuna osservazione.", ""]
            continue
        out.append("| gravità | codice | lancio | messaggio | atteso | trovato | regola |")
        out.append("|---|---|---|---|---|---|---|")
        for v in verdicts:
            ruling = _ruling(v)
            msg = _md_escape(v.message) + (f" — *decisione del master: {_md_escape(ruling)}*" if ruling else "")
            expected, found = _compared(v) or ("", "")
            out.append(f"| {SEVERITY_IT[v.severity]} | {_md_escape(v.code)} | {'' if v.roll is None else v.roll + 1} | "
                       f"{msg} | {_md_escape(expected)} | {_md_escape(found)} | {_md_escape(v.rule)} |")
        out.append("")
    if not sel.posts and sel.filtered:
        out += [_nothing_shown(sel), ""]
    if audit.deleted:
        out += [f"## {DELETED_TITLE}", "", "| gravità | codice | post | messaggio |", "|---|---|---|---|"]
        out += [f"| {SEVERITY_IT[v.severity]} | {_md_escape(v.code)} | {_md_escape(v.post)} | {_md_escape(v.message)} |"
                for v in audit.deleted]
        out.append("")
    out += ["## Stato finale", ""]
    for name, ch in audit.characters.items():
        out.append(f"- {_md_escape(character_line(name, ch, audit.ruleset))}")
    nxt = audit.next or {}
    if nxt.get("character"):
        out += ["", f"## {_next_title(nxt, _md_escape)}", ""]
        out += [f"- {_md_escape(h)}" for h in nxt.get("hints", [])]
        if nxt.get("dice_tags"):
            out += [""] + _md_code_block([d["tag"] for d in nxt["dice_tags"]])
    return "\n".join(out) + "\n"


# --- BBCode ---------------------------------------------------------------------------------------------------------

BB_COLOUR = {"error": "#c0392b", "warning": "#b9770e", "info": "#2471a3"}  # the report page's palette
_BB_BREAK = "[b][/b]"  # an empty bold tag: no forum reads a tag across it, readers see and copy the text unchanged
_BB_OPEN = re.compile(r"\[|<(?=[A-Za-z/!?])")
_BB_URL = re.compile(r"https?://[^\s\[\]<>\"']+\Z", re.I)
_BB_CODE_END = re.compile(r"\[(?=/code)", re.I)
_BB_TITLE = {"info": "Verdetti", "warning": "Errori e avvisi", "error": "Errori"}  # by --min-severity


def _bb(s: Any) -> str:
    """Post-derived text as inert BBCode: every `[` (and every `<` opening an HTML tag, for forums with HTML on) is
    followed by an empty [b][/b], so it starts no tag; one line."""
    return _BB_OPEN.sub(lambda m: m.group(0) + _BB_BREAK, str(s)).replace("\r", " ").replace("\n", " ")


def _bb_link(label: str, url: str | None) -> str:
    """[url=…] only to an http(s) address with nothing that could end the tag early; else the bare label."""
    if url and _BB_URL.match(url):
        return f"[url={url}]{_bb(label)}[/url]"
    return _bb(label)


def _bb_code(lines: list[str]) -> str:
    """A [code] box: its content prints literally, so only a `[/code` that would close it early is changed (its
    bracket becomes the full-width ［)."""
    return "[code]" + "\n".join(_BB_CODE_END.sub("［", ln.replace("\n", " ")) for ln in lines) + "[/code]"


def _bb_list(items: list[str]) -> list[str]:
    return ["[list]"] + [f"[*]{it}" for it in items] + ["[/list]"] if items else []


def render_bbcode(audit: Audit, *, character: str | None = None, min_severity: str = "warning",
                  report_url: str | None = None) -> str:
    """Forum BBCode (ForumFree, Forumotion, phpBB; only [b] [color] [list] [*] [url] [code]): the verdict summary,
    one line per verdict shown with a link to its post, the fighters' state and the next turn."""
    t = audit.thread
    sel = select(audit, character, min_severity)
    head = [f"[b]Arbitro — {_bb(t.title or t.url)}[/b]",
            f"{_bb_link('Discussione', t.url)} · regolamento {_bb(audit.ruleset)} · "
            + _summary(audit, sel.counts, lambda sev, s: f"[color={BB_COLOUR[sev]}][b]{s}[/b][/color]")]
    note = hidden_note(sel, how=False)
    if note:
        full = f" ({_bb_link('rapporto completo', report_url)})" if report_url and _BB_URL.match(report_url) else ""
        head.append(f"{note}{full}.")
    out = head + [""]
    items = []
    for i, p, verdicts in sel.posts:
        post = _bb_link(f"#{i} {p.character or p.author}", p.url)
        for v in verdicts:
            sev = f"[color={BB_COLOUR[v.severity]}][b]{SEVERITY_IT[v.severity]}[/b][/color]"
            ruling = f" — decisione del master: {_bb(_ruling(v))}" if _ruling(v) else ""
            items.append(f"{post} · {sev} {_bb(v.message)}{_bb(_numbers(v))}{ruling}")
        if not verdicts:
            items.append(f"{post} · nessuna osservazione")
    out += [f"[b]{_BB_TITLE[min_severity]}[/b]"]
    out += _bb_list(items) or [_nothing_shown(sel)]
    if audit.deleted:
        out += ["", f"[b]{DELETED_TITLE}[/b]"]
        out += _bb_list([f"[color={BB_COLOUR[v.severity]}][b]{SEVERITY_IT[v.severity]}[/b][/color] {_bb(v.message)}"
                         for v in audit.deleted])
    if audit.characters:
        out += ["", "[b]Stato finale[/b]"]
        out += _bb_list([_bb(character_line(name, ch, audit.ruleset)) for name, ch in audit.characters.items()])
    nxt = audit.next or {}
    if nxt.get("character"):
        out += ["", f"[b]{_next_title(nxt, _bb)}[/b]"]
        out += _bb_list([_bb(h) for h in nxt.get("hints", [])])
        if nxt.get("dice_tags"):
            out += ["Dadi pronti da incollare:", _bb_code([d["tag"] for d in nxt["dice_tags"]])]
    return "\n".join(out) + "\n"


__all__ = ["render_text", "render_markdown", "render_bbcode", "character_line", "counts", "select", "Selection",
           "resources", "resource_texts", "pool_labels", "hidden_note", "SEVERITIES", "SEVERITY_IT"]
