"""A ruleset that crashes on a post loses that post's verdicts, never the audit: the replay's own guard (issue #17).
The crash is planted in a section handler of each ruleset, where a real bug would be."""
from __future__ import annotations

import importlib

import pytest

from engine.core import available_rulesets, replay
from engine.rulesets._turn import Phase
from tests.plugins.engine import Fight, R


def _boom(post_id: str) -> None:
    if post_id == "101":
        raise ZeroDivisionError("divisione per zero piantata dal test")


def plant(ruleset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A handler that crashes on post 101: first of the ruleset's declared phases, or guida's roll section."""
    step = importlib.import_module(f"engine.rulesets.{ruleset}.step")
    if hasattr(step, "PHASES"):
        crash = Phase("piantata dal test", lambda state, turn: (_boom(turn.post.id), state)[1])
        monkeypatch.setattr(step, "PHASES", (crash,) + tuple(step.PHASES))
        return
    tiri = importlib.import_module(f"engine.rulesets.{ruleset}.tiri")
    rolls = tiri._rolls

    def crashing(p):
        _boom(p.post.id)
        return rolls(p)

    monkeypatch.setattr(tiri, "_rolls", crashing)


@pytest.mark.parametrize("ruleset", sorted(available_rulesets()))
def test_a_crashing_handler_is_an_internal_error_verdict_in_every_ruleset(ruleset, monkeypatch):
    f = Fight()
    for who in ("Ichigo", "Rukia", "Ichigo"):
        f.post(who, pv=50, stats={"Destrezza": 5}, rolls=[R("1d12+5", 7, f"Attacco ({who} vs X)")])
    plant(ruleset, monkeypatch)
    audit = replay(f.history(), ruleset)
    assert [p.id for p in audit.posts] == ["100", "101", "102"]
    [v] = audit.posts[1].verdicts
    assert (v.code, v.severity, v.post) == ("engine.internal_error", "warning", "101")  # our bug, not the player's
    assert v.message == "Errore interno del motore su questo post (ZeroDivisionError): post non valutato."
    assert v.details == {"error": "ZeroDivisionError: divisione per zero piantata dal test"}
    assert all(v.code != "engine.internal_error" for p in (audit.posts[0], audit.posts[2]) for v in p.verdicts)
