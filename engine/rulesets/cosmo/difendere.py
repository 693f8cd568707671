"""Difendere: the answer to each incoming attack (Difendere / Schivare, Incassare, Contrattaccare) and the defence."""
from __future__ import annotations

from dataclasses import replace

from . import danni as DA
from . import registro as R
from . import tables as T
from .contrattaccare import counter
from .incassare import incassa
from .lines import Action
from .malus import block_malus, cancel_reflected
from .state import Attack, State
from .tables import fold
from .turno import _Ctx
from .uso_del_cosmo import spend

_PLURAL = {T.FISICO: "fisici", T.MENTALE: "mentali"}


def defend(state: State, ctx: _Ctx) -> State:
    """The attacks waiting for the poster, each answered by the defence written for it, else incassato."""
    actor, actions = ctx.actor, ctx.actions
    pending = [a for a in state.incoming if a.target == actor]
    defences = [a for a in actions if a.kind in ("difesa", "incasso", "contrattacco")]
    pending = cancel_reflected(state, ctx, pending, [a for a in actions if a.kind == "annullo"])
    if not pending:
        for d in defences:
            if d.kind == "contrattacco":
                ctx.add("cosmo.counter_not_targeted",
                        f"Si contrattacca solo un attacco diretto verso se stessi: nessun attacco è rivolto a "
                        f"{actor}.", T.R_COUNTER, roll=d.roll, expected=[], found=list(d.targets))
            else:
                ctx.add("cosmo.nothing_to_defend", "Nessun attacco in arrivo a cui rispondere.",
                        T.R_DEFEND, roll=d.roll, expected=None, found=d.raw)
        return state
    state = replace(state, incoming=tuple(a for a in state.incoming if a.target != actor))
    attackers = {a.attacker for a in pending}
    used: set[int] = set()
    counter_done = False
    for atk in pending:
        choice = None
        for i, d in enumerate(defences):
            targets = {R.canon_name(state, t) for t in d.targets}
            if d.kind == "contrattacco" and i in used:
                continue
            if (targets and atk.attacker in targets) or (not targets and (d.kind != "contrattacco"
                                                                          or len(attackers) == 1)):
                choice = (i, d)
                break
        if choice is None and counter_done:
            ctx.add("cosmo.counter_others_taken",
                    f"{actor} ha contrattaccato un altro colpo: l'attacco di {atk.attacker} si incassa.",
                    T.R_COUNTER, expected=None, found=None, attack_post=atk.post)
            state = incassa(state, ctx, actor, atk, None)
            continue
        if choice is None and state.fighters[actor].has("Affaticato"):
            ctx.add("cosmo.forced_incasso", f"{actor} è Affaticato: non può difendersi, incassa.",
                    T.R_AFFATICATO, expected="Incasso", found=None, attack_post=atk.post)
            state = incassa(state, ctx, actor, atk, None)
            continue
        if choice is None:
            ctx.add("cosmo.defence_not_described",
                    f"{actor} non descrive una difesa contro l'attacco di {atk.attacker}: lo subisce come se "
                    "incassasse.", T.R_DEFEND, expected="Difesa / Incasso / Contrattacco", found=None,
                    attack_post=atk.post)
            state = incassa(state, ctx, actor, atk, None)
            continue
        i, d = choice
        f = state.fighters[actor]
        if d.kind == "contrattacco":
            used.add(i)
            if counter_done:
                ctx.add("cosmo.counter_limit",
                        "Il contrattacco vale contro un solo attacco: gli altri colpi si incassano.", T.R_COUNTER,
                        roll=d.roll, expected=1, found=2, attack_post=atk.post)
                state = incassa(state, ctx, actor, atk, None)
                continue
            counter_done = True
            if f.has("Affaticato"):
                ctx.add("cosmo.fatigued_action", f"{actor} è Affaticato: non può difendersi né "
                        "contrattaccare, incassa.", T.R_AFFATICATO, roll=d.roll, expected="Incasso", found=d.raw)
                state = incassa(state, ctx, actor, atk, None)
            elif f.block is not None and actor not in ctx.freed:
                ctx.add("cosmo.blocked_action",
                        f"{actor} è bloccato: non può contrattaccare (solo Telepatia e Chiaroveggenza), incassa.",
                        T.R_BLOCCATO, roll=d.roll, expected=" / ".join(T.ALLOWED_WHILE_BLOCKED), found=d.raw)
                state = incassa(state, ctx, actor, atk, None)
            else:
                state = counter(state, ctx, actor, atk, d)
        elif d.kind == "incasso" or f.has("Affaticato"):
            if d.kind != "incasso":
                ctx.add("cosmo.fatigued_action", f"{actor} è Affaticato: non può difendersi, incassa.",
                        T.R_AFFATICATO, roll=d.roll, expected="Incasso", found=d.raw)
            state = incassa(state, ctx, actor, atk, d if d.kind == "incasso" else None)
        else:
            state = difendi(state, ctx, actor, atk, d)
    # counter-attacks aimed at someone who did not attack this fighter
    for i, d in enumerate(defences):
        if d.kind == "contrattacco" and i not in used:
            ctx.add("cosmo.counter_not_targeted",
                    "Si contrattacca solo un attacco diretto verso se stessi: nessun attacco di "
                    f"{', '.join(d.targets) or 'questo avversario'} è rivolto a {actor}.", T.R_COUNTER,
                    roll=d.roll, expected=sorted(attackers), found=list(d.targets))
    return state


def difendi(state: State, ctx: _Ctx, who: str, atk: Attack, d: Action) -> State:
    """Difendere / Schivare: the attack's pool against the defence stat, or a Special defence's pool."""
    f = state.fighters[who]
    blocked = f.block is not None or who in ctx.freed
    names = R.plain_names(d.names)
    # a Special defence: `{Special N}` written, or a registry technique of level ≥ 1 ("Difesa [Schivata]" is basic)
    known = [n for n in names if (R.level_of(R.tech(state, n, who)) or 0) >= 1]
    special = bool(d.level) or bool(known)
    names = known + [n for n in names if n not in known]
    level = 0
    value: int | None = None
    what = ""
    if special and f.block is not None and who not in ctx.freed:
        ctx.add("cosmo.blocked_action",
                f"{who} è bloccato: non può usare una Special in difesa, la difesa conta come Base.", T.R_BLOCCATO,
                roll=d.roll, expected="difesa Base", found=names[0] if names else d.raw)
        special = False
    if special:
        tname = names[0] if names else "Special"
        t = R.tech(state, tname, who)
        level = R.level_of(t) if R.level_of(t) is not None else (d.level or 1)
        stat = None
        if t is not None and t.extra.get("statistica"):
            stat = T.STAT_CANON.get(fold(str(t.extra["statistica"])))
        if stat is None:
            defs = [s for s in d.stats if fold(s) in ("resistenza", "volonta")]
            stat = defs[0] if defs else None
        nature = T.STAT_NATURE.get(fold(stat)) if stat else None
        state, ok = spend(state, ctx, who, d.numbers.get("cosmo"), tname, d.roll)
        if not ok:
            return incassa(state, ctx, who, atk, None)
        if nature and atk.nature and nature != atk.nature and \
                state.settings["special_defence_other_nature"] == "incassare":
            ctx.add("cosmo.special_defence_other_nature",
                    f"{tname} protegge solo da attacchi {_PLURAL[nature]}: "
                    f"contro un attacco {atk.nature} {who} incassa.", T.R_DEFEND, roll=d.roll,
                    expected=atk.nature, found=nature, assumption="special_defence_other_nature")
            return incassa(state, ctx, who, atk, None)
        reg_pool = R.int_of(t.extra.get("pool")) if t is not None else None
        stated = d.numbers.get("pool")
        if reg_pool is not None and stated is not None and reg_pool != stated:
            ctx.add("cosmo.pool_mismatch", f"Il Pool di {tname} è {reg_pool}, non {stated}.", T.R_DEFEND,
                    roll=d.roll, expected=reg_pool, found=stated)
        value = reg_pool if reg_pool is not None else stated
        if value is None and stat is not None:
            value = R.value(state, ctx, who, stat, d.stats.get(stat), T.R_DEFEND, d.roll)
        what = f"{tname} {value}"
    else:
        # a basic defence covers both Resistenza and Volontà: the one matching the attack counts
        stat = T.DEFENCE_STAT.get(atk.nature or "", "Resistenza")
        value = R.value(state, ctx, who, stat, d.stats.get(stat), T.R_DEFEND, d.roll)
        what = f"{stat} {value}"
        state, ok = spend(state, ctx, who, d.numbers.get("cosmo"), "la difesa", d.roll)
    malus, is_blocked = block_malus(state, ctx, who)
    if value is None or atk.pool is None:
        ctx.add("ruling.needed",
                f"Manca {'il Pool dell attacco' if atk.pool is None else 'il valore della difesa'} per risolvere "
                f"l'attacco di {atk.attacker} su {who}.", T.R_DEFEND, roll=d.roll, expected="Pool e difesa",
                found=None)
        return state
    lm = 0
    assumption = None
    if not blocked and atk.level is not None and atk.level > level:
        gap = atk.level - level
        table = state.settings.get("level_malus")
        if table is None:
            ctx.add("ruling.needed",
                    f"Colpo di livello {atk.level} contro una difesa di livello {level}: il testo prevede un "
                    "malus per la differenza di livello ma non dice quanto. Risolto senza malus.", T.R_DEFEND,
                    roll=d.roll, expected="malus di livello", found=gap, assumption="level_malus")
        else:
            lm = int(table.get(str(gap), table.get(gap, 0)))  # type: ignore[call-overload]
    opposed = value - malus - lm
    diff = atk.pool - opposed
    parts = f"{atk.pool} − {what}" + (f" − malus blocco {malus}" if malus else "") + \
        (f" − malus livello {lm}" if lm else "") + f" = {diff}"
    return DA.hit(state, ctx, who, atk, diff, parts, T.R_DEFEND, blocked=is_blocked, roll=d.roll,
                  assumption=assumption, kind="difesa")
