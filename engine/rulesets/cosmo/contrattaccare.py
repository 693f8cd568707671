"""Difendere › Contrattaccare: same level only, the d100 on Reattività, Riuscito / Insufficiente / Fallito."""
from __future__ import annotations

from ...history import describe_problems
from .._shared import face_of
from . import danni as DA
from . import registro as R
from . import tables as T
from .attaccare import profile
from .incassare import incassa
from .lines import Action
from .state import Attack, State
from .turno import _Ctx
from .uso_del_cosmo import spend


def counter(state: State, ctx: _Ctx, who: str, atk: Attack, d: Action) -> State:
    """`who` counters `atk` with `d`: a failed or impossible counter is incassato, a landed one compares the pools."""
    tname, level, stat, nature, pool, effect, ok = profile(state, ctx, who, d, T.R_COUNTER)
    if not ok:
        return incassa(state, ctx, who, atk, d, spend=False)
    state, ok = spend(state, ctx, who, d.numbers.get("cosmo"), tname or "il contrattacco", d.roll)
    if not ok:
        return incassa(state, ctx, who, atk, d, spend=False)
    if level is not None and atk.level is not None and level != atk.level:
        lv = {0: "Base", 1: "Special Livello 1", 2: "Special Livello 2"}
        ctx.add("cosmo.counter_level_mismatch",
                f"Il contrattacco ({lv.get(level, level)}) non è dello stesso livello dell'attacco "
                f"({lv.get(atk.level, atk.level)}): fallito in partenza, il colpo si incassa.", T.R_COUNTER,
                roll=d.roll, expected=atk.level, found=level)
        return incassa(state, ctx, who, atk, d, spend=False)
    # the d100
    idx = d.roll
    if idx is None or ctx.post.rolls[idx].sides != 100:
        cands = [i for i, r in enumerate(ctx.post.rolls) if r.sides == 100]
        idx = cands[0] if cands else idx
    if idx is None:
        ctx.add("cosmo.counter_roll_missing",
                "Il contrattacco richiede un d100 su Reattività: manca, quindi fallisce e il colpo si incassa.",
                T.R_COUNTER, expected="1d100", found=None)
        return incassa(state, ctx, who, atk, d, spend=False)
    r = ctx.post.rolls[idx]
    if (r.count, r.sides) != T.COUNTER_DIE:
        # a roll on another die is no d100: as a missing one, the counter fails and the hit is taken
        ctx.add("dice.wrong_die", f"Il contrattacco si tira con 1d100, non {r.count}d{r.sides}: senza il d100 "
                "fallisce e il colpo si incassa su Difesa Naturale.",
                T.R_COUNTER, roll=idx, expected="1d100", found=f"{r.count}d{r.sides}")
        return incassa(state, ctx, who, atk, d, spend=False)
    if not r.authentic:
        ctx.add("dice.not_authentic", "Il tiro non è autentico (scritto a mano o incoerente).",
                T.R_COUNTER, roll=idx, expected="tiro del forum", found=describe_problems(r.problems) or r.source)
    reatt = R.value(state, ctx, who, "Reattività", d.stats.get("Reattività"), T.R_COUNTER, idx)
    face = face_of(r)
    if reatt is None or face is None:
        ctx.add("ruling.needed", "Manca la Reattività o il risultato del d100: esito da decidere.",
                T.R_COUNTER, roll=idx, expected="Reattività e d100", found=face)
        return state
    threshold = T.counter_threshold(reatt)
    if d.numbers.get("soglia") is not None and d.numbers["soglia"] != threshold:
        ctx.add("cosmo.counter_threshold_mismatch",
                f"Soglia del contrattacco: Reattività {reatt} / 10 per difetto = {threshold}%, non "
                f"{d.numbers['soglia']}%.", T.R_COUNTER, roll=idx, expected=threshold, found=d.numbers["soglia"])
    if face > threshold:
        ctx.add("outcome.counter_failed",
                f"Contrattacco fallito: d100 {face} > {threshold} (Reattività {reatt}/10): il colpo si incassa.",
                T.R_COUNTER, roll=idx, expected=threshold, found=face)
        return incassa(state, ctx, who, atk, d, spend=False)
    if pool is None or atk.pool is None:
        ctx.add("ruling.needed", "Manca un Pool per confrontare attacco e contrattacco.", T.R_COUNTER,
                roll=idx, expected="Pool", found=None)
        return state
    counter = Attack(post=ctx.post.id, attacker=who, target=atk.attacker, technique=tname, nature=nature,
                     level=level, stat=stat, pool=pool, effect=effect, turns=d.numbers.get("turni"),
                     release="libera" in d.tags)
    head = f"d100 {face} ≤ {threshold}: "
    if nature and atk.nature and nature != atk.nature:
        if pool > atk.pool:
            ctx.add("outcome.counter_mixed",
                    head + f"contrattacco {nature} contro attacco {atk.nature}, Pool {pool} > {atk.pool}: le "
                    "componenti fisiche e mentali non si contrappongono, entrambi colpiti su Difesa Naturale.",
                    T.R_COUNTER, roll=idx, expected=atk.pool, found=pool)
            state = incassa(state, ctx, atk.attacker, counter, None)
            return incassa(state, ctx, who, atk, d, spend=False)
        ctx.add("ruling.needed",
                head + f"contrattacco {nature} contro attacco {atk.nature} con Pool {pool} ≤ {atk.pool}: il testo "
                "descrive solo il caso col Pool superiore. Decide il master.", T.R_COUNTER, roll=idx,
                expected=f"> {atk.pool}", found=pool)
        return state
    if pool > atk.pool:
        diff = pool - atk.pool
        ctx.add("outcome.counter_success",
                head + f"Contrattacco Riuscito: {pool} − {atk.pool} = {diff}, danno ridotto a {atk.attacker}.",
                T.R_COUNTER, roll=idx, expected=atk.pool, found=pool)
        return DA.hit(state, ctx, atk.attacker, counter, diff, f"{pool} − {atk.pool} = {diff}", T.R_COUNTER,
                      blocked=state.fighters[atk.attacker].block is not None, roll=idx, kind="contrattacco")
    if pool < atk.pool:
        diff = atk.pool - pool
        ctx.add("outcome.counter_insufficient",
                head + f"Contrattacco Insufficiente: {atk.pool} − {pool} = {diff}, {who} subisce un danno ridotto.",
                T.R_COUNTER, roll=idx, expected=atk.pool, found=pool)
        return DA.hit(state, ctx, who, atk, diff, f"{atk.pool} − {pool} = {diff}", T.R_COUNTER,
                      blocked=False, roll=idx, kind="contrattacco")
    ctx.add("ruling.needed",
            head + f"Pool pari ({pool}): il testo non dice l'esito di un contrattacco alla pari. Decide il master.",
            T.R_COUNTER, roll=idx, expected=f"≠ {atk.pool}", found=pool)
    return state
