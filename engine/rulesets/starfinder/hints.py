"""What the audit shows after the fight: every fighter's summary and the next poster's hint (saves, dice tags)."""
from __future__ import annotations

from typing import Any

from ...history import Character
from .._shared import as_int, fold, next_in_order, pool_stats, registro_lines
from . import tables as T
from .attacchi import weapon_mode
from .classe_armatura import damage_type
from .competenza import armour_penalty, proficient
from .labels import parse
from .registro import ability_mod, char, int_extra, technique
from .state import Fighter, State


def characters(state: State) -> dict[str, dict[str, Any]]:
    """Every fighter's pools, conditions (a non-proficient powered armour's too) and effective CAE/CAC."""
    out: dict[str, dict[str, Any]] = {}
    for name, f in state.fighters.items():
        c = char(state, name)
        pen, conds = armour_penalty(c)
        cae = int_extra(c, "CAE")
        cac = int_extra(c, "CAC")
        out[name] = {
            "ps": f.ps, "ps_max": f.ps_max, "pf": f.pf, "pf_max": f.pf_max, "pr": f.pr, "pr_max": f.pr_max,
            "conditions": list(f.conditions) + [c2 for c2 in conds if c2 not in f.conditions],
            "nonlethal": f.nonlethal,
            "CAE": None if cae is None else cae + pen, "CAC": None if cac is None else cac + pen,
        }
    return out


def next_hint(state: State, character: str | None = None) -> dict[str, Any]:
    """Who posts next, the saves it owes, its pools, the Registro lines to copy and ready dice tags."""
    nxt = character
    if nxt is None and state.order:
        nxt = next_in_order([n for n in state.order if not state.fighters.get(n, Fighter(n)).has("Morto")],
                            state.last)
    hint: dict[str, Any] = {"ruleset": "starfinder", "round": state.round, "character": nxt, "incoming": [],
                            "stats": {}, "registro": [], "hints": [], "dice_tags": []}
    if nxt is None:
        hint["hints"].append("Nessun turno giocato finora.")
        return hint
    f = state.fighters.get(nxt, Fighter(nxt))
    summary = characters(state).get(nxt, {})
    hint["stats"].update(pool_stats(f, (("PS", "ps"), ("PF", "pf"), ("PR", "pr"))))
    for key in ("CAE", "CAC"):
        if summary.get(key) is not None:
            hint["stats"][key] = summary[key]
    hint["state"] = summary
    hint["registro"] = registro_lines(f.since)
    for p in state.pending:
        if p.target != nxt:
            continue
        hint["incoming"].append({"from": p.source, "action": f"Tiro Salvezza su {p.save}", "technique": p.technique,
                                 "total": p.cd, "post": p.post, "if_success": p.result})
        saves = (char(state, nxt) or Character(nxt)).extra.get("TS")
        bonus = None
        for k, v in (saves.items() if isinstance(saves, dict) else ()):
            if T.save_of(str(k)) == p.save:
                bonus = as_int(v)
        expr = f"1d20{bonus:+d}" if bonus else "1d20"
        terms = f": ({bonus:+d} [{p.save}])" if bonus else ""
        hint["dice_tags"].append({"label": f"Tiro Salvezza contro {p.technique}",
                                  "tag": f"[dice={expr}]Tiro Salvezza [{p.save}] ({nxt} vs {p.source}){terms}"
                                         + (f" CD {p.cd}" if p.cd is not None else "") + "[/dice]"})
    c = char(state, nxt)
    for tname in (c.techniques if c else ()):
        w = technique(state, tname, c.name if c else None)
        if w is None or fold(w.kind) not in ("arma", "granata"):
            continue
        mode = weapon_mode(w, parse(""))
        ability = T.MODES[mode][0] if mode else "Destrezza"
        bab = int_extra(c, "BAB")
        mod = ability_mod(c, ability)
        if bab is None or mod is None:
            continue
        prof = proficient(c, w)
        total = bab + mod + (-4 if prof is False else 0)
        mods = f"+{bab} [BAB] {mod:+d} [{ability}]" + (" -4 [Non competente]" if prof is False else "")
        ca = str(w.extra["ca"]).upper() if w.extra.get("ca") else T.ca_for_damage_type(damage_type(w))
        hint["dice_tags"].append({"label": f"Attacco con {w.name}",
                                  "tag": f"[dice=1d20{total:+d}]Attacco [{w.name}] ({nxt} vs …): ({mods}) "
                                         f"vs {ca} …[/dice]"})
    if f.has("Morente"):
        hint["hints"].append("Morente: perde 1 PR per round finché non viene stabilizzato.")
    if f.has("Privo di Sensi"):
        hint["hints"].append("Privo di Sensi: nessun attacco in questo turno.")
    return hint
