"""Verdicts: what the engine says about a post, each explaining itself."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Verdict:
    """One finding about one post (and roll).

    `rule` is the rule paragraph it comes from ("Successo e Fallimento delle Azioni › Fattore Mira");
    `expected`/`found` are the numbers compared; `assumption` names the ruleset setting whose
    default (ours, not the rule text's) the verdict depends on, if any.
    """

    code: str
    severity: Severity
    message: str  # Italian, shown to forum readers
    rule: str
    post: str
    roll: int | None = None
    expected: Any = None
    found: Any = None
    details: dict[str, Any] = field(default_factory=dict)
    assumption: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "rule": self.rule,
            "post": self.post,
            "roll": self.roll,
            "expected": self.expected,
            "found": self.found,
        }
        if self.details:
            d["details"] = self.details
        if self.assumption:
            d["assumption"] = self.assumption
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        return cls(
            code=d["code"], severity=d["severity"], message=d["message"], rule=d["rule"],
            post=d["post"], roll=d.get("roll"), expected=d.get("expected"), found=d.get("found"),
            details=d.get("details") or {}, assumption=d.get("assumption"),
        )
