"""The `guida` ruleset ("Guida al Combattimento", rules/000): registers itself with the engine at import."""
from __future__ import annotations

import sys

from ...core import Setting, register
from ...recognise import Conventions
from .._turn import Rules
from . import hints as _hints
from . import step as _step
from . import actions as _actions
from . import tables as _tables

# Readings of ours (RULINGS.md and docs/rulesets/guida.md); the mechanics' own settings come from tables.SETTINGS.
SETTINGS: tuple[Setting, ...] = (
    Setting("ordine_turni", True,
            "Dopo che tutti hanno postato una volta, i turni seguono l'ordine della prima apparizione; un post "
            "fuori ordine è turn.out_of_turn. False = nessun controllo d'ordine."),
) + _tables.SETTINGS


# the post schema's PV/PE, the action table's dice and words (how `arbitro audit` recognises a guida fight)
RULESET = register(Rules(
    id="guida", title="Guida al Combattimento", settings=SETTINGS,
    initial_state=_step.initial_state, step=_step.step, characters=_hints.characters, next_hint=_hints.next_hint,
    rulings=_step.rulings,
    conventions=Conventions.of(("PV", "PE"), {d for a in _actions.ACTIONS.values()
                                             for d in (a.die_difensiva, a.die_offensiva)},
                               _actions.ALIASES, _hints.STATS)))


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


__all__ = ["RULESET", "SETTINGS", "clear_caches"]
