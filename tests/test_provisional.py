"""The page-local (provisional) audit: never contradicted by the full audit (issue #16, "Instant overlay")."""
from __future__ import annotations

import collections
import json
from dataclasses import replace

import pytest

from engine.core import available_rulesets, replay
from engine.provisional import replay_page
from engine.recognise import recognise
from scraper.parse import parse_pages
from scraper.registry_file import load_registry
from tests.plugins.common import FIXTURES
from tests.plugins.engine import Fight, R

FETCHED_AT = "2026-11-20T12:00:00+00:00"


def _threads():
    entries = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
    threads = collections.defaultdict(list)
    for e in entries:
        if e["kind"] == "html" and e["story"]:
            threads[(e["story"], e["platform"], e["skin"])].append(e)
    return {k: sorted(v, key=lambda e: e["page"]) for k, v in sorted(threads.items())}


def _keys(audit, post_ids=None):
    return {(p.id, v.code, v.roll) for p in audit.posts for v in p.verdicts
            if v.severity != "info" and (post_ids is None or p.id in post_ids)}


def _each_page(history, ruleset, registry):
    pages = sorted({p.page for p in history.posts})
    for page in pages:
        posts = tuple(p for p in history.posts if p.page == page)
        yield page, posts, replay_page(replace(history, posts=posts), ruleset, registry, page=page, pages=len(pages))


@pytest.mark.parametrize("key", list(_threads()), ids=lambda k: "/".join(k))
def test_every_provisional_error_and_warning_is_in_the_full_audit(key):
    story = key[0]
    pages = _threads()[key]
    history = parse_pages([((FIXTURES / e["path"]).read_bytes(), e["url"]) for e in pages], fetched_at=FETCHED_AT)
    file = FIXTURES / "registry" / f"{story}.toml"
    registry = load_registry(file) if file.exists() else None
    ruleset = recognise(history, {r: rs.conventions for r, rs in available_rulesets().items()}).ruleset
    full = _keys(replay(history, ruleset, registry))
    kept = 0
    for page, posts, provisional in _each_page(history, ruleset, registry):
        mine = _keys(provisional)
        assert mine <= full, (page, sorted(mine - full))
        assert all(p.state == {} for p in provisional.posts) and provisional.characters == {}  # no state guessed
        assert provisional.provisional["page"] == page and [p.id for p in provisional.posts] == [p.id for p in posts]
        kept += len(mine)
    if story in ("hollow_vs_quincy", "starfinder_stazione"):  # their planted dice and registry mistakes
        assert kept, "no mistake shown at once"


def test_the_real_pages_of_one_thread_page_by_page(real_dir):
    ff = real_dir / "forumfree-classic"
    history = parse_pages([((ff / "s01.html").read_bytes(), "https://youtubepoopita.forumfree.it/?t=41935930"),
                           ((ff / "s02.html").read_bytes(), "https://youtubepoopita.forumfree.it/?t=41935930&st=30")],
                          fetched_at=FETCHED_AT)
    full = _keys(replay(history, "guida"))
    for _, _, provisional in _each_page(history, "guida", None):
        assert _keys(provisional) <= full


def _page_two_answers_an_attack_of_page_one(defence_label, face):
    """Ichigo attacks on page 1; Rukia defends first thing on page 2, then rolls an attack on the wrong die."""
    f = Fight()
    f.post("Ichigo", pv=50, stats={"Destrezza": 5}, rolls=[R("1d12+5", 9, "Attacco (Ichigo vs Rukia): (+5 [Destrezza])")])
    f.post("Rukia", pv=50, stats={"Destrezza": 4}, page=2, rolls=[R(f"1d18+4", face, defence_label)])
    f.post("Ichigo", pv=50, stats={"Destrezza": 5}, page=2,
           rolls=[R("1d20+5", 9, "Attacco (Ichigo vs Rukia): (+5 [Destrezza])")])
    return f.history()


def test_a_defence_against_an_attack_of_the_previous_page_gets_no_provisional_verdict():
    # a Parata on the d18 is right against Ichigo's attack of page 1, which the page does not show
    history = _page_two_answers_an_attack_of_page_one("Parata (Rukia vs Ichigo): (+4 [Destrezza])", 3)
    posts = tuple(p for p in history.posts if p.page == 2)
    provisional = replay_page(replace(history, posts=posts), "guida", page=2, pages=2)
    full = replay(history, "guida")
    assert [v.code for v in provisional.posts[0].verdicts] == []  # nothing about Rukia's defence
    # Ichigo's second post of the thread: his previous post is not on page 2, so his wrong die waits for the
    # full audit, which has it
    assert [v.code for v in provisional.posts[1].verdicts] == []
    assert "dice.wrong_die" in [v.code for v in full.posts[2].verdicts]


def test_a_wrong_die_after_the_poster_s_own_post_on_the_page_is_shown_at_once():
    f = Fight()
    for _ in range(2):
        f.post("Ichigo", pv=50, stats={"Destrezza": 5}, rolls=[R("1d20+5", 9, "Attacco (Ichigo vs Rukia): (+5 [Destrezza])")])
        f.post("Rukia", pv=50, stats={"Destrezza": 4}, body="Difesa Nulla")
    provisional = replay_page(f.history(), "guida", page=1, pages=1)
    full = replay(f.history(), "guida")
    [v] = [v for v in provisional.posts[2].verdicts if v.code == "dice.wrong_die"]
    assert (v.expected, v.found) == next((w.expected, w.found) for w in full.posts[2].verdicts if w.code == v.code)
    assert [v.code for v in provisional.posts[0].verdicts] == []  # his first post on the page: not yet
    assert provisional.to_dict()["provisional"]["left_out"] >= 1
