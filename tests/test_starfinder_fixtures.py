"""The `starfinder` fixture story rendered on ForumFree, phpBB and Forumotion, parsed by the scraper and audited."""
from __future__ import annotations

import pytest

from engine.history import Character, Registry, Resource, Stat, Technique
from tests.plugins.common import FIXTURES
from tests.plugins.stories import (assert_registry_file_agrees, assert_verdicts_as_expected, audit_story,
                                   story_sites)
from tests.plugins.stories import make_fixtures  # noqa: F401  (tests/test_verdict_codes.py reads the story with it)

STORY = "starfinder_stazione"


def registry() -> Registry:
    """The fight's registry, as a master would write it (see docs/rulesets/starfinder.md)."""
    kira = Character(name="Kira", player="StellaNera", stats={"Forza": Stat(14), "Destrezza": Stat(16)},
                     resources={"PS": Resource(12, 12), "PF": Resource(10, 10), "PR": Resource(3, 3)},
                     techniques=("Pistola Laser", "Coltello Stellare", "Granata a Frammentazione"),
                     extra={"BAB": 5, "CAE": 15, "CAC": 16,
                            "competenze": ["armi piccole", "armi da mischia base", "granate"],
                            "TS": {"Tempra": 3, "Riflessi": 6, "Volontà": 2}})
    vesk = Character(name="Vesk", player="Tiziano",
                     stats={"Forza": Stat(16), "Destrezza": Stat(12), "Costituzione": Stat(14)},
                     resources={"PS": Resource(6, 6), "PF": Resource(8, 8), "PR": Resource(1, 1)},
                     techniques=("Ascia Tattica", "Fucile a Raggi"),
                     extra={"BAB": 3, "CAE": 14, "CAC": 15, "competenze": ["armi da mischia base"],
                            "TS": {"Tempra": 4, "Riflessi": 3, "Volontà": 1}})
    techs = {
        "Pistola Laser": Technique("Pistola Laser", kind="arma", type="fuoco",
                                   extra={"danni": "1d4", "attacco": "distanza", "categoria": "armi piccole",
                                          "livello": 1}),
        "Coltello Stellare": Technique("Coltello Stellare", kind="arma", type="perforante",
                                       extra={"danni": "1d4", "attacco": "mischia",
                                              "categoria": "armi da mischia base"}),
        "Granata a Frammentazione": Technique("Granata a Frammentazione", kind="arma", type="perforante",
                                              extra={"danni": "1d6", "attacco": "granata", "categoria": "granate",
                                                     "livello": 2, "ts": {"tipo": "Riflessi", "esito": "Dimezza"}}),
        "Ascia Tattica": Technique("Ascia Tattica", kind="arma", type="tagliente",
                                   extra={"danni": "1d6", "attacco": "mischia", "categoria": "armi da mischia base"}),
        "Fucile a Raggi": Technique("Fucile a Raggi", kind="arma", type="elettricità",
                                    extra={"danni": "1d8", "attacco": "distanza", "categoria": "armi lunghe"}),
    }
    return Registry(characters={"Kira": kira, "Vesk": vesk}, techniques=techs)


REGISTRY_TOML = (FIXTURES / "registry" / f"{STORY}.toml").read_text(encoding="utf-8")


def test_master_registry_file_gives_the_same_audit(story):
    """The registry written as a master's TOML file (scraper.registry_file) audits the story the same way."""
    assert_registry_file_agrees(story, SITES["phpbb"], "starfinder", REGISTRY_TOML, registry())


SITES = story_sites(6, forumfree=("starfinder-gdr.forumfree.it", "Starfinder GdR"),
                    phpbb=("forum.absalom-gdr.it", "Absalom GdR"),
                    forumotion=("phpbb3", "absalom.forumattivo.com", "Absalom"))


def _audit(story, platform: str):
    return audit_story(story, SITES[platform], "starfinder", registry())


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_audited_code_by_code(story, platform):
    assert_verdicts_as_expected(story, _audit(story, platform), platform)


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_final_state(story, platform):
    audit = _audit(story, platform)
    kira, vesk = audit.characters["Kira"], audit.characters["Vesk"]
    assert (kira["ps"], kira["pf"], kira["pr"]) == (0, 10, 3)
    assert (vesk["ps"], vesk["pf"], vesk["pr"]) == (0, 0, 0)
    assert "Morto" in vesk["conditions"]
