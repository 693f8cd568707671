"""Confronto di Potenza: which of two clashing actions survives, and with full or halved Potenziale.

API:
- `ClashSide(label, potenza, category)`: one action; `potenza` = Potenziale + Bonus Statistica,
  `category` = category (D/C/B/A/S) of the action's Potenziale.
- `confronto_di_potenza(a, b) -> ClashResult`: the text's table keyed by the category of the weaker
  action [Y]. `ClashResult.outcome` is "entrambe_annullate", "dimezzato" or "intatto";
  `winner`/`loser` are the sides' labels (None when both are annulled); `factor` is the
  Fraction the winner's Potenziale continues with (0, 1/2, 1); `steps` explain it in Italian.
- `potenziale_residuo(potenziale, result) -> int`: the winner's Potenziale after the clash (halved rounds
  down, RULINGS #3).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from .tables import CLASH_THRESHOLDS, RULE_CLASH, BadValue, category

Outcome = Literal["entrambe_annullate", "dimezzato", "intatto"]


@dataclass(frozen=True)
class ClashSide:
    label: str  # e.g. "Attacco [Artigli Affilati] di Hollow"
    potenza: int
    category: str  # category of the Potenziale

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", category(self.category))
        if not isinstance(self.potenza, int) or isinstance(self.potenza, bool):
            raise BadValue(f"Potenza non intera: {self.potenza!r}")


@dataclass(frozen=True)
class ClashResult:
    outcome: Outcome
    winner: str | None  # label of [X] when it continues
    loser: str | None  # label of [Y] when only it is annulled
    difference: int  # Potenza[X] − Potenza[Y] (>= 0)
    category_y: str  # category of the weaker action's Potenziale: selects the table row
    threshold_halved: int  # "almeno N punti" → [X] prosegue con Potenziale dimezzato
    threshold_intact: int  # "almeno N punti" → [X] prosegue con Potenziale intatto
    factor: Fraction  # what the winner's Potenziale is multiplied by
    steps: tuple[str, ...]
    rule: str = RULE_CLASH

    @property
    def both_annulled(self) -> bool:
        return self.outcome == "entrambe_annullate"


def confronto_di_potenza(a: ClashSide, b: ClashSide) -> ClashResult:
    """Compare the Potenza of two actions (order does not matter, except for equal Potenza: then the
    row is the stricter of the two categories — equal Potenza is always a difference of 0, which annuls
    both under every row)."""
    if a.potenza >= b.potenza:
        x, y = a, b
    else:
        x, y = b, a
    if a.potenza == b.potenza:
        # no weaker action: both rows agree that a difference of 0 annuls both
        y = max(a, b, key=lambda s: CLASH_THRESHOLDS[s.category][0])
        x = b if y is a else a
    diff = x.potenza - y.potenza
    halved, intact = CLASH_THRESHOLDS[y.category]
    steps = [
        f"Potenza {x.label} {x.potenza} vs {y.label} {y.potenza}: differenza {diff}",
        f"Potenziale di [Y] ({y.label}) di categoria {y.category}: annullate entrambe sotto {halved}, "
        f"dimezzato da {halved}, intatto da {intact}",
    ]
    if diff >= intact:
        outcome: Outcome = "intatto"
        factor = Fraction(1)
        steps.append(f"{diff} ≥ {intact}: {y.label} annullata, {x.label} prosegue con Potenziale intatto")
    elif diff >= halved:
        outcome = "dimezzato"
        factor = Fraction(1, 2)
        steps.append(f"{diff} ≥ {halved}: {y.label} annullata, {x.label} prosegue con Potenziale dimezzato")
    else:
        outcome = "entrambe_annullate"
        factor = Fraction(0)
        steps.append(f"{diff} < {halved}: {x.label} e {y.label} annullate entrambe")
    survives = outcome != "entrambe_annullate"
    return ClashResult(
        outcome=outcome,
        winner=x.label if survives else None,
        loser=y.label if survives else None,
        difference=diff,
        category_y=y.category,
        threshold_halved=halved,
        threshold_intact=intact,
        factor=factor,
        steps=tuple(steps),
    )


def potenziale_residuo(potenziale: int, result: ClashResult) -> int:
    """The Potenziale the surviving action continues with (0 when both are annulled)."""
    return math.floor(potenziale * result.factor)
