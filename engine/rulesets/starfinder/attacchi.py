"""Attacchi a Distanza, Attacchi in Mischia, Bonus di Attacco Base: a weapon's mode and the attack roll's bonus."""
from __future__ import annotations

from ...history import Technique
from .._shared import fold
from . import tables as T
from .competenza import proficient
from .labels import Label
from .registro import ability_mod, char, int_extra
from .state import State
from .turno import Item, Turno


def weapon_mode(w: Technique | None, label: Label) -> str | None:
    """mischia / lancio / distanza / granata: from the registry's weapon, else the label's action words."""
    if w is not None:
        m = fold(str(w.extra.get("attacco") or w.extra.get("tipo_attacco") or ""))
        if not m and w.type:
            m = fold(w.type)  # registry files may write the mode as the weapon's type ("mischia")
        for key in T.MODES:
            if key in m:
                return key
        if w.extra.get("granata") or fold(w.kind) == "granata":
            return "granata"
    a = label.action_key
    if "mischia" in a:
        return "mischia"
    if "lancio" in a:
        return "lancio"
    if "distanza" in a:
        return "distanza"
    return None


def attack_bonus(state: State, it: Item, attacker: str | None, w: Technique | None,
                 turn: Turno) -> tuple[int | None, str | None]:
    """Expected constant of the attack roll, checking every labelled term; (None, mode) if unknowable."""
    label, r = it.label, it.roll
    c = char(state, attacker)
    mode = weapon_mode(w, label)
    rule = T.R_MELEE if mode == "mischia" else T.R_RANGED
    declared = sum(a for a, _ in label.modifiers)
    if label.modifiers and declared != r.constant:
        turn.add("dice.modifier_mismatch",
                 f"I modificatori scritti nell'etichetta sommano {declared:+d}, ma il dado lanciato è "
                 f"{r.expression}.", rule, roll=it.index, expected=declared, found=r.constant)
    bab = int_extra(c, "BAB")
    ability = T.MODES[mode][0] if mode else None
    mod = ability_mod(c, ability) if ability else None
    prof = proficient(c, w)
    others = 0
    seen_bab = seen_ability = seen_np = wrong_ability = False
    for amount, name in label.modifiers:
        key = fold(name)
        ab = T.ability_of(name)
        if key in T.BAB_LABELS:
            seen_bab = True
            if bab is not None and amount != bab:
                turn.add("dice.modifier_mismatch",
                         f"Il Bonus di Attacco Base di {attacker} è {bab:+d}, non {amount:+d}.",
                         rule, roll=it.index, expected=bab, found=amount, term="BAB")
        elif key in T.NON_PROFICIENT_LABELS:
            seen_np = True
            if amount != -4:
                turn.add("dice.modifier_mismatch", "La penalità per arma non competente è −4.",
                         T.R_WEAPON_PROF, roll=it.index, expected=-4, found=amount, term="Non competente")
            if prof is True:
                turn.add("starfinder.proficiency_mismatch",
                         f"{attacker} è competente in {w.name if w else 'quest arma'}: la penalità −4 non serve.",
                         T.R_WEAPON_PROF, roll=it.index, expected=0, found=amount)
        elif ab is not None and ab in ("Forza", "Destrezza"):
            if ability is not None and ab != ability:
                wrong_ability = True
                turn.add("starfinder.wrong_ability",
                         f"Per un attacco {'in mischia' if mode == 'mischia' else 'da lancio' if mode in ('lancio', 'granata') else 'a distanza'} "
                         f"si usa il modificatore di {ability}, non quello di {ab}.",
                         rule, roll=it.index, expected=ability, found=ab)
            else:
                seen_ability = True
                if mod is not None and amount != mod:
                    turn.add("dice.modifier_mismatch",
                             f"Il modificatore di {ab} di {attacker} è {mod:+d}, non {amount:+d}.",
                             rule, roll=it.index, expected=mod, found=amount, term=ab)
        else:
            others += amount
    if not label.modifiers:
        others = None  # an unlabelled expression: we can only compare the whole constant
    if bab is None or (ability is not None and mod is None) or mode is None:
        return None, mode
    expected_np = -4 if prof is False else 0
    if prof is False and not seen_np:
        turn.add("starfinder.non_proficient",
                 f"{attacker} non è competente in {w.name if w else 'quest arma'}: −4 al tiro per colpire.",
                 T.R_WEAPON_PROF, roll=it.index, expected=-4, found=0)
    if label.modifiers and not seen_bab and bab:
        turn.add("dice.missing_modifier", f"Manca il Bonus di Attacco Base ({bab:+d}).",
                 rule, roll=it.index, expected=bab, found=0, term="BAB")
    if label.modifiers and not seen_ability and not wrong_ability and mod:  # one mistake, one verdict
        turn.add("dice.missing_modifier", f"Manca il modificatore di {ability} ({mod:+d}).",
                 rule, roll=it.index, expected=mod, found=0, term=ability)
    expected = bab + mod + expected_np + (others if others is not None else 0)
    if others is None and r.constant != expected:
        # no labelled terms: anything beyond BAB + mod (+ −4) is unexplained
        turn.add("dice.modifier_mismatch",
                 f"Il bonus di attacco atteso è {expected:+d} (BAB {bab:+d}, {ability} {mod:+d}"
                 f"{', non competente −4' if expected_np else ''}), il dado lanciato ha {r.constant:+d}.",
                 rule, roll=it.index, expected=expected, found=r.constant)
    return expected, mode
