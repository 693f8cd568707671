"""The `cosmo` ruleset: Pool vs Resistenza/Volontà, Incassare, Contrattacco, Tabella 5, statuses and Cosmo."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ...history import Character, Post, Registry, Roll, Technique, Thread, describe_problems
from ...recognise import Conventions
from ...verdicts import Verdict
from .._shared import (Collector, Conditions, canon, ensure_fighter, face_of, find, next_in_order, pool_max,
                       poster_name, set_fighter)
from . import tables as T
from .lines import ACTION_VERBS, Action, master_lines, master_round, master_turns, post_actions
from .tables import Band, fold

_RULING_LINE = re.compile(
    r"(?:\[ruling\]\s*|^\s*ruling\s*:\s*)([a-z_]+\.[a-z_]+)\s+post\s+#?([\w.-]+)\s*:\s*(.+?)\s*(?:\[/ruling\]|$)",
    re.IGNORECASE | re.MULTILINE)
_ARMOUR_ON = "con armatura"
_ARMOUR_OFF = "senza armatura"
_PLURAL = {T.FISICO: "fisici", T.MENTALE: "mentali"}
_STATS = ("Forza", "Mente", "Resistenza", "Volontà", "Reattività")


# --------------------------------------------------------------------------- state

@dataclass(frozen=True)
class Attack:
    """An attack waiting for its target's answer (the target's next post)."""

    post: str
    attacker: str
    target: str
    technique: str
    nature: str | None  # fisico / mentale
    level: int | None  # 0 = Base, 1 / 2 = Special
    stat: str | None
    pool: int | None
    effect: str | None = None  # "Bloccante" / "Ghermente"
    turns: int | None = None  # block turns written in the post
    reflected: bool = False
    release: bool = False  # {Libera}: the blocker frees its victim with this (at least Moderato) damage


@dataclass(frozen=True)
class Block:
    by: str
    technique: str
    post: str
    turns: int | None  # remaining block turns (None = unknown: Tabella 5 does not say)
    diff: int | None  # pool difference when the block landed (half of it frees)
    ghermito: bool = False
    reflected: bool = False
    burned: int = 0


@dataclass(frozen=True)
class Due:
    """A damage the fighter must roll on Tabella 5 (band None = the table does not say which)."""

    band: str | None
    post: str
    source: str
    reason: str
    assumption: str | None = None
    reported: bool = False


@dataclass(frozen=True)
class Fighter(Conditions):
    name: str
    pv: int | None = None
    pv_max: int | None = None
    cosmo: int | None = None
    cosmo_max: int | None = None
    stats: dict[str, int] = field(default_factory=dict)  # from the fighter's own post schemas
    conditions: tuple[str, ...] = ()  # Sconfitto, Svenuto, Affaticato
    block: Block | None = None
    due: tuple[Due, ...] = ()
    posts: int = 0
    seen: bool = False
    touched: bool = False

    @property
    def out(self) -> bool:
        return self.has("Svenuto") or self.has("Sconfitto")


@dataclass(frozen=True)
class State:
    settings: dict[str, Any]
    bands: tuple[Band, ...]
    registry: Registry
    fighters: dict[str, Fighter]
    incoming: tuple[Attack, ...] = ()
    round: int = 1
    acted: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    last: str | None = None
    ended: bool = False
    permits: tuple[str, ...] = ()  # fighters a master allowed to attack in their entrance action
    rulings: tuple[tuple[str, str, str], ...] = ()


# --------------------------------------------------------------------------- helpers

@dataclass
class _Ctx(Collector):
    faint: list[tuple[str, int]] = field(default_factory=list)  # (fighter, cosmo) whole maximum spent in one action
    freed: set[str] = field(default_factory=set)  # freed from a block in this post: full defence, no level malus
    lowered: dict[str, int] = field(default_factory=dict)  # malus categories lowered in this post


def _find(mapping: dict[str, Any], name: str | None) -> Any:
    return find(mapping, name, fold)  # cosmo's fold also drops apostrophes


def _tech(state: State, name: str | None, owner: str | None) -> Technique | None:
    """The technique `name`, `owner`'s first when two characters have one so called (cosmo's fold)."""
    return state.registry.technique(name, owner, fold)


def _canon(state: State, name: str | None) -> str | None:
    return canon(state, name, fold)


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"\s*-?\d+\s*", v):
        return int(v)
    return None


def _level_of(t: Technique | None) -> int | None:
    if t is None:
        return None
    v = _int(t.extra.get("livello"))
    if v is None and t.category and t.category.strip().isdigit():
        v = int(t.category.strip())
    return v


def _half(n: int) -> int | float:
    """Half of a pool difference as the text states it (no rounding: 'la metà della differenza')."""
    return n // 2 if n % 2 == 0 else n / 2


def _bracketed(actions: list[Action]) -> set[tuple[str, int]]:
    """(folded name, value) of every `[Stat N]` / `[Cosmo N]` written inside this post's action lines."""
    out = {(fold(k), v) for a in actions for k, v in a.stats.items()}
    out |= {("cosmo", a.numbers["cosmo"]) for a in actions if "cosmo" in a.numbers}
    return out


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


class Cosmo:
    id = "cosmo"
    title = "Cosmo — Pool contro Difesa, Incassare, Contrattacco, Tabella 5, status e cosmo"
    settings = T.SETTINGS
    # Punti Salute and Cosmo in the schema, the counter's d100 (Tabella 5's dice are the forum's), its action verbs
    conventions = Conventions.of(("PV", "Cosmo"), (T.COUNTER_DIE[1],),
                                 ACTION_VERBS + tuple(T.SKILL_NAMES.values()), _STATS)

    # ---- protocol

    def initial_state(self, thread: Thread, registry: Registry, settings: dict[str, Any]) -> State:
        bands = T.check_settings(settings)
        fighters = {n: self._from_registry(n, c) for n, c in registry.characters.items()}
        return State(settings=dict(settings), bands=bands, registry=registry, fighters=fighters)

    def rulings(self, state: State) -> list[tuple[str, str, str]]:
        return list(state.rulings)

    def characters(self, state: State) -> dict[str, dict[str, Any]]:
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
                "stats": {s: v for s in _STATS if (v := self._stat(state, n, s)) is not None},
            }
        return out

    def next_hint(self, state: State, character: str | None = None) -> dict[str, Any]:
        nxt = character
        if nxt is None and state.order:
            nxt = next_in_order([n for n in state.order if not state.fighters[n].out], state.last)
        hint: dict[str, Any] = {"ruleset": self.id, "round": state.round, "character": nxt,
                                "scontro_finito": state.ended}
        if nxt is None:
            return hint
        f = state.fighters.get(nxt)
        hint["state"] = self.characters(state).get(nxt)
        attacks = []
        for a in state.incoming:
            if a.target != nxt:
                continue
            dstat = T.DEFENCE_STAT.get(a.nature or "", "Resistenza")
            val = self._stat(state, nxt, dstat)
            v = "N" if val is None else str(val)
            dn = "N" if val is None else str(val // 2)
            attacks.append({
                "da": a.attacker, "tecnica": a.technique, "natura": a.nature, "livello": a.level, "pool": a.pool,
                "difesa": f"Difesa [{dstat} {v}] ({nxt} vs {a.attacker})",
                "incasso": f"Incasso [{dstat} {v} => Difesa Naturale: {dn}] ({nxt} vs {a.attacker})",
                "contrattacco": self._counter_hint(state, nxt, a),
            })
        hint["attacchi_in_arrivo"] = attacks
        hint["danni_da_tirare"] = [
            {"fascia": d.band, "motivo": d.reason,
             "tag": f"[dice={self._die_hint(state, nxt, d.band)}]Danno {d.band or '…'} ({nxt})[/dice]"}
            for d in (f.due if f else ())]
        if f and f.has("Affaticato"):
            hint["note"] = "Affaticato: niente Skill né Special, nessuna difesa (si incassa)."
        elif f and f.block is not None:
            hint["note"] = ("Bloccato: difesa con malus, solo Telepatia e Chiaroveggenza; ci si libera bruciando "
                            "cosmo con `Liberazione [Cosmo N]`.")
        return hint

    def _counter_hint(self, state: State, name: str, a: Attack) -> str:
        """The dice tag of a counter-attack of the same level as `a` (the only one that can succeed)."""
        r = self._stat(state, name, "Reattività")
        reatt = f" [Reattività {r}]" if r is not None else " [Reattività N]"
        if a.level == 0:
            nature = a.nature or T.FISICO
            stat = "Forza" if nature == T.FISICO else "Mente"
            v = self._stat(state, name, stat)
            body = f"[{T.SKILL_NAMES[nature]}] [{stat} {v if v is not None else 'N'}]"
        else:
            body = f"[Special] {{Special {a.level if a.level is not None else 'N'}}} [Pool N] [Cosmo N]"
        return f"[dice=1d100]Contrattacco {body}{reatt} ({name} vs {a.attacker})[/dice]"

    def _die_hint(self, state: State, name: str, band: str | None) -> str:
        b = T.band_named(band, state.bands)
        armour = self._armour(state, name, ())
        if b is not None:
            die = b.die_armour if armour else b.die_no_armour if armour is False else (b.die_no_armour or b.die_armour)
            if die:
                return die
        return "dado della Tabella 5"

    # ---- registry / stats

    def _from_registry(self, name: str, c: Character) -> Fighter:
        pv, cosmo = pool_max(c, "PV"), pool_max(c, "Cosmo")
        return Fighter(name=name, pv=pv, pv_max=pv, cosmo=cosmo, cosmo_max=cosmo)

    def _stat(self, state: State, name: str, stat: str) -> int | None:
        c = _find(state.registry.characters, name)
        if c is not None:
            st = _find(c.stats, stat)
            if st is not None:
                return st.total
        f = state.fighters.get(name)
        if f is not None:
            v = _find(f.stats, stat)
            if v is not None:
                return v
        return None

    def _armour(self, state: State, name: str, names: tuple[str, ...]) -> bool | None:
        keys = {fold(n) for n in names}
        if _ARMOUR_ON in keys:
            return True
        if _ARMOUR_OFF in keys:
            return False
        c = _find(state.registry.characters, name)
        v = c.extra.get("armatura") if c else None
        return v if isinstance(v, bool) else None

    def _value(self, state: State, ctx: _Ctx, who: str, stat: str, stated: int | None, rule: str,
               roll: int | None = None) -> int | None:
        """The stat value to use: registry (or the fighter's schema) first; a different written value is an error."""
        known = self._stat(state, who, stat)
        if known is not None and stated is not None and stated != known:
            ctx.add("dice.stat_mismatch", f"{stat} di {who} è {known}, non {stated}.", rule, roll=roll,
                    expected=known, found=stated, stat=stat, fighter=who)
        return known if known is not None else stated

    # ---- the fold

    def step(self, state: State, post: Post) -> tuple[State, list[Verdict]]:
        ctx = _Ctx(post)
        if post.role != "player":
            if post.role == "master":
                state = self._master(state, post, ctx)
            return state, ctx.verdicts
        actor = _canon(state, poster_name(post))  # a player's post: its author when nothing better names it
        if not actor:
            return state, ctx.verdicts
        state = ensure_fighter(state, actor, Fighter)
        f0 = state.fighters[actor]
        fresh = not f0.seen and not f0.touched
        actions = post_actions(post)
        written = _bracketed(actions)
        if post.schema is not None and post.schema.stats:
            # a stat the schema reader took from an action line (`Difesa [Volontà 220]`) is not the sheet's
            stats = {**f0.stats, **{k: v.total for k, v in post.schema.stats.items()
                                    if (fold(k), v.total) not in written}}
            state = self._set(state, replace(f0, stats=stats))
        state = self._round(state, actor, ctx)
        attacks = [a for a in actions if a.kind == "attacco"]
        was_defending = any(a.target == actor for a in state.incoming)

        acting = [a for a in actions if a.kind in ("attacco", "difesa", "contrattacco", "incasso")]
        if state.fighters[actor].out and acting:
            f = state.fighters[actor]
            ctx.add("cosmo.out_of_fight",
                    f"{actor} è {'Sconfitto' if f.has('Sconfitto') else 'Svenuto'}: non può più agire fino alla "
                    "fine della giocata.", T.R_SCONFITTO if f.has("Sconfitto") else T.R_SVENUTO,
                    roll=acting[0].roll, expected="nessuna azione", found=acting[0].raw)
        else:
            state = self._block_actions(state, actor, actions, ctx)
            state = self._defend(state, actor, actions, ctx)
            state = self._damage_rolls(state, actor, actions, ctx)
            for a in attacks:
                state = self._attack(state, actor, a, ctx, entrance=f0.posts == 0)
            state = self._declarations(state, actor, actions, attacks, was_defending, ctx)
        for name, amount in ctx.faint:
            f = state.fighters[name]
            if not f.has("Svenuto"):
                state = self._set(state, f.with_cond("Svenuto"))
                ctx.add("cosmo.fainted",
                        f"{name} ha usato tutto il suo massimale di cosmo ({f.cosmo_max}) in una sola azione: sviene.",
                        T.R_SVENUTO, expected=f.cosmo_max, found=amount, fighter=name)
        state = self._missing_rolls(state, actor, ctx)
        state = self._schema(state, post, actor, ctx, fresh, written)
        f = state.fighters[actor]
        state = self._set(state, replace(f, posts=f.posts + 1, seen=True))
        order = state.order if actor in state.order else state.order + (actor,)
        return replace(state, last=actor, order=order), ctx.verdicts

    def _set(self, state: State, f: Fighter) -> State:
        return set_fighter(state, f)

    # ---- master posts and rounds

    def _master(self, state: State, post: Post, ctx: _Ctx) -> State:
        body = post.body or ""
        rulings = [(m.group(1).lower(), m.group(2), m.group(3).strip()) for m in _RULING_LINE.finditer(body)]
        if rulings:
            state = replace(state, rulings=state.rulings + tuple(rulings))
        for code, target_post, decision in rulings:
            state = self._apply_ruling(state, ctx, code, target_post, decision)
        for word, name in master_lines(body):
            who = _canon(state, name)
            if not who:
                continue
            state = ensure_fighter(state, who, Fighter)
            f = state.fighters[who]
            if word.startswith("sconfitt"):
                f, what = f.with_cond("Sconfitto"), "Sconfitto"
                state = replace(state, incoming=tuple(a for a in state.incoming if a.target != who))
            elif word.startswith("svenut"):
                f, what = f.with_cond("Svenuto"), "Svenuto"
            elif word.startswith("affaticat"):
                f, what = f.with_cond("Affaticato"), "Affaticato"
            elif word.startswith("non piu"):
                f, what = f.with_cond(drop=("Affaticato",)), "non più Affaticato"
            elif word.startswith("liberat"):
                f, what = replace(f, block=None), "liberato dal blocco"
            else:
                state = replace(state, permits=state.permits + (who,))
                ctx.add("cosmo.entrance_allowed",
                        f"Il master permette a {who} un'azione di ingresso legata ad un attacco.", T.R_ENTRANCE,
                        fighter=who)
                continue
            state = self._set(state, f)
            rule = {"Sconfitto": T.R_SCONFITTO, "Svenuto": T.R_SVENUTO}.get(what, T.R_AFFATICATO
                                                                             if "ffaticat" in what else T.R_BLOCCATO)
            ctx.add("cosmo.master_status", f"Il master dichiara {who}: {what}.", rule, fighter=who,
                    status=what)
        for name, turns in master_turns(body):
            who = _canon(state, name)
            f = state.fighters.get(who or "")
            if f is not None and f.block is not None:
                state = self._set(state, replace(f, block=replace(f.block, turns=turns)))
                ctx.add("cosmo.master_status", f"Il master fissa i turni di blocco di {who}: {turns}.",
                        T.R_TAB5, fighter=who, turns=turns)
        n = master_round(body)
        if state.settings["round_rule"] == "master" and n is not None and n > state.round:
            state = self._end_round(replace(state, round=n, acted=()), ctx, None)
        return state

    def _apply_ruling(self, state: State, ctx: _Ctx, code: str, target_post: str, decision: str) -> State:
        """A master's decision on a post: a Tabella 5 band for a damage the table did not give, or block turns."""
        applied = "annotata"
        band = T.band_named(decision.strip(" ."), state.bands)
        name = band.name if band else (decision.strip(" .").capitalize() if T.is_oneshot(decision.strip(" .")) or
                                       fold(decision.strip(" .")) in ("leggero", "moderato", "pesante") else None)
        turns = re.fullmatch(r"\s*(\d+)\s*turn[oi]\s*\.?\s*", decision, re.I)
        for who, f in list(state.fighters.items()):
            if name is not None and any(d.post == target_post and d.band is None for d in f.due):
                due = tuple(replace(d, band=name, assumption=None) if d.post == target_post and d.band is None else d
                            for d in f.due)
                state = self._set(state, replace(f, due=due))
                applied = f"{who} tira un danno {name}"
            elif turns and f.block is not None and f.block.post == target_post and f.block.turns is None:
                state = self._set(state, replace(f, block=replace(f.block, turns=int(turns.group(1)))))
                applied = f"{who} resta bloccato {turns.group(1)} turni"
        ctx.add("ruling.applied", f"Decisione del master su {code} (post {target_post}): {decision} — {applied}.",
                "Arbitro › Decisioni del master", ruled_code=code, target_post=target_post, decision=decision)
        return state

    def _round(self, state: State, actor: str, ctx: _Ctx) -> State:
        if state.settings["round_rule"] != "ciclo":
            return state
        if actor in state.acted:
            state = self._end_round(replace(state, round=state.round + 1, acted=()), ctx, "round_rule")
        return replace(state, acted=state.acted + (actor,))

    def _end_round(self, state: State, ctx: _Ctx, assumption: str | None) -> State:
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
            state = self._set(state, f)
        return state

    # ---- cosmo

    def _spend(self, state: State, ctx: _Ctx, who: str, amount: int | None, what: str,
               roll: int | None = None) -> tuple[State, bool]:
        """Spend cosmo from the residual; more than the residual is refused. Spending the whole maximum faints."""
        if not amount:
            return state, True
        f = state.fighters[who]
        if f.cosmo is not None and amount > f.cosmo:
            ctx.add("cosmo.cosmo_exceeded",
                    f"{who} usa {amount} cosmo per {what} ma ne ha solo {f.cosmo} residuo: azione non valida.",
                    T.R_COSMO, roll=roll, expected=f.cosmo, found=amount, fighter=who)
            return state, False
        if f.cosmo is not None:
            f = replace(f, cosmo=f.cosmo - amount, touched=f.touched or not f.seen)
            state = self._set(state, f)
        if f.cosmo_max is not None and amount >= f.cosmo_max:
            ctx.faint.append((who, amount))
        return state, True

    # ---- attacks

    def _profile(self, state: State, ctx: _Ctx, who: str, act: Action, rule: str
                 ) -> tuple[str, int | None, str | None, str | None, int | None, str | None, bool]:
        """(technique, level, stat, nature, pool, effect, ok) of an attack or counter-attack line."""
        names = [n for n in act.names if fold(n) not in (_ARMOUR_ON, _ARMOUR_OFF)]
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
            c = _find(state.registry.characters, who)
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
            pool = self._value(state, ctx, who, stat, act.stats.get(stat), rule, act.roll)
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
        t = _tech(state, tname, who)
        level = _level_of(t)
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
            self._value(state, ctx, who, stat, act.stats.get(stat), rule, act.roll)
        reg_pool = _int(t.extra.get("pool")) if t is not None else None
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

    def _attack(self, state: State, actor: str, act: Action, ctx: _Ctx, entrance: bool) -> State:
        f = state.fighters[actor]
        if act.actor and _canon(state, act.actor) != actor:
            ctx.add("cosmo.other_actor", f"L'attacco è scritto per {act.actor}, il post è di {actor}.",
                    T.R_ATTACK, roll=act.roll, expected=actor, found=act.actor)
        if state.ended:
            ctx.add("cosmo.fight_over", "Lo scontro è terminato (One shot): l'attacco non si risolve.",
                    T.R_ONESHOT, roll=act.roll, expected="nessun attacco", found=act.raw)
            return state
        if entrance and actor not in state.permits:
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
        tname, level, stat, nature, pool, effect, ok = self._profile(state, ctx, actor, act, T.R_ATTACK)
        if not ok:
            return state
        state, ok = self._spend(state, ctx, actor, act.numbers.get("cosmo"), tname or "l'attacco", act.roll)
        if not ok:
            return state
        targets = [_canon(state, t) for t in act.targets]
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
            tech = _tech(state, tname, actor)
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
                state = self._incassa(state, ctx, tgt, atk, None, forced="Svenuto")
                continue
            incoming.append(atk)
        return replace(state, incoming=tuple(incoming))

    # ---- blocks: freeing, cancelling, releasing

    def _block_actions(self, state: State, actor: str, actions: list[Action], ctx: _Ctx) -> State:
        for act in actions:
            f = state.fighters[actor]
            if act.kind == "liberazione":
                amount = act.numbers.get("cosmo")
                if f.block is None:
                    ctx.add("cosmo.not_blocked", f"{actor} non è bloccato: niente da cui liberarsi.",
                            T.R_BLOCCATO, roll=act.roll, expected=None, found=amount)
                    continue
                if not amount:
                    continue
                state, ok = self._spend(state, ctx, actor, amount, "liberarsi", act.roll)
                if not ok:
                    continue
                f = state.fighters[actor]
                b = replace(f.block, burned=f.block.burned + amount)
                if b.diff is None:
                    state = self._set(state, replace(f, block=b))
                    ctx.add("ruling.needed",
                            f"Non conosco la differenza tra i Pool del blocco di {actor}: decide il master se "
                            f"{b.burned} cosmo bastano a liberarsi.", T.R_BLOCCATO, roll=act.roll, expected=None,
                            found=b.burned)
                elif 2 * b.burned >= b.diff:
                    state = self._set(state, replace(f, block=None))
                    ctx.freed.add(actor)
                    ctx.add("cosmo.freed",
                            f"{actor} brucia {b.burned} cosmo (metà della differenza {b.diff} = {b.diff / 2:g}): si "
                            "libera, e questo turno si difende con la difesa piena.", T.R_MALUS, roll=act.roll,
                            expected=_half(b.diff), found=b.burned, fighter=actor)
                else:
                    state = self._set(state, replace(f, block=b))
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
                    who = _canon(state, name)
                    vf = state.fighters.get(who or "")
                    if vf is not None and vf.block is not None and vf.block.by == actor:
                        state = self._set(state, replace(vf, block=None))
                        ctx.add("cosmo.released", f"{actor} libera {who} dal blocco.", T.R_BLOCCATO,
                                roll=act.roll, fighter=who)
        return state

    # ---- defence

    def _defend(self, state: State, actor: str, actions: list[Action], ctx: _Ctx) -> State:
        pending = [a for a in state.incoming if a.target == actor]
        defences = [a for a in actions if a.kind in ("difesa", "incasso", "contrattacco")]
        pending = self._cancel_reflected(state, actor, pending, [a for a in actions if a.kind == "annullo"], ctx)
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
                targets = {_canon(state, t) for t in d.targets}
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
                state = self._incassa(state, ctx, actor, atk, None)
                continue
            if choice is None and state.fighters[actor].has("Affaticato"):
                ctx.add("cosmo.forced_incasso", f"{actor} è Affaticato: non può difendersi, incassa.",
                        T.R_AFFATICATO, expected="Incasso", found=None, attack_post=atk.post)
                state = self._incassa(state, ctx, actor, atk, None)
                continue
            if choice is None:
                ctx.add("cosmo.defence_not_described",
                        f"{actor} non descrive una difesa contro l'attacco di {atk.attacker}: lo subisce come se "
                        "incassasse.", T.R_DEFEND, expected="Difesa / Incasso / Contrattacco", found=None,
                        attack_post=atk.post)
                state = self._incassa(state, ctx, actor, atk, None)
                continue
            i, d = choice
            f = state.fighters[actor]
            if d.kind == "contrattacco":
                used.add(i)
                if counter_done:
                    ctx.add("cosmo.counter_limit",
                            "Il contrattacco vale contro un solo attacco: gli altri colpi si incassano.", T.R_COUNTER,
                            roll=d.roll, expected=1, found=2, attack_post=atk.post)
                    state = self._incassa(state, ctx, actor, atk, None)
                    continue
                counter_done = True
                if f.has("Affaticato"):
                    ctx.add("cosmo.fatigued_action", f"{actor} è Affaticato: non può difendersi né "
                            "contrattaccare, incassa.", T.R_AFFATICATO, roll=d.roll, expected="Incasso", found=d.raw)
                    state = self._incassa(state, ctx, actor, atk, None)
                elif f.block is not None and actor not in ctx.freed:
                    ctx.add("cosmo.blocked_action",
                            f"{actor} è bloccato: non può contrattaccare (solo Telepatia e Chiaroveggenza), incassa.",
                            T.R_BLOCCATO, roll=d.roll, expected=" / ".join(T.ALLOWED_WHILE_BLOCKED), found=d.raw)
                    state = self._incassa(state, ctx, actor, atk, None)
                else:
                    state = self._counter(state, ctx, actor, atk, d)
            elif d.kind == "incasso" or f.has("Affaticato"):
                if d.kind != "incasso":
                    ctx.add("cosmo.fatigued_action", f"{actor} è Affaticato: non può difendersi, incassa.",
                            T.R_AFFATICATO, roll=d.roll, expected="Incasso", found=d.raw)
                state = self._incassa(state, ctx, actor, atk, d if d.kind == "incasso" else None)
            else:
                state = self._difendi(state, ctx, actor, atk, d)
        # counter-attacks aimed at someone who did not attack this fighter
        for i, d in enumerate(defences):
            if d.kind == "contrattacco" and i not in used:
                ctx.add("cosmo.counter_not_targeted",
                        "Si contrattacca solo un attacco diretto verso se stessi: nessun attacco di "
                        f"{', '.join(d.targets) or 'questo avversario'} è rivolto a {actor}.", T.R_COUNTER,
                        roll=d.roll, expected=sorted(attackers), found=list(d.targets))
        return state

    def _cancel_reflected(self, state: State, actor: str, pending: list[Attack], cancels: list[Action],
                          ctx: _Ctx) -> list[Attack]:
        """`Annullo [Special]`: one's own Bloccante/Ghermente reflected back is cancelled at once, in the defence turn
        it arrives (no block, no turn malus); any other block cannot be cancelled this way."""
        for act in cancels:
            names = {fold(n) for n in act.names}
            k = next((i for i, a in enumerate(pending) if a.effect and (not names or fold(a.technique) in names)), None)
            if k is not None and pending[k].reflected:
                atk = pending[k]
                pending[k] = replace(atk, effect=None)
                ctx.add("cosmo.reflected_block_cancelled",
                        f"{actor} annulla subito la propria {atk.technique} ({atk.effect}) riflessa: nessun blocco né "
                        "malus di turno, si difende normalmente.", T.R_REFLECTED, roll=act.roll, fighter=actor)
                continue
            blocked_by = pending[k].technique if k is not None else (
                state.fighters[actor].block.technique if state.fighters[actor].block is not None else None)
            if blocked_by is not None:
                ctx.add("cosmo.cancel_not_allowed",
                        "Si annulla solo la propria Special Bloccante/Ghermente riflessa, e subito, nel turno in cui "
                        f"arriva: {blocked_by} non si può annullare così.", T.R_REFLECTED, roll=act.roll,
                        expected="Special propria riflessa, appena arrivata", found=blocked_by)
        return pending

    def _block_malus(self, state: State, ctx: _Ctx, who: str) -> tuple[int, bool]:
        """(malus to the opposed defence value, is blocked) — none once freed in this post."""
        f = state.fighters[who]
        if f.block is None or who in ctx.freed:
            return 0, who in ctx.freed
        m = T.block_malus(f.block.turns, ctx.lowered.get(who, 0))
        if m is None:
            ctx.add("ruling.needed",
                    f"Non conosco i turni di blocco residui di {who} (Tabella 5 non li dà): il master fissi il malus.",
                    T.R_MALUS, expected="turni di blocco", found=None, assumption="tabella5")
            return 0, True
        return m, True

    def _difendi(self, state: State, ctx: _Ctx, who: str, atk: Attack, d: Action) -> State:
        f = state.fighters[who]
        blocked = f.block is not None or who in ctx.freed
        names = [n for n in d.names if fold(n) not in (_ARMOUR_ON, _ARMOUR_OFF)]
        # a Special defence: `{Special N}` written, or a registry technique of level ≥ 1 ("Difesa [Schivata]" is basic)
        known = [n for n in names if (_level_of(_tech(state, n, who)) or 0) >= 1]
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
            t = _tech(state, tname, who)
            level = _level_of(t) if _level_of(t) is not None else (d.level or 1)
            stat = None
            if t is not None and t.extra.get("statistica"):
                stat = T.STAT_CANON.get(fold(str(t.extra["statistica"])))
            if stat is None:
                defs = [s for s in d.stats if fold(s) in ("resistenza", "volonta")]
                stat = defs[0] if defs else None
            nature = T.STAT_NATURE.get(fold(stat)) if stat else None
            state, ok = self._spend(state, ctx, who, d.numbers.get("cosmo"), tname, d.roll)
            if not ok:
                return self._incassa(state, ctx, who, atk, None)
            if nature and atk.nature and nature != atk.nature and \
                    state.settings["special_defence_other_nature"] == "incassare":
                ctx.add("cosmo.special_defence_other_nature",
                        f"{tname} protegge solo da attacchi {_PLURAL[nature]}: "
                        f"contro un attacco {atk.nature} {who} incassa.", T.R_DEFEND, roll=d.roll,
                        expected=atk.nature, found=nature, assumption="special_defence_other_nature")
                return self._incassa(state, ctx, who, atk, None)
            reg_pool = _int(t.extra.get("pool")) if t is not None else None
            stated = d.numbers.get("pool")
            if reg_pool is not None and stated is not None and reg_pool != stated:
                ctx.add("cosmo.pool_mismatch", f"Il Pool di {tname} è {reg_pool}, non {stated}.", T.R_DEFEND,
                        roll=d.roll, expected=reg_pool, found=stated)
            value = reg_pool if reg_pool is not None else stated
            if value is None and stat is not None:
                value = self._value(state, ctx, who, stat, d.stats.get(stat), T.R_DEFEND, d.roll)
            what = f"{tname} {value}"
        else:
            # a basic defence covers both Resistenza and Volontà: the one matching the attack counts
            stat = T.DEFENCE_STAT.get(atk.nature or "", "Resistenza")
            value = self._value(state, ctx, who, stat, d.stats.get(stat), T.R_DEFEND, d.roll)
            what = f"{stat} {value}"
            state, ok = self._spend(state, ctx, who, d.numbers.get("cosmo"), "la difesa", d.roll)
        malus, is_blocked = self._block_malus(state, ctx, who)
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
        return self._hit(state, ctx, who, atk, diff, parts, T.R_DEFEND, blocked=is_blocked, roll=d.roll,
                         assumption=assumption, kind="difesa")

    def _incassa(self, state: State, ctx: _Ctx, who: str, atk: Attack, d: Action | None,
                 forced: str | None = None, spend: bool = True) -> State:
        """Incassare: the attack's pool against Difesa Naturale = half the defence stat."""
        stat = T.DEFENCE_STAT.get(atk.nature or "", "Resistenza")
        stated = d.stats.get(stat) if d is not None else None
        value = self._value(state, ctx, who, stat, stated, T.R_INCASSARE, d.roll if d else None)
        if d is not None and spend:
            state, _ = self._spend(state, ctx, who, d.numbers.get("cosmo"), "l'incasso", d.roll)
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
        malus, blocked = self._block_malus(state, ctx, who)
        diff = atk.pool - (dn - malus)
        parts = f"{atk.pool} − Difesa Naturale ({stat} {value}/2 = {dn})" + \
            (f" − malus blocco {malus}" if malus else "") + f" = {diff}"
        if forced:
            parts += f" ({who} è {forced}: non può difendersi)"
        return self._hit(state, ctx, who, atk, diff, parts, T.R_INCASSARE, blocked=blocked,
                         roll=d.roll if d else None, kind="incasso", assumption=assumption)

    # ---- counter-attack

    def _counter(self, state: State, ctx: _Ctx, who: str, atk: Attack, d: Action) -> State:
        tname, level, stat, nature, pool, effect, ok = self._profile(state, ctx, who, d, T.R_COUNTER)
        if not ok:
            return self._incassa(state, ctx, who, atk, d, spend=False)
        state, ok = self._spend(state, ctx, who, d.numbers.get("cosmo"), tname or "il contrattacco", d.roll)
        if not ok:
            return self._incassa(state, ctx, who, atk, d, spend=False)
        if level is not None and atk.level is not None and level != atk.level:
            lv = {0: "Base", 1: "Special Livello 1", 2: "Special Livello 2"}
            ctx.add("cosmo.counter_level_mismatch",
                    f"Il contrattacco ({lv.get(level, level)}) non è dello stesso livello dell'attacco "
                    f"({lv.get(atk.level, atk.level)}): fallito in partenza, il colpo si incassa.", T.R_COUNTER,
                    roll=d.roll, expected=atk.level, found=level)
            return self._incassa(state, ctx, who, atk, d, spend=False)
        # the d100
        idx = d.roll
        if idx is None or ctx.post.rolls[idx].sides != 100:
            cands = [i for i, r in enumerate(ctx.post.rolls) if r.sides == 100]
            idx = cands[0] if cands else idx
        if idx is None:
            ctx.add("cosmo.counter_roll_missing",
                    "Il contrattacco richiede un d100 su Reattività: manca, quindi fallisce e il colpo si incassa.",
                    T.R_COUNTER, expected="1d100", found=None)
            return self._incassa(state, ctx, who, atk, d, spend=False)
        r = ctx.post.rolls[idx]
        if (r.count, r.sides) != T.COUNTER_DIE:
            # a roll on another die is no d100: as a missing one, the counter fails and the hit is taken
            ctx.add("dice.wrong_die", f"Il contrattacco si tira con 1d100, non {r.count}d{r.sides}: senza il d100 "
                    "fallisce e il colpo si incassa su Difesa Naturale.",
                    T.R_COUNTER, roll=idx, expected="1d100", found=f"{r.count}d{r.sides}")
            return self._incassa(state, ctx, who, atk, d, spend=False)
        if not r.authentic:
            ctx.add("dice.not_authentic", "Il tiro non è autentico (scritto a mano o incoerente).",
                    T.R_COUNTER, roll=idx, expected="tiro del forum", found=describe_problems(r.problems) or r.source)
        reatt = self._value(state, ctx, who, "Reattività", d.stats.get("Reattività"), T.R_COUNTER, idx)
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
            return self._incassa(state, ctx, who, atk, d, spend=False)
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
                state = self._incassa(state, ctx, atk.attacker, counter, None)
                return self._incassa(state, ctx, who, atk, d, spend=False)
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
            return self._hit(state, ctx, atk.attacker, counter, diff, f"{pool} − {atk.pool} = {diff}", T.R_COUNTER,
                             blocked=state.fighters[atk.attacker].block is not None, roll=idx, kind="contrattacco")
        if pool < atk.pool:
            diff = atk.pool - pool
            ctx.add("outcome.counter_insufficient",
                    head + f"Contrattacco Insufficiente: {atk.pool} − {pool} = {diff}, {who} subisce un danno ridotto.",
                    T.R_COUNTER, roll=idx, expected=atk.pool, found=pool)
            return self._hit(state, ctx, who, atk, diff, f"{atk.pool} − {pool} = {diff}", T.R_COUNTER,
                             blocked=False, roll=idx, kind="contrattacco")
        ctx.add("ruling.needed",
                head + f"Pool pari ({pool}): il testo non dice l'esito di un contrattacco alla pari. Decide il master.",
                T.R_COUNTER, roll=idx, expected=f"≠ {atk.pool}", found=pool)
        return state

    # ---- damage

    def _hit(self, state: State, ctx: _Ctx, victim: str, atk: Attack, diff: int, parts: str, rule: str, *,
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
            state = self._set(state, vf)
            return self._apply_effect(state, ctx, victim, atk, diff, None, roll, tab_assumption)
        if T.is_oneshot(band.name):
            vf = vf.with_cond("Svenuto")
            state = self._set(state, vf)
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
        state = self._set(state, vf)
        return self._apply_effect(state, ctx, victim, atk, diff, band, roll, tab_assumption)

    def _apply_effect(self, state: State, ctx: _Ctx, victim: str, atk: Attack, diff: int, band: Band | None,
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
        return self._set(state, vf)

    def _damage_rolls(self, state: State, actor: str, actions: list[Action], ctx: _Ctx) -> State:
        for act in actions:
            if act.kind != "danno" or act.roll is None:
                continue
            r = ctx.post.rolls[act.roll]
            who = _canon(state, act.actor) or actor
            state = ensure_fighter(state, who, Fighter)
            f = state.fighters[who]
            words = [act.word] + [n for n in act.names if fold(n) not in (_ARMOUR_ON, _ARMOUR_OFF)]
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
            armour = self._armour(state, who, act.names)
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
            state = self._set(state, f)
            if f.pv == 0 and pv0:
                ctx.add("ruling.needed",
                        f"{who} arriva a 0 Punti Salute: il testo non dice cosa accade (oltre al One shot). "
                        "Decide il master.", T.R_TAB5, roll=act.roll, expected=None, found=0, victim=who)
            ctx.add("outcome.damage_rolled",
                    f"{who} tira il danno {band.name if band else named}: −{total} PV"
                    + (f" ({pv0} → {f.pv})." if pv0 is not None else "."), T.R_TAB5, roll=act.roll,
                    expected=band.name if band else named, found=total, assumption=due.assumption, victim=who)
        return state

    def _missing_rolls(self, state: State, actor: str, ctx: _Ctx) -> State:
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
        return self._set(state, replace(f, due=tuple(dues)))

    # ---- statuses declared by the player

    def _declarations(self, state: State, actor: str, actions: list[Action], attacks: list[Action],
                      was_defending: bool, ctx: _Ctx) -> State:
        for act in actions:
            f = state.fighters[actor]
            if act.kind == "sconfitto" and not f.has("Sconfitto"):
                problems = []
                if f.pv is None or f.pv >= T.SCONFITTO_MAX_PV:
                    problems.append(f"Punti Salute {f.pv if f.pv is not None else '?'} (servono meno di 200)")
                if attacks:
                    problems.append("attacca nello stesso post (bisogna rinunciare al proprio attacco)")
                if was_defending:
                    problems.append("è nel turno di difesa")
                if problems:
                    ctx.add("cosmo.surrender_refused",
                            f"{actor} non può dichiararsi Sconfitto: " + "; ".join(problems) + ".", T.R_SCONFITTO,
                            expected=f"PV < {T.SCONFITTO_MAX_PV}, nessun attacco, fuori dal turno di difesa",
                            found=f.pv)
                else:
                    state = self._set(state, f.with_cond("Sconfitto"))
                    state = replace(state, incoming=tuple(a for a in state.incoming if a.target != actor))
                    ctx.add("cosmo.defeated",
                            f"{actor} si dichiara Sconfitto: immune a ogni danno fino alla fine della giocata.",
                            T.R_SCONFITTO, expected=f"< {T.SCONFITTO_MAX_PV}", found=f.pv, fighter=actor)
            elif act.kind == "svenuto" and not f.has("Svenuto"):
                state = self._set(state, f.with_cond("Svenuto"))
                ctx.add("cosmo.fainted", f"{actor} sviene per propria scelta.", T.R_SVENUTO, fighter=actor)
        return state

    # ---- schema

    def _schema(self, state: State, post: Post, actor: str, ctx: _Ctx, fresh: bool,
                written: frozenset[tuple[str, int]] | set[tuple[str, int]] = frozenset()) -> State:
        s = post.schema
        if s is None:
            return state
        f = state.fighters[actor]
        upd: dict[str, Any] = {}
        for key, attr, name in (("PV", "pv", "Punti Salute"), ("Cosmo", "cosmo", "Cosmo")):
            res = s.resources.get(key)
            if res is None:
                continue
            if res.max is None and (fold(key), res.current) in written:
                continue  # `Liberazione [Cosmo 100]` read as a pool by the schema reader: not the schema's value
            mx = getattr(f, attr + "_max")
            if mx is None and res.max is not None:
                upd[attr + "_max"] = res.max
            elif mx is not None and res.max is not None and res.max != mx:
                ctx.add("registro.max_mismatch", f"{name} massimi di {actor}: {mx}, lo schema scrive "
                        f"{res.max}.", T.R_SCHEMA, expected=mx, found=res.max, resource=key)
            mine = getattr(f, attr)
            if mine is None or (fresh and not f.touched):
                upd[attr] = res.current  # the first schema opens the fight's accounts
            elif res.current != mine:
                ctx.add("registro.pool_mismatch",
                        f"{actor} dovrebbe avere {name} {mine}, lo schema scrive {res.current}.", T.R_SCHEMA,
                        expected=mine, found=res.current, resource=key)
        return self._set(state, replace(f, **upd)) if upd else state


RULESET = Cosmo()
