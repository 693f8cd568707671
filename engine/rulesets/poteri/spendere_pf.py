"""Spendere PF: an Attacco is cast with 1 to 3 PF, chosen at the cast and spent whatever the roll gives."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .._shared import fold, set_fighter
from . import tables as T
from .state import State
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power


def spend(state: State, turn: Turno, it: Item, p: Power, caster: str) -> tuple[State, int | None]:
    """(state with the PF spent, PF invested); None invested when the Attacco cannot be cast (0 PF, none said)."""
    f = state.fighters[caster]
    spent = it.label.numbers.get("PF")
    if spent is None and turn.post.schema and turn.post.schema.registro:
        for entry in turn.post.schema.registro:
            if entry.resource == "PF" and entry.amount < 0 and fold(p.name) in fold(entry.label):
                spent = -entry.amount
    if f.pf is not None and f.pf <= 0:
        turn.add("poteri.no_fatigue", f"{caster} è a 0 PF e non può usare un Attacco magico.", T.R_PF,
                 roll=it.index, expected=">= 1 PF", found=0)
        return state, None
    if spent is None:
        turn.add("poteri.pf_missing", f"Quanti PF investe {caster} in {p.name}? Scrivi `PF N` "
                 "(da 1 a 3) nell'etichetta del tiro.", T.R_PF, roll=it.index, expected="1–3", found=None)
        return state, None
    if not T.PF_MIN <= spent <= T.PF_MAX:
        turn.add("poteri.pf_out_of_range", f"Un Potere di Attacco si lancia con 1–3 PF, non {spent}.",
                 T.R_PF, roll=it.index, expected="1–3", found=spent)
        spent = max(T.PF_MIN, min(T.PF_MAX, spent))
    if f.pf is not None and spent > f.pf:
        turn.add("poteri.pf_exceeded", f"{caster} ha solo {f.pf} PF: non può investirne {spent}.",
                 T.R_PF, roll=it.index, expected=f.pf, found=spent)
        spent = f.pf
    # the PF are spent at the cast, whatever the roll gives
    if f.pf is not None:
        state = set_fighter(state, replace(f, pf=f.pf - spent, touched=f.touched or not f.seen))
    return state, spent
