"""Damage and cure calculations written in a post ("Calcolo dei Danni", "Calcolo delle Cure")."""
from __future__ import annotations

import re

from engine.fastdata import maker
from engine.history import DamageCalc, DamageTerm

from scraper.dicetag import _VS, clean_markup  # the same "A vs B" reading as dice labels
from scraper.schema import RESOURCE_ALIASES

_W = r"A-Za-zÀ-ÖØ-öø-ÿ"
_MAX_LINE = 2000

# "Calcolo Danni", "Calcolo dei Danni", "Danno Aggiuntivo", "Cura", "Calcolo delle Cure", "Rigenerazione"
_HEADER = re.compile(
    rf"(?P<kw>calcolo\s+(?:de[il]\s+|del\s+)?dann[oi](?:\s+(?P<kwkind>aggiuntiv[oi]|ambiental[ei]|pur[oi]|"
    rf"semi-?\s?pur[oi]))?|calcolo\s+(?:della\s+|delle\s+)?cur[ae]|dann[oi]\s+(?:aggiuntiv[oi]|ambiental[ei])|"
    rf"cura(?:\s+principale)?|rigenerazione)(?![{_W}])"
    rf"\s*(?:\[(?P<tech>[^\[\]]{{0,120}})\])?\s*(?:\((?P<who>[^()]{{0,160}})\))?\s*(?P<colon>[:\-]|=>)?\s*",
    re.IGNORECASE,
)
_TERM = re.compile(
    rf"(?P<op>[+\-*/x×:])?\s*(?P<name>[{_W}]+(?:[ '\-][{_W}]+){{0,5}})?\s*(?P<val>\d{{1,6}}(?:[.,]\d{{1,3}})?)"
    rf"(?!\d)(?P<pct>\s*%)?",
)
_WORD_OPS = re.compile(r"(?<![\w])(dimezzat[oiae]|a\s+metà|metà|raddoppiat[oiae]|doppi[oa]|triplicat[oiae])(?![\w])",
                       re.IGNORECASE)
_WORD_VALUE = {"dimezzat": ("/", 2.0), "metà": ("/", 2.0), "a metà": ("/", 2.0), "raddoppiat": ("*", 2.0),
               "doppi": ("*", 2.0), "triplicat": ("*", 3.0)}
_RESULT = re.compile(rf"^\s*(?P<val>-?\d{{1,6}})\s*(?P<unit>[{_W}]+(?:\s+[{_W}]+)?)?")
_TIMES = re.compile(rf"(?<![{_W}])[xX×](?=\s*\d)")
_FILLER = re.compile(r"[\s()\[\],;]+")
# "…): Danno Puro: Potenza 14 = 14": the kind named before the terms, its colon no division
_KIND_PREFIX = re.compile(r"^\s*dann[oi]\s+(?:pur[oi]|semi-?\s?pur[oi]|normal[ei]|aggiuntiv[oi]|ambiental[ei])"
                          r"\s*(?::|-(?!\s*\d))\s*", re.IGNORECASE)
_KIND_TAIL = 80  # characters after the stated result read for the kind ("= 14 Danni Puri", "[Danno Semi-Puro]")


_CURA = re.compile(r"cur[ae]|rigenerazion")
_SEMI_PURO = re.compile(r"semi-?\s?pur")
_PURO = re.compile(r"dann[oi] pur|\bpur[oi]\b")


def _kind_of(header: str, body: str) -> str:
    text = (header + " " + body).lower()
    # each pattern needs its literal ("cur"/"rigenerazion", "semi", "pur"): checked first, C-level
    head = header.lower()
    if ("cur" in head or "rigenerazion" in head) and _CURA.search(head):
        return "cura"
    has_pur = "pur" in text
    if has_pur and "semi" in text and _SEMI_PURO.search(text):
        return "semi-puro"
    if "aggiuntiv" in text:
        return "aggiuntivo"
    if "ambiental" in text:
        return "ambientale"
    if has_pur and _PURO.search(text):
        return "puro"
    return "normale"


# DamageTerm and DamageCalc filled directly (see dicetag._roll): the frozen __init__ costs three times more.
_term = maker(DamageTerm)  # fast constructors (engine.fastdata)
_calc = maker(DamageCalc)
_OPS = {"x": "*", "×": "*", ":": "/"}


def _word_op(word: str) -> tuple[str, float]:
    w = word.lower()
    for key, val in _WORD_VALUE.items():
        if w.startswith(key):
            return val
    return ("/", 2.0)


def _terms(expr: str) -> tuple[list[DamageTerm], bool]:
    """Terms of one side of a calculation, in order; bool says text other than terms was met."""
    terms: list[DamageTerm] = []
    leftover = False
    pos = 0
    if "x" in expr or "X" in expr or "×" in expr:
        expr = _TIMES.sub("*", expr)
    # Word operators ("dimezzati") become terms where they stand.
    marks = [(w.start(), w.end(), _word_op(w.group(1))) for w in _WORD_OPS.finditer(expr)]
    segments: list[tuple[str, tuple[str, float] | None]] = []
    for s, e, op in marks:
        segments.append((expr[pos:s], op))
        pos = e
    segments.append((expr[pos:], None))
    for seg, word in segments:
        p = 0
        for m in _TERM.finditer(seg):
            gap = seg[p:m.start()]
            if gap and not gap.isspace() and _FILLER.sub("", gap):  # most gaps are "" or " "
                leftover = True
            p = m.end()
            op = m.group("op") or "+"
            op = _OPS.get(op.lower(), op)
            name = (m.group("name") or "").strip()
            if op in "*/" and name.lower() in ("x", "per"):
                name = ""
            if not name and op == "+" and terms and terms[-1].op in "*/" and m.group("op") is None:
                leftover = True
            value = float(m.group("val").replace(",", "."))
            terms.append(_term(op, name, value))
        if _FILLER.sub("", seg[p:]):
            leftover = True
        if word is not None:
            terms.append(_term(word[0], "", word[1]))
    return terms, leftover


def _resource(unit: str | None, kind: str) -> str:
    if unit:
        u = " ".join(unit.lower().split())
        if u in RESOURCE_ALIASES:
            return RESOURCE_ALIASES[u]
        first = u.split(" ")[0]
        if first in RESOURCE_ALIASES:
            return RESOURCE_ALIASES[first]
    return "PV"


def _parse_line(line: str) -> DamageCalc | None:
    h = _HEADER.search(line)
    if not h:
        return None
    kw = h.group("kw")
    bare_cura = kw.lower().startswith(("cura", "rigenerazione"))
    # A bare "Cura" in prose is no calculation: it needs its [Tecnica] or (A vs B) and a colon.
    if bare_cura and not (h.group("tech") or h.group("who")):
        return None
    if h.group("colon") is None and not (h.group("tech") or h.group("who")):
        return None
    body = line[h.end():]
    if "=" not in body:
        return None
    parts = body.split("=")
    prefix = _KIND_PREFIX.match(parts[0])
    left = parts[0][prefix.end():] if prefix else parts[0]
    terms, _ = _terms(left.lstrip(">"))
    if not terms:
        return None
    for middle in parts[1:-1]:
        more, _ = _terms(middle.lstrip(">"))
        # "= 8 / 2 =": the leading bare number repeats the previous result; keep the operations after it.
        if more and more[0].op == "+" and not more[0].name:
            more = more[1:]
        terms.extend(more)
    res = _RESULT.match(parts[-1].lstrip(">"))
    result = int(res.group("val")) if res else None
    unit = res.group("unit") if res else None
    tail = parts[-1].lstrip(">")
    tail = tail[res.start("unit") if res and res.group("unit") else (res.end() if res else 0):][:_KIND_TAIL]
    kind = _kind_of(kw, parts[0] + " " + tail)
    actor = target = None
    who = h.group("who")
    if who:
        vs = _VS.search(who)
        if vs:
            actor = who[:vs.start()].strip() or None
            target = who[vs.end():].strip() or None
        else:
            actor = who.strip() or None
            target = actor if kind == "cura" else None
    tech = h.group("tech")
    return _calc(line.strip(), tech.strip() if tech and tech.strip() else None, actor, target, kind,
                 tuple(terms), result, _resource(unit, kind))


def parse_damage_calcs(text: str) -> list[DamageCalc]:
    """Every damage/cure calculation in a post's text, one per line, in order; never raises.

    `Calcolo Danni [Artigli Affilati] (Hollow vs Quincy): Potenza 14 - Resistenza 6 = 8 Danni` →
    kind "normale", terms (+Potenza 14, -Resistenza 6), result 8, resource "PV".
    """
    if not isinstance(text, str) or "=" not in text:
        return []
    out: list[DamageCalc] = []
    for raw_line in text.splitlines():
        # A calculation states its result after "=" and names damage or cure: cheap checks first.
        if "=" not in raw_line or len(raw_line) > _MAX_LINE:
            continue
        low = raw_line.lower()
        if "dann" not in low and "cur" not in low and "rigener" not in low:
            continue
        line = clean_markup(raw_line)
        calc = _parse_line(line)
        if calc is not None:
            out.append(calc)
    return out


__all__ = ["parse_damage_calcs"]
