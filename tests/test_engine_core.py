"""The replay fold: incremental replay from snapshots, settings, errors, the audit document, the reports."""
from __future__ import annotations

import dataclasses
import json

import pytest

from engine.core import AUDIT_FORMAT, BadSetting, UnknownRuleset, replay
from engine.history import CombatHistory
from engine.report import render_markdown, render_text
from tests.plugins.engine import Fight, R

H = {"Destrezza": 6, "Costituzione": 4}
Q = {"Destrezza": 4, "Costituzione": 5}


def long_fight(turns: int) -> Fight:
    f = Fight()
    for i in range(turns):
        f.post("Quincy", pv=40, pe=30, stats=Q,
               rolls=[R("1d12+6", 1 + i % 12, "Attacco [Freccia] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
        f.post("Hollow", pv=52, pe=45, stats=H,
               rolls=[R("1d24+8", 1 + (i * 7) % 24, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])"),
                      R("1d12+8", 1 + (i * 5) % 12, "Attacco [Artigli] (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    return f


def test_appending_a_page_steps_only_the_new_posts():
    f = long_fight(10)
    first = replay(CombatHistory(f.thread, tuple(f.posts[:14]), f.registry))
    assert first.replayed == 14
    full = f.history()
    again = replay(full, previous=first)
    assert again.replayed == 6
    assert again.to_dict() == replay(full).to_dict()


def test_a_changed_post_replays_from_there():
    f = long_fight(5)
    first = f.replay()
    posts = list(f.posts)
    posts[7] = dataclasses.replace(posts[7], body="modificato", digest="new")
    again = replay(CombatHistory(f.thread, tuple(posts), f.registry), previous=first)
    assert again.replayed == 3


def test_previous_with_other_settings_is_not_reused():
    f = long_fight(3)
    first = f.replay()
    again = f.replay(previous=first, settings={"ordine_turni": False})
    assert again.replayed == 6


def test_errors_are_named():
    with pytest.raises(UnknownRuleset):
        replay(long_fight(1).history(), "nessuno")
    with pytest.raises(BadSetting):
        replay(long_fight(1).history(), "guida", settings={"non_esiste": 1})


def test_audit_document_shape():
    doc = long_fight(2).replay().to_dict()
    assert doc["format"] == AUDIT_FORMAT and doc["ruleset"] == "guida"
    v = doc["posts"][1]["verdicts"][0]
    assert set(v) >= {"code", "severity", "message", "rule", "roll", "expected", "found"}
    assert set(doc["characters"]["Quincy"]) >= {"pv", "pv_max", "pe", "pe_max", "stacks", "conditions"}
    assert set(doc["next"]) >= {"character", "incoming", "hints", "dice_tags"}
    # one list of tags in the document (readers that take `dice_tags` and `dice` would show each tag twice)
    assert "dice" not in doc["next"] and doc["next"]["dice_tags"]
    json.dumps(doc)
    # a history given as its JSON document gives the same audit
    assert replay(long_fight(2).history().to_dict()).to_dict() == doc


def test_next_hint_dice_tags_and_totals():
    f = Fight()
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d8+6", 8, "Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 3, "Attacco [Spada] (Quincy vs Hollow): (+4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d8+6", 8, "Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])"),
                                           R("1d12+8", 9, "Attacco [Artigli] (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    a = f.replay()
    nxt = a.next
    assert nxt["character"] == "Quincy"
    assert nxt["incoming"][0]["total"] == 17 and nxt["incoming"][0]["to_beat"] == 17
    # the key the userscript, the service page and the other rulesets read: {label, tag, phase, action}
    assert all(set(d) >= {"label", "tag", "phase", "action"} for d in nxt["dice_tags"])
    tags = [d["tag"] for d in nxt["dice_tags"]]
    assert "Protezione contro l'Attacco di Hollow (post 102)" in [d["label"] for d in nxt["dice_tags"]]
    assert "[dice=1d24+4]Protezione (Quincy vs Hollow): (+2 [Bonus Protezione] +4 [Destrezza] -2 [Sbilanciamento])[/dice]" in tags
    assert any(t.startswith("[dice=1d12+6]Attacco (Quincy vs Hollow)") for t in tags)
    assert any("Sbilanciamento" in h and "Probabilità di Difendere" in h for h in nxt["hints"])
    assert nxt["stacks"][0]["expires"] == "fine del turno 2 di Quincy"


def test_reports():
    a = long_fight(2).replay()
    text = render_text(a)
    assert "Stato finale" in text and "Prossimo turno: Quincy" in text and "\033[" not in text
    # info verdicts are hidden by default, shown with min_severity="info"
    assert "6 info nascoste: --min-severity info per vederle" in text
    assert "\033[31m" in render_text(a, colour=True, min_severity="info") or "\033[36m" in render_text(a, colour=True, min_severity="info")
    md = render_markdown(a, min_severity="info")
    assert md.startswith("# Arbitro") and "| gravità | codice |" in md
    only = render_text(a, character="Hollow", min_severity="info")
    assert "· Quincy" not in only and "· Hollow" in only


def test_next_hint_offers_a_counter_on_a_generic_action():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d15+6", 3, "Spostamento (Quincy vs Hollow): (+2 [Spostamento] +4 [Destrezza])")])
    nxt = f.replay().next
    assert nxt["character"] == "Hollow"
    assert any(d["action"] == "Contrattacco su Azione Generica" and d["tag"].startswith("[dice=1d18")
               for d in nxt["dice_tags"])


def test_engine_imports_nothing_from_scraper_or_server():
    import subprocess
    import sys

    code = ("import sys, engine, engine.report\nfrom engine.core import available_rulesets\navailable_rulesets()\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('scraper', 'server', 'requests', 'flask')]\n"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(__file__).parents[1]))


def test_every_guida_code_is_documented():
    import pathlib
    import re

    from engine.verdicts import CODE_SEVERITY

    root = pathlib.Path(__file__).parents[1]
    src = "".join(p.read_text(encoding="utf-8") for p in (root / "engine" / "rulesets" / "guida").glob("*.py"))
    used = {c for c in re.findall(r'"([a-z]+\.[a-z_]+)"', src) if c in CODE_SEVERITY}
    assert len(used) > 20, "the scan found almost nothing"
    doc = (root / "docs" / "verdicts.md").read_text(encoding="utf-8")
    missing = [c for c in used if f"`{c}`" not in doc]
    assert not missing
