"""The `cosmo` ruleset package: registers `Cosmo` (rule text 001) with the engine at import."""
from __future__ import annotations

from ...core import register
from .lines import Action, parse_line, post_actions
from .ruleset import RULESET, Attack, Block, Cosmo, Due, Fighter, State
from .tables import DEFAULT_TABELLA5, SETTINGS, Band, band_for, block_malus, counter_threshold, parse_tabella5

register(RULESET)

__all__ = ["RULESET", "SETTINGS", "DEFAULT_TABELLA5", "Action", "Attack", "Band", "Block", "Cosmo", "Due",
           "Fighter", "State", "band_for", "block_malus", "counter_threshold", "parse_line", "parse_tabella5",
           "post_actions"]
