"""Poteri Curativi: 2 PD with a Successo, 4 with a Successo Critico, never above the target's maximum."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .._shared import set_fighter
from . import tables as T
from .state import State
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power


def cure(state: State, turn: Turno, it: Item, p: Power, target: str, esito: str) -> State:
    """A Curativo that succeeded (esito successo or critico) on `target`."""
    gain = T.CURE["critico" if esito == "critico" else "successo"]
    f = state.fighters[target]
    if f.pd is None:
        turn.add("ruling.needed", f"Non conosco i PD di {target}: cura di {gain} PD da applicare.",
                 T.R_CURE, roll=it.index, expected=gain, found=None)
        return state
    new = f.pd + gain if f.pd_max is None else min(f.pd_max, f.pd + gain)
    if f.pd_max is not None and f.pd + gain > f.pd_max:
        turn.add("poteri.cure_capped",
                 f"La cura non porta {target} oltre i suoi PD massimi ({f.pd_max}): sarebbero "
                 f"{f.pd + gain}.", T.R_CURE,
                 roll=it.index, expected=new, found=f.pd + gain)
    turn.add("outcome.cure", f"{target} recupera {new - f.pd} PD (PD {f.pd} → {new}).", T.R_CURE,
             roll=it.index, expected=new - f.pd, found=gain)
    return set_fighter(state, replace(f, pd=new, touched=f.touched or not f.seen,
                                      since=f.since + (((new - f.pd), "PD", p.name),) if new != f.pd else f.since))
