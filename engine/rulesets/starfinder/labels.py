"""Dice-label reading shared by the `starfinder` and `poteri` rulesets (the generic forum tag form plus extras)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ...history import Roll
from .._shared import fold

__all__ = ["Label", "gm_constant", "line_after", "parse", "position_in"]

# `Azione [Tecnica, Tecnica] {Tag} (Attore vs Bersaglio, Altro): (+2 [Motivo] -4 [Motivo]) resto`
_ACTION = re.compile(r"^\s*([^\[\(\{:]*)")
_BRACKETS = re.compile(r"\[([^\]]*)\]")
_CURLY = re.compile(r"\{([^}]*)\}")
_PARTIES = re.compile(r"\(([^()]*?)\s+(?:vs\.?|contro)\s+([^()]*?)\)", re.I)
_MODIFIER = re.compile(r"([+\-−–])\s*(\d+)\s*\[([^\]]+)\]")
_MULTIPLIER = re.compile(r"(?<![\w\[])[x×*]\s*(\d+)\b(?:\s*\[([^\]]+)\])?", re.I)
_NUMBER_AFTER = "(?:\\s*[:=]?\\s*)(\\d+)"


@dataclass(frozen=True)
class Label:
    """A dice label read for these rulesets. Everything the text does not give is None / empty."""

    raw: str
    action: str = ""
    techniques: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # {Prima}, {2}, {Difensivo}
    actor: str | None = None
    targets: tuple[str, ...] = ()
    modifiers: tuple[tuple[int, str], ...] = ()
    multipliers: tuple[tuple[int, str], ...] = ()
    rest: str = ""  # text after the parties (where `CD 14`, `vs CAE 15`, `PF 2` live)
    numbers: dict[str, int] = field(default_factory=dict)

    @property
    def action_key(self) -> str:
        return fold(self.action)

    def number(self, *names: str) -> int | None:
        for n in names:
            if n in self.numbers:
                return self.numbers[n]
        return None


def parse(raw: str, extra_text: str = "", keywords: tuple[str, ...] = ()) -> Label:
    """Read `raw` (a dice label). `extra_text` (the rest of the line after the roll in the post) is
    searched too for `KEYWORD N` numbers such as `CAE 15`, `CD 14`, `PF 2`."""
    raw = raw or ""
    action = _ACTION.match(raw).group(1).strip(" -–:") if raw else ""
    parties = _PARTIES.search(raw)
    head = raw[: parties.start()] if parties else raw.split(":", 1)[0]
    techniques: list[str] = []
    first = _BRACKETS.search(head)
    if first:
        techniques = [t.strip() for t in first.group(1).split(",") if t.strip()]
    tags = tuple(t.strip() for t in _CURLY.findall(head) if t.strip())
    actor = None
    targets: tuple[str, ...] = ()
    tail = raw
    if parties:
        actor = parties.group(1).strip() or None
        targets = tuple(t.strip() for t in re.split(r",|\be\b", parties.group(2)) if t.strip())
        tail = raw[parties.end():]
    elif first:
        tail = raw[first.end():]
    mods = tuple((_signed(m.group(1), m.group(2)), m.group(3).strip()) for m in _MODIFIER.finditer(tail))
    mults = tuple((int(m.group(1)), (m.group(2) or "").strip()) for m in _MULTIPLIER.finditer(tail + " " + extra_text))
    rest = _MODIFIER.sub(" ", tail)
    numbers: dict[str, int] = {}
    search_in = f"{rest} {extra_text}"
    for kw in keywords:
        m = re.search(r"(?<![\w])" + re.escape(kw) + _NUMBER_AFTER, search_in, re.I)
        if m:
            numbers[kw] = int(m.group(1))
    return Label(raw=raw, action=action, techniques=tuple(techniques), tags=tags, actor=actor,
                 targets=targets, modifiers=mods, multipliers=mults, rest=rest.strip(), numbers=numbers)


def _signed(sign: str, digits: str) -> int:
    return -int(digits) if sign in "-−–" else int(digits)


def line_after(body: str, raw_label: str) -> str:
    """The text following a roll's label on its own line of the post body ('' when not found)."""
    if not body or not raw_label:
        return ""
    probe = raw_label.strip()[:40]
    i = body.find(probe) if probe else -1
    if i < 0:
        return ""
    j = body.find(raw_label.strip(), i)
    start = (j + len(raw_label.strip())) if j >= 0 else i + len(probe)
    end = body.find("\n", start)
    return body[start: end if end >= 0 else len(body)]


_NOT_NARRATIVE = re.compile(
    r"(?i)^\s*(?:(?:PF|PD|PS|PR|PV|PE|cosmo)\s*[:=]|registro\b|personaggio\s*:|scheda\b|nome\s*:|[-+]\s*\d+\s+\w+\s*\[)"
    r"|\b\d+\s*d\s*\d+\b|\[dice")


def position_in(body: str, raw_label: str) -> tuple[int, int] | None:
    """(characters of narrative before, characters of narrative after) the label's line in the body, None when
    the label is not found. Schema lines, Registro lines and dice lines are not narrative."""
    probe = (raw_label or "").strip()[:40]
    if not body or not probe:
        return None
    lines = body.split("\n")
    at = next((n for n, ln in enumerate(lines) if probe in ln), None)
    if at is None:
        return None

    def narrative(chunk: list[str]) -> int:
        return sum(len(re.sub(r"\s+", "", ln)) for ln in chunk if ln.strip() and not _NOT_NARRATIVE.search(ln))

    return narrative(lines[:at]), narrative(lines[at + 1:])


def gm_constant(r: Roll, declared: int) -> Roll:
    """Forumotion's Game Master rolls only the dice (`1d20`): the constant is what the player's label declares."""
    if r.source != "forumotion_gm" or r.constant != 0 or not declared:
        return r
    sign = "+" if declared > 0 else "-"
    return replace(r, constant=declared, expression=f"{r.count}d{r.sides}{sign}{abs(declared)}",
                   total=None if r.total is None else r.total + declared)


