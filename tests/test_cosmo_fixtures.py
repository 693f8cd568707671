"""The `cosmo` fixture story rendered on ForumFree, phpBB and Forumotion, parsed by the scraper and audited."""
from __future__ import annotations

import pytest

from scraper import registry_file
from tests.plugins.common import FIXTURES
from tests.plugins.stories import assert_verdicts_as_expected, audit_story, story_sites
from tests.plugins.stories import make_fixtures  # noqa: F401  (tests/test_verdict_codes.py reads the story with it)

STORY = "cosmo_santuario"

# The fight's registry as a master writes it (scraper.registry_file); see docs/rulesets/cosmo.md.
REGISTRY_TOML = (FIXTURES / "registry" / f"{STORY}.toml").read_text(encoding="utf-8")

# The forum's Tabella 5 and level malus (a forum config; not the rule text's numbers).
SETTINGS = {
    "tabella5": [
        {"nome": "Leggero", "min": 1, "max": 50, "con_armatura": "1d10", "senza_armatura": "1d20", "turni": 1},
        {"nome": "Moderato", "min": 51, "max": 100, "con_armatura": "1d20", "senza_armatura": "1d40", "turni": 2},
        {"nome": "Pesante", "min": 101, "max": 300, "con_armatura": "1d40", "senza_armatura": "1d80", "turni": 3},
        {"nome": "One shot", "min": 301},
    ],
    "level_malus": {"1": 40, "2": 80},
}

SITES = story_sites(5, forumfree=("santuario-gdr.forumfree.it", "Santuario GdR"),
                    phpbb=("forum.cavalieri-gdr.it", "Cavalieri GdR"),
                    forumotion=("phpbb2", "santuario.forumattivo.com", "Santuario"))


@pytest.fixture(scope="module")
def registry():
    return registry_file.parse_registry(REGISTRY_TOML)


def _audit(story, registry, platform: str):
    return audit_story(story, SITES[platform], "cosmo", registry, settings=SETTINGS)


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_audited_code_by_code(story, registry, platform):
    assert_verdicts_as_expected(story, _audit(story, registry, platform), platform)


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_numbers_and_final_state(story, registry, platform):
    audit = _audit(story, registry, platform)
    by_post = {p.id.lstrip("p"): p for p in audit.posts}

    def one(pid: str, code: str):
        vs = [v for v in by_post[pid].verdicts if v.code == code]
        assert vs, f"{code} not in post {pid}"
        return vs[0]

    assert (one("910140", "outcome.damage").expected, one("910140", "outcome.damage").found) == ("Moderato", 60)
    level = one("910150", "outcome.damage")
    assert (level.expected, level.found, level.assumption) == ("Pesante", 200, None)  # the forum's own numbers
    assert "malus livello 40" in level.message
    assert one("910150", "registro.pool_mismatch").expected == 969
    assert one("910160", "cosmo.blocked").expected == 3
    raised = one("910180", "outcome.damage")
    assert (raised.expected, raised.found) == ("Moderato", 40) and "malus blocco 80" in raised.message
    assert one("910200", "cosmo.freed").found == 140
    assert one("910220", "cosmo.surrender_refused").found == 808
    elettra, orione = audit.characters["Elettra"], audit.characters["Orione"]
    assert (elettra["pv"], elettra["cosmo"]) == (969, 350)
    assert (orione["pv"], orione["cosmo"]) == (808, 140)
    assert "Sconfitto" in orione["conditions"] and orione["blocco"] is None
    assert orione["danni_da_tirare"] == ["Pesante"]
