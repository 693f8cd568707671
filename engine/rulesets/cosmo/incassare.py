"""Difendere › Incassare (farsi colpire): the attack's pool against Difesa Naturale, half the defence stat."""
from __future__ import annotations

from . import danni as DA
from . import registro as R
from . import tables as T
from . import uso_del_cosmo as CO
from .lines import Action
from .malus import block_malus
from .state import Attack, State
from .turno import _Ctx


def incassa(state: State, ctx: _Ctx, who: str, atk: Attack, d: Action | None,
            forced: str | None = None, spend: bool = True) -> State:
    """Incassare: the attack's pool against Difesa Naturale = half the defence stat."""
    stat = T.DEFENCE_STAT.get(atk.nature or "", "Resistenza")
    stated = d.stats.get(stat) if d is not None else None
    value = R.value(state, ctx, who, stat, stated, T.R_INCASSARE, d.roll if d else None)
    if d is not None and spend:
        state, _ = CO.spend(state, ctx, who, d.numbers.get("cosmo"), "l'incasso", d.roll)
    if value is None or atk.pool is None:
        ctx.add("ruling.needed",
                f"Manca {'il Pool dell attacco' if atk.pool is None else stat + ' di ' + who} per risolvere "
                f"l'attacco di {atk.attacker} su {who}.", T.R_INCASSARE, expected="Pool e difesa", found=None)
        return state
    odd = value % 2 == 1
    dn = value // 2 if state.settings["natural_defence_rounding"] == "difetto" else -(-value // 2)
    assumption = "natural_defence_rounding" if odd else None
    if d is not None and d.numbers.get("difesa_naturale") is not None and d.numbers["difesa_naturale"] != dn:
        ctx.add("cosmo.natural_defence_mismatch",
                f"Difesa Naturale = metà di {stat} {value} = {dn}, non {d.numbers['difesa_naturale']}.",
                T.R_INCASSARE, roll=d.roll, expected=dn, found=d.numbers["difesa_naturale"], assumption=assumption)
    malus, blocked = block_malus(state, ctx, who)
    diff = atk.pool - (dn - malus)
    parts = f"{atk.pool} − Difesa Naturale ({stat} {value}/2 = {dn})" + \
        (f" − malus blocco {malus}" if malus else "") + f" = {diff}"
    if forced:
        parts += f" ({who} è {forced}: non può difendersi)"
    return DA.hit(state, ctx, who, atk, diff, parts, T.R_INCASSARE, blocked=blocked,
                  roll=d.roll if d else None, kind="incasso", assumption=assumption)
