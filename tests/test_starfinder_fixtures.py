"""The `starfinder` fixture story rendered on ForumFree, phpBB and Forumotion, parsed by the scraper and audited."""
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


REGISTRY_TOML = """
[characters.Kira]
player = "StellaNera"
stats = { Forza = 14, Destrezza = 16 }
ps_max = 12
pf_max = 10
pools = { PR = 3 }
techniques = ["Pistola Laser", "Coltello Stellare", "Granata a Frammentazione"]
extra = { BAB = 5, CAE = 15, CAC = 16, competenze = ["armi piccole", "armi da mischia base", "granate"], TS = { Tempra = 3, Riflessi = 6, "Volontà" = 2 } }

[characters.Vesk]
player = "Tiziano"
stats = { Forza = 16, Destrezza = 12, Costituzione = 14 }
ps_max = 6
pf_max = 8
pools = { PR = 1 }
techniques = ["Ascia Tattica", "Fucile a Raggi"]
extra = { BAB = 3, CAE = 14, CAC = 15, competenze = ["armi da mischia base"], TS = { Tempra = 4, Riflessi = 3, "Volontà" = 1 } }

[techniques."Pistola Laser"]
kind = "arma"
type = "fuoco"
extra = { danni = "1d4", attacco = "distanza", categoria = "armi piccole", livello = 1 }

[techniques."Coltello Stellare"]
kind = "arma"
type = "perforante"
extra = { danni = "1d4", attacco = "mischia", categoria = "armi da mischia base" }

[techniques."Granata a Frammentazione"]
kind = "arma"
type = "perforante"
extra = { danni = "1d6", attacco = "granata", categoria = "granate", livello = 2, ts = { tipo = "Riflessi", esito = "Dimezza" } }

[techniques."Ascia Tattica"]
kind = "arma"
type = "tagliente"
extra = { danni = "1d6", attacco = "mischia", categoria = "armi da mischia base" }

[techniques."Fucile a Raggi"]
kind = "arma"
type = "elettricità"
extra = { danni = "1d8", attacco = "distanza", categoria = "armi lunghe" }
"""


def test_master_registry_file_gives_the_same_audit(story):
    """The registry written as a master's TOML file (scraper.registry_file) audits the story the same way."""
    from scraper import registry_file
    site, render = SITES["phpbb"]
    pages = [(data, url) for _, url, data, _ in render(story, site)]
    from_file = registry_file.parse_registry(REGISTRY_TOML)
    a = replay(parse.parse_pages(pages, registry=from_file), "starfinder", from_file)
    b = replay(parse.parse_pages(pages, registry=registry()), "starfinder", registry())
    assert a.characters == b.characters
    assert [[v.code for v in p.verdicts] for p in a.posts] == [[v.code for v in p.verdicts] for p in b.posts]


SITES = {
    "forumfree": (make_fixtures.Site("forumfree", "ff-current", "starfinder-gdr.forumfree.it", "Starfinder GdR", 6),
                  make_fixtures.render_forumfree),
    "phpbb": (make_fixtures.Site("phpbb", "prosilver", "forum.absalom-gdr.it", "Absalom GdR", 6),
              make_fixtures.render_phpbb),
    "forumotion": (make_fixtures.Site("forumotion", "phpbb3", "absalom.forumattivo.com", "Absalom", 6),
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
    return replay(history, "starfinder", registry())


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_audited_code_by_code(story, platform):
    audit = _audit(story, platform)
    ids = [str(p["id"]) for p in story["posts"]]
    by_post = {p.id.lstrip("p"): p for p in audit.posts}
    assert set(ids) <= set(by_post), f"posts lost in parsing on {platform}"
    expected = Counter((str(e["post"]), e["code"]) for e in story["expected"])
    found = Counter((pid, v.code) for pid, pa in by_post.items() for v in pa.verdicts
                    if v.severity in ("error", "warning") or (pid, v.code) in expected)
    # every expected verdict is there...
    missing = expected - found
    assert not missing, f"{platform}: missing {sorted(missing)}"
    # ...and no error or warning beyond the deliberate mistakes (and the consequences they name)
    extra = {k for k in found if k not in expected}
    assert not extra, f"{platform}: unexpected {sorted(extra)}"


@pytest.mark.parametrize("platform", sorted(SITES))
def test_story_final_state(story, platform):
    audit = _audit(story, platform)
    kira, vesk = audit.characters["Kira"], audit.characters["Vesk"]
    assert (kira["ps"], kira["pf"], kira["pr"]) == (0, 10, 3)
    assert (vesk["ps"], vesk["pf"], vesk["pr"]) == (0, 0, 0)
    assert "Morto" in vesk["conditions"]
