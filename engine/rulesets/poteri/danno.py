"""Danno degli Attacchi: 3 + Nd6 (N = PF spent) never above 9 PD, and the PD a hit takes away."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...history import describe_problems
from .._shared import as_int, ensure_fighter, set_fighter
from ..starfinder.labels import gm_constant
from . import tables as T
from .state import Fighter, State
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power


def damage(state: State, turn: Turno, it: Item | None, spend: int, p: Power) -> int | None:
    """The damage of an Attacco cast with `spend` PF, read from its roll `it`; None when it cannot be applied."""
    if it is None:
        return None
    r = gm_constant(it.roll, T.DAMAGE_BASE)  # Forumotion's Game Master rolls only the dice
    if not r.authentic:
        turn.add("dice.not_authentic", "Il tiro dei danni non è autentico.", T.R_DAMAGE, roll=it.index,
                 expected="tiro del forum", found=describe_problems(r.problems) or r.source)
    if (r.count, r.sides) != (spend, 6):
        # another die's result is no damage of this power: the damage stays unknown (never taken as if right)
        turn.add("dice.wrong_die", f"Con {spend} PF il danno è 3 + {spend}d6, non {r.expression}: il danno "
                 "non si può applicare.", T.R_DAMAGE, roll=it.index, expected=f"{spend}d6+3", found=r.expression)
        return None
    if r.constant != T.DAMAGE_BASE:
        turn.add("dice.wrong_die", f"Con {spend} PF il danno è 3 + {spend}d6, non {r.expression}.",
                 T.R_DAMAGE, roll=it.index, expected=f"{spend}d6+3", found=r.expression)
    if r.faces is not None:
        raw = T.DAMAGE_BASE + sum(r.faces[:spend])
    elif r.total is not None:
        raw = r.total - r.constant + T.DAMAGE_BASE
    else:
        return None
    cap = int(state.settings["damage_cap"])
    if as_int(p.extra.get("limite_danno")) is not None:
        cap = as_int(p.extra["limite_danno"])  # "capacità eccezionali ... devono dichiararlo espressamente"
    if raw > cap:
        turn.add("poteri.damage_capped", f"Danno {raw} oltre il limite: {cap} PD.", T.R_DAMAGE,
                 roll=it.index, expected=cap, found=raw)
    return min(raw, cap)


def hit(state: State, turn: Turno, target: str, damage: int, source: str, roll: int | None, rule: str,
        assumption: str | None = None, full: int | None = None) -> State:
    """`target` loses `damage` PD from `source` (a Registro line it owes)."""
    state = ensure_fighter(state, target, Fighter)
    f = state.fighters[target]
    if f.pd is None:
        turn.add("ruling.needed", f"Non conosco i PD di {target}: {damage} PD da applicare.", rule,
                 roll=roll, expected=damage, found=None)
        return state
    new = max(0, f.pd - damage)
    turn.add("outcome.damage", f"{target} subisce {damage} PD da {source} (PD {f.pd} → {new}).", rule,
             roll=roll, expected=damage, found=full if full is not None else damage, assumption=assumption,
             target=target)
    return set_fighter(state, replace(f, pd=new, touched=f.touched or not f.seen,
                                      since=f.since + (((new - f.pd), "PD", source),) if new != f.pd else f.since))
