"""Stato finale in each ruleset's own pools (PV/PE, PV/Cosmo, PF/PD/Slot, PS/PF/PR): text, Markdown, report page."""
from __future__ import annotations

import collections
import functools
import json
import re

import pytest

from engine.core import Audit, available_rulesets, replay
from engine.recognise import recognise
from engine.report import character_line, render_markdown, render_text, resources
from scraper.parse import parse_pages
from scraper.registry_file import load_registry
from tests.plugins.common import FIXTURES

FETCHED_AT = "2026-11-20T12:00:00+00:00"  # as tests/test_golden_audits.py: "Oggi"/"Ieri" dates stay put


@functools.lru_cache(maxsize=None)
def bundled_audits() -> dict[str, Audit]:
    """Every bundled fight ("<story>/<platform>/<skin>"), parsed from its fixture pages and replayed under its
    registry and its own ruleset."""
    entries = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
    threads = collections.defaultdict(list)
    for e in entries:
        if e["kind"] == "html" and e["story"]:
            threads[(e["story"], e["platform"], e["skin"])].append(e)
    conventions = {rid: rs.conventions for rid, rs in available_rulesets().items()}
    out = {}
    for (story, platform, skin), pages in sorted(threads.items()):
        pages.sort(key=lambda e: e["page"])
        history = parse_pages([((FIXTURES / e["path"]).read_bytes(), e["url"]) for e in pages], fetched_at=FETCHED_AT)
        file = FIXTURES / "registry" / f"{story}.toml"
        registry = load_registry(file) if file.exists() else None
        out[f"{story}/{platform}/{skin}"] = replay(history, recognise(history, conventions).ruleset, registry)
    return out


# the final state of each story (ForumFree rendering), as every report prints it
FINALS = {
    "hollow_vs_quincy": ("guida", ["Hollow: PV 47/52, PE 25/40", "Quincy: PV 8/48, PE 22/46"]),
    "cosmo_santuario": ("cosmo", ["Elettra: PV 969/1000, Cosmo 350/500",
                                  "Orione: PV 808/900, Cosmo 140/400, Condizioni: Sconfitto"]),
    "poteri_torre": ("poteri", ["Aria: PF 0/5, PD 12/12, Slot 0/2, Condizioni: Senza Fatica",
                                "Bruno: PF 0/3, PD 0/10, Slot 0/2, Condizioni: Senza Fatica, 0 PD"]),
    "starfinder_stazione": ("starfinder", ["Kira: PS 0/12, PF 10/10, PR 3/3",
                                           "Vesk: PS 0/6, PF 0/8, PR 0/1, Condizioni: Privo di Sensi, Morto"]),
}
# the pools the report page charts, in the ruleset's order
CHARTS = {"guida": ["pv", "pe"], "cosmo": ["pv", "cosmo"], "poteri": ["pf", "pd", "slot"],
          "starfinder": ["ps", "pf", "pr"]}


def _audit(story: str) -> Audit:
    return bundled_audits()[f"{story}/forumfree/ff-current"]


@pytest.mark.parametrize("story", sorted(FINALS))
def test_text_names_each_rulesets_pools(story):
    ruleset, lines = FINALS[story]
    audit = _audit(story)
    assert audit.ruleset == ruleset
    text = render_text(audit)
    block = text[text.index("Stato finale\n"):].split("\n\n")[0].splitlines()
    assert block == ["Stato finale"] + [f"  {line}" for line in lines]
    assert "PV ?" not in text and "PE ?" not in text


@pytest.mark.parametrize("story", sorted(FINALS))
def test_markdown_names_each_rulesets_pools(story):
    ruleset, lines = FINALS[story]
    md = render_markdown(_audit(story))
    block = md[md.index("## Stato finale\n"):].split("\n\n")[1].splitlines()
    assert block == [f"- {line}" for line in lines]


def _stored(app, audit: Audit):
    from server.refresh import history_hash

    svc = app.extensions["arbitro"]
    rec = svc.storage.get_or_create_thread(audit.thread.url, audit.ruleset)
    h = {"format": "arbitro.history/1", "thread": {"url": audit.thread.url}, "posts": []}
    rec = svc.storage.save_refresh(rec.id, history=h, content_hash=history_hash(h), audit=audit.to_dict(),
                                   replayed=audit.replayed, pages=[], log=[])
    app.config["ARBITRO"]["refresh_after"] = 10**9  # no background refresh of these stored audits
    return rec


@pytest.mark.parametrize("story", sorted(FINALS))
def test_report_page_names_each_rulesets_pools(app, client, story):
    ruleset, lines = FINALS[story]
    audit = _audit(story)
    rec = _stored(app, audit)
    html = client.get(f"/audit/{rec.id}").get_data(as_text=True)
    fighters = html[html.index('<div class="fighters">'):html.index('<div class="next-panel">')]
    shown = re.findall(r"<h3>(.*?)</h3>\s*<p>(.*?)</p>", fighters)
    assert [(name, re.findall(r'<span class="res">(.*?)</span>', res)) for name, res in shown] == [
        (line.split(":")[0], line.split(": ", 1)[1].split(", Condizioni")[0].split(", ")) for line in lines]
    assert re.findall(r'<svg class="chart-svg" data-resource="(\w+)"', html) == CHARTS[ruleset]
    # each post's state line in the timeline speaks the same words
    first = lines[0].split(", Condizioni")[0]
    name, pools = first.split(": ", 1)
    assert f"{name}: {pools}" in html
    if ruleset in ("poteri", "starfinder"):  # no PV there: never a "PV ?"
        assert not re.search(r"\bPV\b|\bPE\b", fighters)


def test_resources_follow_the_ruleset_then_any_other_pool():
    # the ruleset's schema pools first, in its order; a pool it does not name with its maximum after them
    assert [r[:2] for r in resources({"pd": 3, "pd_max": 9, "pf": 1, "slot": 0, "slot_max": 2}, "poteri")] == [
        ("pf", "PF"), ("pd", "PD"), ("slot", "Slot")]
    assert character_line("Kira", {"pr": 1, "ps": 2, "ps_max": 6, "CAE": 15}, "starfinder") == "Kira: PS 2/6, PR 1"
    # a pool the ruleset has but the state does not know yet reads "?"; an unknown ruleset names what it finds
    assert character_line("Hollow", {"pv": None, "pe": 4}, "guida") == "Hollow: PV ?, PE 4"
    assert character_line("X", {"pv": 3, "pv_max": 5, "cosmo": 1, "cosmo_max": 2}, "nessuno") == "X: PV 3/5, Cosmo 1/2"


def test_chart_ticks_are_whole_numbers(app, client):
    from server.pages import whole_ticks

    assert whole_ticks(52) == [0, 20, 40, 60]
    assert whole_ticks(50) == [0, 20, 40, 60]
    assert whole_ticks(1000) == [0, 250, 500, 750, 1000]
    assert whole_ticks(12) == [0, 5, 10, 15]
    assert whole_ticks(3) == [0, 1, 2, 3]
    assert whole_ticks(0) == [0, 1]
    for story in FINALS:
        rec = _stored(app, _audit(story))
        html = client.get(f"/audit/{rec.id}").get_data(as_text=True)
        labels = re.findall(r'<text x="\d+(?:\.\d+)?" y="[\d.]+" text-anchor="end">([^<]*)</text>', html)
        assert labels and all(re.fullmatch(r"\d+", t) for t in labels), labels
    rec = _stored(app, _audit("hollow_vs_quincy"))
    html = client.get(f"/audit/{rec.id}").get_data(as_text=True)
    pv = html[html.index('data-resource="pv"'):html.index("</svg>", html.index('data-resource="pv"'))]
    assert re.findall(r'text-anchor="end">([^<]*)</text>', pv) == ["0", "20", "40", "60"]
