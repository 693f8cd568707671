"""Tests of scraper.schema: the post schema (sheet link, pools, stats, Registro) and Registro lines."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from engine.history import RegistroEntry, Resource, Stat
from scraper.schema import RESOURCE_ALIASES, parse_registro_line, parse_schema

FULL = """[b]Hollow[/b]
Scheda: https://bleachgdr.forumfree.it/?t=101
[color=red]PV: 44/52[/color] | PE 30 su 40
Forza 5 (+1) · Destrezza: 6(+0), Costituzione 4
Intelligenza 2 (+0) | Volontà 4
Arcano 3 (+1)

Registro:
-8 PV [Artigli Affilati di Quincy]
PE -5 (Freccia Sacra)
-5 PE: Sonìdo
+4 PV (Cura)

Hollow si lancia in avanti. Potenza 14 - Resistenza 6 = 8 Danni.
"""


def test_full_schema():
    schema = parse_schema(FULL)
    assert schema is not None
    assert schema.sheet_url == "https://bleachgdr.forumfree.it/?t=101"
    assert schema.resources == {"PV": Resource(44, 52), "PE": Resource(30, 40)}
    assert schema.stats == {
        "Forza": Stat(5, 1), "Destrezza": Stat(6, 0), "Costituzione": Stat(4, 0), "Intelligenza": Stat(2, 0),
        "Volontà": Stat(4, 0), "Arcano": Stat(3, 1),
    }
    assert schema.registro == (
        RegistroEntry(-8, "PV", "Artigli Affilati di Quincy", "-8 PV [Artigli Affilati di Quincy]"),
        RegistroEntry(-5, "PE", "Freccia Sacra", "PE -5 (Freccia Sacra)"),
        RegistroEntry(-5, "PE", "Sonìdo", "-5 PE: Sonìdo"),
        RegistroEntry(4, "PV", "Cura", "+4 PV (Cura)"),
    )
    assert schema.missing == ()


@pytest.mark.parametrize("line, pools", [
    ("PV 44/52", {"PV": Resource(44, 52)}),
    ("Punti Vita: 44 su 52", {"PV": Resource(44, 52)}),
    ("PV: 44", {"PV": Resource(44, None)}),
    ("punti  vita 44 / 52 - punti energia 10/40", {"PV": Resource(44, 52), "PE": Resource(10, 40)}),
    ("44/52 PV | 10/40 PE", {"PV": Resource(44, 52), "PE": Resource(10, 40)}),
    ("[b]PV[/b]: [color=#c00]44[/color]/52", {"PV": Resource(44, 52)}),
    ("Punti Stamina 12/20 · Punti Ferita 17/17 · PR 3/4",
     {"PS": Resource(12, 20), "PF": Resource(17, 17), "PR": Resource(3, 4)}),
    ("Punti Fatica 2/3 | PD 0", {"PF": Resource(2, 3), "PD": Resource(0, None)}),
    ("Punti Salute 120/150 | Cosmo 40/60", {"PV": Resource(120, 150), "Cosmo": Resource(40, 60)}),
    ("HP 30/30", {"PV": Resource(30, 30)}),
])
def test_pool_variants(line, pools):
    schema = parse_schema(line)
    assert schema is not None and schema.resources == pools


@pytest.mark.parametrize("line, stats", [
    ("Forza 5 (+1)", {"Forza": Stat(5, 1)}),
    ("Forza: 5 (+1)", {"Forza": Stat(5, 1)}),
    ("Forza 5(+1)", {"Forza": Stat(5, 1)}),
    ("Forza 5 (+0)", {"Forza": Stat(5, 0)}),
    ("Forza 5", {"Forza": Stat(5, 0)}),
    ("Forza 5 (-1) | Destrezza 6 (+2) · Costituzione 4, Intelligenza 3 (+0)",
     {"Forza": Stat(5, -1), "Destrezza": Stat(6, 2), "Costituzione": Stat(4, 0), "Intelligenza": Stat(3, 0)}),
    ("[b]Forza[/b] 5 [i](+1)[/i]", {"Forza": Stat(5, 1)}),
    ("Volonta 4 (+1) Reattività 235", {"Volontà": Stat(4, 1), "Reattività": Stat(235, 0)}),
    ("Arcano Antico 7 (+2)", {"Arcano Antico": Stat(7, 2)}),
])
def test_stat_variants(line, stats):
    schema = parse_schema(line)
    assert schema is not None and schema.stats == stats


def test_unknown_names_need_the_full_form():
    # "Arcano 7" alone could be anything: only "Nome N (+M)" is taken for names outside the table.
    assert parse_schema("Arcano 7") is None


def test_table_cells_one_per_line():
    # Name and value cells given as separate lines are rejoined.
    schema = parse_schema("PV\n44/52\nPE:\n30 su 40\nForza\n5 (+1)\nDestrezza\nalta\nVolontà\n4\n+2\nMente\n3\n(-1)")
    assert schema.resources == {"PV": Resource(44, 52), "PE": Resource(30, 40)}
    assert schema.stats == {"Forza": Stat(5, 1), "Volontà": Stat(4, 2), "Mente": Stat(3, -1)}
    schema = parse_schema("PV | 44/52\nPE | 30/40\nForza | 5 (+1)")
    assert schema.resources == {"PV": Resource(44, 52), "PE": Resource(30, 40)}
    assert schema.stats == {"Forza": Stat(5, 1)}


@pytest.mark.parametrize("text", ["Registro: Nessuna modifica", "Registro:\n-", "Registro\nnessun cambiamento",
                                  "REGISTRO: —"])
def test_empty_registro(text):
    schema = parse_schema(text + "\nPV 52/52")
    assert schema.registro == ()
    assert "registro" not in schema.missing


def test_registro_ends_at_blank_line_or_next_section():
    schema = parse_schema("Registro:\n-8 PV [Artigli]\nNote: Hollow ride\n-3 PE (Sonìdo)")
    assert [e.amount for e in schema.registro] == [-8]
    schema = parse_schema("Registro: -8 PV [Artigli]; -3 PE (Sonìdo)\n\n-1 PV (ignorato)")
    assert [(e.amount, e.resource, e.label) for e in schema.registro] == [(-8, "PV", "Artigli"), (-3, "PE", "Sonìdo")]


def test_missing_parts_listed_not_guessed():
    schema = parse_schema("PV 44/52")
    assert schema.missing == ("sheet_url", "PE", "stats", "registro")
    assert schema.registro is None and schema.stats == {}
    assert parse_schema("Hollow attacca senza pietà e ride.") is None
    assert parse_schema("") is None


def test_sheet_link_from_links():
    links = ["https://bleachgdr.forumfree.it/?act=Profile&MID=5", "https://bleachgdr.forumfree.it/?t=101#scheda"]
    schema = parse_schema("PV 44/52", links=links)
    assert schema.sheet_url == "https://bleachgdr.forumfree.it/?t=101#scheda"
    schema = parse_schema("PV 44/52", links=[("La mia Scheda", "https://x.it/?t=5"), ("altro", "https://x.it/?t=6")])
    assert schema.sheet_url == "https://x.it/?t=5"
    schema = parse_schema("PV 44/52", links=["https://x.it/?t=5", "https://x.it/pg/hollow"], sheet_pattern=r"/pg/")
    assert schema.sheet_url == "https://x.it/pg/hollow"
    schema = parse_schema("PV 44/52", sheet_url="https://given.it/s")
    assert schema.sheet_url == "https://given.it/s"
    # A sheet link alone is a schema with everything else missing.
    schema = parse_schema("ciao", links=["https://x.it/scheda/hollow"])
    assert schema.missing == ("PV", "PE", "stats", "registro")


def test_character_name():
    assert parse_schema("Nome: Hollow\nPV 44/52").character == "Hollow"


def test_prose_and_calculations_are_not_schema():
    text = "Calcolo Danni [Artigli] (Hollow vs Quincy): Potenza 14 - Resistenza 6 = 8 Danni"
    assert parse_schema(text) is None


@pytest.mark.parametrize("line, entry", [
    ("-8 PV [Artigli Affilati di Hollow]", (-8, "PV", "Artigli Affilati di Hollow")),
    ("PE -5 (Freccia Sacra)", (-5, "PE", "Freccia Sacra")),
    ("-5 PE: Freccia Sacra", (-5, "PE", "Freccia Sacra")),
    ("+4 PV (Cura)", (4, "PV", "Cura")),
    ("• −3 Punti Vita (Sanguinamento)", (-3, "PV", "Sanguinamento")),
    ("- -2 PE [Sonìdo]", (-2, "PE", "Sonìdo")),
    ("[b]-8 PV[/b] [Artigli]", (-8, "PV", "Artigli")),
    ("PV: -8 [Artigli]", (-8, "PV", "Artigli")),
    ("-1 Punti Fatica (Fulmine)", (-1, "PF", "Fulmine")),
    ("-4 PS [Spada]", (-4, "PS", "Spada")),
    ("-10 Cosmo", (-10, "Cosmo", "")),
])
def test_registro_line(line, entry):
    e = parse_registro_line(line)
    assert (e.amount, e.resource, e.label) == entry
    assert e.raw == line.strip()


@pytest.mark.parametrize("line", ["Nessuna modifica", "PV 44/52", "8 PV [Artigli]", "", "Hollow ride", "-8 Mele"])
def test_registro_line_none(line):
    assert parse_registro_line(line) is None


def test_aliases_table():
    assert RESOURCE_ALIASES["punti vita"] == "PV" and RESOURCE_ALIASES["hp"] == "PV"
    assert RESOURCE_ALIASES["punti fatica"] == RESOURCE_ALIASES["punti ferita"] == "PF"
    assert RESOURCE_ALIASES["punti salute"] == "PV" and RESOURCE_ALIASES["punti stamina"] == "PS"
    assert RESOURCE_ALIASES["punti risolutezza"] == "PR" and RESOURCE_ALIASES["cosmo"] == "Cosmo"


def test_custom_aliases():
    schema = parse_schema("Mana 12/20", aliases={**RESOURCE_ALIASES, "mana": "PE"})
    assert schema.resources == {"PE": Resource(12, 20)}


_HOSTILE = st.one_of(
    st.text(max_size=500),
    st.text(alphabet="PVEpve Registro:[]()<>+-−/|·,0123456789\n su", max_size=500),
    st.builds(lambda n: ("Registro:\n" + "-1 PV [" * n) + "]" * n, st.integers(0, 200)),
)


@settings(max_examples=200, deadline=None)
@given(_HOSTILE, st.lists(st.text(max_size=40), max_size=4))
def test_schema_never_raises(text, links):
    schema = parse_schema(text, links=links)
    if schema is not None:
        assert set(schema.missing) <= {"sheet_url", "PV", "PE", "stats", "registro"}
    for line in text.splitlines():
        entry = parse_registro_line(line)
        assert entry is None or isinstance(entry.amount, int)


@pytest.mark.parametrize("unit", ["PV 1/", "-1 PV [", "Forza 5 (", "Registro:\n-1 PE ", "a" * 9 + " ", "1 su "])
def test_huge_hostile_input_completes(unit):
    text = unit * (100_000 // len(unit))
    parse_schema(text)
    parse_registro_line(text)
    parse_schema("\n".join([text[:250]] * 400))


@pytest.mark.parametrize("line, stats, pools", [
    ("Forza 5 (+1) = 6 | Destrezza 6 [+0] = 6", {"Forza": Stat(5, 1), "Destrezza": Stat(6, 0)}, {}),
    ("PV = 44/52", {}, {"PV": Resource(44, 52)}),
])
def test_totals_and_equals_in_schema_lines(line, stats, pools):
    schema = parse_schema(line)
    assert (schema.stats, schema.resources) == (stats, pools)


def test_calculation_lines_give_no_stats():
    assert parse_schema("Potenza 14 - Resistenza 6 = 8") is None
    assert parse_schema("(Potenza 14 - Resistenza 6) / 2 = 4") is None


def test_heavily_styled_lines_still_read():
    colour = "[color=#8B0000][b][size=3][font=Georgia]{}[/font][/size][/b][/color]"
    line = " | ".join(colour.format(n) + f" {b} (+{k})" for n, b, k in
                      (("Forza", 5, 1), ("Destrezza", 6, 0), ("Costituzione", 4, 0), ("Intelligenza", 2, 0)))
    assert len(line) > 300
    schema = parse_schema(line + "\n" + colour.format("PV") + " 44/52")
    assert schema.stats == {"Forza": Stat(5, 1), "Destrezza": Stat(6, 0), "Costituzione": Stat(4, 0),
                            "Intelligenza": Stat(2, 0)}
    assert schema.resources == {"PV": Resource(44, 52)}


# --- review fixes (2026-12-01) ---

@pytest.mark.parametrize("text, stats", [
    ("PV: 44/52\nPE: 37/40\nForza: 5 (+1)\nDestrezza: 6 (\u20131)", {"Forza": Stat(5, 1), "Destrezza": Stat(6, -1)}),
    ("Forza 5 (\u22121)", {"Forza": Stat(5, -1)}),
    ("Forza 5 (\uff0b1)", {"Forza": Stat(5, 1)}),
    ("Forza 5 (\u20141) | Destrezza 6 (\u20102)", {"Forza": Stat(5, -1), "Destrezza": Stat(6, -2)}),
    ("[b]Forza[/b] 5 (\u22121)", {"Forza": Stat(5, -1)}),
])
def test_typographic_signs_in_stats(text, stats):
    assert parse_schema(text).stats == stats


@pytest.mark.parametrize("text, pools", [
    ("PV: \u22123/52\nPE: 37/40", {"PV": Resource(-3, 52), "PE": Resource(37, 40)}),
    ("PV: -3/52\nPE: 37/40", {"PV": Resource(-3, 52), "PE": Resource(37, 40)}),
    ("PV -3/52", {"PV": Resource(-3, 52)}),
    ("PV \u20133/52", {"PV": Resource(-3, 52)}),
    ("PV - 44/52", {"PV": Resource(44, 52)}),
])
def test_typographic_signs_in_pools(text, pools):
    assert parse_schema(text).resources == pools


def test_a_signed_pool_amount_without_max_is_not_the_pool():
    # "PE -6 (Freccia Sacra)" outside a Registro is a change, not PE 6 (nor -6)
    schema = parse_schema("PE -6 (Freccia Sacra)\nPV 44/52")
    assert schema.resources == {"PV": Resource(44, 52)} and "PE" in schema.missing


@pytest.mark.parametrize("line, entry", [
    ("\u22128 PV [Artigli]", (-8, "PV", "Artigli")),
    ("\u20138 PV [Artigli]", (-8, "PV", "Artigli")),
    ("\u20108 PV [Artigli]", (-8, "PV", "Artigli")),
    ("PE \u22125 (Freccia Sacra)", (-5, "PE", "Freccia Sacra")),
    ("\uff0b4 PV (Cura)", (4, "PV", "Cura")),
])
def test_typographic_signs_in_registro(line, entry):
    e = parse_registro_line(line)
    assert (e.amount, e.resource, e.label) == entry
    assert [(e.amount, e.resource, e.label) for e in parse_schema("Registro:\n" + line).registro] == [entry]


def _entries(schema):
    return [(e.amount, e.resource, e.label) for e in schema.registro]


def test_an_unsigned_registro_line_is_not_the_pool():
    schema = parse_schema("Stato: PV 44/52 | PE 37/40\nRegistro:\n8 PV [Artigli]")
    assert schema.resources == {"PV": Resource(44, 52), "PE": Resource(37, 40)}
    assert schema.registro == () and "registro" in schema.missing  # a change was written, not read
    schema = parse_schema("[b]Stato:[/b] PV 44/52\nRegistro:\n8 PV [Artigli di Hollow]")
    assert schema.resources == {"PV": Resource(44, 52)} and "registro" in schema.missing


def test_a_partial_pool_reading_does_not_replace_a_complete_one():
    schema = parse_schema("Stato: PV 44/52\nPV: 36")
    assert schema.resources == {"PV": Resource(44, 52)}
    schema = parse_schema("Stato: PV 44\nPV: 36/52")
    assert schema.resources == {"PV": Resource(36, 52)}


def test_a_complete_pool_line_ends_the_registro():
    schema = parse_schema("Registro: -8 PV [Artigli]\nPV 36/52")
    assert schema.resources == {"PV": Resource(36, 52)}
    assert _entries(schema) == [(-8, "PV", "Artigli")] and "registro" not in schema.missing


@pytest.mark.parametrize("text", [
    "PV 44/52\nTecniche: Sonido (5 PE), Cero (10 PE)",
    "PV 44/52\nSonido: costo 5 PE",
])
def test_technique_costs_are_not_the_pool(text):
    schema = parse_schema(text)
    assert schema.resources == {"PV": Resource(44, 52)} and "PE" in schema.missing


def test_a_registro_amount_is_not_the_pool():
    schema = parse_schema("Condizioni fisiche: PV 44/52, PE 37/40\nRegistro:\n-8 PV [Artigli]\n3 PE [Sonido]")
    assert schema.resources == {"PV": Resource(44, 52), "PE": Resource(37, 40)}
    assert _entries(schema) == [(-8, "PV", "Artigli")]
    assert "registro" in schema.missing  # "3 PE [Sonido]": its sign is not guessed


@pytest.mark.parametrize("text, entries", [
    ("Registro:\nArtigli di Hollow: -8 PV\nSonido: -3 PE", [(-8, "PV", "Artigli di Hollow"), (-3, "PE", "Sonido")]),
    ("Registro:\n1) -8 PV [Artigli]\n2) -3 PE [Sonido]", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("Registro:\n1. -8 PV [Artigli]\n2. PE -3 (Sonido)", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("Registro:\n1- -8 PV [Artigli]\n2- Sonido: -3 PE", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("Registro:\n- Artigli: -8 PV\n- Sonido: -3 PE", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("Registro:\n[Artigli] -8 PV\n[Sonido] -3 PE", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("Registro: Artigli: -8 PV, Sonido: -3 PE", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
])
def test_label_first_and_numbered_registro(text, entries):
    schema = parse_schema(text)
    assert _entries(schema) == entries and "registro" not in schema.missing


@pytest.mark.parametrize("text, entries", [
    ("Registro:\n-8 PV -3 PE [Artigli]", [(-8, "PV", "Artigli"), (-3, "PE", "Artigli")]),
    ("Registro:\n-8 PV [Artigli] -3 PE [Sonido]", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("Registro:\n-8 PV e -3 PE [Artigli]", [(-8, "PV", "Artigli"), (-3, "PE", "Artigli")]),
    ("Registro:\n-8 PV / -3 PE [Artigli]", [(-8, "PV", "Artigli"), (-3, "PE", "Artigli")]),
    ("Registro:\nArtigli: -8 PV e -3 PE", [(-8, "PV", "Artigli"), (-3, "PE", "Artigli")]),
    ("Registro:\n-8 PV [Artigli] -3 PE", [(-8, "PV", "Artigli"), (-3, "PE", "")]),
    # a change inside the label's brackets is the label's
    ("Registro:\n-8 PV [Artigli -3 PE]", [(-8, "PV", "Artigli -3 PE")]),
    ("Registro:\n+43 PV «Scudo -3 PV»", [(43, "PV", "Scudo -3 PV")]),
    ("Registro:\n-8 PV «Artigli» -3 PE «Sonido»", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
])
def test_several_changes_on_one_registro_line(text, entries):
    schema = parse_schema(text)
    assert _entries(schema) == entries and "registro" not in schema.missing


@pytest.mark.parametrize("text, entries", [
    # a comma inside a label's brackets does not split it
    ("PV 44/52\nRegistro: -8 PV (Artigli, -3 PE Sonido)", [(-8, "PV", "Artigli, -3 PE Sonido")]),
    ("Registro:\n-8 PV [Artigli, Sonido], -3 PE [Sonido]", [(-8, "PV", "Artigli, Sonido"), (-3, "PE", "Sonido")]),
    ("Registro: -8 PV [Artigli], -3 PE [Sonido]", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("Registro: -8 PV (Artigli), PE -3 (Sonido)", [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    # a bracket that never closes hides no separator
    ("Registro: -8 PV (Artigli, -3 PE (Sonido)", [(-8, "PV", "(Artigli"), (-3, "PE", "Sonido")]),
    # nor a ";" inside brackets, which stays in the label
    ("Registro: -8 PV; -3 PE (Sonido; Cero)", [(-8, "PV", ""), (-3, "PE", "Sonido; Cero")]),
    ("Registro:\nPE -3 [Sonido; -2 PE Cero]", [(-3, "PE", "Sonido; -2 PE Cero")]),
])
def test_a_comma_inside_brackets_does_not_split_entries(text, entries):
    schema = parse_schema(text)
    assert _entries(schema) == entries and "registro" not in schema.missing


@pytest.mark.parametrize("text, pools, entries", [
    ("PV 44/52 - PE 30/40 - Registro: -8 PV [Artigli]", {"PV": (44, 52), "PE": (30, 40)}, [(-8, "PV", "Artigli")]),
    ("PV: 44/52 | PE: 30/40 | Registro: -8 PV [Artigli]; -3 PE [Sonido]", {"PV": (44, 52), "PE": (30, 40)},
     [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("[b]PV[/b] 44/52 · [b]Registro:[/b] -8 PV [Artigli]", {"PV": (44, 52)}, [(-8, "PV", "Artigli")]),
    ("PV 44/52 | Registro -8 PV [Artigli]", {"PV": (44, 52)}, [(-8, "PV", "Artigli")]),
    # the Registro goes on on the next lines, up to a blank line
    ("PV 44/52 - PE 30/40 - Registro:\n-8 PV [Artigli]\n-3 PE [Sonido]\n\nPE 5/6",
     {"PV": (44, 52), "PE": (30, 40)}, [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]),
    ("PV 44/52 | PE 30/40 | Registro: nessuna modifica", {"PV": (44, 52), "PE": (30, 40)}, []),
    ("PV 44/52 · Registro: -8 PV [Artigli] · -3 PE [Sonido] • +2 PV [Cura]", {"PV": (44, 52)},
     [(-8, "PV", "Artigli"), (-3, "PE", "Sonido"), (2, "PV", "Cura")]),
])
def test_a_registro_in_the_middle_of_a_line(text, pools, entries):
    schema = parse_schema(text)
    assert {k: (r.current, r.max) for k, r in schema.resources.items()} == pools
    assert _entries(schema) == entries and "registro" not in schema.missing


def test_fullwidth_digits_are_read_in_schema_numbers():
    # NFKC digits ("４", "𝟒") read as ASCII ones in pools, stats and the Registro, on every line alike
    schema = parse_schema("PV ４４/５２\nPE: ３０ su ４０\nForza ５ (+１) | Mente 𝟒\nRegistro:\n－８ PV [Artigli]\nPE -３ (Sonido)")
    assert schema.resources == {"PV": Resource(44, 52), "PE": Resource(30, 40)}
    assert schema.stats == {"Forza": Stat(5, 1), "Mente": Stat(4, 0)}
    assert _entries(schema) == [(-8, "PV", "Artigli"), (-3, "PE", "Sonido")]
    assert schema.missing == ("sheet_url",)
    e = parse_registro_line("PE －５ (Freccia Sacra)")
    assert (e.amount, e.resource, e.label) == (-5, "PE", "Freccia Sacra")
    # other non-ASCII digits are no digits, with or without an ASCII one elsewhere in the post
    assert parse_schema("PV ٤٤/٥٢") is None
    schema = parse_schema("PV ٤٤/٥٢\nPE 30/40\nForza ٥ (+1)\nRegistro: -٨ PV [Artigli]")
    assert schema.resources == {"PE": Resource(30, 40)} and schema.stats == {} and schema.registro == ()


@pytest.mark.parametrize("text, pools", [
    # an Italian thousands dot: "1.000" is a thousand, never 1
    ("Punti Salute: 1.000/1.200", {"PV": (1000, 1200)}),
    ("PV 1.000 su 1.200 | PE: 830/1.000", {"PV": (1000, 1200), "PE": (830, 1000)}),
    ("1.000/1.200 PV", {"PV": (1000, 1200)}),
    # a decimal is no pool value: not read rather than read as 44
    ("PV: 44,5/52\nPE: 30/40", {"PE": (30, 40)}),
    ("PV 44.5\nPE: 30/40", {"PE": (30, 40)}),
])
def test_pool_numbers_with_dots_and_commas(text, pools):
    schema = parse_schema(text)
    assert {k: (r.current, r.max) for k, r in schema.resources.items()} == pools


def test_a_label_first_holding_a_pool_amount():
    # "Cura 5 PV: +5 PV" is +5 PV labelled "Cura 5 PV", never dropped nor read as "PV +5" of the label
    schema = parse_schema("Registro:\nCura 5 PV: +5 PV\nSonido (5 PE): -5 PE\n-8 PV [Artigli]")
    assert _entries(schema) == [(5, "PV", "Cura 5 PV"), (-5, "PE", "Sonido (5 PE)"), (-8, "PV", "Artigli")]
    assert "registro" not in schema.missing
    # an unsigned change after a label with digits is not read, and the Registro says so
    schema = parse_schema("Registro:\n-8 PV [Artigli]\nTurno 3: 8 PV")
    assert _entries(schema) == [(-8, "PV", "Artigli")] and "registro" in schema.missing


@pytest.mark.parametrize("line, stats", [
    # a bracket after the base that is not one bonus: the stat is not read, no bonus 0 is guessed
    ("Forza 5 (+1+2) | Mente 4 (+1)", {"Mente": (4, 1)}),
    ("Forza 5 (+1, +2) | Mente 4 (+1)", {"Mente": (4, 1)}),
    ("Forza 12 (+ 2 Arma) | Mente 4 (+1)", {"Mente": (4, 1)}),  # was base 1
    ("Forza 5 (+10%) | Mente 4 (+1)", {"Mente": (4, 1)}),
    # nor a die or a fraction as the base, nor a base cut short
    ("Forza 3d6 (+1) | Mente 4 (+1)", {"Mente": (4, 1)}),
    ("Forza 5/10 (+1) | Mente 4 (+1)", {"Mente": (4, 1)}),
    ("Forza 123456 | Mente 4 (+1)", {"Mente": (4, 1)}),
    # the documented forms still read
    ("Forza 5 (+1) = 6 | Mente 4 [-1] | Destrezza 12 + 2", {"Forza": (5, 1), "Mente": (4, -1), "Destrezza": (12, 2)}),
])
def test_a_stat_bracket_that_is_no_bonus(line, stats):
    schema = parse_schema(line)
    assert {k: (v.base, v.bonus) for k, v in schema.stats.items()} == stats


@pytest.mark.parametrize("line", ["-2x4 PV [Artigli]", "-8+3 PV", "-8 x 2 PV [Artigli raddoppiati]", "--8 PV",
                                  "-12345678 PV", "PV: -12345678", "PV -1234567 [x]"])
def test_an_unreadable_signed_change_marks_the_registro(line):
    # never dropped silently, never cut short ("PV: -12345678" was -123456 PV labelled "78")
    schema = parse_schema("Registro:\n-1 PE [Sonido]\n" + line + "\n+2 PV [Cura]")
    assert _entries(schema) == [(-1, "PE", "Sonido"), (2, "PV", "Cura")] and "registro" in schema.missing


def test_registro_in_prose_is_not_a_registro():
    assert parse_schema("Un solo Attacco per turno, Registro aggiornato a inizio turno.") is None
    schema = parse_schema("PV 44/52 | Registro in fondo al post")
    assert schema.registro is None and schema.resources == {"PV": Resource(44, 52)}
    schema = parse_schema("Registro:\n-8 PV [Danni - Registro: 3]")
    assert _entries(schema) == [(-8, "PV", "Danni - Registro: 3")]


def test_parse_registro_line_label_stops_at_a_semicolon_outside_brackets():
    assert parse_registro_line("-8 PV [Artigli]; nota").label == "Artigli"
    assert parse_registro_line("-3 PE (Sonido; Cero); nota").label == "Sonido; Cero"


def test_parse_registro_line_gives_the_first_of_several():
    e = parse_registro_line("-8 PV -3 PE [Artigli]")
    assert (e.amount, e.resource, e.label, e.raw) == (-8, "PV", "Artigli", "-8 PV -3 PE [Artigli]")
    e = parse_registro_line("Artigli di Hollow: -8 PV")
    assert (e.amount, e.resource, e.label) == (-8, "PV", "Artigli di Hollow")
    assert parse_registro_line("Registro: -8 PV") is None  # the section's head is no label
    assert parse_registro_line("Hollow perde -8 PV") is None


def test_unread_registro_changes_keep_what_was_read():
    schema = parse_schema("Registro:\n-8 PV [Artigli]; 3 PE [Sonido]\n-1,5 PV [Veleno]\n+2 PE [Cura]")
    assert _entries(schema) == [(-8, "PV", "Artigli"), (2, "PE", "Cura")]
    assert schema.missing == ("sheet_url", "PV", "PE", "stats", "registro")
    # lines that are no change end the Registro without marking it incomplete
    schema = parse_schema("Registro:\n-8 PV [Artigli]\nAttacco [Catena Stellare] [Cosmo 150] (Elettra vs Orione)")
    assert _entries(schema) == [(-8, "PV", "Artigli")] and "registro" not in schema.missing


@pytest.mark.parametrize("line, stats", [
    ("Forza 5 + 1", {"Forza": Stat(5, 1)}),
    ("Forza: 5 +1", {"Forza": Stat(5, 1)}),
    ("Forza 5 -1 | Mente 4 + 2", {"Forza": Stat(5, -1), "Mente": Stat(4, 2)}),
    ("Forza 5 \u2212 1", {"Forza": Stat(5, -1)}),
    # a modifier, a fraction or a die after the base is not its bonus
    ("Forza 5 +2 [Arma]", {"Forza": Stat(5, 0)}),
    ("Forza 5 +1/2", {"Forza": Stat(5, 0)}),
    ("Forza 5 +1d6", {"Forza": Stat(5, 0)}),
    ("Forza 5 - Destrezza 6", {"Forza": Stat(5, 0), "Destrezza": Stat(6, 0)}),
])
def test_signed_bonus_without_brackets(line, stats):
    assert parse_schema(line).stats == stats


@pytest.mark.parametrize("line, stats", [
    ("Agilita' 4 (+1)", {"Agilità": Stat(4, 1)}),
    ("Velocita' 4 (+1)", {"Velocità": Stat(4, 1)}),
    ("Velocita\u2019 4 (+1)", {"Velocità": Stat(4, 1)}),
    ("VELOCITA' 3", {"Velocità": Stat(3, 0)}),
    ("Forza 5 (+1) Agilita' 4 (+1)", {"Forza": Stat(5, 1), "Agilità": Stat(4, 1)}),
    ("Reattivita 5", {"Reattività": Stat(5, 0)}),
    # names outside the table too, in the full form
    ("Abilita' 3 (+1)", {"Abilità": Stat(3, 1)}),
])
def test_apostrophe_for_accent_in_stat_names(line, stats):
    assert parse_schema(line).stats == stats


@pytest.mark.parametrize("text", [
    "Scheda PG: https://x.forumfree.it/?t=101\nPV 44/52",
    "Scheda personaggio: https://x.forumfree.it/?t=101",
    "Scheda del personaggio: https://x.forumfree.it/?t=101",
    "Link scheda: https://x.forumfree.it/?t=101",
    "SCHEDA PG: https://x.forumfree.it/?t=101.",
    "Scheda: [url]https://x.forumfree.it/?t=101[/url]\nPV 44/52",
    "[url=https://x.forumfree.it/?t=101]Scheda[/url]\nPV 44/52",
    "[url=\"https://x.forumfree.it/?t=101\"]La mia scheda[/url]",
])
def test_sheet_link_written_in_the_text(text):
    assert parse_schema(text).sheet_url == "https://x.forumfree.it/?t=101"


def test_a_sheet_word_far_from_a_link_is_not_the_sheet():
    assert parse_schema("La scheda non è aggiornata da mesi, https://x.it/?t=5\nPV 44/52").sheet_url is None


@pytest.mark.parametrize("line, label", [
    ("-3 PE [Sonido] (costo 3)", "Sonido (costo 3)"),
    ("-10 PV [Artigli] (dimezzati: -5)", "Artigli (dimezzati: -5)"),
    ("-8 PV [Artigli]", "Artigli"),
    ("-8 PV [Artigli [x2]]", "Artigli [x2]"),
])
def test_label_with_a_trailing_note(line, label):
    assert parse_registro_line(line).label == label


@pytest.mark.parametrize("text, stat", [
    ("Forza: 5 (bonus +1)", Stat(5, 1)),
    ("Forza 5 (Bonus: +2)", Stat(5, 2)),
    ("Forza 5 (bonus 1)", Stat(5, 1)),
    ("Forza 5 (+1 bonus)", Stat(5, 1)),
    ("Forza 5 [bonus -1]", Stat(5, -1)),
])
def test_a_bonus_said_in_words_is_the_bonus(text, stat):
    assert parse_schema(text + "\nDestrezza 4 (+2)").stats == {"Forza": stat, "Destrezza": Stat(4, 2)}


def test_a_worded_bracket_that_is_no_single_bonus_leaves_the_stat_unread():
    assert "Forza" not in (parse_schema("Forza 5 (bonus +1 Arma)\nDestrezza 4 (+2)").stats)


# The pool forms a review found unread (listed in `missing`), each with PV/PE/Punti Vita/Punti Energia.
POOL_FORMS = ["{} (44/52)", "{}: (44/52)", "{} [44/52]", "«{}» 44/52", '"{}" 44/52', "“{}” 44/52", "{} → 44/52",
              "{} -> 44/52", "{} = 44/52", "{} 44 / 52", "{}  44  /  52", "{} 44\u2009/\u200952", "{}\u00a044\u202f/52",
              "{} 44\u200b/52", "{} 44\ufeff/\ufeff52", "{} 44\u204452", "{} 44\uff0f52", "{} 44/52 (-8)",
              "{} 44/52 [-8]", "{}: 44 (max 52)", "{}: 44 (max. 52)", "{} 44 [Max: 52]", "{} 44 (su 52)",
              "{} 44 di 52", "{} ( 44 su 52 )", "[b]{}[/b] (44/52)", "&laquo;{}&raquo; 44/52"]


@pytest.mark.parametrize("form", POOL_FORMS)
@pytest.mark.parametrize("name, pool", [("PV", "PV"), ("PE", "PE"), ("Punti Vita", "PV"), ("Punti Energia", "PE")])
def test_more_pool_forms_are_read(form, name, pool):
    schema = parse_schema(form.format(name) + "\nForza 5 (+1)")
    assert schema.resources == {pool: Resource(44, 52)}
    assert pool not in schema.missing and schema.registro is None


@pytest.mark.parametrize("text", [
    "PV (44/52) | PE (30/40)", "PV: [44/52] - PE: [30/40]", "«PV» 44/52 «PE» 30/40", "PV → 44/52 · PE → 30/40",
    "PV: 44 (max 52) | PE: 30 (max 40)", "PV 44/52 (-8) | PE 30/40 (-5)", "Punti Vita = 44/52, Punti Energia = 30/40",
])
def test_two_pools_in_the_new_forms(text):
    assert parse_schema(text).resources == {"PV": Resource(44, 52), "PE": Resource(30, 40)}


@pytest.mark.parametrize("text, pools", [
    ("PV (5)", {}),  # a bracketed value without its max is no pool (a cost, a note)
    ("PV [-8]", {}),
    ("PV: 44 (max 52\nPE 3/4", {"PV": Resource(44, None), "PE": Resource(3, 4)}),  # an unclosed bracket: no max
    ("PV (44/52\nPE 3/4", {"PE": Resource(3, 4)}),
    ("PV 44 (-8)", {"PV": Resource(44, None)}),
])
def test_bracketed_pool_values_need_their_max(text, pools):
    schema = parse_schema(text)
    assert (schema.resources if schema else {}) == pools


def test_new_pool_forms_read_no_registro_change_or_cost_as_a_pool():
    schema = parse_schema("«PV» (44/52)\nTecniche: Sonido (5 PE), Cero (10 PE)\nRegistro:\n-8 PV [Artigli]\n"
                          "PE -5 (Freccia Sacra)\n-3 PE → [Sonido]")
    assert schema.resources == {"PV": Resource(44, 52)} and "PE" in schema.missing
    assert _entries(schema) == [(-8, "PV", "Artigli"), (-5, "PE", "Freccia Sacra"), (-3, "PE", "→ [Sonido]")]
    schema = parse_schema("PV [44/52] | PE: 30 (max 40)\nRegistro: -8 PV [Artigli] (5 PE)")
    assert schema.resources == {"PV": Resource(44, 52), "PE": Resource(30, 40)}
    assert _entries(schema) == [(-8, "PV", "Artigli (5 PE)")]


@pytest.mark.parametrize("form", POOL_FORMS)
def test_a_pool_line_in_the_new_forms_ends_the_registro(form):
    schema = parse_schema("Registro:\n-8 PV [Artigli]\n" + form.format("PE"))
    assert schema.resources == {"PE": Resource(44, 52)}
    assert _entries(schema) == [(-8, "PV", "Artigli")] and "registro" not in schema.missing


# --- a table row read as one line (Forumotion's and phpBB's BBCode tables: cells joined by " | ") ---------------

@pytest.mark.parametrize("row,stats", [
    ("Destrezza | 5 | +1", {"Destrezza": (5, 1)}),  # was bonus 0
    ("Destrezza | 5 | (+1)", {"Destrezza": (5, 1)}),
    ("Forza | 4 | +0 | Destrezza | 5 | -1", {"Forza": (4, 0), "Destrezza": (5, -1)}),
    ("Destrezza | 5", {"Destrezza": (5, 0)}),
    ("Forza 5 (+1) | Mente 4", {"Forza": (5, 1), "Mente": (4, 0)}),
])
def test_stat_row_cells(row, stats):
    s = parse_schema("PV: 40/40\nPE: 30/30\n" + row)
    assert {k: (v.base, v.bonus) for k, v in s.stats.items()} == stats
