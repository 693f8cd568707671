"""A ruleset that crashes on a post loses that post's verdicts, never the audit: the replay's own guard (issue #17)."""
from __future__ import annotations

import pytest

from engine.core import available_rulesets, replay
from tests.plugins.engine import Fight, R


@pytest.mark.parametrize("ruleset", sorted(available_rulesets()))
def test_a_crashing_step_is_an_internal_error_verdict_in_every_ruleset(ruleset, monkeypatch):
    rs = available_rulesets()[ruleset]
    real = type(rs).step

    def step(self, state, post):
        if post.id == "101":
            raise ZeroDivisionError("divisione per zero piantata dal test")
        return real(self, state, post)

    monkeypatch.setattr(type(rs), "step", step)
    f = Fight()
    for who in ("Ichigo", "Rukia", "Ichigo"):
        f.post(who, pv=50, stats={"Destrezza": 5}, rolls=[R("1d12+5", 7, f"Attacco ({who} vs X)")])
    audit = replay(f.history(), ruleset)
    assert [p.id for p in audit.posts] == ["100", "101", "102"]
    [v] = audit.posts[1].verdicts
    assert (v.code, v.severity, v.post) == ("engine.internal_error", "warning", "101")  # our bug, not the player's
    assert v.message == "Errore interno del motore su questo post (ZeroDivisionError): post non valutato."
    assert v.details == {"error": "ZeroDivisionError: divisione per zero piantata dal test"}
    assert all(v.code != "engine.internal_error" for p in (audit.posts[0], audit.posts[2]) for v in p.verdicts)
