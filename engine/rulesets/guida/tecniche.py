"""What the registry says of a technique (and what a Calcolo states of one): the lookups every section reads."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from . import stacks as S
from ...history import DamageCalc, Registry, Technique
from .state import Incoming


def _technique(reg: Registry, names: tuple[str, ...], owner: str | None = None) -> Technique | None:
    """The first of `names` the registry knows (case ignored), not an armour; `owner`'s own when two characters
    have a technique so called."""
    if not reg.techniques:
        return None
    for n in names:
        t = reg.technique(n, owner, str.lower)
        if t is not None and t.kind != "armatura":
            return t
    return None


def _bonus_statistica(reg: Registry, attacker: str, tech: Technique | None) -> int | None:
    """Bonus Statistica (Regolamento Tecniche, not in the text): the technique's, else the character's."""
    if tech is None and attacker not in reg.characters:
        return None  # nothing to read it from
    for extra in ((tech.extra if tech else {}), (reg.characters[attacker].extra if attacker in reg.characters else {})):
        v = extra.get("bonus_statistica")
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, dict) and tech is not None:
            stat = tech.extra.get("statistica")
            if stat in v and isinstance(v[stat], int):
                return v[stat]
    return None


def _int_value(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _stated(calc: DamageCalc, name: str) -> float | None:
    for t in calc.terms:
        if t.name.lower() == name.lower():
            return t.value if math.isfinite(t.value) else None
    return None


def _tech_stacks(reg: Registry, atk: Incoming) -> tuple[tuple[str, int], ...] | None:
    """The Stacks the attack's technique applies by itself, as the registry lists them (`extra.stack = {Nome = N}`);
    None when the registry does not say (the engine cannot know them: the Calcolo's own list is taken once)."""
    tech = _technique(reg, atk.techniques, atk.attacker)
    table = tech.extra.get("stack") if tech is not None else None
    if not isinstance(table, dict):
        return None
    return _stack_table(tuple(table.items()))


@lru_cache(maxsize=256)
def _stack_table(items: tuple[tuple[Any, Any], ...]) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for name, n in items:
        canon = " ".join(w.capitalize() for w in str(name).split())
        try:
            S.tipo_of(canon)
        except S.UnknownStack:
            continue  # not a Stack of the rule text: nothing the engine can track
        if _int_value(n) and n > 0:
            out.append((canon, n))
    return tuple(out)
