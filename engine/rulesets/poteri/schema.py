"""The poster's schema and the registry's pools: PF (Punti Fatica) and PD (Punti Danno), opened and then checked."""
from __future__ import annotations

from dataclasses import replace

from ...history import Character
from .._shared import Pool, pool_max, read_schema, set_fighter
from . import tables as T
from .state import Fighter, State
from .turno import Turno

# spelled out whole, as every code (tests/test_docs.py finds them in the source)
REGISTRO_MISMATCH = {"PF": "registro.pf_mismatch", "PD": "registro.pd_mismatch"}
# pools read from the poster's schema: a wrong current value cites the pool's rule, a wrong maximum the types'
POOLS = (Pool("PF", "pf", "Punti Fatica", T.R_PF, T.R_TYPES), Pool("PD", "pd", "Punti Danno", T.R_DAMAGE, T.R_TYPES))


def from_registry(name: str, c: Character) -> Fighter:
    """A fighter as the registry gives it: its pools full."""
    pf, pd = pool_max(c, "PF"), pool_max(c, "PD")
    return Fighter(name=name, pf=pf, pf_max=pf, pd=pd, pd_max=pd)


def read(state: State, turn: Turno) -> State:
    """The poster's schema read (its first one opens the accounts); the Registro it wrote settles what it owed."""
    poster = turn.poster
    state = read_schema(state, turn.post.schema, poster, turn, POOLS, turn.fresh, REGISTRO_MISMATCH)
    return set_fighter(state, replace(state.fighters[poster], since=()))  # its Registro is written
