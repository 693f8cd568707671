"""The `starfinder` ruleset package: registers `Starfinder` with the engine at import."""
from __future__ import annotations

from ...core import register
from .ruleset import RULESET, SETTINGS, Fighter, PendingSave, Starfinder, State
from .tables import combine_multipliers

register(RULESET)

__all__ = ["RULESET", "SETTINGS", "Fighter", "PendingSave", "Starfinder", "State", "combine_multipliers"]
