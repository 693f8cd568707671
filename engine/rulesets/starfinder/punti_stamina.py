"""Punti Stamina e Punti Ferita (Danno Minimo too): damage to PS then PF, Privo di Sensi, Morente, Risolutezza."""
from __future__ import annotations

import re
from dataclasses import replace

from .._shared import canon, ensure_fighter, set_fighter
from . import tables as T
from .state import Fighter, State
from .turno import Turno

_STABILISED = re.compile(r"(?im)^\s*stabilizzat[oaie]\s*[:\-]\s*(.+?)\s*$")


def apply_damage(state: State, turn: Turno, target: str, total: int, source: str, roll: int | None,
                 stated: int | None = None, assumption: str | None = None) -> State:
    """Damage to PS first, then PF (at least 1 Danno Non Letale); at 0 PF Privo di Sensi and Morente."""
    nonlethal = total < 1
    dmg = 1 if nonlethal else total
    if stated is not None and stated != dmg:
        turn.add("damage.miscalculated", f"I danni sono {dmg}, non {stated}.", T.R_DAMAGE, roll=roll,
                 expected=dmg, found=stated, assumption=assumption)
    if nonlethal:
        turn.add("starfinder.minimum_damage",
                 f"Le penalità portano i danni a {total}: il colpo infligge comunque 1 Danno Non Letale.",
                 T.R_MIN_DAMAGE, roll=roll, expected=1, found=total)
    state = ensure_fighter(state, target, Fighter)
    f = state.fighters[target]
    if f.ps is None or f.pf is None:
        turn.add("ruling.needed",
                 f"Non conosco i PS/PF di {target}: {dmg} danni da applicare a mano (registro o schema).",
                 T.R_POOLS, roll=roll, expected=dmg, found=None, target=target)
        return state
    ps_loss = min(f.ps, dmg)
    pf_loss = min(f.pf, dmg - ps_loss)
    if nonlethal and pf_loss and state.settings["nonlethal_at_zero_ps"] == "master":
        turn.add("ruling.needed",
                 f"{target} non ha più PS: il testo non dice cosa fa un Danno Non Letale ai PF. Decide il master.",
                 T.R_MIN_DAMAGE, roll=roll, expected=None, found=1, assumption="nonlethal_at_zero_ps")
        pf_loss = 0
    owed = tuple((-n, k, source) for n, k in ((ps_loss, "PS"), (pf_loss, "PF")) if n)
    f = replace(f, ps=f.ps - ps_loss, pf=f.pf - pf_loss, nonlethal=f.nonlethal + (dmg if nonlethal else 0),
                touched=f.touched or not f.seen, since=f.since + owed)
    parts = ([f"PS {f.ps + ps_loss} → {f.ps}"] if ps_loss or not pf_loss else []) + (
        [f"PF {f.pf + pf_loss} → {f.pf}"] if pf_loss else [])
    turn.add("outcome.damage", f"{target} subisce {dmg} danni da {source}: " + ", ".join(parts) + ".",
             T.R_POOLS, roll=roll, expected=dmg, found=total, target=target, ps_loss=ps_loss, pf_loss=pf_loss,
             assumption=assumption)
    if f.pf == 0 and pf_loss and not f.has("Privo di Sensi"):
        f = f.with_cond("Privo di Sensi", "Morente", drop=("Stabilizzato",))
        turn.add("starfinder.dying",
                 f"{target} arriva a 0 PF: è Privo di Sensi e Morente, perde 1 PR per round finché non viene "
                 "stabilizzato.", T.R_POOLS, roll=roll, expected=0, found=f.pf, fighter=target)
    return set_fighter(state, f)


def cycle_round(state: State, turn: Turno) -> State:
    """The poster joins the turn order and is the last to play; under round_rule 'ciclo' its second post in a round opens the next one."""
    actor = turn.actor
    order = state.order if actor in state.order else state.order + (actor,)
    state = replace(state, order=order, last=actor)  # nothing in the step reads `last`: the hint's next poster
    if state.settings["round_rule"] != "ciclo":
        return state
    if actor in state.acted:
        state = new_round(replace(state, round=state.round + 1, acted=()), turn,
                          assumption="round_rule")
    return replace(state, acted=state.acted + (actor,))


def new_round(state: State, turn: Turno, assumption: str | None) -> State:
    """A new round: every Morente fighter not stabilised loses 1 PR; at 0 PR one more loss kills."""
    for name, f in list(state.fighters.items()):
        if not f.has("Morente") or f.has("Morto") or f.has("Stabilizzato") or f.pr is None:
            continue
        if f.pr <= 0:
            f = f.with_cond("Morto", drop=("Morente",))
            turn.add("starfinder.dead",
                     f"{name} è Morente con 0 Punti Risolutezza e ne dovrebbe perdere un altro: muore.",
                     T.R_POOLS, expected=0, found=0, assumption=assumption, fighter=name, round=state.round)
        else:
            f = replace(f, pr=f.pr - 1, since=f.since + ((-1, "PR", "Morente"),))
            turn.add("starfinder.dying",
                     f"{name} è Morente: perde 1 Punto Risolutezza all'inizio del round {state.round} "
                     f"(PR {f.pr + 1} → {f.pr}).", T.R_POOLS, expected=f.pr, found=f.pr + 1,
                     assumption=assumption, fighter=name, round=state.round)
        state = set_fighter(state, f)
    return state


def stabilise(state: State, turn: Turno) -> State:
    """`Stabilizzato: Nome` lines (usually the master's): a Morente fighter stops losing Punti Risolutezza."""
    for m in _STABILISED.finditer(turn.post.body or ""):
        name = canon(state, m.group(1))
        f = state.fighters.get(name or "")
        if f is None or not f.has("Morente"):
            continue
        state = set_fighter(state, f.with_cond("Stabilizzato"))
        turn.add("starfinder.stabilised", f"{name} è stabilizzato: non perde più Punti Risolutezza.",
                 T.R_POOLS, fighter=name)
    return state


def unconscious(state: State, turn: Turno) -> State:
    """A Privo di Sensi or dead poster cannot attack: its attack and damage rolls are refused, not resolved."""
    actor = turn.actor
    groups = turn.groups
    actor_f = state.fighters.get(actor) if actor else None
    if actor_f and (actor_f.has("Privo di Sensi") or actor_f.has("Morto")) and any(
            g.head.kind in ("attack", "damage") for g in groups):
        turn.add("starfinder.acts_while_unconscious",
                 f"{actor} è {'morto' if actor_f.has('Morto') else 'Privo di Sensi'} e non può attaccare.",
                 T.R_POOLS, roll=groups[0].head.index, expected="nessuna azione", found="attacco")
        turn.groups = [g for g in groups if g.head.kind not in ("attack", "damage")]  # not resolved
    return state
