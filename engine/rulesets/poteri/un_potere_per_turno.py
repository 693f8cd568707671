"""Un Potere per turno: the post's rolls in order, one Power cast per turn unless the Power declares otherwise."""
from __future__ import annotations

from .._shared import canon
from . import azioni_imposte as AI
from . import durata as DU
from . import tables as T
from . import tipologia as TI
from .state import State
from .turno import Turno


def rolls(state: State, turn: Turno) -> State:
    """Each roll of the post to its section: Powers cast, stray damage, Rissa and weapons, liberation tests."""
    powers_cast = 0
    consumed: set[int] = set()  # damage rolls that belong to a cast Power
    for it in turn.items:
        if it.kind == "power":
            powers_cast += 1
            p = TI.power(state, it.label.techniques[0] if it.label.techniques else it.label.action, it.label,
                         canon(state, it.label.actor) or turn.poster)
            if powers_cast > 1 and not p.extra.get("eccezione_turno"):
                turn.add("turn.extra_main_action",
                         "Si può lanciare un solo Potere per turno: questo è il "
                         f"{powers_cast}° del post.", T.R_ONE, roll=it.index, expected=1, found=powers_cast)
                continue
            state, used = TI.cast(state, turn, it, p)
            consumed.update(used)
        elif it.kind == "damage" and it.index not in consumed:
            turn.add("poteri.stray_damage",
                     "Tiro dei danni senza un Potere di Attacco a cui riferirsi: non applicato.",
                     T.R_DAMAGE, roll=it.index, expected="Potere di Attacco", found="solo danni")
        elif it.kind in ("rissa", "weapon"):
            state = AI.physical_attack(state, turn, it)
        elif it.kind == "liberation":
            state = DU.liberation(state, turn, it)
    return state
