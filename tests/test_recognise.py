"""Which ruleset a fight follows, recognised from its posts when no --ruleset or forum config decides (issue #14)."""
from __future__ import annotations

import collections
import json

import pytest

from engine.core import available_rulesets
from engine.history import CombatHistory, Post, PostSchema, Resource, Thread
from engine.recognise import recognise
from scraper.crawl import scrape
from server.cli import main
from tests.plugins.engine import R

# the bundled stories and the ruleset each is written for (fixtures/README.md)
STORY_RULESET = {"hollow_vs_quincy": "guida", "duel_short": "guida", "cosmo_santuario": "cosmo",
                 "poteri_torre": "poteri", "starfinder_stazione": "starfinder"}


def conventions():
    return {rid: rs.conventions for rid, rs in available_rulesets().items()}


def story_pages(fixtures_dir, story, platform="forumfree"):
    entries = json.loads((fixtures_dir / "manifest.json").read_text(encoding="utf-8"))
    pages = sorted((e for e in entries if e["story"] == story and e["platform"] == platform and e["kind"] == "html"),
                   key=lambda e: e["page"])
    return [str(fixtures_dir / e["path"]) for e in pages]


def test_every_bundled_ruleset_declares_its_conventions():
    assert set(conventions()) == {"guida", "cosmo", "poteri", "starfinder"}
    assert conventions()["cosmo"].pools == ("PV", "Cosmo") and 100 in conventions()["cosmo"].dice
    assert conventions()["guida"].dice == {8, 12, 15, 18, 24}  # the action table's dice


def test_every_bundled_fight_on_every_platform_is_recognised_as_its_ruleset(fixtures_dir):
    entries = json.loads((fixtures_dir / "manifest.json").read_text(encoding="utf-8"))
    threads = collections.defaultdict(list)
    for e in entries:
        if e["kind"] == "html" and e["story"]:
            threads[(e["story"], e["platform"], e["skin"])].append(e)
    assert {story for story, _, _ in threads} == set(STORY_RULESET)
    for (story, platform, skin), pages in threads.items():
        history = scrape([str(fixtures_dir / e["path"]) for e in sorted(pages, key=lambda e: e["page"])])
        seen = recognise(history, conventions())
        assert seen.ruleset == STORY_RULESET[story], (story, platform, skin, seen.fits)
        assert seen.fits[0].score - seen.fits[1].score >= 0.4  # not a close call on any bundled fight


def _post(n, resources, rolls=()):
    return Post(id=str(n), page=1, url="", author="A", author_id=None, timestamp=None, character="A",
                schema=PostSchema(resources={k: Resource(10, 10) for k in resources}), rolls=tuple(rolls))


def test_posts_that_fit_no_ruleset_or_two_alike_name_none():
    thread = Thread(url="https://x.forumfree.it/?t=1", platform="forumfree", host="x.forumfree.it", thread_id="1",
                    title="t", pages=1, fetched_at=None)
    empty = CombatHistory(thread, ())
    assert recognise(empty, conventions()).ruleset is None
    # PF alone: poteri's and starfinder's pool alike, a d6 both use
    both = CombatHistory(thread, tuple(_post(i, ["PF"], [R("1d6", 4, "Danni")]) for i in range(3)))
    seen = recognise(both, conventions())
    assert seen.ruleset is None and {f.ruleset for f in seen.fits[:2]} == {"poteri", "starfinder"}


def test_audit_without_ruleset_picks_the_recognised_one_and_says_so(fixtures_dir, capsys):
    pages = story_pages(fixtures_dir, "cosmo_santuario")
    assert main(["audit", *pages, "--registry", str(fixtures_dir / "registry" / "cosmo_santuario.toml"),
                 "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["ruleset"] == "cosmo"
    assert ("arbitro audit: regolamento riconosciuto dai post: cosmo (schema PV/Cosmo in 13 post su 13, dadi 1 su 6, "
            "azioni 6 su 6); nessuna configurazione del forum lo sceglie (--ruleset o --forum-config lo fissano)"
            ) in out.err


def test_a_ruleset_chosen_against_the_posts_is_warned(fixtures_dir, capsys, tmp_path):
    pages = story_pages(fixtures_dir, "cosmo_santuario")
    assert main(["audit", *pages, "--ruleset", "guida", "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert "attenzione: regolamento guida, ma i post sembrano di un combattimento cosmo (" in err
    assert "--ruleset cosmo per rigiocarlo così" in err
    # the forum config is the authority: it decides, and the same warning tells the master
    config = tmp_path / "forums.toml"
    config.write_text('[default]\nruleset = "guida"\n', encoding="utf-8")
    assert main(["audit", *pages, "--forum-config", str(config), "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["ruleset"] == "guida" and "i post sembrano di un combattimento cosmo" in out.err


@pytest.mark.parametrize("story", ["poteri_torre", "starfinder_stazione", "hollow_vs_quincy"])
def test_each_story_audits_under_its_own_ruleset_without_being_told(fixtures_dir, capsys, story):
    assert main(["audit", *story_pages(fixtures_dir, story), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["ruleset"] == STORY_RULESET[story]
