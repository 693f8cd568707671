"""What `poteri` shows of a fight: every fighter's summary (`characters`) and the next poster's hint (`next_hint`)."""
from __future__ import annotations

from typing import Any

from .._shared import find, next_in_order, pool_stats, registro_lines
from ..starfinder.labels import parse
from . import tables as T
from .state import Fighter, State
from .tipologia import power


def characters(state: State) -> dict[str, dict[str, Any]]:
    """Every fighter's pools, slots held and effects (cast or suffered), in the overlay's form."""
    out = {}
    for n, f in state.fighters.items():
        held = [e for e in state.effects if e.caster == n]
        out[n] = {
            "pf": f.pf, "pf_max": f.pf_max, "pd": f.pd, "pd_max": f.pd_max,
            "slot": sum(e.slots for e in held), "slot_max": state.settings["slots"],
            # active effects on this fighter, in the overlay's stack form
            "stacks": [{"name": e.power, "count": 1, "remaining": e.remaining, "type": e.type, "from": e.caster}
                       for e in state.effects if e.target == n],
            "effects": [{"power": e.power, "type": e.type, "caster": e.caster, "target": e.target,
                         "slots": e.slots, "remaining": e.remaining} for e in state.effects
                        if e.caster == n or e.target == n],
            "conditions": (["Senza Fatica"] if f.pf == 0 else []) + (["0 PD"] if f.pd == 0 else []),
        }
    return out


def next_hint(state: State, character: str | None = None) -> dict[str, Any]:
    """Who posts next, the Resistenze it owes, its pools and slots, Registro lines and ready dice tags."""
    nxt = character
    if nxt is None:
        nxt = next_in_order(state.order, state.last)
    hint: dict[str, Any] = {"ruleset": "poteri", "character": nxt, "incoming": [], "stats": {}, "registro": [],
                            "hints": [], "dice_tags": []}
    if nxt is None:
        hint["hints"].append("Nessun turno giocato finora.")
        return hint
    f = state.fighters.get(nxt, Fighter(nxt))
    summary = characters(state).get(nxt, {})
    hint["state"] = summary
    hint["stats"].update(pool_stats(f, (("PF", "pf"), ("PD", "pd"))))
    hint["stats"]["Slot"] = f"{summary.get('slot', 0)}/{state.settings['slots']}"
    hint["registro"] = registro_lines(f.since)
    for p in state.pending:
        if p.target != nxt:
            continue
        hint["incoming"].append({"from": p.caster, "action": f"Attacco magico (Resistenza su {p.stat or '?'})",
                                 "technique": p.power, "total": p.potency, "post": p.post})
        hint["dice_tags"].append({"label": f"Resistenza contro {p.power}",
                                  "tag": f"[dice=1d100]Resistenza [{p.stat or '…'}] ({nxt} vs {p.caster})[/dice]"})
    for e in state.effects:
        if e.caster == nxt and e.remaining is not None:
            hint["hints"].append(f"{e.power} su {e.target}: ancora {e.remaining} turni (compreso questo)."
                                 if e.remaining > 1 else f"{e.power} su {e.target}: ultimo turno.")
        if e.target == nxt and e.caster != nxt and e.type in ("Debilitante", "Mentale"):
            hint["hints"].append(f"Sotto {e.power} di {e.caster}"
                                 + (f": impedisce {', '.join(e.extra.get('impedisce', []))}."
                                    if e.extra.get("impedisce") else "."))
    if f.pf == 0:
        hint["hints"].append("0 PF: niente Attacchi magici.")
    c = find(state.registry.characters, nxt)
    for tname in (c.techniques if c else ()):
        p = power(state, tname, parse(""), c.name if c else None)
        if p.type == "Attacco":
            pf = min(T.PF_MAX, f.pf) if f.pf else 0
            if pf:
                hint["dice_tags"].append({"label": f"{p.name} con {pf} PF",
                                          "tag": f"[dice=1d100]Potere [{p.name}] ({nxt} vs …) PF {pf}[/dice]"})
                hint["dice_tags"].append({"label": f"Danni di {p.name}",
                                          "tag": f"[dice={pf}d6+3]Danni [{p.name}] ({nxt} vs …)[/dice]"})
        elif p.type:
            hint["dice_tags"].append({"label": f"{p.name} ({p.type})",
                                      "tag": f"[dice=1d100]Potere [{p.name}] ({nxt} vs …)[/dice]"})
    return hint
