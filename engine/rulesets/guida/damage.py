"""Calcolo dei Danni and Calcolo delle Cure of `guida`: pure formulas returning explained `DamageResult`s.

API:
- `potenza(potenziale, bonus_statistica)`, `resistenza(costituzione_totale)`.
- `Multiplier(factor, label, critical)`; ready ones `CRITICO_CORPO`, `CRITICO_TESTA`, `PAREGGIO`,
  `PROTEZIONE`, `AGGIUNTIVO`; `mira_effects(mira, faccia, arti=None) -> MiraEffect` (×2 and Stacks of
  the Fattore Mira for a hit).
- `Armatura(potenziale, nome, blocca_puri=False, attiva=True)`: Armatura = Potenziale + Resistenza.
- Damage (all keyword-friendly, `multipliers` applied after the type's formula, rounding down once,
  RULINGS #3; `aggiuntivo=True` makes it a Danno Aggiuntivo = Danno / 2):
  `danno_normale(potenza, resistenza, *, armatura=None, …)`,
  `danno_puro(potenziale, bonus_statistica, *, armatura=None, …)`,
  `danno_semipuro(potenza, resistenza, potenziale, bonus_statistica, *, armatura=None, …)`,
  `danno_ambientale(categoria_attacco, dado, bonus_statistica, resistenza, *, da_difesa=False, armatura=None, …)`
  (never critical: a critical multiplier raises `NotAllowed`; the Armatura as on a Danno Normale, then halved).
- Cures: `cura_principale(potenziale, bonus_statistica, *, armatura=None)`,
  `rigenerazione(categoria, livello_statistica)`.
- `piu_forte(results)`: at most one Danno Aggiuntivo / one Rigenerazione per turn, the strongest.
- `AGGIUNTIVO_NO_STACK_TIPI = (1, 2)`: Danni Aggiuntivi never apply Type-1/2 Stacks.
- `DamageResult(amount, resource, steps, kind, cura, armatura, assumption, ruling, rule)`:
  `amount` >= 0 always; `delta` is the signed change of the resource (−damage, +cure);
  `armatura` is "regge" (the armour keeps protecting), "cede" (no protection for the rest of the
  turn) or None (no armour involved).
Errors: `tables.BadValue` for impossible numbers, `tables.NotAllowed` for critical Danno Ambientale.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Literal, Sequence

from .messages import cifra
from .tables import (
    AMBIENTALE_FACTOR, MIRA_ARTI_STORPIATURA, MIRA_ARTI_STORPIATURA_FACCIA, MIRA_CORPO_CRITICO_FACCIA,
    MIRA_TESTA_CRITICO_FACCIA, MIRA_TESTA_STORDIMENTO_FACCIA, MIRA_TESTA_STORDIMENTO_STACK, PURO_BONUS_DIVISORE,
    RIGENERAZIONE_LIVELLI, RULE_AMBIENTALE, RULE_ARMATURA, RULE_CURE, RULE_CURE_ARMATURA, RULE_DANNI, RULE_MIRA,
    BadValue, MechanicsError, NotAllowed, category,
)

AGGIUNTIVO_NO_STACK_TIPI: tuple[int, ...] = (1, 2)

ArmourOutcome = Literal["regge", "cede"]


@dataclass(frozen=True)
class Multiplier:
    factor: Fraction
    label: str
    critical: bool = False  # a Colpo Critico (Fattore Mira): never for Danni Ambientali

    def __post_init__(self) -> None:
        try:
            factor = Fraction(self.factor)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise BadValue(f"moltiplicatore non valido: {self.factor!r}") from None
        if factor < 0:
            raise BadValue(f"moltiplicatore negativo: {self.factor!r}")
        object.__setattr__(self, "factor", factor)


CRITICO_CORPO = Multiplier(Fraction(2), "Mira al Corpo con Fattore di Casualità 12: Danno raddoppiato", True)
CRITICO_TESTA = Multiplier(Fraction(2), "Mira alla Testa con Fattore di Casualità ≥ 9: Danno raddoppiato", True)
PAREGGIO = Multiplier(Fraction(1, 2), "Pareggio: Danno dimezzato")
PROTEZIONE = Multiplier(Fraction(1, 2), "Protezione riuscita: Danni dimezzati")
AGGIUNTIVO = Multiplier(Fraction(1, 2), "Danno Aggiuntivo: Danno / 2")


@dataclass(frozen=True)
class MiraEffect:
    multiplier: Multiplier | None
    stacks: tuple[tuple[str, int], ...]  # (Stack name, count) applied by the hit
    steps: tuple[str, ...]
    rule: str = RULE_MIRA


def mira_effects(mira: str, faccia: int, arti: str | None = None) -> MiraEffect:
    """Effects of the Fattore Mira for an attack that hit, from its die face (Fattore di Casualità).

    `mira` is "corpo" (also every non-aimed attack), "arti" or "testa"; `arti` is "braccia" or "gambe"
    for Mira agli Arti (None → the Storpiatura cannot be chosen and no Stack is returned)."""
    mira = mira.strip().lower()
    if not isinstance(faccia, int) or faccia < 1:
        raise BadValue(f"Fattore di Casualità non valido: {faccia!r}")
    if mira == "corpo":
        if faccia == MIRA_CORPO_CRITICO_FACCIA:
            return MiraEffect(CRITICO_CORPO, (), (f"Mira al Corpo, dado {faccia}: Danno raddoppiato",))
        return MiraEffect(None, (), ())
    if mira == "arti":
        if faccia >= MIRA_ARTI_STORPIATURA_FACCIA:
            if arti is None:
                return MiraEffect(None, (), (f"Mira agli Arti, dado {faccia}: 1 Stack di Storpiatura (arto non indicato)",))
            name = MIRA_ARTI_STORPIATURA.get(arti.strip().lower())
            if name is None:
                raise BadValue(f"arto sconosciuto: {arti!r} (attesi: braccia, gambe)")
            return MiraEffect(None, ((name, 1),), (f"Mira agli Arti ({arti}), dado {faccia}: 1 Stack di {name}",))
        return MiraEffect(None, (), ())
    if mira == "testa":
        mult = CRITICO_TESTA if faccia >= MIRA_TESTA_CRITICO_FACCIA else None
        stacks: tuple[tuple[str, int], ...] = ()
        steps = []
        if faccia == MIRA_TESTA_STORDIMENTO_FACCIA:
            stacks = (("Stordimento", MIRA_TESTA_STORDIMENTO_STACK),)
            steps.append(f"Mira alla Testa, dado {faccia}: {MIRA_TESTA_STORDIMENTO_STACK} Stack di Stordimento")
        if mult:
            steps.append(f"Mira alla Testa, dado {faccia} (≥ {MIRA_TESTA_CRITICO_FACCIA}): Danno raddoppiato")
        return MiraEffect(mult, stacks, tuple(steps))
    raise BadValue(f"Mira sconosciuta: {mira!r} (attese: corpo, arti, testa)")


@dataclass(frozen=True)
class Armatura:
    """An Armatura (or an analogous effect) of the target. Armatura = Potenziale + Resistenza."""

    potenziale: int
    nome: str = "Armatura"
    blocca_puri: bool = False  # an Armatura that also blocks Danni Puri (and therefore Cure)
    attiva: bool = True  # False after it "non offrirà protezione per il resto del Turno"


@dataclass(frozen=True)
class DamageResult:
    amount: int  # >= 0
    resource: str = "PV"
    steps: tuple[str, ...] = ()
    kind: str = "normale"  # normale, puro, semi-puro, ambientale, cura, rigenerazione (+ " aggiuntivo")
    cura: bool = False
    armatura: ArmourOutcome | None = None
    assumption: str | None = None  # name of the setting (ours) the result depends on
    ruling: str | None = None  # what the master must rule, when the text leaves it open
    rule: str = RULE_DANNI

    @property
    def delta(self) -> int:
        """Signed change of the resource: negative for damage, positive for a cure."""
        return self.amount if self.cura else -self.amount


def potenza(potenziale: int, bonus_statistica: int) -> int:
    """Potenza = Potenziale + Bonus Statistica."""
    return _int(potenziale, "Potenziale") + _int(bonus_statistica, "Bonus Statistica")


def resistenza(costituzione_totale: int) -> int:
    """Resistenza = Livello Totale di Costituzione."""
    return _int(costituzione_totale, "Costituzione")


def _int(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadValue(f"{name} non intero: {value!r}")
    return value


def _finish(raw: int, kind: str, steps: list[str], multipliers: Sequence[Multiplier], aggiuntivo: bool,
            minimum: int, *, floor_at_minimum: bool = True, **extra: object) -> DamageResult:
    """Apply every multiplier to the type's damage and round down once (RULINGS #3)."""
    mults = list(multipliers) + ([AGGIUNTIVO] if aggiuntivo else [])
    value = Fraction(raw)
    for m in mults:
        before = value
        value *= m.factor
        steps.append(f"{cifra(before)} × {cifra(m.factor)} ({m.label}) = {cifra(value)}")
    amount = math.floor(value)
    if mults and Fraction(amount) != value:
        steps.append(f"arrotondato per difetto: {amount}")
    if floor_at_minimum and amount < minimum:
        steps.append(f"minimo {minimum}: {amount} → {minimum}")
        amount = minimum
    if amount < 0:
        amount = 0
    return DamageResult(amount=amount, kind=kind + (" aggiuntivo" if aggiuntivo else ""), steps=tuple(steps),
                        **extra)  # type: ignore[arg-type]


def _normal_part(pot: int, res: int, armatura: Armatura | None, steps: list[str]) -> tuple[int, ArmourOutcome | None, bool]:
    """Danno Normale before multipliers: (damage, armour outcome, armour stopped it entirely)."""
    if armatura is None or not armatura.attiva:
        if armatura is not None:
            steps.append(f"{armatura.nome} non offre protezione per il resto del Turno")
        raw = pot - res
        steps.append(f"Potenza {pot} − Resistenza {res} = {raw}")
        return raw, None, False
    arm_value = armatura.potenziale + res
    steps.append(f"{armatura.nome}: Potenziale {armatura.potenziale} + Resistenza {res} = {arm_value}")
    if pot < arm_value:
        steps.append(f"Potenza {pot} < Armatura {arm_value}: nessun Danno, l'Armatura continua a proteggere")
        return 0, "regge", True
    if pot == arm_value:
        steps.append(f"Potenza {pot} = Armatura {arm_value}: nessun Danno, l'Armatura non protegge per il resto del Turno")
        return 0, "cede", True
    half = armatura.potenziale // 2
    raw = pot - res - half
    steps.append(
        f"Potenza {pot} > Armatura {arm_value}: Potenza {pot} − Resistenza {res} − metà Potenziale "
        f"dell'Armatura {half} = {raw}; l'Armatura non protegge per il resto del Turno"
    )
    return raw, "cede", False


def danno_normale(potenza: int, resistenza: int, *, armatura: Armatura | None = None,
                  multipliers: Sequence[Multiplier] = (), aggiuntivo: bool = False,
                  danno_minimo: int = 0) -> DamageResult:
    """Danno Normale = Potenza (Attacco) − Resistenza (Bersaglio), with the Armatura's three cases."""
    pot, res = _int(potenza, "Potenza"), _int(resistenza, "Resistenza")
    steps: list[str] = []
    raw, outcome, stopped = _normal_part(pot, res, armatura, steps)
    if stopped:
        # "L'Attacco non infligge alcun Danno": no multiplier, no minimum
        return DamageResult(0, steps=tuple(steps), kind="normale" + (" aggiuntivo" if aggiuntivo else ""),
                            armatura=outcome, rule=RULE_ARMATURA)
    return _finish(raw, "normale", steps, multipliers, aggiuntivo, danno_minimo, armatura=outcome,
                   rule=RULE_ARMATURA if outcome else RULE_DANNI,
                   assumption="danno_minimo" if raw < danno_minimo else None)


def _pure_part(potenziale: int, bonus: int, armatura: Armatura | None, steps: list[str],
               armatura_blocca_puri: str, what: str = "Danno Puro") -> tuple[int, str | None, str | None]:
    pot, bs = _int(potenziale, "Potenziale"), _int(bonus, "Bonus Statistica")
    part = bs // PURO_BONUS_DIVISORE
    raw = pot + part
    steps.append(f"{what}: Potenziale {pot} + (Bonus Statistica {bs} / {PURO_BONUS_DIVISORE} = {part}) = {raw}")
    if armatura is not None and armatura.attiva and armatura.blocca_puri:
        if armatura_blocca_puri == "ruling":
            steps.append(f"{armatura.nome} blocca i Danni Puri: effetto da stabilire dal master")
            return raw, "armatura_blocca_puri", f"{armatura.nome} blocca i Danni Puri: quanto riduce il {what}?"
        half = armatura.potenziale // 2
        steps.append(f"{armatura.nome} blocca i Danni Puri: {raw} − metà Potenziale {half} = {raw - half}")
        return raw - half, "armatura_blocca_puri", None
    if armatura is not None:
        steps.append(f"il {what} ignora Armatura e Resistenza")
    return raw, None, None


def danno_puro(potenziale: int, bonus_statistica: int, *, armatura: Armatura | None = None,
               multipliers: Sequence[Multiplier] = (), aggiuntivo: bool = False,
               armatura_blocca_puri: str = "meta_potenziale") -> DamageResult:
    """Danno Puro = Potenziale + (Bonus Statistica / 5); ignores Resistenza and Armatura (unless the
    Armatura blocks Danni Puri: then setting `armatura_blocca_puri`)."""
    steps: list[str] = []
    raw, assumption, ruling = _pure_part(potenziale, bonus_statistica, armatura, steps, armatura_blocca_puri)
    return _finish(raw, "puro", steps, multipliers, aggiuntivo, 0, assumption=assumption, ruling=ruling)


def danno_semipuro(potenza: int, resistenza: int, potenziale: int, bonus_statistica: int, *,
                   armatura: Armatura | None = None, multipliers: Sequence[Multiplier] = (),
                   aggiuntivo: bool = False, danno_minimo: int = 0,
                   armatura_blocca_puri: str = "meta_potenziale") -> DamageResult:
    """Danno Semi-Puro = (Danno Normale / 2) + (Danno Puro / 2): computed apart, halved, summed."""
    pot, res = _int(potenza, "Potenza"), _int(resistenza, "Resistenza")
    steps: list[str] = []
    normal, outcome, _stopped = _normal_part(pot, res, armatura, steps)
    normal = max(normal, 0)  # a negative Danno Normale does not eat into the pure half
    pure, assumption, ruling = _pure_part(potenziale, bonus_statistica, armatura, steps, armatura_blocca_puri)
    pure = max(pure, 0)
    raw = normal // 2 + pure // 2
    steps.append(f"Danno Semi-Puro: {normal} / 2 = {normal // 2} + {pure} / 2 = {pure // 2} → {raw}")
    return _finish(raw, "semi-puro", steps, multipliers, aggiuntivo, danno_minimo, armatura=outcome,
                   assumption=assumption or ("danno_minimo" if raw < danno_minimo else None), ruling=ruling)


def danno_ambientale(categoria_attacco: str, dado: int, bonus_statistica: int, resistenza: int, *,
                     da_difesa: bool = False, armatura: Armatura | None = None,
                     multipliers: Sequence[Multiplier] = (), danno_minimo: int = 0) -> DamageResult:
    """Danno Ambientale = [(Potenziale D.A. + Bonus Statistica − Resistenza) / 2], Potenziale D.A. from the
    die (Fattore di Casualità) of the generating action by its category; halved for Difese; never critical.
    "Si calcola secondo la formula del Danno Normale": the target's Armatura acts as on a Danno Normale of
    Potenza = Potenziale D.A. + Bonus Statistica (its three cases), and the result is then halved (ours)."""
    cat = category(categoria_attacco)
    d = _int(dado, "Dado")
    if d < 1:
        raise BadValue(f"Fattore di Casualità non valido: {d}")
    bs, res = _int(bonus_statistica, "Bonus Statistica"), _int(resistenza, "Resistenza")
    for m in multipliers:
        if m.critical:
            raise NotAllowed("i Danni Ambientali non generano mai Colpi Critici")
    factor = AMBIENTALE_FACTOR[cat]
    pot = math.floor(d * factor)
    steps = [f"Potenziale D.A. (categoria {cat}): Dado {d} × {cifra(factor)} = {pot}"]
    if da_difesa:
        steps.append(f"provocato da una Difesa: Potenziale dimezzato {pot} → {pot // 2}")
        pot //= 2
    if armatura is not None:
        # the Danno Normale part with the Armatura's three cases, then halved
        steps.append(f"Potenza D.A.: Potenziale {pot} + Bonus Statistica {bs} = {pot + bs}")
        normal, outcome, stopped = _normal_part(pot + bs, res, armatura, steps)
        if stopped:
            return DamageResult(0, steps=tuple(steps), kind="ambientale", armatura=outcome, rule=RULE_ARMATURA)
        raw = normal // 2
        steps.append(f"Danno Ambientale: {normal} / 2 = {raw}")
        return _finish(raw, "ambientale", steps, multipliers, False, danno_minimo, armatura=outcome,
                       rule=RULE_ARMATURA if outcome else RULE_AMBIENTALE,
                       assumption="danno_minimo" if raw < danno_minimo else None)
    inner = pot + bs - res
    raw = inner // 2
    steps.append(f"(Potenziale {pot} + Bonus Statistica {bs} − Resistenza {res}) / 2 = {raw}")
    return _finish(raw, "ambientale", steps, multipliers, False, danno_minimo, rule=RULE_AMBIENTALE,
                   assumption="danno_minimo" if raw < danno_minimo else None)


def cura_principale(potenziale: int, bonus_statistica: int, *, armatura: Armatura | None = None) -> DamageResult:
    """Cura Principale = [Potenziale + (Bonus Statistica / 5)] / 2; an Armatura that blocks Danni Puri
    subtracts half its Potenziale from the Potenza of the Cura."""
    pot, bs = _int(potenziale, "Potenziale"), _int(bonus_statistica, "Bonus Statistica")
    part = bs // PURO_BONUS_DIVISORE
    power = pot + part
    steps = [f"Potenza della Cura: Potenziale {pot} + (Bonus Statistica {bs} / {PURO_BONUS_DIVISORE} = {part}) = {power}"]
    rule = RULE_CURE
    if armatura is not None and armatura.attiva and armatura.blocca_puri:
        half = armatura.potenziale // 2
        steps.append(f"{armatura.nome} blocca i Danni Puri e quindi le Cure: {power} − {half} = {power - half}")
        power -= half
        rule = RULE_CURE_ARMATURA
    amount = max(power, 0) // 2
    steps.append(f"Cura Principale: {max(power, 0)} / 2 = {amount}")
    return DamageResult(amount=amount, steps=tuple(steps), kind="cura", cura=True, rule=rule)


def rigenerazione(categoria: str, livello_statistica: int) -> DamageResult:
    """Rigenerazione: 1 Punto Vita ogni N livelli of the technique's Statistica, N by category (D 7 … S 3)."""
    cat = category(categoria)
    lvl = _int(livello_statistica, "Livello Statistica")
    if lvl < 0:
        raise BadValue(f"Livello di Statistica negativo: {lvl}")
    n = RIGENERAZIONE_LIVELLI[cat]
    amount = lvl // n
    return DamageResult(amount=amount, kind="rigenerazione", cura=True, rule=RULE_CURE,
                        steps=(f"Rigenerazione categoria {cat}: 1 PV ogni {n} livelli; {lvl} / {n} = {amount}",))


def piu_forte(results: Iterable[DamageResult]) -> DamageResult | None:
    """At most one Danno Aggiuntivo (or one Rigenerazione) per turn: the strongest counts, the rest
    is discarded (ties: the first listed)."""
    items = list(results)
    if not items:
        return None
    best = max(items, key=lambda r: r.amount)  # max keeps the first of equal ones
    if len(items) == 1:
        return best
    others = [r.amount for r in items if r is not best]
    note = f"più {best.kind} nello stesso Turno: conta solo il più forte ({best.amount}); scartati {others}"
    return replace(best, steps=best.steps + (note,))


# Mira and limb of the parts a label names most often (attacco._hit's rule for any other part)
_MIRA_PARTS = {"corpo": ("corpo", None), "testa": ("testa", None), "arti": ("arti", None),
               "braccia": ("arti", "braccia"), "braccio": ("arti", "braccia"), "gambe": ("arti", "gambe"),
               "gamba": ("arti", "gambe")}


@lru_cache(maxsize=256)
def _mira_effects(mira: str, face: int, arti: str | None) -> MiraEffect | None:
    try:
        return mira_effects(mira, face, arti)
    except MechanicsError:
        return None
