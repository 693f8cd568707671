"""Danno, Modificatore di Forza, Moltiplicare i Danni (anche Più di Una Volta): the damage rolls of a hit."""
from __future__ import annotations

import re

from ...history import Technique
from .._shared import fold
from . import tables as T
from .punti_stamina import apply_damage
from .registro import ability_mod, char
from .state import State
from .turno import Group, Item, Turno, check_authentic

_STATED_DAMAGE = re.compile(r"(?i)danni\s+(?:totali|inflitti)\s*[:=]?\s*(\d+)")


def damage_terms(state: State, it: Item, attacker: str | None, w: Technique | None,
                 mode: str | None, turn: Turno) -> tuple[int | None, int | None]:
    """(value of one damage roll with the right modifiers, expected constant) — None when unknown."""
    r, label = it.roll, it.label
    check_authentic(it, turn, T.R_DAMAGE)
    dice = str(w.extra.get("danni") or w.extra.get("danno") or "") if w else ""
    m = re.fullmatch(r"\s*(\d+)\s*d\s*(\d+)\s*", dice)
    if m and (int(m.group(1)), int(m.group(2))) != (r.count, r.sides):
        # another die's result is no damage of this weapon: unknown, never taken as if right
        turn.add("dice.wrong_die", f"I danni di {w.name} sono {m.group(1)}d{m.group(2)}, non "
                 f"{r.count}d{r.sides}: il danno non si può applicare.", T.R_DAMAGE, roll=it.index,
                 expected=f"{m.group(1)}d{m.group(2)}", found=f"{r.count}d{r.sides}")
        return None, None
    c = char(state, attacker)
    adds_strength = T.MODES[mode][1] if mode else None
    strength = ability_mod(c, "Forza")
    others = 0
    seen_strength = False
    for amount, name in label.modifiers:
        if T.ability_of(name) == "Forza":
            seen_strength = True
            if adds_strength is False:
                turn.add("starfinder.strength_on_ranged",
                         "Il modificatore di Forza non si aggiunge ai danni delle granate né degli attacchi a "
                         "distanza che non sono da lancio.", T.R_STRENGTH, roll=it.index, expected=0, found=amount)
            elif strength is not None and amount != strength:
                turn.add("dice.modifier_mismatch", f"Il modificatore di Forza di {attacker} è "
                         f"{strength:+d}, non {amount:+d}.", T.R_STRENGTH, roll=it.index,
                         expected=strength, found=amount, term="Forza")
        else:
            others += amount
    if label.modifiers and sum(a for a, _ in label.modifiers) != r.constant:
        turn.add("dice.modifier_mismatch", "I modificatori scritti nell'etichetta non corrispondono al "
                 f"dado lanciato {r.expression}.", T.R_DAMAGE, roll=it.index,
                 expected=sum(a for a, _ in label.modifiers), found=r.constant)
    if adds_strength and strength and not seen_strength:
        turn.add("dice.missing_modifier",
                 f"Con un'arma da mischia o da lancio si aggiunge ai danni il modificatore di Forza ({strength:+d}).",
                 T.R_STRENGTH, roll=it.index, expected=strength, found=0, term="Forza")
    if adds_strength is None or (adds_strength and strength is None) or not label.modifiers and r.constant:
        expected_const = r.constant  # cannot check: trust the roll
    else:
        expected_const = (strength if adds_strength else 0) + others
    if r.faces:
        return sum(r.faces) + expected_const, expected_const
    if r.total is not None:
        return r.total - r.constant + expected_const, expected_const
    return None, expected_const


def resolve_damage(state: State, g: Group, attacker: str | None, target: str, w: Technique | None,
                   mode: str | None, crit: bool, turn: Turno) -> State:
    """A hit's damage: the multipliers combined, one damage roll per multiple, the sum applied to the target."""
    declared: list[tuple[int, str]] = []
    for it in [g.head] + g.damage:
        for m, why in it.label.multipliers:
            # the critical is the engine's to decide; a restated `x2 [Critico]` is not one more multiplier
            if "critic" not in fold(why) and (m, fold(why)) not in declared:
                declared.append((m, fold(why)))
    crit_mult = state.settings["critical_multiplier"]
    assumption = "critical_multiplier" if crit else None
    weapon_crit = re.fullmatch(r"\s*[x×]?\s*(\d+)\s*", str(w.extra.get("critico", ""))) if w else None
    if weapon_crit:
        crit_mult, assumption = int(weapon_crit.group(1)), (None if crit else assumption)
    mults = ([crit_mult] if crit else []) + [m for m, _ in declared]
    combined = T.combine_multipliers(mults)
    if not g.damage:
        turn.add("starfinder.damage_missing", "L'attacco è andato a segno ma manca il tiro dei danni.",
                 T.R_DAMAGE, roll=g.head.index, expected=combined, found=0)
        return state
    if len(mults) > 1:
        turn.add("starfinder.multipliers_combined",
                 f"Moltiplicatori {' e '.join('×' + str(m) for m in mults)} combinati: ×{combined} "
                 f"(si tira il danno {combined} volte), non ×{_product(mults)}.",
                 T.R_MULTIPLY_TWICE, roll=g.damage[0].index, expected=combined, found=_product(mults),
                 assumption=assumption)
    values = []
    for it in g.damage[:combined]:
        v, _ = damage_terms(state, it, attacker, w, mode, turn)
        values.append(v)
    if len(g.damage) != combined:
        literal = len(g.damage) == 1 and any(m > 1 for m, _ in g.damage[0].label.multipliers)
        turn.add("starfinder.multiplied_not_rolled" if literal else "starfinder.damage_roll_count",
                 (f"Il danno moltiplicato ×{combined} non si moltiplica: si tira il danno (con i modificatori) "
                  f"{combined} volte e si sommano i risultati." if literal else
                  f"Servono {combined} tiri dei danni (con i modificatori), ne trovo {len(g.damage)}."),
                 T.R_MULTIPLY, roll=g.damage[0].index, expected=combined, found=len(g.damage),
                 assumption=assumption)
        if literal:
            return state
    if any(v is None for v in values):
        rolls = {it.index for it in g.damage}
        if not any(v.code == "dice.wrong_die" and v.roll in rolls for v in turn.verdicts):  # that one says why
            turn.add("ruling.needed", "La pagina non mostra il risultato dei danni.", T.R_DAMAGE,
                     roll=g.damage[0].index)
        return state
    total = sum(values)  # type: ignore[arg-type]
    stated = _STATED_DAMAGE.search(turn.post.body or "")
    return apply_damage(state, turn, target, total, w.name if w else (g.head.label.techniques or ("",))[0],
                        g.damage[0].index, stated=int(stated.group(1)) if stated else None,
                        assumption=assumption)


def _product(ms: list[int]) -> int:
    out = 1
    for m in ms:
        out *= m
    return out
