"""The turn context of `poteri`: the post's rolls read as items, and what its sections pass each other."""
from __future__ import annotations

from dataclasses import dataclass

from ...history import Post, Roll
from .._turn import Turn
from ..starfinder.labels import Label, line_after, parse
from . import tables as T
from .state import State

KEYWORDS = ("PF", "margine", "slot")


@dataclass
class Item:
    index: int
    roll: Roll
    label: Label
    line: str
    kind: str  # power / damage / resist / rissa / weapon / other


def read_items(post: Post) -> list[Item]:
    """The post's rolls, each with its label read and its kind (tables.ROLL_KINDS) told by the label's first words."""
    out = []
    for i, r in enumerate(post.rolls):
        line = line_after(post.body, r.label)
        label = parse(r.label, line, KEYWORDS)
        a = label.action_key
        kind = next((k for word, k in T.ROLL_KINDS if a.startswith(word)), "other")
        out.append(Item(i, r, label, line, kind))
    return out


class Turno(Turn):
    """poteri's turn context: the poster, the post's rolls, whether its schema opens the accounts.

    The handlers get the state in hand and return the new one; `state` here is the one the post found."""

    __slots__ = ("poster", "items", "fresh")
    state: State

    def __init__(self, post: Post, state: State, poster: str | None) -> None:
        super().__init__(post, state)
        self.poster = poster  # the poster's canonical name; None when nobody signs the post
        # a Forumotion Game-Master post's dice are paired with the player post it answers by the scraper
        self.items = read_items(post) if post.role != "gm_bot" else []
        self.fresh = False  # the poster's first schema opens the accounts (after this post)
