"""What the master's registry says of a character or a weapon: lookups, ability modifiers, numbers, pools."""
from __future__ import annotations

from typing import Any

from ...history import Character, Technique
from .._shared import as_int, find, fold, pool_max
from . import tables as T
from .state import Fighter, State


def char(state: State, name: str | None) -> Character | None:
    return find(state.registry.characters, name)


def technique(state: State, name: str | None, owner: str | None = None) -> Technique | None:
    """The technique `name`, `owner`'s first when two characters have one so called (case and accents ignored)."""
    return state.registry.technique(name, owner, fold)


def ability_mod(c: Character | None, ability: str) -> int | None:
    if c is None:
        return None
    mods = c.extra.get("mod") or c.extra.get("modificatori") or {}
    for k, v in (mods.items() if isinstance(mods, dict) else ()):
        if T.ABILITIES.get(fold(str(k))) == ability:
            return as_int(v)
    for k, st in c.stats.items():
        if T.ABILITIES.get(fold(k)) == ability:
            return T.ability_modifier(st.total)
    return None


def int_extra(obj: Any, *keys: str) -> int | None:
    if obj is None:
        return None
    for k in keys:
        v = as_int(obj.extra.get(k))
        if v is not None:
            return v
    return None


def fighter_from_registry(name: str, c: Character) -> Fighter:
    ps, pf, pr = pool_max(c, "PS"), pool_max(c, "PF"), pool_max(c, "PR")
    return Fighter(name=name, ps=ps, ps_max=ps, pf=pf, pf_max=pf, pr=pr, pr_max=pr)
