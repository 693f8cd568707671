"""`guida` step: Danno Ambientale against the target's Armatura, the DMS of a declared Sbalzo, Aree Espansive in the
state (creation, decay, removal by attacks, vanishing, Cortina Velenosa)."""
from __future__ import annotations

import pytest

from tests.plugins.engine import Fight, R, calc, codes, find, registry

H = {"Forza": 5, "Destrezza": 6, "Costituzione": 4}
Q = {"Forza": 3, "Destrezza": 4, "Costituzione": 5}
ATK = "Attacco [{t}] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"  # 1d12+6


def armoured(armour_pot: int | None, **techniques):
    """Quincy (Bonus Statistica 4) against Hollow (Costituzione 4) who wears an Armatura of that Potenziale."""
    techs = {"Freccia Sacra": {"potenziale": 10, "category": "C"},
             "Luce Pura": {"potenziale": 8, "category": "S", "type": "puro"}}
    techs.update(techniques)
    hollow = {"stats": H, "extra": {"bonus_statistica": 3}}
    if armour_pot is not None:
        techs["Corazza"] = {"kind": "armatura", "potenziale": armour_pot, "extra": {"attiva": True}}
        hollow["techniques"] = ["Corazza"]
    return registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}}, "Hollow": hollow}, techs)


def hit_then_calc(reg, technique, damage, *, face=10):
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", face, ATK.format(t=technique))])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=damage)
    return f.replay()


def ambientale(n):
    return calc("Hollow", n, kind="ambientale", raw=f"Danno Ambientale su Hollow: {n}")


# --- 1. Danno Ambientale with the target's Armatura -----------------------------------------------------

def test_danno_ambientale_is_reduced_by_the_armatura():
    # Luce Pura (S, Danno Puro: ignores the Armatura, which keeps protecting). Danno Ambientale: Potenziale D.A. =
    # Dado 10 × 1,5 = 15; Potenza 15 + 4 = 19 > Armatura 6 + 4 = 10 → (19 − 4 − 6/2 = 12) / 2 = 6 (without: 7)
    main = calc("Hollow", 8, technique="Luce Pura", kind="puro")
    a = hit_then_calc(armoured(6), "Luce Pura", [main, ambientale(6)])
    assert codes(a, "102") == []
    assert sorted(r["amount"] for r in a.next["registro"]) == [-8, -6]
    a = hit_then_calc(armoured(6), "Luce Pura", [main, ambientale(7)])
    [v] = find(a, "damage.miscalculated", "102")
    assert (v.expected, v.found, v.details["kind"]) == (6, 7, "ambientale")
    assert "Armatura 10" in " ".join(v.details["steps"])
    # no Armatura: the plain formula, 7
    a = hit_then_calc(armoured(None), "Luce Pura", [main, ambientale(7)])
    assert codes(a, "102") == []


def test_danno_ambientale_stopped_by_a_stronger_armatura():
    # Armatura 20 + 4 = 24 > Potenza D.A. 19: no damage, the Armatura keeps protecting
    main = calc("Hollow", 8, technique="Luce Pura", kind="puro")
    a = hit_then_calc(armoured(20), "Luce Pura", [main, ambientale(7)])
    [v] = find(a, "damage.miscalculated", "102")
    assert (v.expected, v.found) == (0, 7)
    assert v.details["steps"][-1] == "Potenza 19 < Armatura 24: nessun Danno, l'Armatura continua a proteggere"


def test_armatura_given_way_to_the_hit_does_not_protect_from_its_danno_ambientale():
    # Freccia Sacra (C): Potenza 14 > Armatura 6 + 4 = 10 → 14 − 4 − 3 = 7, the Armatura gives way; the Danno
    # Ambientale of the same hit (Dado 10 / 3 = 3; (3 + 4 − 4) / 2 = 1) meets no Armatura
    a = hit_then_calc(armoured(6), "Freccia Sacra", [calc("Hollow", 7, technique="Freccia Sacra"), ambientale(1)])
    assert codes(a, "102") == []
    assert sorted(r["amount"] for r in a.next["registro"]) == [-7, -1]


@pytest.mark.parametrize("arm_pot,amount,outcome", [
    (12, 0, "regge"),   # Armatura 12 + 4 = 16 > Potenza D.A. 15
    (11, 0, "cede"),    # 11 + 4 = 15 = Potenza D.A.: no damage, no protection for the rest of the Turno
    (6, 4, "cede"),     # 15 > 10: (15 − 4 − 3 = 8) / 2 = 4
    (7, 4, "cede"),     # 15 > 11: (15 − 4 − 3 = 8) / 2 = 4 (half of 7 rounds down)
])
def test_danno_ambientale_armatura_three_cases(arm_pot, amount, outcome):
    from engine.rulesets.guida import damage as D
    # category B, Dado 10: Potenziale D.A. 5; Bonus Statistica 10 → Potenza 15; Resistenza 4
    r = D.danno_ambientale("B", 10, 10, 4, armatura=D.Armatura(arm_pot, "Corazza"))
    assert (r.amount, r.armatura, r.kind) == (amount, outcome, "ambientale")
    assert D.danno_ambientale("B", 10, 10, 4).amount == 5  # (5 + 10 − 4) / 2, no Armatura
