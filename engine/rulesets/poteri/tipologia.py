"""Combattimento magico › tipologia del Potere: what a Power is (registry or tags), and its cast by tipologia."""
from __future__ import annotations

import re
from dataclasses import replace

from ...history import Technique
from .._shared import as_int, as_list, canon, ensure_fighter, face_of, fold, set_fighter
from ..starfinder.labels import Label
from . import attaccare_il_caster as AC
from . import curativi as CU
from . import durata as DU
from . import narrativi as NA
from . import poteri_di_attacco as PA
from . import prima_e_dopo as PD
from . import slot_magici as SL
from . import tables as T
from .state import Fighter, Power, State
from .tiro_del_potere import POWER_OUTCOME, against, outcome
from .turno import Item, Turno


def power(state: State, name: str, label: Label, owner: str | None = None) -> Power:
    """The Power `name` as the registry describes it, its label's tags ({Attacco}, {1}, {Prima}) filling in."""
    # the caster's own Power first when two characters have one so called
    t: Technique | None = state.registry.technique(name, owner, fold)
    extra = dict(t.extra) if t else {}
    ptype = None
    for cand in ([t.type] if t and t.type else []) + list(label.tags):
        for known in T.POWER_TYPES:
            if fold(str(cand)) == fold(known):
                ptype = known
    slots = extra.get("slot")
    timing = extra.get("tempo")
    for tag in label.tags:
        if re.fullmatch(r"\s*\d\s*", tag):
            slots = int(tag)
        elif fold(tag) in ("prima", "dopo"):
            timing = tag.strip().capitalize()
    value = as_int(extra.get("valore"))
    if value is None and t is not None and t.potenziale is not None:
        value = t.potenziale
    for k in ("immune", "impedisce"):
        extra[k] = [str(x) for x in as_list(extra.get(k))]
    stat = extra.get("resistenza")
    return Power(name=t.name if t else name, type=ptype, slots=max(0, as_int(slots) or 0),
                 timing=str(timing).capitalize() if timing else None,
                 duration=as_int(extra.get("durata")), value=value,
                 stat=str(stat) if stat else None, extra=extra)


def cast(state: State, turn: Turno, it: Item, p: Power) -> tuple[State, set[int]]:
    """One Power cast; returns the new state and the damage rolls it accounts for."""
    caster = canon(state, it.label.actor) or turn.poster
    if caster is None:
        return state, set()
    state = ensure_fighter(state, caster, Fighter)
    target = canon(state, it.label.targets[0]) if it.label.targets else caster
    if p.type is None:
        turn.add("ruling.needed",
                 f"Non conosco la tipologia di {p.name}: indicala nel registro o nel tag ({{Attacco}}, "
                 "{Curativo}…).", T.R_TYPES, roll=it.index, expected="tipologia", found=None)
        return state, set()
    PD.timing(turn, it, p)
    state = DU.incompatible(state, turn, it, p)
    if target:
        state = ensure_fighter(state, target, Fighter)
    if p.type == "Attacco":
        return PA.cast_attack(state, turn, it, p, caster, target)
    state, allowed = AC.attack_checks(state, turn, caster, target if target != caster else None, "Potere", it) \
        if target != caster else (state, True)
    if not allowed:
        return state, set()
    cost = it.label.numbers.get("PF")
    if cost is None:
        tech = state.registry.technique(p.name, caster, fold)
        cost = as_int(tech.cost.get("PF")) if tech else None
    if cost:
        f = state.fighters[caster]
        if f.pf is not None:
            if cost > f.pf:
                turn.add("poteri.pf_exceeded", f"{caster} ha {f.pf} PF, non può spenderne {cost}.",
                         T.R_CURE if p.type == "Curativo" else T.R_TYPES, roll=it.index, expected=f.pf, found=cost)
                return state, set()
            state = set_fighter(state, replace(f, pf=f.pf - cost, touched=f.touched or not f.seen))
    esito, margin, assumption = outcome(state, turn, it, p.value, T.R_ROLL, f"il Potere {p.name}")
    if p.type == "Narrativo":
        return state, NA.narrative(turn, it, p)
    if esito is None:
        turn.add("ruling.needed", f"Esito di {p.name} sconosciuto: manca il valore del Potere o il "
                 "dado; scrivi 'Successo/Fallimento/Critico, margine N' nel post.", T.R_ROLL, roll=it.index)
        return state, set()
    turn.add(POWER_OUTCOME[esito], f"{p.name}: {esito}{against(face_of(it.roll), p.value, margin)}.",
             T.R_ROLL, roll=it.index, expected=p.value, found=face_of(it.roll), assumption=assumption)
    if esito == "fallimento":
        return state, set()
    if p.type == "Curativo":
        return CU.cure(state, turn, it, p, target, esito), set()
    # Difensivo / Debilitante / Mentale: a persistent effect in the caster's slots
    return SL.hold(state, turn, it, p, caster, target), set()
