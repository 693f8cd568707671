"""The `poteri` step function: one post → the new state and its verdicts, dispatched to the section modules."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...core import BadSetting
from ...history import Post, Registry, Thread
from ...verdicts import Verdict
from .._shared import canon, ensure_fighter, poster_name
from .._turn import Phase, run_phases
from . import durata as DU
from . import resistenza as RE
from . import schema as SC
from . import un_potere_per_turno as UP
from .state import Fighter, State
from .turno import Turno

_ROLLS = Phase("Un Potere per turno", UP.rolls)  # the post's rolls in order: Powers, damage, Rissa, liberation

# A player's turn, in the order the text gives it (the sections' headings as they read).
PHASES: tuple[Phase[State], ...] = (
    Phase("Durata degli effetti", DU.tick),  # the poster's effects count down at the start of its turn
    Phase("Resistenza", RE.resistances),  # against the Attacchi that succeeded on it since its last post
    Phase("Durata degli effetti", DU.voluntary_stop),  # "Interrompo: …"
    _ROLLS,
    Phase("Combattimento magico", SC.read),  # the schema's PF and PD: the accounts of the whole text
)
# A post that is no player's (the master's, a Game-Master bot's) or that nobody signs: its rolls alone.
OTHER_PHASES: tuple[Phase[State], ...] = (_ROLLS,)


def initial_state(thread: Thread, registry: Registry, settings: dict[str, Any]) -> State:
    if settings.get("roll_system") not in ("d100_sotto", "dichiarato"):
        raise BadSetting("poteri: roll_system deve essere 'd100_sotto' o 'dichiarato'")
    if settings.get("partial_damage") not in ("metà", "proporzionale"):
        raise BadSetting("poteri: partial_damage deve essere 'metà' o 'proporzionale'")
    for name in ("critical_max", "slots", "damage_cap"):
        v = settings.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise BadSetting(f"poteri: {name} deve essere un numero intero non negativo")
    fighters = {n: SC.from_registry(n, c) for n, c in registry.characters.items()}
    return State(settings=dict(settings), registry=registry, fighters=fighters)


def step(state: State, post: Post) -> tuple[State, list[Verdict]]:
    """One post: a player's turn runs PHASES, any other post only its rolls."""
    poster = canon(state, poster_name(post))
    turn = Turno(post, state, poster)
    if post.role != "player" or not poster:
        return run_phases(OTHER_PHASES, state, turn), turn.verdicts
    state = ensure_fighter(state, poster, Fighter)
    f0 = state.fighters[poster]
    turn.fresh = not f0.seen and not f0.touched  # its first schema opens the accounts (after this post)
    if poster not in state.order:
        state = replace(state, order=state.order + (poster,))
    state = run_phases(PHASES, state, turn)
    return replace(state, last=poster), turn.verdicts
