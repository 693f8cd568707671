"""The poster's schema: PS/PF/PR read after its post, its first one opening the accounts, later ones checked."""
from __future__ import annotations

from dataclasses import replace

from .._shared import Pool, ensure_fighter, read_schema, set_fighter
from . import tables as T
from .state import Fighter, State
from .turno import Turno

POOLS = tuple(Pool(k, k.lower(), None, T.R_POOLS, T.R_POOLS) for k in ("PS", "PF", "PR"))
# Codes spelled out whole, so that every code the ruleset emits can be found in its source (tests/test_docs.py).
_REGISTRO_MISMATCH = {"PS": "registro.ps_mismatch", "PF": "registro.pf_mismatch", "PR": "registro.pr_mismatch"}


def open_turn(state: State, turn: Turno) -> State:
    """The poster's fighter (made if new); `turn.fresh` when its schema is the first and nothing touched it yet."""
    state = ensure_fighter(state, turn.actor, Fighter)
    f0 = state.fighters[turn.actor]
    turn.fresh = not f0.seen and not f0.touched  # its first schema opens the accounts (after this post)
    return state


def read(state: State, turn: Turno) -> State:
    """The schema checked against the accounts (or opening them); the Registro lines owed are written with it."""
    actor = turn.actor
    state = read_schema(state, turn.post.schema, actor, turn, POOLS, turn.fresh, _REGISTRO_MISMATCH)
    return set_fighter(state, replace(state.fighters[actor], since=()))  # its Registro is written
