"""Schema del post (Punti Salute e Cosmo): the poster's stats and pools, its first schema opening the accounts."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._shared import set_fighter
from . import tables as T
from .lines import Action
from .state import State
from .tables import fold
from .turno import _Ctx


def _bracketed(actions: list[Action]) -> set[tuple[str, int]]:
    """(folded name, value) of every `[Stat N]` / `[Cosmo N]` written inside this post's action lines."""
    out = {(fold(k), v) for a in actions for k, v in a.stats.items()}
    out |= {("cosmo", a.numbers["cosmo"]) for a in actions if "cosmo" in a.numbers}
    return out


def read_stats(state: State, ctx: _Ctx) -> State:
    """The stats of the poster's schema, before anything of the post reads them."""
    post = ctx.post
    written = ctx.written = _bracketed(ctx.actions)
    if post.schema is not None and post.schema.stats:
        f0 = state.fighters[ctx.actor]
        # a stat the schema reader took from an action line (`Difesa [Volontà 220]`) is not the sheet's
        stats = {**f0.stats, **{k: v.total for k, v in post.schema.stats.items()
                                if (fold(k), v.total) not in written}}
        state = set_fighter(state, replace(f0, stats=stats))
    return state


def schema(state: State, ctx: _Ctx) -> State:
    """The poster's PV and Cosmo: its first schema opens the accounts, later ones are checked against the fold."""
    s = ctx.post.schema
    if s is None:
        return state
    actor, fresh, written = ctx.actor, ctx.fresh, ctx.written
    f = state.fighters[actor]
    upd: dict[str, Any] = {}
    for key, attr, name in (("PV", "pv", "Punti Salute"), ("Cosmo", "cosmo", "Cosmo")):
        res = s.resources.get(key)
        if res is None:
            continue
        if res.max is None and (fold(key), res.current) in written:
            continue  # `Liberazione [Cosmo 100]` read as a pool by the schema reader: not the schema's value
        mx = getattr(f, attr + "_max")
        if mx is None and res.max is not None:
            upd[attr + "_max"] = res.max
        elif mx is not None and res.max is not None and res.max != mx:
            ctx.add("registro.max_mismatch", f"{name} massimi di {actor}: {mx}, lo schema scrive "
                    f"{res.max}.", T.R_SCHEMA, expected=mx, found=res.max, resource=key)
        mine = getattr(f, attr)
        if mine is None or (fresh and not f.touched):
            upd[attr] = res.current  # the first schema opens the fight's accounts
        elif res.current != mine:
            ctx.add("registro.pool_mismatch",
                    f"{actor} dovrebbe avere {name} {mine}, lo schema scrive {res.current}.", T.R_SCHEMA,
                    expected=mine, found=res.current, resource=key)
    return set_fighter(state, replace(f, **upd)) if upd else state
