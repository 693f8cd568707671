"""The `cosmo` ruleset (rule text 001, Pool contro Difesa): registers itself with the engine at import."""
from __future__ import annotations

from ...core import register
from ...recognise import Conventions
from .._turn import Rules
from . import hints as _hints
from . import master as _master
from . import step as _step
from .lines import ACTION_VERBS, Action, parse_line, post_actions
from .state import Attack, Block, Due, Fighter, State
from .tables import (COUNTER_DIE, DEFAULT_TABELLA5, SETTINGS, SKILL_NAMES, Band, band_for, block_malus,
                     counter_threshold, parse_tabella5)

# Punti Salute and Cosmo in the schema, the counter's d100 (Tabella 5's dice are the forum's), its action verbs
RULESET = register(Rules(
    id="cosmo", title="Cosmo — Pool contro Difesa, Incassare, Contrattacco, Tabella 5, status e cosmo",
    settings=SETTINGS, initial_state=_step.initial_state, step=_step.step, characters=_hints.characters,
    next_hint=_hints.next_hint, rulings=_master.rulings,
    conventions=Conventions.of(("PV", "Cosmo"), (COUNTER_DIE[1],), ACTION_VERBS + tuple(SKILL_NAMES.values()),
                               _hints.STATS)))

__all__ = ["RULESET", "SETTINGS", "DEFAULT_TABELLA5", "Action", "Attack", "Band", "Block", "Due", "Fighter",
           "State", "band_for", "block_malus", "counter_threshold", "parse_line", "parse_tabella5", "post_actions"]
