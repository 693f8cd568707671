"""The `guida` step function: one post → the new state and the verdicts about it (turn, dice, hits, damage, Registro)."""
from __future__ import annotations

import math
import re
from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from ...history import Character, DamageCalc, Post, Registry, Technique, Thread
from ...verdicts import Verdict
from . import bersagli as B
from . import damage as D
from . import aree as AR
from . import percezione as PZ
from . import sbalzo as SB
from . import stacks as S
from . import tables as T
from .actions import ACTIONS, ActionSpec, classify, factor_of, limb_stack, normalise, phase_of
from .checks import (
    _AMOUNT_LABEL, _NO_BONUSES, Requirement, RollCheck, _declared, _multi, check, declared as declared_requirements,
    label_key, live_stat, requirement_stacks,
)
from .clash import ClashSide, confronto_di_potenza
from .messages import (
    P_ACCECAMENTO, P_ADEGUATEZZA, P_BERSAGLI, P_CONFRONTO, P_DANNI, P_DANNI_POST, P_DESCRIZIONE, P_DIFENSIVA,
    P_DISTANZA, P_FLUSSO, P_INIZIALE, P_LANCIO, P_MIRA, P_OFFENSIVA, P_RULING, P_SCHEMA, P_STACK1, P_TURNI, signed,
    verdict,
)
from .state import EMPTY, DueDamage, Expense, Fighter, GuidaState, Hit, Incoming, Ruling, evolve, frozen_map, maker
from . import costrizione as CO  # Costrizione e Liberazione values (_costrizione_hit, _liberazione)
from .messages import P_COSTR_IMPROPRIA, cifra
from .state import _SUMMARY_FIELDS, evolve_with

STATS = ("Forza", "Destrezza", "Costituzione", "Intelligenza")
_RULING_LINE = re.compile(
    r"(?:\[ruling\]\s*|^\s*ruling\s*:\s*)([a-z_]+\.[a-z_]+)\s+post\s+#?([\w.-]+)\s*:\s*(.+?)\s*(?:\[/ruling\]|$)",
    re.IGNORECASE | re.MULTILINE)
_STACK_DECL = re.compile(
    r"(\d{1,2})\s+stack(?:s)?\s+(?:di\s+)?(sbilanciamento|stordimento|storpiatura\s+\w+|ustione|avvelenamento|"
    r"incendio|congelamento)", re.IGNORECASE)
_PREPARAZIONE = re.compile(r"\bpreparazione\b", re.IGNORECASE)
_DIFESA_NULLA = re.compile(r"\bdifesa\s+nulla\b", re.IGNORECASE)
# Fast constructors of the state's frozen dataclasses (state.maker): the step builds several per post.
_Incoming = maker(Incoming)
_Hit = maker(Hit)
_DueDamage = maker(DueDamage)
# The roots of the fold's state (the first GuidaState, a fighter's first Fighter) are built by maker too: an instance
# made by the dataclass __init__ keeps its attributes inline, and the first evolve() that copies its __dict__ makes it
# a split dict, copied split ever after; CPython 3.11 cannot specialise attribute reads on split dicts (every
# `f.pv`, `state.fighters` would take the slow generic path). A maker's dict is a plain one, and its copies too.
_GuidaState = maker(GuidaState)
_Fighter = maker(Fighter)
ONE = Fraction(1)
HALF = Fraction(1, 2)
DAMAGE_KINDS = {"normale", "puro", "semi-puro", "semipuro", "aggiuntivo", "ambientale", "cura"}


# --- initial state --------------------------------------------------------------------------------

def initial_state(thread: Thread, registry: Registry, settings: dict[str, Any]) -> GuidaState:
    fighters: dict[str, Fighter] = {}
    aliases: dict[str, str] = {}
    for name, ch in registry.characters.items():
        fighters[name] = _fighter_from_registry(name, ch)
        aliases[name.lower()] = name
        if ch.player:
            aliases.setdefault(ch.player.lower(), name)
    return _GuidaState(settings=frozen_map(settings), registry=registry, fighters=frozen_map(fighters),
                       aliases=frozen_map(aliases))


def canon_stats(stats: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Schemas often write "Resistenza" for Costituzione (Resistenza = Livello Totale di Costituzione)."""
    if "Costituzione" not in stats and "Resistenza" in stats:
        stats = dict(stats)
        stats["Costituzione"] = stats["Resistenza"]
    return stats


def _fighter_from_registry(name: str, ch: Character | None) -> Fighter:
    if ch is None:
        return _Fighter(name=name, stacks=S.StackSet(name))
    pv = ch.resources.get("PV")
    pe = ch.resources.get("PE")
    return _Fighter(
        name=name,
        pv_max=(pv.max or pv.current) if pv else None,
        pe_max=(pe.max or pe.current) if pe else None,
        stats=frozen_map(canon_stats({k: (s.base, s.bonus) for k, s in ch.stats.items()})),
        stacks=S.StackSet(name), player=ch.player,
    )


# --- step -----------------------------------------------------------------------------------------

def step(state: GuidaState, post: Post) -> tuple[GuidaState, list[Verdict]]:
    """One post. Master posts state rulings; Game-Master dice posts complete the player post they answer."""
    if post.role == "master":
        return _master(state, post)
    if post.role == "gm_bot":
        prev = state.extra.get("before_last")
        last_post = state.extra.get("last_post")
        if post.rolls and prev is not None and last_post is not None and post.answers in (None, last_post.id):
            # Forumotion: the forum's dice arrive in a separate post; re-read the answered post with them
            merged = replace(last_post, rolls=last_post.rolls + post.rolls)  # a history Post: the real replace
            return _player(prev, merged, {"last_post": merged})
        return evolve(state, posts=state.posts + 1), []
    return _player(state, post, {"before_last": state, "last_post": post})


def character_of(state: GuidaState, post: Post) -> str:
    """Post.character, else the schema's character, else the author (through the registry's players)."""
    name = post.character or (post.schema.character if post.schema else None)
    if name:
        return state.aliases.get(name.lower(), name)
    return state.aliases.get(post.author.lower(), post.author)


def _resolve_name(state: GuidaState, name: str | None) -> str | None:
    if not name:
        return None
    key, stripped = _name_keys(name)
    return state.aliases.get(key, stripped)


@lru_cache(maxsize=4096)
def _name_keys(name: str) -> tuple[str, str]:
    """(alias key, name as written without spaces around): the same few names come back in every label."""
    stripped = name.strip()
    return stripped.lower(), stripped


class _Post:
    """Mutable scratchpad of one step; the step returns immutable state built from it."""

    __slots__ = ("state", "post", "name", "verdicts", "fighters", "incoming", "hits", "new_incoming", "spese_now",
                 "aree", "reazioni", "own")

    def __init__(self, state: GuidaState, post: Post, name: str):
        self.state = state
        self.post = post
        self.name = name
        self.verdicts: list[Verdict] = []
        self.fighters: dict[str, Fighter] = state.fighters.copy()  # a mappingproxy's copy is its dict's: one block
        self.incoming: list[Incoming] = list(state.incoming)
        self.hits: list[Hit] = list(state.hits)
        self.new_incoming: list[Incoming] = []
        self.spese_now: tuple[Expense, ...] = ()  # costs of the techniques the poster uses in this post
        self.aree: tuple[AR.Area, ...] = state.aree  # live Aree di Controllo Espansive
        self.reazioni: set[str] | None = None  # attacks whose Sbalzo a Reazione riuscita met (no Danni Ambientali)
        # the poster's Fighter as the Registro rebuilt it: made in this step and held by nothing outside it, so the
        # step may still set its fields in place (_set_own) while it is p.fighters[name]
        self.own: Fighter | None = None

    def v(self, *args: Any, **kw: Any) -> None:
        self.verdicts.append(verdict(*args, **kw))

    @property
    def me(self) -> Fighter:
        return self.fighters[self.name]

    @me.setter
    def me(self, f: Fighter) -> None:
        self.fighters[self.name] = f


def _player(state: GuidaState, post: Post, extra: dict[str, Any]) -> tuple[GuidaState, list[Verdict]]:
    """A player's post; `extra` (a fresh dict, kept) goes into the new state's `extra` (what a Game-Master dice
    post needs)."""
    # character_of, inlined (once per post)
    name = post.character or (post.schema.character if post.schema else None)
    name = state.aliases.get(name.lower(), name) if name else state.aliases.get(post.author.lower(), post.author)
    p = _Post(state, post, name)
    if name not in p.fighters:
        p.fighters[name] = _fighter_from_registry(name, state.registry.characters.get(name))
    aliases = state.aliases
    if post.author.lower() not in aliases or name.lower() not in aliases:
        aliases = frozen_map({**aliases, post.author.lower(): aliases.get(post.author.lower(), name),
                              name.lower(): name})

    order = state.order
    last = state.last
    if name in order:
        # the common case (the next in the cycle) needs no call; anything else goes to _turn_order
        if last is not None and (last == name or last not in order
                                 or order[(order.index(last) + 1) % len(order)] != name):
            _turn_order(p, order)
    else:
        order = order + (name,)  # a newcomer: _turn_order has nothing to say

    f = p.fighters[name]
    turn = f.turn + 1
    if post.rolls and state.registry.techniques:
        # costs of the techniques used: read by the Registro (this post's or the next), not by the new turn
        p.spese_now = _expenses_used(p)
    if f.stacks.entries or not f.stats or post.schema is None:
        f = evolve(f, turn=turn, last_post=post.id, stacks=S.expire_at(f.stacks, turn - 1))
        p.fighters[name] = f
        if f.stacks.entries:
            _fase_iniziale_stacks(p)
        _schema(p)
    else:
        # nothing before the Registro reads the new turn (no Stacks, the reference stats are known): the Registro's
        # new Fighter carries it, one copy instead of two
        _schema(p, {"turn": turn, "last_post": post.id})
    if p.aree:
        _aree_fase_iniziale(p)
    if p.hits or post.damage:
        _damage_calcs(p)
    _rolls(p)
    if p.reazioni:
        p.hits = [evolve(h, reazione=True) if h.attack.id in p.reazioni and h.resolved_in == post.id else h
                  for h in p.hits]
    if p.aree:
        _aree_dentro(p)

    left = []  # the actions still waiting for others (a loop: no comprehension frame for a short list)
    for a in p.incoming:
        if a.target != name:
            left.append(a)
    incoming = tuple(left + p.new_incoming)
    # every GuidaState field in order (as evolve(state, ...) would give, without copying and updating a dict)
    new = _GuidaState(state.settings, state.registry, MappingProxyType(p.fighters), order, name, incoming,
                      tuple(p.hits), state.rulings, state.posts + 1, aliases,
                      MappingProxyType(extra if state.extra.keys() <= extra.keys() else {**state.extra, **extra}),
                      p.aree)
    return new, p.verdicts


def _turn_order(p: _Post, order: tuple[str, ...]) -> None:
    """`turn.out_of_turn`: once everyone has posted, turns follow the order of first appearance."""
    last = p.state.last
    name = p.name
    if not p.state.settings.get("ordine_turni", True) or last is None or name not in order:
        return
    if last == name:
        p.verdicts.append(verdict("turn.out_of_turn", p.post.id, f"{name} ha postato due turni di seguito.", P_TURNI,
            expected="un altro personaggio", found=name))
        return
    expected = order[(order.index(last) + 1) % len(order)] if last in order else None
    if expected and expected != name:
        p.verdicts.append(verdict("turn.out_of_turn", p.post.id,
            f"Dopo {last} toccava a {expected}, non a {name}.", P_TURNI, expected=expected, found=name))


# --- Fase Iniziale --------------------------------------------------------------------------------

def _fase_iniziale_stacks(p: _Post) -> None:
    """Type-4 damage and decay at the start of the turn (stacks.fase_iniziale); the damage goes to the Registro."""
    f = p.fighters[p.name]
    if not any(e.tipo in (3, 4) for e in f.stacks.entries):
        return
    fi = S.fase_iniziale(f.stacks, f.turn, _veleni(p.state.registry))
    due = list(f.due)
    for d in fi.damages:
        due.append(_DueDamage(d.amount, "PV", f.name, d.steps[0] if d.steps else d.kind, p.post.id, "motore"))
    costr = tuple(c for c in f.costrizioni if c not in fi.broken)
    p.fighters[p.name] = evolve(f, stacks=fi.stacks, due=tuple(due), costrizioni=costr,
                   costrizione=f.costrizione if costr else None, allentamento=f.allentamento if costr else 0)
    for name, cond, lost in fi.decayed:
        p.verdicts.append(verdict("outcome.stacks", p.post.id, f"Fase Iniziale: {f.name} perde {lost} Stack di {name}.",
            "Condizioni Fisiche › Stack Tipo-4: Stack Condizionate", found=lost, details={"stack": name}))


def _veleni(registry: Registry) -> dict[str, S.Veleno]:
    out: dict[str, S.Veleno] = {}
    for name, t in registry.techniques.items():
        try:
            v = S.veleno_from_extra(name, t.extra)
        except T.MechanicsError:
            v = None
        if v:
            out[name] = v
    return out


def _schema(p: _Post, changes: dict[str, Any] | None = None) -> None:
    """The post's schema and Registro. `changes`: other fields of the poster's Fighter to set with them (only with a
    schema)."""
    post, f = p.post, p.fighters[p.name]
    schema = post.schema
    if schema is None:
        p.verdicts.append(verdict("schema.missing_part", post.id, "Il post non ha lo schema: mancano link alla scheda, PV/PE, "
            "Statistiche e Registro.", P_SCHEMA, expected=["sheet_url", "PV", "PE", "stats", "registro"], found=None))
        _apply_due_without_registro(p)
        return
    if schema.missing:
        names = {"sheet_url": "link alla Scheda", "PV": "Punti Vita", "PE": "Punti Energia",
                 "stats": "Statistiche", "registro": "Registro"}
        if "registro" in schema.missing and schema.registro is not None:
            # a Registro was written, but a change in it could not be read (docs/history-format.md)
            names["registro"] = "una variazione leggibile nel Registro (una riga non è stata capita)"
        p.verdicts.append(verdict("schema.missing_part", post.id,
            "Nello schema manca: " + ", ".join(names.get(m, m) for m in schema.missing) + ".",
            P_SCHEMA, expected=list(schema.missing), found=None))
    if changes is None:
        changes = {}  # applied with the Registro's own, in one new Fighter
    if schema.stats:
        written = {}  # a loop: no comprehension frame for a handful of stats
        for k, s in schema.stats.items():
            written[k] = (s.base, s.bonus)
        if "Resistenza" in written:
            written = canon_stats(written)
        stats = f.stats
        if not stats:
            # the first schema is the reference; the engine adds the maluses it tracks from then on
            stats = frozen_map({k: (b, bonus - sum(d for lab, d in _maluses(f, k))) for k, (b, bonus) in written.items()})
            changes["stats"] = stats
        if written != f.schema_stats:  # most schemas repeat the last one: keep the same mapping
            changes["schema_stats"] = frozen_map(written)
    pv = schema.resources.get("PV")
    pe = schema.resources.get("PE")
    if pv and pv.max:
        changes["pv_max"] = pv.max
    if pe and pe.max:
        changes["pe_max"] = pe.max
    _registro(p, pv.current if pv else None, pe.current if pe else None, changes)


def _maluses(f: Fighter, stat: str) -> list[tuple[str, int]]:
    from .checks import stat_maluses
    return stat_maluses(f, stat)


def _expenses_used(p: _Post) -> tuple[Expense, ...]:
    """The registry costs of the techniques the poster uses in this post (each technique once: the two rolls of
    one Contrattacco are one action)."""
    reg = p.state.registry
    aliases = p.state.aliases
    out: list[Expense] = []
    seen: set[str] = set()
    for roll in p.post.rolls:
        tag = roll.tag
        if tag is None or not tag.techniques:
            continue
        if tag.actor and (aliases.get(*_name_keys(tag.actor)) or tag.actor) != p.name:
            continue  # a summon's or an ally's action: not this character's energy
        for n in tag.techniques:
            t = reg.technique(n, p.name, str.lower)  # the poster's own when two characters have one so called
            if t is None or t.name in seen:
                continue
            # a technique with only an upkeep ("5 PE a turno") costs it in the turn it is used (docs/registry.md)
            cost = t.cost or t.extra.get("mantenimento")
            if not cost or not isinstance(cost, dict):
                continue
            seen.add(t.name)
            for res, amount in cost.items():
                res = str(res).upper()
                if res in ("PE", "PV") and isinstance(amount, int) and amount > 0:
                    out.append(Expense(t.name, res, amount, p.post.id))
    return tuple(out)


def _settle_expenses(p: _Post, entries: tuple[Any, ...], used: set[int]) -> tuple[tuple[Expense, ...], dict[str, int]]:
    """Match the costs due (those of the last post, then this post's) against the Registro's entries. A cost of an
    earlier post not listed now is registro.missing_expense; this post's may still go in the next Registro.
    Returns the costs still pending and, per resource, what the missing ones take (negative)."""
    post, f = p.post, p.fighters[p.name]
    pending: list[Expense] = []
    missing: dict[str, int] = {}
    for e in f.spese + p.spese_now:
        want = -e.amount
        name = e.technique.lower()
        idx = next((i for i, x in enumerate(entries) if i not in used and x.resource == e.resource
                    and x.amount == want and (name in x.label.lower() or name in x.raw.lower())), None)
        if idx is None:
            idx = next((i for i, x in enumerate(entries) if i not in used and x.resource == e.resource
                        and x.amount == want and not x.label), None)
        if idx is not None:
            used.add(idx)
        elif e.post == post.id:
            pending.append(e)
        else:
            missing[e.resource] = missing.get(e.resource, 0) + want
            p.verdicts.append(verdict("registro.missing_expense", post.id,
                f"Il Registro non riporta la spesa di {e.technique} (usata nel post {e.post}): {want} {e.resource}.",
                P_INIZIALE, expected=want, found=None,
                details={"technique": e.technique, "resource": e.resource, "used_in": e.post}))
    return tuple(pending), missing


def _apply_due_without_registro(p: _Post) -> None:
    f = p.fighters[p.name]
    spese, missing = _settle_expenses(p, (), set()) if f.spese or p.spese_now else ((), {})
    for d in f.due:
        if d.amount is not None:
            p.verdicts.append(verdict("registro.missing_damage", p.post.id,
                f"Il Registro non riporta i {d.amount} {d.resource} subiti da {d.attacker}"
                + (f" [{d.technique}]" if d.technique else "") + ".",
                P_INIZIALE, expected=-d.amount, found=None, details={"attack_post": d.attack_post}))
    pv = f.pv
    if pv is not None:
        pv -= sum(d.amount for d in f.due if d.amount is not None and d.resource == "PV")
        pv += missing.get("PV", 0)
    pe = f.pe + missing.get("PE", 0) if f.pe is not None else None
    p.fighters[p.name] = evolve(f, pv=pv, pe=pe, due=(), spese=spese)


def _registro(p: _Post, pv_now: int | None, pe_now: int | None, changes: dict[str, Any] | None = None) -> None:
    """The sum rule of "Struttura dei Turni" and every damage the character took (RULINGS #2). `changes` are
    other fields of the poster's Fighter (from the schema) to set with the Registro's."""
    post, f = p.post, p.fighters[p.name]
    reg = post.schema.registro if post.schema else None
    entries = reg or ()
    missing_known = 0
    used: set[int] = set()
    if f.due:
        for d in f.due:
            if d.amount is None:
                p.verdicts.append(verdict("ruling.needed", post.id,
                    f"Danno di {d.attacker}" + (f" [{d.technique}]" if d.technique else "")
                    + " sconosciuto: nessun numero dal registro né dal calcolo dell'attaccante.",
                    P_DANNI, details={"attack_post": d.attack_post}))
                continue
            want = -d.amount if d.amount else 0
            res = d.resource
            idx = None
            for i, e in enumerate(entries):
                if e.resource == res and e.amount == want and i not in used:
                    idx = i
                    break
            if idx is not None:
                used.add(idx)
                continue
            if d.amount == 0:
                continue
            keys = (d.technique.lower(), d.attacker.lower()) if d.technique and d.attacker else tuple(
                [k.lower() for k in (d.technique, d.attacker) if k])
            near = None
            for i, e in enumerate(entries):
                if i not in used and e.resource == res:
                    label, raw = e.label.lower(), e.raw.lower()
                    for k in keys:
                        if k in label or k in raw:
                            near = i
                            break
                    if near is not None:
                        break
            if near is not None:
                used.add(near)
                missing_known += want - entries[near].amount  # the engine keeps its own number
                p.verdicts.append(verdict("registro.missing_damage", post.id,
                    f"Il Registro riporta {entries[near].amount} {res} per "
                    + (f"la cura di {d.attacker}, ma la cura da registrare è +{want}." if want > 0 else
                       f"il colpo di {d.attacker}, ma il danno da registrare è {want}."),
                    P_INIZIALE, expected=want, found=entries[near].amount,
                    details={"attack_post": d.attack_post, "basis": d.basis}))
            else:
                missing_known += want
                p.verdicts.append(verdict("registro.missing_damage", post.id,
                    f"Il Registro non riporta " + ("la cura" if want > 0 else "il danno") + f" di {d.attacker}"
                    + (f" [{d.technique}]" if d.technique else "")
                    + f": {signed(want)} {res}.", P_INIZIALE, expected=want, found=None,
                    details={"attack_post": d.attack_post, "basis": d.basis}))
    missing_pe = 0
    spese: tuple[Expense, ...] = ()
    if f.spese or p.spese_now:
        spese, missing_spese = _settle_expenses(p, entries, used)
        missing_known += missing_spese.get("PV", 0)
        missing_pe = missing_spese.get("PE", 0)
    # sum rule: PV/PE now − changes listed = PV/PE written in the previous turn
    sums: dict[str, int] = {}
    for e in entries:
        sums[e.resource] = sums.get(e.resource, 0) + e.amount
    sum_pv, sum_pe = sums.get("PV", 0), sums.get("PE", 0)
    if reg is not None:
        prev = f.pv_written
        if pv_now is not None and prev is not None:
            expected = prev + sum_pv
            # a value that is right but whose Registro only lacks the damage (or the expense) is
            # registro.missing_damage (registro.missing_expense) alone
            if expected != pv_now and not (missing_known and pv_now == expected + missing_known):
                _sum_mismatch(p, "PV", pv_now, prev, sums, "registro.pv_mismatch")
        prev = f.pe_written
        if pe_now is not None and prev is not None:
            expected = prev + sum_pe
            if expected != pe_now and not (missing_pe and pe_now == expected + missing_pe):
                _sum_mismatch(p, "PE", pe_now, prev, sums, "registro.pe_mismatch")
    # the engine's own view: its previous value + the Registro as written + what the Registro left out
    if f.pv is None or reg is None:
        new_pv = pv_now if pv_now is not None else (
            f.pv - sum(d.amount for d in f.due if d.amount) if f.pv is not None else None)
    else:
        new_pv = f.pv + sum_pv + missing_known
        pv_max = changes.get("pv_max", f.pv_max) if changes else f.pv_max
        if pv_max is not None and new_pv > max(pv_max, f.pv) and p.state.settings.get("cure_entro_il_massimo", True):
            new_pv = max(pv_max, f.pv)  # cures never lift PV above the maximum (ours: `cure_entro_il_massimo`)
    if f.pe is None or reg is None:
        new_pe = pe_now if pe_now is not None else f.pe
    else:
        new_pe = f.pe + sum_pe + missing_pe
    pv_written = pv_now if pv_now is not None else f.pv_written
    pe_written = pe_now if pe_now is not None else f.pe_written
    # every change in one dict (the caller's own, made for this call): evolve_with takes it as it is, no keyword
    # arguments packed and merged again
    if changes is None:
        changes = {}
    changes["pv"] = new_pv
    changes["pe"] = new_pe
    changes["due"] = ()
    changes["spese"] = spese
    changes["pv_written"] = pv_written
    changes["pe_written"] = pe_written
    p.fighters[p.name] = p.own = evolve_with(f, changes)


def _sum_mismatch(p: _Post, res: str, now: int, prev: int, sums: dict[str, int], code: str) -> None:
    expected = prev + sums.get(res, 0)
    p.verdicts.append(verdict(code, p.post.id,
        f"{res} {now}, ma {res} del turno precedente {prev} con le voci del Registro "
        f"({signed(sums.get(res, 0))}) danno {expected}.", P_INIZIALE, expected=expected, found=now))


# --- damage posted by the attacker ----------------------------------------------------------------

def _technique(reg: Registry, names: tuple[str, ...], owner: str | None = None) -> Technique | None:
    """The first of `names` the registry knows (case ignored), not an armour; `owner`'s own when two characters
    have a technique so called."""
    if not reg.techniques:
        return None
    for n in names:
        t = reg.technique(n, owner, str.lower)
        if t is not None and t.kind != "armatura":
            return t
    return None


def _bonus_statistica(reg: Registry, attacker: str, tech: Technique | None) -> int | None:
    """Bonus Statistica (Regolamento Tecniche, not in the text): the technique's, else the character's."""
    if tech is None and attacker not in reg.characters:
        return None  # nothing to read it from
    for extra in ((tech.extra if tech else {}), (reg.characters[attacker].extra if attacker in reg.characters else {})):
        v = extra.get("bonus_statistica")
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, dict) and tech is not None:
            stat = tech.extra.get("statistica")
            if stat in v and isinstance(v[stat], int):
                return v[stat]
    return None


def _armatura(reg: Registry, target: str, spent: bool = False) -> D.Armatura | None:
    """The Armatura the target wears (`spent`: it gave way earlier in this turn and protects no more)."""
    ch = reg.characters.get(target)
    if ch is None:
        return None
    for n in ch.techniques:
        t = reg.technique(n, ch.name, str.lower)
        # only an armour the registry marks as worn ("attiva"): owning one does not mean wearing it
        if t is not None and t.kind == "armatura" and t.potenziale is not None and t.extra.get("attiva"):
            return D.Armatura(t.potenziale, t.name, bool(t.extra.get("blocca_puri")), attiva=not spent)
    return None


def _stated_all(calc: DamageCalc) -> dict[str, float | None]:
    """`_stated` for every name of the calculation at once: lower-cased name → its first term's value."""
    out: dict[str, float | None] = {}
    for t in calc.terms:
        key = t.name.lower()
        if key not in out:
            out[key] = t.value if math.isfinite(t.value) else None
    return out


def _stated(calc: DamageCalc, name: str) -> float | None:
    for t in calc.terms:
        if t.name.lower() == name.lower():
            return t.value if math.isfinite(t.value) else None
    return None


def _evaluate(calc: DamageCalc) -> int | None:
    """The value of a written calculation, left to right, rounding down once at the end."""
    if calc.value is not None:
        # the scraper's reading of the written arithmetic (brackets, halved Armatura, breakdowns), rounded down once
        return math.floor(calc.value) if math.isfinite(calc.value) else None
    if not calc.terms:
        return None
    return _evaluate_terms(tuple([(t.op, t.value) for t in calc.terms]))


@lru_cache(maxsize=2048)
def _evaluate_terms(terms: tuple[tuple[str, float], ...]) -> int | None:
    """`_evaluate` of (op, value) pairs (cached: exact Fraction arithmetic is slow and calculations repeat)."""
    value = Fraction(0)
    for op, v in terms:
        if not math.isfinite(v):
            return None
        x = Fraction(v).limit_denominator(1000)
        if op == "+":
            value += x
        elif op == "-":
            value -= x
        elif op == "*":
            value *= x
        elif op == "/" and x:
            value /= x
    return int(value // 1)


@lru_cache(maxsize=2048)
def _formula(kind: str, pot: int | None, res: int | None, potenziale: int | None, bonus: int | None,
             mult_num: int, mult_den: int, reasons: str, armatura: D.Armatura | None, minimo: int,
             blocca_puri: str = "meta_potenziale", categoria: str | None = None, dado: int | None = None,
             da_difesa: bool = False) -> D.DamageResult | None:
    """The damage.py formula for these numbers (cached: fights repeat the same numbers turn after turn; the
    multiplier comes as numerator and denominator, cheaper to hash than a Fraction)."""
    mult = Fraction(mult_num, mult_den)
    mults = [D.Multiplier(mult, reasons)] if mult != 1 else []
    if kind == "puro" and potenziale is not None and bonus is not None:
        return D.danno_puro(potenziale, bonus, armatura=armatura, multipliers=mults, armatura_blocca_puri=blocca_puri)
    if kind == "semi-puro" and None not in (pot, res, potenziale, bonus):
        return D.danno_semipuro(pot, res, potenziale, bonus, armatura=armatura, multipliers=mults,  # type: ignore[arg-type]
                                danno_minimo=minimo, armatura_blocca_puri=blocca_puri)
    if kind == "cura":  # never a damage formula, whatever numbers are known
        return D.cura_principale(potenziale, bonus, armatura=armatura) if None not in (potenziale, bonus) else None
    if kind == "ambientale":
        # Potenziale D.A. from the generating attack's die and category; never critical (RULINGS #3 multipliers
        # that are not critical still apply: ties, Protezione)
        if categoria is None or dado is None or bonus is None or res is None:
            return None
        return D.danno_ambientale(categoria, dado, bonus, res, da_difesa=da_difesa, armatura=armatura,
                                  multipliers=[m for m in mults if not m.critical], danno_minimo=minimo)
    if pot is not None and res is not None:
        return D.danno_normale(pot, res, armatura=armatura, multipliers=mults, aggiuntivo=kind == "aggiuntivo",
                               danno_minimo=minimo)
    return None


def compute_damage(state: GuidaState, hit: Hit, calc: DamageCalc | None,
                   kind: str | None = None) -> tuple[int | None, list[str], str | None]:
    """The engine's damage for a hit: registry first, then the numbers stated in the calculation (RULINGS #7).
    `kind` forces the damage type (a Danno Ambientale line of the hit). Returns (amount or None, explanation
    steps, basis)."""
    target = state.fighters.get(hit.attack.target)
    spent = target is not None and target.armatura_ceduta == hit.resolved_in
    amount, steps, basis, _, _, _ = _compute_damage(state, hit, calc, kind, spent)
    return amount, list(steps), basis


def damage_of(state: GuidaState, hit: Hit, calc: DamageCalc | None, kind: str | None = None,
              armatura_spent: bool = False) -> tuple[int | None, list[str], str | None, str | None]:
    """`compute_damage`, with the target's Armatura already spent in this turn when `armatura_spent`; the 4th
    value is the Armatura's outcome ("regge", "cede" or None)."""
    amount, steps, basis, armour, _, _ = _compute_damage(state, hit, calc, kind, armatura_spent)
    return amount, list(steps), basis, armour


# Damages of this registry and settings by everything else they depend on (hits repeat the same numbers turn after
# turn). One registry at a time, held with its map: a replay of another registry starts a new map, and a step that
# took the map before keeps writing into its own.
_DamageNow = tuple[int | None, Any, str | None, str | None, str | None, str | None]
_DAMAGE_MEMO: list[tuple[Any, Any, dict[tuple[Any, ...], _DamageNow]]] = [
    (None, None, {})]
_NAME_VALUE = attrgetter("name", "value")


def _compute_damage(state: GuidaState, hit: Hit, calc: DamageCalc | None, kind: str | None = None,
                    armatura_spent: bool = False) -> _DamageNow:
    """damage_of with the steps as they come (a tuple or list, not copied: read-only)."""
    atk = hit.attack
    target = state.fighters.get(atk.target)
    if target is None:
        res = None
    elif target.stacks.entries or target.conditions or target.costrizioni:
        res = live_stat(target, "Costituzione")
    else:  # live_stat with nothing to subtract (stat_maluses' own test): the reference Livello Totale
        ref = target.stats.get("Costituzione")
        res = ref[0] + ref[1] if ref is not None else None
    pf, mult = atk.potenziale_factor, hit.multiplier
    # the die face, Mira and Contrattacco enter the Danno Ambientale (never critical) and the counter's damage
    key = (atk.techniques, atk.attacker, atk.target, 1 if pf is ONE else (pf.numerator, pf.denominator), atk.multi,
           atk.n_targets, res, None if calc is None else (calc.kind, tuple(map(_NAME_VALUE, calc.terms))),
           1 if mult is ONE else (1, 2) if mult is HALF else (mult.numerator, mult.denominator), hit.reasons, kind,
           armatura_spent, atk.face, atk.mira, atk.generic, atk.counter, atk.potenziale_mod)
    memo = _DAMAGE_MEMO[0]
    if memo[0] is not state.registry or memo[1] is not state.settings:
        memo = _DAMAGE_MEMO[0] = (state.registry, state.settings, {})
    try:
        done = memo[2].get(key)
    except TypeError:  # something unhashable in a hand-built history: no memo
        return _damage_now(state, hit, calc, res, kind, armatura_spent)
    if done is None:
        if len(memo[2]) >= 4096:
            memo[2].clear()
        done = memo[2][key] = _damage_now(state, hit, calc, res, kind, armatura_spent)
    return done


def _damage_now(state: GuidaState, hit: Hit, calc: DamageCalc | None, res: int | None, kind: str | None,
                armatura_spent: bool) -> _DamageNow:
    """(amount — negative for a cure —, steps, basis, Armatura outcome, damage kind, rule paragraph of the formula)."""
    reg = state.registry
    atk = hit.attack
    tech = _technique(reg, atk.techniques, atk.attacker)
    if kind is None and tech is not None:
        for cand in (tech.extra.get("danno"), tech.type):
            if isinstance(cand, str) and cand.lower() in DAMAGE_KINDS:
                kind = cand.lower()
                break
    if kind is None and calc is not None and calc.kind in DAMAGE_KINDS:
        kind = calc.kind
    kind = (kind or "normale").replace("semipuro", "semi-puro")
    potenziale = tech.potenziale if tech else None
    bonus = _bonus_statistica(reg, atk.attacker, tech)
    basis = "motore"
    area_steps: list[str] = []
    if potenziale is not None and tech is not None and tech.extra.get("area_statica_m") is not None:
        potenziale, area_steps = _area_statica(tech, potenziale)
        if potenziale is None:
            return None, area_steps, None, None, kind, None
    if potenziale is not None and atk.potenziale_mod:
        potenziale, why = _potenziale_modificato(tech, potenziale, atk.potenziale_mod, "Sbilanciamento")
        area_steps = [*area_steps, why]
        if potenziale is None:
            return None, tuple(area_steps), None, None, kind, None
    if potenziale is not None and atk.potenziale_factor != 1:
        potenziale = int(potenziale * atk.potenziale_factor)
    pot = (potenziale + bonus) if potenziale is not None and bonus is not None else None
    if atk.multi == "multipli" and pot is not None:
        pot += T.MULTIPLI_POTENZA_PER_BERSAGLIO * (atk.n_targets - 1)
    if calc is not None and calc.terms and (pot is None or potenziale is None or res is None):
        stated = _stated_all(calc)
        if pot is None and stated.get("potenza") is not None:
            pot, basis = int(stated["potenza"]), "dichiarato"
        if potenziale is None and stated.get("potenziale") is not None:
            potenziale, basis = int(stated["potenziale"]), "dichiarato"
            if bonus is None and stated.get("bonus statistica") is not None:
                bonus = int(stated["bonus statistica"])
            if pot is None and bonus is not None:
                pot = potenziale + bonus
        if res is None and stated.get("resistenza") is not None:
            res, basis = int(stated["resistenza"]), "dichiarato"
        if bonus is None and kind == "ambientale" and stated.get("bonus statistica") is not None:
            bonus, basis = int(stated["bonus statistica"]), "dichiarato"
    minimo = int(state.settings.get("danno_minimo", 0) or 0)
    mult = hit.multiplier
    categoria = dado = None
    if kind == "ambientale":
        # never critical: the Fattore Mira doubling of the hit does not reach the Danno Ambientale
        mult = _without_critical(hit)
        categoria = tech.category if tech is not None else None
        dado = atk.face
    try:
        r = _formula(kind, pot, res, potenziale, bonus, mult.numerator, mult.denominator, "; ".join(hit.reasons),
                     _armatura(reg, atk.target, armatura_spent), minimo,
                     str(state.settings.get("armatura_blocca_puri", "meta_potenziale")),
                     categoria, dado, atk.counter)
    except T.MechanicsError as exc:
        return None, (str(exc),), None, None, kind, None
    if r is None:
        return None, tuple(area_steps), None, None, kind, None
    amount = -r.amount if r.cura else r.amount  # a cure adds PV: negative as a damage to record
    return amount, tuple(area_steps) + tuple(r.steps) if area_steps else r.steps, basis, r.armatura, kind, r.rule


def _potenziale_modificato(tech: Technique | None, potenziale: int, mods: int, why: str) -> tuple[int | None, str]:
    """A Potenziale lowered by `mods` modificatori (Sbilanciamento): one modificatore is worth the technique's
    registry `extra.modificatore` points (Regolamento Tecniche); without it the Potenziale is unknown (None)."""
    head = f"{why}: Potenziale {mods:+d} modificatori"
    step = tech.extra.get("modificatore") if tech is not None else None
    if not isinstance(step, int) or isinstance(step, bool):
        return None, head + " (il valore di un modificatore è del Regolamento Tecniche: registro `extra.modificatore`)"
    lowered = max(potenziale + mods * step, 0)
    return lowered, head + f" × {step} = Potenziale {potenziale} → {lowered}"


def _area_statica(tech: Technique, potenziale: int) -> tuple[int | None, list[str]]:
    """Area Statica (registry `extra.area_statica_m`, ours): "le Dimensioni dell'Area riducono il Potenziale della
    Tecnica" by modificatori; how many points one modificatore is comes from the Regolamento Tecniche (registry
    `extra.modificatore`), else the Potenziale is unknown (the master or the written calculation decides)."""
    try:
        mods = AR.malus_statico(float(tech.extra["area_statica_m"]))
    except (T.MechanicsError, TypeError, ValueError) as exc:
        return None, [f"Area Statica di {tech.name}: {exc}"]
    head = f"Area Statica di {tech.name} ({tech.extra['area_statica_m']} m): Potenziale {mods:+d} modificatori"
    if not mods:
        return potenziale, [head]
    step = tech.extra.get("modificatore")
    if not isinstance(step, int) or isinstance(step, bool):
        return None, [head + " (il valore di un modificatore è del Regolamento Tecniche: registro `extra.modificatore`)"]
    reduced = max(potenziale + mods * step, 0)
    return reduced, [head + f" × {step} = Potenziale {potenziale} → {reduced}"]


def _without_critical(hit: Hit) -> Fraction:
    """The hit's multiplier without the Colpo Critico of the Fattore Mira (Danni Ambientali are never critical)."""
    atk = hit.attack
    mult = hit.multiplier
    if atk.face is not None and not atk.generic:
        part = atk.mira or "corpo"
        mira = "arti" if part in ("arti", "braccia", "braccio", "gambe", "gamba") else part
        eff = _mira_effects(mira, atk.face, None)
        if eff is not None and eff.multiplier is not None and eff.multiplier.critical:
            mult /= eff.multiplier.factor
    return mult


# the lowest die face that can make a Colpo Critico of the Fattore Mira (head ≥ 9, body 12)
_CRITICO_MIN_FACCIA = min(T.MIRA_TESTA_CRITICO_FACCIA, T.MIRA_CORPO_CRITICO_FACCIA)
# Lines that come on top of a hit's own calculation, never in its place (when the hit has another line).
_EXTRA_KINDS = frozenset({"ambientale", "aggiuntivo"})
# Lines that need no hit of the poster: cures and regenerations.
_NO_HIT_KINDS = frozenset({"cura", "rigenerazione"})


class _LazyDetails:
    """The details of a damage verdict, built on first use and then shared by the hit's verdicts."""

    __slots__ = ("post", "steps", "hit", "value")

    def __init__(self, post: str, steps: Any, hit: Hit) -> None:
        self.post, self.steps, self.hit, self.value = post, steps, hit, None

    def get(self) -> dict[str, Any]:
        if self.value is None:
            h = self.hit
            m = h.multiplier
            self.value = {"attack_post": self.post, "steps": list(self.steps),
                          "multiplier": "1" if m is ONE else "1/2" if m is HALF else str(m), "reasons": list(h.reasons)}
        return self.value


def _damage_calcs(p: _Post) -> None:
    """The attacker's Calcolo dei Danni in its Fase Iniziale, for every hit resolved since its last turn; the
    Danno Ambientale / Aggiuntivo lines that come with them; lines for which no hit is pending."""
    post = p.post
    name = p.name
    mine: list[Hit] = []
    keep: list[Hit] = []
    for h in p.hits:
        (mine if h.attack.attacker == name else keep).append(h)
    if not mine and not post.damage:
        return
    calcs = list(post.damage)
    extras = False
    for c in calcs:
        if c.kind in _EXTRA_KINDS:
            extras = True
            break
    regen = [c for c in calcs if c.kind == "cura" and _RIGENERAZIONE.match(c.raw)]
    if regen:
        calcs = [c for c in calcs if c not in regen]
    for h in mine:
        atk = h.attack
        where = ""
        if atk.cura:
            # a Cura's own line first (the Calcolo delle Cure), else any line naming it
            calc = _match_calc([c for c in calcs if c.kind == "cura"], atk) or _match_calc(calcs, atk)
            if calc is None and h.calcolo is not None:
                calc = h.calcolo  # written with the Cura itself
                calcs.append(calc)  # removed again just below
                where = f" Il Calcolo delle Cure è scritto con la Cura, nel post {atk.post}."
        elif extras:
            calc = _match_calc([c for c in calcs if c.kind not in _EXTRA_KINDS], atk) or _match_calc(calcs, atk)
        else:
            calc = _match_calc(calcs, atk)
        if calc is not None:
            calcs.remove(calc)
        if h.fermata is not None:
            if calc is not None:
                p.verdicts.append(verdict("damage.no_hit", post.id,
                    f"Calcolo delle Cure su {atk.target}" + (f" [{atk.techniques[0]}]" if atk.techniques else "")
                    + f": la Cura non è andata a segno (fermata da un Contrattacco su Azione Generica nel post "
                    f"{h.fermata}). Non va registrata." + where, T.RULE_CURE, expected=None,
                    found=calc.result if calc.result is not None else _evaluate(calc),
                    details={"raw": calc.raw, "attack_post": atk.post, "fermata": h.fermata}))
            continue
        target = p.fighters.get(atk.target)
        spent = target is not None and target.armatura_ceduta == h.resolved_in
        amount, steps, basis, armour, kind_of, rule_of = _compute_damage(p.state, h, calc, "cura" if atk.cura else None,
                                                                         spent)
        if armour == "cede" and target is not None:
            # "L'Armatura non offrirà protezione per il resto del Turno": the other hits of that turn (the
            # target's, where the hits were resolved)
            p.fighters[atk.target] = evolve(target, armatura_ceduta=h.resolved_in)
        stated = calc.result if calc is not None else None
        if calc is not None and stated is None:
            stated = _evaluate(calc)
        tech = atk.techniques[0] if atk.techniques else None
        # the verdicts below share one details dict; most hits need none
        details = _LazyDetails(atk.post, steps, h)
        if h.ruled is not None:
            amount, basis = h.ruled, "ruling"
        # a cure: the engine keeps it negative (PV the target gains), the player writes what it heals
        cura = (amount is not None and amount < 0) or kind_of == "cura" or (calc is not None and calc.kind == "cura")
        shown = -amount if cura and amount is not None else amount
        if calc is None:
            p.verdicts.append(verdict("damage.missing_calc", post.id,
                (f"Manca il Calcolo delle Cure della Cura andata a segno su {atk.target}" if atk.cura else
                 f"Manca il Calcolo dei Danni del colpo a segno su {atk.target}")
                + (f" [{tech}]" if tech else "") + (f": il motore calcola {shown}." if shown is not None else "."),
                P_DANNI_POST, expected=shown, found=None, details=details.get()))
        elif amount is not None and stated is not None and shown != stated:
            rule, why = rule_of or P_DANNI, ""
            face = atk.face
            # `is not`: _without_critical gives the hit's own multiplier back when no Colpo Critico is in it (a
            # Fraction compared with == is a Python-level call)
            if (h.ruled is None and face is not None and face >= _CRITICO_MIN_FACCIA
                    and _without_critical(h) is not h.multiplier):
                # the Colpo Critico of the Fattore Mira left out: that is the rule to cite
                plain = _compute_damage(p.state, evolve(h, multiplier=_without_critical(h)), calc, None, spent)[0]
                if plain == stated:
                    rule = P_MIRA
                    why = " Manca il Colpo Critico (Fattore Mira): " + "; ".join(
                        r for r in h.reasons if "raddoppiato" in r.lower() or "mira" in r.lower()) + "."
            p.verdicts.append(verdict("damage.miscalculated", post.id,
                ("Cura di " if cura else "Danno a ") + atk.target + (f" [{tech}]" if tech else "")
                + f": {cifra(stated)} dichiarato, {shown} calcolato." + why + where, rule, expected=shown, found=stated,
                details=details.get(),
                assumption="calcolo_dichiarato" if basis == "dichiarato" else None))
        elif amount is None and stated is not None:
            if atk.potenziale_mod and h.ruled is None:
                p.verdicts.append(verdict("ruling.needed", post.id,
                    f"L'Attacco di {atk.attacker} su {atk.target}" + (f" [{tech}]" if tech else "")
                    + f" parte con Stack di Sbilanciamento (Potenziale {atk.potenziale_mod:+d} modificatori): il valore "
                    f"di un modificatore non è nel registro, il master verifica il danno dichiarato ({stated}).",
                    T.RULE_TIPO1, expected=None, found=stated, details=details.get()))
            own = _evaluate(calc)
            # "= -2 → 0 Danni": a calculation below zero written as no damage is no error
            if calc.result is not None and own is not None and own != calc.result and not (own < 0 and calc.result == 0):
                p.verdicts.append(verdict("damage.miscalculated", post.id,
                    f"Il calcolo scritto dà {own}, non {cifra(calc.result)}.", P_DANNI, expected=own, found=calc.result,
                    details=details.get(), assumption="calcolo_dichiarato"))
                stated = own
            amount, basis = (-stated if cura else stated), "dichiarato"
        if amount is None:
            p.verdicts.append(verdict("ruling.needed", post.id,
                f"Danno su {atk.target}" + (f" [{tech}]" if tech else "")
                + ": Potenziale, Bonus Statistica o Resistenza sconosciuti e nessun calcolo scritto.",
                P_DANNI, details=details.get()))
        target = p.fighters.get(atk.target)
        if target is not None and cura and amount is not None and resource_of(calc) == "PV":
            amount = -_cap_cura(p, target, -amount, f"{atk.attacker}" + (f" [{tech}]" if tech else ""), steps,
                                basis, atk.post)
        if target is not None:
            resource = calc.resource if calc is not None else "PV"
            due = target.due + (_DueDamage(amount, resource, atk.attacker, tech, atk.post, basis or "dichiarato"),)
            target = evolve(target, due=due)
            # stacks the attacker declares in its calculation ("2 Stack di Sbilanciamento"); most declare none
            if calc is not None and not atk.cura and (h.applicate or _declared_text(calc.raw) != _NOTHING_DECLARED):
                target = _declared_stacks(p, target, calc, damage=amount, atk=atk, hit=h, kind=kind_of)
            p.fighters[atk.target] = target
    if calcs:
        _extra_calcs(p, mine, calcs)
    if regen:
        _rigenerazioni(p, regen)
    p.hits = keep


def resource_of(calc: DamageCalc | None) -> str:
    return calc.resource if calc is not None else "PV"


def _hit_for(mine: list[Hit], calc: DamageCalc) -> Hit | None:
    """The hit (of this batch) an extra line belongs to: same target (and technique when both name one)."""
    if calc.target is None:
        return mine[0] if len(mine) == 1 else None
    low = calc.target.lower()
    on_target = [h for h in mine if h.attack.target.lower() == low]
    if calc.technique:
        tech = calc.technique.lower()
        named = [h for h in on_target if tech in {t.lower() for t in h.attack.techniques}]
        if named:
            return named[0]
    return on_target[0] if on_target else None


def _extra_calcs(p: _Post, mine: list[Hit], calcs: list[DamageCalc]) -> None:
    """Calculation lines left after every hit took its own: Danni Ambientali (the engine's formula), Danni
    Aggiuntivi (one per target per turn, the strongest), and lines for which no hit is pending (error)."""
    post = p.post
    aggiuntivi: dict[str, list[tuple[DamageCalc, Hit, int | None]]] = {}
    for c in calcs:
        if c.kind in _NO_HIT_KINDS:
            continue
        h = _hit_for(mine, c)
        stated = c.result if c.result is not None else _evaluate(c)
        who = c.target or "?"
        if h is None or c.kind not in _EXTRA_KINDS:
            if h is not None:
                continue  # a second line for a target hit this turn (a breakdown of its calculation): not checked
            p.verdicts.append(verdict("damage.no_hit", post.id,
                f"Calcolo dei Danni su {who}" + (f" [{c.technique}]" if c.technique else "")
                + (f" ({stated})" if stated is not None else "") + ": nessun colpo a segno in attesa di calcolo "
                "(l'Attacco è stato difeso, mancato o già calcolato). Il danno non va registrato.",
                P_DANNI_POST, expected=None, found=stated, details={"raw": c.raw}))
            continue
        if c.kind == "aggiuntivo":
            aggiuntivi.setdefault(h.attack.target, []).append((c, h, stated))
            continue
        atk = h.attack
        if h.reazione:
            # "Se il Valore di Reazione eguaglia o supera quella di Sbalzo: non si subiscono i Danni Ambientali"
            if stated:
                p.verdicts.append(verdict("damage.miscalculated", post.id,
                    f"Danno Ambientale a {atk.target}: {stated} dichiarato, ma la Reazione di {atk.target} allo Sbalzo "
                    f"(post {h.resolved_in}) è riuscita: nessun Danno Ambientale.", T.RULE_REAZIONE, expected=0,
                    found=stated, details={"attack_post": atk.post, "kind": "ambientale", "reazione": h.resolved_in}))
            continue  # nothing to record in the target's Registro
        target = p.fighters.get(h.attack.target)
        amount, steps, basis, armour, _, rule = _compute_damage(
            p.state, h, c, "ambientale", target is not None and target.armatura_ceduta == h.resolved_in)
        steps = list(steps)
        if armour == "cede" and target is not None:
            # the Armatura gave way to the Danno Ambientale: no protection for the rest of that turn
            p.fighters[atk.target] = evolve(target, armatura_ceduta=h.resolved_in)
        details = {"attack_post": atk.post, "steps": steps, "kind": "ambientale"}
        if amount is not None and stated is not None and amount != stated:
            p.verdicts.append(verdict("damage.miscalculated", post.id,
                f"Danno Ambientale a {atk.target}: {stated} dichiarato, {amount} calcolato.",
                rule or T.RULE_AMBIENTALE, expected=amount, found=stated, details=details,
                assumption="calcolo_dichiarato" if basis == "dichiarato" else None))
        if amount is None:
            amount, basis = stated, "dichiarato"
        _due_extra(p, atk, c, amount, basis, "Danno Ambientale")
    for target, items in aggiuntivi.items():
        known = [(c, h, a) for c, h, a in items if a is not None]
        if not known:
            c, h, _ = items[0]
            _due_extra(p, h.attack, c, None, None, "Danno Aggiuntivo")
            continue
        best = D.piu_forte([D.DamageResult(amount=max(a, 0), kind="aggiuntivo", steps=(c.raw,)) for c, _, a in known])
        i_best = next(i for i, (_, _, a) in enumerate(known) if best is not None and max(a, 0) == best.amount)
        c, h, a = known[i_best]
        if len(items) > 1:
            p.verdicts.append(verdict("damage.miscalculated", post.id,
                f"Più Danni Aggiuntivi su {target} nello stesso turno: conta solo il più forte ({a}); scartati "
                f"{[x for j, (_, _, x) in enumerate(known) if j != i_best]}.",
                P_DANNI, expected=a, found=sum(x for _, _, x in known),
                details={"kind": "aggiuntivo", "amounts": [x for _, _, x in known]}))
        _due_extra(p, h.attack, c, a, "dichiarato", "Danno Aggiuntivo")


def _due_extra(p: _Post, atk: Incoming, calc: DamageCalc, amount: int | None, basis: str | None, what: str) -> None:
    """An extra damage of a hit, for the target's next Registro."""
    target = p.fighters.get(atk.target)
    if target is None:
        return
    label = calc.technique or what
    due = target.due + (_DueDamage(amount, calc.resource, atk.attacker, label, atk.post, basis or "dichiarato"),)
    p.fighters[atk.target] = evolve(target, due=due)


def _match_calc(calcs: list[DamageCalc], atk: Incoming) -> DamageCalc | None:
    if not calcs:
        return None
    techs = set(map(str.lower, atk.techniques))
    for c in calcs:
        if c.target and c.target.lower() == atk.target.lower() and (not c.technique or not techs or c.technique.lower() in techs):
            return c
    for c in calcs:
        if c.technique and c.technique.lower() in techs and not c.target:
            return c
    for c in calcs:
        if not c.target and not c.technique:
            return c
    return None


_ACCECATO = re.compile(r"\baccecat[oaie]\b|\baccecamento\b", re.IGNORECASE)
_COSTRIZIONI = tuple(sorted(T.COSTRIZIONE_DESTREZZA, key=len, reverse=True))


def _declared_stacks(p: _Post, target: Fighter, calc: DamageCalc, damage: int | None,
                     atk: Incoming | None = None, hit: Hit | None = None, kind: str | None = None) -> Fighter:
    """The conditions the attacker's calculation reports ("2 Stack di Stordimento", "Accecato", a Costrizione
    effect such as "Blocco Braccia", with its Valore di Costrizione: `_costrizione_hit`). The Calcolo reports, it
    does not apply again: the Stacks the rules gave when the hit landed (`Hit.condizioni`: Fattore Mira, the
    technique's registry `extra.stack`) are compared with the written ones — written and not due →
    `stacks.undue`, due and not written → `damage.missing_condition` — and neither changes the state. Only when
    the registry does not list the technique's own Stacks are the written ones beyond the rules' taken, once, as
    the technique's (`assumption: condizioni_dichiarate`); the hit still decides what may stick (Danno
    Aggiuntivo, Protezione riuscita, Type-2 without damage: stacks.apply)."""
    declared, present = _declared_text(calc.raw)
    if present:
        target = _costrizione_hit(p, target, calc, atk, present)
    written: dict[str, int] = {}
    for n, c in declared:
        written[n] = written.get(n, 0) + c
    due: dict[str, int] = {}
    applied: dict[str, int] = {}
    if hit is not None:
        for n, c in hit.condizioni:
            due[n] = due.get(n, 0) + c
        for n, c in hit.applicate:
            applied[n] = applied.get(n, 0) + c
    known = atk is not None and _tech_stacks(p.state.registry, atk) is not None
    tech = (atk.techniques[0] if atk is not None and atk.techniques else None) or calc.technique
    who = f"{atk.attacker}" + (f" [{tech}]" if tech else "") if atk is not None else (calc.actor or "?")
    limb = _limb_unknown(atk) if atk is not None else False
    extra: list[tuple[str, int]] = []
    for name, n in written.items():
        over = n - due.get(name, 0)
        if over > 0 and limb and name in T.STORPIATURE and due.get(limb_stack(None), 0):
            continue  # Mira agli Arti without the limb: the written Storpiatura is the attacker's choice (ruling)
        if over <= 0:
            continue
        if known:
            have = due.get(name, 0)
            p.verdicts.append(verdict("stacks.undue", p.post.id,
                f"Il Calcolo di {who} su {target.name} riporta {n} Stack di {name}, ma ne sono dovute {have}: "
                + _due_reasons(p, atk, name) + " Lo stato segue le regole: non vengono applicate.",
                _undue_rule(atk, name), expected=have, found=n,
                details={"stack": name, "attack_post": atk.post if atk is not None else None,
                         "due": dict(due), "written": dict(written)}))
        else:
            extra.append((name, over))
    for name, n in applied.items():
        if written.get(name, 0) >= n or (limb and name == limb_stack(None)
                                         and any(k in T.STORPIATURE for k in written)):
            continue
        p.verdicts.append(verdict("damage.missing_condition", p.post.id,
            f"Il Calcolo di {who} su {target.name} non riporta {n - written.get(name, 0)} Stack di {name} "
            f"({_due_reasons(p, atk, name, brief=True)}): «devono essere riportate tutte le eventuali condizioni». "
            "Lo stato le applica comunque.", P_DANNI_POST, expected=n, found=written.get(name, 0),
            details={"stack": name, "attack_post": atk.post if atk is not None else None}))
    if not extra:
        return target
    return _apply_stacks(p, target, extra, damage=damage, aggiuntivo="aggiuntivo" in (calc.kind, kind),
                         protezione=hit is not None and hit.protezione,
                         source=p.post.id, condition=calc.technique or "Costrizione",
                         assumption="condizioni_dichiarate",
                         why=" come le scrive il Calcolo: il registro non elenca le Stack proprie della Tecnica "
                             "(`extra.stack`), prese una volta")


def _limb_unknown(atk: Incoming) -> bool:
    """Mira agli Arti without the limb (`_hit` guessed the arms and asked the master)."""
    return atk.mira in ("arti",) and atk.face is not None and atk.face >= T.MIRA_ARTI_STORPIATURA_FACCIA


_MIRA_STACKS = frozenset({"Stordimento", "Storpiatura Debilitante", "Storpiatura Articolare"})


def _undue_rule(atk: Incoming | None, name: str) -> str:
    """The paragraph that decides whether `name` is due: the Fattore Mira for its Stacks on an aimed attack, else the
    Stack's own Type."""
    if atk is not None and atk.mira and name in _MIRA_STACKS:
        return P_MIRA
    return S.rule_of(name)


def _due_reasons(p: _Post, atk: Incoming | None, name: str, brief: bool = False) -> str:
    """Why the rules give (or do not give) `name` to this hit: the Fattore Mira of its die face, the registry."""
    if atk is None:
        return "nessun colpo noto."
    parts: list[str] = []
    if atk.face is not None and not atk.generic:
        part = atk.mira or "corpo"
        mira, arti = _MIRA_PARTS.get(part) or ("arti" if part in ("arti",) else part, None)
        eff = _mira_effects(mira, atk.face, arti)
        if eff is not None and eff.stacks:
            parts.append("Fattore Mira: " + "; ".join(st for st in eff.steps if "Stack" in st))
        elif atk.mira:
            parts.append(f"Fattore Mira: Mira {atk.mira.capitalize()} con dado {atk.face}, nessuna Stack"
                         + (" (Stordimento solo con 12)" if mira == "testa" else
                            " (Storpiatura solo con 10 o più)" if mira == "arti" else ""))
    own = _tech_stacks(p.state.registry, atk)
    if own is not None:
        tech = _technique(p.state.registry, atk.techniques, atk.attacker)
        parts.append(f"{tech.name if tech else 'la Tecnica'} (registro): "
                     + (", ".join(f"{n} Stack di {s}" for s, n in own) if own else "nessuna Stack"))
    if not parts:
        return "nessuna regola le applica." if not brief else "dovute"
    return "; ".join(parts) + ("" if brief else ".")


_NOTHING_DECLARED: tuple[tuple[Any, ...], tuple[str, ...]] = ((), ())


@lru_cache(maxsize=2048)
def _declared_text(raw: str) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    """What a calculation's text declares, read once per distinct text: the Stacks [(name, count)] and the
    Costrizione effects it names."""
    wanted: list[tuple[str, int]] = []
    for n, name in _STACK_DECL.findall(raw):
        canon = " ".join(w.capitalize() for w in name.split())
        try:
            S.tipo_of(canon)
        except S.UnknownStack:
            continue
        wanted.append((canon, int(n)))
    if _ACCECATO.search(raw) and not any(n == "Accecamento" for n, _ in wanted):
        wanted.append(("Accecamento", 1))
    low = raw.lower()
    return tuple(wanted), tuple(c for c in _COSTRIZIONI if c.lower() in low)


def _apply_stacks(p: _Post, target: Fighter, wanted: list[tuple[str, int]], *, damage: int | None = None,
                  aggiuntivo: bool = False, protezione: bool = False, source: str | None = None,
                  condition: str | None = None, applied: list[tuple[str, int]] | None = None,
                  assumption: str | None = None, why: str = "") -> Fighter:
    """Stacks that reach `target` (their limits, Protezione, Danno Aggiuntivo, Type-2 without damage); `applied`
    collects what stuck; `why`/`assumption` word the outcome verdict."""
    try:
        res = S.apply(target.stacks, wanted, turn=target.turn, damage_taken=damage, aggiuntivo=aggiuntivo,
                      protezione=protezione, source=source, condition=condition)
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", p.post.id, f"Stack non applicabili: {exc}", P_STACK1))
        return target
    for o in res.overflow:
        p.verdicts.append(verdict("stacks.over_limit", p.post.id, f"{target.name}: {o.message()}.", o.rule, expected=o.limit,
            found=o.existing + o.requested, details={"stack": o.name, "applied": o.applied}))
    for r in res.rejected:
        p.verdicts.append(verdict("outcome.stacks", p.post.id, f"{target.name}: {r.message}.", r.rule, found=r.count,
            details={"stack": r.name, "reason": r.reason}))
    if res.applied:
        if applied is not None:
            applied.extend(res.applied)
        p.verdicts.append(verdict("outcome.stacks", p.post.id,
            f"{target.name} riceve " + ", ".join(f"{n} Stack di {s}" for s, n in res.applied)
            + " (attive dal suo prossimo turno)" + why + ".",
            S.rule_of(res.applied[0][0]), found=dict(res.applied),  # the paragraph of the (first) Stack's Type
            assumption=assumption))
    return evolve(target, stacks=res.stacks)


# --- Costrizione e Liberazione: the values (costrizione.py) -----------------------------------------

def _int_value(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _bonus_potenziale(reg: Registry, who: str | None, tech: Technique | None, categoria: str | None = None) -> int | None:
    """Bonus Potenziale (Regolamento Tecniche, not in the text; ours: from the registry): the technique's
    `extra.bonus_potenziale`; else the character's `extra.bonus_potenziale` table by category (the technique's, or
    `categoria` for a Gigantismo); else the character's plain `extra.bonus_potenziale` when no technique is named."""
    if tech is not None and categoria is None and _int_value(tech.extra.get("bonus_potenziale")):
        return tech.extra["bonus_potenziale"]
    ch = reg.characters.get(who) if who else None
    own = ch.extra.get("bonus_potenziale") if ch is not None else None
    cat = categoria or (tech.category if tech is not None else None)
    if isinstance(own, dict) and cat:
        v = own.get(cat, own.get(cat.lower()))
        return v if _int_value(v) else None
    if _int_value(own) and tech is None and categoria is None:
        return own
    return None


def _label_amount(roll: Any, name: str) -> int | None:
    """The sum of the roll label's modifiers named `name` ("bonus potenziale"): the post's own number (RULINGS #7)."""
    tag = roll.tag
    if tag is None or not tag.modifiers:
        return None
    vals = [m.amount for m in tag.modifiers if normalise(m.label) == name]
    return sum(vals) if vals else None


def _missing_numbers(p: _Post, i: int | None, what: str, missing: list[str], known: dict[str, int], rule: str,
                     found: Any = None) -> None:
    """`ruling.needed` naming exactly the numbers the engine lacks, with the partial sum of those it has."""
    partial = sum(known.values())
    shown = " + ".join(f"{k} {v}" for k, v in known.items())
    p.verdicts.append(verdict("ruling.needed", p.post.id,
        f"{what}: mancano " + ", ".join(missing) + (f"; somma parziale {shown} = {partial}" if known else "")
        + ". Il master stabilisce il valore.", rule, roll=i, found=found,
        details={"missing": missing, "known": dict(known), "partial": partial}))


def _costrizione_hit(p: _Post, target: Fighter, calc: DamageCalc, atk: Incoming | None,
                     present: tuple[str, ...]) -> Fighter:
    """A hit whose calculation declares Costrizione effects: the Valore di Costrizione (Dado of the attack + Bonus
    Potenziale + Bonus Statistica of its Potenza) the first time, + half the new Bonus Potenziale for each further
    Costrizione; halved Bonus Potenziale for a declared Costrizione Impropria."""
    reg = p.state.registry
    effects = tuple(c for c in present if c not in target.costrizioni)
    first = not target.costrizioni
    attacker = atk.attacker if atk is not None else calc.actor
    tech = _technique(reg, atk.techniques, atk.attacker) if atk is not None else None
    tname = tech.name if tech is not None else (atk.techniques[0] if atk is not None and atk.techniques
                                                else calc.technique)
    impropria = False
    if atk is not None:
        af = p.fighters.get(atk.attacker)
        impropria = af is not None and atk.group in af.costrizioni_improprie
    missing: list[str] = []
    known: dict[str, int] = {}
    assumption = None
    bp = _bonus_potenziale(reg, attacker, tech)
    if bp is None and _stated(calc, "bonus potenziale") is not None:
        bp, assumption = int(_stated(calc, "bonus potenziale")), "calcolo_dichiarato"  # type: ignore[arg-type]
    if bp is None:
        missing.append(f"Bonus Potenziale di {tname or 'Tecnica non indicata'}"
                       + (f" (categoria {tech.category})" if tech is not None and tech.category else "")
                       + " nel registro")
    dado = bs = None
    if first:
        dado = atk.face if atk is not None else None
        if dado is None:
            missing.append("Dado dell'Attacco (faccia non mostrata)")
        else:
            known["Dado"] = dado
        bs = _bonus_statistica(reg, attacker, tech) if attacker else None
        if bs is None and _stated(calc, "bonus statistica") is not None:
            bs, assumption = int(_stated(calc, "bonus statistica")), "calcolo_dichiarato"  # type: ignore[arg-type]
        if bs is None:
            missing.append(f"Bonus Statistica di {attacker or '?'}" + (f" per {tname}" if tname else "") + " nel registro")
        else:
            known["Bonus Stat."] = bs
    elif target.costrizione is None:
        missing.append(f"Valore di Costrizione già attivo su {target.name} (non calcolato)")
    if bp is not None:
        known["Bonus Pot."] = bp
    rule = P_COSTR_IMPROPRIA if impropria else T.RULE_COSTRIZIONE
    valore: int | None = None
    steps: tuple[str, ...] = ()
    if not missing:
        try:
            prev = CO.CostrizioneState() if first else CO.CostrizioneState(
                target.costrizione, (CO.Costrizione("attive", "Costrizioni attive"),))
            res = CO.applica(prev, CO.Costrizione(atk.group if atk is not None else p.post.id, tname or "Costrizione",
                                                  present, bp or 0, impropria, attacker),
                             dado=dado or 0, bonus_statistica=bs or 0)
            valore, steps = res.valore, res.steps
        except T.MechanicsError as exc:
            missing.append(str(exc))
    shown = ", ".join(effects or present)
    if valore is not None:
        msg = f"{target.name} subisce la Costrizione: {shown}. " + "; ".join(steps) + "."
    else:
        msg = f"{target.name} subisce la Costrizione: {shown} (Valore di Costrizione non calcolabile)."
    p.verdicts.append(verdict("outcome.stacks", p.post.id, msg, rule, found=list(effects or present),
        details={"valore_costrizione": valore, "steps": list(steps), "impropria": impropria,
                 "attack_post": atk.post if atk is not None else None},
        assumption=assumption))
    if valore is None:
        _missing_numbers(p, None, f"Valore di Costrizione su {target.name}", missing, known, rule)
    return evolve(target, costrizioni=target.costrizioni + effects, costrizione=valore)


def _costrizione_impropria(p: _Post, actor: str, group: str) -> None:
    """Remember that the attack `group` of `actor` declared a Costrizione Impropria (its hit's Valore di Costrizione
    halves the Bonus Potenziale); attacks no longer pending are forgotten."""
    f = p.fighters.get(actor)
    if f is None:
        return
    pending = {a.group for a in p.incoming} | {a.group for a in p.new_incoming} | {h.attack.group for h in p.hits}
    keep = tuple(g for g in f.costrizioni_improprie if g in pending and g != group)
    p.fighters[actor] = evolve(f, costrizioni_improprie=keep + (group,))


_GIGANTISMO = re.compile(r"gigantismo\D{0,20}?([123])\s*tagli", re.IGNORECASE)


@lru_cache(maxsize=1024)
def _liberazione_label(action: str | None, techniques: tuple[str, ...], label: str) -> tuple[bool, int | None]:
    """(Liberazione Impropria declared, Taglie di differenza of a Gigantismo change) as a label writes them."""
    text = " ".join((action or label,) + techniques)
    m = _GIGANTISMO.search(text)
    return "liberazione impropria" in normalise(text), (int(m.group(1)) if m else None)


def _libera(f: Fighter) -> Fighter:
    """Free from every Costrizione: their Destrezza maluses go with them, and so do the Type-4 Stacks tied to a
    condition (as the master's "liberato" ruling does); Allentamento back to 0."""
    stacks = f.stacks
    for cond in {e.condition for e in f.stacks.entries if e.condition}:
        stacks, _ = S.remove_condition(stacks, cond)
    return evolve(f, costrizioni=(), costrizione=None, allentamento=0, stacks=stacks)


def _liberazione(p: _Post, i: int, roll: Any, phase: str, chk: RollCheck, actor: str, *, impropria: bool,
                 gigantismo: int | None) -> None:
    """One Tentativo di Liberazione of a costretto `actor`: Valore di Liberazione (Dado + Bonus Potenziale + Bonus
    Statistica + Allentamento) against its Valore di Costrizione; ≥ frees it from all, < adds +2 Allentamento."""
    f = p.fighters[actor]
    reg = p.state.registry
    tag = roll.tag
    tech = _technique(reg, tuple(tag.techniques), actor) if tag is not None and tag.techniques else None
    rule = T.RULE_LIBERAZIONE_IMPROPRIA if impropria or gigantismo else T.RULE_LIBERAZIONE
    missing: list[str] = []
    known: dict[str, int] = {}
    assumption = None
    if chk.face is None:
        missing.append("Dado (faccia non mostrata)")
    else:
        known["Dado"] = chk.face
    cat = None
    if gigantismo is not None:
        try:
            cat = CO.gigantismo_categoria(gigantismo)
        except T.MechanicsError as exc:
            missing.append(str(exc))
    bp = _bonus_potenziale(reg, actor, tech, cat) if cat or gigantismo is None else None
    if bp is None and gigantismo is None:
        bp = _label_amount(roll, "bonus potenziale")
        assumption = "calcolo_dichiarato" if bp is not None else None
    if bp is None:
        missing.append(f"Bonus Potenziale di categoria {cat} (Gigantismo, {gigantismo} Taglie) nel registro di {actor}"
                       if cat else f"Bonus Potenziale di {tech.name if tech is not None else actor} nel registro")
    bs = _bonus_statistica(reg, actor, tech)
    if bs is None:
        bs = _label_amount(roll, "bonus statistica")
        if bs is not None:
            assumption = "calcolo_dichiarato"
    if bs is None:
        missing.append(f"Bonus Statistica di {actor} nel registro")
    if f.costrizione is None:
        missing.append(f"Valore di Costrizione di {actor} (non calcolato)")
    if not missing:
        try:
            calc = CO.valore_liberazione(chk.face, bp, bs, f.allentamento, impropria=impropria,  # type: ignore[arg-type]
                                         difensiva=phase == "difensiva", gigantismo_taglie=gigantismo)
        except T.MechanicsError as exc:
            missing.append(str(exc))
    if missing:
        if bp is not None:
            known["Bonus Pot."] = bp // 2 if impropria and gigantismo is None else bp
        if bs is not None:
            known["Bonus Stat."] = bs
        known["Allentamento"] = f.allentamento
        _missing_numbers(p, i, f"Valore di Liberazione di {actor}", missing, known, rule, found=chk.total)
        p.fighters[actor] = evolve(f, allentamento=f.allentamento + T.ALLENTAMENTO_PASSO)
        return
    valore, costr = calc.value, f.costrizione
    steps = list(calc.steps)
    details = {"steps": steps, "allentamento": f.allentamento, "rendered": chk.rendered, "impropria": impropria,
               "gigantismo": gigantismo}
    if valore >= costr:
        steps.append(f"{valore} ≥ Valore di Costrizione {costr}: liberato da tutte le Costrizioni")
        p.fighters[actor] = _libera(f)
        p.verdicts.append(verdict("outcome.liberated", p.post.id,
            f"{actor} si libera da tutte le Costrizioni ({', '.join(f.costrizioni)}): Valore di Liberazione {valore} "
            f"≥ Valore di Costrizione {costr}. " + "; ".join(calc.steps) + ".",
            rule, roll=i, expected=costr, found=valore, details=details, assumption=assumption))
        return
    steps.append(f"{valore} < Valore di Costrizione {costr}: Allentamento {f.allentamento} → "
                 f"{f.allentamento + T.ALLENTAMENTO_PASSO}")
    p.fighters[actor] = evolve(f, allentamento=f.allentamento + T.ALLENTAMENTO_PASSO)
    p.verdicts.append(verdict("outcome.liberation_failed", p.post.id,
        f"{actor} resta costretto: Valore di Liberazione {valore} < Valore di Costrizione {costr}; il prossimo "
        f"Tentativo ha Allentamento +{f.allentamento + T.ALLENTAMENTO_PASSO}. " + "; ".join(calc.steps) + ".",
        rule, roll=i, expected=costr, found=valore, details=details, assumption=assumption))
    if gigantismo is not None:
        p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
            f"Tentativo di Liberazione fallito: il Passaggio al Gigantismo ({gigantismo} Taglie) di {actor} è annullato.",
            T.RULE_LIBERAZIONE_IMPROPRIA, roll=i, details={"gigantismo": gigantismo}))


def _liberazione_impropria(p: _Post, i: int, roll: Any, spec: ActionSpec, phase: str, chk: RollCheck, actor: str,
                           liberazioni: dict[str, int]) -> None:
    """An action whose label declares «Liberazione Impropria» (or a Gigantismo change): it is also a Tentativo di
    Liberazione with its own die, counted in the limit of one per Turno."""
    liberazioni[actor] = liberazioni.get(actor, 0) + 1
    if liberazioni[actor] > T.LIBERAZIONI_PER_TURNO:
        p.verdicts.append(verdict("turn.extra_liberazione", p.post.id,
            f"{actor}: al più {T.LIBERAZIONI_PER_TURNO} Tentativo di Liberazione per Turno (anche le Liberazioni "
            "Improprie contano).", T.RULE_LIBERAZIONE_IMPROPRIA, roll=i,
            expected=T.LIBERAZIONI_PER_TURNO, found=liberazioni[actor]))
        return
    f = p.fighters.get(actor)
    if f is None or not f.costrizioni:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"{spec.name} di {actor} dichiarata come Liberazione Impropria, ma il motore non conosce Costrizioni attive "
            f"su {actor}: il master la valuta.", T.RULE_LIBERAZIONE_IMPROPRIA, roll=i, found=chk.total))
        return
    tag = roll.tag
    imp, gig = _liberazione_label(tag.action if tag else None, tuple(tag.techniques) if tag else (), roll.label or "")
    _liberazione(p, i, roll, phase, chk, actor, impropria=imp, gigantismo=gig)


# --- Percezione e Mimetizzazione: the values (percezione.py) ----------------------------------------

def _scoperto_now(t: Fighter) -> int:
    """The target's own turns spent not Mimetizzato since its first Mimetizzazione ended, up to now."""
    n, since = t.scoperto
    return n + (t.turn - since if t.mimetizzazione is None and since is not None else 0)


def _stat_bonus(p: _Post, roll: Any, actor: str) -> tuple[int | None, Technique | None, str | None]:
    """Bonus Statistica of a Percezione / Mimetizzazione roll (Regolamento Tecniche): the registry's (technique in the
    label, else the character), else the label's own «Bonus Statistica» modifier (RULINGS #7)."""
    reg = p.state.registry
    tag = roll.tag
    tech = _technique(reg, tuple(tag.techniques), actor) if tag is not None and tag.techniques else None
    bs = _bonus_statistica(reg, actor, tech)
    if bs is not None:
        return bs, tech, None
    bs = _label_amount(roll, "bonus statistica")
    return bs, tech, ("calcolo_dichiarato" if bs is not None else None)


def _die_and_bonus_missing(chk: RollCheck, bs: int | None, actor: str, what: str) -> list[str]:
    """The numbers a Valore (Dado + Bonus Statistica …) lacks, named for the master."""
    missing = [] if chk.face is not None else ["Dado (faccia non mostrata)"]
    if bs is None:
        missing.append(f"Bonus Statistica di {actor} per {what} nel registro")
    return missing


def _mimetizzazione(p: _Post, i: int, spec: ActionSpec, chk: RollCheck, actor: str, rule: str) -> None:
    """A Mimetizzazione / Mascheramento roll: its Valore (Dado + Bonus Statistica) becomes the actor's current one."""
    f = p.fighters.get(actor)
    if f is None:
        return
    what = "Mimetizzazione" if spec.key == "mimetizzazione" else "Mascheramento"
    bs, _, assumption = _stat_bonus(p, p.post.rolls[i], actor)
    missing = _die_and_bonus_missing(chk, bs, actor, f"la {what}")
    valore = None
    if not missing:
        try:
            c = PZ.valore_mimetizzazione(chk.face, bs)  # type: ignore[arg-type]
            valore, steps = c.value, [s.replace("Mimetizzazione:", f"{what}:") for s in c.steps]
        except T.MechanicsError as exc:
            missing.append(str(exc))
    changes: dict[str, Any] = {spec.key: (valore, f.turn)}
    if spec.key == "mimetizzazione" and f.mimetizzazione is None and f.scoperto[1] is not None:
        # hidden again: the turns it spent found are counted once and for all
        changes["scoperto"] = (f.scoperto[0] + max(0, f.turn - 1 - f.scoperto[1]), None)
    p.fighters[actor] = evolve(f, **changes)
    if missing:
        known = {"Dado": chk.face} if chk.face is not None else {}
        _missing_numbers(p, i, f"Valore di {what} di {actor}", missing, known, rule, found=chk.total)
        return
    p.verdicts.append(verdict("outcome.hidden", p.post.id,
        f"{actor}: Valore di {what} {valore} ({'; '.join(steps)}), valido finché una Percezione non lo individua.",
        rule, roll=i, found=valore, details={"steps": steps, "what": what}, assumption=assumption))


def _percezione(p: _Post, i: int, chk: RollCheck, actor: str, rule: str) -> None:
    """A Percezione roll: Valore di Percezione (Dado + Bonus Statistica + Concentrazione) against each target's current
    Valore di Mimetizzazione (0 without one) and Mascheramento; found targets lose their Mimetizzazione."""
    f = p.fighters.get(actor)
    if f is None:
        return
    roll = p.post.rolls[i]
    tag = roll.tag
    if tag is not None and tag.targets:
        targets = [(_resolve_name(p.state, t) or t) for t in tag.targets]
    else:
        targets = [n for n, x in p.fighters.items() if n != actor and (x.mimetizzazione or x.mascheramento)]
    if not targets:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Percezione di {actor} senza Bersaglio nell'etichetta e nessun Personaggio Mimetizzato noto al motore: "
            "il master stabilisce chi viene individuato.", rule, roll=i, found=chk.total))
        return
    bs, _, assumption = _stat_bonus(p, roll, actor)
    conc = dict(f.concentrazione)
    for name in targets:
        t = p.fighters.get(name)
        if t is None or name == actor:
            continue
        count = _scoperto_now(t)
        bonus, recorded = conc.get(name, (0, count))
        c = PZ.Concentrazione(bonus)
        for _ in range(max(0, count - recorded)):
            c = PZ.turno_senza_mimetizzazione(c)  # −2 for each turn the target was not Mimetizzato
        hidden = t.mimetizzazione is not None or t.mascheramento is not None
        used, after = PZ.tentativo_percezione(c, mimetizzato=hidden)
        conc[name] = (after.bonus, count)
        checks = [(w, v) for w, v in (("Mimetizzazione", t.mimetizzazione), ("Mascheramento", t.mascheramento))
                  if v is not None] or [("Mimetizzazione", None)]
        perc = None
        missing = _die_and_bonus_missing(chk, bs, actor, "la Percezione")
        if not missing:
            try:
                perc = PZ.valore_percezione(chk.face, bs, used)  # type: ignore[arg-type]
            except T.MechanicsError as exc:
                missing.append(str(exc))
        changes: dict[str, Any] = {}
        for what, value in checks:
            mim = 0 if value is None else value[0]
            if mim is None:
                missing_here = missing + [f"Valore di {what} di {name} (non calcolato)"]
            else:
                missing_here = missing
            if missing_here and not (value is None and perc is None and chk.face is not None):
                known = {"Dado": chk.face} if chk.face is not None else {}
                if bs is not None:
                    known["Bonus Stat."] = bs
                known["Concentrazione"] = used
                _missing_numbers(p, i, f"Percezione di {actor} su {name} ({what})", missing_here, known, rule,
                                 found=chk.total)
                continue
            steps = list(perc.steps) if perc is not None else []
            found_it = perc is None or PZ.individua(perc.value, mim)  # not Mimetizzato: found whatever the number
            pv = perc.value if perc is not None else None
            details = {"steps": steps, "what": what, "concentrazione": used, "target": name}
            if found_it:
                why = (f"Valore di Percezione {pv} ≥ Valore di {what} {mim}" if value is not None
                       else f"{name} non è Mimetizzato (Valore 0)")
                p.verdicts.append(verdict("outcome.detected", p.post.id,
                    f"{actor} individua {name}: {why}." + (f" {steps[0]}." if steps else ""), rule, roll=i,
                    expected=mim, found=pv, details=details, assumption=assumption))
                if value is not None:
                    changes["mimetizzazione" if what == "Mimetizzazione" else "mascheramento"] = None
                    if what == "Mimetizzazione":
                        changes["scoperto"] = (count, t.turn)
            else:
                p.verdicts.append(verdict("outcome.not_detected", p.post.id,
                    f"{actor} non individua {name}: Valore di Percezione {pv} < Valore di {what} {mim}; il prossimo "
                    f"Tentativo ha Concentrazione +{after.bonus}. {steps[0]}.", rule, roll=i, expected=mim, found=pv,
                    details=details, assumption=assumption))
        if changes:
            p.fighters[name] = evolve(t, **changes)
    if conc != dict(f.concentrazione):
        p.fighters[actor] = evolve(p.fighters[actor], concentrazione=frozen_map(conc))


# --- rolls: Fase Difensiva and Fase Offensiva -----------------------------------------------------

# The requirements a roll may carry, built once (the hot path creates none).
P_LIBERAZIONE_ALLENTAMENTO = "Costrizione e Liberazione › Liberazione › Valore di Liberazione"
_REQ_PROTEZIONE = {k: Requirement("protezione", a.bonus, a.bonus_label, a.paragraph, True)
                   for k, a in ACTIONS.items() if a.bonus_label == "Bonus Protezione"}
_REQ_PREPARAZIONE_DIFESA = Requirement("preparazione", 2, "Preparazione", P_DESCRIZIONE, True)
_REQ_PREPARAZIONE_COLPIRE = Requirement("preparazione", 1, "Preparazione", P_DESCRIZIONE, True)
_REQ_COUNTER_OK = {k: Requirement("contrattacco", 3 if k == "contrattacco_diretto" else 2, f"{a.name} riuscito",
                                  a.paragraph, True) for k, a in ACTIONS.items() if a.counter}
_REQ_COUNTER_KO = Requirement("contrattacco", -2, f"{ACTIONS['contrattacco_generica'].name} fallito",
                              ACTIONS["contrattacco_generica"].paragraph, False)
_REQ_ATTACCO_PREVEDIBILE = {n: Requirement("prevedibile_attacco", n, "Attacco Prevedibile", P_DESCRIZIONE, True)
                            for n in (1, 2, 3)}
_REQ_DIFESA_PREVEDIBILE = {n: Requirement("prevedibile_difesa", -n, "Difesa Prevedibile", P_DESCRIZIONE, False)
                           for n in (1, 2, 3)}


class _Defence:
    """What the Fase Difensiva of this post has established so far."""

    __slots__ = ("failed", "failed_roll", "answered", "counter", "counter_target", "counter_factor", "any_defence",
                 "protezione_ok", "no_offense")

    def __init__(self) -> None:
        self.failed = False  # a failed Azione Principale Difensiva: later ones fail, no Fase Offensiva
        self.failed_roll: int | None = None
        self.answered: set[str] = set()
        self.counter: dict[str, str] = {}  # counter action key → "riuscito" / "fallito" (for the follow-up)
        self.counter_target: dict[str, str] = {}
        self.counter_factor: dict[str, Fraction] = {}  # Potenziale the counter continues with after the clash
        self.any_defence = False
        self.protezione_ok = False
        self.no_offense: int | None = None  # a failed Reazione (roll index): no Fase Offensiva


def _rolls(p: _Post) -> None:
    post, name = p.post, p.name
    post_id = post.id
    fighters = p.fighters
    aliases = p.state.aliases
    mine = []  # the actions aimed at the poster (a loop: no comprehension frame for a list of one or two)
    for a in p.incoming:
        if a.target == name:
            mine.append(a)
    dfn = _Defence()
    main_count: dict[str, int] = {}
    liberazioni: dict[str, int] = {}
    defensive_open = True
    offensive_seen = False
    for i, roll in enumerate(post.rolls):
        tag = roll.tag
        spec = classify(tag.action if tag and tag.action else roll.label)
        if spec is None:
            p.verdicts.append(verdict("dice.unknown_action", post_id,
                f"Azione non riconosciuta nell'etichetta del lancio: «{(tag.action if tag else None) or roll.label}».",
                "Successo e Fallimento delle Azioni › Lancio del Dado", roll=i, found=roll.label))
            continue
        actor = name
        if tag is not None and tag.actor:
            actor = aliases.get(*_name_keys(tag.actor)) or name
        actor_f = fighters.get(actor)
        phases = _ONE_PHASE.get(spec.key)
        if phases is not None and phases[0] is spec:
            phase = phases[1]  # an action of one phase only
        else:
            phase = phase_of(spec, roll.sides, defensive_open=defensive_open,
                             has_incoming=bool(mine), counter_in_defense=spec.key in dfn.counter)
        f = actor_f or fighters[name]
        tkey = None if tag is None else (tag.action, tag.techniques, tuple(map(_AMOUNT_LABEL, tag.modifiers)))  # label_key
        # the requirements in a fixed order (the checks report them in this order): Stacks, declared maluses,
        # Bonus Protezione, Preparazione, Contrattacco follow-up, Attacco / Difesa Prevedibile
        reqs: list[Requirement] = requirement_stacks(actor_f, spec, phase) if actor_f is not None and actor_f.stacks.entries else []
        target_attack: Incoming | None = None
        cura = False
        distanza_warn: int | None = None
        if phase == "offensiva":
            defensive_open = False
            multi = None if tag is None or len(tag.targets) < 2 else _multi(tag)  # multi_kind
            # checks.declared inlined (phase is offensiva here): only a defensive role that is no counter declares none
            declared = () if spec.role == "difensiva" and not spec.counter else _declared(
                tkey[0] if tkey else None, tkey[1] if tkey else None, roll.label, multi)
            if declared:
                reqs += declared
            if f.preparazione and actor == name and (not mine or not dfn.any_defence) and spec.rolls:
                # no Fase Difensiva, or a Difesa Nulla: +1 to hit
                reqs.append(_REQ_PREPARAZIONE_COLPIRE)
            if spec.counter:
                res = dfn.counter.get(spec.key)
                if res == "riuscito":
                    reqs.append(_REQ_COUNTER_OK[spec.key])
                elif res == "fallito" and spec.key == "contrattacco_generica":
                    reqs.append(_REQ_COUNTER_KO)
            attack = spec.role == "offensiva" or spec.counter
            cura = spec.key == "generica" and _is_cura(p.state.registry, tag, roll.label, actor)
            if cura:
                attack, distanza_warn = _distanza_cura(p.state.settings, tag)
        else:
            multi = None
            declared = ()
            if spec.counts_as_defense:
                if len(mine) == 1 and not spec.ally:
                    # one action incoming: _pick_attack's pool is it or nothing
                    a = mine[0]
                    target_attack = a if a.id not in dfn.answered and a.generic == (
                        spec.key == "contrattacco_generica") else None
                else:
                    target_attack = _pick_attack(p, mine, dfn, roll, spec)
            if spec.bonus and spec.bonus_label == "Bonus Protezione":
                reqs.append(_REQ_PROTEZIONE[spec.key])
            if spec.key == "difesa_nulla_alleato" and actor_f is not None:
                # "Probabilità di Difendere: +1 per ogni 5 livelli di Destrezza"
                dex = live_stat(actor_f, "Destrezza")
                if dex:
                    n = dex // T.DIFESA_NULLA_ALLEATO_DESTREZZA_PASSO
                    if n > 0:
                        reqs.append(_alleato_destrezza_req(n))
            if f.preparazione and actor == name and spec.role == "difensiva":
                reqs.append(_REQ_PREPARAZIONE_DIFESA)
            # Attacco / Difesa Prevedibile act on Probabilità di Difendere: a Contrattacco uses Probabilità di Colpire
            if target_attack is not None and target_attack.techniques and not spec.counter:
                attacker = fighters.get(target_attack.attacker)
                uses = attacker.uses_attack if attacker is not None else EMPTY
                techs = target_attack.techniques
                if len(techs) == 1:
                    tech = techs[0]
                    n = uses.get(tech, 0)
                else:
                    n, tech = max((uses.get(t, 0), t) for t in techs)
                lvl = _PREVEDIBILE_LVL[n if n < 10 else 10]  # _prevedibile(n), read from its table
                if lvl:
                    # which technique and how many uses: the verdict says so (_prevedibile_req, inlined: every
                    # defence against a repeated technique builds one)
                    base = _REQ_ATTACCO_PREVEDIBILE[lvl]
                    reqs.append(_Requirement(base.factor, base.amount, base.label, base.rule, base.bonus,
                                             (("technique", tech), ("uses", n))))
            if spec.role == "difensiva" and not spec.counter and tag and tag.techniques:
                n, tech = max((f.uses_defense.get(t, 0) + 1, t) for t in tag.techniques)
                lvl = _PREVEDIBILE_LVL[n if n < 10 else 10]
                if lvl:
                    reqs.append(_prevedibile_req("prevedibile_difesa", lvl, tech, n))
            attack = False
        if spec.key == "liberazione" and actor_f is not None and actor_f.allentamento:
            # Bonus Allentamento: +2 for each earlier attempt against the same Costrizione
            reqs.append(_allentamento_req(actor_f.allentamento))
        # Liberazione / Percezione / Mimetizzazione add a Bonus Statistica, not the Fattore Statistica
        destrezza = ds = None
        dmalus = 0
        if actor_f is not None:
            if spec.key not in _VALUES:
                if actor_f.stacks.entries or actor_f.conditions or actor_f.costrizioni:
                    destrezza = live_stat(actor_f, "Destrezza")
                    if destrezza is not None:
                        ref = actor_f.stats["Destrezza"]
                        dmalus = destrezza - ref[0] - ref[1]
                else:  # nothing to subtract: the reference Livello Totale
                    ref = actor_f.stats.get("Destrezza")
                    destrezza = ref[0] + ref[1] if ref is not None else None
            ds = actor_f.schema_stats.get("Destrezza")
        chk = check(post_id, i, roll, spec, phase, destrezza, (ds[0] + ds[1]) if ds else None, tuple(reqs),
                    _NO_BONUSES, attack, tkey, dmalus)
        if chk.verdicts:
            p.verdicts.extend(chk.verdicts)
        if cura and distanza_warn is not None:
            p.verdicts.append(verdict("dice.distance_on_cure", post_id,
                f"Cura con Fattore Distanza ({signed(distanza_warn)}): il testo lo applica «esclusivamente agli "
                "Attacchi» e non dice se una Cura lo sia. Letto come scritto finché il forum non sceglie "
                "l'impostazione `distanza_cura` ('attacco' o 'esclusa').", P_DISTANZA, roll=i, found=distanza_warn,
                assumption="distanza_cura"))
        if not (spec.die_difensiva if phase == "difensiva" else spec.die_offensiva):
            continue  # an action without a die (flagged above): nothing to resolve from the roll
        if tag is not None and spec.key != "liberazione" and _liberazione_label(
                tag.action, tag.techniques, "")[0] and not (
                phase == "offensiva" and (dfn.failed or dfn.no_offense is not None)):  # not of an annulled action
            _liberazione_impropria(p, i, roll, spec, phase, chk, actor, liberazioni)
        if spec.key in _VALUES:
            _value_roll(p, i, spec, chk, actor, liberazioni)
            if phase == "offensiva":
                continue
        if phase == "difensiva":
            if tag and tag.techniques:
                _count_uses(p, actor, spec, phase, tag)
            _defend(p, i, roll, spec, chk, target_attack, dfn, mine)
            continue
        offensive_seen = True
        if dfn.failed or dfn.no_offense is not None:
            why = dfn.failed_roll if dfn.failed else dfn.no_offense
            what = "una Difesa è fallita" if dfn.failed else "la Reazione è fallita"
            p.verdicts.append(verdict("outcome.action_annulled", post_id,
                f"{spec.name} annullata: {what} (lancio {why + 1}), quindi la Fase Offensiva non avviene.",
                P_DIFENSIVA, roll=i, details={"failed_roll": why}))
            if spec.kind == "principale" and spec.rolls:
                _register(p, i, roll, spec, chk, actor, multi, dfn, annulled=True, declared=declared)
            continue
        if spec.counter and dfn.counter.get(spec.key) == "annullato":
            p.verdicts.append(verdict("outcome.action_annulled", post_id,
                f"{spec.name} annullato nel Confronto di Potenza: non prosegue verso l'Avversario.",
                P_CONFRONTO, roll=i))
            continue
        if spec.kind == "principale" and (spec.die_difensiva or spec.die_offensiva):  # spec.rolls, no property call
            main_count[actor] = main_count.get(actor, 0) + 1
            if main_count[actor] > 1:
                # the extra action does not count: it is not an attack the target must answer
                p.verdicts.append(verdict("turn.extra_main_action", post_id,
                    f"{actor} compie più di un'Azione Principale in questo turno ({spec.name}): non conta.",
                    P_OFFENSIVA, roll=i, expected=1, found=main_count[actor]))
                continue
            if tag and tag.techniques:
                _count_uses(p, actor, spec, phase, tag)
            if (actor_f is not None and (actor_f.conditions or actor_f.stacks.entries)
                    or _alla_cieca(roll.label or "")) and _cieca(p, i, roll, spec, chk, actor_f):
                continue  # failed automatically: nobody has to defend against it
            _register(p, i, roll, spec, chk, actor, multi, dfn, declared=declared, cura=cura)
            if declared and any(r.factor == "costrizione" for r in declared):
                _costrizione_impropria(p, actor, f"{post_id}#{i}")
    # attacks nobody defended: Difesa Nulla (it cannot fail, the Fase Offensiva goes on)
    for a in mine:
        if a.id in dfn.answered or a.generic or a.annulled:
            continue
        if dfn.failed:
            _hit(p, a, ONE, ["Difese successive a una fallita: considerate fallite"], None, dfn.failed_roll)
            continue
        said = bool(_DIFESA_NULLA.search(post.body or ""))
        n0 = len(p.verdicts)
        _hit(p, a, ONE, ["Difesa Nulla" if said else "nessuna Difesa lanciata (Difesa Nulla)"], "Difesa Nulla", None)
        if not a.authentic and (p.hits and p.hits[-1].reasons[1:]
                                or any(v.code == "outcome.stacks" for v in p.verdicts[n0:])):
            # the hit is certain, but a Mira effect (×2, Stacks) comes from a die face typed by hand
            _not_authentic_outcome(p, n0, None, [f"l'Attacco di {a.attacker} (post {a.post}, lancio {a.roll + 1})"])
    # Preparazione: no main action rolled and the post says so
    me = p.fighters[p.name]
    prepared = not offensive_seen and bool(_PREPARAZIONE.search(post.body or "")) and not dfn.failed
    if prepared:
        stacks = S.remove(me.stacks, S.PREPARAZIONE_RIMUOVE)
        if stacks != me.stacks:
            p.verdicts.append(verdict("outcome.stacks", post.id, f"Preparazione: {name} rimuove le Stack di Stordimento e Sbilanciamento.",
                ACTIONS["preparazione"].paragraph))
        me = evolve(me, stacks=stacks)
    if me.preparazione != prepared or me is not p.fighters[p.name]:
        p.fighters[p.name] = evolve(me, preparazione=prepared)


# Actions of the table allowed in one phase only (phase_of answers that phase whatever the context).
_ONE_PHASE = {k: (a, a.phases()[0]) for k, a in ACTIONS.items() if len(a.phases()) == 1}

_VALUES = {
    "liberazione": ("Valore di Liberazione", "il Valore di Costrizione", "Costrizione e Liberazione › Liberazione"),
    "percezione": ("Valore di Percezione", "il Valore di Mimetizzazione del Bersaglio",
                   "Percezione e Mimetizzazione › Percezione"),
    "mimetizzazione": ("Valore di Mimetizzazione", "il Valore di Percezione di chi cerca",
                       "Percezione e Mimetizzazione › Mimetizzazione"),
    "mascheramento": ("Valore di Mascheramento", "il Valore di Percezione di chi cerca",
                      "Percezione e Mimetizzazione › Mascheramento"),
}


_CIECA = re.compile(r"\balla\s+cieca\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _alla_cieca(label: str) -> bool:
    """The label declares an Attacco alla Cieca (read once per distinct label: every attack asks)."""
    return _CIECA.search(label) is not None


# "Area 40 m", "Raggio Area di 30 metri": the radius of the Area where the hidden target may be
_AREA_RAGGIO = re.compile(r"(?:raggio\s+)?(?:dell'?\s*)?area\s+(?:di\s+)?(\d+(?:[.,]\d+)?)\s*(?:m|metri)\b", re.IGNORECASE)


def _cieca(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, actor_f: Fighter | None) -> bool:
    """Attacco alla Cieca (declared "alla Cieca" with the Area's radius): True when it fails automatically by the
    table. An Accecato attacker who declares nothing: targets beyond 25 m are Nascosti, the master says if so."""
    label = roll.label or ""
    if spec.role != "offensiva" and not spec.counter:
        return False
    if not _CIECA.search(label):
        if actor_f is not None and ("Accecamento" in actor_f.conditions or actor_f.stack_count("Accecamento")):
            p.verdicts.append(verdict("ruling.needed", p.post.id,
                f"{actor_f.name} è Accecato: i Personaggi oltre 25 m sono Nascosti. Se il Bersaglio lo è, questo è un "
                "Attacco alla Cieca (fallimento automatico secondo la tabella): lo stabilisce il master.",
                P_ACCECAMENTO, roll=i))
        return False
    m = _AREA_RAGGIO.search(label)
    if m is None or chk.face is None:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            "Attacco alla Cieca senza il raggio dell'Area dichiarato (es. «Area 40 m»): il fallimento automatico lo "
            "stabilisce il master.", T.RULE_CIECA, roll=i))
        return False
    tag = roll.tag
    head = normalise(_AREA_RAGGIO.sub(" ", " ".join(((tag.action or "") if tag else label,)
                                                      + (tuple(tag.techniques) if tag else ()))))
    tipo = "area_totale" if "area totale" in head else "area" if "area" in head.split() else "mirato"
    try:
        r = PZ.attacco_alla_cieca(float(m.group(1).replace(",", ".")), chk.face, tipo)
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", p.post.id, f"Attacco alla Cieca: {exc}.", T.RULE_CIECA, roll=i))
        return False
    if not r.auto_fail:
        return False
    p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
        "Attacco alla Cieca fallito automaticamente: " + "; ".join(r.steps) + ".", r.rule, roll=i,
        expected=r.soglia, found=chk.face, details={"steps": list(r.steps), "band": r.banda, "kind": r.tipo}))
    return True


def _value_roll(p: _Post, i: int, spec: ActionSpec, chk: RollCheck, actor: str, liberazioni: dict[str, int]) -> None:
    """Liberazione / Percezione / Mimetizzazione / Mascheramento: the die is checked (by `check`), then the value is
    computed and compared (`_liberazione`, `_percezione`, `_mimetizzazione`); a Liberazione without a Costrizione the
    engine knows of goes to the master."""
    name, other, rule = _VALUES[spec.key]
    if spec.key == "liberazione":
        liberazioni[actor] = liberazioni.get(actor, 0) + 1
        if liberazioni[actor] > T.LIBERAZIONI_PER_TURNO:
            p.verdicts.append(verdict("turn.extra_liberazione", p.post.id,
                f"{actor}: al più {T.LIBERAZIONI_PER_TURNO} Tentativo di Liberazione per Turno.", rule, roll=i,
                expected=T.LIBERAZIONI_PER_TURNO, found=liberazioni[actor]))
            return
        f = p.fighters.get(actor)
        if f is not None and f.costrizioni:
            # the engine knows the Costrizione: it computes the attempt (a failure, or unknown numbers, add +2
            # Allentamento to the next one; a success or a "liberato" ruling resets it)
            roll = p.post.rolls[i]
            tag = roll.tag
            imp, gig = _liberazione_label(tag.action if tag else None, tuple(tag.techniques) if tag else (),
                                          roll.label or "")
            # a Liberazione roll is not an Azione Difensiva: its die is never halved
            _liberazione(p, i, roll, "generica", chk, actor, impropria=imp, gigantismo=gig)
            return
    elif spec.key == "percezione":
        _percezione(p, i, chk, actor, rule)
        return
    elif actor in p.fighters:
        _mimetizzazione(p, i, spec, chk, actor, rule)
        return
    p.verdicts.append(verdict("ruling.needed", p.post.id,
        f"{name} di {actor}: dado {chk.face if chk.face is not None else '?'}, totale {chk.total if chk.total is not None else '?'}"
        + (f"; nessuna Costrizione attiva nota al motore su {actor}" if spec.key == "liberazione" else "")
        + f": il master lo confronta con {other}.",
        rule, roll=i, found=chk.total))


@lru_cache(maxsize=64)
def _alleato_destrezza_req(amount: int) -> Requirement:
    return Requirement("alleato", amount, "Destrezza su Alleato", ACTIONS["difesa_nulla_alleato"].paragraph, True)


@lru_cache(maxsize=64)
def _allentamento_req(amount: int) -> Requirement:
    return Requirement("allentamento", amount, "Allentamento", P_LIBERAZIONE_ALLENTAMENTO, True)


def _prevedibile(n: int) -> int:
    return 3 if n >= 10 else 2 if n >= 7 else 1 if n >= 4 else 0


# _prevedibile(n) for n = 0..10 (10 and more: index 10), read by _rolls without a call
_PREVEDIBILE_LVL = tuple(_prevedibile(k) for k in range(11))


_Requirement = maker(Requirement)


def _prevedibile_req(factor: str, lvl: int, technique: str, uses: int) -> Requirement:
    """Attacco Prevedibile (bonus) / Difesa Prevedibile (malus) for `uses` uses of `technique` (not cached: the
    use count grows every turn; built without the dataclass's __init__)."""
    base = (_REQ_ATTACCO_PREVEDIBILE if factor == "prevedibile_attacco" else _REQ_DIFESA_PREVEDIBILE)[lvl]
    return _Requirement(base.factor, base.amount, base.label, base.rule, base.bonus,
                        (("technique", technique), ("uses", uses)))


def _count_uses(p: _Post, actor: str, spec: ActionSpec, phase: str, tag: Any) -> None:
    if actor not in p.fighters or not tag or not tag.techniques:
        return
    f = p.fighters[actor]
    if phase == "offensiva" and (spec.role == "offensiva" or spec.counter):
        uses = f.uses_attack.copy()  # a mappingproxy's copy is its dict's (one block), dict() would go key by key
        for t in tag.techniques:
            uses[t] = uses.get(t, 0) + 1
        if f is p.own:  # _set_own, inlined (uses_attack is not a summary field): in place on the step's own Fighter
            f.__dict__["uses_attack"] = MappingProxyType(uses)  # our own new dict: no second copy
        else:
            p.fighters[actor] = evolve(f, uses_attack=MappingProxyType(uses))
    elif phase == "difensiva" and spec.role == "difensiva":
        uses = f.uses_defense.copy()
        for t in tag.techniques:
            uses[t] = uses.get(t, 0) + 1
        if f is p.own:  # as above
            f.__dict__["uses_defense"] = MappingProxyType(uses)
        else:
            p.fighters[actor] = evolve(f, uses_defense=MappingProxyType(uses))


def _set_own(p: _Post, name: str, f: Fighter, field: str, value: Any) -> None:
    """p.fighters[name] = `f` with `field` (not one the summary shows) set: in place when `f` is the step's own
    Fighter (p.own), else a new one."""
    if f is p.own and field not in _SUMMARY_FIELDS:
        f.__dict__[field] = value
    else:
        p.fighters[name] = evolve(f, **{field: value})


def _pick_attack(p: _Post, mine: list[Incoming], dfn: _Defence, roll: Any, spec: ActionSpec) -> Incoming | None:
    """The incoming action this defence answers: the one from the attacker its label names, else the first."""
    generic = spec.key == "contrattacco_generica"
    pool = [a for a in mine if a.id not in dfn.answered and a.generic == generic]
    if len(pool) > 1:
        pool.sort(key=lambda a: a.annulled)  # an annulled action is answered only when nothing else is left
    if spec.ally:
        pool = [a for a in p.incoming if a.id not in dfn.answered and not a.generic and a.target != p.name
                and a.attacker != p.name] or pool
    tag = roll.tag
    if len(pool) > 1 and tag and tag.targets:  # with one candidate the label cannot pick another
        aliases = p.state.aliases
        named = {(aliases.get(*_name_keys(t)) or t).lower() if t else t.lower() for t in tag.targets}
        for a in pool:
            if a.attacker.lower() in named or a.target.lower() in named:
                return a
    return pool[0] if pool else None


def _who(atk: Incoming) -> str:
    """"l'Attacco di X [Tecnica]": built only for the messages that name it."""
    return f"l'Attacco di {atk.attacker}" + (f" [{', '.join(atk.techniques)}]" if atk.techniques else "")


def _defend(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, atk: Incoming | None,
            dfn: _Defence, mine: list[Incoming]) -> None:
    """One defensive roll against its attack; an outcome resting on a roll typed by hand is not final."""
    n0 = len(p.verdicts)
    _resolve_defence(p, i, roll, spec, chk, atk, dfn, mine)
    if spec.counter and atk is not None and p.aree:
        _area_contrattaccata(p, i, spec, atk, dfn)
    if roll.authentic and (atk is None or atk.authentic):
        return  # the forum's own rolls: the outcome stands
    suspect = [] if roll.authentic else [f"la {spec.name} (lancio {i + 1} di questo post)"]
    if atk is not None and not atk.authentic:
        suspect.append(f"l'Attacco di {atk.attacker} (post {atk.post}, lancio {atk.roll + 1})")
    if suspect:
        _not_authentic_outcome(p, n0, i, suspect)


def _not_authentic_outcome(p: _Post, n0: int, i: int | None, suspect: list[str]) -> None:
    """The outcome verdicts added since `n0` rest on rolls that are not the forum's (dice.not_authentic): they say
    so, and the master confirms the outcome (ruling.needed)."""
    what = " e ".join(suspect)
    touched = False
    for k in range(n0, len(p.verdicts)):
        v = p.verdicts[k]
        if v.code.startswith("outcome.") and "not_authentic" not in v.details:
            p.verdicts[k] = evolve(v, message=f"{v.message} Esito basato su un lancio non autentico ({what}).",
                                   details=dict(v.details, not_authentic=list(suspect)))
            touched = True
    if touched:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"L'esito si basa su un lancio non autentico del forum ({what}): lo conferma il master.",
            P_LANCIO, roll=i, details={"not_authentic": list(suspect)}))


def _resolve_defence(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, atk: Incoming | None,
                     dfn: _Defence, mine: list[Incoming]) -> None:
    post = p.post
    if not spec.counts_as_defense:
        # Azione Secondaria Indipendente, Reazione, Liberazione…: never stopped, may be beaten on time
        first = next((a for a in mine if not a.generic), None)
        if spec.key == "reazione":
            _reazione(p, i, chk, dfn, mine)
            return
        if first is not None and chk.total is not None and first.total is not None:
            ok = chk.total >= first.total
            p.verdicts.append(verdict("outcome.defended" if ok else "outcome.hit", post.id,
                f"{spec.name}: {chk.total} contro {first.total} dell'Attacco di {first.attacker}: "
                + ("in tempo." if ok else "battuta sul tempo (nessuna conseguenza)."),
                spec.paragraph, roll=i, expected=first.total, found=chk.total, details={"independent": True}))
        return
    if atk is None:
        generic = spec.key == "contrattacco_generica"
        other = next((a for a in mine if a.id not in dfn.answered and a.generic != generic), None)
        if other is not None:
            # the wrong kind of answer, not one too many: a Contrattacco su Azione Generica answers an Azione
            # Generica, every other Difesa an Attacco
            p.verdicts.append(verdict("turn.extra_defense", post.id,
                f"{spec.name} risponde solo " + ("a un'Azione Generica" if generic else "a un Attacco")
                + ", ma in arrivo c'è " + ("un Attacco" if generic else "un'Azione Generica")
                + f" di {other.attacker} (post "
                f"{other.post}): " + ("contro un Attacco serve una Difesa o un Contrattacco." if generic else
                                      "contro un'Azione Generica serve un Contrattacco su Azione Generica."),
                spec.paragraph, roll=i, expected=0, found=1,
                details={"pending": other.id, "pending_kind": "generica" if other.generic else "attacco"}))
            return
        p.verdicts.append(verdict("turn.extra_defense", post.id,
            f"{spec.name}: nessun Attacco in arrivo a cui rispondere (al più una Difesa per Attacco).",
            P_DIFENSIVA, roll=i, expected=len([a for a in mine if not a.generic]), found=len(dfn.answered) + 1))
        return
    dfn.answered.add(atk.id)
    if atk.annulled:
        # written before knowing: the attack never came (its author's Fase Offensiva was annulled)
        p.verdicts.append(verdict("outcome.action_annulled", post.id,
            f"{spec.name} contro {_who(atk)}: quell'Attacco era già annullato (post {atk.post}), la Difesa non serve.",
            P_DIFENSIVA, roll=i, details={"attack_post": atk.post}))
        return
    dfn.any_defence = True
    if dfn.failed:
        p.verdicts.append(verdict("outcome.action_annulled", post.id,
            f"{spec.name} contro {_who(atk)}: considerata fallita perché una Difesa precedente è fallita.",
            P_DIFENSIVA, roll=i, details={"failed_roll": dfn.failed_roll}))
        _hit(p, atk, ONE, ["Difesa successiva a una fallita"], spec.name, i)
        return
    if chk.total is None or atk.total is None:
        p.verdicts.append(verdict("dice.no_total", post.id,
            f"{spec.name} contro {_who(atk)}: manca il risultato di uno dei due lanci, esito da stabilire.",
            P_DIFENSIVA, roll=i, expected=atk.total, found=chk.total))
        p.verdicts.append(verdict("ruling.needed", post.id, f"Esito di {spec.name} contro {_who(atk)} da stabilire.", P_DIFENSIVA, roll=i))
        return
    A, Dv = atk.total, chk.total
    numbers = {"attack_total": A, "defence_total": Dv, "attack_rendered": atk.rendered, "defence_rendered": chk.rendered,
               "attack_post": atk.post, "attack_roll": atk.roll}
    if spec.key == "contrattacco_generica":
        dfn.counter_target[spec.key] = atk.attacker  # launched either way (Azione Generica)
        if Dv >= A:
            p.verdicts.append(verdict("outcome.suspended", post.id,
                f"Contrattacco su Azione Generica riuscito ({Dv} ≥ {A}): l'Azione Generica di {atk.attacker} è Sospesa "
                "(può confermarla subendo il Contrattacco, o annullarla e difendersi).",
                spec.paragraph + " › Azione Sospesa", roll=i, expected=A, found=Dv, details=numbers))
            dfn.counter[spec.key] = "riuscito"
            if atk.cura:
                _cura_fermata(p, i, atk)
        else:
            p.verdicts.append(verdict("outcome.hit", post.id,
                f"Contrattacco su Azione Generica battuto sul tempo ({Dv} < {A}): l'Azione Generica riesce, il "
                "Contrattacco è comunque lanciato.", spec.paragraph, roll=i, expected=A, found=Dv, details=numbers))
            dfn.counter[spec.key] = "fallito"
        return
    if Dv < A:
        # beaten on time: the defence fails, later defences fail, no Fase Offensiva (RULINGS #1)
        dfn.failed = True
        dfn.failed_roll = i
        if spec.counter:
            dfn.counter[spec.key] = "fallito"
        _hit(p, atk, ONE, [f"{spec.name} battuta sul tempo ({Dv} < {A})"], spec.name, i, numbers=numbers)
        return
    tie = Dv == A
    if spec.key in ("protezione", "protezione_alleato", "difesa_nulla_alleato"):
        dfn.protezione_ok = True
        _hit(p, atk, HALF, [f"Protezione riuscita ({Dv} ≥ {A}): Danni dimezzati"], spec.name, i,
             numbers=numbers, protezione=True, defended_message=True)
        return
    if spec.counter:
        dfn.counter_target[spec.key] = atk.attacker  # the follow-up in Fase Offensiva goes back to the attacker
    if spec.key == "contrattacco_diretto":
        dfn.counter[spec.key] = "riuscito"
        _hit(p, atk, ONE, [f"Contrattacco Diretto riuscito ({Dv} ≥ {A}): il Difensore subisce in pieno "
                                   "l'Attacco e l'Attaccante dovrà difendersi dal Contrattacco"], spec.name, i,
             numbers=numbers)
        return
    if tie and spec.tie_half_damage:
        _hit(p, atk, HALF, [f"Pareggio ({Dv} = {A}): vince il Difensore ma subisce Danno dimezzato"],
             spec.name, i, numbers=numbers)
        return
    if spec.intercepts:
        if spec.counter:
            dfn.counter[spec.key] = "riuscito"
        _clash(p, i, roll, spec, chk, atk, dfn, numbers)
        return
    # Schivata / Sbilanciamento won on time: no damage
    if spec.physical_only:
        physical = _physical(p.state.registry, atk)
        if physical is False:
            dfn.failed = True
            dfn.failed_roll = i
            _hit(p, atk, ONE, ["Sbilanciamento funziona solo contro gli Attacchi Fisici Diretti"], spec.name, i,
                 numbers=numbers)
            return
        if physical is None:
            p.verdicts.append(verdict("ruling.needed", post.id,
                f"Sbilanciamento contro {_who(atk)}: va confermato che sia un Attacco Fisico Diretto.",
                spec.paragraph, roll=i))
    p.verdicts.append(verdict("outcome.defended", post.id,
        f"{spec.name} riuscita ({Dv} ≥ {A}) contro {_who(atk)}: nessun Danno.", spec.paragraph, roll=i,
        expected=A, found=Dv, details=numbers))
    if spec.key == "sbilanciamento" and atk.attacker in p.fighters:
        p.fighters[atk.attacker] = _apply_stacks(p, p.fighters[atk.attacker], [("Sbilanciamento", T.SBILANCIAMENTO_DA_DIFESA)],
                                                 source=post.id)
    _drop_group(p, atk, i)


def _reazione(p: _Post, i: int, chk: RollCheck, dfn: _Defence, mine: list[Incoming]) -> None:
    """Reazione (1d12 + Destrezza) against the Valore di Sbalzo of a declared Sbalzo that lands: only after Difesa
    Nulla or a Protezione riuscita; equal or higher → no Danni Ambientali and half the distance; lower → no Fase
    Offensiva."""
    post = p.post
    rule = "Sbalzo e Reazione › Reazione"
    if not (dfn.protezione_ok or _DIFESA_NULLA.search(post.body or "")):
        p.verdicts.append(verdict("ruling.needed", post.id, "Reazione: si può tentare solo con Difesa Nulla o Protezione riuscita.", rule, roll=i))
        return
    atk = next((a for a in mine if a.sbalzo and not a.annulled), None)
    if atk is None:
        p.verdicts.append(verdict("ruling.needed", post.id, "Reazione senza uno Sbalzo dichiarato in arrivo: il master valuta.", rule, roll=i))
        return
    reg = p.state.registry
    tech = _technique(reg, atk.techniques, atk.attacker)
    bonus = _bonus_statistica(reg, atk.attacker, tech)
    if tech is None or not tech.category or bonus is None or atk.face is None or chk.total is None:
        p.verdicts.append(verdict("ruling.needed", post.id,
            f"Reazione {chk.total if chk.total is not None else '?'} contro lo Sbalzo di {atk.attacker}: Valore di Sbalzo "
            "non calcolabile (categoria o Bonus Statistica assenti dal registro).", rule, roll=i, found=chk.total))
        return
    try:
        vs = SB.valore_sbalzo(atk.face, bonus, tech.category, da_difesa=atk.counter)  # a Defence's die is halved
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", post.id, f"Valore di Sbalzo non calcolabile: {exc}", rule, roll=i))
        return
    numbers = {"valore_sbalzo": str(vs.value), "steps": list(vs.steps), "attack_post": atk.post}
    if chk.total >= vs.value:
        if p.reazioni is None:
            p.reazioni = set()
        p.reazioni.add(atk.id)
        dms, missing = sbalzo_dms(evolve(p.state, fighters=p.fighters), atk)
        if dms is not None:
            half = SB.reazione(chk.total, vs.value, dms.value).distanza
            numbers.update(dms=_num(dms.value), distanza=_num(half))
            distance = f"distanza di Sbalzo dimezzata: DMS {_metri(dms.value)} m → {_metri(half)} m"
        else:
            distance = "distanza di Sbalzo dimezzata (DMS non calcolabile: " + "; ".join(missing) + ")"
        p.verdicts.append(verdict("outcome.defended", post.id,
            f"Reazione riuscita ({chk.total} ≥ {vs.floor if vs.value == vs.floor else float(vs.value)}): niente Danni "
            f"Ambientali e {distance}.", rule, roll=i, expected=str(vs.value), found=chk.total,
            details=numbers))
    else:
        dfn.no_offense = i
        p.verdicts.append(verdict("outcome.hit", post.id,
            f"Reazione fallita ({chk.total} < {float(vs.value):g}): lo Sbalzo va a segno e non si potrà procedere alla "
            "Fase Offensiva.", rule, roll=i, expected=str(vs.value), found=chk.total, details=numbers))


def _num(x: Fraction) -> int | float:
    """A distance for JSON: an int when whole."""
    return int(x) if x.denominator == 1 else float(x)


def _metri(x: Fraction) -> str:
    """A distance for a message, Italian style ("13,5")."""
    return cifra(x)


def sbalzo_dms(state: GuidaState, atk: Incoming) -> tuple[SB.Calc | None, list[str]]:
    """The Distanza Massima di Sbalzo of a declared Sbalzo: (Dado + Bonus Pot. + Bonus Stat. − Forza Avv.) × Mod of
    the technique's category, the die halved when the Sbalzo comes from a Defence (a Contrattacco). Returns the
    Calc, or None with the names of the missing numbers (registry: category, `extra.bonus_potenziale`, Bonus
    Statistica; the target's Forza; the die)."""
    reg = state.registry
    tech = _technique(reg, atk.techniques, atk.attacker)
    missing: list[str] = []
    if atk.face is None:
        missing.append("Fattore di Casualità dell'Attacco")
    if tech is None:
        missing.append("Tecnica nel registro (categoria, Bonus Potenziale, Bonus Statistica)")
    else:
        if not tech.category:
            missing.append(f"categoria del Potenziale di {tech.name} (registro `category`)")
        # the same lookup as the Valore di Costrizione: the technique's, else the character's table by category
        bp = _bonus_potenziale(reg, atk.attacker, tech)
        if bp is None:
            missing.append(f"Bonus Potenziale di {tech.name} (registro `extra.bonus_potenziale`)")
    bonus = _bonus_statistica(reg, atk.attacker, tech)
    if bonus is None and tech is not None:
        missing.append(f"Bonus Statistica di {atk.attacker} (registro `extra.bonus_statistica`)")
    target = state.fighters.get(atk.target)
    forza = live_stat(target, "Forza") if target is not None else None
    if forza is None:
        missing.append(f"Forza di {atk.target} (Livello Totale)")
    if missing:
        return None, missing
    try:
        return SB.dms(atk.face, bp, bonus, forza, tech.category,  # type: ignore[union-attr,arg-type]
                      da_difesa=atk.counter), []
    except T.MechanicsError as exc:
        return None, [str(exc)]


_SBALZO_MEMO: list[tuple[Any, frozenset[str]]] = [(None, frozenset())]


def _sbalzo_techniques(reg: Registry) -> frozenset[str]:
    """Lower-cased names of the techniques whose Sbalzo is an effect (registry `extra.sbalzo = true`), one registry
    at a time."""
    memo = _SBALZO_MEMO[0]
    if memo[0] is not reg:
        # by name too: a second owner's technique is keyed `Nome [Owner]` (Registry)
        memo = _SBALZO_MEMO[0] = (reg, frozenset(x.lower() for n, t in reg.techniques.items()
                                                 if t.extra.get("sbalzo") is True for x in (n, t.name)))
    return memo[1]


def _sbalzo_landed(p: _Post, atk: Incoming, roll: int | None) -> None:
    """A declared Sbalzo that lands: its Distanza Massima di Sbalzo (outcome.sbalzo), else the master rules
    naming the missing numbers."""
    calc, missing = sbalzo_dms(evolve(p.state, fighters=p.fighters), atk)  # the fighters as this post left them
    if calc is None:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Sbalzo di {atk.attacker} su {atk.target}: Distanza Massima di Sbalzo non calcolabile, mancano "
            + "; ".join(missing) + ".", T.RULE_SBALZO, roll=roll, details={"attack_post": atk.post, "missing": missing}))
        return
    dms = _num(calc.value)
    p.verdicts.append(verdict("outcome.sbalzo", p.post.id,
        f"Sbalzo di {atk.attacker} su {atk.target}: Distanza Massima di Sbalzo {_metri(calc.value)} m (" + "; ".join(calc.steps)
        + "). Si può sbalzare a distanze inferiori; se non la si specifica vale la Massima.", T.RULE_SBALZO, roll=roll,
        found=dms, details={"attack_post": atk.post, "dms": dms, "steps": list(calc.steps),
                            "da_difesa": atk.counter}))


def _physical(reg: Registry, atk: Incoming) -> bool | None:
    t = _technique(reg, atk.techniques, atk.attacker)
    if t is None:
        return None
    v = t.extra.get("fisico_diretto")
    if isinstance(v, bool):
        return v
    if t.kind == "arma" or "fisic" in (t.type or "").lower():
        return True
    if t.type and "offensiva" in t.type.lower():
        return False  # an offensive technique the registry types as not physical (Energetica, Spirituale…)
    return None


def _drop_group(p: _Post, atk: Incoming, i: int) -> None:
    """Bersagli Multipli mirati: one target stopping the attack annuls it for all (also where it already landed,
    while its damage is not yet written); the other kinds: case by case."""
    others = [a for a in p.incoming if a.group == atk.group and a.id != atk.id]
    landed = [h for h in p.hits if h.attack.group == atk.group and h.attack.id != atk.id]
    if not others and not landed:
        return
    names = ", ".join([a.target for a in others] + [h.attack.target for h in landed])
    if B.fermato_per_tutti({"multipli": "multiplo"}.get(atk.multi or "mirato", atk.multi or "mirato")):
        p.incoming = [a for a in p.incoming if not (a.group == atk.group and a.id != atk.id)]
        p.hits = [h for h in p.hits if not (h.attack.group == atk.group and h.attack.id != atk.id)]
        p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
            f"L'Attacco a Bersagli Multipli di {atk.attacker} è fermato: annullato anche per {names}.", P_BERSAGLI, roll=i))
    else:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"L'Attacco di {atk.attacker} è fermato da {p.name}: se sia annullato anche per {names} si valuta caso "
            "per caso.", P_BERSAGLI, roll=i))


def _clash(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, atk: Incoming, dfn: _Defence,
           numbers: dict[str, Any]) -> None:
    """Parata / Contrattacco in time: Confronto di Potenza (registry numbers) — else the master rules."""
    reg = p.state.registry
    post = p.post
    p.verdicts.append(verdict("ruling.needed", post.id,
        f"{spec.name} in tempo contro l'Attacco di {atk.attacker}: l'adeguatezza della Difesa all'Attacco "
        "la valuta il master.", P_ADEGUATEZZA, roll=i))
    tag = roll.tag
    def_tech = _technique(reg, tuple(tag.techniques) if tag else (), p.name)
    atk_tech = _technique(reg, atk.techniques, atk.attacker)
    sides = []
    mod_steps: list[str] = []  # Potenziali lowered by Sbilanciamento
    for who, tech in ((atk.attacker, atk_tech), (p.name, def_tech)):
        bonus = _bonus_statistica(reg, who, tech)
        if tech is None or tech.potenziale is None or bonus is None or not tech.category:
            sides.append(None)
        else:
            pot = tech.potenziale
            mods = atk.potenziale_mod if who == atk.attacker else T.SBILANCIAMENTO_POTENZIALE_MOD * (
                p.fighters[who].stack_count("Sbilanciamento") if who in p.fighters else 0)
            if mods:
                pot, why = _potenziale_modificato(tech, pot, mods, f"Sbilanciamento di {who}")
                mod_steps.append(why)
                if pot is None:
                    sides.append(None)
                    continue
            if who == atk.attacker and atk.potenziale_factor != 1:
                pot = int(pot * atk.potenziale_factor)
            try:
                sides.append(ClashSide(f"{tech.name} di {who}", pot + bonus, tech.category))
            except T.MechanicsError:
                sides.append(None)
    if None in sides:
        p.verdicts.append(verdict("ruling.needed", post.id,
            f"Confronto di Potenza tra l'Attacco di {atk.attacker} e {spec.name} di {p.name}: Potenziale, categoria o "
            "Bonus Statistica non noti dal registro" + (f" ({'; '.join(mod_steps)})" if mod_steps else "") + ".",
            P_CONFRONTO, roll=i, details=dict(numbers, steps=mod_steps) if mod_steps else numbers))
        p.verdicts.append(verdict("outcome.defended", post.id,
            f"{spec.name} in tempo ({numbers['defence_total']} ≥ {numbers['attack_total']}): esito del Confronto di "
            "Potenza da stabilire.", spec.paragraph, roll=i, expected=numbers["attack_total"],
            found=numbers["defence_total"], details=numbers))
        return
    a_side, d_side = sides
    r = confronto_di_potenza(a_side, d_side)
    details = dict(numbers, steps=mod_steps + list(r.steps), outcome=r.outcome, difference=r.difference)
    p.verdicts.append(verdict("outcome.power_clash", post.id, "Confronto di Potenza: " + r.steps[-1] + ".", P_CONFRONTO, roll=i,
        expected=a_side.potenza, found=d_side.potenza, details=details))
    if r.winner == a_side.label:
        # the attack goes on (full or halved Potenziale) and hits: the defence failed
        dfn.failed = True
        dfn.failed_roll = i
        if spec.counter:
            dfn.counter[spec.key] = "fallito"
        _hit(p, evolve(atk, potenziale_factor=atk.potenziale_factor * r.factor), ONE,
             [f"Confronto di Potenza perso: l'Attacco prosegue con Potenziale {'dimezzato' if r.factor != 1 else 'intatto'}"],
             spec.name, i, numbers=numbers)
        return
    if spec.counter:
        if r.both_annulled:
            dfn.counter[spec.key] = "annullato"
        else:
            dfn.counter_factor[spec.key] = r.factor
    _drop_group(p, atk, i)


# Mira and limb of the parts a label names most often (_hit's rule for any other part)
_MIRA_PARTS = {"corpo": ("corpo", None), "testa": ("testa", None), "arti": ("arti", None),
               "braccia": ("arti", "braccia"), "braccio": ("arti", "braccia"), "gambe": ("arti", "gambe"),
               "gamba": ("arti", "gambe")}


@lru_cache(maxsize=256)
def _mira_effects(mira: str, face: int, arti: str | None) -> D.MiraEffect | None:
    try:
        return D.mira_effects(mira, face, arti)
    except T.MechanicsError:
        return None


def _hit(p: _Post, atk: Incoming, mult: Fraction, reasons: list[str], defence: str | None, roll: int | None, *,
         numbers: dict[str, Any] | None = None, protezione: bool = False, defended_message: bool = False) -> None:
    """An attack that lands: Mira effects from its die face, then a Hit waiting for the attacker's Calcolo."""
    post = p.post
    stacks: list[tuple[str, int]] = []
    if atk.face is not None and not atk.generic:
        part = atk.mira or "corpo"
        # the Mira and the limb a part names ("gamba" → arti, gambe), as below for any part not in the table
        mira, arti = _MIRA_PARTS.get(part) or (
            "arti" if part in ("arti", "braccia", "braccio", "gambe", "gamba") else part,
            "gambe" if part in ("gambe", "gamba") else ("braccia" if part in ("braccia", "braccio") else None))
        eff = _mira_effects(mira, atk.face, arti)
        if eff is not None:
            if eff.multiplier is not None:
                mult *= eff.multiplier.factor
                reasons = [*reasons, eff.multiplier.label]  # a new list: the caller's stays as it was
            stacks.extend(eff.stacks)
            if mira == "arti" and arti is None and atk.face >= T.MIRA_ARTI_STORPIATURA_FACCIA:
                stacks.append((limb_stack(None), 1))
                p.verdicts.append(verdict("ruling.needed", post.id, "Mira agli Arti: arto non indicato, applicata Storpiatura Debilitante "
                    "(braccia); il master può decidere diversamente.", "Successo e Fallimento delle Azioni › Fattore Mira"))
    code = "outcome.defended" if defended_message else "outcome.hit"
    shown = "1" if mult is ONE else "1/2" if mult is HALF else str(mult)  # "1" exactly when mult == 1
    techs = f" [{', '.join(atk.techniques)}]" if atk.techniques else ""
    msg = (f"L'Attacco di {atk.attacker}{techs} colpisce {atk.target}"
           f"{' ma la Protezione dimezza i Danni' if protezione else ''}{f' (×{shown})' if shown != '1' else ''}: "
           f"{'; '.join(reasons)}.")
    if numbers:
        details = numbers.copy()  # dict(numbers, attack_post=…, multiplier=…, defence=…) without a keyword dict
        details["attack_post"] = atk.post
        details["multiplier"] = shown
        details["defence"] = defence
        expected, found = numbers.get("attack_total", atk.total), numbers.get("defence_total")
    else:
        details = {"attack_post": atk.post, "multiplier": shown, "defence": defence}
        expected, found = atk.total, None
    p.verdicts.append(verdict(code, post.id, msg, P_DIFENSIVA if defence else P_FLUSSO, roll=roll,
                              expected=expected, found=found, details=details))
    if atk.sbalzo:
        _sbalzo_landed(p, atk, roll)
    own = _tech_stacks(p.state.registry, atk) if atk.techniques and p.state.registry.techniques else None
    if own:
        stacks.extend(own)  # the technique's own Stacks (registry `extra.stack`): the rules', not the Calcolo's
    applied: list[tuple[str, int]] = []
    if stacks and atk.target in p.fighters:
        p.fighters[atk.target] = _apply_stacks(p, p.fighters[atk.target], stacks, protezione=protezione,
                                               source=atk.post, aggiuntivo=_aggiuntivo(p.state.registry, atk),
                                               applied=applied)
    # Hit(attack, resolved_in, multiplier, reasons, defense, expected, ruled, reazione, protezione, condizioni,
    # applicate), every field in order
    p.hits.append(_Hit(atk, post.id, mult, tuple(reasons), defence, None, None, False, protezione, tuple(stacks),
                       tuple(applied)))


def _tech_stacks(reg: Registry, atk: Incoming) -> tuple[tuple[str, int], ...] | None:
    """The Stacks the attack's technique applies by itself, as the registry lists them (`extra.stack = {Nome = N}`);
    None when the registry does not say (the engine cannot know them: the Calcolo's own list is taken once)."""
    tech = _technique(reg, atk.techniques, atk.attacker)
    table = tech.extra.get("stack") if tech is not None else None
    if not isinstance(table, dict):
        return None
    return _stack_table(tuple(table.items()))


@lru_cache(maxsize=256)
def _stack_table(items: tuple[tuple[Any, Any], ...]) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for name, n in items:
        canon = " ".join(w.capitalize() for w in str(name).split())
        try:
            S.tipo_of(canon)
        except S.UnknownStack:
            continue  # not a Stack of the rule text: nothing the engine can track
        if _int_value(n) and n > 0:
            out.append((canon, n))
    return tuple(out)


def _aggiuntivo(reg: Registry, atk: Incoming) -> bool:
    """The attack deals a Danno Aggiuntivo by its technique (registry): it applies no Type-1/2 Stacks."""
    tech = _technique(reg, atk.techniques, atk.attacker) if atk.techniques and reg.techniques else None
    if tech is None:
        return False
    return any(isinstance(c, str) and c.lower() == "aggiuntivo" for c in (tech.extra.get("danno"), tech.type))


def _register(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, actor: str, multi: str | None,
              dfn: _Defence, annulled: bool = False, declared: tuple[Requirement, ...] | None = None,
              cura: bool = False) -> None:
    """An offensive main action: one incoming attack (or generic action) per target, for their next post."""
    tag = roll.tag
    aliases = p.state.aliases
    if cura:
        _register_cura(p, i, roll, spec, chk, actor, annulled)
        return
    if tag is None:
        targets = []
    elif len(tag.targets) == 1:  # most labels: no comprehension frame for one name
        t = tag.targets[0]
        targets = [(aliases.get(*_name_keys(t)) if t else None) or t]  # _resolve_name
    else:
        targets = [((aliases.get(*_name_keys(t)) if t else None) or t) for t in tag.targets]
    if not targets:
        if spec.counter and dfn.counter_target.get(spec.key):
            targets = [dfn.counter_target[spec.key]]
        else:
            others = [n for n in p.fighters if n != actor and n in (p.state.order + (p.name,))]
            if spec.role == "offensiva" and len(others) == 1:
                targets = others
            elif spec.role == "offensiva" or spec.counter:
                if not annulled:
                    p.verdicts.append(verdict("ruling.needed", p.post.id, f"{spec.name} senza bersaglio indicato nell'etichetta del lancio.",
                        "Successo e Fallimento delle Azioni › Lancio del Dado", roll=i))
                return
            else:
                targets = others
    generic = spec.role == "generica" and not spec.counter
    if declared is None:
        declared = declared_requirements(label_key(tag), roll.label, spec, "offensiva", multi)
    sbalzo = any(r.factor == "sbalzo" for r in declared) if declared else False
    post_id = p.post.id
    techniques = tuple(tag.techniques) if tag else ()
    if not sbalzo and techniques:
        # a Sbalzo that is an effect of the technique (registry `extra.sbalzo`): no −2, the same DMS and Reazione
        eff = _SBALZO_MEMO[0][1] if _SBALZO_MEMO[0][0] is p.state.registry else _sbalzo_techniques(p.state.registry)
        if eff and any(t.lower() in eff for t in techniques):
            sbalzo = True
    group = f"{post_id}#{i}"
    n_targets = len(targets)
    factor = dfn.counter_factor.get(spec.key, ONE)
    actor_f = p.fighters.get(actor)
    # "Sbilanciamento: Potenziale di Attacchi e Difese ridotto di 1 modificatore per Stack", from this turn's Stacks
    pot_mod = T.SBILANCIAMENTO_POTENZIALE_MOD * actor_f.stack_count("Sbilanciamento") if (
        actor_f is not None and actor_f.stacks.entries) else 0
    for t in targets:
        if t == actor:
            continue
        # every Incoming field in order: id, attacker, target, post, roll, action, techniques, total, rendered, face,
        # mira, generic, group, multi, n_targets, counter, potenziale_factor, annulled, sbalzo, authentic, potenziale_mod
        p.new_incoming.append(_Incoming(
            f"{post_id}#{i}#{t}", actor, t, post_id, i, spec.key, techniques, chk.total, chk.rendered, chk.face,
            chk.mira, generic, group, multi, n_targets, spec.counter, factor, annulled, sbalzo, roll.authentic,
            pot_mod))
    if not annulled and (p.aree or techniques and (
            _AREA_MEMO[0][1] if _AREA_MEMO[0][0] is p.state.registry else _area_techniques(p.state.registry))):
        _aree_azione(p, i, roll, spec, actor, techniques, targets)


# --- Calcolo delle Cure ---------------------------------------------------------------------------------

def _is_cura(reg: Registry, tag: Any, label: str | None, actor: str) -> bool:
    """An Azione Generica that is a Cura Principale: its label says «Cura», or its technique is a cure (registry
    type «Curativa», `extra.danno = "cura"`)."""
    if normalise((tag.action if tag is not None and tag.action else label) or "").startswith("cura"):
        return True
    tech = _technique(reg, tuple(tag.techniques), actor) if tag is not None and tag.techniques else None
    return tech is not None and any(isinstance(c, str) and c.lower().startswith("cura")
                                    for c in (tech.extra.get("danno"), tech.type))


def _distanza_cura(settings: Any, tag: Any) -> tuple[bool, int | None]:
    """Fattore Distanza on a Cura ("si applica esclusivamente agli Attacchi": whether a Cura is one, the text does
    not say): setting `distanza_cura` — 'attacco' checks it as on an Attack, 'esclusa' refuses it as on any other
    action, unset (default) reads it as written with a warning. Returns (checked as an Attack, the Distanza to warn
    about)."""
    mode = settings.get("distanza_cura")
    if mode == "attacco":
        return True, None
    if mode == "esclusa" or tag is None:
        return False, None
    listed = [m.amount for m in tag.modifiers if factor_of(m.label) == "distanza"]
    return (True, sum(listed)) if listed else (False, None)


def _register_cura(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, actor: str, annulled: bool) -> None:
    """A Cura Principale rolled: it lands on its targets (the poster when it names none) unless the target or an
    opponent stops its user with a Contrattacco su Azione Generica, so every other fighter may answer it (a generic
    Incoming); its Calcolo delle Cure comes in the user's next post, as for damage, or in this same post."""
    tag = roll.tag
    aliases = p.state.aliases
    targets = [(aliases.get(*_name_keys(t)) if t else None) or t for t in (tag.targets if tag is not None else ())]
    targets = [t for t in targets if t] or [actor]
    post_id = p.post.id
    group = f"{post_id}#{i}"
    techniques = tuple(tag.techniques) if tag else ()
    others = [n for n in p.fighters if n != actor and n not in targets and n in (p.state.order + (p.name,))]
    written = [c for c in p.post.damage if c.kind == "cura" and not _RIGENERAZIONE.match(c.raw)]
    for t in targets + others:
        inc = _Incoming(f"{post_id}#{i}#{t}", actor, t, post_id, i, spec.key, techniques, chk.total, chk.rendered,
                        chk.face, None, True, group, None, len(targets), False, ONE, annulled, False, roll.authentic,
                        0, True)
        if t != actor:
            p.new_incoming.append(inc)
        if t in targets and not annulled:
            early = _match_calc(written, inc)
            if early is not None:
                written.remove(early)
            p.hits.append(_Hit(inc, post_id, ONE, ("Cura: la Difesa del Bersaglio non si considera",), None,
                               calcolo=early))


def _cura_fermata(p: _Post, i: int, atk: Incoming) -> None:
    """A Contrattacco su Azione Generica in time against a Cura Principale: «possono non andare a segno se il
    Bersaglio o un Avversario riescono a fermare l'Utilizzatore» — the Cura does not land on any of its targets."""
    stopped = [h.attack.target for h in p.hits if h.attack.cura and h.attack.group == atk.group and h.fermata is None]
    if not stopped:
        return
    p.hits = [evolve(h, fermata=p.post.id) if h.attack.cura and h.attack.group == atk.group else h for h in p.hits]
    p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
        f"La Cura di {atk.attacker}" + (f" [{', '.join(atk.techniques)}]" if atk.techniques else "")
        + f" è fermata da {p.name}: non va a segno su " + ", ".join(stopped) + ".",
        T.RULE_CURE, roll=i, details={"attack_post": atk.post, "targets": stopped}))


def _cap_cura(p: _Post, target: Fighter, heal: int, who: str, steps: Any, basis: str | None, post: str) -> int:
    """The PV a cure gives back (`outcome.cure`): with the setting `cure_entro_il_massimo` (default, ours) PV never
    exceed the maximum, and the verdict says what the Registro then records."""
    pv, pv_max = target.pv, target.pv_max
    cap = bool(p.state.settings.get("cure_entro_il_massimo", True))
    now = None
    if pv is not None:
        now = pv - sum(d.amount for d in target.due if d.amount is not None and d.resource == "PV")
    given = heal
    note = ""
    assumption = None
    if cap and now is not None and pv_max is not None and now + heal > pv_max:
        given = max(pv_max - now, 0)
        note = (f" {target.name} ha {now} PV su {pv_max}: ne recupera {given}, non {heal} (i PV non superano il "
                "massimo; impostazione `cure_entro_il_massimo`, lettura nostra).")
        assumption = "cure_entro_il_massimo"
    p.verdicts.append(verdict("outcome.cure", p.post.id,
        f"{who} cura {target.name}: +{given} PV." + note + f" Nel Registro di {target.name}: +{given} PV.",
        T.RULE_CURE, expected=given, found=heal,
        details={"attack_post": post, "steps": list(steps or ()), "cura": heal, "pv_recuperati": given,
                 "pv": now, "pv_max": pv_max, "limitata": given != heal, "basis": basis or "dichiarato"},
        assumption=assumption))
    return given


_RIGENERAZIONE = re.compile(r"^\s*rigenerazion", re.IGNORECASE)


def _rigenerazioni(p: _Post, lines: list[DamageCalc]) -> None:
    """Rigenerazione lines (Azioni Secondarie or passive: never stopped): 1 PV every N levels of the technique's
    Statistica by its category (D 7 … S 3), at most one per turn per character — the strongest counts."""
    reg = p.state.registry
    by_target: dict[str, list[tuple[DamageCalc, int | None, list[str], str]]] = {}
    for c in lines:
        user = _resolve_name(p.state, c.actor) or p.name
        healed = _resolve_name(p.state, c.target) or user
        stated = c.result if c.result is not None else _evaluate(c)
        tech = _technique(reg, (c.technique,), user) if c.technique else None
        amount, steps, basis = None, [], "dichiarato"
        uf = p.fighters.get(user)
        stat = tech.extra.get("statistica") if tech is not None else None
        if tech is not None and tech.category and isinstance(stat, str) and uf is not None:
            level = live_stat(uf, stat.capitalize())
            if level is not None:
                try:
                    r = D.rigenerazione(tech.category, level)
                    amount, steps, basis = r.amount, list(r.steps), "motore"
                except T.MechanicsError as exc:
                    steps = [str(exc)]
        if amount is not None and stated is not None and amount != stated:
            p.verdicts.append(verdict("damage.miscalculated", p.post.id,
                f"Rigenerazione di {healed}" + (f" [{c.technique}]" if c.technique else "")
                + f": {cifra(stated)} dichiarato, {amount} calcolato.", T.RULE_CURE, expected=amount, found=stated,
                details={"kind": "rigenerazione", "steps": steps}))
        if amount is None:
            if stated is None:
                p.verdicts.append(verdict("ruling.needed", p.post.id,
                    f"Rigenerazione di {healed}" + (f" [{c.technique}]" if c.technique else "")
                    + ": né categoria e Statistica della Tecnica nel registro (`extra.statistica`) né un numero "
                    "scritto.", T.RULE_CURE, details={"raw": c.raw}))
                continue
            amount = int(stated)
        by_target.setdefault(healed, []).append((c, amount, steps, basis))
    for healed, items in by_target.items():
        best = max(items, key=lambda x: x[1] or 0)
        if len(items) > 1:
            p.verdicts.append(verdict("damage.miscalculated", p.post.id,
                f"Più Rigenerazioni su {healed} nello stesso turno: conta solo la più forte ({best[1]}); scartate "
                f"{[x[1] for x in items if x is not best]}.", T.RULE_CURE, expected=best[1],
                found=sum(x[1] or 0 for x in items), details={"kind": "rigenerazione",
                                                             "amounts": [x[1] for x in items]}))
        c, amount, steps, basis = best
        target = p.fighters.get(healed)
        if target is None or not amount:
            continue
        given = _cap_cura(p, target, amount, f"Rigenerazione [{c.technique or '?'}]", steps, basis, p.post.id)
        target = p.fighters[healed]
        p.fighters[healed] = evolve(target, due=target.due + (
            _DueDamage(-given, "PV", c.actor or p.name, c.technique or "Rigenerazione", p.post.id, basis),))


# --- master posts: rulings ------------------------------------------------------------------------

def parse_rulings(text: str) -> list[tuple[str, str, str]]:
    """`Ruling: <codice> post <id>: <decisione>` lines and `[ruling]…[/ruling]` blocks → (code, post, decision)."""
    return [(m.group(1).lower(), m.group(2), m.group(3).strip()) for m in _RULING_LINE.finditer(text or "")]


_LIBERATO = re.compile(r"^liberat[oaie]\s+(.+)$", re.IGNORECASE)
_DANNO = re.compile(r"^danno\s+(-?\d+)$|^danni\s+(-?\d+)$", re.IGNORECASE)


def _master(state: GuidaState, post: Post) -> tuple[GuidaState, list[Verdict]]:
    verdicts: list[Verdict] = []
    rulings = list(state.rulings)
    hits = list(state.hits)
    incoming = list(state.incoming)
    fighters = dict(state.fighters)
    for code, target_post, decision in parse_rulings(post.body):
        rulings.append(Ruling(code, target_post, decision, post.id))
        applied = "annotata"
        m = _DANNO.match(decision.strip())
        low = decision.strip().lower()
        if m:
            n = int(m.group(1) or m.group(2))
            for k, h in enumerate(hits):
                if h.attack.post == target_post or h.resolved_in == target_post:
                    hits[k] = evolve(h, ruled=n)
                    applied = f"danno {n} per il colpo del post {h.attack.post}"
            for name, f in fighters.items():
                due = tuple(evolve(d, amount=n, basis="ruling") if d.attack_post == target_post else d for d in f.due)
                if due != f.due:
                    fighters[name] = evolve(f, due=due)
                    applied = f"danno {n} da registrare per {name}"
        elif _LIBERATO.match(low):
            who = _resolve_name(state, _LIBERATO.match(low).group(1)) or ""
            f = fighters.get(who) or next((x for n, x in fighters.items() if n.lower() == who.lower()), None)
            if f is not None:
                stacks = f.stacks
                for cond in {e.condition for e in f.stacks.entries if e.condition}:
                    stacks, _ = S.remove_condition(stacks, cond)
                fighters[f.name] = evolve(f, costrizioni=(), costrizione=None, allentamento=0, stacks=stacks)
                applied = f"{f.name} è libero da ogni Costrizione"
        elif low in ("annullato", "annullata", "fallito", "fallita", "nessun danno"):
            before = len(incoming) + len(hits)
            incoming = [a for a in incoming if a.post != target_post]
            hits = [h for h in hits if h.attack.post != target_post and h.resolved_in != target_post]
            if len(incoming) + len(hits) != before:
                applied = "azione annullata"
        verdicts.append(verdict("ruling.applied", post.id,
                                f"Decisione del master su {code} (post {target_post}): {decision} — {applied}.",
                                P_RULING, details={"code": code, "post": target_post, "decision": decision}))
    new = evolve(state, rulings=tuple(rulings), hits=tuple(hits), incoming=tuple(incoming),
                 fighters=MappingProxyType(fighters), posts=state.posts + 1)
    if _AREA_LINE.search(post.body or ""):
        aree = _master_aree(new, post, verdicts)
        if aree is not new.aree:
            new = evolve(new, aree=aree)
    return new, verdicts


# --- Aree di Controllo Espansive in the state -------------------------------------------------------

# "Area: Cortina Velenosa (Espansiva), Saturazione 6, di Hollow; dentro: Quincy, Hollow" (a master's line; in a
# player's post only "dentro" counts), "Area: Cortina Velenosa distrutta"
_AREA_LINE = re.compile(r"^[ \t]*area(?:[ \t]+di[ \t]+controllo)?[ \t]*:[ \t]*(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_AREA_NOME = re.compile(r"^([^(,;]+?)\s*(?=\(|,|;|$)")
_AREA_TIPO = re.compile(r"\((espansiva|statica)\)", re.IGNORECASE)
_AREA_SAT = re.compile(r"\bsaturazione\s*:?\s*(\d{1,3})\b", re.IGNORECASE)
_AREA_OWNER = re.compile(r"[,;]\s*(?:di|creata\s+da|proprietario:?)\s+([^,;]+)", re.IGNORECASE)
_AREA_DENTRO = re.compile(r"\bdentro\s*:?\s*([^;]*)", re.IGNORECASE)
_AREA_FINE = re.compile(r"\s+(distrutt[ao]|scompars[ao]|rimoss[ao]|dissolt[ao])\s*\.?$", re.IGNORECASE)
_NAMES_SPLIT = re.compile(r"\s*,\s*|\s+e\s+", re.IGNORECASE)
_COLPI = re.compile(r"(\d{1,4})\s*colpi\b", re.IGNORECASE)
_AREA_MEMO: list[tuple[Any, dict[str, Technique]]] = [(None, {})]


def _area_techniques(reg: Registry) -> dict[str, Technique]:
    """Techniques whose registry entry creates an Area di Controllo (`extra.area`), by lower-cased name (one
    registry at a time, held with its map)."""
    memo = _AREA_MEMO[0]
    if memo[0] is not reg:
        areas = {n.lower(): t for n, t in reg.techniques.items() if isinstance(t.extra.get("area"), str)}
        for t in list(areas.values()):
            areas.setdefault(t.name.lower(), t)  # a second owner's `Nome [Owner]` is found by its name too
        memo = _AREA_MEMO[0] = (reg, areas)
    return memo[1]


def _area_verdict(p_verdicts: list[Verdict], post: str, message: str, area: AR.Area | None, event: str,
                  rule: str = T.RULE_AREE, *, roll: int | None = None, expected: Any = None, found: Any = None,
                  nome: str | None = None, steps: tuple[str, ...] | list[str] = ()) -> None:
    details: dict[str, Any] = {"area": nome or (area.nome if area else None), "event": event, "steps": list(steps)}
    if area is not None:
        details.update(saturazione=area.saturazione, potenziale=area.potenziale_area, raggio_m=area.raggio,
                       owner=area.owner, dentro=list(area.dentro) if area.dentro is not None else None)
    p_verdicts.append(verdict("outcome.area", post, message, rule, roll=roll, expected=expected, found=found,
                              details=details))


def _describe_area(area: AR.Area) -> str:
    return (f"Saturazione {area.saturazione}, raggio {area.raggio} m, Potenziale {area.potenziale_area}")


def _aree_fase_iniziale(p: _Post) -> None:
    """At a player's Fase Iniziale: the Saturazione its own Aree lose (absolute turns, aree.decadimento); the
    Stack Veleno a Cortina Velenosa gives to the poster when it is inside; who is inside not said → ruling."""
    name = p.name
    if any(a.fughe for a in p.aree):
        _fughe(p)
    me = p.fighters[name]
    turn = me.turn
    out: list[AR.Area] = []
    changed = False
    for area in p.aree:
        if not area.owner:
            # an Area the master declared before anyone posted: its clock is the first poster's turns
            area = evolve(area, owner=name, decay_anchor=turn - 1)
            changed = True
        if area.owner == name:
            step_ = AR.decadimento(area, turn)
            if step_.removed:
                changed = True
                left = step_.area
                _area_verdict(p.verdicts, p.post.id,
                    f"Fase Iniziale di {name}: " + "; ".join(step_.steps)
                    + ("." if left is None else f" ({_describe_area(left)})."), left, "decadimento" if left else "scomparsa",
                    expected=area.saturazione, found=area.saturazione - step_.removed, nome=area.nome, steps=step_.steps)
                if left is None:
                    continue
                area = left
        out.append(area)
        if AR.is_cortina_velenosa(area):
            _cortina_velenosa(p, area)
    if changed:
        p.aree = tuple(out)


def _cortina_velenosa(p: _Post, area: AR.Area) -> None:
    """Cortina Velenosa: Stack Veleno per Turno by Saturazione to whoever is inside, at its Fase Iniziale."""
    name = p.name
    n = AR.cortina_velenosa(area.saturazione)
    if area.dentro is None:
        if area.owner == name:
            p.verdicts.append(verdict("ruling.needed", p.post.id,
                f"{area.nome} (Saturazione {area.saturazione}): {n} Stack di Avvelenamento per Turno a chi è dentro; "
                "chi sia dentro lo dice il post o il master (riga «Area: " + area.nome + "; dentro: Nome, Nome»).",
                T.RULE_AREE_NOTE, details={"area": area.nome, "veleno_per_turno": n}))
        return
    if name not in area.dentro or not n:
        return
    _area_verdict(p.verdicts, p.post.id,
        f"{name} è dentro {area.nome} (Saturazione {area.saturazione}): {n} Stack di Avvelenamento per questo Turno.",
        area, "veleno", T.RULE_AREE_NOTE, found=n)
    p.fighters[name] = _apply_stacks(p, p.fighters[name], [("Avvelenamento", n)], source=area.tecnica or area.nome)


def _aree_azione(p: _Post, i: int, roll: Any, spec: ActionSpec, actor: str, techniques: tuple[str, ...],
                 targets: list[str]) -> None:
    """An Azione Principale that happens: it creates the Area its technique declares (registry `extra.area`), and,
    as an attack inside a live Area (the label names it, or its author or a target is inside), removes Saturazione."""
    post_id = p.post.id
    made: list[AR.Area] = []
    area_techs = _area_techniques(p.state.registry)
    if area_techs:
        for n in techniques:
            tech = area_techs.get(n.lower())
            if tech is not None:
                made.extend(_crea_area(p, i, tech, actor))
    if spec.key == "spostamento" and p.aree:
        _fuga_dichiarata(p, i, roll, actor)
        return
    attack = spec.role == "offensiva" or spec.counter
    live = [a for a in p.aree if not any(a is m for m in made)]
    if not attack or not live:
        return
    label = (roll.label or "").lower()
    inside = {actor, *targets}
    out: list[AR.Area] = []
    changed = False
    for area in p.aree:
        if any(area is m for m in made) or not (area.nome.lower() in label
                                                or area.dentro and not inside.isdisjoint(area.dentro)):
            out.append(area)
            continue
        if _DISTRUGGE.search(label) and area.nome.lower() in label:
            _distruzione(p, i, area, techniques, actor)
        removal = _rimozione(p, i, roll, area, techniques, actor)
        if not removal:
            out.append(area)
            continue
        st = AR.colpita(area, removal.value)
        changed = True
        left = st.area
        _area_verdict(p.verdicts, post_id,
            f"Attacco di {actor} dentro {area.nome}: " + "; ".join(removal.steps) + f" ({area.saturazione} → "
            f"{area.saturazione - st.removed})" + ("; l'Area di Controllo scompare." if left is None else
                                                   f"; {_describe_area(left)}."),
            left, "rimozione" if left else "scomparsa", roll=i, expected=area.saturazione,
            found=area.saturazione - st.removed, nome=area.nome, steps=removal.steps + st.steps)
        if left is not None:
            out.append(left)
    if changed:
        p.aree = tuple(out)


_DISTRUGGE = re.compile(r"distrugg|distruzion", re.IGNORECASE)


def _distruzione(p: _Post, i: int, area: AR.Area, techniques: tuple[str, ...], actor: str) -> None:
    """An attack that names a formed Area to destroy it: its Potenza must exceed the Area's (ours: the Area's Potenza
    is its Potenziale, the Saturazione) and it must cover at least half the Area (narrative: the master)."""
    reg = p.state.registry
    tech = _technique(reg, techniques, actor)
    bonus = _bonus_statistica(reg, actor, tech)
    area_pot = area.potenziale_area
    if tech is None or tech.potenziale is None or bonus is None or area_pot is None:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"{actor} tenta di distruggere {area.nome}: Potenza della Tecnica sconosciuta (registro `potenziale`, "
            "Bonus Statistica); la distrugge se ne ingloba almeno metà con Potenza superiore a quella dell'Area "
            f"({area_pot}).", T.RULE_AREE_DISTRUZIONE, roll=i, details={"area": area.nome}))
        return
    potenza = tech.potenziale + bonus
    r = AR.distrugge(area_pot, potenza, Fraction(1, 2))
    if not r.value:
        _area_verdict(p.verdicts, p.post.id,
            f"{actor} tenta di distruggere {area.nome} con {tech.name}: Potenza {potenza} ≤ Potenza dell'Area "
            f"{area_pot}, l'Area resiste.", area, "non_distrutta", T.RULE_AREE_DISTRUZIONE, roll=i, expected=area_pot,
            found=potenza, steps=r.steps[1:])
        return
    p.verdicts.append(verdict("ruling.needed", p.post.id,
        f"{actor} tenta di distruggere {area.nome} con {tech.name}: Potenza {potenza} > Potenza dell'Area {area_pot}; "
        "è distrutta se la Tecnica ne ingloba almeno metà: lo stabilisce il master (riga «Area: " + area.nome
        + " distrutta»).", T.RULE_AREE_DISTRUZIONE, roll=i, expected=area_pot, found=potenza,
        details={"area": area.nome}))


def _rimozione(p: _Post, i: int, roll: Any, area: AR.Area, techniques: tuple[str, ...],
               actor: str | None = None) -> AR.Calc | None:
    """Stack di Saturazione an attack inside `area` removes (category A/S, Area, Area Totale, Multipli)."""
    tag = roll.tag
    kind = {"multipli": "multiplo"}.get(_multi(tag), _multi(tag)) if tag is not None else "mirato"
    tech = _technique(p.state.registry, techniques, actor)
    m = _COLPI.search(roll.label or "")
    try:
        r = AR.rimozione_da_attacco(categoria=tech.category if tech is not None and tech.category else None,
                                    tipo=kind, colpi=int(m.group(1)) if m else None,
                                    cumulativa=bool(p.state.settings.get("rimozione_saturazione_cumulativa", True)))
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Attacco dentro {area.nome}: Stack di Saturazione rimosse non calcolabili ({exc}).", T.RULE_AREE,
            roll=i, details={"area": area.nome}))
        return None
    if (tech is None or not tech.category) and not r.value:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Attacco dentro {area.nome}: categoria del Potenziale sconosciuta (registro `category`); se è A toglie 1 "
            "Stack di Saturazione, se è S 2: lo stabilisce il master.", T.RULE_AREE, roll=i, details={"area": area.nome}))
        return None
    return r if r.value else None


def _crea_area(p: _Post, i: int, tech: Technique, actor: str) -> list[AR.Area]:
    """The Area di Controllo a technique creates (registry `extra.area`, `extra.saturazione`, `extra.area_nome`)."""
    tipo = str(tech.extra.get("area")).strip().lower()
    if tipo != "espansiva":
        return []  # an Area Statica keeps its size: only its malus on the Potenziale counts (_area_statica)
    nome = str(tech.extra.get("area_nome") or tech.name)
    sat = tech.extra.get("saturazione")
    if not isinstance(sat, int) or isinstance(sat, bool) or sat < 1:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"{tech.name} crea l'Area di Controllo Espansiva {nome}, ma il registro non dà le sue Stack di Saturazione "
            "iniziali (`extra.saturazione`): le stabilisce il master (riga «Area: " + nome
            + " (Espansiva), Saturazione N»).", T.RULE_AREE_CREAZIONE, roll=i, details={"area": nome}))
        return []
    owner = actor if actor in p.fighters else p.name
    area = AR.crea(nome, "espansiva", owner, turn=p.fighters[owner].turn, saturazione=sat, post=p.post.id,
                   tecnica=tech.name)
    replaced = [a for a in p.aree if a.nome.lower() == nome.lower()]
    p.aree = tuple(a for a in p.aree if a.nome.lower() != nome.lower()) + (area,)
    nxt = AR.prossima_perdita(area)
    _area_verdict(p.verdicts, p.post.id,
        f"{owner} crea l'Area di Controllo Espansiva {nome} con {tech.name}: {_describe_area(area)}"
        + (f"; perde {nxt[1]} Stack di Saturazione al turno {nxt[0]} di {owner}" if nxt else "")
        + ("; sostituisce quella già presente" if replaced else "") + ".",
        area, "creata", T.RULE_AREE_CREAZIONE, roll=i, found=sat)
    return [area]


def _fuga_dichiarata(p: _Post, i: int, roll: Any, actor: str) -> None:
    """An Azione Principale di Spostamento of someone inside an Area whose label names the Area or says «Fuga»: a Fuga,
    resolved at the author's next turn unless a Contrattacco su Azione Generica stops it first."""
    label = (roll.label or "").lower()
    fuga = "fuga" in label
    out = list(p.aree)
    for k, area in enumerate(out):
        named = area.nome.lower() in label
        if not (named or fuga) or (actor not in area.dentro if area.dentro is not None else not named):
            continue
        out[k] = evolve(area, fughe=area.fughe + ((actor, p.post.id),))
        _area_verdict(p.verdicts, p.post.id,
            f"{actor} tenta la Fuga da {area.nome} con uno Spostamento (Azione Principale): riesce se nessuno lo "
            "Contrattacca con successo prima del suo prossimo turno.", out[k], "fuga_tentata", T.RULE_AREE_FUGA, roll=i)
    p.aree = tuple(out)


def _fughe(p: _Post) -> None:
    """At the author's next Fase Iniziale its Fuga not stopped by a Contrattacco has succeeded: out of the Area."""
    name = p.name
    out = []
    for area in p.aree:
        if any(who == name for who, _ in area.fughe):
            calc = AR.fuga(False, "spostamento")
            dentro = tuple(n for n in area.dentro if n != name) if area.dentro is not None else None
            area = evolve(area, fughe=tuple(f for f in area.fughe if f[0] != name), dentro=dentro)
            _area_verdict(p.verdicts, p.post.id, f"{name} è fuori da {area.nome}: " + "; ".join(calc.steps) + ".",
                          area, "fuga", T.RULE_AREE_FUGA, steps=calc.steps)
        out.append(area)
    p.aree = tuple(out)


def _area_contrattaccata(p: _Post, i: int, spec: ActionSpec, atk: Incoming, dfn: _Defence) -> None:
    """A Contrattacco in Fase Difensiva against the action that creates an Area: if it succeeds, the Area is destroyed
    while it forms; a Contrattacco su Azione Generica only suspends the action (its author decides: master). One
    that stops a Spostamento di Fuga makes the Fuga fail."""
    res = dfn.counter.get(spec.key)
    if spec.key == "contrattacco_generica" and res == "riuscito":
        out = list(p.aree)
        for k, area in enumerate(out):
            if (atk.attacker, atk.post) in area.fughe:
                out[k] = evolve(area, fughe=tuple(f for f in area.fughe if f != (atk.attacker, atk.post)))
                calc = AR.fuga(False, "spostamento", contrattaccata=True)
                _area_verdict(p.verdicts, p.post.id, f"Fuga di {atk.attacker} da {area.nome} fallita: "
                              + "; ".join(calc.steps) + ".", out[k], "fuga_fallita", T.RULE_AREE_FUGA, roll=i,
                              steps=calc.steps)
        p.aree = tuple(out)
    made = [a for a in p.aree if a.post == atk.post and a.owner == atk.attacker]
    if not made:
        return
    for area in made:
        if spec.key == "contrattacco_generica":
            if res == "riuscito":
                p.verdicts.append(verdict("ruling.needed", p.post.id,
                    f"{area.nome}: l'azione che la crea è Sospesa dal Contrattacco; se {atk.attacker} la conferma "
                    "l'Area si forma, se la annulla no (riga «Area: " + area.nome + " distrutta»).",
                    T.RULE_AREE_DISTRUZIONE, roll=i, details={"area": area.nome}))
            continue
        if res in ("riuscito", "annullato"):
            p.aree = tuple(a for a in p.aree if a is not area)
            _area_verdict(p.verdicts, p.post.id,
                f"{spec.name} riuscito contro l'azione che crea {area.nome}: l'Area di Controllo è distrutta in fase "
                "di creazione.", None, "distrutta", T.RULE_AREE_DISTRUZIONE, roll=i, nome=area.nome)


def _area_names(state: GuidaState, text: str) -> tuple[str, ...]:
    text = text.strip().rstrip(".")
    if not text or text.lower() in ("nessuno", "nessuna", "-"):
        return ()
    return tuple(dict.fromkeys(_resolve_name(state, n) or n for n in _NAMES_SPLIT.split(text) if n.strip()))


def _parse_area(state: GuidaState, content: str) -> dict[str, Any] | None:
    """One "Area:" line → its parts (nome, fine, tipo, saturazione, owner, dentro; absent parts left out)."""
    fine = _AREA_FINE.search(content)
    if fine:
        return {"nome": content[:fine.start()].strip(" ,;"), "fine": fine.group(1).lower()}
    m = _AREA_NOME.match(content)
    if m is None:
        return None
    out: dict[str, Any] = {"nome": m.group(1).strip()}
    rest = content[m.end():]
    if (t := _AREA_TIPO.search(rest)) is not None:
        out["tipo"] = t.group(1).lower()
    if (sat := _AREA_SAT.search(rest)) is not None:
        out["saturazione"] = int(sat.group(1))
    if (o := _AREA_OWNER.search(rest)) is not None:
        out["owner"] = _resolve_name(state, o.group(1).strip().rstrip(".")) or ""
    if (d := _AREA_DENTRO.search(rest)) is not None:
        out["dentro"] = _area_names(state, d.group(1))
    return out if out["nome"] else None


def _aree_dentro(p: _Post) -> None:
    """A player's post says who is inside a live Area ("Area: Cortina Velenosa; dentro: Quincy")."""
    for m in _AREA_LINE.finditer(p.post.body or ""):
        parts = _parse_area(p.state, m.group(1))
        if not parts or "dentro" not in parts:
            continue
        key = parts["nome"].lower()
        for k, area in enumerate(p.aree):
            if area.nome.lower() == key and area.dentro != parts["dentro"]:
                new = evolve(area, dentro=parts["dentro"])
                p.aree = p.aree[:k] + (new,) + p.aree[k + 1:]
                _area_verdict(p.verdicts, p.post.id, f"Dentro {area.nome}: " + (", ".join(new.dentro) or "nessuno")
                              + ".", new, "dentro", T.RULE_AREE)


def _master_aree(state: GuidaState, post: Post, verdicts: list[Verdict]) -> tuple[AR.Area, ...]:
    """A master's "Area:" lines: declare an Area Espansiva of the environment, set its Saturazione, owner (whose turns
    drive the decay; default: the first character of the turn order) and who is inside, or end it."""
    aree = state.aree
    for m in _AREA_LINE.finditer(post.body or ""):
        parts = _parse_area(state, m.group(1))
        if not parts:
            continue
        nome = parts["nome"]
        key = nome.lower()
        old = next((a for a in aree if a.nome.lower() == key), None)
        rest = tuple(a for a in aree if a is not old)
        if "fine" in parts or parts.get("saturazione") == 0:
            if old is not None:
                aree = rest
                _area_verdict(verdicts, post.id, f"Il master: {old.nome} {parts.get('fine', 'scompare')}, l'Area di "
                              "Controllo non c'è più.", None, "scomparsa", T.RULE_AREE_DISTRUZIONE, nome=old.nome)
            continue
        if parts.get("tipo") == "statica":
            continue  # an Area Statica keeps its size and has no Saturazione to follow
        if old is None:
            sat = parts.get("saturazione")
            if sat is None:
                verdicts.append(verdict("ruling.needed", post.id,
                    f"Area {nome} senza Stack di Saturazione (es. «Area: {nome} (Espansiva), Saturazione 6»): non "
                    "viene seguita.", T.RULE_AREE, details={"area": nome}))
                continue
            owner = parts.get("owner") or (state.order[0] if state.order else "")
            f = state.fighters.get(owner)
            area = AR.crea(nome, "espansiva", owner, turn=f.turn if f is not None else 0, saturazione=sat,
                           dentro=parts.get("dentro"), post=post.id)
            aree = rest + (area,)
            nxt = AR.prossima_perdita(area)
            _area_verdict(verdicts, post.id,
                f"Il master dichiara l'Area di Controllo Espansiva {nome}: {_describe_area(area)}"
                + (f"; perde {nxt[1]} Stack di Saturazione al turno {nxt[0]} di {owner}" if nxt and owner else "")
                + (f"; dentro: {', '.join(area.dentro) or 'nessuno'}" if area.dentro is not None else "") + ".",
                area, "creata", T.RULE_AREE, found=sat)
            continue
        changes: dict[str, Any] = {}
        if "saturazione" in parts and parts["saturazione"] != old.saturazione:
            changes["saturazione"] = parts["saturazione"]
        if parts.get("owner") and parts["owner"] != old.owner:
            f = state.fighters.get(parts["owner"])
            changes.update(owner=parts["owner"], decay_anchor=f.turn if f is not None else 0)
        if "dentro" in parts and parts["dentro"] != old.dentro:
            changes["dentro"] = parts["dentro"]
        if not changes:
            continue
        new = evolve(old, **changes)
        aree = rest + (new,)
        _area_verdict(verdicts, post.id, f"Il master aggiorna {old.nome}: {_describe_area(new)}"
                      + (f"; dentro: {', '.join(new.dentro) or 'nessuno'}" if new.dentro is not None else "") + ".",
                      new, "aggiornata", T.RULE_AREE, expected=old.saturazione, found=new.saturazione)
    return aree
