"""Slot magici: a persistent effect takes its slots, the oldest effects end when they no longer fit."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .._shared import fold
from . import durata as DU
from . import tables as T
from .state import Effect, State
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power


def hold(state: State, turn: Turno, it: Item, p: Power, caster: str, target: str) -> State:
    """A Difensivo, Debilitante or Mentale that succeeded starts (an active one is not cast again)."""
    for e in state.effects:
        if e.caster == caster and fold(e.power) == fold(p.name) and e.target == target:
            turn.add("poteri.already_active",
                     f"{p.name} è già attivo: continua per la sua durata senza essere rilanciato.", T.R_ONE,
                     roll=it.index, expected="nessun rilancio", found="rilancio")
            state = replace(state, effects=tuple(x for x in state.effects if x is not e))
            break
    if p.slots:
        limit = state.settings["slots"]
        if p.slots > limit:
            turn.add("poteri.slots_exceeded", f"{p.name} occupa {p.slots} slot, se ne hanno {limit}.",
                     T.R_SLOTS, roll=it.index, expected=limit, found=p.slots)
            return state
        held = [e for e in state.effects if e.caster == caster and e.slots]
        used = sum(e.slots for e in held)
        for e in held:  # oldest first: the previous effects can no longer be maintained
            if used + p.slots <= limit:
                break
            state = DU.end(state, turn, e, f"gli slot non bastano per mantenerlo insieme a {p.name}",
                           roll=it.index, rule=T.R_SLOTS)
            used -= e.slots
    eff = Effect(power=p.name, type=p.type or "", caster=caster, target=target, slots=p.slots,
                 remaining=p.duration, post=turn.post.id, extra=p.extra)
    turn.add("poteri.effect_started",
             f"{p.name} ({p.type}) attivo su {target}" + (f" per {p.duration} turni" if p.duration else "")
             + (f", {p.slots} slot" if p.slots else "") + ".",
             {"Difensivo": T.R_DEFENSIVE, "Debilitante": T.R_DEBIL, "Mentale": T.R_MENTAL}.get(p.type, T.R_TYPES),
             roll=it.index, expected=None, found=None, power=p.name)
    return replace(state, effects=state.effects + (eff,))
