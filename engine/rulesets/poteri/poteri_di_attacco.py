"""Poteri di Attacco: Lancio del Potere → Resistenza → Danno, with the Intensità of the PF spent."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .._shared import face_of
from . import attaccare_il_caster as AC
from . import danno as DA
from . import difensivi as DI
from . import spendere_pf as SP
from . import tables as T
from .state import Pending, State
from .tiro_del_potere import POWER_OUTCOME, against, outcome
from .turno import Item, Turno

if TYPE_CHECKING:
    from .state import Power


def cast_attack(state: State, turn: Turno, it: Item, p: Power, caster: str,
                target: str) -> tuple[State, set[int]]:
    """An Attacco cast; returns the new state and the damage roll it accounts for."""
    # 1. declaring the Attacco ends the caster's Difensivi, before anything is rolled or resolved
    state = DI.end_defensives(state, turn, caster, it.index)
    state, allowed = AC.attack_checks(state, turn, caster, target, "Potere di Attacco", it)
    damage_item = next((i for i in turn.items if i.kind == "damage" and i.index > it.index), None)
    result: set[int] = {damage_item.index} if damage_item is not None else set()
    state, spend = SP.spend(state, turn, it, p, caster)
    if spend is None:
        return state, result
    intensity = T.INTENSITA[spend]  # Intensità: only against the Resistenza (potency below)
    if not allowed:
        return state, result
    esito, margin, assumption = outcome(state, turn, it, p.value, T.R_ROLL, f"il Potere {p.name}")
    if esito is None:
        turn.add("ruling.needed", f"Esito di {p.name} sconosciuto: manca il valore del Potere o il "
                 "dado; scrivi 'Successo/Fallimento/Critico, margine N' nel post.", T.R_ROLL, roll=it.index)
        return state, result
    turn.add(POWER_OUTCOME[esito], f"{p.name}: {esito}"
             + against(face_of(it.roll), p.value, *((margin, f"Intensità +{intensity}")
                                                    if margin is not None and esito == "successo" else ()))
             + f"; {spend} PF spesi.", T.R_ROLL if esito != "critico" else T.R_CRIT, roll=it.index,
             expected=p.value, found=face_of(it.roll), assumption=assumption, pf=spend, intensity=intensity)
    if esito == "fallimento":
        if damage_item is not None:
            turn.add("poteri.damage_after_failure",
                     f"{p.name} è fallito: niente Resistenza né danno.", T.R_FAIL, roll=damage_item.index,
                     expected=0, found=damage_item.roll.total)
        return state, result
    damage = DA.damage(state, turn, damage_item, spend, p)
    if esito == "critico":
        if damage is None:
            turn.add("poteri.critical_damage_missing", "Successo Critico: la Resistenza si salta ma il danno va "
                     "comunque tirato.", T.R_CRIT_ATTACK, roll=it.index, expected=f"{spend}d6+3", found=None)
            return state, result
        return DA.hit(state, turn, target, damage, p.name, it.index, T.R_CRIT_ATTACK), result
    if damage is None and damage_item is None:
        turn.add("poteri.damage_missing", f"Manca il tiro dei danni ({spend}d6+3) di {p.name}.",
                 T.R_DAMAGE, roll=it.index, expected=f"{spend}d6+3", found=None)
    potency = None if margin is None else margin + intensity
    pend = Pending(turn.post.id, caster, target, p.name, potency, intensity, damage, p.stat)
    return replace(state, pending=state.pending + (pend,)), result
