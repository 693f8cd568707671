"""The `poteri` ruleset package: registers `Poteri` with the engine at import."""
from __future__ import annotations

from ...core import register
from .ruleset import RULESET, SETTINGS, Effect, Fighter, Pending, Poteri, State

register(RULESET)

__all__ = ["RULESET", "SETTINGS", "Effect", "Fighter", "Pending", "Poteri", "State"]
