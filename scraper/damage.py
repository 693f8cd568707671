"""Damage and cure calculations written in a post ("Calcolo dei Danni", "Calcolo delle Cure")."""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

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
    rf"\s*(?:\[(?P<tech>[^\[\]]{{0,120}})\](?:\s*\[[^\[\]]{{0,120}}\]){{0,3}})?\s*(?:\((?P<who>[^()]{{0,160}})\))?"
    rf"(?:\s*\((?P<who2>[^()]{{0,160}})\))?"
    rf"(?:\s*(?P<bare>[^:()\[\]=\n]{{1,60}}?\s(?:vs\.?|contro)\s[^:()\[\]=\n]{{1,60}}?)(?=\s*:))?"
    rf"\s*(?P<colon>[:\-]|=>)?\s*",
    re.IGNORECASE,
)
# One token of a calculation's side: a number (Italian thousands "1.000", decimals "6,5" or "1.5", "50%"), a word
# operator on a number ("dimezzati", "metà"), an operator word ("meno"), a name, a sign, a bracket.
_TOKEN = re.compile(
    rf"(?P<num>\d{{1,3}}(?:\.\d{{3}})+(?![\d.,])|\d{{1,6}}(?:[.,]\d{{1,3}})?(?![\d]))(?P<pct>\s*%)?"
    rf"|(?P<wop>(?<![{_W}])(?:dimezzat[oiae]|a\s+metà|metà|raddoppiat[oiae]|doppi[oa]|triplicat[oiae])(?![{_W}]))"
    rf"|(?P<opw>(?<![{_W}])(?:più|meno|diviso(?:\s+per)?|per)(?=\s*[\d(\[]|\s+[{_W}]+\s*\(?\s*\d))"
    rf"|(?P<name>[{_W}]+(?:[ '\-][{_W}]+){{0,5}})"
    rf"|(?P<op>[+\-*/x×:÷])|(?P<open>[(\[{{])|(?P<close>[)\]}}])|(?P<space>\s+)|(?P<other>.)",
    re.IGNORECASE,
)
_WORD_OPS = re.compile(r"(?<![\w])(dimezzat[oiae]|a\s+metà|metà|raddoppiat[oiae]|doppi[oa]|triplicat[oiae])(?![\w])",
                       re.IGNORECASE)
_WORD_VALUE = {"dimezzat": ("/", 2), "metà": ("/", 2), "a metà": ("/", 2), "raddoppiat": ("*", 2),
               "doppi": ("*", 2), "triplicat": ("*", 3)}
_OP_WORDS = {"più": "+", "meno": "-", "per": "*", "diviso": "/"}
# A name that starts with an operator word ("meno Resistenza"): the word is the operator.
_NAME_OP = re.compile(rf"^(più|meno|per|diviso(?:\s+per)?)\s+(?=[{_W}])", re.IGNORECASE)
_RESULT = re.compile(rf"^\s*(?P<val>-?(?:\d{{1,3}}(?:\.\d{{3}})+(?![\d.,])|\d{{1,6}}(?:[.,]\d{{1,3}})?(?!\d)))"
                     rf"\s*(?P<unit>[{_W}]+(?:\s+[{_W}]+)?)?")
_TIMES = re.compile(rf"(?<![{_W}])[xX×](?=\s*[\d(\[])")
# "= 8 Danni → 4", "= -2 -> 0": an arrow states the next value, as "=" does
_ARROW = re.compile(r"→|⇒|->(?=\s*-?\d)")
_MAX_TOKENS = 200  # a real calculation has a few dozen; a hostile line stays cheap
# "…): Danno Puro: Potenza 14 = 14": the kind named before the terms, its colon no division
_KIND_PREFIX = re.compile(r"^\s*dann[oi]\s+(?:pur[oi]|semi-?\s?pur[oi]|normal[ei]|aggiuntiv[oi]|ambiental[ei])"
                          r"\s*(?::|-(?!\s*\d))\s*", re.IGNORECASE)
_KIND_TAIL = 80  # characters after the stated result read for the kind ("= 14 Danni Puri", "[Danno Semi-Puro]")
# After the stated result the arithmetic goes on only until a list starts: "= 20 Danni, Mira Testa, 2 Stack di
# Stordimento" reports conditions (the rule asks to write them there), "+ 2 Stack di …" too; "= 8 Danni x2" goes on.
_REPORT = re.compile(r"[;|]|,(?!\d)|(?:[+e]\s*)?\b\d+\s*stack", re.IGNORECASE)


_CURA = re.compile(r"cur[ae]|rigenerazion")
_SEMI_PURO = re.compile(r"semi-?\s?pur")
_PURO = re.compile(r"dann[oi] pur|\bpur[oi]\b")
_NON_PURO = re.compile(r"\bnon\s+(?:semi-?\s?)?pur[oi]\b")


def _kind_of(header: str, body: str) -> str:
    text = (header + " " + body).lower()
    # each pattern needs its literal ("cur"/"rigenerazion", "semi", "pur"): checked first, C-level
    head = header.lower()
    if ("cur" in head or "rigenerazion" in head) and _CURA.search(head):
        return "cura"
    if "non " in text and "pur" in text:
        text = _NON_PURO.sub(" ", text)  # "8 Danni (non puri)": said to be no Danno Puro
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


_OPS = {"x": "*", "×": "*", ":": "/", "÷": "/"}


def _word_op(word: str) -> tuple[str, int]:
    w = " ".join(word.lower().split())
    for key, val in _WORD_VALUE.items():
        if w.startswith(key):
            return val
    return ("/", 2)


# Numbers are ints, or Fractions once a decimal or a division needs one (exact, and ints are far cheaper).
_Num = Union[int, Fraction]


def _number(text: str) -> _Num:
    if text.isdigit():
        return int(text)
    if "." in text and len(text.rsplit(".", 1)[1]) == 3 and "," not in text:
        return int(text.replace(".", ""))  # "1.000": Italian thousands
    return Fraction(text.replace(",", "."))


def _div(a: _Num, b: _Num) -> _Num:
    return Fraction(a, b) if isinstance(a, int) and isinstance(b, int) else a / b


def _scaled(x: _Num, w: tuple[str, int]) -> _Num:
    return _div(x, w[1]) if w[0] == "/" else x * w[1]


@dataclass
class _Leaf:
    """A written number: `op` as written before it, its name, its value; `eff` what it counts for when the text says
    so next to it ("Armatura 3 (dimezzata: 1,5)", "metà Armatura 6", "Armatura 3/2"); `note` a breakdown written
    after it ("Potenza 14 (Potenziale 10 + Bonus Statistica 4)"), whose numbers are terms but count once."""

    op: str
    name: str
    value: _Num
    eff: _Num | None = None
    note: list | None = None
    word: bool = False  # a word operator ("dimezzati") on what precedes it
    said: tuple[str, int] | None = None  # a word operator in brackets after it: "3 (dimezzata)", "= 4 (dimezzati)"


@dataclass
class _Group:
    """A bracketed part of the calculation, computed before the operation in front of it applies."""

    op: str
    items: list
    scale: tuple[str, int] | None = None  # "metà (…)": a word operator in front of it


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text):
        kind = "num" if m.group("num") else (m.lastgroup or "other")  # lastgroup of "50 %" is "pct"
        if kind == "space":
            if out:
                out.append(("space", " "))
            continue
        if kind == "num":
            out.append(("num", m.group("num")))
            if m.group("pct"):
                out.append(("pct", "%"))
        elif kind == "name":
            name = m.group("name")
            nm = _NAME_OP.match(name)
            if nm:
                out.append(("op", _OP_WORDS[nm.group(1).split()[0].lower()]))
                name = name[nm.end():]
            out.append(("name", name))
        elif kind == "opw":
            out.append(("op", _OP_WORDS[m.group("opw").split()[0].lower()]))
        elif kind == "op":
            op = m.group("op")
            out.append(("op", op if op == ":" else _OPS.get(op.lower(), op)))  # ":" divides or labels: the reader says
        else:
            out.append((kind, m.group(kind)))
        if len(out) > _MAX_TOKENS:
            break
    return out


class _Reader:
    """Reads one side of a calculation into leaves and groups (recursive descent over `_tokens`)."""

    def __init__(self, toks: list[tuple[str, str]]) -> None:
        self.toks = toks
        self.i = 0

    def _skip(self, j: int) -> int:
        toks = self.toks
        while j < len(toks) and toks[j][0] == "space":
            j += 1
        return j

    def _at(self, j: int) -> tuple[str, str]:
        return self.toks[j] if j < len(self.toks) else ("end", "")

    def next(self) -> tuple[str, str]:
        self.i = self._skip(self.i)
        tok = self._at(self.i)
        self.i += 1
        return tok

    def _bracket_name(self, j: int) -> str | None:
        """`[Armatura]` or `(Armatura)` opening at token j: a bracket holding words only, consumed; else None."""
        toks = self.toks
        k = j + 1
        words = []
        while k < len(toks) and toks[k][0] in ("name", "space"):
            if toks[k][0] == "name":
                words.append(toks[k][1])
            k += 1
        if words and self._at(k)[0] == "close":
            self.i = k + 1
            return " ".join(words)
        return None

    def seq(self, depth: int = 0) -> list:
        items: list = []
        op: str | None = None
        name = ""
        scale: tuple[str, int] | None = None
        while True:
            kind, text = self.next()
            if kind == "end":
                return items
            if kind == "close":
                if depth:
                    return items
                continue  # an unmatched closing bracket: nothing to close
            if kind == "name":
                name = text  # a name with no number after it ("8 Danni") is a word, not a term
                continue
            if kind == "op":
                if text == ":" and name:
                    continue  # "Potenza: 14": the colon labels the number
                text = "/" if text == ":" else text
                if op in ("*", "/") and text == "-":
                    continue  # "x -1": still a multiplication
                op, name = text, ""
                continue
            if kind == "wop":
                w = _word_op(text)
                if self._at(self._skip(self.i))[0] in ("name", "num", "open"):
                    scale = w  # "metà Armatura 6", "metà (…)": on what follows only
                else:
                    items.append(_Leaf(w[0], "", w[1], word=True))  # "= 8, raddoppiati": on what precedes
                continue
            if kind == "num":
                value = _number(text)
                leaf_op = op or "+"
                j = self._skip(self.i)
                if self._at(j)[0] == "pct":
                    self.i = j + 1
                    value = _div(value, 100)
                    if items and op in (None, "*"):
                        leaf_op = "*"  # "Potenza 14 x 50%"
                if not name:
                    j = self._skip(self.i)
                    if self._at(j) == ("open", "["):
                        name = self._bracket_name(j) or ""  # "- 1,5 [Armatura]"
                leaf = _Leaf(leaf_op, name.strip(), value)
                if scale is not None:
                    leaf.eff = _scaled(value, scale)
                items.append(leaf)
                op, name, scale = None, "", None
                self._after_number(leaf, items, depth)
                continue
            if kind == "open":
                j = self._skip(self.i)
                if name and self._at(j)[0] == "num" and self._at(self._skip(j + 1))[0] == "close":
                    # "Potenza (14)": the bracket holds the named number
                    self.i = j
                    continue
                bname = self._bracket_name(self.i - 1)
                if bname is not None:
                    name = bname  # "[Armatura] 3"
                    continue
                if depth < 8:
                    inner = self.seq(depth + 1)
                    if inner and isinstance(inner[0], _Leaf) and inner[0].op in "*/" and op is None:
                        items.extend(inner)  # "(x2)", "(/2)": the bracket goes on with the calculation
                    elif inner:
                        items.append(_Group(op or "+", inner, scale))
                op, name, scale = None, "", None
                continue
            # "other" (punctuation, symbols) and a stray "%": no term

    def _after_number(self, leaf: _Leaf, items: list, depth: int) -> None:
        """What the text says right after a number: a tight fraction ("Armatura 3/2", not the first term) or a
        note in brackets ("Armatura 3 (dimezzata: 1,5)", "Potenza 14 (Potenziale 10 + Bonus Statistica 4)")."""
        i = self.i
        if (leaf.name and len(items) > 1 and self._at(i) == ("op", "/") and self._at(i + 1)[0] == "num"):
            divisor = _number(self._at(i + 1)[1])
            if divisor:
                leaf.eff = _div(leaf.value, divisor)
                self.i = i + 2
            return
        j = self._skip(i)
        if self._at(j) != ("open", "(") or depth >= 8:
            return
        k = self._skip(j + 1)
        first = self._at(k)
        if first[0] not in ("name", "wop", "num"):
            return  # "(x2)" and the like: part of the calculation
        self.i = j + 1
        if first[0] == "wop":
            # "(dimezzata: 1,5)", "(metà)": what the number counts for, said next to it
            nums = []
            m = k + 1
            while self._at(m)[0] not in ("close", "open", "end"):
                if self._at(m)[0] == "num":
                    nums.append(_number(self._at(m)[1]))
                m += 1
            if self._at(m)[0] == "close" and len(nums) <= 1:
                w = _word_op(first[1])
                leaf.eff = nums[0] if nums else _scaled(leaf.value, w)
                leaf.said = None if nums else w
                self.i = m + 1
            return
        self.i = j + 1
        note = self.seq(depth + 1)
        if note and all(isinstance(x, _Leaf) and x.op in "+-" and not x.word for x in note):
            leaf.note = note  # a breakdown of the number: its terms kept, counted once
        else:
            items.extend(note)  # no breakdown: part of the calculation after all


def _value(items: list, start: _Num | None = 0) -> _Num | None:
    """The calculation's arithmetic from `start`, left to right (the rulings apply multipliers last), a bracket
    first."""
    v = start
    if v is None:
        return None
    for it in items:
        if isinstance(it, _Group):
            x = _value(it.items)
            if x is None:
                return None
            if it.scale is not None:
                x = _scaled(x, it.scale)
        else:
            x = it.eff if it.eff is not None else it.value
        if it.op == "+":
            v += x
        elif it.op == "-":
            v -= x
        elif it.op == "*":
            v *= x
        elif x:
            v = _div(v, x)
        else:
            return None
    return v


def _flat(items: list, op: str | None = None) -> list[DamageTerm]:
    """The written numbers in order, each with the operation written before it (a bracket's first number takes
    the bracket's), a breakdown's numbers after the number they break down."""
    out: list[DamageTerm] = []
    for n, it in enumerate(items):
        first_op = op if n == 0 and op is not None else it.op
        if isinstance(it, _Group):
            out.extend(_flat(it.items, first_op))
        else:
            out.append(DamageTerm(first_op, it.name, float(it.value)))
            if it.note:
                out.extend(_flat(it.note, "+"))
            if it.said is not None:
                out.append(DamageTerm(it.said[0], "", float(it.said[1])))
    return out


def _side(text: str) -> list:
    """One side of a calculation (between two "="): its leaves and groups. A leading bare multiplier
    ("2 x (Potenza 14 - Resistenza 6)") goes last, where the rulings apply multipliers."""
    if "x" in text or "X" in text or "×" in text:
        text = _TIMES.sub("*", text)
    items = _Reader(_tokens(text)).seq()
    if (len(items) >= 2 and isinstance(items[0], _Leaf) and not items[0].name and items[0].op == "+"
            and isinstance(items[1], _Group) and items[1].op == "*"):
        items = [_Group("+", items[1].items, items[1].scale), _Leaf("*", "", items[0].value), *items[2:]]
    return items


def _resource(unit: str | None, kind: str) -> str:
    if unit:
        u = " ".join(unit.lower().split())
        if u in RESOURCE_ALIASES:
            return RESOURCE_ALIASES[u]
        first = u.split(" ")[0]
        if first in RESOURCE_ALIASES:
            return RESOURCE_ALIASES[first]
    return "PV"


def _restated(items: list) -> bool:
    """A step after "=" opens with the value so far written again ("= 8 / 2", "= -2 → 0")."""
    return bool(items) and isinstance(items[0], _Leaf) and not items[0].name and items[0].op in "+-" and not items[0].word


def _step_terms(items: list) -> list[DamageTerm]:
    """The terms of a step after "=": the restated value is none, a word said next to it is."""
    if not _restated(items):
        return _flat(items)
    said = items[0].said
    return ([DamageTerm(said[0], "", float(said[1]))] if said is not None else []) + _flat(items[1:])


def _chain(value: _Num | None, items: list) -> tuple[_Num | None, bool]:
    """A step after "=": its leading bare number restates the value so far (skipped), the operations after it
    apply to our value; bool says an operation written with a number was met ("= 8 Danni x2")."""
    if _restated(items):
        said = items[0].said
        items = items[1:]
        if said is not None and value is not None:
            # "= 4 (dimezzati)": the word says how the value so far became the number written
            value = _scaled(value, said)
    return _value(items, value), any(not (isinstance(x, _Leaf) and x.word) for x in items)


def _number_of(v: _Num | None) -> int | float | None:
    if v is None or isinstance(v, int):
        return v
    return int(v) if v.denominator == 1 else float(v)


def _who(h: re.Match[str]) -> tuple[str | None, str | None]:
    """(technique, "A vs B") of a heading: `[Cero] [Sonido] (A vs B)`, `(Cero) (A vs B)`, `[Cero] A vs B:`."""
    tech, who, who2 = h.group("tech"), h.group("who"), h.group("who2")
    if who2 is not None:
        if who is not None and not _VS.search(who) and _VS.search(who2):
            tech, who = tech or who, who2
    if who is None and h.group("bare"):
        who = h.group("bare")
    return (tech.strip() or None) if tech else None, who


def _parse_line(line: str) -> DamageCalc | None:
    h = _HEADER.search(line)
    if not h:
        return None
    kw = h.group("kw")
    tech, who = _who(h)
    bare_cura = kw.lower().startswith(("cura", "rigenerazione"))
    # A bare "Cura" in prose is no calculation: it needs its [Tecnica] or (A vs B) and a colon.
    if bare_cura and not (tech or who):
        return None
    if h.group("colon") is None and not (tech or who):
        return None
    body = line[h.end():]
    if "=" not in body:
        return None
    if ">" in body or "→" in body or "⇒" in body:
        body = _ARROW.sub("=", body)
    parts = body.split("=")
    prefix = _KIND_PREFIX.match(parts[0])
    left = parts[0][prefix.end():] if prefix else parts[0]
    items = _side(left.lstrip(">"))
    terms = _flat(items)
    if not terms:
        return None
    value = _value(items)
    for middle in parts[1:-1]:
        more = _side(middle.lstrip(">"))
        value, _ = _chain(value, more)
        # "= 8 / 2 =": the leading bare number repeats the previous result; keep the operations after it.
        terms.extend(_step_terms(more))
    last = parts[-1].lstrip(">")
    res = _RESULT.match(last)
    result = _number_of(_number(res.group("val").lstrip("-")) * (-1 if res.group("val").startswith("-") else 1)
                        ) if res else None
    unit = res.group("unit") if res else None
    if res:
        # "= 8 Danni x2", "= 4 (dimezzati)": operations after the stated number, up to a reported list
        cut = _REPORT.search(last, res.end())
        rest = _side(last[:cut.start()] if cut else last)
        value, written = _chain(value, rest)
        flat = _step_terms(rest)
        if flat:
            terms.extend(flat)
            if written:
                result = None  # the number after "=" is not the end of the calculation: no result is stated
    tail = last[res.start("unit") if res and res.group("unit") else (res.end() if res else 0):][:_KIND_TAIL]
    kind = _kind_of(kw, parts[0] + " " + tail)
    actor = target = None
    if who:
        vs = _VS.search(who)
        if vs:
            actor = who[:vs.start()].strip() or None
            target = who[vs.end():].strip() or None
        else:
            actor = who.strip() or None
            target = actor if kind == "cura" else None
    return DamageCalc(line.strip(), tech, actor, target, kind, tuple(terms), result, _resource(unit, kind),
                 _number_of(value))


def parse_damage_calcs(text: str) -> list[DamageCalc]:
    """Every damage/cure calculation in a post's text, one per line, in order; never raises.

    `Calcolo Danni [Artigli Affilati] (Hollow vs Quincy): Potenza 14 - Resistenza 6 = 8 Danni` →
    kind "normale", terms (+Potenza 14, -Resistenza 6), result 8, value 8, resource "PV".
    A heading alone on its line (`Calcolo Danni [Cero] (Hollow vs Quincy):`) joins the next line.
    """
    if not isinstance(text, str) or "=" not in text:
        return []
    out: list[DamageCalc] = []
    carry = ""
    for raw_line in text.splitlines():
        if carry and raw_line.strip():
            raw_line, carry = carry + " " + raw_line, ""
        # A calculation states its result after "=" and names damage or cure: cheap checks first.
        if "=" not in raw_line or len(raw_line) > _MAX_LINE:
            low = raw_line.lower()
            if (raw_line.rstrip().endswith(":") and len(raw_line) < 300
                    and ("dann" in low or "cur" in low or "rigener" in low)):
                carry = raw_line.rstrip()
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
