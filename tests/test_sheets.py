"""Tests of scraper.sheets: character sheets posted on forums, read into a Registry."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from engine.history import Character, Resource, Stat, Technique
from scraper.sheets import parse_sheet


@pytest.fixture(scope="module")
def hollow(fixtures_dir):
    return parse_sheet((fixtures_dir / "sheets" / "hollow.html").read_bytes(),
                       "https://bleach-gdr.forumfree.it/?t=70000101")


@pytest.fixture(scope="module")
def quincy(fixtures_dir):
    return parse_sheet((fixtures_dir / "sheets" / "quincy.html").read_bytes(),
                       "https://forum.karakura-gdr.it/viewtopic.php?t=70000102")


def test_hollow_character(hollow):
    assert hollow.characters == {"Hollow": Character(
        name="Hollow", sheet_url="https://bleach-gdr.forumfree.it/?t=70000101", player="Kurogane",
        stats={"Forza": Stat(5, 1), "Destrezza": Stat(4, 0), "Costituzione": Stat(5, 0), "Intelligenza": Stat(3, 0)},
        resources={"PV": Resource(52, 52), "PE": Resource(40, 40)},
        techniques=("Artigli Affilati", "Sonìdo", "Cero", "Pelle d'Acciaio"), extra={})}
    assert hollow.sources == ("https://bleach-gdr.forumfree.it/?t=70000101",)


def test_hollow_techniques(hollow):
    t = hollow.techniques
    assert t["Artigli Affilati"] == Technique(
        name="Artigli Affilati", kind="arma", type="Offensiva Fisica", category="B", potenziale=12,
        raggio_ottimale="Corto", cost={"PE": 0}, owner="Hollow",
        extra={"effetto": "Lunghi artigli ossei, duri come l'acciaio, che squarciano la carne."})
    assert (t["Sonìdo"].kind, t["Sonìdo"].type, t["Sonìdo"].category, t["Sonìdo"].potenziale,
            t["Sonìdo"].raggio_ottimale, t["Sonìdo"].cost) == ("tecnica", "Potenziamento", "C", 6, None, {"PE": 3})
    assert (t["Cero"].kind, t["Cero"].type, t["Cero"].category, t["Cero"].potenziale, t["Cero"].raggio_ottimale,
            t["Cero"].cost) == ("tecnica", "Offensiva Energetica", "A", 15, "Lungo", {"PE": 5})
    assert (t["Pelle d'Acciaio"].kind, t["Pelle d'Acciaio"].category, t["Pelle d'Acciaio"].potenziale) == \
        ("armatura", "C", 4)
    # The "Storia" section after the techniques is not a technique, and its "Potenziale 99" is ignored.
    assert set(t) == {"Artigli Affilati", "Sonìdo", "Cero", "Pelle d'Acciaio"}


def test_quincy_tables_and_inline_forms(quincy):
    (char,) = quincy.characters.values()
    # changed 2026-12-01: no "Giocatore:" line, so the player is the sheet post's author (was None)
    assert char.name == "Quincy" and char.player == "Seireitei_Ryo"
    assert char.stats == {"Forza": Stat(3, 0), "Destrezza": Stat(6, 0), "Costituzione": Stat(6, 0),
                          "Intelligenza": Stat(4, 1)}
    assert char.resources == {"PV": Resource(48, 48), "PE": Resource(46, 46)}
    t = quincy.techniques
    assert t["Freccia Sacra"] == Technique(
        name="Freccia Sacra", kind="tecnica", type="Offensiva Spirituale", category="B", potenziale=13,
        raggio_ottimale="Lungo", cost={"PE": 6}, owner="Quincy", extra={})
    assert (t["Scudo di Reishi"].type, t["Scudo di Reishi"].category, t["Scudo di Reishi"].potenziale,
            t["Scudo di Reishi"].raggio_ottimale, t["Scudo di Reishi"].cost) == ("Difensiva", "C", 8, "Corto", {"PE": 4})
    assert (t["Tocco Curativo"].type, t["Tocco Curativo"].category, t["Tocco Curativo"].raggio_ottimale) == \
        ("Curativa", "D", "Mischia")
    assert t["Arco Spirituale"] == Technique(
        name="Arco Spirituale", kind="arma", type="Offensiva a Distanza", category="B", potenziale=10,
        raggio_ottimale="Lungo", cost={"PE": 2, "PV": 1}, owner="Quincy", extra={})
    # one-line form after a table, in the same section: "Blut Vene [Tecnica Difensiva] — Potenziale C 6 — Costo: 0 PE"
    assert t["Blut Vene"] == Technique(
        name="Blut Vene", kind="tecnica", type="Difensiva", category="C", potenziale=6, raggio_ottimale=None,
        cost={"PE": 0}, owner="Quincy", extra={})
    assert (t["Hirenkyaku"].type, t["Hirenkyaku"].category, t["Hirenkyaku"].potenziale, t["Hirenkyaku"].cost) == \
        ("Difensiva", "C", 5, {"PE": 0})
    assert char.techniques == ("Freccia Sacra", "Scudo di Reishi", "Tocco Curativo", "Blut Vene", "Hirenkyaku",
                               "Arco Spirituale")


@pytest.mark.parametrize("line, category, value", [
    ("Potenziale: B (12)", "B", 12), ("Potenziale B 12", "B", 12), ("Potenziale: 12 (B)", "B", 12),
    ("Potenziale: S", "S", None), ("Potenziale: 7", None, 7),
    # review: the value was lost after a dash, the category when glued to the number or named in words
    ("Potenziale C - 8", "C", 8), ("Potenziale: D-4", "D", 4), ("Potenziale: C – 8", "C", 8),
    ("Potenziale: B12", "B", 12), ("Potenziale: 12B", "B", 12), ("Potenziale: 10 (categoria B)", "B", 10),
    ("Potenziale: Categoria B, valore 12", "B", 12), ("Potenziale: <b>B</b> (<i>12</i>)", "B", 12),
])
def test_potenziale_forms(line, category, value):
    html = f"<div class='scheda'>Nome: Test<br>Tecniche<br>Colpo<br>{line}<br></div>".encode()
    reg = parse_sheet(html, "https://x.it/s")
    assert (reg.techniques["Colpo"].category, reg.techniques["Colpo"].potenziale) == (category, value)


def test_cost_without_pool_is_kept_raw_not_guessed():
    html = "<div class='scheda'>Nome: Test<br>Tecniche<br>Colpo<br>Costo: 5<br></div>"
    reg = parse_sheet(html, "https://x.it/s")
    assert reg.techniques["Colpo"].cost == {}
    assert reg.techniques["Colpo"].extra == {"costo": "5"}


def test_starfinder_extras_and_other_pools():
    html = ("<article><h2>Vesk</h2><p>PS 20/20<br>PF 17<br>CAE 15 · CAC 17 · BAB +3</p>"
            "<p>Forza 18 Destrezza 12</p></article>")
    (char,) = parse_sheet(html, "https://x.it/vesk").characters.values()
    assert char.name == "Vesk"
    assert char.resources == {"PS": Resource(20, 20), "PF": Resource(17, 17)}
    assert char.extra == {"CAE": 15, "CAC": 17, "BAB": 3}
    assert char.stats == {"Forza": Stat(18, 0), "Destrezza": Stat(12, 0)}


def test_empty_and_odd_pages_do_not_raise():
    assert parse_sheet(b"", "https://x.it/s").characters == {}
    reg = parse_sheet(b"<html><head><title>Pagina vuota</title></head><body></body></html>", "https://x.it/s")
    assert list(reg.characters) == ["Pagina vuota"]
    reg = parse_sheet("<p>senza titolo</p>", "https://x.it/pg/hollow")
    assert list(reg.characters) == ["hollow"]


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.text(max_size=500), st.binary(max_size=500),
                 st.text(alphabet="<>/bdivtr Tecniche Potenziale:BC()0123456789\n", max_size=500)))
def test_never_raises(data):
    reg = parse_sheet(data, "https://x.it/s")
    for tech in reg.techniques.values():
        assert tech.category in (None, "D", "C", "B", "A", "S")


def test_ichigo_forumotion_inline_sections(fixtures_dir):
    reg = parse_sheet((fixtures_dir / "sheets" / "ichigo.html").read_bytes(),
                      "https://bleachgdr.forumattivo.com/t12-scheda-ichigo")
    assert reg.characters == {"Ichigo Kurosaki": Character(
        name="Ichigo Kurosaki", sheet_url="https://bleachgdr.forumattivo.com/t12-scheda-ichigo",
        player="Kurosaki_Fan",
        stats={"Forza": Stat(6, 1), "Destrezza": Stat(5, 1), "Costituzione": Stat(5, 0), "Intelligenza": Stat(3, 0)},
        resources={"PV": Resource(56, 56), "PE": Resource(36, 36)},
        techniques=("Zangetsu", "Getsuga Tensho", "Parata Rapida"), extra={})}
    assert reg.techniques["Zangetsu"] == Technique(
        name="Zangetsu", kind="arma", type="Offensiva Fisica", category="B", potenziale=12,
        raggio_ottimale="Corto", cost={"PE": 0}, owner="Ichigo Kurosaki", extra={})
    assert reg.techniques["Getsuga Tensho"] == Technique(
        name="Getsuga Tensho", kind="tecnica", type="Offensiva Energetica", category="A", potenziale=15,
        raggio_ottimale="Medio", cost={"PE": 7}, owner="Ichigo Kurosaki", extra={})
    # "Costo: 2" names no pool: kept raw, not guessed.
    assert reg.techniques["Parata Rapida"] == Technique(
        name="Parata Rapida", kind="tecnica", type="Difensiva", category="C", potenziale=7,
        raggio_ottimale="Mischia", cost={}, owner="Ichigo Kurosaki", extra={"costo": "2"})


def _sheet(body: str, url: str = "https://f.forumfree.it/?t=1"):
    return parse_sheet(f"<html><head><title>t</title></head><body><div class='scheda'>{body}</div></body></html>", url)


def test_upkeep_is_kept_apart_from_the_upfront_cost():
    # review: "5 PE (+1 PE a turno)" was read as a cost of 6 PE, "5 PE a turno" as 5 PE paid once
    reg = _sheet("<p>Nome: Aiko</p><p><b>Tecniche</b></p>"
                 "<p><b>Lama di Vento</b><br>Potenziale C 8<br>Costo: 5 PE a turno</p>"
                 "<p><b>Fuoco</b><br>Potenziale: C – 8<br>Consumo: 4 PE/turno</p>"
                 "<p><b>A1</b><br>Potenziale: B (12)<br>Costo: 5 PE (+1 PE a turno)</p>"
                 "<p><b>A2</b><br>Potenziale: B (12)<br>Costo: 5 PE, 2 PE per mantenerla</p>"
                 "<p><b>A3</b><br>Costo: 3 PE<br>Mantenimento: 2 PE/turno</p>"
                 "<p><b>A4</b><br>Costo: 2 PE + 1 PV (mantenimento 1 PE)</p>"
                 "<p><b>A5</b><br>Costo: 3 Punti Energia al Turno</p>"
                 "<p><b>A6</b><br>Costo: 3 PE + 2 PV</p>"
                 "<p><b>A7</b><br>Costo: PE 5</p>"
                 "<p><b>A8</b><br>Costo: Punti Energia 4 a turno</p>")
    got = {n: (t.cost, t.extra.get("mantenimento")) for n, t in reg.techniques.items()}
    assert got == {"Lama di Vento": ({}, {"PE": 5}), "Fuoco": ({}, {"PE": 4}), "A1": ({"PE": 5}, {"PE": 1}),
                   "A2": ({"PE": 5}, {"PE": 2}), "A3": ({"PE": 3}, {"PE": 2}), "A4": ({"PE": 2, "PV": 1}, {"PE": 1}),
                   "A5": ({}, {"PE": 3}), "A6": ({"PE": 3, "PV": 2}, None), "A7": ({"PE": 5}, None),
                   "A8": ({}, {"PE": 4})}


def test_stats_with_a_bare_signed_bonus_and_table_rows_with_colons():
    # review: "Forza: 5 + 1" (no brackets); a table row "Destrezza: | 4+2" or "Costituzione: | 5 (+1)" was lost
    (char,) = _sheet("<p>Nome: Aiko</p><p>Forza: 5 + 1</p><p>Agilità: 4+2</p>"
                     "<table><tr><td>Destrezza:</td><td>4+2</td></tr><tr><td>Costituzione:</td><td>5 (+1)</td></tr>"
                     "<tr><td>Intelligenza</td><td>3 - 1</td></tr><tr><td>Volontà:</td><td>6</td></tr></table>"
                     "<p>Percezione: 4 (bonus +1)</p><p>Carisma: 5 (Bonus: -2)</p><p>Saggezza 3 (+2 bonus)</p>"
                     ).characters.values()
    # "(bonus +1)" was read as bonus 0
    assert char.stats == {"Forza": Stat(5, 1), "Agilità": Stat(4, 2), "Destrezza": Stat(4, 2),
                          "Costituzione": Stat(5, 1), "Intelligenza": Stat(3, -1), "Volontà": Stat(6, 0),
                          "Percezione": Stat(4, 1), "Carisma": Stat(5, -2), "Saggezza": Stat(3, 2)}


_NICCOLO = ("<html><head>{meta}</head><body><div class='scheda'><p>Nome: Niccolò</p><p>Agilità: 5 (+1)</p>"
            "<p><b>Tecniche</b></p><p><b>Pugno d’Acciaio</b><br>Potenziale: C (8)<br>Costo: 3 PE</p></div></body></html>")


@pytest.mark.parametrize("data, charset", [
    (_NICCOLO.format(meta="").encode("utf-8"), None),  # review: UTF-8 bytes without a <meta> came out as "NiccolÃ²"
    (_NICCOLO.format(meta="").encode("cp1252"), None),
    (_NICCOLO.format(meta="").encode("cp1252"), "iso-8859-1"),  # review: 0x92 read as latin-1, not windows-1252
    (_NICCOLO.format(meta="<meta charset='iso-8859-1'>").encode("cp1252"), None),
    (_NICCOLO.format(meta="<meta charset='utf-8'>").encode("cp1252"), "windows-1252"),
])
def test_sheet_bytes_decoded_like_thread_pages(data, charset):
    reg = parse_sheet(data, "https://x.it/s", charset=charset)
    (char,) = reg.characters.values()
    assert (char.name, char.stats, list(reg.techniques)) == ("Niccolò", {"Agilità": Stat(5, 1)}, ["Pugno d’Acciaio"])


def test_http_charset_wins_over_the_meta():
    data = _NICCOLO.format(meta="<meta charset='utf-8'>").replace("Niccolò", "Niccolò €").encode("iso-8859-15", "xmlcharrefreplace")
    assert list(parse_sheet(data, "https://x.it/s", charset="iso-8859-15").characters) == ["Niccolò €"]


def test_too_deep_sheet_is_named_and_a_deep_one_is_read():
    from scraper.errors import PageTooDeep

    deep = "<div class='scheda'><p>Nome: Aiko</p>{}<p>Forza: 5 (+1)</p>{}</div>"
    (char,) = parse_sheet(deep.format("<div>" * 1500, "</div>" * 1500), "https://x.it/s").characters.values()
    assert (char.name, char.stats) == ("Aiko", {"Forza": Stat(5, 1)})  # read whole, no recursion limit
    with pytest.raises(PageTooDeep):
        parse_sheet(deep.format("<div>" * 3000, "</div>" * 3000).encode(), "https://x.it/s")


def _tech(t):
    return (t.name, t.kind, t.type, t.category, t.potenziale, t.raggio_ottimale, t.cost, t.extra)


def test_table_row_with_an_empty_cell_keeps_its_columns_and_a_dash_is_no_value():
    # review: the "Onda" row (empty Costo) was dropped, or read with shifted columns; "—" was stored as "-"
    reg = _sheet("<p>Nome: Aiko</p><p><b>Tecniche:</b></p><table><tr><td><b>Tecnica</b></td><td><b>Tipologia</b></td>"
                 "<td><b>Categoria</b></td><td><b>Potenziale</b></td><td><b>Raggio Ottimale</b></td>"
                 "<td><b>Costo</b></td></tr>"
                 "<tr><td>Fendente</td><td>Offensiva</td><td>C</td><td>7</td><td>Corto</td><td>3 PE</td></tr>"
                 "<tr><td>Onda</td><td>Offensiva</td><td>B</td><td>12</td><td>Medio</td><td></td></tr>"
                 "<tr><td>Parata</td><td></td><td>C</td><td>6</td><td>—</td><td>0</td></tr></table>"
                 "<p><b>Tecniche Difensive</b></p><p><b>Muro</b><br>Potenziale: B (12)<br>Raggio Ottimale: —</p>")
    assert [_tech(t) for t in reg.techniques.values()] == [
        ("Fendente", "tecnica", "Offensiva", "C", 7, "Corto", {"PE": 3}, {}),
        ("Onda", "tecnica", "Offensiva", "B", 12, "Medio", {}, {}),
        ("Parata", "tecnica", None, "C", 6, None, {}, {}),
        ("Muro", "tecnica", None, "B", 12, None, {}, {})]


def test_list_items_and_technique_names_with_kind_or_type():
    # review: "<li>Katana, Wakizashi</li>" was one weapon; "Tecnica: Cero", "[Offensiva] Cero" kept the prefix
    reg = _sheet("<p>Nome: Aiko</p><p><b>Armi</b></p><ul><li>Katana, Wakizashi</li><li>Arco Lungo</li></ul>"
                 "<p><b>Tecniche</b></p><p>[Offensiva] Cero<br>Potenziale: A (15)</p>"
                 "<p>Tecnica: Raffica — Tipo: Offensiva — Potenziale: B (11) — Costo: 4 PE</p>"
                 "<p>Arma: Zanpakuto<br>Potenziale: B (12)</p>"
                 "<ul><li><b>Fendente</b>: Offensiva Fisica, Potenziale C (7), Raggio Ottimale Corto, Costo 3 PE</li></ul>"
                 "<p>• Lama di Vento: Offensiva a Distanza; Potenziale C (8); Raggio Ottimale 10 m; Costo 5 PE</p>"
                 "<p>Scatto – Potenziamento – Potenziale C (5) – Costo 2 PE</p><p>Taglio - Vento<br>Potenziale: D (2)</p>")
    assert [_tech(t) for t in reg.techniques.values()] == [
        ("Katana", "arma", None, None, None, None, {}, {}),
        ("Wakizashi", "arma", None, None, None, None, {}, {}),
        ("Arco Lungo", "arma", None, None, None, None, {}, {}),
        ("Cero", "tecnica", "Offensiva", "A", 15, None, {}, {}),
        ("Raffica", "tecnica", "Offensiva", "B", 11, None, {"PE": 4}, {}),
        ("Zanpakuto", "arma", None, "B", 12, None, {}, {}),
        ("Fendente", "tecnica", "Offensiva Fisica", "C", 7, "Corto", {"PE": 3}, {}),
        ("Lama di Vento", "tecnica", "Offensiva a Distanza", "C", 8, "10 m", {"PE": 5}, {}),
        ("Scatto", "tecnica", "Potenziamento", "C", 5, None, {"PE": 2}, {}),
        ("Taglio - Vento", "tecnica", None, "D", 2, None, {}, {})]  # a dash inside a name stays
    assert reg.characters["Aiko"].techniques == tuple(reg.techniques)


@pytest.mark.parametrize("body, title, name, player", [
    # review: "Scheda Personaggio" gave the name "Personaggio"; a "Nome | X" table row was ignored;
    # "Nome del Giocatore: Ryo" was not read as the player
    ("<p><b>Scheda Personaggio</b></p><p>Nome e Cognome: Kenshi Yamato</p><p>Forza: 5 (+1)</p>", "t",
     "Kenshi Yamato", None),
    ("<p><b>Scheda Personaggio</b></p><p>Forza: 5 (+1)</p>", "Scheda Kenshi Yamato - Forum", "Kenshi Yamato", None),
    ("<table><tr><td>Nome</td><td>Kenshi</td></tr><tr><td>Giocatore</td><td>Ryo</td></tr></table>", "t",
     "Kenshi", "Ryo"),
    ("<p><b>Nome</b>: Kenshi Yamato</p><p><b>Nome del Giocatore</b>: Ryo</p><p><b>Età</b>: 17</p>", "t",
     "Kenshi Yamato", "Ryo"),
    ("<h2>Scheda di Kenshi</h2><p>Player: Ryo</p>", "t", "Kenshi", "Ryo"),
])
def test_character_name_and_player(body, title, name, player):
    reg = parse_sheet(f"<html><head><title>{title}</title></head><body><div class='scheda'>{body}</div></body></html>",
                      "https://f.forumfree.it/?t=1")
    assert [(c.name, c.player) for c in reg.characters.values()] == [(name, player)]
