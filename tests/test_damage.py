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
                              result=8, resource="PV", value=8)


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


H = "Calcolo Danni [Cero] (Hollow vs Quincy): "


@pytest.mark.parametrize("line, terms, result, value", [
    # a colon after a name labels the number, it divides nothing
    (H + "Potenza: 14 - Resistenza: 6 = 8 Danni", [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0)], 8, 8),
    (H + "Potenza (14) - Resistenza (6) = 8 Danni", [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0)], 8, 8),
    (H + "Potenza 14 meno Resistenza 6 = 8", [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0)], 8, 8),
    (H + "Potenza 1.000 - Resistenza 6 = 994", [("+", "Potenza", 1000.0), ("-", "Resistenza", 6.0)], 994, 994),
    (H + "Potenza 14 x 50% = 7", [("+", "Potenza", 14.0), ("*", "", 0.5)], 7, 7),
    # the Armatura halved by the rule, written three ways: it alone is halved
    (H + "Potenza 14 - Resistenza 6 - (Armatura 3 / 2) = 6",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("-", "Armatura", 3.0), ("/", "", 2.0)], 6, 6.5),
    (H + "Potenza 14 - Resistenza 6 - Armatura 3/2 = 6",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("-", "Armatura", 3.0)], 6, 6.5),
    (H + "Potenza 14 - Resistenza 6 - metà Armatura 6 = 5",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("-", "Armatura", 6.0)], 5, 5),
    (H + "Potenza 14 - Resistenza 6 - Armatura 3 (dimezzata: 1,5) = 6,5 Danni",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("-", "Armatura", 3.0)], 6.5, 6.5),
    (H + "Potenza 14 - Resistenza 6 - 1,5 [Armatura] = 6,5",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("-", "Armatura", 1.5)], 6.5, 6.5),
    # a leading multiplier goes last, where the rulings apply multipliers
    (H + "2 x (Potenza 14 - Resistenza 6) = 16",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("*", "", 2.0)], 16, 16),
    # a breakdown of the Potenza: its numbers are terms, counted once
    (H + "Potenza 14 (Potenziale 10 + Bonus Statistica 4) - Resistenza 6 = 8",
     [("+", "Potenza", 14.0), ("+", "Potenziale", 10.0), ("+", "Bonus Statistica", 4.0), ("-", "Resistenza", 6.0)],
     8, 8),
    # the rules' own formula: the bracket first
    ("Calcolo dei Danni [Freccia] (Quincy vs Hollow): Danno Puro: Potenziale 10 + (Bonus Statistica 20 / 5) = 14",
     [("+", "Potenziale", 10.0), ("+", "Bonus Statistica", 20.0), ("/", "", 5.0)], 14, 14),
    ("Calcolo dei Danni [Onda Sacra] (Quincy vs Hollow): Danno Semi-Puro: (Danno Normale 8 / 2) + (Danno Puro 10 / 2)"
     " = 9 Danni", [("+", "Danno Normale", 8.0), ("/", "", 2.0), ("+", "Danno Puro", 10.0), ("/", "", 2.0)], 9, 9),
    # after the last "=": an operation means no final number is written; an arrow states the next value
    (H + "Potenza 14 - Resistenza 6 = 8 Danni x2",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("*", "", 2.0)], None, 16),
    (H + "Potenza 4 - Resistenza 6 = -2 → 0 Danni", [("+", "Potenza", 4.0), ("-", "Resistenza", 6.0)], 0, -2),
    (H + "Potenza 14 - Resistenza 6 = 8 Danni → 4 (dimezzati)",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 4, 4),
    (H + "Potenza 14 - Resistenza 6 = 8 -> 4 (dimezzati)",
     [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0), ("/", "", 2.0)], 4, 4),
])
def test_written_arithmetic(line, terms, result, value):
    (calc,) = parse_damage_calcs(line)
    assert _terms(calc) == terms
    assert calc.result == result
    assert calc.value == value


@pytest.mark.parametrize("line", [
    "Calcolo Danni [Cero] [Sonido] (Hollow vs Quincy): Potenza 14 - Resistenza 6 = 8",
    "Calcolo Danni [Cero] Hollow vs Quincy: Potenza 14 - Resistenza 6 = 8",
    "Calcolo Danni (Cero) (Hollow vs Quincy): Potenza 14 - Resistenza 6 = 8",
    "Calcolo Danni [Cero] (Hollow vs Quincy):\nPotenza 14 - Resistenza 6 = 8",
])
def test_heading_variants(line):
    (calc,) = parse_damage_calcs(line)
    assert (calc.technique, calc.actor, calc.target) == ("Cero", "Hollow", "Quincy")
    assert _terms(calc) == [("+", "Potenza", 14.0), ("-", "Resistenza", 6.0)]
    assert (calc.result, calc.value) == (8, 8)


def test_not_pure_said_so():
    (calc,) = parse_damage_calcs(H + "Potenza 14 - Resistenza 6 = 8 Danni (non puri)")
    assert calc.kind == "normale"
    (calc,) = parse_damage_calcs(H + "Potenza 14 = 14 Danni Puri")
    assert calc.kind == "puro"


def test_engine_checks_the_written_arithmetic_by_value():
    """The engine's own reading of a written calculation (used when the registry lacks the numbers) is the
    scraper's `value`: a breakdown or a halved Armatura is no miscalculation; a history without `value`
    (written before it) is still computed from its terms."""
    from engine.rulesets.guida.calcolo_danni import _evaluate

    (calc,) = parse_damage_calcs(H + "Potenza 14 (Potenziale 10 + Bonus Statistica 4) - Resistenza 6 = 8")
    assert _evaluate(calc) == 8
    (calc,) = parse_damage_calcs(H + "Potenza 14 - Resistenza 6 - (Armatura 3 / 2) = 6")
    assert _evaluate(calc) == 6  # 6,5 rounded down once
    old = DamageCalc(raw="", technique=None, actor=None, target=None, kind="normale",
                     terms=(DamageTerm("+", "Potenza", 14.0), DamageTerm("-", "Resistenza", 6.0),
                            DamageTerm("/", "", 2.0)), result=4)
    assert old.value is None and _evaluate(old) == 4


@pytest.mark.parametrize("unit", ["(1", "x 2 ", "metà ", "1.000 ", "3/2 ", "Potenza (1) ", "1 (a 1) ", "(" * 9 + "1 "])
def test_hostile_calculations_complete(unit):
    # long lines of brackets, notes and numbers: read, bounded (200 tokens a side), never an error
    calcs = parse_damage_calcs("\n".join([(H + unit * 400)[:1900] + " = 1"] * 50))
    assert len(calcs) == 50 and all(all(t.op in "+-*/" for t in c.terms) for c in calcs)
