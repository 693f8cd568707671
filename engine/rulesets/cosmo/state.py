"""The `cosmo` fold's state: frozen fighters, blocks, attacks waiting for an answer, damages to roll."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...history import Registry
from .._shared import Conditions
from .tables import Band


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
