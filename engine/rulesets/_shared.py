"""What the cosmo, poteri and starfinder rulesets read alike: name folding, registry numbers, pools, the schema."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, TypeVar

from ..history import Character, Post, PostSchema, Roll
from ._turn import Turn

__all__ = ["Conditions", "Pool", "as_int", "as_list", "canon", "ensure_fighter", "face_of", "find",
           "fold", "next_in_order", "pool_max", "pool_stats", "poster_name", "read_schema", "registro_lines",
           "set_fighter"]

_S = TypeVar("_S")
_C = TypeVar("_C", bound="Conditions")


# --------------------------------------------------------------------------- names

def fold(text: str | None, drop: str = "") -> str:
    """Lower-case, accents removed, spaces collapsed (and the characters in `drop` removed): how names compare."""
    nfkd = unicodedata.normalize("NFKD", text or "")
    plain = "".join(c for c in nfkd if not unicodedata.combining(c)).lower()
    for ch in drop:
        plain = plain.replace(ch, "")
    return " ".join(plain.split())


def find(mapping: Mapping[str, Any], name: str | None, key: Callable[[str], str] = fold) -> Any:
    """`mapping[name]`, else the entry whose folded name matches; None when there is none."""
    if not name:
        return None
    if name in mapping:
        return mapping[name]
    wanted = key(name)
    for n, v in mapping.items():
        if key(n) == wanted:
            return v
    return None


def poster_name(post: Post) -> str | None:
    """Who wrote the post as the forum and its schema say (the author only for a player's post), not yet canonical."""
    return post.character or (post.schema.character if post.schema else None) or (
        post.author if post.role == "player" else None)


def canon(state: Any, name: str | None, key: Callable[[str], str] = fold) -> str | None:
    """The fighter name a label or post means (known fighters, then the registry, win; case and accents ignored)."""
    if not name:
        return None
    wanted = key(name)
    for n in list(state.fighters) + list(state.registry.characters):
        if key(n) == wanted:
            return n
    return name.strip()


# --------------------------------------------------------------------------- registry values and rolls

def as_int(value: Any) -> int | None:
    """A registry number, or None when it is missing or not a whole number (bad input is never a crash)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    return None


def as_list(value: Any) -> list[Any]:
    """A registry list; a lone string is a one-item list."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return [value]


def face_of(r: Roll) -> int | None:
    """The first die's face: read from the roll, else its total less the constant."""
    if r.faces:
        return r.faces[0]
    if r.total is not None:
        return r.total - r.constant
    return None


# --------------------------------------------------------------------------- fighters and pools

def pool_max(c: Character, key: str) -> int | None:
    """A registry pool's maximum (its current value when the maximum is not written)."""
    r = c.resources.get(key)
    return None if r is None else (r.max if r.max is not None else r.current)


class Conditions:
    """Mixin of the frozen fighters that carry named conditions in a `conditions` tuple."""

    __slots__ = ()
    conditions: tuple[str, ...]

    def has(self, cond: str) -> bool:
        return cond in self.conditions

    def with_cond(self: _C, *add: str, drop: tuple[str, ...] = ()) -> _C:
        conds = [c for c in self.conditions if c not in drop]
        conds += [c for c in add if c not in conds]
        return replace(self, conditions=tuple(conds))  # type: ignore[type-var]


def ensure_fighter(state: _S, name: str, make: Callable[[str], Any]) -> _S:
    """The state with a fighter `name` (made by `make(name)` when it is not there yet)."""
    if name in state.fighters:  # type: ignore[attr-defined]
        return state
    return set_fighter(state, make(name))


def set_fighter(state: _S, f: Any) -> _S:
    """The state with fighter `f` stored under its name."""
    return replace(state, fighters={**state.fighters, f.name: f})  # type: ignore[attr-defined,type-var]


def next_in_order(order: Sequence[str], last: str | None) -> str | None:
    """Who posts after `last` in the turn order (the first one when `last` is not in it)."""
    if not order:
        return None
    return order[(order.index(last) + 1) % len(order)] if last in order else order[0]


def pool_stats(f: Any, pools: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """`{"PF": "7/10", ...}` for the hint: current/max of every pool (key, attribute) the fighter has."""
    out: dict[str, Any] = {}
    for key, attr in pools:
        if getattr(f, attr) is not None:
            mx = getattr(f, attr + "_max")
            out[key] = f"{getattr(f, attr)}/{mx}" if mx is not None else getattr(f, attr)
    return out


def registro_lines(since: Iterable[tuple[int, str, str]]) -> list[dict[str, Any]]:
    """The Registro lines a fighter owes, ready to copy."""
    return [{"amount": a, "resource": r, "label": lab, "line": f"{a:+d} {r} [{lab}]"} for a, r, lab in since]


class Pool(NamedTuple):
    """A pool read from the poster's schema: its key, the fighter's attribute, how messages name it, its rules."""

    key: str
    attr: str
    what: str | None  # the long name ("Punti Fatica"); None = the key alone
    rule: str  # paragraph of a current value that differs
    max_rule: str  # paragraph of a maximum that differs


def read_schema(state: _S, schema: PostSchema | None, actor: str, ctx: Turn, pools: Iterable[Pool],
                fresh: bool, mismatch: Mapping[str, str]) -> _S:
    """The poster's schema read: its first one opens the accounts, later ones are checked against the fold."""
    f = state.fighters[actor]  # type: ignore[attr-defined]
    if schema is None:
        return set_fighter(state, replace(f, seen=True))
    return set_fighter(state, replace(f, **_schema_updates(f, schema, actor, ctx, pools, fresh, mismatch)))


def _schema_updates(f: Any, schema: PostSchema, actor: str, ctx: Turn, pools: Iterable[Pool], fresh: bool,
                    mismatch: Mapping[str, str]) -> dict[str, Any]:
    updates: dict[str, Any] = {"seen": True}
    for p in pools:
        res = schema.resources.get(p.key)
        if res is None:
            continue
        mine = getattr(f, p.attr)
        mx = getattr(f, p.attr + "_max")
        if mx is None and res.max is not None:
            updates[p.attr + "_max"] = res.max
        elif mx is not None and res.max is not None and res.max != mx:
            ctx.add("registro.max_mismatch",
                    f"I {p.what or p.key} massimi di {actor} sono {mx}, lo schema scrive {res.max}.",
                    p.max_rule, expected=mx, found=res.max, resource=p.key)
        if mine is None or fresh:
            updates[p.attr] = res.current  # the first schema opens the fight's accounts
            continue
        if res.current != mine:
            ctx.add(mismatch[p.key],
                    f"{actor} dovrebbe avere {p.key} {mine}" + (f" ({p.what})" if p.what else "")
                    + f", lo schema scrive {res.current}.",
                    p.rule, expected=mine, found=res.current, resource=p.key)
    return updates
