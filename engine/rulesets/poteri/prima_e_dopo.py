"""Prima e Dopo: a {Prima} Power is rolled before the action it goes with, a {Dopo} one after."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..starfinder.labels import position_in
from . import tables as T
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power


def timing(turn: Turno, it: Item, p: Power) -> None:
    """`poteri.timing` when the roll sits on the wrong side of the post's narrative."""
    if p.timing not in ("Prima", "Dopo"):
        return
    pos = position_in(turn.post.body, it.roll.label)
    if pos is None:
        return
    before, after = pos
    # narrative = lines that are not schema, Registro or dice; a little slack for a title or a signature
    if p.timing == "Prima" and before >= 30 and after < 10:
        turn.add("poteri.timing", f"{p.name} è {{Prima}}: va tirato prima dell'azione a cui è "
                 "collegato, non dopo.", T.R_TIMING, roll=it.index, expected="Prima", found="Dopo",
                 chars_before=before, chars_after=after)
    if p.timing == "Dopo" and before < 10 and after >= 30:
        turn.add("poteri.timing", f"{p.name} è {{Dopo}}: va lanciato dopo l'azione in cui se ne "
                 "descrive l'uso.", T.R_TIMING, roll=it.index, expected="Dopo", found="Prima",
                 chars_before=before, chars_after=after)
