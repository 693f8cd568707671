"""starfinder's state: the frozen fighters, the saves owed and the fight's state the step folds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...history import Registry
from .._shared import Conditions


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
