"""Poteri Difensivi: a Difensivo ends as soon as its holder attacks, before the attack is resolved."""
from __future__ import annotations

from . import durata as DU
from . import tables as T
from .state import State
from .turno import Turno


def end_defensives(state: State, turn: Turno, attacker: str, roll: int) -> State:
    """A Difensivo ends as soon as its holder voluntarily attacks, before the attack is resolved."""
    for e in list(state.effects):
        if e.caster == attacker and e.type == "Difensivo":
            state = DU.end(state, turn, e, f"{attacker} attacca (prima della risoluzione dell'Attacco)",
                           roll=roll, code="poteri.defensive_ended", rule=T.R_DEFENSIVE)
    return state
