"""Tests of scraper.damage: the damage and cure calculations written in posts."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from engine.history import DamageCalc, DamageTerm
from scraper.damage import parse_damage_calcs

HEAD = "Calcolo Danni [Artigli Affilati] (Hollow vs Quincy): "


def _terms(calc: DamageCalc) -> list[tuple[str, str, float]]:
    return [(t.op, t.name, t.value) for t in calc.terms]


def test_canonical_form():
    line = HEAD + "Potenza 14 - Resistenza 6 = 8 Danni"
    (calc,) = parse_damage_calcs("Fase Iniziale.\n" + line + "\nHollow ghigna.")
    assert calc == DamageCalc(raw=line, technique="Artigli Affilati", actor="Hollow", target="Quincy",
                              kind="normale", terms=(DamageTerm("+", "Potenza", 14.0),
                                                     DamageTerm("-", "Resistenza", 6.0)),
                              result=8, resource="PV")


@pytest.mark.parametrize("line, kind, terms, result", [
    ("Calcolo dei Danni [Freccia Sacra] (Quincy vs Hollow): Danno Puro 10 = 10 Danni",
     "puro", [("+", "Danno Puro", 10.0)], 10),
    ("Calcolo dei Danni [Onda Sacra] (Quincy vs Hollow): Danno Semi-Puro: (Danno Normale 8 / 2) + (Danno Puro 10 / 2)"
     " = 9 Danni", "semi-puro",
     [("+", "Danno Normale", 8.0), ("/", "", 2.0), ("+", "Danno Puro", 10.0), ("/", "", 2.0)], 9),
    (HEAD + "Potenza 20 - Resistenza 6 - Armatura 3 = 11 Danni", "normale",
     [("+", "Potenza", 20.0), ("-", "Resistenza", 6.0), ("-", "Armatura", 3.0)], 11),
    (HEAD + "(Potenza 14 - Resistenza 6) / 2 = 4 Danni", "normale",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 4),
    (HEAD + "(Potenza 14 - Resistenza 6) x 2 = 16 Danni", "normale",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("*", "", 2.0)], 16),
    (HEAD + "(Potenza 14 - Resistenza 6) ×2 = 16 Danni", "normale",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("*", "", 2.0)], 16),
    (HEAD + "(Potenza 14 - Resistenza 6) : 2 = 4 Danni", "normale",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 4),
    (HEAD + "(Potenza 14 − Resistenza 6) dimezzati = 4 Danni", "normale",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 4),
    (HEAD + "Potenza 14 - Resistenza 6 = 8, raddoppiati = 16 Danni", "normale",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("*", "", 2.0)], 16),
    (HEAD + "Potenza 14 - Resistenza 6 = 8 / 2 = 4 Danni", "normale",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 4),
    ("Calcolo Danni Aggiuntivi [Sonìdo] (Hollow vs Quincy): (Potenza 8 - Resistenza 6) / 2 = 1 Danni",
     "aggiuntivo", [("+", "Potenza", 8.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 1),
    ("Danno Ambientale (Hollow vs Quincy): (Potenziale 6 + Bonus Statistica 2 - Resistenza 6) / 2 = 1 Danni",
     "ambientale", [("+", "Potenziale", 6.0), ("+", "Bonus Statistica", 2.0), ("-", "Resistenza", 6.0),
                    ("/", "", 2.0)], 1),
    ("[b]Calcolo Danni[/b] [Cero] (Hollow vs Quincy): Potenza 18 - Resistenza 6 = [color=red]12[/color] Danni",
     "normale", [("+", "Potenza", 18.0), ("-", "Resistenza", 6.0)], 12),
])
def test_variants(line, kind, terms, result):
    (calc,) = parse_damage_calcs(line)
    assert calc.kind == kind
    assert _terms(calc) == terms
    assert calc.result == result
    assert calc.resource == "PV"


def test_cure():
    (calc,) = parse_damage_calcs("Cura [Tocco Curativo] (Quincy vs Quincy): Potenza 8 = 8 PV")
    assert (calc.kind, calc.technique, calc.actor, calc.target) == ("cura", "Tocco Curativo", "Quincy", "Quincy")
    assert _terms(calc) == [("+", "Potenza", 8.0)]
    assert (calc.result, calc.resource) == (8, "PV")
    (calc,) = parse_damage_calcs("Calcolo delle Cure [Tocco Curativo] (Quincy): Potenziale 8 / 2 = 4 PV")
    assert (calc.kind, calc.actor, calc.target, calc.result) == ("cura", "Quincy", "Quincy", 4)


def test_other_pools_and_several_calcs():
    text = ("Calcolo Danni [Fulmine] (Mago vs Drago): Danno 3 + 4 = 7 PD\n"
            "testo\n"
            "Calcolo Danni [Spada] (Vesk contro Orco): Danno 9 x 2 = 18 Punti Stamina")
    calcs = parse_damage_calcs(text)
    assert [(c.technique, c.actor, c.target, c.result, c.resource) for c in calcs] == [
        ("Fulmine", "Mago", "Drago", 7, "PD"), ("Spada", "Vesk", "Orco", 18, "PS")]


@pytest.mark.parametrize("text", [
    "Quincy si cura la ferita = niente di grave",
    "Il calcolo dei danni lo farò nel prossimo turno.",
    "La cura (Quincy) funziona",
    "Potenza 14 - Resistenza 6 = 8 Danni",
    "",
])
def test_not_calculations(text):
    assert parse_damage_calcs(text) == []


def test_missing_result_is_none():
    (calc,) = parse_damage_calcs(HEAD + "Potenza 14 - Resistenza 6 = ??? Danni")
    assert calc.result is None and _terms(calc) == [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0)]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=400),
                 st.text(alphabet="Calcolo Danni Cura[]()vs:=+-x×/0123456789 \n", max_size=400),
                 st.builds(lambda s: HEAD + s, st.text(max_size=200))))
def test_never_raises(text):
    for calc in parse_damage_calcs(text):
        assert calc.kind in ("normale", "puro", "semi-puro", "aggiuntivo", "ambientale", "cura")
        assert all(t.op in "+-*/" for t in calc.terms)


@pytest.mark.parametrize("unit", ["Calcolo Danni [", "(" * 5 + "Cura ", "Potenza 1 - ", "= 1 Danni ", "x 2 "])
def test_huge_hostile_input_completes(unit):
    text = unit * (100_000 // len(unit))
    parse_damage_calcs(text)
    parse_damage_calcs("\n".join([(HEAD + unit * 100)[:1900]] * 50))
