"""The one shape of every ruleset: its declaration (`Rules`), the turn context its handlers share (`Turn`), phases."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..core import Setting
from ..history import Post, Registry, Thread
from ..recognise import Conventions
from ..verdicts import Verdict, make_verdict

__all__ = ["Phase", "Rules", "Turn", "run_phases"]

_S = TypeVar("_S")


class Turn:
    """What one post's handlers share: the post, the state before it, the verdicts found (each phase hands the
    state it made to the next: `run_phases`).

    A ruleset's own context subclasses it with what its sections pass each other (guida's `_Post`, cosmo's
    `_Ctx`, …); `add` is how every handler reports, with the code's one severity (engine.verdicts)."""

    __slots__ = ("post", "state", "verdicts")

    def __init__(self, post: Post, state: Any = None) -> None:
        self.post = post
        self.state = state
        self.verdicts: list[Verdict] = []

    def add(self, code: str, message: str, rule: str, roll: int | None = None, expected: Any = None,
            found: Any = None, assumption: str | None = None, **details: Any) -> None:
        self.verdicts.append(make_verdict(code, message, rule, self.post.id, roll=roll, expected=expected,
                                          found=found, details=details, assumption=assumption))


@dataclass(frozen=True)
class Phase(Generic[_S]):
    """One step of a turn as the rule text orders it: its section's name and the handler that implements it."""

    section: str  # the rule text's section, as its heading reads ("Fase Difensiva")
    handler: Callable[[_S, Any], _S]  # (state, turn) -> state


def run_phases(phases: Sequence[Phase[Any]], state: _S, turn: Any) -> _S:
    """The phases in their order, each handed the state the previous one left."""
    for phase in phases:
        state = phase.handler(state, turn)
    return state


@dataclass(frozen=True)
class Rules:
    """A ruleset as the engine registers it: names, settings and conventions, and the functions of its modules.

    Every ruleset is one of these (engine.core.Ruleset): `step` is its dispatcher module's function, the crash
    guard and the verdict collection are the replay's (engine.core.replay)."""

    id: str
    title: str
    settings: tuple[Setting, ...]
    initial_state: Callable[[Thread, Registry, dict[str, Any]], Any]
    step: Callable[[Any, Post], tuple[Any, list[Verdict]]]
    characters: Callable[[Any], dict[str, dict[str, Any]]]
    next_hint: Callable[..., dict[str, Any]]
    rulings: Callable[[Any], list[tuple[str, str, str]]] | None = None
    conventions: Conventions | None = None
    # codes a page-local audit may keep besides engine.provisional's own (their inputs are all on the post)
    local_codes: frozenset[str] = frozenset()
    local_codes_after_own_post: frozenset[str] = frozenset()
