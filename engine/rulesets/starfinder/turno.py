"""starfinder's turn context (`Turno`), the post's rolls read as labelled items, and the checks every roll gets."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...history import Post, Roll, describe_problems
from .._turn import Turn
from . import tables as T
from .labels import Label, gm_constant, line_after, parse
from .state import State

KEYWORDS = ("CAE", "CAC", "CA", "CD")


@dataclass
class Item:
    index: int
    roll: Roll
    label: Label
    kind: str  # attack / damage / save / reroll / twice / other


@dataclass
class Group:
    head: Item
    extra: list[Item] = field(default_factory=list)  # rerolls and second rolls of the head's d20
    damage: list[Item] = field(default_factory=list)


class Turno(Turn):
    """What one post's sections pass each other: who plays it, whether its schema opens the accounts, its rolls."""

    __slots__ = ("actor", "fresh", "groups")
    state: State

    def __init__(self, post: Post, state: State, actor: str | None) -> None:
        super().__init__(post, state)
        self.actor = actor  # the fighter the post plays (canonical name), None when nobody
        self.fresh = False  # its first schema opens the accounts (after this post)
        self.groups: list[Group] = []  # the post's rolls, each head with its rerolls and damage


def items(post: Post) -> list[Item]:
    """The post's rolls, each with its label read and its kind (attack, damage, save, reroll, twice, other)."""
    out = []
    for i, r in enumerate(post.rolls):
        label = parse(r.label, line_after(post.body, r.label), KEYWORDS)
        r = gm_constant(r, sum(a for a, _ in label.modifiers))
        a = label.action_key
        kind = next((k for word, k in T.ROLL_KINDS if a.startswith(word)), None)
        if kind is None:  # "TS" alone, or a save's own name ("Riflessi")
            kind = "save" if a == "ts" or T.save_of(a.split(" ")[0] if a else "") else "other"
        out.append(Item(i, r, label, kind))
    return out


def check_d20(it: Item, turn: Turn, rule: str) -> bool:
    r = it.roll
    ok = True
    if r.count != 1 or r.sides != 20:
        turn.add("dice.wrong_die", f"Questo tiro si fa con 1d20, non con {r.count}d{r.sides}.",
                 rule, roll=it.index, expected="1d20", found=f"{r.count}d{r.sides}")
        ok = False
    check_authentic(it, turn, rule)
    return ok


def check_authentic(it: Item, turn: Turn, rule: str) -> None:
    r = it.roll
    if not r.authentic:
        turn.add("dice.not_authentic",
                 "Il tiro non è autentico (scritto a mano o non coerente con il lancio del forum).",
                 rule, roll=it.index, expected="tiro del forum", found=describe_problems(r.problems) or r.source)
