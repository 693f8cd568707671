"""The master's posts: a `Round N` line opens a new round (round_rule 'master')."""
from __future__ import annotations

import re
from dataclasses import replace

from .punti_stamina import new_round
from .state import State
from .turno import Turno

_ROUND_LINE = re.compile(r"(?im)^\s*round\s+(\d+)\b")


def round_line(state: State, turn: Turno) -> State:
    """Under round_rule 'master', a `Round N` line beyond the current round opens round N."""
    if state.settings["round_rule"] != "master":
        return state
    m = _ROUND_LINE.search(turn.post.body or "")
    if m and int(m.group(1)) > state.round:
        return new_round(replace(state, round=int(m.group(1)), acted=()), turn, assumption=None)
    return state
