"""The `poteri` fixture story rendered on ForumFree, phpBB and Forumotion, parsed by the scraper and audited."""
from __future__ import annotations

import pytest

from engine.history import Character, Registry, Resource, Stat, Technique
from tests.plugins.common import FIXTURES
from tests.plugins.stories import (assert_registry_file_agrees, assert_verdicts_as_expected, audit_story,
                                   story_sites)
from tests.plugins.stories import make_fixtures  # noqa: F401  (tests/test_verdict_codes.py reads the story with it)

STORY = "poteri_torre"


def registry() -> Registry:
    """The fight's registry, as a master would write it (see docs/rulesets/poteri.md)."""
    aria = Character(name="Aria", player="Lumen", stats={"Agilità": Stat(50), "Volontà": Stat(40)},
                     resources={"PF": Resource(5, 5), "PD": Resource(12, 12)},
                     techniques=("Dardo di Fuoco", "Tocco Guaritore", "Scudo di Luce", "Catene d'Ombra",
                                 "Voce Suadente"))
    bruno = Character(name="Bruno", player="Ferro", stats={"Agilità": Stat(45), "Volontà": Stat(30)},
                      resources={"PF": Resource(3, 3), "PD": Resource(10, 10)}, techniques=("Dardo di Fuoco",))
    p = "potere"
    techs = {
        "Dardo di Fuoco": Technique("Dardo di Fuoco", kind=p, type="Attacco",
                                    extra={"valore": 60, "resistenza": "Agilità", "tempo": "Prima"}),
        "Tocco Guaritore": Technique("Tocco Guaritore", kind=p, type="Curativo", extra={"valore": 70}),
        "Scudo di Luce": Technique("Scudo di Luce", kind=p, type="Difensivo",
                                   extra={"valore": 80, "slot": 1, "durata": 3, "immune": ["Rissa"]}),
        "Catene d'Ombra": Technique("Catene d'Ombra", kind=p, type="Debilitante",
                                    extra={"valore": 55, "slot": 2, "durata": 2, "impedisce": ["Rissa"]}),
        "Voce Suadente": Technique("Voce Suadente", kind=p, type="Mentale",
                                   extra={"valore": 60, "slot": 1, "vieta_attacco_al_caster": True,
                                          "termina_se_caster_attacca": True}),
    }
    return Registry(characters={"Aria": aria, "Bruno": bruno}, techniques=techs)


REGISTRY_TOML = (FIXTURES / "registry" / f"{STORY}.toml").read_text(encoding="utf-8")


def test_master_registry_file_gives_the_same_audit(story):
    """The registry written as a master's TOML file (scraper.registry_file) audits the story the same way."""
    assert_registry_file_agrees(story, SITES["forumfree"], "poteri", REGISTRY_TOML, registry())


SITES = story_sites(6, forumfree=("torre-gdr.forumfree.it", "Torre GdR"),
                    phpbb=("forum.torre-di-vetro.it", "Torre di Vetro"),
                    forumotion=("phpbb3", "torre.forumattivo.com", "Torre"))


def _audit(story, platform: str):
    return audit_story(story, SITES[platform], "poteri", registry())


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_audited_code_by_code(story, platform):
    assert_verdicts_as_expected(story, _audit(story, platform), platform)


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_final_state(story, platform):
    audit = _audit(story, platform)
    aria, bruno = audit.characters["Aria"], audit.characters["Bruno"]
    assert (aria["pf"], aria["pd"]) == (0, 12)
    assert (bruno["pf"], bruno["pd"]) == (0, 0)
    assert aria["effects"] == [] and aria["slot"] == 0
    partial = [v for p in audit.posts for v in p.verdicts if v.code == "outcome.partial_damage"][0]
    assert partial.assumption == "partial_damage" and partial.details["partial"] == 4
