"""The `poteri` fold's frozen state: the fighters' pools, the effects held, the Attacchi awaiting a Resistenza."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...history import Registry


@dataclass(frozen=True)
class Power:
    """A Power as the registry and its label's tags describe it (tipologia.power reads it)."""

    name: str
    type: str | None
    slots: int
    timing: str | None
    duration: int | None
    value: int | None
    stat: str | None
    extra: dict[str, Any]


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
