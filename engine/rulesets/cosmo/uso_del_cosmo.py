"""Attaccare › uso del cosmo: spent from the residual, never beyond it; the whole maximum in one action faints."""
from __future__ import annotations

from dataclasses import replace

from .._shared import set_fighter
from . import tables as T
from .state import State
from .turno import _Ctx


def spend(state: State, ctx: _Ctx, who: str, amount: int | None, what: str,
          roll: int | None = None) -> tuple[State, bool]:
    """Spend cosmo from the residual; more than the residual is refused. Spending the whole maximum faints."""
    if not amount:
        return state, True
    f = state.fighters[who]
    if f.cosmo is not None and amount > f.cosmo:
        ctx.add("cosmo.cosmo_exceeded",
                f"{who} usa {amount} cosmo per {what} ma ne ha solo {f.cosmo} residuo: azione non valida.",
                T.R_COSMO, roll=roll, expected=f.cosmo, found=amount, fighter=who)
        return state, False
    if f.cosmo is not None:
        f = replace(f, cosmo=f.cosmo - amount, touched=f.touched or not f.seen)
        state = set_fighter(state, f)
    if f.cosmo_max is not None and amount >= f.cosmo_max:
        ctx.faint.append((who, amount))
    return state, True
