"""Effetti che impediscono di attaccare il caster, and the other effects an attack meets (Debilitanti, Difensivi)."""
from __future__ import annotations

from .._shared import fold
from . import durata as DU
from . import tables as T
from .state import State
from .turno import Item, Turno


def attack_checks(state: State, turn: Turno, attacker: str, target: str | None, kind: str,
                  it: Item) -> tuple[State, bool]:
    """Effects that forbid or end on this attack; (state, allowed)."""
    allowed = True
    for e in list(state.effects):
        if target and e.caster == attacker and e.target == target and e.extra.get("termina_se_caster_attacca"):
            state = DU.end(state, turn, e, f"{attacker} attacca direttamente {target}", roll=it.index,
                           rule=T.R_NO_ATTACK_CASTER)
    # one pass over the effects: their verdicts come effect by effect
    for e in state.effects:
        if e.target == attacker and target and e.caster == target and e.extra.get("vieta_attacco_al_caster"):
            turn.add("poteri.attack_forbidden",
                     f"{attacker} è sotto {e.power} di {target} e non può aggredirlo.", T.R_NO_ATTACK_CASTER,
                     roll=it.index, expected="nessun attacco a " + target, found=kind)
            allowed = False
        blocked = [fold(x) for x in (e.extra.get("impedisce") or [])]
        if e.target == attacker and e.type in ("Debilitante", "Mentale") and (
                fold(kind) in blocked or ("poteri" in blocked and kind.startswith("Potere"))
                or ("attacchi" in blocked)):
            turn.add("poteri.action_prevented", f"{e.power} impedisce a {attacker} questa azione ({kind}).",
                     T.R_DEBIL, roll=it.index, expected="azione impedita", found=kind, power=e.power)
            allowed = False
    if target:
        groups = {"Rissa": {"rissa", "fisico", "attacchi"}, "Arma": {"armi", "fisico", "attacchi"},
                  "Potere di Attacco": {"attacco", "magia", "attacchi"}, "Potere": {"magia"}}[kind]
        for e in state.effects:
            if e.target == target and e.type == "Difensivo" and groups & {fold(x) for x in e.extra.get("immune", [])}:
                turn.add("poteri.target_protected",
                         f"{target} è protetto da {e.power}: {kind} non può colpirlo.", T.R_DEFENSIVE,
                         roll=it.index, expected="bersaglio non selezionabile", found=kind, power=e.power)
                allowed = False
    return state, allowed
