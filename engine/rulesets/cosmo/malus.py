"""Malus alle difese dei personaggi bloccati/ghermiti: the block malus, the reflected Special cancelled at once."""
from __future__ import annotations

from dataclasses import replace

from . import tables as T
from .lines import Action
from .state import Attack, State
from .tables import fold
from .turno import _Ctx


def cancel_reflected(state: State, ctx: _Ctx, pending: list[Attack], cancels: list[Action]) -> list[Attack]:
    """`Annullo [Special]`: one's own Bloccante/Ghermente reflected back is cancelled at once, in the defence turn
    it arrives (no block, no turn malus); any other block cannot be cancelled this way."""
    actor = ctx.actor
    for act in cancels:
        names = {fold(n) for n in act.names}
        k = next((i for i, a in enumerate(pending) if a.effect and (not names or fold(a.technique) in names)), None)
        if k is not None and pending[k].reflected:
            atk = pending[k]
            pending[k] = replace(atk, effect=None)
            ctx.add("cosmo.reflected_block_cancelled",
                    f"{actor} annulla subito la propria {atk.technique} ({atk.effect}) riflessa: nessun blocco né "
                    "malus di turno, si difende normalmente.", T.R_REFLECTED, roll=act.roll, fighter=actor)
            continue
        blocked_by = pending[k].technique if k is not None else (
            state.fighters[actor].block.technique if state.fighters[actor].block is not None else None)
        if blocked_by is not None:
            ctx.add("cosmo.cancel_not_allowed",
                    "Si annulla solo la propria Special Bloccante/Ghermente riflessa, e subito, nel turno in cui "
                    f"arriva: {blocked_by} non si può annullare così.", T.R_REFLECTED, roll=act.roll,
                    expected="Special propria riflessa, appena arrivata", found=blocked_by)
    return pending


def block_malus(state: State, ctx: _Ctx, who: str) -> tuple[int, bool]:
    """(malus to the opposed defence value, is blocked) — none once freed in this post."""
    f = state.fighters[who]
    if f.block is None or who in ctx.freed:
        return 0, who in ctx.freed
    m = T.block_malus(f.block.turns, ctx.lowered.get(who, 0))
    if m is None:
        ctx.add("ruling.needed",
                f"Non conosco i turni di blocco residui di {who} (Tabella 5 non li dà): il master fissi il malus.",
                T.R_MALUS, expected="turni di blocco", found=None, assumption="tabella5")
        return 0, True
    return m, True
