"""The `guida` step function: one post → the new state and its verdicts, dispatched to the section modules."""
from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from . import calcolo_danni as CD
from . import controllo as AC
from . import fase_iniziale as FI
from . import master as MA
from . import stacks as S
from . import tiri as TI
from ...history import Character, Post, Registry, Thread
from ...verdicts import Verdict
from .messages import P_TURNI, verdict
from .state import Fighter, GuidaState, evolve, frozen_map
from .turno import _Fighter, _GuidaState, _Post, canon_stats, character_of


# --- initial state --------------------------------------------------------------------------------

def initial_state(thread: Thread, registry: Registry, settings: dict[str, Any]) -> GuidaState:
    fighters: dict[str, Fighter] = {}
    aliases: dict[str, str] = {}
    for name, ch in registry.characters.items():
        fighters[name] = _fighter_from_registry(name, ch)
        aliases[name.lower()] = name
        if ch.player:
            aliases.setdefault(ch.player.lower(), name)
    return _GuidaState(settings=frozen_map(settings), registry=registry, fighters=frozen_map(fighters),
                       aliases=frozen_map(aliases))


def _fighter_from_registry(name: str, ch: Character | None) -> Fighter:
    if ch is None:
        return _Fighter(name=name, stacks=S.StackSet(name))
    pv = ch.resources.get("PV")
    pe = ch.resources.get("PE")
    return _Fighter(
        name=name,
        pv_max=(pv.max or pv.current) if pv else None,
        pe_max=(pe.max or pe.current) if pe else None,
        stats=frozen_map(canon_stats({k: (s.base, s.bonus) for k, s in ch.stats.items()})),
        stacks=S.StackSet(name), player=ch.player,
    )


# --- step -----------------------------------------------------------------------------------------

def step(state: GuidaState, post: Post) -> tuple[GuidaState, list[Verdict]]:
    """One post. Master posts state rulings; Game-Master dice posts complete the player post they answer."""
    if post.role == "player":  # most posts: a crash anywhere below is caught by core.replay, as for every ruleset
        return _player(state, post, {"before_last": state, "last_post": post})
    if post.role == "master":
        return MA._master(state, post)
    if post.role == "gm_bot":
        prev = state.extra.get("before_last")
        last_post = state.extra.get("last_post")
        if post.rolls and prev is not None and last_post is not None and post.answers in (None, last_post.id):
            # Forumotion: the forum's dice arrive in a separate post; re-read the answered post with them
            merged = replace(last_post, rolls=last_post.rolls + post.rolls)  # a history Post: the real replace
            return _player(prev, merged, {"last_post": merged})
        return evolve(state, posts=state.posts + 1), []
    return _player(state, post, {"before_last": state, "last_post": post})


def rulings(state: GuidaState) -> list[tuple[str, str, str]]:
    """Master rulings seen so far: (code, post, decision), for the audit to annotate verdicts."""
    return [(r.code, r.post, r.decision) for r in state.rulings]


def _player(state: GuidaState, post: Post, extra: dict[str, Any]) -> tuple[GuidaState, list[Verdict]]:
    """A player's post; `extra` (a fresh dict, kept) goes into the new state's `extra` (what a Game-Master dice
    post needs)."""
    name = character_of(state, post)
    p = _Post(state, post, name)
    if name not in p.fighters:
        p.fighters[name] = _fighter_from_registry(name, state.registry.characters.get(name))
    aliases = state.aliases
    if post.author.lower() not in aliases or name.lower() not in aliases:
        aliases = frozen_map({**aliases, post.author.lower(): aliases.get(post.author.lower(), name),
                              name.lower(): name})

    order = state.order
    last = state.last
    if name in order:
        # the common case (the next in the cycle) needs no call; anything else goes to _turn_order
        if last is not None and (last == name or last not in order
                                 or order[(order.index(last) + 1) % len(order)] != name):
            _turn_order(p, order)
    else:
        order = order + (name,)  # a newcomer: _turn_order has nothing to say

    f = p.fighters[name]
    turn = f.turn + 1
    if post.rolls and state.registry.techniques:
        # costs of the techniques used: read by the Registro (this post's or the next), not by the new turn
        p.spese_now = FI._expenses_used(p)
    if f.stacks.entries or not f.stats or post.schema is None:
        f = evolve(f, turn=turn, last_post=post.id, stacks=S.expire_at(f.stacks, turn - 1))
        p.fighters[name] = f
        if f.stacks.entries:
            FI._fase_iniziale_stacks(p)
        FI._schema(p)
    else:
        # nothing before the Registro reads the new turn (no Stacks, the reference stats are known): the Registro's
        # new Fighter carries it, one copy instead of two
        FI._schema(p, {"turn": turn, "last_post": post.id})
    if p.aree:
        AC._aree_fase_iniziale(p)
    if p.hits or post.damage:
        CD._damage_calcs(p)
    TI._rolls(p)
    if p.reazioni:
        p.hits = [evolve(h, reazione=True) if h.attack.id in p.reazioni and h.resolved_in == post.id else h
                  for h in p.hits]
    if p.aree:
        AC._aree_dentro(p)

    left = []  # the actions still waiting for others (a loop: no comprehension frame for a short list)
    for a in p.incoming:
        if a.target != name:
            left.append(a)
    incoming = tuple(left + p.new_incoming)
    # every GuidaState field in order (as evolve(state, ...) would give, without copying and updating a dict)
    new = _GuidaState(state.settings, state.registry, MappingProxyType(p.fighters), order, name, incoming,
                      tuple(p.hits), state.rulings, state.posts + 1, aliases,
                      MappingProxyType(extra if state.extra.keys() <= extra.keys() else {**state.extra, **extra}),
                      p.aree)
    return new, p.verdicts


def _turn_order(p: _Post, order: tuple[str, ...]) -> None:
    """`turn.out_of_turn`: once everyone has posted, turns follow the order of first appearance."""
    last = p.state.last
    name = p.name
    if not p.state.settings.get("ordine_turni", True) or last is None or name not in order:
        return
    if last == name:
        p.verdicts.append(verdict("turn.out_of_turn", p.post.id, f"{name} ha postato due turni di seguito.", P_TURNI,
            expected="un altro personaggio", found=name))
        return
    expected = order[(order.index(last) + 1) % len(order)] if last in order else None
    if expected and expected != name:
        p.verdicts.append(verdict("turn.out_of_turn", p.post.id,
            f"Dopo {last} toccava a {expected}, non a {name}.", P_TURNI, expected=expected, found=name))
