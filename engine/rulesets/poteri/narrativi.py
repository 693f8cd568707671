"""Poteri Narrativi: only descriptive, no mechanical effect the description does not provide."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import tables as T
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power


def narrative(turn: Turno, it: Item, p: Power) -> set[int]:
    """A Narrativo cast; returns the damage rolls after it (none of them applies)."""
    damage_items = [i for i in turn.items if i.kind == "damage" and i.index > it.index]
    if damage_items:
        turn.add("poteri.narrative_no_mechanics",
                 f"{p.name} è Narrativo: non infligge danni che la descrizione non prevede.", T.R_NARRATIVE,
                 roll=damage_items[0].index, expected=0, found=len(damage_items))
    turn.add("poteri.narrative", f"{p.name} (Narrativo): effetto solo descrittivo.", T.R_NARRATIVE,
             roll=it.index)
    return {d.index for d in damage_items}
