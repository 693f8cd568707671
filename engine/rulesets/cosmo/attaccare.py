"""Attaccare: basic attacks (Forza / Mente) and Specials, their profile, targets and the entrance action."""
from __future__ import annotations

from dataclasses import replace

from .._shared import ensure_fighter
from . import registro as R
from . import tables as T
from .incassare import incassa
from .lines import Action
from .state import Attack, Fighter, State
from .tables import fold
from .turno import _Ctx
from .uso_del_cosmo import spend


def profile(state: State, ctx: _Ctx, who: str, act: Action, rule: str
            ) -> tuple[str, int | None, str | None, str | None, int | None, str | None, bool]:
    """(technique, level, stat, nature, pool, effect, ok) of an attack or counter-attack line."""
    names = R.plain_names(act.names)
    tname = names[0] if names else ""
    basic = T.BASIC_SKILLS.get(fold(tname))
    stated_attack = [(s, v) for s, v in act.stats.items() if fold(s) in T.ATTACK_STATS]
    if basic is None and not tname and stated_attack:
        stat0 = stated_attack[0][0]
        basic = (stat0, T.ATTACK_STATS[fold(stat0)])  # "[Forza 230]" alone: a basic attack of that stat
        tname = T.SKILL_NAMES[basic[1]]
    if basic is not None:
        stat, nature = basic
        for s, v in stated_attack:
            if s != stat:
                ctx.add("cosmo.wrong_stat",
                        f"{tname} si basa su {stat}, non su {s}.", T.R_ATTACK, roll=act.roll,
                        expected=stat, found=s)
        c = R.find(state.registry.characters, who)
        skills = {fold(t) for t in (c.techniques if c else ())} | {fold(s) for s in (c.extra.get("skill", ()) if c else ())}
        wanted = fold(T.SKILL_NAMES[nature])
        if skills and wanted not in skills and fold(tname) not in skills:
            ctx.add("cosmo.skill_missing",
                    f"{who} non ha la Skill {T.SKILL_NAMES[nature]}: niente attacco base {nature}.", T.R_ATTACK,
                    roll=act.roll, expected=T.SKILL_NAMES[nature], found=None)
            return tname, 0, stat, nature, None, None, False
        if act.level not in (None, 0):
            ctx.add("cosmo.level_mismatch", f"Un attacco con {tname} è un attacco Base, non una Special "
                    f"di livello {act.level}.", rule, roll=act.roll, expected=0, found=act.level)
        pool = R.value(state, ctx, who, stat, act.stats.get(stat), rule, act.roll)
        if act.numbers.get("pool") is not None and pool is not None and act.numbers["pool"] != pool:
            ctx.add("cosmo.basic_no_bonus",
                    f"Negli attacchi base il cosmo non dà bonus al Pool: il Pool è {stat} {pool}, non "
                    f"{act.numbers['pool']}.", T.R_ATTACK, roll=act.roll, expected=pool, found=act.numbers["pool"])
        if act.numbers.get("cosmo"):
            ctx.add("cosmo.basic_cosmo_no_bonus",
                    f"Cosmo {act.numbers['cosmo']} usato in un attacco base: si scala dal residuo ma non dà "
                    "bonus né al Pool né narrativo.", T.R_ATTACK, roll=act.roll, expected=0,
                    found=act.numbers["cosmo"])
        effect = next((e.capitalize() for e in ("bloccante", "ghermente") if e in act.tags), None)
        return tname, 0, stat, nature, pool, effect, True
    # a Special: level, stat, pool and effect from the registry, else as written
    t = R.tech(state, tname, who)
    level = R.level_of(t)
    if level is not None and act.level is not None and act.level != level:
        ctx.add("cosmo.level_mismatch", f"{tname} è una Special di livello {level}, non {act.level}.",
                rule, roll=act.roll, expected=level, found=act.level)
    level = level if level is not None else act.level
    stat = None
    if t is not None and t.extra.get("statistica"):
        stat = T.STAT_CANON.get(fold(str(t.extra["statistica"])))
    if stat is None and stated_attack:
        stat = stated_attack[0][0]
    if stat is None:
        defs = [s for s in act.stats if fold(s) in ("resistenza", "volonta")]
        stat = defs[0] if defs else None
    nature = T.STAT_NATURE.get(fold(stat)) if stat else None
    if stat and act.stats.get(stat) is not None:
        R.value(state, ctx, who, stat, act.stats.get(stat), rule, act.roll)
    reg_pool = R.int_of(t.extra.get("pool")) if t is not None else None
    stated_pool = act.numbers.get("pool")
    if reg_pool is not None and stated_pool is not None and reg_pool != stated_pool:
        ctx.add("cosmo.pool_mismatch", f"Il Pool di {tname} è {reg_pool}, non {stated_pool}.", rule,
                roll=act.roll, expected=reg_pool, found=stated_pool)
    pool = reg_pool if reg_pool is not None else stated_pool
    if level is None:
        ctx.add("ruling.needed",
                f"Non so il livello di {tname or 'questa tecnica'} (Base, Special 1 o 2): scrivilo `{{Special N}}` "
                "o nel registro.", rule, roll=act.roll, expected="livello", found=None)
    if pool is None:
        ctx.add("ruling.needed",
                f"Manca il Pool di {tname or 'questa Special'}: scrivilo `[Pool N]` o nel registro.", rule,
                roll=act.roll, expected="Pool", found=None)
    effect = None
    if t is not None and t.extra.get("effetto"):
        effect = str(t.extra["effetto"]).strip().capitalize()
    effect = next((e.capitalize() for e in ("bloccante", "ghermente") if e in act.tags), effect)
    if effect and fold(effect) not in ("bloccante", "ghermente"):
        effect = None
    return tname, level, stat, nature, pool, effect, True


def attacks(state: State, ctx: _Ctx) -> State:
    """The post's attack lines in their order, each resolved or refused."""
    for act in ctx.attacks:
        state = attack(state, ctx, act)
    return state


def attack(state: State, ctx: _Ctx, act: Action) -> State:
    """One attack line: refused (fight over, entrance, Affaticato, Bloccato, cosmo) or waiting for its targets."""
    actor = ctx.actor
    f = state.fighters[actor]
    if act.actor and R.canon_name(state, act.actor) != actor:
        ctx.add("cosmo.other_actor", f"L'attacco è scritto per {act.actor}, il post è di {actor}.",
                T.R_ATTACK, roll=act.roll, expected=actor, found=act.actor)
    if state.ended:
        ctx.add("cosmo.fight_over", "Lo scontro è terminato (One shot): l'attacco non si risolve.",
                T.R_ONESHOT, roll=act.roll, expected="nessun attacco", found=act.raw)
        return state
    if ctx.entrance and actor not in state.permits:
        if "artefatto" in act.tags:
            ctx.add("cosmo.entrance_artefact",
                    f"{actor} attacca nell'azione di ingresso grazie a un artefatto dichiarato.", T.R_ENTRANCE,
                    roll=act.roll)
        else:
            ctx.add("cosmo.entrance_attack",
                    f"È vietata un'azione di ingresso legata ad un attacco, salvo permesso di un master: "
                    f"l'attacco di {actor} non si risolve.", T.R_ENTRANCE, roll=act.roll,
                    expected="ingresso senza attacco", found=act.raw)
            return state
    if f.has("Affaticato"):
        ctx.add("cosmo.fatigued_action",
                f"{actor} è Affaticato: non può usare Skill né Special, l'attacco non si risolve.", T.R_AFFATICATO,
                roll=act.roll, expected="nessuna Skill o Special", found=act.raw)
        return state
    if f.block is not None:
        ctx.add("cosmo.blocked_action",
                f"{actor} è {'Ghermito' if f.block.ghermito else 'Bloccato'}: può usare solo Telepatia e "
                "Chiaroveggenza, l'attacco non si risolve.", T.R_BLOCCATO, roll=act.roll,
                expected=" / ".join(T.ALLOWED_WHILE_BLOCKED), found=act.raw)
        return state
    tname, level, stat, nature, pool, effect, ok = profile(state, ctx, actor, act, T.R_ATTACK)
    if not ok:
        return state
    state, ok = spend(state, ctx, actor, act.numbers.get("cosmo"), tname or "l'attacco", act.roll)
    if not ok:
        return state
    targets = [R.canon_name(state, t) for t in act.targets]
    if not targets:
        others = [n for n, o in state.fighters.items() if n != actor and not o.out]
        if len(others) == 1:
            targets = others
        else:
            ctx.add("cosmo.target_missing",
                    "L'attacco non dice chi colpisce: scrivi `(Attaccante vs Bersaglio)`.", T.R_ATTACK,
                    roll=act.roll, expected="bersaglio", found=None)
            return state
    incoming = list(state.incoming)
    for tgt in targets:
        if not tgt:
            continue
        state = ensure_fighter(state, tgt, Fighter)
        tf = state.fighters[tgt]
        if tf.has("Sconfitto"):
            ctx.add("cosmo.target_defeated",
                    f"{tgt} è Sconfitto: la sua costellazione lo rende immune a qualsiasi danno.", T.R_SCONFITTO,
                    roll=act.roll, expected="nessun attacco", found=act.raw, target=tgt)
            continue
        tech = R.tech(state, tname, actor)
        reflected = "riflessa" in act.tags or "riflesso" in act.tags or bool(
            effect and tech is not None and tech.owner and fold(tech.owner) == fold(tgt))
        atk = Attack(post=ctx.post.id, attacker=actor, target=tgt, technique=tname, nature=nature, level=level,
                     stat=stat, pool=pool, effect=effect, turns=act.numbers.get("turni"), reflected=reflected,
                     release="libera" in act.tags)
        ctx.add("cosmo.attack",
                f"{actor} attacca {tgt} con {tname or 'un attacco'} "
                f"({'Base' if level == 0 else f'Special {level}' if level else 'livello ?'} su {stat or '?'}, "
                f"Pool {pool if pool is not None else '?'}).", T.R_ATTACK, roll=act.roll, expected=None, found=pool,
                target=tgt, level=level, nature=nature)
        if tf.has("Svenuto"):
            # "alla mercé degli altri": no defence, the hit lands on Difesa Naturale at once
            state = incassa(state, ctx, tgt, atk, None, forced="Svenuto")
            continue
        incoming.append(atk)
    return replace(state, incoming=tuple(incoming))
