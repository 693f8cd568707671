"""Confronto di Potenza in the flow: Parata/Contrattacco intercepting an attack, the clash of Potenze."""
from __future__ import annotations

from typing import Any

from . import attacco as AT
from . import bersagli as B
from . import calcolo_danni as CD
from . import tables as T
from . import tecniche as TC
from ...history import Registry
from .actions import ActionSpec
from .checks import RollCheck
from .clash import ClashSide, confronto_di_potenza
from .messages import P_ADEGUATEZZA, P_BERSAGLI, P_CONFRONTO, verdict
from .state import Incoming, evolve
from .turno import ONE, _Defence, _Post


def _physical(reg: Registry, atk: Incoming) -> bool | None:
    t = TC._technique(reg, atk.techniques, atk.attacker)
    if t is None:
        return None
    v = t.extra.get("fisico_diretto")
    if isinstance(v, bool):
        return v
    if t.kind == "arma" or "fisic" in (t.type or "").lower():
        return True
    if t.type and "offensiva" in t.type.lower():
        return False  # an offensive technique the registry types as not physical (Energetica, Spirituale…)
    return None


def _drop_group(p: _Post, atk: Incoming, i: int) -> None:
    """Bersagli Multipli mirati: one target stopping the attack annuls it for all (also where it already landed,
    while its damage is not yet written); the other kinds: case by case."""
    others = [a for a in p.incoming if a.group == atk.group and a.id != atk.id]
    landed = [h for h in p.hits if h.attack.group == atk.group and h.attack.id != atk.id]
    if not others and not landed:
        return
    names = ", ".join([a.target for a in others] + [h.attack.target for h in landed])
    if B.fermato_per_tutti({"multipli": "multiplo"}.get(atk.multi or "mirato", atk.multi or "mirato")):
        p.incoming = [a for a in p.incoming if not (a.group == atk.group and a.id != atk.id)]
        p.hits = [h for h in p.hits if not (h.attack.group == atk.group and h.attack.id != atk.id)]
        p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
            f"L'Attacco a Bersagli Multipli di {atk.attacker} è fermato: annullato anche per {names}.", P_BERSAGLI, roll=i))
    else:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"L'Attacco di {atk.attacker} è fermato da {p.name}: se sia annullato anche per {names} si valuta caso "
            "per caso.", P_BERSAGLI, roll=i))


def _clash_message(a: ClashSide, d: ClashSide, r: Any) -> str:
    """The clash as a reader checks it: both Potenze, their difference and the threshold of the weaker action's
    category that decides ("… 15 contro … 14: differenza 1, sotto la soglia 3 della categoria B …")."""
    strong, weak = (a, d) if a.potenza >= d.potenza else (d, a)
    # the row is the weaker action's category (for equal Potenze, the stricter of the two)
    row = f"categoria {r.category_y}" + (f" di {weak.label}" if a.potenza != d.potenza else "")
    head = (f"Confronto di Potenza: {strong.label} {strong.potenza} contro {weak.label} {weak.potenza}: "
            f"differenza {r.difference}")
    if r.outcome == "entrambe_annullate":
        return f"{head}, sotto la soglia {r.threshold_halved} della {row}: annullate entrambe."
    if r.outcome == "dimezzato":
        return (f"{head}, almeno {r.threshold_halved} ma sotto {r.threshold_intact} per la {row}: {r.loser} "
                f"annullata, {r.winner} prosegue con Potenziale dimezzato.")
    return (f"{head}, almeno {r.threshold_intact} per la {row}: {r.loser} annullata, {r.winner} prosegue con "
            "Potenziale intatto.")


def _clash(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, atk: Incoming, dfn: _Defence,
           numbers: dict[str, Any]) -> None:
    """Parata / Contrattacco in time: Confronto di Potenza (registry numbers) — else the master rules."""
    reg = p.state.registry
    post = p.post
    p.verdicts.append(verdict("ruling.needed", post.id,
        f"{spec.name} in tempo contro l'Attacco di {atk.attacker}: l'adeguatezza della Difesa all'Attacco "
        "la valuta il master.", P_ADEGUATEZZA, roll=i))
    tag = roll.tag
    def_tech = TC._technique(reg, tuple(tag.techniques) if tag else (), p.name)
    atk_tech = TC._technique(reg, atk.techniques, atk.attacker)
    sides = []
    mod_steps: list[str] = []  # Potenziali lowered by Sbilanciamento
    for who, tech in ((atk.attacker, atk_tech), (p.name, def_tech)):
        bonus = TC._bonus_statistica(reg, who, tech)
        if tech is None or tech.potenziale is None or bonus is None or not tech.category:
            sides.append(None)
        else:
            pot = tech.potenziale
            mods = atk.potenziale_mod if who == atk.attacker else T.SBILANCIAMENTO_POTENZIALE_MOD * (
                p.fighters[who].stack_count("Sbilanciamento") if who in p.fighters else 0)
            if mods:
                pot, why = CD._potenziale_modificato(tech, pot, mods, f"Sbilanciamento di {who}")
                mod_steps.append(why)
                if pot is None:
                    sides.append(None)
                    continue
            if who == atk.attacker and atk.potenziale_factor != 1:
                pot = int(pot * atk.potenziale_factor)
            try:
                sides.append(ClashSide(f"{tech.name} di {who}", pot + bonus, tech.category))
            except T.MechanicsError:
                sides.append(None)
    if None in sides:
        p.verdicts.append(verdict("ruling.needed", post.id,
            f"Confronto di Potenza tra l'Attacco di {atk.attacker} e {spec.name} di {p.name}: Potenziale, categoria o "
            "Bonus Statistica non noti dal registro" + (f" ({'; '.join(mod_steps)})" if mod_steps else "") + ".",
            P_CONFRONTO, roll=i, details=dict(numbers, steps=mod_steps) if mod_steps else numbers))
        p.verdicts.append(verdict("outcome.defended", post.id,
            f"{spec.name} in tempo ({numbers['defence_total']} ≥ {numbers['attack_total']}): esito del Confronto di "
            "Potenza da stabilire.", spec.paragraph, roll=i, expected=numbers["attack_total"],
            found=numbers["defence_total"], details=numbers))
        return
    a_side, d_side = sides
    r = confronto_di_potenza(a_side, d_side)
    details = dict(numbers, steps=mod_steps + list(r.steps), outcome=r.outcome, difference=r.difference)
    p.verdicts.append(verdict("outcome.power_clash", post.id, _clash_message(a_side, d_side, r), P_CONFRONTO, roll=i,
        expected=a_side.potenza, found=d_side.potenza, details=details))
    if r.winner == a_side.label:
        # the attack goes on (full or halved Potenziale) and hits: the defence failed
        dfn.failed = True
        dfn.failed_roll = i
        if spec.counter:
            dfn.counter[spec.key] = "fallito"
        AT._hit(p, evolve(atk, potenziale_factor=atk.potenziale_factor * r.factor), ONE,
             [f"Confronto di Potenza perso: l'Attacco prosegue con Potenziale {'dimezzato' if r.factor != 1 else 'intatto'}"],
             spec.name, i, numbers=numbers)
        return
    if spec.counter:
        if r.both_annulled:
            dfn.counter[spec.key] = "annullato"
        else:
            dfn.counter_factor[spec.key] = r.factor
    _drop_group(p, atk, i)
