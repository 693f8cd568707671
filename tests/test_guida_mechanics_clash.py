"""Confronto di Potenza: the D/C/B/A/S table of the rule text at every boundary."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from engine.rulesets.guida.clash import ClashSide, confronto_di_potenza, potenziale_residuo
from engine.rulesets.guida.tables import UnknownCategory

# Straight from "Confronto di Potenza": category of [Y] → (halved from, intact from).
TEXT = {"D": (2, 4), "C": (3, 5), "B": (3, 6), "A": (4, 6), "S": (4, 7)}


def _cases():
    for cat, (halved, intact) in TEXT.items():
        yield cat, halved - 1, "entrambe_annullate"
        yield cat, halved, "dimezzato"
        yield cat, intact - 1, "dimezzato" if intact - 1 >= halved else "entrambe_annullate"
        yield cat, intact, "intatto"
        yield cat, intact + 5, "intatto"
        yield cat, 0, "entrambe_annullate"


@pytest.mark.parametrize("cat,diff,outcome", list(_cases()))
def test_table_boundaries(cat, diff, outcome):
    y = ClashSide("Parata", 10, cat)
    x = ClashSide("Attacco", 10 + diff, "D")  # the category of [X] never matters
    r = confronto_di_potenza(x, y)
    assert r.outcome == outcome
    assert r.difference == diff
    assert r.category_y == cat
    if outcome == "entrambe_annullate":
        assert r.winner is None and r.loser is None and r.factor == 0
    else:
        assert r.winner == "Attacco" and r.loser == "Parata"
        assert r.factor == (Fraction(1, 2) if outcome == "dimezzato" else 1)
    assert r.rule.startswith("Confronto di Potenza")
    assert str(diff) in r.steps[0]


def test_weaker_side_category_selects_row():
    # weaker is S (needs 4 / 7); the same difference under D would be intact
    r = confronto_di_potenza(ClashSide("Contrattacco", 12, "S"), ClashSide("Attacco", 17, "D"))
    assert (r.outcome, r.winner, r.category_y, r.difference) == ("dimezzato", "Attacco", "S", 5)
    r = confronto_di_potenza(ClashSide("Contrattacco", 17, "S"), ClashSide("Attacco", 12, "D"))
    assert (r.outcome, r.winner, r.category_y) == ("intatto", "Contrattacco", "D")


def test_equal_power_annuls_both():
    r = confronto_di_potenza(ClashSide("A", 9, "S"), ClashSide("B", 9, "D"))
    assert r.both_annulled and r.difference == 0


def test_residual_potenziale_rounds_down():
    halved = confronto_di_potenza(ClashSide("A", 13, "B"), ClashSide("B", 10, "B"))
    assert halved.outcome == "dimezzato"
    assert potenziale_residuo(9, halved) == 4
    intact = confronto_di_potenza(ClashSide("A", 16, "B"), ClashSide("B", 10, "B"))
    assert potenziale_residuo(9, intact) == 9
    none = confronto_di_potenza(ClashSide("A", 11, "B"), ClashSide("B", 10, "B"))
    assert potenziale_residuo(9, none) == 0


def test_bad_category_is_named_error():
    with pytest.raises(UnknownCategory):
        ClashSide("A", 3, "E")
    assert ClashSide("A", 3, " b ").category == "B"


sides = st.builds(ClashSide, st.sampled_from(["A", "B"]), st.integers(-5, 60), st.sampled_from(list("DCBAS")))


@settings(deadline=None)
@given(sides, sides)
def test_order_does_not_matter(a, b):
    r1, r2 = confronto_di_potenza(a, b), confronto_di_potenza(b, a)
    assert (r1.outcome, r1.difference, r1.factor) == (r2.outcome, r2.difference, r2.factor)
    assert r1.difference >= 0


@settings(deadline=None)
@given(sides, sides)
def test_monotone_in_difference(a, b):
    order = ["entrambe_annullate", "dimezzato", "intatto"]
    r = confronto_di_potenza(a, b)
    stronger = ClashSide(a.label, a.potenza + 1, a.category) if a.potenza > b.potenza else None
    if stronger is not None:
        assert order.index(confronto_di_potenza(stronger, b).outcome) >= order.index(r.outcome)
