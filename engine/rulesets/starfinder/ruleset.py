"""The `starfinder` ruleset: attack rolls vs CAE/CAC, damage to Stamina then Ferita, Risolutezza, saves, rerolls."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ...core import BadSetting, Setting
from ...history import Character, Post, Registry, Roll, Technique, Thread, describe_problems
from ...recognise import Conventions
from ...verdicts import Verdict
from .._shared import Collector as _Ctx
from .._shared import (Conditions, Pool, as_int, as_list, canon, ensure_fighter, face_of, find, fold, next_in_order,
                       pool_max, pool_stats, poster_name, read_schema, registro_lines, set_fighter)
from . import tables as T
from .labels import Label, gm_constant, line_after, parse

KEYWORDS = ("CAE", "CAC", "CA", "CD")

SETTINGS: tuple[Setting, ...] = (
    Setting("critical_multiplier", 2,
            "Moltiplicatore di un Colpo Critico (quante volte si tirano i danni). Il testo dice solo che il "
            "critico moltiplica i danni; 2 è il valore di Starfinder.", ours=True),
    Setting("natural_20_critical", True,
            "Un 20 naturale che colpisce è un Colpo Critico. Il testo lo chiama 'possibile Colpo Critico' "
            "senza dire come si conferma: di default nessuna conferma.", ours=True),
    Setting("round_rule", "ciclo",
            "Come si riconosce un round in un thread: 'ciclo' = un round finisce quando posta di nuovo un "
            "personaggio che ha già agito nel round; 'master' = solo le righe `Round N` del master.", ours=True),
    Setting("nonlethal_at_zero_ps", "master",
            "Cosa fa il Danno Non Letale minimo (1) quando i PS sono già a 0: il testo non lo dice. "
            "'master' = chiede una decisione e non tocca i PF; 'pf' = riduce i PF come il danno normale.",
            ours=True),
)

# Codes spelled out whole, so that every code the ruleset emits can be found in its source (tests/test_docs.py).
_REGISTRO_MISMATCH = {"PS": "registro.ps_mismatch", "PF": "registro.pf_mismatch", "PR": "registro.pr_mismatch"}
_POOLS = tuple(Pool(k, k.lower(), None, T.R_POOLS, T.R_POOLS) for k in ("PS", "PF", "PR"))
_STABILISED = re.compile(r"(?im)^\s*stabilizzat[oaie]\s*[:\-]\s*(.+?)\s*$")
_ROUND_LINE = re.compile(r"(?im)^\s*round\s+(\d+)\b")
_STATED_DAMAGE = re.compile(r"(?i)danni\s+(?:totali|inflitti)\s*[:=]?\s*(\d+)")
_RENOUNCE = re.compile(r"(?i)rinunci\w*\s+(?:al(?:la)?\s+)?(?:tiro\s+salvezza|ts)")


# --------------------------------------------------------------------------- state

@dataclass(frozen=True)
class Fighter(Conditions):
    name: str
    ps: int | None = None
    ps_max: int | None = None
    pf: int | None = None
    pf_max: int | None = None
    pr: int | None = None
    pr_max: int | None = None
    conditions: tuple[str, ...] = ()
    nonlethal: int = 0
    seen: bool = False  # has posted (its schema was read) at least once
    touched: bool = False  # the engine changed its pools before it first posted
    since: tuple[tuple[int, str, str], ...] = ()  # Registro lines owed: changes since its last post


@dataclass(frozen=True)
class PendingSave:
    post: str
    source: str  # who caused the effect
    target: str
    technique: str
    save: str  # Tempra / Riflessi / Volontà
    result: str  # Nega / Parziale / Dimezza
    cd: int | None
    damage: int | None
    nonlethal: bool = False
    assumption: str | None = None


@dataclass(frozen=True)
class State:
    settings: dict[str, Any]
    registry: Registry
    fighters: dict[str, Fighter]
    round: int = 1
    acted: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    last: str | None = None
    pending: tuple[PendingSave, ...] = ()


# --------------------------------------------------------------------------- registry helpers

def _char(state: State, name: str | None) -> Character | None:
    return find(state.registry.characters, name)


def _canon(state: State, name: str | None) -> str | None:
    """The fighter name a label or post means (registry / known fighters win, case and accents ignored)."""
    return canon(state, name)


def _technique(state: State, name: str | None, owner: str | None = None) -> Technique | None:
    """The technique `name`, `owner`'s first when two characters have one so called (case and accents ignored)."""
    return state.registry.technique(name, owner, fold)


def _mod(c: Character | None, ability: str) -> int | None:
    if c is None:
        return None
    mods = c.extra.get("mod") or c.extra.get("modificatori") or {}
    for k, v in (mods.items() if isinstance(mods, dict) else ()):
        if T.ABILITIES.get(fold(str(k))) == ability:
            return as_int(v)
    for k, st in c.stats.items():
        if T.ABILITIES.get(fold(k)) == ability:
            return T.ability_modifier(st.total)
    return None


def _int_extra(obj: Any, *keys: str) -> int | None:
    if obj is None:
        return None
    for k in keys:
        v = as_int(obj.extra.get(k))
        if v is not None:
            return v
    return None


def _proficient(c: Character | None, w: Technique | None) -> bool | None:
    if c is None or w is None:
        return None
    if w.extra.get("naturale"):
        return True  # "Tutti i personaggi sono competenti con le proprie armi naturali"
    profs = c.extra.get("competenze")
    if profs is None:
        return None
    names = {fold(str(p)) for p in as_list(profs)}
    return fold(w.name) in names or fold(str(w.extra.get("categoria", ""))) in names


def _armour_penalty(c: Character | None) -> tuple[int, tuple[str, ...]]:
    arm = (c.extra.get("armatura") if c else None) or {}  # {competente = false, potenziata = true}
    if not isinstance(arm, dict) or arm.get("competente", True):
        return 0, ()
    if arm.get("potenziata"):
        return -4, ("Impreparato", "Deconcentrato", "Velocità dimezzata")
    return -4, ()


def _damage_type(w: Technique | None) -> str | None:
    """The weapon's damage type: `extra.danno_tipo` (or `tipo_danno`), else `type` unless it names a mode."""
    if w is None:
        return None
    for k in ("danno_tipo", "tipo_danno"):
        if w.extra.get(k):
            return str(w.extra[k])
    if w.type and not any(key in fold(w.type) for key in T.MODES):
        return w.type
    return None


def _mode(w: Technique | None, label: Label) -> str | None:
    if w is not None:
        m = fold(str(w.extra.get("attacco") or w.extra.get("tipo_attacco") or ""))
        if not m and w.type:
            m = fold(w.type)  # registry files may write the mode as the weapon's type ("mischia")
        for key in T.MODES:
            if key in m:
                return key
        if w.extra.get("granata") or fold(w.kind) == "granata":
            return "granata"
    a = label.action_key
    if "mischia" in a:
        return "mischia"
    if "lancio" in a:
        return "lancio"
    if "distanza" in a:
        return "distanza"
    return None


# --------------------------------------------------------------------------- the ruleset

@dataclass
class _Item:
    index: int
    roll: Roll
    label: Label
    kind: str  # attack / damage / save / reroll / twice / other


@dataclass
class _Group:
    head: _Item
    extra: list[_Item] = field(default_factory=list)  # rerolls and second rolls of the head's d20
    damage: list[_Item] = field(default_factory=list)


class Starfinder:
    id = "starfinder"
    title = "Starfinder — Combattimento (d20 contro CAE/CAC, Stamina, Ferita, Risolutezza)"
    settings = SETTINGS
    # PS/PF/PR in the schema, the d20 and the weapons' damage dice, the roll kinds' words and the saves' names
    # checks of a roll against the registry alone (abilities, proficiency, rerolls, DCs): page-local (engine.provisional)
    local_codes = frozenset({"starfinder.wrong_ability", "starfinder.non_proficient", "starfinder.strength_on_ranged",
                             "starfinder.multiplied_not_rolled", "starfinder.reroll_limit", "starfinder.reroll_late",
                             "starfinder.dc_mismatch", "starfinder.wrong_save_ability"})
    conventions = Conventions.of([p.key for p in _POOLS], (20, *T.DAMAGE_DICE),
                                 [w for w, _ in T.ROLL_KINDS] + ["ts"] + list(T.SAVES))

    # ---- protocol

    def initial_state(self, thread: Thread, registry: Registry, settings: dict[str, Any]) -> State:
        mult = settings.get("critical_multiplier")
        if not isinstance(mult, int) or isinstance(mult, bool) or mult < 1:
            raise BadSetting("starfinder: critical_multiplier deve essere un numero intero ≥ 1")
        if not isinstance(settings.get("natural_20_critical"), bool):
            raise BadSetting("starfinder: natural_20_critical deve essere true o false")
        if settings.get("round_rule") not in ("ciclo", "master"):
            raise BadSetting("starfinder: round_rule deve essere 'ciclo' o 'master'")
        if settings.get("nonlethal_at_zero_ps") not in ("master", "pf"):
            raise BadSetting("starfinder: nonlethal_at_zero_ps deve essere 'master' o 'pf'")
        fighters: dict[str, Fighter] = {}
        for name, c in registry.characters.items():
            fighters[name] = self._fighter_from_registry(name, c)
        return State(settings=dict(settings), registry=registry, fighters=fighters)

    def characters(self, state: State) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name, f in state.fighters.items():
            c = _char(state, name)
            pen, conds = _armour_penalty(c)
            cae = _int_extra(c, "CAE")
            cac = _int_extra(c, "CAC")
            out[name] = {
                "ps": f.ps, "ps_max": f.ps_max, "pf": f.pf, "pf_max": f.pf_max, "pr": f.pr, "pr_max": f.pr_max,
                "conditions": list(f.conditions) + [c2 for c2 in conds if c2 not in f.conditions],
                "nonlethal": f.nonlethal,
                "CAE": None if cae is None else cae + pen, "CAC": None if cac is None else cac + pen,
            }
        return out

    def next_hint(self, state: State, character: str | None = None) -> dict[str, Any]:
        """Who posts next, the saves it owes, its pools, the Registro lines to copy and ready dice tags."""
        nxt = character
        if nxt is None and state.order:
            nxt = next_in_order([n for n in state.order if not state.fighters.get(n, Fighter(n)).has("Morto")],
                                state.last)
        hint: dict[str, Any] = {"ruleset": self.id, "round": state.round, "character": nxt, "incoming": [],
                                "stats": {}, "registro": [], "hints": [], "dice_tags": []}
        if nxt is None:
            hint["hints"].append("Nessun turno giocato finora.")
            return hint
        f = state.fighters.get(nxt, Fighter(nxt))
        summary = self.characters(state).get(nxt, {})
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
            saves = (_char(state, nxt) or Character(nxt)).extra.get("TS")
            bonus = None
            for k, v in (saves.items() if isinstance(saves, dict) else ()):
                if T.save_of(str(k)) == p.save:
                    bonus = as_int(v)
            expr = f"1d20{bonus:+d}" if bonus else "1d20"
            terms = f": ({bonus:+d} [{p.save}])" if bonus else ""
            hint["dice_tags"].append({"label": f"Tiro Salvezza contro {p.technique}",
                                      "tag": f"[dice={expr}]Tiro Salvezza [{p.save}] ({nxt} vs {p.source}){terms}"
                                             + (f" CD {p.cd}" if p.cd is not None else "") + "[/dice]"})
        c = _char(state, nxt)
        for tname in (c.techniques if c else ()):
            w = _technique(state, tname, c.name if c else None)
            if w is None or fold(w.kind) not in ("arma", "granata"):
                continue
            mode = _mode(w, parse(""))
            ability = T.MODES[mode][0] if mode else "Destrezza"
            bab = _int_extra(c, "BAB")
            mod = _mod(c, ability)
            if bab is None or mod is None:
                continue
            prof = _proficient(c, w)
            total = bab + mod + (-4 if prof is False else 0)
            mods = f"+{bab} [BAB] {mod:+d} [{ability}]" + (" -4 [Non competente]" if prof is False else "")
            ca = str(w.extra["ca"]).upper() if w.extra.get("ca") else T.ca_for_damage_type(_damage_type(w))
            hint["dice_tags"].append({"label": f"Attacco con {w.name}",
                                      "tag": f"[dice=1d20{total:+d}]Attacco [{w.name}] ({nxt} vs …): ({mods}) "
                                             f"vs {ca} …[/dice]"})
        if f.has("Morente"):
            hint["hints"].append("Morente: perde 1 PR per round finché non viene stabilizzato.")
        if f.has("Privo di Sensi"):
            hint["hints"].append("Privo di Sensi: nessun attacco in questo turno.")
        return hint

    # ---- the fold

    def step(self, state: State, post: Post) -> tuple[State, list[Verdict]]:
        ctx = _Ctx(post)
        fresh = False
        actor = _canon(state, poster_name(post))
        if post.role == "player" and actor:
            state = self._ensure(state, actor)
            f0 = state.fighters[actor]
            fresh = not f0.seen and not f0.touched  # its first schema opens the accounts (after this post)
            state = self._round(state, post, actor, ctx)
        elif post.role != "player":
            state = self._master_round(state, post, ctx)
        state = self._stabilise(state, post, ctx)

        # a Forumotion Game-Master post's dice are paired with the player post it answers by the scraper
        items = self._items(post) if post.role != "gm_bot" else []
        groups = self._groups(items, ctx)
        actor_f = state.fighters.get(actor) if actor else None
        if actor_f and (actor_f.has("Privo di Sensi") or actor_f.has("Morto")) and any(
                g.head.kind in ("attack", "damage") for g in groups):
            ctx.add("starfinder.acts_while_unconscious",
                    f"{actor} è {'morto' if actor_f.has('Morto') else 'Privo di Sensi'} e non può attaccare.",
                    T.R_POOLS, roll=groups[0].head.index, expected="nessuna azione", found="attacco")
            groups = [g for g in groups if g.head.kind not in ("attack", "damage")]  # not resolved
        resolved_saves: set[int] = set()
        for g in groups:
            if g.head.kind == "attack":
                state = self._attack(state, g, actor, ctx)
            elif g.head.kind == "damage":
                state = self._damage_alone(state, g, actor, ctx)
            elif g.head.kind == "save":
                state, idx = self._save(state, g, actor, ctx)
                if idx is not None:
                    resolved_saves.add(idx)
        if post.role == "player" and actor:
            state = self._unrolled_saves(state, post, actor, resolved_saves, ctx)
            state = read_schema(state, post.schema, actor, ctx, _POOLS, fresh, _REGISTRO_MISMATCH)
            state = self._set(state, replace(state.fighters[actor], since=()))  # its Registro is written
            state = replace(state, last=actor)
        return state, ctx.verdicts

    # ---- fighters and rounds

    def _fighter_from_registry(self, name: str, c: Character) -> Fighter:
        ps, pf, pr = pool_max(c, "PS"), pool_max(c, "PF"), pool_max(c, "PR")
        return Fighter(name=name, ps=ps, ps_max=ps, pf=pf, pf_max=pf, pr=pr, pr_max=pr)

    def _ensure(self, state: State, name: str) -> State:
        return ensure_fighter(state, name, Fighter)

    def _set(self, state: State, f: Fighter) -> State:
        return set_fighter(state, f)

    def _round(self, state: State, post: Post, actor: str, ctx: _Ctx) -> State:
        order = state.order if actor in state.order else state.order + (actor,)
        state = replace(state, order=order)
        if state.settings["round_rule"] != "ciclo":
            return state
        if actor in state.acted:
            state = self._new_round(replace(state, round=state.round + 1, acted=()), ctx,
                                    assumption="round_rule")
        return replace(state, acted=state.acted + (actor,))

    def _master_round(self, state: State, post: Post, ctx: _Ctx) -> State:
        if state.settings["round_rule"] != "master":
            return state
        m = _ROUND_LINE.search(post.body or "")
        if m and int(m.group(1)) > state.round:
            return self._new_round(replace(state, round=int(m.group(1)), acted=()), ctx, assumption=None)
        return state

    def _new_round(self, state: State, ctx: _Ctx, assumption: str | None) -> State:
        """A new round: every Morente fighter not stabilised loses 1 PR; at 0 PR one more loss kills."""
        for name, f in list(state.fighters.items()):
            if not f.has("Morente") or f.has("Morto") or f.has("Stabilizzato") or f.pr is None:
                continue
            if f.pr <= 0:
                f = f.with_cond("Morto", drop=("Morente",))
                ctx.add("starfinder.dead",
                        f"{name} è Morente con 0 Punti Risolutezza e ne dovrebbe perdere un altro: muore.",
                        T.R_POOLS, expected=0, found=0, assumption=assumption, fighter=name, round=state.round)
            else:
                f = replace(f, pr=f.pr - 1, since=f.since + ((-1, "PR", "Morente"),))
                ctx.add("starfinder.dying",
                        f"{name} è Morente: perde 1 Punto Risolutezza all'inizio del round {state.round} "
                        f"(PR {f.pr + 1} → {f.pr}).", T.R_POOLS, expected=f.pr, found=f.pr + 1,
                        assumption=assumption, fighter=name, round=state.round)
            state = self._set(state, f)
        return state

    def _stabilise(self, state: State, post: Post, ctx: _Ctx) -> State:
        for m in _STABILISED.finditer(post.body or ""):
            name = _canon(state, m.group(1))
            f = state.fighters.get(name or "")
            if f is None or not f.has("Morente"):
                continue
            state = self._set(state, f.with_cond("Stabilizzato"))
            ctx.add("starfinder.stabilised", f"{name} è stabilizzato: non perde più Punti Risolutezza.",
                    T.R_POOLS, fighter=name)
        return state

    # ---- rolls → groups

    def _items(self, post: Post) -> list[_Item]:
        items = []
        for i, r in enumerate(post.rolls):
            label = parse(r.label, line_after(post.body, r.label), KEYWORDS)
            r = gm_constant(r, sum(a for a, _ in label.modifiers))
            a = label.action_key
            kind = next((k for word, k in T.ROLL_KINDS if a.startswith(word)), None)
            if kind is None:  # "TS" alone, or a save's own name ("Riflessi")
                kind = "save" if a == "ts" or T.save_of(a.split(" ")[0] if a else "") else "other"
            items.append(_Item(i, r, label, kind))
        return items

    def _groups(self, items: list[_Item], ctx: _Ctx) -> list[_Group]:
        groups: list[_Group] = []
        for it in items:
            cur = groups[-1] if groups else None
            if it.kind in ("reroll", "twice"):
                if cur is None or cur.head.kind not in ("attack", "save") or cur.damage:
                    ctx.add("starfinder.reroll_late",
                            "Una ripetizione o un secondo tiro va fatto subito dopo il tiro a cui si riferisce, "
                            "nello stesso post, prima dell'esito e di qualsiasi altra capacità.",
                            T.R_REROLL, roll=it.index, expected="subito dopo il tiro originale",
                            found="nessun tiro d20 da ripetere prima")
                    continue
                cur.extra.append(it)
            elif it.kind == "damage" and cur is not None and cur.head.kind == "attack":
                cur.damage.append(it)
            elif it.kind == "other":
                continue
            else:
                groups.append(_Group(it))
        return groups

    # ---- common roll checks

    def _check_d20(self, it: _Item, ctx: _Ctx, rule: str) -> bool:
        r = it.roll
        ok = True
        if r.count != 1 or r.sides != 20:
            ctx.add("dice.wrong_die", f"Questo tiro si fa con 1d20, non con {r.count}d{r.sides}.",
                    rule, roll=it.index, expected="1d20", found=f"{r.count}d{r.sides}")
            ok = False
        self._check_authentic(it, ctx, rule)
        return ok

    def _check_authentic(self, it: _Item, ctx: _Ctx, rule: str) -> None:
        r = it.roll
        if not r.authentic:
            ctx.add("dice.not_authentic",
                    "Il tiro non è autentico (scritto a mano o non coerente con il lancio del forum).",
                    rule, roll=it.index, expected="tiro del forum", found=describe_problems(r.problems) or r.source)

    def _better(self, g: _Group, ctx: _Ctx, rule: str) -> tuple[int | None, int, list[int]]:
        """The d20 face that counts after rerolls / roll-twice: (face, index of the roll used, all faces)."""
        head = g.head
        face = face_of(head.roll)
        used = head.index
        faces = [face] if face is not None else []
        best = [i for i in g.extra if i.kind == "twice" and "peggior" not in fold(i.label.raw)]
        worst = [i for i in g.extra if i.kind == "twice" and "peggior" in fold(i.label.raw)]
        rerolls = [i for i in g.extra if i.kind == "reroll"]
        cancelled = bool(best) and bool(worst)
        if cancelled:
            ctx.add("starfinder.roll_twice_cancelled",
                    "Tirare due volte (migliore) e (peggiore) si annullano: conta un solo tiro, il primo, "
                    "che non può essere ripetuto.", rule + " / " + T.R_REROLL, roll=head.index,
                    expected="un solo tiro", found=f"{1 + len(best) + len(worst)} tiri")
            for extra in rerolls:
                ctx.add("starfinder.reroll_limit",
                        "Quando tirare due volte e farlo tirare due volte si annullano, il tiro non può "
                        "beneficiare di ripetizioni.", T.R_REROLL, roll=extra.index, expected=0, found=len(rerolls))
            return face, used, faces
        applied = 0
        for extra in g.extra:
            if not self._check_d20(extra, ctx, T.R_REROLL):
                continue
            f2 = face_of(extra.roll)
            applied += 1
            if applied > 1:
                ctx.add("starfinder.reroll_limit",
                        "Si può applicare una sola capacità di ripetizione o di tirare due volte allo stesso tiro.",
                        T.R_REROLL, roll=extra.index, expected=1, found=applied)
                continue
            if f2 is None or face is None:
                continue
            faces.append(f2)
            worse = extra.kind == "twice" and "peggior" in fold(extra.label.raw)
            if (f2 < face) if worse else (f2 > face):
                face, used = f2, extra.index
            if extra.kind == "reroll" and f2 <= face and used == head.index:
                ctx.add("starfinder.reroll_worse",
                        f"La ripetizione ({f2}) non è migliore del tiro originale ({face}): vale l'originale.",
                        T.R_REROLL, roll=extra.index, expected=face, found=f2)
        return face, used, faces

    # ---- attacks

    def _attack_bonus(self, state: State, it: _Item, attacker: str | None, w: Technique | None,
                      ctx: _Ctx) -> tuple[int | None, str | None]:
        """Expected constant of the attack roll, checking every labelled term; (None, mode) if unknowable."""
        label, r = it.label, it.roll
        c = _char(state, attacker)
        mode = _mode(w, label)
        rule = T.R_MELEE if mode == "mischia" else T.R_RANGED
        declared = sum(a for a, _ in label.modifiers)
        if label.modifiers and declared != r.constant:
            ctx.add("dice.modifier_mismatch",
                    f"I modificatori scritti nell'etichetta sommano {declared:+d}, ma il dado lanciato è "
                    f"{r.expression}.", rule, roll=it.index, expected=declared, found=r.constant)
        bab = _int_extra(c, "BAB")
        ability = T.MODES[mode][0] if mode else None
        mod = _mod(c, ability) if ability else None
        prof = _proficient(c, w)
        others = 0
        seen_bab = seen_ability = seen_np = wrong_ability = False
        for amount, name in label.modifiers:
            key = fold(name)
            ab = T.ability_of(name)
            if key in T.BAB_LABELS:
                seen_bab = True
                if bab is not None and amount != bab:
                    ctx.add("dice.modifier_mismatch",
                            f"Il Bonus di Attacco Base di {attacker} è {bab:+d}, non {amount:+d}.",
                            rule, roll=it.index, expected=bab, found=amount, term="BAB")
            elif key in T.NON_PROFICIENT_LABELS:
                seen_np = True
                if amount != -4:
                    ctx.add("dice.modifier_mismatch", "La penalità per arma non competente è −4.",
                            T.R_WEAPON_PROF, roll=it.index, expected=-4, found=amount, term="Non competente")
                if prof is True:
                    ctx.add("starfinder.proficiency_mismatch",
                            f"{attacker} è competente in {w.name if w else 'quest arma'}: la penalità −4 non serve.",
                            T.R_WEAPON_PROF, roll=it.index, expected=0, found=amount)
            elif ab is not None and ab in ("Forza", "Destrezza"):
                if ability is not None and ab != ability:
                    wrong_ability = True
                    ctx.add("starfinder.wrong_ability",
                            f"Per un attacco {'in mischia' if mode == 'mischia' else 'da lancio' if mode in ('lancio', 'granata') else 'a distanza'} "
                            f"si usa il modificatore di {ability}, non quello di {ab}.",
                            rule, roll=it.index, expected=ability, found=ab)
                else:
                    seen_ability = True
                    if mod is not None and amount != mod:
                        ctx.add("dice.modifier_mismatch",
                                f"Il modificatore di {ab} di {attacker} è {mod:+d}, non {amount:+d}.",
                                rule, roll=it.index, expected=mod, found=amount, term=ab)
            else:
                others += amount
        if not label.modifiers:
            others = None  # an unlabelled expression: we can only compare the whole constant
        if bab is None or (ability is not None and mod is None) or mode is None:
            return None, mode
        expected_np = -4 if prof is False else 0
        if prof is False and not seen_np:
            ctx.add("starfinder.non_proficient",
                    f"{attacker} non è competente in {w.name if w else 'quest arma'}: −4 al tiro per colpire.",
                    T.R_WEAPON_PROF, roll=it.index, expected=-4, found=0)
        if label.modifiers and not seen_bab and bab:
            ctx.add("dice.missing_modifier", f"Manca il Bonus di Attacco Base ({bab:+d}).",
                    rule, roll=it.index, expected=bab, found=0, term="BAB")
        if label.modifiers and not seen_ability and not wrong_ability and mod:  # one mistake, one verdict
            ctx.add("dice.missing_modifier", f"Manca il modificatore di {ability} ({mod:+d}).",
                    rule, roll=it.index, expected=mod, found=0, term=ability)
        expected = bab + mod + expected_np + (others if others is not None else 0)
        if others is None and r.constant != expected:
            # no labelled terms: anything beyond BAB + mod (+ −4) is unexplained
            ctx.add("dice.modifier_mismatch",
                    f"Il bonus di attacco atteso è {expected:+d} (BAB {bab:+d}, {ability} {mod:+d}"
                    f"{', non competente −4' if expected_np else ''}), il dado lanciato ha {r.constant:+d}.",
                    rule, roll=it.index, expected=expected, found=r.constant)
        return expected, mode

    def _target_ca(self, state: State, label: Label, target: str | None, w: Technique | None,
                   it: _Item, ctx: _Ctx) -> tuple[int | None, str]:
        forced = (w.extra.get("ca") if w else None)
        kind = str(forced).upper() if forced else T.ca_for_damage_type(_damage_type(w))
        if w is None and ("CAE" in label.numbers or "CAC" in label.numbers):
            kind = "CAE" if "CAE" in label.numbers else "CAC"
        rule = T.R_CAE if kind == "CAE" else T.R_CAC
        stated_kind = "CAE" if "CAE" in label.numbers else "CAC" if "CAC" in label.numbers else None
        if w is not None and stated_kind and stated_kind != kind:
            ctx.add("starfinder.wrong_ac",
                    f"{w.name} ({_damage_type(w) or 'danno non specificato'}) si confronta "
                    f"con la {kind} del bersaglio, non con la {stated_kind}.",
                    rule, roll=it.index, expected=kind, found=stated_kind)
        c = _char(state, target)
        reg_val = _int_extra(c, kind)
        pen, _ = _armour_penalty(c)
        if reg_val is not None:
            reg_val += pen
        stated = label.numbers.get(kind) if stated_kind == kind else None
        if stated is None and stated_kind is None:
            stated = label.numbers.get("CA")
        if reg_val is not None:
            if stated is not None and stated != reg_val:
                ctx.add("starfinder.ac_mismatch",
                        f"La {kind} di {target} è {reg_val}"
                        + (" (−4 per armatura non competente)" if pen else "") + f", non {stated}.",
                        T.R_ARMOUR_PROF if pen else rule, roll=it.index, expected=reg_val, found=stated)
            return reg_val, kind
        return stated, kind

    def _attack(self, state: State, g: _Group, actor: str | None, ctx: _Ctx) -> State:
        it = g.head
        label = it.label
        attacker = _canon(state, label.actor) or actor
        if attacker and actor and attacker != actor:
            # a post plays one character; a different attacker in the label is noted, not refused
            ctx.add("starfinder.other_actor", f"Il tiro è dichiarato per {attacker}, il post è di {actor}.",
                    T.R_ATTACK, roll=it.index, expected=actor, found=attacker)
        target = _canon(state, label.targets[0]) if label.targets else None
        w = _technique(state, label.techniques[0], attacker) if label.techniques else None
        self._check_d20(it, ctx, T.R_ATTACK)
        expected_bonus, mode = self._attack_bonus(state, it, attacker, w, ctx)
        face, used, faces = self._better(g, ctx, T.R_ATTACK)
        ca, kind = self._target_ca(state, label, target, w, it, ctx)
        if face is None:
            ctx.add("ruling.needed", "La pagina non mostra il risultato del d20: esito da decidere.",
                    T.R_ATTACK, roll=it.index)
            return state
        bonus = expected_bonus if expected_bonus is not None else it.roll.constant
        total = face + bonus
        rule_ca = T.R_CAE if kind == "CAE" else T.R_CAC
        hit: bool | None
        crit = False
        if face == 1:
            hit = False
            ctx.add("starfinder.natural_one", "1 naturale: l'attacco fallisce sempre.", T.R_NATURAL,
                    roll=used, expected=ca, found=total)
        elif face == 20:
            hit = True
            crit = bool(state.settings["natural_20_critical"])
            ctx.add("starfinder.natural_twenty",
                    "20 naturale: l'attacco colpisce sempre" + (" ed è un Colpo Critico." if crit else "."),
                    T.R_NATURAL, roll=used, expected=ca, found=total,
                    assumption="natural_20_critical" if crit else None)
        elif ca is None:
            hit = None
            ctx.add("ruling.needed",
                    f"Non conosco la {kind} di {target or 'del bersaglio'}: scrivila nell'etichetta "
                    f"(`vs {kind} N`) o nel registro.", rule_ca, roll=it.index, expected=kind, found=None)
        else:
            hit = total >= ca
        if hit is not None and face not in (1,):
            verified = expected_bonus is not None
            note = (f" (bonus corretto {bonus:+d}; il tiro aveva {it.roll.constant:+d})"
                    if verified and bonus != it.roll.constant else "")
            ctx.add("outcome.hit" if hit else "outcome.miss",
                    f"{'Colpito' if hit else 'Mancato'}: {face} {bonus:+d} = {total} contro {kind} {ca}{note}.",
                    rule_ca, roll=used, expected=ca, found=total, face=face, bonus=bonus, verified=verified,
                    rendered_total=it.roll.total, target=target, critical=crit)
        if hit and target:
            return self._resolve_damage(state, g, attacker, target, w, mode, crit, ctx)
        if hit and g.damage:
            ctx.add("ruling.needed", "Colpito, ma l'etichetta non dice chi è il bersaglio "
                    "(`(Attaccante vs Bersaglio)`): danni da applicare a mano.", T.R_DAMAGE, roll=g.damage[0].index,
                    expected="bersaglio", found=None)
            return state
        if g.damage:
            ctx.add("starfinder.damage_on_miss", "L'attacco non è andato a segno: i danni non si applicano.",
                    T.R_DAMAGE, roll=g.damage[0].index, expected=0, found=len(g.damage))
        return state

    # ---- damage

    def _damage_terms(self, state: State, it: _Item, attacker: str | None, w: Technique | None,
                      mode: str | None, ctx: _Ctx) -> tuple[int | None, int | None]:
        """(value of one damage roll with the right modifiers, expected constant) — None when unknown."""
        r, label = it.roll, it.label
        self._check_authentic(it, ctx, T.R_DAMAGE)
        dice = str(w.extra.get("danni") or w.extra.get("danno") or "") if w else ""
        m = re.fullmatch(r"\s*(\d+)\s*d\s*(\d+)\s*", dice)
        if m and (int(m.group(1)), int(m.group(2))) != (r.count, r.sides):
            # another die's result is no damage of this weapon: unknown, never taken as if right
            ctx.add("dice.wrong_die", f"I danni di {w.name} sono {m.group(1)}d{m.group(2)}, non "
                    f"{r.count}d{r.sides}: il danno non si può applicare.", T.R_DAMAGE, roll=it.index,
                    expected=f"{m.group(1)}d{m.group(2)}", found=f"{r.count}d{r.sides}")
            return None, None
        c = _char(state, attacker)
        adds_strength = T.MODES[mode][1] if mode else None
        strength = _mod(c, "Forza")
        others = 0
        seen_strength = False
        for amount, name in label.modifiers:
            if T.ability_of(name) == "Forza":
                seen_strength = True
                if adds_strength is False:
                    ctx.add("starfinder.strength_on_ranged",
                            "Il modificatore di Forza non si aggiunge ai danni delle granate né degli attacchi a "
                            "distanza che non sono da lancio.", T.R_STRENGTH, roll=it.index, expected=0, found=amount)
                elif strength is not None and amount != strength:
                    ctx.add("dice.modifier_mismatch", f"Il modificatore di Forza di {attacker} è "
                            f"{strength:+d}, non {amount:+d}.", T.R_STRENGTH, roll=it.index,
                            expected=strength, found=amount, term="Forza")
            else:
                others += amount
        if label.modifiers and sum(a for a, _ in label.modifiers) != r.constant:
            ctx.add("dice.modifier_mismatch", "I modificatori scritti nell'etichetta non corrispondono al "
                    f"dado lanciato {r.expression}.", T.R_DAMAGE, roll=it.index,
                    expected=sum(a for a, _ in label.modifiers), found=r.constant)
        if adds_strength and strength and not seen_strength:
            ctx.add("dice.missing_modifier",
                    f"Con un'arma da mischia o da lancio si aggiunge ai danni il modificatore di Forza ({strength:+d}).",
                    T.R_STRENGTH, roll=it.index, expected=strength, found=0, term="Forza")
        if adds_strength is None or (adds_strength and strength is None) or not label.modifiers and r.constant:
            expected_const = r.constant  # cannot check: trust the roll
        else:
            expected_const = (strength if adds_strength else 0) + others
        if r.faces:
            return sum(r.faces) + expected_const, expected_const
        if r.total is not None:
            return r.total - r.constant + expected_const, expected_const
        return None, expected_const

    def _resolve_damage(self, state: State, g: _Group, attacker: str | None, target: str, w: Technique | None,
                        mode: str | None, crit: bool, ctx: _Ctx) -> State:
        declared: list[tuple[int, str]] = []
        for it in [g.head] + g.damage:
            for m, why in it.label.multipliers:
                # the critical is the engine's to decide; a restated `x2 [Critico]` is not one more multiplier
                if "critic" not in fold(why) and (m, fold(why)) not in declared:
                    declared.append((m, fold(why)))
        crit_mult = state.settings["critical_multiplier"]
        assumption = "critical_multiplier" if crit else None
        weapon_crit = re.fullmatch(r"\s*[x×]?\s*(\d+)\s*", str(w.extra.get("critico", ""))) if w else None
        if weapon_crit:
            crit_mult, assumption = int(weapon_crit.group(1)), (None if crit else assumption)
        mults = ([crit_mult] if crit else []) + [m for m, _ in declared]
        combined = T.combine_multipliers(mults)
        if not g.damage:
            ctx.add("starfinder.damage_missing", "L'attacco è andato a segno ma manca il tiro dei danni.",
                    T.R_DAMAGE, roll=g.head.index, expected=combined, found=0)
            return state
        if len(mults) > 1:
            ctx.add("starfinder.multipliers_combined",
                    f"Moltiplicatori {' e '.join('×' + str(m) for m in mults)} combinati: ×{combined} "
                    f"(si tira il danno {combined} volte), non ×{_product(mults)}.",
                    T.R_MULTIPLY_TWICE, roll=g.damage[0].index, expected=combined, found=_product(mults),
                    assumption=assumption)
        values = []
        for it in g.damage[:combined]:
            v, _ = self._damage_terms(state, it, attacker, w, mode, ctx)
            values.append(v)
        if len(g.damage) != combined:
            literal = len(g.damage) == 1 and any(m > 1 for m, _ in g.damage[0].label.multipliers)
            ctx.add("starfinder.multiplied_not_rolled" if literal else "starfinder.damage_roll_count",
                    (f"Il danno moltiplicato ×{combined} non si moltiplica: si tira il danno (con i modificatori) "
                     f"{combined} volte e si sommano i risultati." if literal else
                     f"Servono {combined} tiri dei danni (con i modificatori), ne trovo {len(g.damage)}."),
                    T.R_MULTIPLY, roll=g.damage[0].index, expected=combined, found=len(g.damage),
                    assumption=assumption)
            if literal:
                return state
        if any(v is None for v in values):
            rolls = {it.index for it in g.damage}
            if not any(v.code == "dice.wrong_die" and v.roll in rolls for v in ctx.verdicts):  # that one says why
                ctx.add("ruling.needed", "La pagina non mostra il risultato dei danni.", T.R_DAMAGE,
                        roll=g.damage[0].index)
            return state
        total = sum(values)  # type: ignore[arg-type]
        stated = _STATED_DAMAGE.search(ctx.post.body or "")
        return self._apply(state, ctx, target, total, w.name if w else (g.head.label.techniques or ("",))[0],
                           g.damage[0].index, stated=int(stated.group(1)) if stated else None,
                           assumption=assumption)

    def _apply(self, state: State, ctx: _Ctx, target: str, total: int, source: str, roll: int | None,
               stated: int | None = None, assumption: str | None = None) -> State:
        nonlethal = total < 1
        dmg = 1 if nonlethal else total
        if stated is not None and stated != dmg:
            ctx.add("damage.miscalculated", f"I danni sono {dmg}, non {stated}.", T.R_DAMAGE, roll=roll,
                    expected=dmg, found=stated, assumption=assumption)
        if nonlethal:
            ctx.add("starfinder.minimum_damage",
                    f"Le penalità portano i danni a {total}: il colpo infligge comunque 1 Danno Non Letale.",
                    T.R_MIN_DAMAGE, roll=roll, expected=1, found=total)
        state = self._ensure(state, target)
        f = state.fighters[target]
        if f.ps is None or f.pf is None:
            ctx.add("ruling.needed",
                    f"Non conosco i PS/PF di {target}: {dmg} danni da applicare a mano (registro o schema).",
                    T.R_POOLS, roll=roll, expected=dmg, found=None, target=target)
            return state
        ps_loss = min(f.ps, dmg)
        pf_loss = min(f.pf, dmg - ps_loss)
        if nonlethal and pf_loss and state.settings["nonlethal_at_zero_ps"] == "master":
            ctx.add("ruling.needed",
                    f"{target} non ha più PS: il testo non dice cosa fa un Danno Non Letale ai PF. Decide il master.",
                    T.R_MIN_DAMAGE, roll=roll, expected=None, found=1, assumption="nonlethal_at_zero_ps")
            pf_loss = 0
        owed = tuple((-n, k, source) for n, k in ((ps_loss, "PS"), (pf_loss, "PF")) if n)
        f = replace(f, ps=f.ps - ps_loss, pf=f.pf - pf_loss, nonlethal=f.nonlethal + (dmg if nonlethal else 0),
                    touched=f.touched or not f.seen, since=f.since + owed)
        parts = ([f"PS {f.ps + ps_loss} → {f.ps}"] if ps_loss or not pf_loss else []) + (
            [f"PF {f.pf + pf_loss} → {f.pf}"] if pf_loss else [])
        ctx.add("outcome.damage", f"{target} subisce {dmg} danni da {source}: " + ", ".join(parts) + ".",
                T.R_POOLS, roll=roll, expected=dmg, found=total, target=target, ps_loss=ps_loss, pf_loss=pf_loss,
                assumption=assumption)
        if f.pf == 0 and pf_loss and not f.has("Privo di Sensi"):
            f = f.with_cond("Privo di Sensi", "Morente", drop=("Stabilizzato",))
            ctx.add("starfinder.dying",
                    f"{target} arriva a 0 PF: è Privo di Sensi e Morente, perde 1 PR per round finché non viene "
                    "stabilizzato.", T.R_POOLS, roll=roll, expected=0, found=f.pf, fighter=target)
        return self._set(state, f)

    def _damage_alone(self, state: State, g: _Group, actor: str | None, ctx: _Ctx) -> State:
        """Damage with no attack roll: an effect with a saving throw (granata, incantesimo) or a stray roll."""
        it = g.head
        label = it.label
        attacker = _canon(state, label.actor) or actor
        tech = _technique(state, label.techniques[0], attacker) if label.techniques else None
        ts = (tech.extra.get("ts") if tech else None) or {}
        if not isinstance(ts, dict):
            ts = {"tipo": str(ts)}
        targets = [_canon(state, t) for t in label.targets]
        if not ts or not targets:
            ctx.add("starfinder.damage_without_attack",
                    "Tiro dei danni senza un tiro per colpire a segno né un effetto con tiro salvezza: non applicato.",
                    T.R_DAMAGE, roll=it.index, expected="Attacco a segno o effetto con TS", found="solo danni")
            return state
        mode = _mode(tech, label)
        value, _ = self._damage_terms(state, it, attacker, tech, mode, ctx)
        save = T.SAVES.get(fold(str(ts.get("tipo", ""))), None)
        result = T.SAVE_RESULTS.get(fold(str(ts.get("esito", "dimezza"))), "Dimezza")
        cd, assumption = self._effect_dc(state, tech, attacker, mode, it, ctx)
        pend = list(state.pending)
        for t in targets:
            if t:
                state = self._ensure(state, t)
                pend.append(PendingSave(ctx.post.id, attacker or "", t, tech.name, save or "Riflessi", result, cd,
                                        value, assumption=assumption))
                ctx.add("starfinder.save_required",
                        f"{t} deve effettuare un Tiro Salvezza su {save or 'Riflessi'} CD {cd} contro {tech.name} "
                        f"({result} se riesce).", T.R_SAVES, roll=it.index, expected=cd, found=None, target=t,
                        assumption=assumption)
        return replace(state, pending=tuple(pend))

    def _effect_dc(self, state: State, tech: Technique, attacker: str | None, mode: str | None, it: _Item,
                   ctx: _Ctx) -> tuple[int | None, str | None]:
        """CD of an effect: fixed in the registry, or by the text's formulas, compared to a stated `CD N`."""
        stated = it.label.numbers.get("CD")
        c = _char(state, attacker)
        fixed = _int_extra(tech, "CD")
        kind = fold(tech.kind)
        computed: int | None = None
        parts = ""
        if fixed is not None:
            computed, parts = fixed, "CD indicata nella descrizione"
        elif kind in ("incantesimo", "spell"):
            lvl = _int_extra(tech, "livello")
            key = T.ABILITIES.get(fold(str(tech.extra.get("caratteristica", ""))))
            mod = _mod(c, key) if key else None
            if lvl is not None and mod is not None:
                computed, parts = 10 + lvl + mod, f"10 + livello {lvl} + {key} {mod:+d}"
        elif kind in ("capacita", "privilegio", "privilegio di classe"):
            lvl = _int_extra(c, "livello_classe", "livello")
            key = T.ABILITIES.get(fold(str(tech.extra.get("caratteristica", ""))))
            mod = _mod(c, key) if key else None
            if lvl is not None and mod is not None:
                computed, parts = 10 + lvl // 2 + mod, f"10 + ½ livello di classe {lvl // 2} + {key} {mod:+d}"
        else:
            lvl = _int_extra(tech, "livello")
            ability = T.MODES[mode][0] if mode else None
            mod = _mod(c, ability) if ability else None
            prof = _proficient(c, tech)
            if lvl is not None and mod is not None:
                computed = 10 + lvl // 2 + mod + (-4 if prof is False else 0)
                parts = f"10 + ½ livello oggetto {lvl // 2} + {ability} {mod:+d}" + (
                    " − 4 non competente" if prof is False else "")
                penalties = sum(a for a, n in it.label.modifiers if "gittata" in fold(n) and a < 0)
                computed += penalties
        if computed is not None and stated is not None and stated != computed:
            ctx.add("starfinder.dc_mismatch", f"La CD di {tech.name} è {computed} ({parts}), non {stated}.",
                    T.R_DC if "non competente" not in parts else T.R_WEAPON_PROF, roll=it.index,
                    expected=computed, found=stated)
        return (computed if computed is not None else stated), None

    # ---- saves

    def _save(self, state: State, g: _Group, actor: str | None, ctx: _Ctx) -> tuple[State, int | None]:
        it = g.head
        label = it.label
        saver = _canon(state, label.actor) or actor
        save = None
        for text in (label.techniques[0] if label.techniques else "", label.action, label.raw):
            save = T.save_of(text)
            if save:
                break
        self._check_d20(it, ctx, T.R_SAVES)
        c = _char(state, saver)
        # labelled terms: base save and the matching ability
        for amount, name in label.modifiers:
            ab = T.ability_of(name)
            if ab and save and ab != T.SAVE_ABILITY[save] and ab in T.SAVE_ABILITY.values():
                ctx.add("starfinder.wrong_save_ability",
                        f"Ai tiri salvezza su {save} si applica il modificatore di {T.SAVE_ABILITY[save]}, non di {ab}.",
                        T.R_SAVE_TYPES, roll=it.index, expected=T.SAVE_ABILITY[save], found=ab)
        declared = sum(a for a, _ in label.modifiers)
        if label.modifiers and declared != it.roll.constant:
            ctx.add("dice.modifier_mismatch", "I modificatori scritti nell'etichetta non corrispondono "
                    f"al dado lanciato {it.roll.expression}.", T.R_SAVES, roll=it.index,
                    expected=declared, found=it.roll.constant)
        saves = (c.extra.get("TS") if c else None) or {}
        reg_bonus = None
        for k, v in (saves.items() if isinstance(saves, dict) else ()):
            if T.save_of(str(k)) == save and as_int(v) is not None:
                reg_bonus = as_int(v)
        core = sum(a for a, n in label.modifiers if T.save_of(n) or T.ability_of(n))
        extras = sum(a for a, n in label.modifiers if not (T.save_of(n) or T.ability_of(n)))
        expected_bonus = None
        if reg_bonus is not None:
            expected_bonus = reg_bonus + (extras if label.modifiers else 0)
            if (core if label.modifiers else it.roll.constant) != reg_bonus:
                ctx.add("dice.modifier_mismatch",
                        f"Il bonus al tiro salvezza su {save} di {saver} è {reg_bonus:+d}.", T.R_SAVES,
                        roll=it.index, expected=reg_bonus, found=core if label.modifiers else it.roll.constant)
        # which effect is being saved against
        idx = None
        pend = None
        for i, p in enumerate(state.pending):
            if p.target == saver and (save is None or p.save == save):
                idx, pend = i, p
                break
        if pend is None:
            for p in state.pending:
                if p.target == saver:
                    ctx.add("starfinder.wrong_save",
                            f"{p.technique} richiede un tiro salvezza su {p.save}, non su {save or '(tipo non indicato)'}.", T.R_SAVE_TYPES,
                            roll=it.index, expected=p.save, found=save)
                    break
        cd = label.numbers.get("CD")
        if pend is not None and pend.cd is not None:
            if cd is not None and cd != pend.cd:
                ctx.add("starfinder.dc_mismatch", f"La CD di {pend.technique} è {pend.cd}, non {cd}.",
                        T.R_DC, roll=it.index, expected=pend.cd, found=cd)
            cd = pend.cd
        face, used, _ = self._better(g, ctx, T.R_SAVES)
        if face is None or cd is None:
            ctx.add("ruling.needed", "Manca il risultato del d20 o la CD: esito del tiro salvezza da decidere.",
                    T.R_DC, roll=it.index, expected=cd, found=face)
            return state, None
        bonus = expected_bonus if expected_bonus is not None else it.roll.constant
        total = face + bonus
        if face == 1:
            ok = False
            ctx.add("starfinder.natural_one", "1 naturale: il tiro salvezza fallisce sempre.",
                    T.R_SAVE_NATURAL, roll=used, expected=cd, found=total)
        elif face == 20:
            ok = True
            ctx.add("starfinder.natural_twenty", "20 naturale: il tiro salvezza riesce sempre.",
                    T.R_SAVE_NATURAL, roll=used, expected=cd, found=total)
        else:
            ok = total >= cd
        ctx.add("outcome.save_success" if ok else "outcome.save_failure",
                f"Tiro salvezza su {save or '(tipo non indicato)'}: {face} + {bonus} = {total} contro CD {cd}: "
                + ("superato." if ok else "fallito."), T.R_SAVES, roll=used, expected=cd, found=total,
                face=face, bonus=bonus, verified=expected_bonus is not None)
        if pend is None:
            return state, None
        state = replace(state, pending=state.pending[:idx] + state.pending[idx + 1:])  # type: ignore[index]
        return self._save_effect(state, pend, ok, ctx, it.index), idx

    def _save_effect(self, state: State, p: PendingSave, ok: bool, ctx: _Ctx, roll: int | None) -> State:
        if not ok:
            return self._apply(state, ctx, p.target, p.damage, p.technique, roll) if p.damage is not None else state
        if p.result == "Nega" or p.damage is None:
            if p.result == "Parziale":
                ctx.add("ruling.needed",
                        f"{p.technique}: tiro salvezza superato, si applica l'effetto inferiore della descrizione.",
                        T.R_SAVE_TERMS, roll=roll, expected="effetto parziale", found=None)
            return state
        if p.result == "Dimezza":
            half = p.damage // 2  # "si arrotonda sempre per difetto"
            ctx.add("starfinder.half_damage", f"Tiro salvezza superato: metà danno ({p.damage} → {half}).",
                    T.R_SAVE_TERMS + " / " + T.R_ROUND, roll=roll, expected=half, found=p.damage)
            return self._apply(state, ctx, p.target, half, p.technique, roll) if half > 0 else state
        ctx.add("ruling.needed",
                f"{p.technique}: tiro salvezza superato, si applica l'effetto inferiore della descrizione.",
                T.R_SAVE_TERMS, roll=roll, expected="effetto parziale", found=None)
        return state

    def _unrolled_saves(self, state: State, post: Post, actor: str, resolved: set[int], ctx: _Ctx) -> State:
        mine = [p for p in state.pending if p.target == actor and p.post != post.id]
        if not mine:
            return state
        renounced = bool(_RENOUNCE.search(post.body or ""))
        rest = tuple(p for p in state.pending if p not in mine)
        state = replace(state, pending=rest)
        for p in mine:
            if renounced:
                ctx.add("starfinder.save_renounced",
                        f"{actor} rinuncia al tiro salvezza contro {p.technique} e ne accetta l'effetto.",
                        T.R_RENOUNCE, expected=p.save, found="rinuncia")
            else:
                ctx.add("starfinder.save_missing",
                        f"{actor} doveva tirare un Tiro Salvezza su {p.save} (CD {p.cd}) contro {p.technique}: "
                        "vale come fallito.", T.R_SAVES, expected=p.save, found=None)
            state = self._save_effect(state, p, False, ctx, None)
        return state


def _product(ms: list[int]) -> int:
    out = 1
    for m in ms:
        out *= m
    return out


RULESET = Starfinder()
