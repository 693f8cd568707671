"""The `poteri` ruleset: magic Powers paid in PF (Punti Fatica), damage in PD (Punti Danno), slots and durations."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ...core import BadSetting, Setting
from ...history import Character, Post, Registry, Roll, Technique, Thread, describe_problems
from ...recognise import Conventions
from ...verdicts import Verdict
from .._shared import Collector as _Ctx
from .._shared import (Pool, as_int, as_list, canon, ensure_fighter, face_of, find, fold, next_in_order, pool_max,
                       pool_stats, poster_name, read_schema, registro_lines, set_fighter)
from ..starfinder.labels import Label, gm_constant, line_after, parse, position_in
from . import tables as T

KEYWORDS = ("PF", "margine", "slot")

SETTINGS: tuple[Setting, ...] = (
    Setting("roll_system", "d100_sotto",
            "Come un tiro dà esito e margine (il testo dà i margini ma non il tiro). 'd100_sotto': 1d100 ≤ "
            "valore riesce, margine = valore − dado; 'dichiarato': solo esito e margine scritti nel post. Un "
            "margine scritto nel post vale sempre.", ours=True),
    Setting("critical_max", 5,
            "Con 'd100_sotto', un dado ≤ questo numero (e ≤ valore) è un Successo Critico.", ours=True),
    Setting("partial_damage", "metà",
            "Danno parziale quando la Resistenza riesce con margine inferiore (il testo: 'calcolata "
            "automaticamente'). 'metà' = danno pieno / 2 per difetto; 'proporzionale' = danno × (Potere + "
            "Intensità − margine Resistenza) / (Potere + Intensità), per difetto.", ours=True),
    Setting("slots", T.SLOTS, "Slot magici per personaggio.", ours=False),
    Setting("damage_cap", T.DAMAGE_CAP, "Danno massimo di un normale Potere di Attacco (PD).", ours=False),
)

# Codes spelled out whole, so that every code the ruleset emits can be found in its source (tests/test_docs.py).
_POWER_OUTCOME = {"fallimento": "outcome.power_failure", "critico": "outcome.power_critical",
                  "successo": "outcome.power_success"}
_REGISTRO_MISMATCH = {"PF": "registro.pf_mismatch", "PD": "registro.pd_mismatch"}
# pools read from the poster's schema: a wrong current value cites the pool's rule, a wrong maximum the types'
_POOLS = (Pool("PF", "pf", "Punti Fatica", T.R_PF, T.R_TYPES), Pool("PD", "pd", "Punti Danno", T.R_DAMAGE, T.R_TYPES))


def _against(face: int | None, value: int | None, margin: int | None = None, extra: str | None = None) -> str:
    """" (tiro 25 contro il valore 55, margine +30)": what the outcome of a Power's roll was read from."""
    parts = [f"tiro {face} contro il valore {value}"] if face is not None and value is not None else []
    parts += [f"margine {margin:+d}"] if margin is not None else []
    parts += [extra] if extra else []
    return f" ({', '.join(parts)})" if parts else ""


_MARGIN = re.compile(r"(?i)margine\s*[:=]?\s*([+\-−]?\s*\d+)")
_CRIT = re.compile(r"(?i)\b(?:successo\s+)?critico\b")
_FAIL = re.compile(r"(?i)\b(?:fallimento|fallit[oa]|fallisce)\b")
_SUCC = re.compile(r"(?i)\b(?:successo|riuscit[oa]|riesce)\b")
_PARTIAL = re.compile(r"(?i)danno\s+parziale\s*[:=]?\s*(\d+)")
_STOP = re.compile(r"(?im)^\s*(?:interromp\w*|termin\w*)\s*[:\-]?\s*\[?([^\]\n]+?)\]?\s*$")


@dataclass(frozen=True)
class Effect:
    power: str
    type: str
    caster: str
    target: str
    slots: int
    remaining: int | None  # caster's turns left, None = until something ends it
    post: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fighter:
    name: str
    pf: int | None = None
    pf_max: int | None = None
    pd: int | None = None
    pd_max: int | None = None
    seen: bool = False
    touched: bool = False
    since: tuple[tuple[int, str, str], ...] = ()  # Registro lines owed: changes since its last post


@dataclass(frozen=True)
class Pending:
    """An Attacco that succeeded: the target's Resistenza decides how much of `damage` lands."""

    post: str
    caster: str
    target: str
    power: str
    potency: int | None  # margin of the Power + Intensità
    intensity: int
    damage: int | None
    stat: str | None


@dataclass(frozen=True)
class State:
    settings: dict[str, Any]
    registry: Registry
    fighters: dict[str, Fighter]
    effects: tuple[Effect, ...] = ()
    pending: tuple[Pending, ...] = ()
    order: tuple[str, ...] = ()
    last: str | None = None


@dataclass
class _Item:
    index: int
    roll: Roll
    label: Label
    line: str
    kind: str  # power / damage / resist / rissa / weapon / other


@dataclass(frozen=True)
class _Power:
    name: str
    type: str | None
    slots: int
    timing: str | None
    duration: int | None
    value: int | None
    stat: str | None
    extra: dict[str, Any]


def _signed(text: str) -> int:
    t = text.replace(" ", "").replace("−", "-")
    return int(t)


class Poteri:
    id = "poteri"
    title = "Poteri — Combattimento magico (PF, PD, Intensità, Resistenza, slot)"
    settings = SETTINGS
    # PF/PD in the schema, the Power's d100 and the damage's d6, the roll kinds' words
    conventions = Conventions.of([p.key for p in _POOLS], (T.POWER_DIE, T.DAMAGE_DIE), [w for w, _ in T.ROLL_KINDS])

    # ---- protocol

    def initial_state(self, thread: Thread, registry: Registry, settings: dict[str, Any]) -> State:
        if settings.get("roll_system") not in ("d100_sotto", "dichiarato"):
            raise BadSetting("poteri: roll_system deve essere 'd100_sotto' o 'dichiarato'")
        if settings.get("partial_damage") not in ("metà", "proporzionale"):
            raise BadSetting("poteri: partial_damage deve essere 'metà' o 'proporzionale'")
        for name in ("critical_max", "slots", "damage_cap"):
            v = settings.get(name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise BadSetting(f"poteri: {name} deve essere un numero intero non negativo")
        fighters = {n: self._from_registry(n, c) for n, c in registry.characters.items()}
        return State(settings=dict(settings), registry=registry, fighters=fighters)

    def characters(self, state: State) -> dict[str, dict[str, Any]]:
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

    def next_hint(self, state: State, character: str | None = None) -> dict[str, Any]:
        """Who posts next, the Resistenze it owes, its pools and slots, Registro lines and ready dice tags."""
        nxt = character
        if nxt is None:
            nxt = next_in_order(state.order, state.last)
        hint: dict[str, Any] = {"ruleset": self.id, "character": nxt, "incoming": [], "stats": {}, "registro": [],
                                "hints": [], "dice_tags": []}
        if nxt is None:
            hint["hints"].append("Nessun turno giocato finora.")
            return hint
        f = state.fighters.get(nxt, Fighter(nxt))
        summary = self.characters(state).get(nxt, {})
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
            p = self._power(state, tname, parse(""), c.name if c else None)
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

    # ---- the fold

    def step(self, state: State, post: Post) -> tuple[State, list[Verdict]]:
        ctx = _Ctx(post)
        fresh = False
        poster = _canon(state, poster_name(post))
        # a Forumotion Game-Master post's dice are paired with the player post it answers by the scraper
        items = self._items(post) if post.role != "gm_bot" else []
        if post.role == "player" and poster:
            state = self._ensure(state, poster)
            f0 = state.fighters[poster]
            fresh = not f0.seen and not f0.touched  # its first schema opens the accounts (after this post)
            if poster not in state.order:
                state = replace(state, order=state.order + (poster,))
            state = self._tick(state, poster, ctx)
            state = self._resistances(state, poster, items, ctx)
            state = self._voluntary_stop(state, post, poster, ctx)
        powers_cast = 0
        consumed: set[int] = set()  # damage rolls that belong to a cast Power
        for it in items:
            if it.kind == "power":
                powers_cast += 1
                p = self._power(state, it.label.techniques[0] if it.label.techniques else it.label.action, it.label,
                                _canon(state, it.label.actor) or poster)
                if powers_cast > 1 and not p.extra.get("eccezione_turno"):
                    ctx.add("turn.extra_main_action",
                            "Si può lanciare un solo Potere per turno: questo è il "
                            f"{powers_cast}° del post.", T.R_ONE, roll=it.index, expected=1, found=powers_cast)
                    continue
                state, used = self._cast(state, it, p, poster, items, ctx)
                consumed.update(used)
            elif it.kind == "damage" and it.index not in consumed:
                ctx.add("poteri.stray_damage",
                        "Tiro dei danni senza un Potere di Attacco a cui riferirsi: non applicato.",
                        T.R_DAMAGE, roll=it.index, expected="Potere di Attacco", found="solo danni")
            elif it.kind in ("rissa", "weapon"):
                state = self._physical_attack(state, it, poster, ctx)
            elif it.kind == "liberation":
                state = self._liberation(state, it, poster, ctx)
        if post.role == "player" and poster:
            state = read_schema(state, post.schema, poster, ctx, _POOLS, fresh, _REGISTRO_MISMATCH)
            state = self._set(state, replace(state.fighters[poster], since=()))  # its Registro is written
            state = replace(state, last=poster)
        return state, ctx.verdicts

    # ---- helpers: fighters, powers, rolls

    def _from_registry(self, name: str, c: Character) -> Fighter:
        pf, pd = pool_max(c, "PF"), pool_max(c, "PD")
        return Fighter(name=name, pf=pf, pf_max=pf, pd=pd, pd_max=pd)

    def _ensure(self, state: State, name: str) -> State:
        return ensure_fighter(state, name, Fighter)

    def _set(self, state: State, f: Fighter) -> State:
        return set_fighter(state, f)

    def _power(self, state: State, name: str, label: Label, owner: str | None = None) -> _Power:
        # the caster's own Power first when two characters have one so called
        t: Technique | None = state.registry.technique(name, owner, fold)
        extra = dict(t.extra) if t else {}
        ptype = None
        for cand in ([t.type] if t and t.type else []) + list(label.tags):
            for known in T.POWER_TYPES:
                if fold(str(cand)) == fold(known):
                    ptype = known
        slots = extra.get("slot")
        timing = extra.get("tempo")
        for tag in label.tags:
            if re.fullmatch(r"\s*\d\s*", tag):
                slots = int(tag)
            elif fold(tag) in ("prima", "dopo"):
                timing = tag.strip().capitalize()
        value = as_int(extra.get("valore"))
        if value is None and t is not None and t.potenziale is not None:
            value = t.potenziale
        for k in ("immune", "impedisce"):
            extra[k] = [str(x) for x in as_list(extra.get(k))]
        stat = extra.get("resistenza")
        return _Power(name=t.name if t else name, type=ptype, slots=max(0, as_int(slots) or 0),
                      timing=str(timing).capitalize() if timing else None,
                      duration=as_int(extra.get("durata")), value=value,
                      stat=str(stat) if stat else None, extra=extra)

    def _items(self, post: Post) -> list[_Item]:
        out = []
        for i, r in enumerate(post.rolls):
            line = line_after(post.body, r.label)
            label = parse(r.label, line, KEYWORDS)
            a = label.action_key
            kind = next((k for word, k in T.ROLL_KINDS if a.startswith(word)), "other")
            out.append(_Item(i, r, label, line, kind))
        return out

    def _outcome(self, state: State, it: _Item, value: int | None, ctx: _Ctx, rule: str,
                 what: str) -> tuple[str | None, int | None, str | None]:
        """(esito, margine, assumption): the post's own statement first, else the roll system."""
        text = f"{it.label.rest} {it.line}"
        stated_margin = _MARGIN.search(text)
        stated = None
        if _CRIT.search(text):
            stated = "critico"
        elif _FAIL.search(text):
            stated = "fallimento"
        elif _SUCC.search(text) or stated_margin:
            stated = "successo"
        margin = _signed(stated_margin.group(1)) if stated_margin else None
        computed = cmargin = None
        face = face_of(it.roll)
        if state.settings["roll_system"] == "d100_sotto" and value is not None and face is not None:
            if (it.roll.count, it.roll.sides) != (1, T.POWER_DIE):
                ctx.add("dice.wrong_die", f"Con il sistema di tiro in uso {what} si tira con 1d100.",
                        rule, roll=it.index, expected="1d100", found=f"{it.roll.count}d{it.roll.sides}",
                        assumption="roll_system")
            else:
                cmargin = value - face
                computed = ("critico" if face <= min(state.settings["critical_max"], value) else
                            "successo" if face <= value else "fallimento")
        if not it.roll.authentic:
            ctx.add("dice.not_authentic", "Il tiro non è autentico (scritto a mano o incoerente).",
                    rule, roll=it.index, expected="tiro del forum", found=describe_problems(it.roll.problems) or it.roll.source)
        if stated is not None:
            if computed is not None and (stated != computed or (margin is not None and margin != cmargin)):
                ctx.add("poteri.margin_mismatch",
                        f"{what}: il post dichiara {stated}"
                        + (f" con margine {margin:+d}" if margin is not None else "")
                        + f", il dado {face} su valore {value} dà {computed} con margine {cmargin:+d}. "
                        "Vale quanto scritto nel post; il master verifichi.", rule, roll=it.index,
                        expected={"esito": computed, "margine": cmargin}, found={"esito": stated, "margine": margin},
                        assumption="roll_system")
            return stated, margin if margin is not None else cmargin if stated == computed else margin, None
        if computed is not None:
            return computed, cmargin, "roll_system"
        return None, None, None

    # ---- turns, durations, voluntary stops

    def _tick(self, state: State, poster: str, ctx: _Ctx) -> State:
        kept = []
        for e in state.effects:
            if e.caster == poster and e.remaining is not None and e.post != ctx.post.id:
                left = e.remaining - 1
                if left <= 0:
                    ctx.add("poteri.effect_expired", f"{e.power} ({e.caster} → {e.target}) è scaduto.",
                            T.R_DURATION, expected=0, found=0, power=e.power)
                    continue
                e = replace(e, remaining=left)
            kept.append(e)
        return replace(state, effects=tuple(kept))

    def _voluntary_stop(self, state: State, post: Post, poster: str, ctx: _Ctx) -> State:
        for m in _STOP.finditer(post.body or ""):
            name = fold(m.group(1))
            for e in state.effects:
                if e.caster == poster and fold(e.power) == name:
                    state = self._end(state, e, ctx, "interrotto dal lanciatore")
        return state

    def _end(self, state: State, e: Effect, ctx: _Ctx, why: str, roll: int | None = None,
             code: str = "poteri.effect_ended", rule: str = T.R_DURATION) -> State:
        ctx.add(code, f"{e.power} ({e.caster} → {e.target}) termina: {why}.", rule, roll=roll,
                expected=None, found=None, power=e.power, reason=why)
        return replace(state, effects=tuple(x for x in state.effects if x is not e))

    def _end_defensives(self, state: State, attacker: str, roll: int, ctx: _Ctx) -> State:
        """A Difensivo ends as soon as its holder voluntarily attacks, before the attack is resolved."""
        for e in list(state.effects):
            if e.caster == attacker and e.type == "Difensivo":
                state = self._end(state, e, ctx, f"{attacker} attacca (prima della risoluzione dell'Attacco)",
                                  roll=roll, code="poteri.defensive_ended", rule=T.R_DEFENSIVE)
        return state

    def _attack_checks(self, state: State, attacker: str, target: str | None, kind: str, it: _Item,
                       ctx: _Ctx) -> tuple[State, bool]:
        """Effects that forbid or end on this attack; (state, allowed)."""
        allowed = True
        for e in list(state.effects):
            if target and e.caster == attacker and e.target == target and e.extra.get("termina_se_caster_attacca"):
                state = self._end(state, e, ctx, f"{attacker} attacca direttamente {target}", roll=it.index,
                                  rule=T.R_NO_ATTACK_CASTER)
        for e in state.effects:
            if e.target == attacker and target and e.caster == target and e.extra.get("vieta_attacco_al_caster"):
                ctx.add("poteri.attack_forbidden",
                        f"{attacker} è sotto {e.power} di {target} e non può aggredirlo.", T.R_NO_ATTACK_CASTER,
                        roll=it.index, expected="nessun attacco a " + target, found=kind)
                allowed = False
            blocked = [fold(x) for x in (e.extra.get("impedisce") or [])]
            if e.target == attacker and e.type in ("Debilitante", "Mentale") and (
                    fold(kind) in blocked or ("poteri" in blocked and kind.startswith("Potere"))
                    or ("attacchi" in blocked)):
                ctx.add("poteri.action_prevented", f"{e.power} impedisce a {attacker} questa azione ({kind}).",
                        T.R_DEBIL, roll=it.index, expected="azione impedita", found=kind, power=e.power)
                allowed = False
        if target:
            groups = {"Rissa": {"rissa", "fisico", "attacchi"}, "Arma": {"armi", "fisico", "attacchi"},
                      "Potere di Attacco": {"attacco", "magia", "attacchi"}, "Potere": {"magia"}}[kind]
            for e in state.effects:
                if e.target == target and e.type == "Difensivo" and groups & {fold(x) for x in e.extra.get("immune", [])}:
                    ctx.add("poteri.target_protected",
                            f"{target} è protetto da {e.power}: {kind} non può colpirlo.", T.R_DEFENSIVE,
                            roll=it.index, expected="bersaglio non selezionabile", found=kind, power=e.power)
                    allowed = False
        return state, allowed

    # ---- liberation tests: only those the Power provides

    def _liberation(self, state: State, it: _Item, poster: str | None, ctx: _Ctx) -> State:
        who = _canon(state, it.label.actor) or poster
        named = fold(it.label.techniques[0]) if it.label.techniques else None
        holds = [e for e in state.effects if e.target == who and e.caster != who
                 and (named is None or fold(e.power) == named)]
        if not holds:
            ctx.add("poteri.liberation_without_effect",
                    f"{who} tenta di liberarsi, ma non è sotto un effetto da cui liberarsi.", T.R_DURATION,
                    roll=it.index, expected="effetto attivo", found=None)
            return state
        e = holds[0]
        provided = e.extra.get("liberazione")
        if not provided:
            ctx.add("poteri.liberation_not_allowed",
                    f"{e.power} non prevede prove di liberazione: l'effetto continua per la durata indicata.",
                    T.R_DURATION, roll=it.index, expected="nessuna prova", found="prova di liberazione",
                    power=e.power)
            return state
        c = find(state.registry.characters, who)
        st = find(c.stats, str(provided)) if (c and isinstance(provided, str)) else None
        esito, margin, assumption = self._outcome(state, it, st.total if st is not None else None, ctx,
                                                  T.R_DURATION, "la prova di liberazione")
        if esito is None:
            ctx.add("ruling.needed", f"Esito della prova di liberazione da {e.power} sconosciuto.",
                    T.R_DURATION, roll=it.index)
            return state
        if esito == "fallimento":
            ctx.add("outcome.liberation_failed", f"{who} non si libera da {e.power}.", T.R_DURATION,
                    roll=it.index, expected=st.total if st is not None else None, found=face_of(it.roll),
                    assumption=assumption)
            return state
        return self._end(state, e, ctx, f"{who} supera la prova di liberazione prevista", roll=it.index)

    # ---- Rissa and weapons

    def _physical_attack(self, state: State, it: _Item, poster: str | None, ctx: _Ctx) -> State:
        actor = _canon(state, it.label.actor) or poster
        target = _canon(state, it.label.targets[0]) if it.label.targets else None
        if actor is None:
            return state
        state = self._ensure(state, actor)
        forced = poster is not None and actor != poster
        kind = "Rissa" if it.kind == "rissa" else "Arma"
        if not forced:
            state = self._end_defensives(state, actor, it.index, ctx)
        else:
            controls = any(e.caster == poster and e.target == actor and e.type in ("Mentale", "Debilitante")
                           for e in state.effects)
            if not controls:
                ctx.add("poteri.forced_without_control",
                        f"{poster} fa agire {actor} senza un Potere attivo che lo consenta.", T.R_MENTAL,
                        roll=it.index, expected="Potere Mentale attivo", found=None)
        state, _ = self._attack_checks(state, actor, target, kind, it, ctx)
        if it.kind == "rissa":
            f = state.fighters[actor]
            if f.pf is not None:
                if f.pf < T.RISSA_PF:
                    ctx.add("poteri.pf_exceeded", f"{actor} non ha il PF per la Rissa.", T.R_FATIGUE,
                            roll=it.index, expected=T.RISSA_PF, found=f.pf)
                else:
                    state = self._set(state, replace(f, pf=f.pf - T.RISSA_PF, touched=f.touched or not f.seen,
                                                     since=f.since + ((-T.RISSA_PF, "PF", "Rissa"),)))
            if forced and ctx.post.schema and ctx.post.schema.registro:
                for entry in ctx.post.schema.registro:
                    if entry.resource == "PF" and entry.amount < 0 and "rissa" in fold(entry.label):
                        ctx.add("poteri.fatigue_wrong_payer",
                                f"La Rissa imposta la paga {actor}, il cui corpo attacca, non {poster}.",
                                T.R_FATIGUE, roll=it.index, expected=actor, found=poster)
            ctx.add("ruling.needed", f"Esito della Rissa di {actor} contro {target}: lo decide il master "
                    "(il testo non ne dà il calcolo).", T.R_FATIGUE, roll=it.index, expected=None, found=None)
        return state

    # ---- Powers

    def _cast(self, state: State, it: _Item, p: _Power, poster: str | None, items: list[_Item],
              ctx: _Ctx) -> tuple[State, set[int]]:
        """One Power cast; returns the new state and the damage rolls it accounts for."""
        caster = _canon(state, it.label.actor) or poster
        if caster is None:
            return state, set()
        state = self._ensure(state, caster)
        target = _canon(state, it.label.targets[0]) if it.label.targets else caster
        if p.type is None:
            ctx.add("ruling.needed",
                    f"Non conosco la tipologia di {p.name}: indicala nel registro o nel tag ({{Attacco}}, "
                    "{Curativo}…).", T.R_TYPES, roll=it.index, expected="tipologia", found=None)
            return state, set()
        self._timing(p, it, ctx)
        mine = {fold(x) for x in as_list(p.extra.get("incompatibile"))}
        for e in list(state.effects):
            theirs = {fold(str(x)) for x in as_list(e.extra.get("incompatibile"))}
            if fold(e.power) in mine or fold(p.name) in theirs:
                state = self._end(state, e, ctx, f"è stato lanciato {p.name}, incompatibile", roll=it.index)
        if target:
            state = self._ensure(state, target)
        if p.type == "Attacco":
            return self._cast_attack(state, it, p, caster, target, items, ctx)
        state, allowed = self._attack_checks(state, caster, target if target != caster else None, "Potere", it, ctx) \
            if target != caster else (state, True)
        if not allowed:
            return state, set()
        cost = it.label.numbers.get("PF")
        if cost is None:
            tech = state.registry.technique(p.name, caster, fold)
            cost = as_int(tech.cost.get("PF")) if tech else None
        if cost:
            f = state.fighters[caster]
            if f.pf is not None:
                if cost > f.pf:
                    ctx.add("poteri.pf_exceeded", f"{caster} ha {f.pf} PF, non può spenderne {cost}.",
                            T.R_CURE if p.type == "Curativo" else T.R_TYPES, roll=it.index, expected=f.pf, found=cost)
                    return state, set()
                state = self._set(state, replace(f, pf=f.pf - cost, touched=f.touched or not f.seen))
        esito, margin, assumption = self._outcome(state, it, p.value, ctx, T.R_ROLL, f"il Potere {p.name}")
        damage_items = [i for i in items if i.kind == "damage" and i.index > it.index]
        if p.type == "Narrativo":
            if damage_items:
                ctx.add("poteri.narrative_no_mechanics",
                        f"{p.name} è Narrativo: non infligge danni che la descrizione non prevede.", T.R_NARRATIVE,
                        roll=damage_items[0].index, expected=0, found=len(damage_items))
            ctx.add("poteri.narrative", f"{p.name} (Narrativo): effetto solo descrittivo.", T.R_NARRATIVE,
                    roll=it.index)
            return state, {d.index for d in damage_items}
        if esito is None:
            ctx.add("ruling.needed", f"Esito di {p.name} sconosciuto: manca il valore del Potere o il "
                    "dado; scrivi 'Successo/Fallimento/Critico, margine N' nel post.", T.R_ROLL, roll=it.index)
            return state, set()
        ctx.add(_POWER_OUTCOME[esito], f"{p.name}: {esito}{_against(face_of(it.roll), p.value, margin)}.",
                T.R_ROLL, roll=it.index, expected=p.value, found=face_of(it.roll), assumption=assumption)
        if esito == "fallimento":
            return state, set()
        if p.type == "Curativo":
            gain = T.CURE["critico" if esito == "critico" else "successo"]
            f = state.fighters[target]
            if f.pd is None:
                ctx.add("ruling.needed", f"Non conosco i PD di {target}: cura di {gain} PD da applicare.",
                        T.R_CURE, roll=it.index, expected=gain, found=None)
                return state, set()
            new = f.pd + gain if f.pd_max is None else min(f.pd_max, f.pd + gain)
            if f.pd_max is not None and f.pd + gain > f.pd_max:
                ctx.add("poteri.cure_capped",
                        f"La cura non porta {target} oltre i suoi PD massimi ({f.pd_max}): sarebbero "
                        f"{f.pd + gain}.", T.R_CURE,
                        roll=it.index, expected=new, found=f.pd + gain)
            ctx.add("outcome.cure", f"{target} recupera {new - f.pd} PD (PD {f.pd} → {new}).", T.R_CURE,
                    roll=it.index, expected=new - f.pd, found=gain)
            state = self._set(state, replace(f, pd=new, touched=f.touched or not f.seen,
                                             since=f.since + (((new - f.pd), "PD", p.name),) if new != f.pd else f.since))
            return state, set()
        # Difensivo / Debilitante / Mentale: a persistent effect in the caster's slots
        return self._hold(state, it, p, caster, target, ctx), set()

    def _timing(self, p: _Power, it: _Item, ctx: _Ctx) -> None:
        if p.timing not in ("Prima", "Dopo"):
            return
        pos = position_in(ctx.post.body, it.roll.label)
        if pos is None:
            return
        before, after = pos
        # narrative = lines that are not schema, Registro or dice; a little slack for a title or a signature
        if p.timing == "Prima" and before >= 30 and after < 10:
            ctx.add("poteri.timing", f"{p.name} è {{Prima}}: va tirato prima dell'azione a cui è "
                    "collegato, non dopo.", T.R_TIMING, roll=it.index, expected="Prima", found="Dopo",
                    chars_before=before, chars_after=after)
        if p.timing == "Dopo" and before < 10 and after >= 30:
            ctx.add("poteri.timing", f"{p.name} è {{Dopo}}: va lanciato dopo l'azione in cui se ne "
                    "descrive l'uso.", T.R_TIMING, roll=it.index, expected="Dopo", found="Prima",
                    chars_before=before, chars_after=after)

    def _hold(self, state: State, it: _Item, p: _Power, caster: str, target: str, ctx: _Ctx) -> State:
        for e in state.effects:
            if e.caster == caster and fold(e.power) == fold(p.name) and e.target == target:
                ctx.add("poteri.already_active",
                        f"{p.name} è già attivo: continua per la sua durata senza essere rilanciato.", T.R_ONE,
                        roll=it.index, expected="nessun rilancio", found="rilancio")
                state = replace(state, effects=tuple(x for x in state.effects if x is not e))
                break
        if p.slots:
            limit = state.settings["slots"]
            if p.slots > limit:
                ctx.add("poteri.slots_exceeded", f"{p.name} occupa {p.slots} slot, se ne hanno {limit}.",
                        T.R_SLOTS, roll=it.index, expected=limit, found=p.slots)
                return state
            held = [e for e in state.effects if e.caster == caster and e.slots]
            used = sum(e.slots for e in held)
            for e in held:  # oldest first: the previous effects can no longer be maintained
                if used + p.slots <= limit:
                    break
                state = self._end(state, e, ctx, f"gli slot non bastano per mantenerlo insieme a {p.name}",
                                  roll=it.index, rule=T.R_SLOTS)
                used -= e.slots
        eff = Effect(power=p.name, type=p.type or "", caster=caster, target=target, slots=p.slots,
                     remaining=p.duration, post=ctx.post.id, extra=p.extra)
        ctx.add("poteri.effect_started",
                f"{p.name} ({p.type}) attivo su {target}" + (f" per {p.duration} turni" if p.duration else "")
                + (f", {p.slots} slot" if p.slots else "") + ".",
                {"Difensivo": T.R_DEFENSIVE, "Debilitante": T.R_DEBIL, "Mentale": T.R_MENTAL}.get(p.type, T.R_TYPES),
                roll=it.index, expected=None, found=None, power=p.name)
        return replace(state, effects=state.effects + (eff,))

    def _cast_attack(self, state: State, it: _Item, p: _Power, caster: str, target: str, items: list[_Item],
                     ctx: _Ctx) -> tuple[State, set[int]]:
        # 1. declaring the Attacco ends the caster's Difensivi, before anything is rolled or resolved
        state = self._end_defensives(state, caster, it.index, ctx)
        state, allowed = self._attack_checks(state, caster, target, "Potere di Attacco", it, ctx)
        f = state.fighters[caster]
        spend = it.label.numbers.get("PF")
        if spend is None and ctx.post.schema and ctx.post.schema.registro:
            for entry in ctx.post.schema.registro:
                if entry.resource == "PF" and entry.amount < 0 and fold(p.name) in fold(entry.label):
                    spend = -entry.amount
        damage_item = next((i for i in items if i.kind == "damage" and i.index > it.index), None)
        result: set[int] = {damage_item.index} if damage_item is not None else set()
        if f.pf is not None and f.pf <= 0:
            ctx.add("poteri.no_fatigue", f"{caster} è a 0 PF e non può usare un Attacco magico.", T.R_PF,
                    roll=it.index, expected=">= 1 PF", found=0)
            return state, result
        if spend is None:
            ctx.add("poteri.pf_missing", f"Quanti PF investe {caster} in {p.name}? Scrivi `PF N` "
                    "(da 1 a 3) nell'etichetta del tiro.", T.R_PF, roll=it.index, expected="1–3", found=None)
            return state, result
        if not T.PF_MIN <= spend <= T.PF_MAX:
            ctx.add("poteri.pf_out_of_range", f"Un Potere di Attacco si lancia con 1–3 PF, non {spend}.",
                    T.R_PF, roll=it.index, expected="1–3", found=spend)
            spend = max(T.PF_MIN, min(T.PF_MAX, spend))
        if f.pf is not None and spend > f.pf:
            ctx.add("poteri.pf_exceeded", f"{caster} ha solo {f.pf} PF: non può investirne {spend}.",
                    T.R_PF, roll=it.index, expected=f.pf, found=spend)
            spend = f.pf
        # 3. the PF are spent at the cast, whatever the roll gives
        if f.pf is not None:
            state = self._set(state, replace(f, pf=f.pf - spend, touched=f.touched or not f.seen))
        intensity = T.INTENSITA[spend]
        if not allowed:
            return state, result
        esito, margin, assumption = self._outcome(state, it, p.value, ctx, T.R_ROLL, f"il Potere {p.name}")
        if esito is None:
            ctx.add("ruling.needed", f"Esito di {p.name} sconosciuto: manca il valore del Potere o il "
                    "dado; scrivi 'Successo/Fallimento/Critico, margine N' nel post.", T.R_ROLL, roll=it.index)
            return state, result
        ctx.add(_POWER_OUTCOME[esito], f"{p.name}: {esito}"
                + _against(face_of(it.roll), p.value, *((margin, f"Intensità +{intensity}")
                                                         if margin is not None and esito == "successo" else ()))
                + f"; {spend} PF spesi.", T.R_ROLL if esito != "critico" else T.R_CRIT, roll=it.index,
                expected=p.value, found=face_of(it.roll), assumption=assumption, pf=spend, intensity=intensity)
        if esito == "fallimento":
            if damage_item is not None:
                ctx.add("poteri.damage_after_failure",
                        f"{p.name} è fallito: niente Resistenza né danno.", T.R_FAIL, roll=damage_item.index,
                        expected=0, found=damage_item.roll.total)
            return state, result
        damage = self._damage(state, damage_item, spend, p, ctx)
        if esito == "critico":
            if damage is None:
                ctx.add("poteri.critical_damage_missing", "Successo Critico: la Resistenza si salta ma il danno va "
                        "comunque tirato.", T.R_CRIT_ATTACK, roll=it.index, expected=f"{spend}d6+3", found=None)
                return state, result
            return self._hit(state, target, damage, p.name, it.index, ctx, T.R_CRIT_ATTACK), result
        if damage is None and damage_item is None:
            ctx.add("poteri.damage_missing", f"Manca il tiro dei danni ({spend}d6+3) di {p.name}.",
                    T.R_DAMAGE, roll=it.index, expected=f"{spend}d6+3", found=None)
        potency = None if margin is None else margin + intensity
        pend = Pending(ctx.post.id, caster, target, p.name, potency, intensity, damage, p.stat)
        return replace(state, pending=state.pending + (pend,)), result

    def _damage(self, state: State, it: _Item | None, spend: int, p: _Power, ctx: _Ctx) -> int | None:
        if it is None:
            return None
        r = gm_constant(it.roll, T.DAMAGE_BASE)  # Forumotion's Game Master rolls only the dice
        if not r.authentic:
            ctx.add("dice.not_authentic", "Il tiro dei danni non è autentico.", T.R_DAMAGE, roll=it.index,
                    expected="tiro del forum", found=describe_problems(r.problems) or r.source)
        if (r.count, r.sides) != (spend, 6):
            # another die's result is no damage of this power: the damage stays unknown (never taken as if right)
            ctx.add("dice.wrong_die", f"Con {spend} PF il danno è 3 + {spend}d6, non {r.expression}: il danno "
                    "non si può applicare.", T.R_DAMAGE, roll=it.index, expected=f"{spend}d6+3", found=r.expression)
            return None
        if r.constant != T.DAMAGE_BASE:
            ctx.add("dice.wrong_die", f"Con {spend} PF il danno è 3 + {spend}d6, non {r.expression}.",
                    T.R_DAMAGE, roll=it.index, expected=f"{spend}d6+3", found=r.expression)
        if r.faces is not None:
            raw = T.DAMAGE_BASE + sum(r.faces[:spend])
        elif r.total is not None:
            raw = r.total - r.constant + T.DAMAGE_BASE
        else:
            return None
        cap = int(state.settings["damage_cap"])
        if as_int(p.extra.get("limite_danno")) is not None:
            cap = as_int(p.extra["limite_danno"])  # "capacità eccezionali ... devono dichiararlo espressamente"
        if raw > cap:
            ctx.add("poteri.damage_capped", f"Danno {raw} oltre il limite: {cap} PD.", T.R_DAMAGE,
                    roll=it.index, expected=cap, found=raw)
        return min(raw, cap)

    def _hit(self, state: State, target: str, damage: int, source: str, roll: int | None, ctx: _Ctx, rule: str,
             assumption: str | None = None, full: int | None = None) -> State:
        state = self._ensure(state, target)
        f = state.fighters[target]
        if f.pd is None:
            ctx.add("ruling.needed", f"Non conosco i PD di {target}: {damage} PD da applicare.", rule,
                    roll=roll, expected=damage, found=None)
            return state
        new = max(0, f.pd - damage)
        ctx.add("outcome.damage", f"{target} subisce {damage} PD da {source} (PD {f.pd} → {new}).", rule,
                roll=roll, expected=damage, found=full if full is not None else damage, assumption=assumption,
                target=target)
        return self._set(state, replace(f, pd=new, touched=f.touched or not f.seen,
                                        since=f.since + (((new - f.pd), "PD", source),) if new != f.pd else f.since))

    # ---- the target's Resistenza

    def _resistances(self, state: State, poster: str, items: list[_Item], ctx: _Ctx) -> State:
        mine = [p for p in state.pending if p.target == poster and p.post != ctx.post.id]
        resist = [i for i in items if i.kind == "resist"]
        state = replace(state, pending=tuple(p for p in state.pending if p not in mine))
        for n, p in enumerate(mine):
            it = resist[n] if n < len(resist) else None
            if it is None:
                ctx.add("poteri.resistance_missing",
                        f"{poster} non effettua la Resistenza contro {p.power}: subisce il danno pieno.",
                        T.R_RESIST, expected="Resistenza", found=None)
                if p.damage is not None:
                    state = self._hit(state, poster, p.damage, p.power, None, ctx, T.R_RESIST)
                continue
            stat_named = it.label.techniques[0] if it.label.techniques else None
            if p.stat and stat_named and fold(stat_named) != fold(p.stat):
                ctx.add("poteri.wrong_resistance",
                        f"{p.power} si resiste con {p.stat}, non con {stat_named}.", T.R_RESIST, roll=it.index,
                        expected=p.stat, found=stat_named)
            c = find(state.registry.characters, poster)
            st = find(c.stats, p.stat) if (c and p.stat) else None
            value = st.total if st is not None else None
            esito, margin, assumption = self._outcome(state, it, value, ctx, T.R_RESIST, "la Resistenza")
            if esito is None:
                ctx.add("ruling.needed", "Esito della Resistenza sconosciuto: scrivi 'Successo, margine "
                        "N' o 'Fallimento' nel post.", T.R_RESIST, roll=it.index)
                continue
            if p.damage is None:
                ctx.add("ruling.needed", f"Manca il danno di {p.power}: da applicare a mano.", T.R_RESIST,
                        roll=it.index)
                continue
            if esito == "fallimento":
                ctx.add("outcome.resistance_failed", f"Resistenza fallita: danno pieno ({p.damage} PD).",
                        T.R_RESIST, roll=it.index, expected=p.potency, found=margin, assumption=assumption)
                state = self._hit(state, poster, p.damage, p.power, it.index, ctx, T.R_RESIST)
                continue
            if p.potency is None or margin is None:
                ctx.add("ruling.needed", "Resistenza riuscita ma manca un margine da confrontare con "
                        "Potere + Intensità.", T.R_RESIST, roll=it.index, expected=p.potency, found=margin)
                continue
            if margin >= p.potency:
                ctx.add("outcome.resisted",
                        f"Resistenza con margine {margin:+d} ≥ Potere + Intensità {p.potency:+d}: 0 PD.",
                        T.R_RESIST, roll=it.index, expected=p.potency, found=margin, assumption=assumption)
                continue
            stated = _PARTIAL.search(f"{it.label.rest} {it.line}")
            if state.settings["partial_damage"] == "metà":
                part = p.damage // 2
            else:
                part = p.damage * (p.potency - margin) // p.potency if p.potency > 0 else p.damage
            ctx.add("outcome.partial_damage",
                    f"Resistenza riuscita con margine {margin:+d} < Potere + Intensità {p.potency:+d}: danno parziale "
                    f"{part} PD su {p.damage}.", T.R_RESIST, roll=it.index, expected=p.potency, found=margin,
                    assumption="partial_damage", partial=part, full=p.damage)
            if stated and int(stated.group(1)) != part:
                ctx.add("poteri.partial_damage_mismatch",
                        f"Il post scrive danno parziale {stated.group(1)}, la formula in uso dà {part}.", T.R_RESIST,
                        roll=it.index, expected=part, found=int(stated.group(1)), assumption="partial_damage")
            state = self._hit(state, poster, part, p.power, it.index, ctx, T.R_RESIST, assumption="partial_damage",
                              full=p.damage)
        for extra in resist[len(mine):]:
            ctx.add("poteri.resistance_not_allowed",
                    "Resistenza senza un Attacco riuscito da contrastare (un Successo Critico la salta).",
                    T.R_CRIT_ATTACK, roll=extra.index, expected=0, found=1)
        return state


def _canon(state: State, name: str | None) -> str | None:
    return canon(state, name)


RULESET = Poteri()
