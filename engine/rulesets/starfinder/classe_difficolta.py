"""Classe Difficoltà (CD): the DC of an effect, fixed in the registry or by the text's formulas."""
from __future__ import annotations

from ...history import Technique
from .._shared import fold
from . import tables as T
from .competenza import proficient
from .registro import ability_mod, char, int_extra
from .state import State
from .turno import Item, Turno


def effect_dc(state: State, tech: Technique, attacker: str | None, mode: str | None, it: Item,
              turn: Turno) -> tuple[int | None, str | None]:
    """CD of an effect: fixed in the registry, or by the text's formulas, compared to a stated `CD N`."""
    stated = it.label.numbers.get("CD")
    c = char(state, attacker)
    fixed = int_extra(tech, "CD")
    kind = fold(tech.kind)
    computed: int | None = None
    parts = ""
    if fixed is not None:
        computed, parts = fixed, "CD indicata nella descrizione"
    elif kind in ("incantesimo", "spell"):
        lvl = int_extra(tech, "livello")
        key = T.ABILITIES.get(fold(str(tech.extra.get("caratteristica", ""))))
        mod = ability_mod(c, key) if key else None
        if lvl is not None and mod is not None:
            computed, parts = 10 + lvl + mod, f"10 + livello {lvl} + {key} {mod:+d}"
    elif kind in ("capacita", "privilegio", "privilegio di classe"):
        lvl = int_extra(c, "livello_classe", "livello")
        key = T.ABILITIES.get(fold(str(tech.extra.get("caratteristica", ""))))
        mod = ability_mod(c, key) if key else None
        if lvl is not None and mod is not None:
            computed, parts = 10 + lvl // 2 + mod, f"10 + ½ livello di classe {lvl // 2} + {key} {mod:+d}"
    else:
        lvl = int_extra(tech, "livello")
        ability = T.MODES[mode][0] if mode else None
        mod = ability_mod(c, ability) if ability else None
        prof = proficient(c, tech)
        if lvl is not None and mod is not None:
            computed = 10 + lvl // 2 + mod + (-4 if prof is False else 0)
            parts = f"10 + ½ livello oggetto {lvl // 2} + {ability} {mod:+d}" + (
                " − 4 non competente" if prof is False else "")
            penalties = sum(a for a, n in it.label.modifiers if "gittata" in fold(n) and a < 0)
            computed += penalties
    if computed is not None and stated is not None and stated != computed:
        turn.add("starfinder.dc_mismatch", f"La CD di {tech.name} è {computed} ({parts}), non {stated}.",
                 T.R_DC if "non competente" not in parts else T.R_WEAPON_PROF, roll=it.index,
                 expected=computed, found=stated)
    return (computed if computed is not None else stated), None
