"""The `guida` ruleset ("Guida al Combattimento", rules/000): registers itself with the engine at import."""
from __future__ import annotations

import sys
from typing import Any

from ...core import Setting, register
from ...history import Post, Registry, Thread
from ...recognise import Conventions
from ...verdicts import Verdict
from . import hints as _hints
from . import step as _step
from . import actions as _actions
from . import tables as _tables
from .state import GuidaState

# Readings of ours (RULINGS.md and docs/rulesets/guida.md); the mechanics' own settings come from tables.SETTINGS.
SETTINGS: tuple[Setting, ...] = (
    Setting("ordine_turni", True,
            "Dopo che tutti hanno postato una volta, i turni seguono l'ordine della prima apparizione; un post "
            "fuori ordine è turn.out_of_turn. False = nessun controllo d'ordine."),
) + _tables.SETTINGS


class GuidaRuleset:
    id = "guida"
    title = "Guida al Combattimento"
    settings = SETTINGS
    # the post schema's PV/PE, the action table's dice and words (how `arbitro audit` recognises a guida fight)
    conventions = Conventions.of(("PV", "PE"), {d for a in _actions.ACTIONS.values()
                                                for d in (a.die_difensiva, a.die_offensiva)},
                                 _actions.ALIASES, _hints.STATS)

    def initial_state(self, thread: Thread, registry: Registry, settings: dict[str, Any]) -> GuidaState:
        return _step.initial_state(thread, registry, settings)

    def step(self, state: GuidaState, post: Post) -> tuple[GuidaState, list[Verdict]]:
        # a crash here is caught by core.replay (engine.internal_error), as for every ruleset
        if post.role == "player":  # most posts: straight to the player's step (_step.step dispatches the rest)
            return _step._player(state, post, {"before_last": state, "last_post": post})
        return _step.step(state, post)

    # the replay asks after every post: the function itself, no method frame in between
    characters = staticmethod(_hints.characters)

    def next_hint(self, state: GuidaState, character: str | None = None) -> dict[str, Any]:
        return _hints.next_hint(state, character)

    def rulings(self, state: GuidaState) -> list[tuple[str, str, str]]:
        """Master rulings seen so far: (code, post, decision), for the audit to annotate verdicts."""
        return [(r.code, r.post, r.decision) for r in state.rulings]


RULESET = register(GuidaRuleset())


def clear_caches() -> None:
    """Empty the module-level caches of this ruleset's pure functions (roll checks, damages, lru_caches): the
    bench times replays from cold caches with it, as a fresh process's first replay runs."""
    from . import calcolo_danni, checks

    checks._STATIC.clear()
    calcolo_danni._DAMAGE_MEMO[0] = (None, None, {})
    for name, module in list(sys.modules.items()):
        if name == __name__ or name.startswith(__name__ + "."):
            for obj in list(vars(module).values()):
                if callable(getattr(obj, "cache_clear", None)):
                    obj.cache_clear()


__all__ = ["RULESET", "SETTINGS", "GuidaRuleset", "clear_caches"]
