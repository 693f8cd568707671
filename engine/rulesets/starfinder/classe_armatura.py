"""Classe Armatura (CA), Classe Armatura di Energia (CAE), Classe Armatura Cinetica (CAC): the target's CA."""
from __future__ import annotations

from ...history import Technique
from .._shared import fold
from . import tables as T
from .competenza import armour_penalty
from .labels import Label
from .registro import char, int_extra
from .state import State
from .turno import Item, Turno


def damage_type(w: Technique | None) -> str | None:
    """The weapon's damage type: `extra.danno_tipo` (or `tipo_danno`), else `type` unless it names a mode."""
    if w is None:
        return None
    for k in ("danno_tipo", "tipo_danno"):
        if w.extra.get(k):
            return str(w.extra[k])
    if w.type and not any(key in fold(w.type) for key in T.MODES):
        return w.type
    return None


def target_ca(state: State, label: Label, target: str | None, w: Technique | None,
              it: Item, turn: Turno) -> tuple[int | None, str]:
    """The target's CA the attack meets (CAE or CAC by damage type) and its value, checked against the label."""
    forced = (w.extra.get("ca") if w else None)
    kind = str(forced).upper() if forced else T.ca_for_damage_type(damage_type(w))
    if w is None and ("CAE" in label.numbers or "CAC" in label.numbers):
        kind = "CAE" if "CAE" in label.numbers else "CAC"
    rule = T.R_CAE if kind == "CAE" else T.R_CAC
    stated_kind = "CAE" if "CAE" in label.numbers else "CAC" if "CAC" in label.numbers else None
    if w is not None and stated_kind and stated_kind != kind:
        turn.add("starfinder.wrong_ac",
                 f"{w.name} ({damage_type(w) or 'danno non specificato'}) si confronta "
                 f"con la {kind} del bersaglio, non con la {stated_kind}.",
                 rule, roll=it.index, expected=kind, found=stated_kind)
    c = char(state, target)
    reg_val = int_extra(c, kind)
    pen, _ = armour_penalty(c)
    if reg_val is not None:
        reg_val += pen
    stated = label.numbers.get(kind) if stated_kind == kind else None
    if stated is None and stated_kind is None:
        stated = label.numbers.get("CA")
    if reg_val is not None:
        if stated is not None and stated != reg_val:
            turn.add("starfinder.ac_mismatch",
                     f"La {kind} di {target} è {reg_val}"
                     + (" (−4 per armatura non competente)" if pen else "") + f", non {stated}.",
                     T.R_ARMOUR_PROF if pen else rule, roll=it.index, expected=reg_val, found=stated)
        return reg_val, kind
    return stated, kind
