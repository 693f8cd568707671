"""Tests of scraper.registry_file: the TOML registry a master writes by hand."""
from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings, strategies as st

from engine.history import Character, Resource, Stat, Technique
from scraper.errors import ParseError, RegistryFileError
from scraper.registry_file import load_registry, parse_registry
from scraper.sheets import parse_sheet


def test_fixture_file(fixtures_dir):
    path = fixtures_dir / "registry" / "hollow_vs_quincy.toml"
    reg = load_registry(path)
    assert reg.sources == (str(path),)
    assert reg.characters["Hollow"] == Character(
        name="Hollow", sheet_url="https://bleach-gdr.forumfree.it/?t=70000101", player="Kurogane",
        stats={"Forza": Stat(5, 1), "Destrezza": Stat(4, 0), "Costituzione": Stat(5, 0), "Intelligenza": Stat(3, 0)},
        resources={"PV": Resource(52, 52), "PE": Resource(40, 40)},
        techniques=("Artigli Affilati", "Sonìdo", "Cero", "Pelle d'Acciaio"), extra={})
    # Quincy lists no techniques: the ones it owns are gathered in file order.
    assert reg.characters["Quincy"] == Character(
        name="Quincy", sheet_url="https://bleach-gdr.forumfree.it/?t=70000102", player="Seireitei_Ryo",
        stats={"Forza": Stat(3, 0), "Destrezza": Stat(6, 0), "Costituzione": Stat(6, 0), "Intelligenza": Stat(4, 1)},
        resources={"PV": Resource(48, 48), "PE": Resource(46, 46)},
        techniques=("Freccia Sacra", "Blut Vene", "Hirenkyaku", "Scudo di Reishi", "Tocco Curativo", "Arco Spirituale"),
        extra={})
    assert reg.techniques["Artigli Affilati"] == Technique(
        name="Artigli Affilati", kind="arma", type="Offensiva Fisica", category="B", potenziale=12,
        raggio_ottimale="Corto", cost={"PE": 0}, owner="Hollow", extra={"bonus_statistica": 2})
    assert reg.techniques["Cero"].cost == {"PE": 5}  # "5 PE" written as text
    assert (reg.techniques["Cero"].category, reg.techniques["Cero"].potenziale, reg.techniques["Cero"].extra) == \
        ("A", 15, {"bonus_statistica": 1})
    assert reg.techniques["Arco Spirituale"].cost == {"PE": 2, "PV": 1}  # "2 PE + 1 PV" written as text
    assert reg.techniques["Scudo di Reishi"].cost == {"PE": 4}  # pool alias "punti energia"
    assert reg.techniques["Sonìdo"].owner == "Hollow" and reg.techniques["Sonìdo"].kind == "tecnica"
    assert reg.techniques["Freccia Sacra"] == Technique(
        name="Freccia Sacra", kind="tecnica", type="Offensiva Spirituale", category="B", potenziale=13,
        raggio_ottimale="Lungo", cost={"PE": 6}, owner="Quincy", extra={"bonus_statistica": 2})
    assert reg.techniques["Blut Vene"].cost == {"PE": 0}  # pool alias "punti energia"


def test_starfinder_fixture(fixtures_dir):
    reg = load_registry(str(fixtures_dir / "registry" / "starfinder_example.toml"))
    vesk = reg.characters["Vesk"]
    assert vesk.resources == {"PS": Resource(20, 20), "PF": Resource(17, 17), "PR": Resource(4, 4)}
    assert vesk.extra == {"CAE": 15, "CAC": 17, "BAB": 3}
    assert vesk.stats["Forza"] == Stat(18, 0)
    assert vesk.techniques == ("Spada Lunga Tattica",)


def test_text_and_stat_forms():
    reg = parse_registry('[characters.A]\nstats = { Forza = [5, 1], Mente = { base = 3, bonus = -1 }, Vigore = 4 }\n')
    assert reg.characters["A"].stats == {"Forza": Stat(5, 1), "Mente": Stat(3, -1), "Vigore": Stat(4, 0)}
    assert reg.sources == ("<registry text>",)


def test_file_wins_over_sheets(fixtures_dir):
    sheet = parse_sheet((fixtures_dir / "sheets" / "hollow.html").read_bytes(), "https://x.it/hollow")
    hand = parse_registry('[characters.Hollow]\npv_max = 60\n[techniques.Cero]\npotenziale = 18\ncategory = "S"\n')
    merged = sheet.merged(hand)
    # changed 2026-12-01: the file wins per field, the sheet's PE max (left out by the file) stays
    assert merged.characters["Hollow"].resources == {"PV": Resource(60, 60), "PE": Resource(40, 40)}
    assert merged.techniques["Cero"].potenziale == 18
    assert merged.techniques["Artigli Affilati"].potenziale == 12
    assert merged.sources == ("https://x.it/hollow", "<registry text>")


@pytest.mark.parametrize("text, line, words", [
    ("[characters.X]\npv_max = \"tanti\"\n", 2, "pv_max"),
    ("[characters.X]\nplayer = \"a\"\nstats = { Forza = \"5\" }\n", 3, "Forza"),
    ("[techniques.Y]\nkind = \"arma\"\ncategory = \"Z\"\n", 3, "categoria"),
    ("[techniques.\"Freccia Sacra\"]\ncost = 5\n", 2, "costo"),
    ("[techniques.Y]\ncost = \"tanto\"\n", 2, "costo"),
    ("[characters.X]\npvmax = 3\n", 2, "pvmax"),
    ("[mostri]\nx = 1\n", 1, "mostri"),
    ("[characters.X]\nplayer = \"a\"\nplayer = \"b\"\n", 3, "TOML"),
    ("a = [\n", 1, "TOML"),
    ("[characters.X]\nstats = [1, 2]\n", 2, "stats"),
    ("[characters.X]\ntechniques = \"Cero\"\n", 2, "techniques"),
    ("[techniques.Y]\npotenziale = 1.5\n", 2, "potenziale"),
    ("[techniques.Y]\npotenziale = true\n", 2, "potenziale"),
])
def test_named_errors_with_line(text, line, words):
    with pytest.raises(RegistryFileError) as info:
        parse_registry(text)
    err = info.value
    assert err.code == "registry_file" and isinstance(err, ParseError)
    assert err.line == line
    assert words in str(err) and f"riga {line}" in str(err)


def test_missing_file(tmp_path: pathlib.Path):
    with pytest.raises(RegistryFileError) as info:
        load_registry(tmp_path / "manca.toml")
    assert str(tmp_path / "manca.toml") in str(info.value)


def test_not_utf8(tmp_path: pathlib.Path):
    path = tmp_path / "latin1.toml"
    path.write_bytes('[characters.Sonìdo]\n'.encode("latin-1"))
    with pytest.raises(RegistryFileError):
        load_registry(path)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=300).map(lambda s: s + "\n="),
                 st.text(alphabet='[]."=\n characterstechniquesstats{}0123456789,pv_max', max_size=300)))
def test_only_named_errors(text):
    try:
        parse_registry(text)
    except RegistryFileError:
        pass


def test_text_is_never_read_as_a_path(tmp_path: pathlib.Path):
    """A registry sent as text (e.g. through the API) must not make Arbitro open a file by that name."""
    secret = tmp_path / "secret.toml"
    secret.write_text('[characters.Segreto]\npv_max = 1\n', encoding="utf-8")
    with pytest.raises(RegistryFileError):
        parse_registry(str(secret))  # a file name is not valid TOML: named error, file untouched
    assert "Segreto" in load_registry(secret).characters
