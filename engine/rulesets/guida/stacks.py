"""Condizioni Fisiche of `guida`: Stack types 1–4 and Accecamento, with absolute expiry.

Turns are counted per character: turn N of X is X's N-th post in the fight. Every function takes
`turn` = how many turns (posts) the owner of the set has had so far, the current one included when
it is the owner's own post. A Stack received at `turn` acts from the owner's turn `turn + 1`.

API:
- `Expiry(character, turn)`: "scade alla fine del turno N di X" (never a countdown).
- `StackEntry(name, count, tipo, active_from, expires, condition, decay_anchor, source)`;
  `StackSet(owner, entries)` with `.counts(turn=None)`, `.count(name, turn=None)`, `.active(turn)`.
- `tipo_of(name) -> int` (0 = Accecamento; raises `UnknownStack`); `rule_of(name)` = its rule paragraph.
- `apply(stacks, incoming, *, turn, damage_taken=None, aggiuntivo=False, protezione=False,
  condition=None, source=None, expires=None, immune=False) -> ApplyResult`: `incoming` is
  `[(name, count), …]` in the attacker's order of preference (Type-1 overflow keeps the first ones).
  `ApplyResult.overflow` lists `Overflow(name, requested, applied, limit, existing)` for `stacks.over_limit`;
  `ApplyResult.rejected` lists `Rejection(name, count, reason, message)` (aggiuntivo, protezione, no damage, immune).
- `expire_at(stacks, turn) -> StackSet`: without what expires at the end of the owner's turn `turn` (or before);
  `expiring(stacks, turn)` lists those entries.
- `remove(stacks, names)`, `remove_condition(stacks, condition) -> (StackSet, removed_count)`;
  `PREPARAZIONE_RIMUOVE` = the Stacks a Preparazione removes.
- `effects(stacks, turn, veleni=None) -> Effects`: `stats` (Punti Bonus by statistic), `mods`
  (`RollMod(amount, label, applies)` for Probabilità di Colpire/Difendere), `potenziale_mod`
  (Sbilanciamento: −1 modificatore per Stack), `nascosti_oltre_m` (Accecamento), `unknown` (Avvelenamento
  without a registry Veleno), `steps`.
- `damage_per_turn(stacks, turn, veleni=None) -> tuple[DamageResult, …]` (Incendio/Congelamento Danni Puri,
  Avvelenamento from its `Veleno`).
- `fase_iniziale(stacks, turn, veleni=None, *, danno_prima_del_decadimento=True) -> FaseIniziale(stacks,
  damages, decayed, broken)`: the owner's
  Fase Iniziale: Type-4 damage (on the Stacks before decay), then Type-4 decay; conditions whose Stacks
  are all gone are `broken` ("la costrizione viene spezzata").
- `Veleno(nome, danni, statistica, malus)`, `veleno_from_extra(nome, extra)`: Avvelenamento per the
  registry (the text defers to the "Regolamento Equipaggiamenti").
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from .damage import DamageResult
from .tables import (
    ACCECAMENTO_DESTREZZA, ACCECAMENTO_NASCOSTI_OLTRE_M, CONGELAMENTO_DANNI, CONGELAMENTO_DESTREZZA, INCENDIO_DANNI,
    RULE_ACCECAMENTO, RULE_TIPO1, RULE_TIPO2, RULE_TIPO3, RULE_TIPO4, SBILANCIAMENTO_DIFENDERE,
    SBILANCIAMENTO_POTENZIALE_MOD, STORDIMENTO_SUCCESSO, STORPIATURE, TIPO1, TIPO1_DURATA_TURNI, TIPO1_MAX,
    TIPO2_DURATA_TURNI, TIPO2_MAX_PER_CATEGORIA, TIPO3, TIPO4, TIPO4_DECADIMENTO, USTIONE_COSTITUZIONE, BadValue,
    MechanicsError, band_value,
)

ACCECAMENTO = "Accecamento"
PREPARAZIONE_RIMUOVE: tuple[str, ...] = ("Stordimento", "Sbilanciamento")
PROTEZIONE_BLOCCA: tuple[str, ...] = ("Sbilanciamento", "Stordimento")


class UnknownStack(MechanicsError):
    """A Stack name the rule text does not define."""


def tipo_of(name: str) -> int:
    if name in TIPO1:
        return 1
    if name in STORPIATURE:
        return 2
    if name in TIPO3:
        return 3
    if name in TIPO4:
        return 4
    if name == ACCECAMENTO:
        return 0
    raise UnknownStack(f"Stack sconosciuta: {name!r}")


_RULE_BY_TIPO = {0: RULE_ACCECAMENTO, 1: RULE_TIPO1, 2: RULE_TIPO2, 3: RULE_TIPO3, 4: RULE_TIPO4}


def rule_of(name: str) -> str:
    """The rule paragraph of a Stack (for verdicts)."""
    return _RULE_BY_TIPO[tipo_of(name)]


@dataclass(frozen=True)
class Expiry:
    character: str
    turn: int  # expires at the END of this turn of `character`

    def describe(self) -> str:
        return f"fine del turno {self.turn} di {self.character}"


@dataclass(frozen=True)
class StackEntry:
    name: str
    count: int
    tipo: int
    active_from: int  # first turn of the owner it acts on
    expires: Expiry | None  # None: no expiry during the fight (Ustione, Avvelenamento, Type-4 until its condition)
    condition: str | None = None  # Type-4: the Costrizione (condition) it is bound to
    decay_anchor: int | None = None  # Type-4: owner's turn of the application or of the last decay
    source: str | None = None  # who applied it; Avvelenamento: the Veleno's name

    def active_at(self, turn: int) -> bool:
        return self.active_from <= turn and (self.expires is None or turn <= self.expires.turn)

    def alive_after(self, turn: int) -> bool:
        """Still there in the owner's turn `turn + 1`."""
        return self.expires is None or self.expires.turn > turn


@dataclass(frozen=True)
class StackSet:
    owner: str
    entries: tuple[StackEntry, ...] = ()

    def active(self, turn: int) -> tuple[StackEntry, ...]:
        return tuple(e for e in self.entries if e.active_at(turn))

    def counts(self, turn: int | None = None) -> dict[str, int]:
        """Stacks by name: all held (turn None) or those acting in the owner's turn `turn`."""
        out: dict[str, int] = {}
        for e in self.entries if turn is None else self.active(turn):
            out[e.name] = out.get(e.name, 0) + e.count
        return out

    def count(self, name: str, turn: int | None = None) -> int:
        return self.counts(turn).get(name, 0)


@dataclass(frozen=True)
class Overflow:
    name: str
    requested: int
    applied: int
    limit: int
    existing: int  # Stacks of the limit's scope already there
    scope: str  # "Tipo-1" (all Type-1) or the Type-2 category name
    rule: str = RULE_TIPO1

    def message(self) -> str:
        return (f"{self.requested} Stack di {self.name} richieste, {self.existing} già presenti ({self.scope}): "
                f"limite {self.limit}, applicate {self.applied}")


@dataclass(frozen=True)
class Rejection:
    name: str
    count: int
    reason: str  # "aggiuntivo", "protezione", "nessun_danno", "immune"
    message: str
    rule: str


@dataclass(frozen=True)
class ApplyResult:
    stacks: StackSet
    applied: tuple[tuple[str, int], ...]
    overflow: tuple[Overflow, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    notes: tuple[str, ...] = ()  # e.g. Type-2 applied without knowing whether damage was dealt


def _int_count(n: object) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise BadValue(f"numero di Stack non valido: {n!r}")
    return n


def apply(stacks: StackSet, incoming: Sequence[tuple[str, int]] | tuple[str, int], *, turn: int,
          damage_taken: int | None = None, aggiuntivo: bool = False, protezione: bool = False,
          condition: str | None = None, source: str | None = None, expires: Expiry | None = None,
          immune: bool = False) -> ApplyResult:
    """Apply Stacks received at the owner's turn `turn` (they act from `turn + 1`)."""
    if isinstance(incoming, tuple) and len(incoming) == 2 and isinstance(incoming[0], str):
        incoming = [incoming]  # type: ignore[list-item]
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 0:
        raise BadValue(f"turno non valido: {turn!r}")
    entries = list(stacks.entries)
    applied: list[tuple[str, int]] = []
    overflow: list[Overflow] = []
    rejected: list[Rejection] = []
    notes: list[str] = []
    owner = stacks.owner
    for name, count in incoming:  # type: ignore[misc]
        count = _int_count(count)
        tipo = tipo_of(name)
        if count == 0:
            continue
        if aggiuntivo and tipo in (1, 2):
            rejected.append(Rejection(name, count, "aggiuntivo",
                                      f"gli Attacchi che provocano Danni Aggiuntivi non applicano Stack di Tipo {tipo}",
                                      "Calcolo dei Danni › Tipologie di Danno"))
            continue
        if protezione and name in PROTEZIONE_BLOCCA:
            rejected.append(Rejection(name, count, "protezione",
                                      f"con una Protezione riuscita non si ricevono Stack di {name}",
                                      "Successo e Fallimento delle Azioni › Protezione"))
            continue
        if tipo == 1:
            alive = sum(e.count for e in entries if e.tipo == 1 and e.alive_after(turn))
            room = max(TIPO1_MAX - alive, 0)
            take = min(count, room)
            if take < count:
                overflow.append(Overflow(name, count, take, TIPO1_MAX, alive, "Tipo-1", RULE_TIPO1))
            if take:
                end = Expiry(owner, turn + TIPO1_DURATA_TURNI)
                entries = _merge(entries, StackEntry(name, take, 1, turn + 1, end, source=source))
                applied.append((name, take))
        elif tipo == 2:
            if damage_taken is not None and damage_taken <= 0:
                rejected.append(Rejection(name, count, "nessun_danno",
                                          f"{name}: per applicare Stack di Tipo-2 il Bersaglio deve aver subito Danni",
                                          RULE_TIPO2))
                continue
            if damage_taken is None:
                notes.append(f"{name}: applicata senza sapere se il Bersaglio ha subito Danni")
            alive = sum(e.count for e in entries if e.name == name and e.alive_after(turn))
            take = min(count, max(TIPO2_MAX_PER_CATEGORIA - alive, 0))
            if take < count:
                overflow.append(Overflow(name, count, take, TIPO2_MAX_PER_CATEGORIA, alive, name, RULE_TIPO2))
            # every new application resets the count of the whole category, even if nothing was added
            end = Expiry(owner, turn + TIPO2_DURATA_TURNI)
            entries = [replace(e, expires=end) if e.name == name and e.alive_after(turn) else e for e in entries]
            if take:
                entries = _merge(entries, StackEntry(name, take, 2, turn + 1, end, source=source))
                applied.append((name, take))
        elif tipo == 3:
            entries = _merge(entries, StackEntry(name, count, 3, turn + 1, None, source=source))
            applied.append((name, count))
        elif tipo == 4:
            if not condition:
                raise BadValue(f"{name}: una Stack di Tipo-4 va legata alla sua Condizione (Costrizione)")
            entries = _merge(entries, StackEntry(name, count, 4, turn + 1, None, condition=condition,
                                                 decay_anchor=turn, source=source))
            applied.append((name, count))
        else:  # Accecamento: a condition, one at a time
            if immune:
                rejected.append(Rejection(name, count, "immune",
                                          "il Talento [Sensi Alternativi alla Vista] rende immuni all'Accecamento",
                                          RULE_ACCECAMENTO))
                continue
            entries = [e for e in entries if e.name != ACCECAMENTO]
            entries.append(StackEntry(ACCECAMENTO, 1, 0, turn + 1, expires, source=source))
            applied.append((name, 1))
    return ApplyResult(StackSet(owner, tuple(entries)), tuple(applied), tuple(overflow), tuple(rejected), tuple(notes))


def _merge(entries: list[StackEntry], new: StackEntry) -> list[StackEntry]:
    """Add `new`, merging it into an entry with the same name, timing, condition and source."""
    out = list(entries)
    for i, e in enumerate(out):
        if e.tipo == 4 and new.tipo == 4 and e.name == new.name and e.condition == new.condition:
            # one pool per condition; the decay clock keeps running from the earlier anchor
            out[i] = replace(e, count=e.count + new.count, active_from=min(e.active_from, new.active_from))
            return out
        if (e.name, e.active_from, e.expires, e.condition, e.source) == (
                new.name, new.active_from, new.expires, new.condition, new.source) and e.tipo != 4:
            out[i] = replace(e, count=e.count + new.count)
            return out
    out.append(new)
    return out


def expiring(stacks: StackSet, turn: int) -> tuple[StackEntry, ...]:
    return tuple(e for e in stacks.entries if e.expires is not None and e.expires.turn <= turn)


def expire_at(stacks: StackSet, turn: int) -> StackSet:
    """The set after the end of the owner's turn `turn`: what expires then (or earlier) is gone."""
    entries = stacks.entries
    if not entries:
        return stacks  # immutable: nothing to drop, the same set (the common case, once per post)
    kept = tuple([e for e in entries if e.expires is None or e.expires.turn > turn])
    return stacks if len(kept) == len(entries) else StackSet(stacks.owner, kept)


def remove(stacks: StackSet, names: Iterable[str]) -> StackSet:
    """Remove every Stack with these names (Preparazione, a Tecnica that cures Ustione, …)."""
    drop = set(names)
    for n in drop:
        tipo_of(n)
    return StackSet(stacks.owner, tuple(e for e in stacks.entries if e.name not in drop))


def remove_condition(stacks: StackSet, condition: str) -> tuple[StackSet, int]:
    """When the Condizione ends every Type-4 Stack bound to it is removed. Returns (set, Stacks removed)."""
    gone = sum(e.count for e in stacks.entries if e.condition == condition)
    return StackSet(stacks.owner, tuple(e for e in stacks.entries if e.condition != condition)), gone


# --- Avvelenamento (registry) ----------------------------------------------------------------------

@dataclass(frozen=True)
class Veleno:
    """A poison as the registry describes it (the text defers to the "Regolamento Equipaggiamenti")."""

    nome: str
    danni: tuple[tuple[int, int], ...] = ()  # (from Stacks, Danni Puri per turn)
    statistica: str | None = None
    malus: tuple[tuple[int, int], ...] = ()  # (from Stacks, Punti Bonus)


def veleno_from_extra(nome: str, extra: Mapping[str, Any]) -> Veleno | None:
    """A `Veleno` from a registry Technique's `extra["veleno"]` = {"danni": [[1, 2], …],
    "statistica": "Costituzione", "malus": [[1, -1], …]}; None when absent; `BadValue` when malformed."""
    spec = extra.get("veleno") if isinstance(extra, Mapping) else None
    if spec is None:
        return None
    try:
        danni = tuple(sorted((int(a), int(b)) for a, b in spec.get("danni", ())))
        malus = tuple(sorted((int(a), int(b)) for a, b in spec.get("malus", ())))
        stat = spec.get("statistica")
    except (TypeError, ValueError, AttributeError) as exc:
        raise BadValue(f"Veleno {nome!r} malformato nel registro: {exc}") from None
    return Veleno(nome, danni, str(stat) if stat else None, malus)


# --- effects ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RollMod:
    amount: int
    label: str  # as in a dice tag: "-2 [Sbilanciamento]"
    applies: tuple[str, ...]  # of "colpire", "difendere"
    rule: str = RULE_TIPO1

    def tag(self) -> str:
        return f"{self.amount:+d} [{self.label}]"


@dataclass(frozen=True)
class Effects:
    stats: dict[str, int] = field(default_factory=dict)  # Punti Bonus by statistic (negative = malus)
    mods: tuple[RollMod, ...] = ()
    potenziale_mod: int = 0  # modificatori of Potenziale for Attacchi and Difese (Regolamento Tecniche)
    nascosti_oltre_m: int | None = None
    unknown: tuple[str, ...] = ()  # effects the engine cannot compute (Avvelenamento without a Veleno)
    steps: tuple[str, ...] = ()

    def modifier(self, kind: str) -> int:
        """Total of the roll modifiers for "colpire" or "difendere"."""
        return sum(m.amount for m in self.mods if kind in m.applies)


def effects(stacks: StackSet, turn: int, veleni: Mapping[str, Veleno] | None = None) -> Effects:
    """What the Stacks acting in the owner's turn `turn` do to its statistics and rolls."""
    counts = stacks.counts(turn)
    stats: dict[str, int] = {}
    mods: list[RollMod] = []
    steps: list[str] = []
    unknown: list[str] = []
    pot_mod = 0

    def add(stat: str, amount: int, why: str) -> None:
        if amount:
            stats[stat] = stats.get(stat, 0) + amount
            steps.append(f"{why}: {stat} {amount:+d} Punti Bonus")

    n = counts.get("Sbilanciamento", 0)
    if n:
        mods.append(RollMod(SBILANCIAMENTO_DIFENDERE * n, "Sbilanciamento", ("difendere",)))
        pot_mod += SBILANCIAMENTO_POTENZIALE_MOD * n
        steps.append(f"{n} Stack di Sbilanciamento: Probabilità di Difendere {SBILANCIAMENTO_DIFENDERE * n:+d}, "
                     f"Potenziale di Attacchi e Difese {SBILANCIAMENTO_POTENZIALE_MOD * n:+d} modificatori")
    n = counts.get("Stordimento", 0)
    if n:
        mods.append(RollMod(STORDIMENTO_SUCCESSO * n, "Stordimento", ("colpire", "difendere")))
        steps.append(f"{n} Stack di Stordimento: Probabilità di Successo {STORDIMENTO_SUCCESSO * n:+d}")
    for name, (stat, per) in STORPIATURE.items():
        n = counts.get(name, 0)
        add(stat, per * n, f"{n} Stack di {name}")
    n = counts.get("Ustione", 0)
    add("Costituzione", band_value(USTIONE_COSTITUZIONE, n, 0), f"{n} Stack di Ustione")
    n = counts.get("Congelamento", 0)
    add("Destrezza", band_value(CONGELAMENTO_DESTREZZA, n, 0), f"{n} Stack di Congelamento")
    nascosti = None
    if counts.get(ACCECAMENTO):
        add("Destrezza", ACCECAMENTO_DESTREZZA, "Accecamento")
        nascosti = ACCECAMENTO_NASCOSTI_OLTRE_M
        steps.append(f"Accecamento: i Personaggi oltre {ACCECAMENTO_NASCOSTI_OLTRE_M} m sono Nascosti")
    for src, n in _poison(stacks, turn).items():
        v = (veleni or {}).get(src)
        if v is None:
            unknown.append(f"{n} Stack di Avvelenamento ({src or 'veleno non indicato'}): effetti dal "
                           "Regolamento Equipaggiamenti, assenti dal registro")
        elif v.statistica:
            add(v.statistica, band_value(v.malus, n, 0), f"{n} Stack di Avvelenamento ({v.nome})")
    return Effects(stats, tuple(mods), pot_mod, nascosti, tuple(unknown), tuple(steps))


def _poison(stacks: StackSet, turn: int) -> dict[str, int]:
    """Avvelenamento Stacks acting at `turn`, by Veleno."""
    out: dict[str, int] = {}
    for e in stacks.active(turn):
        if e.name == "Avvelenamento":
            out[e.source or ""] = out.get(e.source or "", 0) + e.count
    return out


def damage_per_turn(stacks: StackSet, turn: int, veleni: Mapping[str, Veleno] | None = None) -> tuple[DamageResult, ...]:
    """Danni Puri the owner takes at the start of its turn `turn` from Type-4 Stacks (and Avvelenamento)."""
    out: list[DamageResult] = []
    counts = stacks.counts(turn)
    for name, table in (("Incendio", INCENDIO_DANNI), ("Congelamento", CONGELAMENTO_DANNI)):
        n = counts.get(name, 0)
        if n:
            dmg = band_value(table, n, 0)
            out.append(DamageResult(dmg, kind="puro", rule=RULE_TIPO4,
                                    steps=(f"{n} Stack di {name}: {dmg} Danni Puri all'inizio del turno",)))
    for src, n in _poison(stacks, turn).items():
        v = (veleni or {}).get(src)
        if v is not None and v.danni:
            dmg = band_value(v.danni, n, 0)
            out.append(DamageResult(dmg, kind="puro", rule=RULE_TIPO3,
                                    steps=(f"{n} Stack di Avvelenamento ({v.nome}): {dmg} Danni Puri",)))
    return tuple(out)


@dataclass(frozen=True)
class FaseIniziale:
    stacks: StackSet
    damages: tuple[DamageResult, ...]
    decayed: tuple[tuple[str, str | None, int], ...]  # (name, condition, Stacks lost)
    broken: tuple[str, ...]  # conditions whose Type-4 Stacks are all gone: the Costrizione is broken


def fase_iniziale(stacks: StackSet, turn: int, veleni: Mapping[str, Veleno] | None = None, *,
                  danno_prima_del_decadimento: bool = True) -> FaseIniziale:
    """The owner's Fase Iniziale of turn `turn`: Type-4 (and poison) damage on the Stacks present, then the
    Type-4 decay ("1-5 Stack: −1 ogni 2 Turni", …) counted from the last decay or the application.
    `danno_prima_del_decadimento=False` (setting `tipo4_danno_prima_del_decadimento`) deals the damage on
    the Stacks left after the decay."""
    damages = damage_per_turn(stacks, turn, veleni) if danno_prima_del_decadimento else ()
    entries: list[StackEntry] = []
    decayed: list[tuple[str, str | None, int]] = []
    conditions_before = {e.condition for e in stacks.entries if e.tipo == 4}
    for e in stacks.entries:
        if e.tipo != 4 or not e.active_at(turn):
            entries.append(e)
            continue
        lost, every = band_value(TIPO4_DECADIMENTO, e.count, (0, 1))
        anchor = e.decay_anchor if e.decay_anchor is not None else e.active_from - 1
        if lost and turn - anchor >= every:
            left = max(e.count - lost, 0)
            decayed.append((e.name, e.condition, e.count - left))
            if left:
                entries.append(replace(e, count=left, decay_anchor=turn))
        else:
            entries.append(e)
    conditions_after = {e.condition for e in entries if e.tipo == 4}
    broken = tuple(sorted(c for c in conditions_before - conditions_after if c))
    after = StackSet(stacks.owner, tuple(entries))
    if not danno_prima_del_decadimento:
        damages = damage_per_turn(after, turn, veleni)
    return FaseIniziale(after, damages, tuple(decayed), broken)
