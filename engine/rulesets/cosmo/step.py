"""The `cosmo` step function: one post → the new state and its verdicts, dispatched to the section modules."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...history import Post, Registry, Thread
from ...verdicts import Verdict
from .._shared import ensure_fighter, poster_name, set_fighter
from .._turn import Phase, run_phases
from . import attaccare as AT
from . import danni as DA
from . import difendere as DI
from . import master as MS
from . import registro as R
from . import schema as SC
from . import status as ST
from . import tables as T
from .state import Fighter, State
from .turno import _Ctx


def initial_state(thread: Thread, registry: Registry, settings: dict[str, Any]) -> State:
    bands = T.check_settings(settings)
    fighters = {n: R.from_registry(n, c) for n, c in registry.characters.items()}
    return State(settings=dict(settings), bands=bands, registry=registry, fighters=fighters)


def _actions(state: State, ctx: _Ctx) -> State:
    """The post's actions in their order, unless its poster is out of the fight (Sconfitto or Svenuto)."""
    if ST.out_of_fight(state, ctx):
        return state
    return run_phases(ACTIONS, state, ctx)


# what a fighter still in the fight does in a post, in this order
ACTIONS = (
    Phase("Status speciali", ST.block_actions),  # Bloccato: Liberazione, Rilascio
    Phase("Difendere", DI.defend),  # the attacks waiting for the poster: Difendere, Incassare, Contrattaccare
    Phase("TABELLA 5", DA.damage_rolls),  # the damage dice it owed
    Phase("Attaccare", AT.attacks),
    Phase("Status speciali", ST.declarations),  # Sconfitto / Svenuto by its own choice
)
# a player's post
PHASES = (
    Phase("Schema del post (Punti Salute e Cosmo)", SC.read_stats),  # the forum's schema (not a section of the text)
    Phase("Status speciali", ST.count_round),  # a new round: the Ghermito's Leggero, block turns down
    Phase("Status speciali", _actions),
    Phase("Status speciali", ST.faint),  # Svenuto: the whole maximum of cosmo in one action
    Phase("TABELLA 5", DA.missing_rolls),
    Phase("Schema del post (Punti Salute e Cosmo)", SC.schema),
)


def step(state: State, post: Post) -> tuple[State, list[Verdict]]:
    """One post: a player's turn, or a master's statuses and rulings (the forum's dice bot changes nothing)."""
    if post.role != "player":
        ctx = _Ctx(post, state)
        if post.role == "master":
            state = MS.master(state, ctx)
        return state, ctx.verdicts
    actor = R.canon_name(state, poster_name(post))  # a player's post: its author when nothing better names it
    if not actor:
        return state, []
    state = ensure_fighter(state, actor, Fighter)
    ctx = _Ctx(post, state, actor)
    state = run_phases(PHASES, state, ctx)
    f = state.fighters[actor]
    state = set_fighter(state, replace(f, posts=f.posts + 1, seen=True))
    order = state.order if actor in state.order else state.order + (actor,)
    return replace(state, last=actor, order=order), ctx.verdicts
