"""The turn context of `guida`: the per-post scratchpad (`_Post`), names resolved to fighters, shared constants."""
from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

from . import aree as AR
from .._turn import Turn
from ...history import Post
from .messages import verdict
from .state import DueDamage, Expense, Fighter, GuidaState, Hit, Incoming, maker


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


def canon_stats(stats: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Schemas often write "Resistenza" for Costituzione (Resistenza = Livello Totale di Costituzione)."""
    if "Costituzione" not in stats and "Resistenza" in stats:
        stats = dict(stats)
        stats["Costituzione"] = stats["Resistenza"]
    return stats


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


class _Post(Turn):
    """guida's turn context: the mutable scratchpad of one step; the step returns immutable state built from it."""

    __slots__ = ("name", "fighters", "incoming", "hits", "new_incoming", "spese_now", "aree", "reazioni", "own")
    state: GuidaState

    def __init__(self, state: GuidaState, post: Post, name: str):
        super().__init__(post, state)
        self.name = name
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
