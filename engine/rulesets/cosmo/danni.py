"""Basi › Tabella 5: a pool difference becomes a band to roll (One shot, minimum Moderato, blocks); the rolls."""
from __future__ import annotations

from dataclasses import replace

from ...history import Roll, describe_problems
from .._shared import ensure_fighter, set_fighter
from . import registro as R
from . import tables as T
from .state import Attack, Block, Due, Fighter, State
from .tables import Band, fold
from .turno import _Ctx


def _join(*names: str | None) -> str | None:
    """Several settings one verdict depends on, comma-separated (None when none)."""
    named = [n for n in names if n]
    return ", ".join(dict.fromkeys(named)) or None


def _total_of(r: Roll) -> int | None:
    if r.total is not None:
        return r.total
    if r.faces:
        return sum(r.faces) + r.constant
    return None


def hit(state: State, ctx: _Ctx, victim: str, atk: Attack, diff: int, parts: str, rule: str, *,
        blocked: bool, roll: int | None, kind: str, assumption: str | None = None) -> State:
    """A pool difference on `victim`: parried (≤ 0), else a Tabella 5 band to roll; statuses follow."""
    bands = state.bands
    default = T.is_default_table(state.settings)
    tab_assumption = "tabella5" if default else None
    vf = state.fighters[victim]
    if vf.has("Sconfitto"):
        ctx.add("cosmo.defeated_immune", f"{victim} è Sconfitto: immune al danno.", T.R_SCONFITTO,
                roll=roll, expected=0, found=diff)
        return state
    band: Band | None = None
    if diff > 0:
        band = T.band_for(diff, bands)
    moderato = T.band_named(T.MODERATO, bands)
    raised = False
    if blocked and vf.block is not None:
        # "il livello minimo di danno che subirà sarà automaticamente un Moderato"
        if moderato is None:
            ctx.add("ruling.needed", "Tabella 5 del forum non ha una fascia Moderato.", T.R_BLOCCATO,
                    roll=roll, expected=T.MODERATO, found=None, assumption=tab_assumption)
        elif diff <= 0 or (band is not None and T.band_rank(band.name, bands) < T.band_rank(T.MODERATO, bands)):
            band, raised = moderato, True
    if diff <= 0 and band is None:
        ctx.add("outcome.defended", f"{parts} ≤ 0: l'attacco di {atk.attacker} su {victim} è "
                f"{'parato' if kind == 'difesa' else 'incassato senza danno' if kind == 'incasso' else 'annullato'}.",
                rule, roll=roll, expected=0, found=diff, attack_post=atk.post, assumption=assumption)
        return state
    if band is None:
        ctx.add("ruling.needed",
                f"{parts}: Tabella 5 {'(di serie: solo 20, 30, 60, 130) ' if default else ''}non dice che danno "
                f"è una differenza di {diff}. Decide il master; {victim} tira il danno indicato.", T.R_TAB5,
                roll=roll, expected="fascia di Tabella 5", found=diff, assumption="tabella5", victim=victim,
                attack_post=atk.post)
        vf = replace(vf, due=vf.due + (Due(None, ctx.post.id, atk.attacker, f"{atk.technique}: {parts}",
                                           assumption="tabella5"),))
        state = set_fighter(state, vf)
        return _apply_effect(state, ctx, victim, atk, diff, None, roll, tab_assumption)
    if T.is_oneshot(band.name):
        vf = vf.with_cond("Svenuto")
        state = set_fighter(state, vf)
        ctx.add("outcome.oneshot",
                f"{parts}: danno One shot, {victim} sviene" +
                (" e lo scontro termina." if state.settings["oneshot_ends_fight"] else "."), T.R_ONESHOT,
                roll=roll, expected=band.name, found=diff, assumption=_join(tab_assumption, assumption),
                victim=victim)
        if state.settings["oneshot_ends_fight"]:
            state = replace(state, ended=True, incoming=())
        return state
    note = " (minimo Moderato perché bloccato)" if raised else ""
    ctx.add("outcome.damage",
            f"{parts}: {victim} subisce un danno {band.name}{note} da {atk.attacker} e tira il dado del danno.",
            T.R_BLOCCATO if raised else f"{rule} + {T.R_TAB5}", roll=roll,
            expected=band.name, found=diff, assumption=_join(tab_assumption, assumption), victim=victim,
            band=band.name, attack_post=atk.post)
    vf = replace(vf, due=vf.due + (Due(band.name, ctx.post.id, atk.attacker, f"{atk.technique}: {parts}",
                                       assumption=tab_assumption),))
    state = set_fighter(state, vf)
    return _apply_effect(state, ctx, victim, atk, diff, band, roll, tab_assumption)


def _apply_effect(state: State, ctx: _Ctx, victim: str, atk: Attack, diff: int, band: Band | None,
                  roll: int | None, assumption: str | None) -> State:
    vf = state.fighters[victim]
    if atk.release and vf.block is not None and vf.block.by == atk.attacker:
        # the hit is at least Moderato (minimum damage of a blocked fighter): the blocker may free its victim
        vf = replace(vf, block=None)
        ctx.add("cosmo.released", f"{atk.attacker} libera {victim} con un danno "
                f"{band.name if band else 'almeno Moderato'}.", T.R_BLOCCATO, roll=roll, expected=T.MODERATO,
                found=band.name if band else None)
    if atk.effect and diff > 0:
        turns = atk.turns if atk.turns is not None else (band.turns if band else None)
        grip = fold(atk.effect) == "ghermente"
        vf = replace(vf, block=Block(by=atk.attacker, technique=atk.technique, post=ctx.post.id, turns=turns,
                                     diff=diff, ghermito=grip, reflected=atk.reflected))
        ctx.add("cosmo.blocked",
                f"{victim} è {'Ghermito' if grip else 'Bloccato'} da {atk.technique} per "
                f"{turns if turns is not None else '?'} turni"
                + (" (Special riflessa: può annullarla subito)" if atk.reflected else "")
                + f"; si libera bruciando {diff / 2:g} cosmo.", T.R_GHERMITO if grip else T.R_BLOCCATO, roll=roll,
                expected=turns, found=diff, assumption=None if atk.turns is not None else assumption, victim=victim)
        if turns is None:
            ctx.add("ruling.needed",
                    f"Tabella 5 non dà i turni di {atk.effect} per questo danno: scrivili `[Turni N]` o li fissa il "
                    "master (`Turni di blocco: Nome N`).", T.R_TAB5, roll=roll, expected="turni", found=None,
                    assumption="tabella5")
    return set_fighter(state, vf)


def damage_rolls(state: State, ctx: _Ctx) -> State:
    """The post's Tabella 5 dice: each against a damage its fighter owes (band, die), then off its PV."""
    actor = ctx.actor
    for act in ctx.actions:
        if act.kind != "danno" or act.roll is None:
            continue
        r = ctx.post.rolls[act.roll]
        who = R.canon_name(state, act.actor) or actor
        state = ensure_fighter(state, who, Fighter)
        f = state.fighters[who]
        words = [act.word] + R.plain_names(act.names)
        named = next((T.band_named(w, state.bands).name for w in words if T.band_named(w, state.bands)), None)
        if named is None:
            named = next((w.strip().split()[0].capitalize() for w in words if w.strip()), None)
        if not r.authentic:
            ctx.add("dice.not_authentic", "Il tiro non è autentico (scritto a mano o incoerente).",
                    T.R_TAB5, roll=act.roll, expected="tiro del forum", found=describe_problems(r.problems) or r.source)
        if not f.due:
            ctx.add("cosmo.unexpected_damage_roll",
                    f"{who} tira un danno {named or ''} che nessun colpo gli ha inflitto: non applicato.", T.R_TAB5,
                    roll=act.roll, expected=None, found=named)
            continue
        k = next((i for i, d in enumerate(f.due) if d.band and fold(d.band) == fold(named)), None)
        if k is None:
            k = next((i for i, d in enumerate(f.due) if d.band is None), None)
            if k is not None and named:
                ctx.add("cosmo.band_declared",
                        f"Fascia non data da Tabella 5: vale quella tirata ({named}).", T.R_TAB5,
                        roll=act.roll, expected=None, found=named, assumption="tabella5")
        if k is None:
            ctx.add("cosmo.wrong_band",
                    f"{who} deve tirare un danno {f.due[0].band}, non {named or '?'}.", T.R_TAB5, roll=act.roll,
                    expected=f.due[0].band, found=named)
            continue
        due = f.due[k]
        band = T.band_named(named if due.band is None else due.band, state.bands)
        armour = R.armour(state, who, act.names)
        if band is not None and (band.die_armour or band.die_no_armour):
            allowed = [x for x, on in ((band.die_armour, True), (band.die_no_armour, False))
                       if x and (armour is None or armour is on)]
            got = T.norm_die(r.expression)
            if allowed and got not in allowed:
                ctx.add("dice.wrong_die",
                        f"Il danno {band.name} {'con' if armour else 'senza' if armour is False else ''} armatura "
                        f"si tira con {' o '.join(allowed)}, non {got}.", T.R_TAB5, roll=act.roll,
                        expected=" o ".join(allowed), found=got)
                continue
        total = _total_of(r)
        if total is None:
            ctx.add("ruling.needed", "La pagina non mostra il risultato del dado del danno.", T.R_TAB5,
                    roll=act.roll)
            continue
        pv0 = f.pv
        f = replace(f, due=f.due[:k] + f.due[k + 1:])
        if f.pv is not None:
            f = replace(f, pv=max(0, f.pv - total), touched=f.touched or not f.seen)
        state = set_fighter(state, f)
        if f.pv == 0 and pv0:
            ctx.add("ruling.needed",
                    f"{who} arriva a 0 Punti Salute: il testo non dice cosa accade (oltre al One shot). "
                    "Decide il master.", T.R_TAB5, roll=act.roll, expected=None, found=0, victim=who)
        ctx.add("outcome.damage_rolled",
                f"{who} tira il danno {band.name if band else named}: −{total} PV"
                + (f" ({pv0} → {f.pv})." if pv0 is not None else "."), T.R_TAB5, roll=act.roll,
                expected=band.name if band else named, found=total, assumption=due.assumption, victim=who)
    return state


def missing_rolls(state: State, ctx: _Ctx) -> State:
    """The damages the poster owed and did not roll in this post (each reported once)."""
    actor = ctx.actor
    f = state.fighters[actor]
    if not f.due or f.out:
        return state
    dues = []
    for d in f.due:
        if not d.reported and not (d.post == ctx.post.id and d.reason.startswith("Ghermito")):
            ctx.add("cosmo.damage_roll_missing",
                    f"{actor} doveva tirare il danno {d.band or '(fascia da stabilire)'} ({d.reason}).", T.R_TAB5,
                    expected=d.band, found=None, assumption=d.assumption, source_post=d.post)
            d = replace(d, reported=True)
        dues.append(d)
    return set_fighter(state, replace(f, due=tuple(dues)))
