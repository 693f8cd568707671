"""Calcolo dei Danni and Calcolo delle Cure of `guida`, with the rule text's numbers."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from engine.rulesets.guida import damage as D
from engine.rulesets.guida.tables import BadValue, NotAllowed, UnknownCategory


def test_potenza_and_resistenza():
    assert D.potenza(8, 6) == 14
    assert D.resistenza(6) == 6
    with pytest.raises(BadValue):
        D.potenza(8, "6")


def test_danno_normale():
    r = D.danno_normale(14, 6)
    assert (r.amount, r.resource, r.kind, r.delta, r.armatura) == (8, "PV", "normale", -8, None)
    assert r.steps == ("Potenza 14 − Resistenza 6 = 8",)


def test_danno_normale_never_negative_and_minimum_setting():
    r = D.danno_normale(4, 9)
    assert r.amount == 0 and r.assumption == "danno_minimo"
    assert D.danno_normale(4, 9, danno_minimo=1).amount == 1
    assert D.danno_normale(20, 9, danno_minimo=1).assumption is None


@pytest.mark.parametrize("potenza,amount,outcome", [
    (15, 0, "regge"),   # Potenza < Armatura (10 + 6 = 16): no damage, the armour keeps protecting
    (16, 0, "cede"),    # equal: no damage, no protection for the rest of the turn
    (17, 6, "cede"),    # greater: 17 − 6 − 10/2 = 6
    (30, 19, "cede"),
])
def test_armatura_three_cases(potenza, amount, outcome):
    r = D.danno_normale(potenza, 6, armatura=D.Armatura(10, "Corazza"))
    assert (r.amount, r.armatura) == (amount, outcome)
    assert r.rule == "Calcolo dei Danni › Resistenza e Armatura"
    assert any("Corazza: Potenziale 10 + Resistenza 6 = 16" in s for s in r.steps)


def test_armatura_odd_potenziale_half_rounds_down():
    assert D.danno_normale(20, 6, armatura=D.Armatura(7)).amount == 20 - 6 - 3


def test_armatura_no_longer_protecting_this_turn():
    r = D.danno_normale(15, 6, armatura=D.Armatura(10, attiva=False))
    assert r.amount == 9 and r.armatura is None
    assert "non offre protezione" in r.steps[0]


def test_armour_stops_even_a_critical():
    r = D.danno_normale(15, 6, armatura=D.Armatura(10), multipliers=[D.CRITICO_CORPO])
    assert r.amount == 0


def test_danno_puro_ignores_resistenza_and_armatura():
    r = D.danno_puro(10, 12, armatura=D.Armatura(20))
    assert r.amount == 12  # 10 + 12 // 5
    assert r.kind == "puro"
    assert any("ignora" in s for s in r.steps)
    assert D.danno_puro(10, 14).amount == 12  # 14 / 5 rounds down


def test_danno_puro_against_armour_that_blocks_it():
    r = D.danno_puro(10, 12, armatura=D.Armatura(7, blocca_puri=True))
    assert r.amount == 12 - 3 and r.assumption == "armatura_blocca_puri"
    r = D.danno_puro(10, 12, armatura=D.Armatura(7, blocca_puri=True), armatura_blocca_puri="ruling")
    assert r.amount == 12 and r.ruling


def test_danno_semipuro():
    # Normale 20 − 6 = 14 → 7; Puro 10 + 12/5 = 12 → 6; 13
    r = D.danno_semipuro(20, 6, 10, 12)
    assert r.amount == 13 and r.kind == "semi-puro"
    # halves computed separately and rounded down: 15 → 7, 11 → 5
    assert D.danno_semipuro(21, 6, 11, 0).amount == 12
    # a negative Danno Normale does not eat the pure half
    assert D.danno_semipuro(2, 6, 10, 0).amount == 5


def test_danno_aggiuntivo():
    r = D.danno_normale(20, 6, aggiuntivo=True)
    assert r.amount == 7 and r.kind == "normale aggiuntivo"
    assert D.danno_puro(9, 0, aggiuntivo=True).amount == 4
    assert D.AGGIUNTIVO_NO_STACK_TIPI == (1, 2)


def test_only_the_strongest_aggiuntivo_counts():
    a, b, c = (D.danno_normale(p, 6, aggiuntivo=True) for p in (14, 22, 18))
    best = D.piu_forte([a, b, c])
    assert best.amount == 8 and "scartati [4, 6]" in best.steps[-1]
    assert D.piu_forte([]) is None
    assert D.piu_forte([a]) == a


@pytest.mark.parametrize("cat,pot", [("D", 3), ("C", 4), ("B", 6), ("A", 12), ("S", 18)])
def test_ambientale_potenziale_table(cat, pot):
    # Dado 12: D /4, C /3, B /2, A ×1, S ×1.5; Bonus Statistica 4, Resistenza 2
    r = D.danno_ambientale(cat, 12, 4, 2)
    assert r.amount == (pot + 4 - 2) // 2
    assert r.steps[0].startswith(f"Potenziale D.A. (categoria {cat}): Dado 12")
    assert r.rule == "Calcolo dei Danni › Danno Ambientale"


def test_ambientale_rounding_and_defence_halving():
    assert D.danno_ambientale("S", 11, 0, 0).amount == 8  # 11 × 1.5 = 16.5 → 16; 16 / 2 = 8
    assert D.danno_ambientale("C", 11, 0, 0).amount == 1  # 11 / 3 → 3; 3 / 2 → 1
    # provoked by a Difesa: Potenziale halved: A, dado 10 → 10 → 5; (5 + 3 − 0) / 2 = 4
    assert D.danno_ambientale("A", 10, 3, 0, da_difesa=True).amount == 4
    assert D.danno_ambientale("A", 10, 3, 0).amount == 6
    assert D.danno_ambientale("D", 4, 0, 9).amount == 0


def test_ambientale_never_critical():
    with pytest.raises(NotAllowed):
        D.danno_ambientale("A", 12, 0, 0, multipliers=[D.CRITICO_CORPO])
    assert D.danno_ambientale("A", 12, 0, 0, multipliers=[D.PROTEZIONE]).amount == 3
    with pytest.raises(UnknownCategory):
        D.danno_ambientale("X", 12, 0, 0)
    with pytest.raises(BadValue):
        D.danno_ambientale("A", 0, 0, 0)


def test_multiplier_coerced_and_checked():
    assert D.Multiplier(0.5, "x").factor == Fraction(1, 2)
    assert D.danno_normale(15, 6, multipliers=[D.Multiplier(1.5, "x")]).amount == 13
    with pytest.raises(BadValue):
        D.Multiplier(-2, "x")
    with pytest.raises(BadValue):
        D.Multiplier("due", "x")


def test_multipliers_rounded_once_at_the_end():
    # RULINGS #3: 7 × ½ × 2 = 7 (rounding each step would give 3 × 2 = 6)
    r = D.danno_normale(13, 6, multipliers=[D.PAREGGIO, D.CRITICO_TESTA])
    assert r.amount == 7
    # 7 × ½ × ½ = 1.75 → 1
    assert D.danno_normale(13, 6, multipliers=[D.PAREGGIO, D.PROTEZIONE]).amount == 1
    r = D.danno_normale(15, 6, multipliers=[D.PROTEZIONE])
    assert r.amount == 4 and r.steps[-1] == "arrotondato per difetto: 4"


@pytest.mark.parametrize("mira,face,arti,mult,stacks", [
    ("corpo", 12, None, Fraction(2), ()),
    ("corpo", 11, None, None, ()),
    ("arti", 9, "braccia", None, ()),
    ("arti", 10, "braccia", None, (("Storpiatura Debilitante", 1),)),
    ("arti", 12, "gambe", None, (("Storpiatura Articolare", 1),)),
    ("testa", 8, None, None, ()),
    ("testa", 9, None, Fraction(2), ()),
    ("testa", 11, None, Fraction(2), ()),
    ("testa", 12, None, Fraction(2), (("Stordimento", 2),)),
])
def test_mira_effects(mira, face, arti, mult, stacks):
    e = D.mira_effects(mira, face, arti)
    assert (e.multiplier.factor if e.multiplier else None) == mult
    assert e.stacks == stacks
    if mult:
        assert e.multiplier.critical


def test_mira_bad_input():
    with pytest.raises(BadValue):
        D.mira_effects("piedi", 5)
    with pytest.raises(BadValue):
        D.mira_effects("arti", 11, "coda")
    assert D.mira_effects("arti", 11).stacks == ()


def test_cura_principale():
    r = D.cura_principale(10, 12)  # [10 + 12/5] / 2 = 6
    assert (r.amount, r.cura, r.delta, r.kind) == (6, True, 6, "cura")
    assert D.cura_principale(11, 4).amount == 5  # 11 + 0 = 11 → 5
    # an Armatura that does not block Danni Puri does not touch the cure
    assert D.cura_principale(10, 12, armatura=D.Armatura(8)).amount == 6


def test_cura_blocked_by_armour_that_blocks_pure_damage():
    r = D.cura_principale(10, 12, armatura=D.Armatura(6, blocca_puri=True))  # (12 − 3) / 2 = 4
    assert r.amount == 4 and r.rule == "Calcolo delle Cure › Resistenza e Armatura"
    assert D.cura_principale(2, 0, armatura=D.Armatura(20, blocca_puri=True)).amount == 0


@pytest.mark.parametrize("cat,per", [("D", 7), ("C", 6), ("B", 5), ("A", 4), ("S", 3)])
def test_rigenerazione_by_category(cat, per):
    for level in (0, per - 1, per, 2 * per + 1, 21):
        r = D.rigenerazione(cat, level)
        assert r.amount == level // per and r.cura and r.kind == "rigenerazione"


def test_rigenerazione_text_numbers_and_only_strongest():
    assert [D.rigenerazione(c, 21).amount for c in "DCBAS"] == [3, 3, 4, 5, 7]
    best = D.piu_forte([D.rigenerazione("D", 21), D.rigenerazione("S", 21)])
    assert best.amount == 7
    with pytest.raises(BadValue):
        D.rigenerazione("D", -1)


ints = st.integers(-40, 80)
mults = st.lists(st.sampled_from([D.CRITICO_CORPO, D.CRITICO_TESTA, D.PAREGGIO, D.PROTEZIONE]), max_size=3)
armours = st.one_of(st.none(), st.builds(D.Armatura, st.integers(0, 30), st.just("A"), st.booleans(), st.booleans()))


@settings(deadline=None)
@given(ints, ints, ints, ints, armours, mults, st.booleans())
def test_damage_never_negative(pot, res, potenziale, bonus, arm, ms, agg):
    for r in (
        D.danno_normale(pot, res, armatura=arm, multipliers=ms, aggiuntivo=agg),
        D.danno_puro(potenziale, bonus, armatura=arm, multipliers=ms, aggiuntivo=agg),
        D.danno_semipuro(pot, res, potenziale, bonus, armatura=arm, multipliers=ms, aggiuntivo=agg),
        D.danno_ambientale("B", max(pot, 1), bonus, res),
    ):
        assert r.amount >= 0 and r.delta <= 0 and not r.cura and r.steps


@settings(deadline=None)
@given(ints, ints, armours)
def test_cure_never_negative(potenziale, bonus, arm):
    r = D.cura_principale(potenziale, bonus, armatura=arm)
    assert r.amount >= 0 and r.delta >= 0 and r.cura


@settings(deadline=None)
@given(st.integers(0, 80), st.integers(0, 30), st.integers(0, 30))
def test_armour_never_increases_damage(pot, res, arm_pot):
    assert D.danno_normale(pot, res, armatura=D.Armatura(arm_pot)).amount <= D.danno_normale(pot, res).amount
