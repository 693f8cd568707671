"""How `cosmo` reads the registry and the fighters' numbers: names, techniques and levels, stats, armour."""
from __future__ import annotations

import re
from typing import Any

from ...history import Character, Technique
from .._shared import canon, find as _shared_find, pool_max
from .state import Fighter, State
from .tables import fold
from .turno import _Ctx

ARMOUR_ON = "con armatura"
ARMOUR_OFF = "senza armatura"
_WHOLE = re.compile(r"\s*-?\d+\s*")


def find(mapping: dict[str, Any], name: str | None) -> Any:
    return _shared_find(mapping, name, fold)  # cosmo's fold also drops apostrophes


def tech(state: State, name: str | None, owner: str | None) -> Technique | None:
    """The technique `name`, `owner`'s first when two characters have one so called (cosmo's fold)."""
    return state.registry.technique(name, owner, fold)


def canon_name(state: State, name: str | None) -> str | None:
    return canon(state, name, fold)


def int_of(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str) and _WHOLE.fullmatch(v):
        return int(v)
    return None


def level_of(t: Technique | None) -> int | None:
    if t is None:
        return None
    v = int_of(t.extra.get("livello"))
    if v is None and t.category and t.category.strip().isdigit():
        v = int(t.category.strip())
    return v


def plain_names(names: tuple[str, ...]) -> list[str]:
    """The bracketed words of an action line without `[Con Armatura]` / `[Senza Armatura]`."""
    return [n for n in names if fold(n) not in (ARMOUR_ON, ARMOUR_OFF)]


def from_registry(name: str, c: Character) -> Fighter:
    pv, cosmo = pool_max(c, "PV"), pool_max(c, "Cosmo")
    return Fighter(name=name, pv=pv, pv_max=pv, cosmo=cosmo, cosmo_max=cosmo)


def stat_of(state: State, name: str, stat: str) -> int | None:
    c = find(state.registry.characters, name)
    if c is not None:
        st = find(c.stats, stat)
        if st is not None:
            return st.total
    f = state.fighters.get(name)
    if f is not None:
        v = find(f.stats, stat)
        if v is not None:
            return v
    return None


def armour(state: State, name: str, names: tuple[str, ...]) -> bool | None:
    keys = {fold(n) for n in names}
    if ARMOUR_ON in keys:
        return True
    if ARMOUR_OFF in keys:
        return False
    c = find(state.registry.characters, name)
    v = c.extra.get("armatura") if c else None
    return v if isinstance(v, bool) else None


def value(state: State, ctx: _Ctx, who: str, stat: str, stated: int | None, rule: str,
          roll: int | None = None) -> int | None:
    """The stat value to use: registry (or the fighter's schema) first; a different written value is an error."""
    known = stat_of(state, who, stat)
    if known is not None and stated is not None and stated != known:
        ctx.add("dice.stat_mismatch", f"{stat} di {who} è {known}, non {stated}.", rule, roll=roll,
                expected=known, found=stated, stat=stat, fighter=who)
    return known if known is not None else stated
