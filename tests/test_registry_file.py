"""Tests of scraper.registry_file: the TOML registry a master writes by hand."""
from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings, strategies as st

from engine.history import Character, Registry, Resource, Stat, Technique, registry_from_dict, registry_to_dict
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
    """The starfinder fight's own registry (fixtures/registry/starfinder_stazione.toml): pools other than PV/PE."""
    reg = load_registry(str(fixtures_dir / "registry" / "starfinder_stazione.toml"))
    vesk = reg.characters["Vesk"]
    assert vesk.resources == {"PS": Resource(6, 6), "PF": Resource(8, 8), "PR": Resource(1, 1)}
    assert vesk.extra == {"BAB": 3, "CAE": 14, "CAC": 15, "competenze": ["armi da mischia base"],
                          "TS": {"Tempra": 4, "Riflessi": 3, "Volontà": 1}}
    assert vesk.stats["Forza"] == Stat(16, 0)
    assert vesk.techniques == ("Ascia Tattica", "Fucile a Raggi")


def test_every_bundled_fight_has_its_registry(fixtures_dir):
    """Each fight story but the short clean duel (read from its sheets) ships the registry it was written for."""
    stories = sorted(p.stem for p in (fixtures_dir / "stories").glob("*.toml"))
    registries = sorted(p.stem for p in (fixtures_dir / "registry").glob("*.toml"))
    assert [s for s in stories if s != "duel_short"] == registries
    for name in registries:
        assert load_registry(str(fixtures_dir / "registry" / f"{name}.toml")).characters


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


# --- two characters' techniques of the same name ------------------------------------------------------------

def _sheet(owner: str, potenziale: int, url: str) -> Registry:
    return Registry(characters={owner: Character(name=owner, techniques=("Katana",))},
                    techniques={"Katana": Technique("Katana", kind="arma", category="B", potenziale=potenziale,
                                                    cost={"PE": potenziale // 4}, owner=owner)},
                    sources=(url,))


def test_same_technique_name_two_owners_from_sheets():
    """crawl merges sheet after sheet: the second "Katana" no longer replaces the first (owner and numbers)."""
    reg = Registry().merged(_sheet("Hollow", 12, "https://x.it/h")).merged(_sheet("Quincy", 8, "https://x.it/q"))
    assert list(reg.techniques) == ["Katana", "Katana [Quincy]"]
    assert (reg.techniques["Katana"].owner, reg.techniques["Katana"].potenziale) == ("Hollow", 12)
    assert (reg.techniques["Katana [Quincy]"].owner, reg.techniques["Katana [Quincy]"].potenziale) == ("Quincy", 8)
    # the actor's own, names compared without case / accents / double spaces
    assert reg.technique("katana", "quincy").potenziale == 8
    assert reg.technique("KATANA", "Hollow").potenziale == 12
    assert reg.technique("Katana").potenziale == 12  # no owner: the plain-keyed one, as before
    assert reg.technique("Katana", "Ichigo").potenziale == 12
    assert reg.technique("Katana  ", "Quincy").cost == {"PE": 2}
    assert reg.technique("Wakizashi", "Quincy") is None and reg.technique("", "Quincy") is None
    # a history keeps both (JSON round trip), and a history written before still loads and is found
    again = registry_from_dict(registry_to_dict(reg))
    assert again == reg and again.technique("Katana", "Quincy").potenziale == 8
    old = registry_from_dict({"characters": {}, "techniques": {"Sonìdo": {"name": "Sonìdo", "potenziale": 6}},
                              "sources": []})
    assert old.technique("sonido").potenziale == 6


def test_same_technique_name_two_owners_in_the_file():
    reg = parse_registry('[techniques.K1]\nname = "Katana"\nowner = "Hollow"\npotenziale = 12\n'
                         '[techniques.K2]\nname = "Katana"\nowner = "Quincy"\npotenziale = 8\n'
                         '[characters.Hollow]\npv_max = 52\n[characters.Quincy]\npv_max = 48\n')
    assert {k: (t.owner, t.potenziale) for k, t in reg.techniques.items()} == {
        "Katana": ("Hollow", 12), "Katana [Quincy]": ("Quincy", 8)}
    assert reg.characters["Hollow"].techniques == ("Katana",) and reg.characters["Quincy"].techniques == ("Katana",)
    assert reg.technique("katana", "Quincy").potenziale == 8
    # the file's Quincy Katana overlays the sheets' Quincy Katana only
    sheets = Registry().merged(_sheet("Hollow", 12, "h")).merged(_sheet("Quincy", 8, "q"))
    fixed = sheets.merged(parse_registry('[techniques.katana]\nowner = "quincy"\npotenziale = 9\n'))
    assert {k: (t.owner, t.potenziale, t.kind, t.cost) for k, t in fixed.techniques.items()} == {
        "Katana": ("Hollow", 12, "arma", {"PE": 3}), "Katana [Quincy]": ("Quincy", 9, "arma", {"PE": 2})}


# --- the file wins field by field -----------------------------------------------------------------------------

def test_file_entry_wins_per_field(fixtures_dir):
    sheet = parse_sheet((fixtures_dir / "sheets" / "hollow.html").read_bytes(), "https://bleach-gdr.forumfree.it/?t=70000101")
    merged = sheet.merged(parse_registry('[characters.Hollow]\nextra = { bonus_statistica = 2 }\n'
                                         '[techniques.cero]\nname = "Cero"\npotenziale = 16\n'))
    hollow = merged.characters["Hollow"]
    assert hollow == Character(
        name="Hollow", sheet_url="https://bleach-gdr.forumfree.it/?t=70000101", player="Kurogane",
        stats={"Forza": Stat(5, 1), "Destrezza": Stat(4, 0), "Costituzione": Stat(5, 0), "Intelligenza": Stat(3, 0)},
        resources={"PV": Resource(52, 52), "PE": Resource(40, 40)},
        techniques=("Artigli Affilati", "Sonìdo", "Cero", "Pelle d'Acciaio"), extra={"bonus_statistica": 2})
    assert merged.techniques["Cero"] == Technique(
        name="Cero", kind="tecnica", type="Offensiva Energetica", category="A", potenziale=16, raggio_ottimale="Lungo",
        cost={"PE": 5},
        owner="Hollow", extra={})
    assert list(merged.techniques) == ["Artigli Affilati", "Sonìdo", "Cero", "Pelle d'Acciaio"]


def test_file_names_match_sheets_without_case_and_accents(fixtures_dir):
    sheet = parse_sheet((fixtures_dir / "sheets" / "hollow.html").read_bytes(), "https://x.it/hollow")
    merged = sheet.merged(parse_registry('[characters.hollow]\npv_max = 60\nstats = { forza = [6, 1] }\n'
                                         '[techniques."artigli  affilati"]\npotenziale = 20\n'
                                         '[techniques.SONIDO]\ncost = "4 PE"\n'))
    assert list(merged.characters) == ["Hollow"]  # the sheet's name: the file did not write `name`
    hollow = merged.characters["Hollow"]
    assert hollow.resources == {"PV": Resource(60, 60), "PE": Resource(40, 40)}
    assert hollow.stats == {"Forza": Stat(6, 1), "Destrezza": Stat(4, 0), "Costituzione": Stat(5, 0),
                            "Intelligenza": Stat(3, 0)}
    assert list(merged.techniques) == ["Artigli Affilati", "Sonìdo", "Cero", "Pelle d'Acciaio"]
    aa = merged.techniques["Artigli Affilati"]
    assert (aa.name, aa.kind, aa.category, aa.potenziale, aa.raggio_ottimale, aa.owner) == (
        "Artigli Affilati", "arma", "B", 20, "Corto", "Hollow")
    assert (merged.techniques["Sonìdo"].cost, merged.techniques["Sonìdo"].potenziale) == ({"PE": 4}, 6)
    # a `name` the file writes is the displayed name
    renamed = sheet.merged(parse_registry('[characters.x]\nname = "HOLLOW"\npv_max = 61\n'))
    assert list(renamed.characters) == ["HOLLOW"]
    assert renamed.characters["HOLLOW"].resources == {"PV": Resource(61, 61), "PE": Resource(40, 40)}


# --- `name` overrides ------------------------------------------------------------------------------------------

def test_name_override_is_the_key():
    reg = parse_registry('[techniques.AA]\nname = "Artigli Affilati"\npotenziale = 20\n'
                         '[characters.Hollow]\ntechniques=["AA"]\n')
    assert list(reg.techniques) == ["Artigli Affilati"]
    assert reg.techniques["Artigli Affilati"].owner == "Hollow" and reg.techniques["Artigli Affilati"].potenziale == 20
    assert reg.characters["Hollow"].techniques == ("Artigli Affilati",)
    reg = parse_registry('[characters.H]\nname = "Hollow"\npv_max = 52\n')
    assert list(reg.characters) == ["Hollow"] and reg.characters["Hollow"].name == "Hollow"


@pytest.mark.parametrize("text, lines, words", [
    ('[characters.A]\nname = "Hollow"\npv_max = 1\n[characters.B]\nname = "Hollow"\npv_max = 2\n', (1, 4),
     "il personaggio Hollow"),
    ('[characters.Hollow]\npv_max = 1\n\n[characters.B]\nname = "hóllow"\n', (1, 4), "il personaggio hóllow"),
    ('[techniques.Katana]\nowner = "H"\n[techniques.K]\nname = "katana"\nowner = "h"\n', (1, 3),
     "la tecnica katana di h"),
])
def test_same_name_twice_is_refused(text, lines, words):
    with pytest.raises(RegistryFileError) as info:
        parse_registry(text)
    assert info.value.line == lines[1]
    assert words in str(info.value) and f"righe {lines[0]} e {lines[1]}" in str(info.value)


# --- costs -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cost, expected, upkeep", [
    ("5 PE a turno", {}, {"PE": 5}),
    ("2 PE + 3 PE", {"PE": 5}, None),
    ("10 PE + 5 PE per turno", {"PE": 10}, {"PE": 5}),
    ("3 PE/turno", {}, {"PE": 3}),
    ("2 PE a turno + 1 PE per turno + 1 PV", {"PV": 1}, {"PE": 3}),
    ("PE 5", {"PE": 5}, None),
    ("2 punti energia + 1 PV", {"PE": 2, "PV": 1}, None),
])
def test_cost_text(cost, expected, upkeep):
    t = parse_registry(f'[techniques.X]\ncost = "{cost}"\n').techniques["X"]
    assert t.cost == expected
    assert t.extra == ({"mantenimento": upkeep} if upkeep else {})


@pytest.mark.parametrize("text, line, words", [
    ('[techniques.X]\nkind = "arma"\ncost = "5 PE, poi 2"\n', 3, "costo non leggibile"),
    ('[techniques.X]\ncost = "5 mana"\n', 2, "risorsa sconosciuta 'mana'"),
    ('[techniques.X]\ncost = { Mana = 5 }\n', 2, "risorsa sconosciuta 'Mana'"),
    ('[techniques.X]\ncost = "5 PE a turno"\nextra = { mantenimento = { PE = 1 } }\n', 2, "mantenimento"),
    # negative numbers
    ('[characters.H]\npe_max = 3\npv_max = -5\n', 3, "pv_max non può essere negativo, trovato -5"),
    ('[techniques.X]\npotenziale = -3\n', 2, "potenziale non può essere negativo, trovato -3"),
    ('[techniques.X]\ncost = { PE = -2 }\n', 2, "cost PE non può essere negativo, trovato -2"),
    ('[techniques.X]\ncost = "-2 PE"\n', 2, "costo non leggibile"),
    ('[characters.H]\npools = { PR = -1 }\n', 2, "pools PR non può essere negativo"),
    ('[characters.H]\nstats = { Forza = [-5, 1] }\n', 2, "Forza: il livello base non può essere negativo"),
    # unknown pools
    ('[characters.H]\npv_max = 3\nfoo_max = 3\n', 3, "risorsa sconosciuta 'foo' in foo_max (risorse note: PV, PE, PF, PD, PS, PR, Cosmo"),
    ('[characters.H]\npools = { Mana = 3 }\n', 2, "risorsa sconosciuta 'Mana' in pools"),
    # dotted keys and inline tables: the line is known
    ('characters.Hollow.pv_max = "tanti"\n', 1, "pv_max deve essere un numero intero"),
    ('[characters]\nHollow = { pv_max = "tanti" }\n', 2, "pv_max deve essere un numero intero"),
    ('[characters.Hollow]\nplayer = "a"\nstats.Forza = "5"\n', 3, "statistica Forza"),
])
def test_refused_with_line(text, line, words):
    with pytest.raises(RegistryFileError) as info:
        parse_registry(text)
    assert info.value.line == line and words in str(info.value) and f"riga {line}" in str(info.value)


def test_pool_max_any_case_and_bonus_may_be_negative():
    reg = parse_registry('[characters.H]\nPV_max = 3\nstats = { Forza = [0, -2] }\n')
    assert reg.characters["H"].resources == {"PV": Resource(3, 3)}
    assert reg.characters["H"].stats == {"Forza": Stat(0, -2)}


def test_bom_is_accepted(tmp_path: pathlib.Path):
    text = "\ufeff[characters.Hollow]\npv_max = 52\n"
    assert parse_registry(text).characters["Hollow"].resources == {"PV": Resource(52, 52)}
    path = tmp_path / "bom.toml"
    path.write_bytes(text.encode("utf-8"))
    assert load_registry(path).characters["Hollow"].resources == {"PV": Resource(52, 52)}
