"""Tiro per Colpire, Fallimenti e Successi Automatici: an attack roll against the target's CA, hit or miss."""
from __future__ import annotations

from .._shared import canon
from . import tables as T
from .attacchi import attack_bonus
from .classe_armatura import target_ca
from .danno import resolve_damage
from .registro import technique
from .ripetizioni import better
from .state import State
from .turno import Group, Turno, check_d20


def attack(state: State, g: Group, actor: str | None, turn: Turno) -> State:
    """An attack roll: its bonus, the d20 that counts, hit or miss against the target's CA, then its damage."""
    it = g.head
    label = it.label
    attacker = canon(state, label.actor) or actor
    if attacker and actor and attacker != actor:
        # a post plays one character; a different attacker in the label is noted, not refused
        turn.add("starfinder.other_actor", f"Il tiro è dichiarato per {attacker}, il post è di {actor}.",
                 T.R_ATTACK, roll=it.index, expected=actor, found=attacker)
    target = canon(state, label.targets[0]) if label.targets else None
    w = technique(state, label.techniques[0], attacker) if label.techniques else None
    check_d20(it, turn, T.R_ATTACK)
    expected_bonus, mode = attack_bonus(state, it, attacker, w, turn)
    face, used, faces = better(g, turn, T.R_ATTACK)
    ca, kind = target_ca(state, label, target, w, it, turn)
    if face is None:
        turn.add("ruling.needed", "La pagina non mostra il risultato del d20: esito da decidere.",
                 T.R_ATTACK, roll=it.index)
        return state
    bonus = expected_bonus if expected_bonus is not None else it.roll.constant
    total = face + bonus
    rule_ca = T.R_CAE if kind == "CAE" else T.R_CAC
    hit: bool | None
    crit = False
    if face == 1:
        hit = False
        turn.add("starfinder.natural_one", "1 naturale: l'attacco fallisce sempre.", T.R_NATURAL,
                 roll=used, expected=ca, found=total)
    elif face == 20:
        hit = True
        crit = bool(state.settings["natural_20_critical"])
        turn.add("starfinder.natural_twenty",
                 "20 naturale: l'attacco colpisce sempre" + (" ed è un Colpo Critico." if crit else "."),
                 T.R_NATURAL, roll=used, expected=ca, found=total,
                 assumption="natural_20_critical" if crit else None)
    elif ca is None:
        hit = None
        turn.add("ruling.needed",
                 f"Non conosco la {kind} di {target or 'del bersaglio'}: scrivila nell'etichetta "
                 f"(`vs {kind} N`) o nel registro.", rule_ca, roll=it.index, expected=kind, found=None)
    else:
        hit = total >= ca
    if hit is not None and face not in (1,):
        verified = expected_bonus is not None
        note = (f" (bonus corretto {bonus:+d}; il tiro aveva {it.roll.constant:+d})"
                if verified and bonus != it.roll.constant else "")
        turn.add("outcome.hit" if hit else "outcome.miss",
                 f"{'Colpito' if hit else 'Mancato'}: {face} {bonus:+d} = {total} contro {kind} {ca}{note}.",
                 rule_ca, roll=used, expected=ca, found=total, face=face, bonus=bonus, verified=verified,
                 rendered_total=it.roll.total, target=target, critical=crit)
    if hit and target:
        return resolve_damage(state, g, attacker, target, w, mode, crit, turn)
    if hit and g.damage:
        turn.add("ruling.needed", "Colpito, ma l'etichetta non dice chi è il bersaglio "
                 "(`(Attaccante vs Bersaglio)`): danni da applicare a mano.", T.R_DAMAGE, roll=g.damage[0].index,
                 expected="bersaglio", found=None)
        return state
    if g.damage:
        turn.add("starfinder.damage_on_miss", "L'attacco non è andato a segno: i danni non si applicano.",
                 T.R_DAMAGE, roll=g.damage[0].index, expected=0, found=len(g.damage))
    return state
