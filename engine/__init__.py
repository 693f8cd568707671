"""Arbitro's engine: replays a combat history under a ruleset. Pure: no I/O, no scraper, no server."""
from __future__ import annotations

from .core import (
    AUDIT_FORMAT, Audit, BadSetting, EngineError, PostAudit, Ruleset, Setting, UnknownRuleset,
    available_rulesets, get_ruleset, register, replay, resolve_settings,
)
from .history import HISTORY_FORMAT, CombatHistory, HistoryFormatError, Registry
from .verdicts import Verdict

__all__ = [
    "AUDIT_FORMAT", "HISTORY_FORMAT", "Audit", "BadSetting", "CombatHistory", "EngineError",
    "HistoryFormatError", "PostAudit", "Registry", "Ruleset", "Setting", "UnknownRuleset", "Verdict",
    "available_rulesets", "get_ruleset", "register", "replay", "resolve_settings",
]
