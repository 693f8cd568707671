"""The `poteri` fixture story rendered on ForumFree, phpBB and Forumotion, parsed by the scraper and audited."""
from __future__ import annotations

import sys
from collections import Counter

import pytest

from engine import replay
from engine.history import Character, Registry, Resource, Stat, Technique
from tests.plugins.common import FIXTURES

sys.path.insert(0, str(FIXTURES))
import make_fixtures
from scraper import parse

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


REGISTRY_TOML = """
[characters.Aria]
player = "Lumen"
stats = { "Agilità" = 50, "Volontà" = 40 }
pf_max = 5
pd_max = 12
techniques = ["Dardo di Fuoco", "Tocco Guaritore", "Scudo di Luce", "Catene d'Ombra", "Voce Suadente"]

[characters.Bruno]
player = "Ferro"
stats = { "Agilità" = 45, "Volontà" = 30 }
pools = { PF = 3, PD = 10 }
techniques = ["Dardo di Fuoco"]

[techniques."Dardo di Fuoco"]
kind = "potere"
type = "Attacco"
extra = { valore = 60, resistenza = "Agilità", tempo = "Prima" }

[techniques."Tocco Guaritore"]
kind = "potere"
type = "Curativo"
extra = { valore = 70 }

[techniques."Scudo di Luce"]
kind = "potere"
type = "Difensivo"
extra = { valore = 80, slot = 1, durata = 3, immune = ["Rissa"] }

[techniques."Catene d'Ombra"]
kind = "potere"
type = "Debilitante"
extra = { valore = 55, slot = 2, durata = 2, impedisce = ["Rissa"] }

[techniques."Voce Suadente"]
kind = "potere"
type = "Mentale"
extra = { valore = 60, slot = 1, vieta_attacco_al_caster = true, termina_se_caster_attacca = true }
"""


def test_master_registry_file_gives_the_same_audit(story):
    """The registry written as a master's TOML file (scraper.registry_file) audits the story the same way."""
    from scraper import registry_file
    site, render = SITES["forumfree"]
    pages = [(data, url) for _, url, data, _ in render(story, site)]
    from_file = registry_file.parse_registry(REGISTRY_TOML)
    a = replay(parse.parse_pages(pages, registry=from_file), "poteri", from_file)
    b = replay(parse.parse_pages(pages, registry=registry()), "poteri", registry())
    assert a.characters == b.characters
    assert [[v.code for v in p.verdicts] for p in a.posts] == [[v.code for v in p.verdicts] for p in b.posts]


SITES = {
    "forumfree": (make_fixtures.Site("forumfree", "ff-current", "torre-gdr.forumfree.it", "Torre GdR", 6),
                  make_fixtures.render_forumfree),
    "phpbb": (make_fixtures.Site("phpbb", "prosilver", "forum.torre-di-vetro.it", "Torre di Vetro", 6),
              make_fixtures.render_phpbb),
    "forumotion": (make_fixtures.Site("forumotion", "phpbb3", "torre.forumattivo.com", "Torre", 6),
                   make_fixtures.render_forumotion),
}


@pytest.fixture(scope="module")
def story():
    return make_fixtures.load_story(STORY)


def _audit(story, platform: str):
    site, render = SITES[platform]
    rows = render(story, site)
    assert len(rows) >= 2  # the story spans pages
    history = parse.parse_pages([(data, url) for _, url, data, _ in rows], registry=registry())
    return replay(history, "poteri", registry())


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_audited_code_by_code(story, platform):
    audit = _audit(story, platform)
    by_post = {p.id.lstrip("p"): p for p in audit.posts}
    assert {str(p["id"]) for p in story["posts"]} <= set(by_post), f"posts lost in parsing on {platform}"
    expected = Counter((str(e["post"]), e["code"]) for e in story["expected"])
    found = Counter((pid, v.code) for pid, pa in by_post.items() for v in pa.verdicts
                    if v.severity in ("error", "warning") or (pid, v.code) in expected)
    missing = expected - found
    assert not missing, f"{platform}: missing {sorted(missing)}"
    extra = {k for k in found if k not in expected}
    assert not extra, f"{platform}: unexpected {sorted(extra)}"


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_final_state(story, platform):
    audit = _audit(story, platform)
    aria, bruno = audit.characters["Aria"], audit.characters["Bruno"]
    assert (aria["pf"], aria["pd"]) == (0, 12)
    assert (bruno["pf"], bruno["pd"]) == (0, 0)
    assert aria["effects"] == [] and aria["slot"] == 0
    partial = [v for p in audit.posts for v in p.verdicts if v.code == "outcome.partial_damage"][0]
    assert partial.assumption == "partial_damage" and partial.details["partial"] == 4
