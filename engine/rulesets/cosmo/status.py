"""Status speciali: Sconfitto and Svenuto (declared, fainting), Bloccato / Ghermito (freed, released, rounds)."""
from __future__ import annotations

from dataclasses import replace

from .._shared import set_fighter
from . import registro as R
from . import tables as T
from .state import Due, State
from .turno import _Ctx
from .uso_del_cosmo import spend


def _half(n: int) -> int | float:
    """Half of a pool difference as the text states it (no rounding: 'la metà della differenza')."""
    return n // 2 if n % 2 == 0 else n / 2


def count_round(state: State, ctx: _Ctx) -> State:
    """`round_rule = "ciclo"`: a fighter posting again opens a new round (its end counts down the blocks)."""
    if state.settings["round_rule"] != "ciclo":
        return state
    actor = ctx.actor
    if actor in state.acted:
        state = end_round(replace(state, round=state.round + 1, acted=()), ctx, "round_rule")
    return replace(state, acted=state.acted + (actor,))


def end_round(state: State, ctx: _Ctx, assumption: str | None) -> State:
    """End of a round: a Ghermito owes a Leggero damage; every block loses a turn (at 0 it ends)."""
    for name, f in list(state.fighters.items()):
        b = f.block
        if b is None:
            continue
        if b.ghermito and not f.has("Sconfitto"):
            f = replace(f, due=f.due + (Due(T.LEGGERO, ctx.post.id, b.by, "Ghermito: fine del round",
                                            assumption=assumption),))
            ctx.add("cosmo.grip_damage",
                    f"{name} è Ghermito alla fine del round {state.round - 1}: deve tirare un danno Leggero.",
                    T.R_GHERMITO, expected=T.LEGGERO, found=None, assumption=assumption, fighter=name)
        if b.turns is not None:
            left = b.turns - 1
            if left <= 0:
                f = replace(f, block=None)
                ctx.add("cosmo.block_expired", f"Il blocco di {b.technique} su {name} è terminato.",
                        T.R_BLOCCATO, expected=0, found=left, assumption=assumption, fighter=name)
            else:
                f = replace(f, block=replace(b, turns=left))
        state = set_fighter(state, f)
    return state


def out_of_fight(state: State, ctx: _Ctx) -> bool:
    """A Sconfitto or Svenuto who writes an action (`cosmo.out_of_fight`): none of the post's actions resolves."""
    f = state.fighters[ctx.actor]
    if not f.out:
        return False
    acting = [a for a in ctx.actions if a.kind in ("attacco", "difesa", "contrattacco", "incasso")]
    if not acting:
        return False
    ctx.add("cosmo.out_of_fight",
            f"{ctx.actor} è {'Sconfitto' if f.has('Sconfitto') else 'Svenuto'}: non può più agire fino alla "
            "fine della giocata.", T.R_SCONFITTO if f.has("Sconfitto") else T.R_SVENUTO,
            roll=acting[0].roll, expected="nessuna azione", found=acting[0].raw)
    return True


def block_actions(state: State, ctx: _Ctx) -> State:
    """Bloccato: `Liberazione [Cosmo N]` burns cosmo towards half the pool difference; `Rilascio` frees a victim."""
    actor = ctx.actor
    for act in ctx.actions:
        f = state.fighters[actor]
        if act.kind == "liberazione":
            amount = act.numbers.get("cosmo")
            if f.block is None:
                ctx.add("cosmo.not_blocked", f"{actor} non è bloccato: niente da cui liberarsi.",
                        T.R_BLOCCATO, roll=act.roll, expected=None, found=amount)
                continue
            if not amount:
                continue
            state, ok = spend(state, ctx, actor, amount, "liberarsi", act.roll)
            if not ok:
                continue
            f = state.fighters[actor]
            b = replace(f.block, burned=f.block.burned + amount)
            if b.diff is None:
                state = set_fighter(state, replace(f, block=b))
                ctx.add("ruling.needed",
                        f"Non conosco la differenza tra i Pool del blocco di {actor}: decide il master se "
                        f"{b.burned} cosmo bastano a liberarsi.", T.R_BLOCCATO, roll=act.roll, expected=None,
                        found=b.burned)
            elif 2 * b.burned >= b.diff:
                state = set_fighter(state, replace(f, block=None))
                ctx.freed.add(actor)
                ctx.add("cosmo.freed",
                        f"{actor} brucia {b.burned} cosmo (metà della differenza {b.diff} = {b.diff / 2:g}): si "
                        "libera, e questo turno si difende con la difesa piena.", T.R_MALUS, roll=act.roll,
                        expected=_half(b.diff), found=b.burned, fighter=actor)
            else:
                state = set_fighter(state, replace(f, block=b))
                if 4 * amount > b.diff:  # more than 50% of the cosmo needed (half the difference)
                    ctx.lowered[actor] = 1
                    ctx.add("cosmo.malus_lowered",
                            f"{actor} brucia {amount} cosmo, più del 50% dei {b.diff / 2:g} necessari: la "
                            "categoria di malus scende di 1.", T.R_MALUS, roll=act.roll, expected=f"> {b.diff / 4:g}",
                            found=amount, fighter=actor)
                else:
                    ctx.add("cosmo.burning",
                            f"{actor} brucia {amount} cosmo per liberarsi ({b.burned} su {b.diff / 2:g}).",
                            T.R_BLOCCATO, roll=act.roll, expected=_half(b.diff), found=b.burned, fighter=actor)
        elif act.kind == "rilascio":
            for name in act.names or act.targets:
                who = R.canon_name(state, name)
                vf = state.fighters.get(who or "")
                if vf is not None and vf.block is not None and vf.block.by == actor:
                    state = set_fighter(state, replace(vf, block=None))
                    ctx.add("cosmo.released", f"{actor} libera {who} dal blocco.", T.R_BLOCCATO,
                            roll=act.roll, fighter=who)
    return state


def declarations(state: State, ctx: _Ctx) -> State:
    """Sconfitto and Svenuto by the player's own choice (Sconfitto: below 200 PV, no attack, not defending)."""
    actor = ctx.actor
    for act in ctx.actions:
        f = state.fighters[actor]
        if act.kind == "sconfitto" and not f.has("Sconfitto"):
            problems = []
            if f.pv is None or f.pv >= T.SCONFITTO_MAX_PV:
                problems.append(f"Punti Salute {f.pv if f.pv is not None else '?'} (servono meno di 200)")
            if ctx.attacks:
                problems.append("attacca nello stesso post (bisogna rinunciare al proprio attacco)")
            if ctx.was_defending:
                problems.append("è nel turno di difesa")
            if problems:
                ctx.add("cosmo.surrender_refused",
                        f"{actor} non può dichiararsi Sconfitto: " + "; ".join(problems) + ".", T.R_SCONFITTO,
                        expected=f"PV < {T.SCONFITTO_MAX_PV}, nessun attacco, fuori dal turno di difesa",
                        found=f.pv)
            else:
                state = set_fighter(state, f.with_cond("Sconfitto"))
                state = replace(state, incoming=tuple(a for a in state.incoming if a.target != actor))
                ctx.add("cosmo.defeated",
                        f"{actor} si dichiara Sconfitto: immune a ogni danno fino alla fine della giocata.",
                        T.R_SCONFITTO, expected=f"< {T.SCONFITTO_MAX_PV}", found=f.pv, fighter=actor)
        elif act.kind == "svenuto" and not f.has("Svenuto"):
            state = set_fighter(state, f.with_cond("Svenuto"))
            ctx.add("cosmo.fainted", f"{actor} sviene per propria scelta.", T.R_SVENUTO, fighter=actor)
    return state


def faint(state: State, ctx: _Ctx) -> State:
    """Svenuto: whoever spent the whole maximum of cosmo in one action of this post faints."""
    for name, amount in ctx.faint:
        f = state.fighters[name]
        if not f.has("Svenuto"):
            state = set_fighter(state, f.with_cond("Svenuto"))
            ctx.add("cosmo.fainted",
                    f"{name} ha usato tutto il suo massimale di cosmo ({f.cosmo_max}) in una sola azione: sviene.",
                    T.R_SVENUTO, expected=f.cosmo_max, found=amount, fighter=name)
    return state
