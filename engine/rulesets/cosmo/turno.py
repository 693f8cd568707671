"""cosmo's turn context (`_Ctx`): one post's actions and what its sections pass each other while it is stepped."""
from __future__ import annotations

from ...history import Post
from .._turn import Turn
from .lines import Action, post_actions
from .state import State


class _Ctx(Turn):
    """A post's scratchpad: its poster and actions, and what one section leaves for a later one."""

    __slots__ = ("actor", "actions", "attacks", "fresh", "entrance", "was_defending", "written", "faint", "freed",
                 "lowered")
    state: State

    def __init__(self, post: Post, state: State, actor: str | None = None) -> None:
        super().__init__(post, state)
        self.actor = actor  # the poster's fighter (None in a master's post)
        self.faint: list[tuple[str, int]] = []  # (fighter, cosmo) whole maximum spent in one action
        self.freed: set[str] = set()  # freed from a block in this post: full defence, no level malus
        self.lowered: dict[str, int] = {}  # malus categories lowered in this post
        self.written: frozenset[tuple[str, int]] | set[tuple[str, int]] = frozenset()  # schema.read_stats
        if actor is None:
            self.actions: list[Action] = []
            self.attacks: list[Action] = []
            self.fresh = self.entrance = self.was_defending = False
            return
        f0 = state.fighters[actor]
        self.fresh = not f0.seen and not f0.touched  # its first schema opens the fight's accounts
        self.entrance = f0.posts == 0  # the entrance action (Azione di ingresso legata ad un attacco)
        self.actions = post_actions(post)
        self.attacks = [a for a in self.actions if a.kind == "attacco"]
        self.was_defending = any(a.target == actor for a in state.incoming)  # its defence turn (Sconfitto)
