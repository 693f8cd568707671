"""Durata degli effetti: effects count down on their caster's turns, or end early (stop, incompatible, liberation)."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from .._shared import as_list, canon, face_of, find, fold
from . import tables as T
from .state import Effect, State
from .tiro_del_potere import outcome
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power

_STOP = re.compile(r"(?im)^\s*(?:interromp\w*|termin\w*)\s*[:\-]?\s*\[?([^\]\n]+?)\]?\s*$")


def tick(state: State, turn: Turno) -> State:
    """The poster's effects lose one of its turns; those at 0 expire (not the ones cast in this very post)."""
    kept = []
    for e in state.effects:
        if e.caster == turn.poster and e.remaining is not None and e.post != turn.post.id:
            left = e.remaining - 1
            if left <= 0:
                turn.add("poteri.effect_expired", f"{e.power} ({e.caster} → {e.target}) è scaduto.",
                         T.R_DURATION, expected=0, found=0, power=e.power)
                continue
            e = replace(e, remaining=left)
        kept.append(e)
    return replace(state, effects=tuple(kept))


def voluntary_stop(state: State, turn: Turno) -> State:
    """"Interrompo: Scudo di Luce": the caster ends its own effect."""
    for m in _STOP.finditer(turn.post.body or ""):
        name = fold(m.group(1))
        for e in state.effects:
            if e.caster == turn.poster and fold(e.power) == name:
                state = end(state, turn, e, "interrotto dal lanciatore")
    return state


def end(state: State, turn: Turno, e: Effect, why: str, roll: int | None = None,
        code: str = "poteri.effect_ended", rule: str = T.R_DURATION) -> State:
    """The effect `e` ends before its time, for the reason `why`."""
    turn.add(code, f"{e.power} ({e.caster} → {e.target}) termina: {why}.", rule, roll=roll,
             expected=None, found=None, power=e.power, reason=why)
    return replace(state, effects=tuple(x for x in state.effects if x is not e))


def incompatible(state: State, turn: Turno, it: Item, p: Power) -> State:
    """Casting `p` ends the effects it is incompatible with (either Power's `incompatibile` names the other)."""
    mine = {fold(x) for x in as_list(p.extra.get("incompatibile"))}
    for e in list(state.effects):
        theirs = {fold(str(x)) for x in as_list(e.extra.get("incompatibile"))}
        if fold(e.power) in mine or fold(p.name) in theirs:
            state = end(state, turn, e, f"è stato lanciato {p.name}, incompatibile", roll=it.index)
    return state


def liberation(state: State, turn: Turno, it: Item) -> State:
    """A liberation test: only the one the Power provides (`liberazione`), none invented."""
    who = canon(state, it.label.actor) or turn.poster
    named = fold(it.label.techniques[0]) if it.label.techniques else None
    holds = [e for e in state.effects if e.target == who and e.caster != who
             and (named is None or fold(e.power) == named)]
    if not holds:
        turn.add("poteri.liberation_without_effect",
                 f"{who} tenta di liberarsi, ma non è sotto un effetto da cui liberarsi.", T.R_DURATION,
                 roll=it.index, expected="effetto attivo", found=None)
        return state
    e = holds[0]
    provided = e.extra.get("liberazione")
    if not provided:
        turn.add("poteri.liberation_not_allowed",
                 f"{e.power} non prevede prove di liberazione: l'effetto continua per la durata indicata.",
                 T.R_DURATION, roll=it.index, expected="nessuna prova", found="prova di liberazione",
                 power=e.power)
        return state
    c = find(state.registry.characters, who)
    st = find(c.stats, str(provided)) if (c and isinstance(provided, str)) else None
    esito, margin, assumption = outcome(state, turn, it, st.total if st is not None else None,
                                        T.R_DURATION, "la prova di liberazione")
    if esito is None:
        turn.add("ruling.needed", f"Esito della prova di liberazione da {e.power} sconosciuto.",
                 T.R_DURATION, roll=it.index)
        return state
    if esito == "fallimento":
        turn.add("outcome.liberation_failed", f"{who} non si libera da {e.power}.", T.R_DURATION,
                 roll=it.index, expected=st.total if st is not None else None, found=face_of(it.roll),
                 assumption=assumption)
        return state
    return end(state, turn, e, f"{who} supera la prova di liberazione prevista", roll=it.index)
