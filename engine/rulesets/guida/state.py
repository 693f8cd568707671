"""Immutable replay state of the `guida` ruleset: fighters, incoming attacks, hits awaiting their Calcolo, rulings.

Durations are absolute: a Stack (stacks.StackEntry) stores the turn of its carrier from which it acts and the
`Expiry(character, turn)` at whose end it goes, never a countdown. A character's turn is the number of its own
posts so far (the current one included while it posts).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Mapping

from ...fastdata import maker  # noqa: F401 - re-exported: the guida modules build their values with it
from ...history import DamageCalc, Registry
from .stacks import StackSet

EMPTY: Mapping[str, Any] = MappingProxyType({})


_new = object.__new__
_setattr = object.__setattr__  # frozen dataclasses refuse their own __setattr__

# Key under which hints.characters caches a Fighter's JSON summary in the instance's __dict__ (not a field: equality,
# repr and dataclasses.replace ignore it; evolve drops it when a field the summary shows changes).
SUMMARY = "_summary"
_SUMMARY_FIELDS = frozenset({"pv", "pv_max", "pe", "pe_max", "stacks", "conditions", "costrizioni", "turn",
                             "costrizione"})


def frozen_map(d: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(d)) if d else EMPTY


def evolve(obj: Any, **changes: Any) -> Any:
    """`dataclasses.replace` for the plain frozen dataclasses of this module, without re-running `__init__`
    (the replay's hot path: a new immutable value that shares every unchanged field with the old one)."""
    d = obj.__dict__.copy()  # a copy of a dict is one presized block; filling a new instance's dict is not
    if SUMMARY in d and not _SUMMARY_FIELDS.isdisjoint(changes):
        del d[SUMMARY]  # a cached summary describes the old value only
    d.update(changes)
    new = _new(obj.__class__)
    _setattr(new, "__dict__", d)
    return new


def evolve_with(obj: Any, changes: dict[str, Any]) -> Any:
    """`evolve(obj, **changes)` for a dict of changes the caller built for this call (no keyword arguments packed)."""
    d = obj.__dict__.copy()
    if SUMMARY in d and not _SUMMARY_FIELDS.isdisjoint(changes):
        del d[SUMMARY]
    d.update(changes)
    new = _new(obj.__class__)
    _setattr(new, "__dict__", d)
    return new


@dataclass(frozen=True)
class DueDamage:
    """A damage (or cure, negative) the character must record in its next Registro."""

    amount: int | None  # None = unknown (nobody gave a number: the master must rule)
    resource: str
    attacker: str
    technique: str | None
    attack_post: str
    basis: str  # "motore" (engine computed), "dichiarato" (the attacker's stated calculation), "ruling"


@dataclass(frozen=True)
class Expense:
    """A technique's cost (registry `cost`) the character must list in its Registro: in the post that uses the
    technique or, at the latest, in its next one."""

    technique: str
    resource: str  # "PE", "PV"
    amount: int  # > 0
    post: str  # where the technique was used


@dataclass(frozen=True)
class Fighter:
    name: str
    pv: int | None = None
    pv_max: int | None = None
    pe: int | None = None
    pe_max: int | None = None
    pv_written: int | None = None  # PV / PE as written in the last schema (the Registro's sum rule compares them)
    pe_written: int | None = None
    stats: Mapping[str, tuple[int, int]] = field(default_factory=lambda: EMPTY)  # reference (base, bonus) without stacks: registry or first schema
    schema_stats: Mapping[str, tuple[int, int]] = field(default_factory=lambda: EMPTY)  # as written in the last schema
    stacks: StackSet = field(default_factory=lambda: StackSet(""))
    conditions: tuple[str, ...] = ()
    costrizione: int | None = None  # Valore di Costrizione (one for all active Costrizioni)
    costrizioni: tuple[str, ...] = ()  # active effects ("Blocco Braccia", …)
    allentamento: int = 0
    uses_attack: Mapping[str, int] = field(default_factory=lambda: EMPTY)  # offensive technique → times used (Attacco Prevedibile)
    uses_defense: Mapping[str, int] = field(default_factory=lambda: EMPTY)  # defensive technique → times used (Difesa Prevedibile)
    turn: int = 0  # posts made so far
    last_post: str | None = None
    due: tuple[DueDamage, ...] = ()  # to record in the next Registro
    preparazione: bool = False  # Preparazione without Azione Secondaria in the last turn (+2 / +1 next turn)
    player: str | None = None
    spese: tuple[Expense, ...] = ()  # technique costs used and not yet listed in a Registro
    # the post (this character's turn, where hits on it are resolved) in which its Armatura gave way: no
    # protection against the other hits of that turn
    armatura_ceduta: str | None = None
    # attacks of this character declared as Costrizione Impropria ("<post>#<roll>", Incoming.group) whose hit has
    # not been calculated yet: their Bonus Potenziale is halved in the Valore di Costrizione
    costrizioni_improprie: tuple[str, ...] = ()
    # (Valore, own turn of the roll) of its last Mimetizzazione / Mascheramento roll, Valore None when the engine could
    # not compute it; None = not Mimetizzato / Mascherato (Valore 0). Ours: it lasts until a Percezione finds it.
    mimetizzazione: tuple[int | None, int] | None = None
    mascheramento: tuple[int | None, int] | None = None
    # (own turns spent not Mimetizzato since its first Mimetizzazione ended, own turn it last ended or None): the
    # Concentrazione against it drops 2 for each such turn
    scoperto: tuple[int, int | None] = (0, None)
    # Concentrazione of this character's Percezione, per target: target → (Bonus Concentrazione of the next
    # attempt, the target's count of turns not Mimetizzato (`scoperto`) when it was recorded)
    concentrazione: Mapping[str, tuple[int, int]] = field(default_factory=lambda: EMPTY)

    def stack_count(self, name: str, turn: int | None = None) -> int:
        """Stacks of `name` acting in this character's turn `turn` (default: the current one)."""
        return self.stacks.count(name, self.turn if turn is None else turn)


@dataclass(frozen=True)
class Incoming:
    """An action waiting for its target's next post: an attack to defend against, or a generic action that
    may be counter-attacked."""

    id: str  # "<post>#<roll>"
    attacker: str
    target: str
    post: str
    roll: int
    action: str  # action key
    techniques: tuple[str, ...]
    total: int | None  # total the engine trusts (RULINGS #6)
    rendered: int | None
    face: int | None
    mira: str | None  # body part aimed at, None = body (non-mirato)
    generic: bool = False  # an Azione Generica / Spostamento: only a Contrattacco su Azione Generica answers it
    group: str = ""  # the roll it comes from (Bersagli Multipli share one group)
    multi: str | None = None  # None, "mirato", "area", "area_totale", "multipli"
    n_targets: int = 1
    counter: bool = False  # an offensive Contrattacco continuing from a defensive one
    potenziale_factor: Fraction = Fraction(1)  # after a Confronto di Potenza
    annulled: bool = False  # its author's Fase Offensiva was annulled: a defence against it is superfluous
    sbalzo: bool = False  # a declared Sbalzo: the target may try a Reazione
    authentic: bool = True  # the roll is the forum's own (not typed by hand): it may decide an outcome alone
    potenziale_mod: int = 0  # modificatori of its Potenziale from its author's Stacks (Sbilanciamento: −1 each)
    cura: bool = False  # a Cura Principale: it lands unless a Contrattacco su Azione Generica stops it


@dataclass(frozen=True)
class Hit:
    """A resolved hit waiting for the attacker's Calcolo dei Danni in its next Fase Iniziale (RULINGS #2)."""

    attack: Incoming
    resolved_in: str  # post where the defence (or its absence) was seen
    multiplier: Fraction  # every multiplier (Mira ×2, tie or Protezione ×½, clash ½), applied once (RULINGS #3)
    reasons: tuple[str, ...]
    defense: str | None
    expected: int | None = None  # the engine's damage when it has every number
    ruled: int | None = None  # a master's ruling
    reazione: bool = False  # a Reazione riuscita against its declared Sbalzo: no Danni Ambientali
    protezione: bool = False  # a Protezione riuscita halved it: it also blocks Sbilanciamento and Stordimento
    # the Stacks the rules gave when it landed (Fattore Mira, the technique's registry `extra.stack`), as requested
    # and as applied: the Calcolo dei Danni reports them, it does not add them again
    condizioni: tuple[tuple[str, int], ...] = ()
    applicate: tuple[tuple[str, int], ...] = ()
    fermata: str | None = None  # a Cura stopped by a Contrattacco su Azione Generica in this post: it did not land
    # a Calcolo delle Cure written in the Cura's own post (the target's Difesa plays no part, so a player may write
    # it at once): checked when the Cura resolves, unless the next post writes one
    calcolo: DamageCalc | None = None


@dataclass(frozen=True)
class Ruling:
    code: str
    post: str
    decision: str
    by_post: str


@dataclass(frozen=True)
class GuidaState:
    settings: Mapping[str, Any]
    registry: Registry
    fighters: Mapping[str, Fighter] = field(default_factory=lambda: EMPTY)
    order: tuple[str, ...] = ()  # characters in order of first appearance (the turn cycle)
    last: str | None = None  # character of the last player post
    incoming: tuple[Incoming, ...] = ()
    hits: tuple[Hit, ...] = ()
    rulings: tuple[Ruling, ...] = ()
    posts: int = 0
    aliases: Mapping[str, str] = field(default_factory=lambda: EMPTY)  # lower-cased author / name → character
    extra: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    # live Aree di Controllo Espansive (aree.Area): created by a technique (registry `extra.area`) or declared by
    # the master; their Saturazione decays at their owner's turns (absolute turns, aree.decadimento)
    aree: tuple[Any, ...] = ()

    def fighter(self, name: str) -> Fighter | None:
        return self.fighters.get(name)

    def with_fighter(self, f: Fighter) -> GuidaState:
        d = dict(self.fighters)
        d[f.name] = f
        return evolve(self, fighters=MappingProxyType(d))


__all__ = ["maker", "evolve", "evolve_with", "DueDamage", "Expense", "Fighter", "Incoming", "Hit", "Ruling", "GuidaState", "frozen_map", "EMPTY"]
