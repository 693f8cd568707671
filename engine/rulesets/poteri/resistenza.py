"""Resistenza: the target's roll against Margine del Potere + Intensità — danno pieno, parziale or 0 PD."""
from __future__ import annotations

import re
from dataclasses import replace

from .._shared import find, fold
from . import danno as DA
from . import tables as T
from .state import State
from .tiro_del_potere import outcome
from .turno import Turno

_PARTIAL = re.compile(r"(?i)danno\s+parziale\s*[:=]?\s*(\d+)")


def resistances(state: State, turn: Turno) -> State:
    """The poster's Resistenze against the Attacchi that succeeded on it, in order; the extra ones are not allowed."""
    poster = turn.poster
    mine = [p for p in state.pending if p.target == poster and p.post != turn.post.id]
    resist = [i for i in turn.items if i.kind == "resist"]
    state = replace(state, pending=tuple(p for p in state.pending if p not in mine))
    for n, p in enumerate(mine):
        it = resist[n] if n < len(resist) else None
        if it is None:
            turn.add("poteri.resistance_missing",
                     f"{poster} non effettua la Resistenza contro {p.power}: subisce il danno pieno.",
                     T.R_RESIST, expected="Resistenza", found=None)
            if p.damage is not None:
                state = DA.hit(state, turn, poster, p.damage, p.power, None, T.R_RESIST)
            continue
        stat_named = it.label.techniques[0] if it.label.techniques else None
        if p.stat and stat_named and fold(stat_named) != fold(p.stat):
            turn.add("poteri.wrong_resistance",
                     f"{p.power} si resiste con {p.stat}, non con {stat_named}.", T.R_RESIST, roll=it.index,
                     expected=p.stat, found=stat_named)
        c = find(state.registry.characters, poster)
        st = find(c.stats, p.stat) if (c and p.stat) else None
        value = st.total if st is not None else None
        esito, margin, assumption = outcome(state, turn, it, value, T.R_RESIST, "la Resistenza")
        if esito is None:
            turn.add("ruling.needed", "Esito della Resistenza sconosciuto: scrivi 'Successo, margine "
                     "N' o 'Fallimento' nel post.", T.R_RESIST, roll=it.index)
            continue
        if p.damage is None:
            turn.add("ruling.needed", f"Manca il danno di {p.power}: da applicare a mano.", T.R_RESIST,
                     roll=it.index)
            continue
        if esito == "fallimento":
            turn.add("outcome.resistance_failed", f"Resistenza fallita: danno pieno ({p.damage} PD).",
                     T.R_RESIST, roll=it.index, expected=p.potency, found=margin, assumption=assumption)
            state = DA.hit(state, turn, poster, p.damage, p.power, it.index, T.R_RESIST)
            continue
        if p.potency is None or margin is None:
            turn.add("ruling.needed", "Resistenza riuscita ma manca un margine da confrontare con "
                     "Potere + Intensità.", T.R_RESIST, roll=it.index, expected=p.potency, found=margin)
            continue
        if margin >= p.potency:
            turn.add("outcome.resisted",
                     f"Resistenza con margine {margin:+d} ≥ Potere + Intensità {p.potency:+d}: 0 PD.",
                     T.R_RESIST, roll=it.index, expected=p.potency, found=margin, assumption=assumption)
            continue
        stated = _PARTIAL.search(f"{it.label.rest} {it.line}")
        if state.settings["partial_damage"] == "metà":
            part = p.damage // 2
        else:
            part = p.damage * (p.potency - margin) // p.potency if p.potency > 0 else p.damage
        turn.add("outcome.partial_damage",
                 f"Resistenza riuscita con margine {margin:+d} < Potere + Intensità {p.potency:+d}: danno parziale "
                 f"{part} PD su {p.damage}.", T.R_RESIST, roll=it.index, expected=p.potency, found=margin,
                 assumption="partial_damage", partial=part, full=p.damage)
        if stated and int(stated.group(1)) != part:
            turn.add("poteri.partial_damage_mismatch",
                     f"Il post scrive danno parziale {stated.group(1)}, la formula in uso dà {part}.", T.R_RESIST,
                     roll=it.index, expected=part, found=int(stated.group(1)), assumption="partial_damage")
        state = DA.hit(state, turn, poster, part, p.power, it.index, T.R_RESIST, assumption="partial_damage",
                       full=p.damage)
    for extra in resist[len(mine):]:
        # a Successo Critico skips the Resistenza: no Pending is left for it to answer
        turn.add("poteri.resistance_not_allowed",
                 "Resistenza senza un Attacco riuscito da contrastare (un Successo Critico la salta).",
                 T.R_CRIT_ATTACK, roll=extra.index, expected=0, found=1)
    return state
