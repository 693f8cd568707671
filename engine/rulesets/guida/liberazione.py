"""Costrizione e Liberazione in the flow: a Costrizione landing with its hit, the Tentativi di Liberazione."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from . import costrizione as CO
from . import stacks as S
from . import tables as T
from . import tecniche as TC
from ...history import DamageCalc, Registry, Technique
from .actions import ActionSpec, normalise
from .checks import RollCheck
from .messages import P_COSTR_IMPROPRIA
from .messages import verdict
from .state import Fighter, Incoming, evolve
from .turno import _Post


# --- Costrizione e Liberazione: the values (costrizione.py) -----------------------------------------

def _bonus_potenziale(reg: Registry, who: str | None, tech: Technique | None, categoria: str | None = None) -> int | None:
    """Bonus Potenziale (Regolamento Tecniche, not in the text; ours: from the registry): the technique's
    `extra.bonus_potenziale`; else the character's `extra.bonus_potenziale` table by category (the technique's, or
    `categoria` for a Gigantismo); else the character's plain `extra.bonus_potenziale` when no technique is named."""
    if tech is not None and categoria is None and TC._int_value(tech.extra.get("bonus_potenziale")):
        return tech.extra["bonus_potenziale"]
    ch = reg.characters.get(who) if who else None
    own = ch.extra.get("bonus_potenziale") if ch is not None else None
    cat = categoria or (tech.category if tech is not None else None)
    if isinstance(own, dict) and cat:
        v = own.get(cat, own.get(cat.lower()))
        return v if TC._int_value(v) else None
    if TC._int_value(own) and tech is None and categoria is None:
        return own
    return None


def _label_amount(roll: Any, name: str) -> int | None:
    """The sum of the roll label's modifiers named `name` ("bonus potenziale"): the post's own number (RULINGS #7)."""
    tag = roll.tag
    if tag is None or not tag.modifiers:
        return None
    vals = [m.amount for m in tag.modifiers if normalise(m.label) == name]
    return sum(vals) if vals else None


def _missing_numbers(p: _Post, i: int | None, what: str, missing: list[str], known: dict[str, int], rule: str,
                     found: Any = None) -> None:
    """`ruling.needed` naming exactly the numbers the engine lacks, with the partial sum of those it has."""
    partial = sum(known.values())
    shown = " + ".join(f"{k} {v}" for k, v in known.items())
    p.verdicts.append(verdict("ruling.needed", p.post.id,
        f"{what}: mancano " + ", ".join(missing) + (f"; somma parziale {shown} = {partial}" if known else "")
        + ". Il master stabilisce il valore.", rule, roll=i, found=found,
        details={"missing": missing, "known": dict(known), "partial": partial}))


def _costrizione_hit(p: _Post, target: Fighter, calc: DamageCalc, atk: Incoming | None,
                     present: tuple[str, ...]) -> Fighter:
    """A hit whose calculation declares Costrizione effects: the Valore di Costrizione (Dado of the attack + Bonus
    Potenziale + Bonus Statistica of its Potenza) the first time, + half the new Bonus Potenziale for each further
    Costrizione; halved Bonus Potenziale for a declared Costrizione Impropria."""
    reg = p.state.registry
    effects = tuple(c for c in present if c not in target.costrizioni)
    first = not target.costrizioni
    attacker = atk.attacker if atk is not None else calc.actor
    tech = TC._technique(reg, atk.techniques, atk.attacker) if atk is not None else None
    tname = tech.name if tech is not None else (atk.techniques[0] if atk is not None and atk.techniques
                                                else calc.technique)
    impropria = False
    if atk is not None:
        af = p.fighters.get(atk.attacker)
        impropria = af is not None and atk.group in af.costrizioni_improprie
    missing: list[str] = []
    known: dict[str, int] = {}
    assumption = None
    bp = _bonus_potenziale(reg, attacker, tech)
    if bp is None and TC._stated(calc, "bonus potenziale") is not None:
        bp, assumption = int(TC._stated(calc, "bonus potenziale")), "calcolo_dichiarato"  # type: ignore[arg-type]
    if bp is None:
        missing.append(f"Bonus Potenziale di {tname or 'Tecnica non indicata'}"
                       + (f" (categoria {tech.category})" if tech is not None and tech.category else "")
                       + " nel registro")
    dado = bs = None
    if first:
        dado = atk.face if atk is not None else None
        if dado is None:
            missing.append("Dado dell'Attacco (faccia non mostrata)")
        else:
            known["Dado"] = dado
        bs = TC._bonus_statistica(reg, attacker, tech) if attacker else None
        if bs is None and TC._stated(calc, "bonus statistica") is not None:
            bs, assumption = int(TC._stated(calc, "bonus statistica")), "calcolo_dichiarato"  # type: ignore[arg-type]
        if bs is None:
            missing.append(f"Bonus Statistica di {attacker or '?'}" + (f" per {tname}" if tname else "") + " nel registro")
        else:
            known["Bonus Stat."] = bs
    elif target.costrizione is None:
        missing.append(f"Valore di Costrizione già attivo su {target.name} (non calcolato)")
    if bp is not None:
        known["Bonus Pot."] = bp
    rule = P_COSTR_IMPROPRIA if impropria else T.RULE_COSTRIZIONE
    valore: int | None = None
    steps: tuple[str, ...] = ()
    if not missing:
        try:
            prev = CO.CostrizioneState() if first else CO.CostrizioneState(
                target.costrizione, (CO.Costrizione("attive", "Costrizioni attive"),))
            res = CO.applica(prev, CO.Costrizione(atk.group if atk is not None else p.post.id, tname or "Costrizione",
                                                  present, bp or 0, impropria, attacker),
                             dado=dado or 0, bonus_statistica=bs or 0)
            valore, steps = res.valore, res.steps
        except T.MechanicsError as exc:
            missing.append(str(exc))
    shown = ", ".join(effects or present)
    if valore is not None:
        msg = f"{target.name} subisce la Costrizione: {shown}. " + "; ".join(steps) + "."
    else:
        msg = f"{target.name} subisce la Costrizione: {shown} (Valore di Costrizione non calcolabile)."
    p.verdicts.append(verdict("outcome.stacks", p.post.id, msg, rule, found=list(effects or present),
        details={"valore_costrizione": valore, "steps": list(steps), "impropria": impropria,
                 "attack_post": atk.post if atk is not None else None},
        assumption=assumption))
    if valore is None:
        _missing_numbers(p, None, f"Valore di Costrizione su {target.name}", missing, known, rule)
    return evolve(target, costrizioni=target.costrizioni + effects, costrizione=valore)


def _costrizione_impropria(p: _Post, actor: str, group: str) -> None:
    """Remember that the attack `group` of `actor` declared a Costrizione Impropria (its hit's Valore di Costrizione
    halves the Bonus Potenziale); attacks no longer pending are forgotten."""
    f = p.fighters.get(actor)
    if f is None:
        return
    pending = {a.group for a in p.incoming} | {a.group for a in p.new_incoming} | {h.attack.group for h in p.hits}
    keep = tuple(g for g in f.costrizioni_improprie if g in pending and g != group)
    p.fighters[actor] = evolve(f, costrizioni_improprie=keep + (group,))


_GIGANTISMO = re.compile(r"gigantismo\D{0,20}?([123])\s*tagli", re.IGNORECASE)


@lru_cache(maxsize=1024)
def _liberazione_label(action: str | None, techniques: tuple[str, ...], label: str) -> tuple[bool, int | None]:
    """(Liberazione Impropria declared, Taglie di differenza of a Gigantismo change) as a label writes them."""
    text = " ".join((action or label,) + techniques)
    m = _GIGANTISMO.search(text)
    return "liberazione impropria" in normalise(text), (int(m.group(1)) if m else None)


def _libera(f: Fighter) -> Fighter:
    """Free from every Costrizione: their Destrezza maluses go with them, and so do the Type-4 Stacks tied to a
    condition (as the master's "liberato" ruling does); Allentamento back to 0."""
    stacks = f.stacks
    for cond in {e.condition for e in f.stacks.entries if e.condition}:
        stacks, _ = S.remove_condition(stacks, cond)
    return evolve(f, costrizioni=(), costrizione=None, allentamento=0, stacks=stacks)


def _liberazione(p: _Post, i: int, roll: Any, phase: str, chk: RollCheck, actor: str, *, impropria: bool,
                 gigantismo: int | None) -> None:
    """One Tentativo di Liberazione of a costretto `actor`: Valore di Liberazione (Dado + Bonus Potenziale + Bonus
    Statistica + Allentamento) against its Valore di Costrizione; ≥ frees it from all, < adds +2 Allentamento."""
    f = p.fighters[actor]
    reg = p.state.registry
    tag = roll.tag
    tech = TC._technique(reg, tuple(tag.techniques), actor) if tag is not None and tag.techniques else None
    rule = T.RULE_LIBERAZIONE_IMPROPRIA if impropria or gigantismo else T.RULE_LIBERAZIONE
    missing: list[str] = []
    known: dict[str, int] = {}
    assumption = None
    if chk.face is None:
        missing.append("Dado (faccia non mostrata)")
    else:
        known["Dado"] = chk.face
    cat = None
    if gigantismo is not None:
        try:
            cat = CO.gigantismo_categoria(gigantismo)
        except T.MechanicsError as exc:
            missing.append(str(exc))
    bp = _bonus_potenziale(reg, actor, tech, cat) if cat or gigantismo is None else None
    if bp is None and gigantismo is None:
        bp = _label_amount(roll, "bonus potenziale")
        assumption = "calcolo_dichiarato" if bp is not None else None
    if bp is None:
        missing.append(f"Bonus Potenziale di categoria {cat} (Gigantismo, {gigantismo} Taglie) nel registro di {actor}"
                       if cat else f"Bonus Potenziale di {tech.name if tech is not None else actor} nel registro")
    bs = TC._bonus_statistica(reg, actor, tech)
    if bs is None:
        bs = _label_amount(roll, "bonus statistica")
        if bs is not None:
            assumption = "calcolo_dichiarato"
    if bs is None:
        missing.append(f"Bonus Statistica di {actor} nel registro")
    if f.costrizione is None:
        missing.append(f"Valore di Costrizione di {actor} (non calcolato)")
    if not missing:
        try:
            calc = CO.valore_liberazione(chk.face, bp, bs, f.allentamento, impropria=impropria,  # type: ignore[arg-type]
                                         difensiva=phase == "difensiva", gigantismo_taglie=gigantismo)
        except T.MechanicsError as exc:
            missing.append(str(exc))
    if missing:
        if bp is not None:
            known["Bonus Pot."] = bp // 2 if impropria and gigantismo is None else bp
        if bs is not None:
            known["Bonus Stat."] = bs
        known["Allentamento"] = f.allentamento
        _missing_numbers(p, i, f"Valore di Liberazione di {actor}", missing, known, rule, found=chk.total)
        p.fighters[actor] = evolve(f, allentamento=f.allentamento + T.ALLENTAMENTO_PASSO)
        return
    valore, costr = calc.value, f.costrizione
    steps = list(calc.steps)
    details = {"steps": steps, "allentamento": f.allentamento, "rendered": chk.rendered, "impropria": impropria,
               "gigantismo": gigantismo}
    if valore >= costr:
        steps.append(f"{valore} ≥ Valore di Costrizione {costr}: liberato da tutte le Costrizioni")
        p.fighters[actor] = _libera(f)
        p.verdicts.append(verdict("outcome.liberated", p.post.id,
            f"{actor} si libera da tutte le Costrizioni ({', '.join(f.costrizioni)}): Valore di Liberazione {valore} "
            f"≥ Valore di Costrizione {costr}. " + "; ".join(calc.steps) + ".",
            rule, roll=i, expected=costr, found=valore, details=details, assumption=assumption))
        return
    steps.append(f"{valore} < Valore di Costrizione {costr}: Allentamento {f.allentamento} → "
                 f"{f.allentamento + T.ALLENTAMENTO_PASSO}")
    p.fighters[actor] = evolve(f, allentamento=f.allentamento + T.ALLENTAMENTO_PASSO)
    p.verdicts.append(verdict("outcome.liberation_failed", p.post.id,
        f"{actor} resta costretto: Valore di Liberazione {valore} < Valore di Costrizione {costr}; il prossimo "
        f"Tentativo ha Allentamento +{f.allentamento + T.ALLENTAMENTO_PASSO}. " + "; ".join(calc.steps) + ".",
        rule, roll=i, expected=costr, found=valore, details=details, assumption=assumption))
    if gigantismo is not None:
        p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
            f"Tentativo di Liberazione fallito: il Passaggio al Gigantismo ({gigantismo} Taglie) di {actor} è annullato.",
            T.RULE_LIBERAZIONE_IMPROPRIA, roll=i, details={"gigantismo": gigantismo}))


def _liberazione_impropria(p: _Post, i: int, roll: Any, spec: ActionSpec, phase: str, chk: RollCheck, actor: str,
                           liberazioni: dict[str, int]) -> None:
    """An action whose label declares «Liberazione Impropria» (or a Gigantismo change): it is also a Tentativo di
    Liberazione with its own die, counted in the limit of one per Turno."""
    liberazioni[actor] = liberazioni.get(actor, 0) + 1
    if liberazioni[actor] > T.LIBERAZIONI_PER_TURNO:
        p.verdicts.append(verdict("turn.extra_liberazione", p.post.id,
            f"{actor}: al più {T.LIBERAZIONI_PER_TURNO} Tentativo di Liberazione per Turno (anche le Liberazioni "
            "Improprie contano).", T.RULE_LIBERAZIONE_IMPROPRIA, roll=i,
            expected=T.LIBERAZIONI_PER_TURNO, found=liberazioni[actor]))
        return
    f = p.fighters.get(actor)
    if f is None or not f.costrizioni:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"{spec.name} di {actor} dichiarata come Liberazione Impropria, ma il motore non conosce Costrizioni attive "
            f"su {actor}: il master la valuta.", T.RULE_LIBERAZIONE_IMPROPRIA, roll=i, found=chk.total))
        return
    tag = roll.tag
    imp, gig = _liberazione_label(tag.action if tag else None, tuple(tag.techniques) if tag else (), roll.label or "")
    _liberazione(p, i, roll, phase, chk, actor, impropria=imp, gigantismo=gig)
