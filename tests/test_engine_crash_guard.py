"""A ruleset that crashes on a post loses that post's verdicts, never the audit: the replay's own guard (issue #17)."""
from __future__ import annotations

from dataclasses import is_dataclass, replace

import pytest

from engine.core import available_rulesets, replay
from tests.plugins.engine import Fight, R


@pytest.mark.parametrize("ruleset", sorted(available_rulesets()))
def test_a_crashing_step_is_an_internal_error_verdict_in_every_ruleset(ruleset, monkeypatch):
    rs = available_rulesets()[ruleset]
    real = rs.step

    def step(state, post):  # planted in front of the ruleset's own dispatcher
        if post.id == "101":
            raise ZeroDivisionError("divisione per zero piantata dal test")
        return real(state, post)

    monkeypatch.setattr(rs, "step", step) if not is_dataclass(rs) else None
    planted = replace(rs, step=step) if is_dataclass(rs) else rs
    f = Fight()
    for who in ("Ichigo", "Rukia", "Ichigo"):
        f.post(who, pv=50, stats={"Destrezza": 5}, rolls=[R("1d12+5", 7, f"Attacco ({who} vs X)")])
    audit = replay(f.history(), planted)
    assert [p.id for p in audit.posts] == ["100", "101", "102"]
    [v] = audit.posts[1].verdicts
    assert (v.code, v.severity, v.post) == ("engine.internal_error", "warning", "101")  # our bug, not the player's
    assert v.message == "Errore interno del motore su questo post (ZeroDivisionError): post non valutato."
    assert v.details == {"error": "ZeroDivisionError: divisione per zero piantata dal test"}
    assert all(v.code != "engine.internal_error" for p in (audit.posts[0], audit.posts[2]) for v in p.verdicts)
