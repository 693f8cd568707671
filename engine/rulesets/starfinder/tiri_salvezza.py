"""Tiri Salvezza (Tipi, nel Gioco, Rinunciare, Terminologia): saves imposed by effects, rolled, owed, their effect."""
from __future__ import annotations

import re
from dataclasses import replace

from .._shared import as_int, canon, ensure_fighter, fold
from . import tables as T
from .attacchi import weapon_mode
from .classe_difficolta import effect_dc
from .danno import damage_terms
from .punti_stamina import apply_damage
from .registro import char, technique
from .ripetizioni import better
from .state import Fighter, PendingSave, State
from .turno import Group, Turno, check_d20

_RENOUNCE = re.compile(r"(?i)rinunci\w*\s+(?:al(?:la)?\s+)?(?:tiro\s+salvezza|ts)")


def damage_alone(state: State, g: Group, actor: str | None, turn: Turno) -> State:
    """Damage with no attack roll: an effect with a saving throw (granata, incantesimo) or a stray roll."""
    it = g.head
    label = it.label
    attacker = canon(state, label.actor) or actor
    tech = technique(state, label.techniques[0], attacker) if label.techniques else None
    ts = (tech.extra.get("ts") if tech else None) or {}
    if not isinstance(ts, dict):
        ts = {"tipo": str(ts)}
    targets = [canon(state, t) for t in label.targets]
    if not ts or not targets:
        turn.add("starfinder.damage_without_attack",
                 "Tiro dei danni senza un tiro per colpire a segno né un effetto con tiro salvezza: non applicato.",
                 T.R_DAMAGE, roll=it.index, expected="Attacco a segno o effetto con TS", found="solo danni")
        return state
    mode = weapon_mode(tech, label)
    value, _ = damage_terms(state, it, attacker, tech, mode, turn)
    save = T.SAVES.get(fold(str(ts.get("tipo", ""))), None)
    result = T.SAVE_RESULTS.get(fold(str(ts.get("esito", "dimezza"))), "Dimezza")
    cd, assumption = effect_dc(state, tech, attacker, mode, it, turn)
    pend = list(state.pending)
    for t in targets:
        if t:
            state = ensure_fighter(state, t, Fighter)
            pend.append(PendingSave(turn.post.id, attacker or "", t, tech.name, save or "Riflessi", result, cd,
                                    value, assumption=assumption))
            turn.add("starfinder.save_required",
                     f"{t} deve effettuare un Tiro Salvezza su {save or 'Riflessi'} CD {cd} contro {tech.name} "
                     f"({result} se riesce).", T.R_SAVES, roll=it.index, expected=cd, found=None, target=t,
                     assumption=assumption)
    return replace(state, pending=tuple(pend))


def saving_throw(state: State, g: Group, actor: str | None, turn: Turno) -> State:
    """A saving throw: its bonus checked against the registry, the d20 that counts against the CD, the effect."""
    it = g.head
    label = it.label
    saver = canon(state, label.actor) or actor
    save = None
    for text in (label.techniques[0] if label.techniques else "", label.action, label.raw):
        save = T.save_of(text)
        if save:
            break
    check_d20(it, turn, T.R_SAVES)
    c = char(state, saver)
    # labelled terms: base save and the matching ability
    for amount, name in label.modifiers:
        ab = T.ability_of(name)
        if ab and save and ab != T.SAVE_ABILITY[save] and ab in T.SAVE_ABILITY.values():
            turn.add("starfinder.wrong_save_ability",
                     f"Ai tiri salvezza su {save} si applica il modificatore di {T.SAVE_ABILITY[save]}, non di {ab}.",
                     T.R_SAVE_TYPES, roll=it.index, expected=T.SAVE_ABILITY[save], found=ab)
    declared = sum(a for a, _ in label.modifiers)
    if label.modifiers and declared != it.roll.constant:
        turn.add("dice.modifier_mismatch", "I modificatori scritti nell'etichetta non corrispondono "
                 f"al dado lanciato {it.roll.expression}.", T.R_SAVES, roll=it.index,
                 expected=declared, found=it.roll.constant)
    saves = (c.extra.get("TS") if c else None) or {}
    reg_bonus = None
    for k, v in (saves.items() if isinstance(saves, dict) else ()):
        if T.save_of(str(k)) == save and as_int(v) is not None:
            reg_bonus = as_int(v)
    core = sum(a for a, n in label.modifiers if T.save_of(n) or T.ability_of(n))
    extras = sum(a for a, n in label.modifiers if not (T.save_of(n) or T.ability_of(n)))
    expected_bonus = None
    if reg_bonus is not None:
        expected_bonus = reg_bonus + (extras if label.modifiers else 0)
        if (core if label.modifiers else it.roll.constant) != reg_bonus:
            turn.add("dice.modifier_mismatch",
                     f"Il bonus al tiro salvezza su {save} di {saver} è {reg_bonus:+d}.", T.R_SAVES,
                     roll=it.index, expected=reg_bonus, found=core if label.modifiers else it.roll.constant)
    # which effect is being saved against
    idx = None
    pend = None
    for i, p in enumerate(state.pending):
        if p.target == saver and (save is None or p.save == save):
            idx, pend = i, p
            break
    if pend is None:
        for p in state.pending:
            if p.target == saver:
                turn.add("starfinder.wrong_save",
                         f"{p.technique} richiede un tiro salvezza su {p.save}, non su {save or '(tipo non indicato)'}.", T.R_SAVE_TYPES,
                         roll=it.index, expected=p.save, found=save)
                break
    cd = label.numbers.get("CD")
    if pend is not None and pend.cd is not None:
        if cd is not None and cd != pend.cd:
            turn.add("starfinder.dc_mismatch", f"La CD di {pend.technique} è {pend.cd}, non {cd}.",
                     T.R_DC, roll=it.index, expected=pend.cd, found=cd)
        cd = pend.cd
    face, used, _ = better(g, turn, T.R_SAVES)
    if face is None or cd is None:
        turn.add("ruling.needed", "Manca il risultato del d20 o la CD: esito del tiro salvezza da decidere.",
                 T.R_DC, roll=it.index, expected=cd, found=face)
        return state
    bonus = expected_bonus if expected_bonus is not None else it.roll.constant
    total = face + bonus
    if face == 1:
        ok = False
        turn.add("starfinder.natural_one", "1 naturale: il tiro salvezza fallisce sempre.",
                 T.R_SAVE_NATURAL, roll=used, expected=cd, found=total)
    elif face == 20:
        ok = True
        turn.add("starfinder.natural_twenty", "20 naturale: il tiro salvezza riesce sempre.",
                 T.R_SAVE_NATURAL, roll=used, expected=cd, found=total)
    else:
        ok = total >= cd
    turn.add("outcome.save_success" if ok else "outcome.save_failure",
             f"Tiro salvezza su {save or '(tipo non indicato)'}: {face} + {bonus} = {total} contro CD {cd}: "
             + ("superato." if ok else "fallito."), T.R_SAVES, roll=used, expected=cd, found=total,
             face=face, bonus=bonus, verified=expected_bonus is not None)
    if pend is None:
        return state
    state = replace(state, pending=state.pending[:idx] + state.pending[idx + 1:])  # type: ignore[index]
    return save_effect(state, pend, ok, turn, it.index)


def save_effect(state: State, p: PendingSave, ok: bool, turn: Turno, roll: int | None) -> State:
    """The effect of a save made or failed: full damage, none (Nega), half rounded down (Dimezza), or the master's."""
    if not ok:
        return apply_damage(state, turn, p.target, p.damage, p.technique, roll) if p.damage is not None else state
    if p.result == "Nega" or p.damage is None:
        if p.result == "Parziale":
            turn.add("ruling.needed",
                     f"{p.technique}: tiro salvezza superato, si applica l'effetto inferiore della descrizione.",
                     T.R_SAVE_TERMS, roll=roll, expected="effetto parziale", found=None)
        return state
    if p.result == "Dimezza":
        half = p.damage // 2  # "si arrotonda sempre per difetto"
        turn.add("starfinder.half_damage", f"Tiro salvezza superato: metà danno ({p.damage} → {half}).",
                 T.R_SAVE_TERMS + " / " + T.R_ROUND, roll=roll, expected=half, found=p.damage)
        return apply_damage(state, turn, p.target, half, p.technique, roll) if half > 0 else state
    turn.add("ruling.needed",
             f"{p.technique}: tiro salvezza superato, si applica l'effetto inferiore della descrizione.",
             T.R_SAVE_TERMS, roll=roll, expected="effetto parziale", found=None)
    return state


def unrolled_saves(state: State, turn: Turno) -> State:
    """The saves the poster owed from earlier posts and did not roll: renounced, or failed."""
    post, actor = turn.post, turn.actor
    mine = [p for p in state.pending if p.target == actor and p.post != post.id]
    if not mine:
        return state
    renounced = bool(_RENOUNCE.search(post.body or ""))
    rest = tuple(p for p in state.pending if p not in mine)
    state = replace(state, pending=rest)
    for p in mine:
        if renounced:
            turn.add("starfinder.save_renounced",
                     f"{actor} rinuncia al tiro salvezza contro {p.technique} e ne accetta l'effetto.",
                     T.R_RENOUNCE, expected=p.save, found="rinuncia")
        else:
            turn.add("starfinder.save_missing",
                     f"{actor} doveva tirare un Tiro Salvezza su {p.save} (CD {p.cd}) contro {p.technique}: "
                     "vale come fallito.", T.R_SAVES, expected=p.save, found=None)
        state = save_effect(state, p, False, turn, None)
    return state
