"""The fighters' summary (`characters`) and the "your turn" hint (`next_hint`): incoming attacks, dice tags."""
from __future__ import annotations

from typing import Any

from .._shared import next_in_order
from . import registro as R
from . import tables as T
from .state import Attack, State

STATS = ("Forza", "Mente", "Resistenza", "Volontà", "Reattività")


def characters(state: State) -> dict[str, dict[str, Any]]:
    """Every fighter: PV, Cosmo, conditions, the block on them, the damages to roll, the stats known."""
    out: dict[str, dict[str, Any]] = {}
    for n, f in state.fighters.items():
        conds = list(f.conditions)
        blocco = None
        if f.block is not None:
            conds.append("Ghermito" if f.block.ghermito else "Bloccato")
            b = f.block
            blocco = {"da": b.by, "tecnica": b.technique, "turni": b.turns, "malus": T.block_malus(b.turns),
                      "differenza_pool": b.diff, "cosmo_bruciato": b.burned,
                      "cosmo_per_liberarsi": None if b.diff is None else max(0, -(-b.diff // 2) - b.burned),
                      "riflessa": b.reflected}
        out[n] = {
            "pv": f.pv, "pv_max": f.pv_max, "cosmo": f.cosmo, "cosmo_max": f.cosmo_max,
            "conditions": conds, "blocco": blocco,
            "danni_da_tirare": [d.band or "da stabilire (Tabella 5)" for d in f.due],
            "stats": {s: v for s in STATS if (v := R.stat_of(state, n, s)) is not None},
        }
    return out


def next_hint(state: State, character: str | None = None) -> dict[str, Any]:
    """Who posts next and what they face: the attacks to answer (with the lines to write), the damages to roll."""
    nxt = character
    if nxt is None and state.order:
        nxt = next_in_order([n for n in state.order if not state.fighters[n].out], state.last)
    hint: dict[str, Any] = {"ruleset": "cosmo", "round": state.round, "character": nxt,
                            "scontro_finito": state.ended}
    if nxt is None:
        return hint
    f = state.fighters.get(nxt)
    hint["state"] = characters(state).get(nxt)
    attacks = []
    for a in state.incoming:
        if a.target != nxt:
            continue
        dstat = T.DEFENCE_STAT.get(a.nature or "", "Resistenza")
        val = R.stat_of(state, nxt, dstat)
        v = "N" if val is None else str(val)
        dn = "N" if val is None else str(val // 2)
        attacks.append({
            "da": a.attacker, "tecnica": a.technique, "natura": a.nature, "livello": a.level, "pool": a.pool,
            "difesa": f"Difesa [{dstat} {v}] ({nxt} vs {a.attacker})",
            "incasso": f"Incasso [{dstat} {v} => Difesa Naturale: {dn}] ({nxt} vs {a.attacker})",
            "contrattacco": _counter_hint(state, nxt, a),
        })
    hint["attacchi_in_arrivo"] = attacks
    hint["danni_da_tirare"] = [
        {"fascia": d.band, "motivo": d.reason,
         "tag": f"[dice={_die_hint(state, nxt, d.band)}]Danno {d.band or '…'} ({nxt})[/dice]"}
        for d in (f.due if f else ())]
    if f and f.has("Affaticato"):
        hint["note"] = "Affaticato: niente Skill né Special, nessuna difesa (si incassa)."
    elif f and f.block is not None:
        hint["note"] = ("Bloccato: difesa con malus, solo Telepatia e Chiaroveggenza; ci si libera bruciando "
                        "cosmo con `Liberazione [Cosmo N]`.")
    return hint


def _counter_hint(state: State, name: str, a: Attack) -> str:
    """The dice tag of a counter-attack of the same level as `a` (the only one that can succeed)."""
    r = R.stat_of(state, name, "Reattività")
    reatt = f" [Reattività {r}]" if r is not None else " [Reattività N]"
    if a.level == 0:
        nature = a.nature or T.FISICO
        stat = "Forza" if nature == T.FISICO else "Mente"
        v = R.stat_of(state, name, stat)
        body = f"[{T.SKILL_NAMES[nature]}] [{stat} {v if v is not None else 'N'}]"
    else:
        body = f"[Special] {{Special {a.level if a.level is not None else 'N'}}} [Pool N] [Cosmo N]"
    return f"[dice=1d100]Contrattacco {body}{reatt} ({name} vs {a.attacker})[/dice]"


def _die_hint(state: State, name: str, band: str | None) -> str:
    """The Tabella 5 die of `band` for `name` (with or without armour, as the registry says)."""
    b = T.band_named(band, state.bands)
    armour = R.armour(state, name, ())
    if b is not None:
        die = b.die_armour if armour else b.die_no_armour if armour is False else (b.die_no_armour or b.die_armour)
        if die:
            return die
    return "dado della Tabella 5"
