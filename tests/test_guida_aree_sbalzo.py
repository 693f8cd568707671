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


# --- 2. Distanza Massima di Sbalzo of a declared Sbalzo -----------------------------------------------

def sb_reg(category="B", bonus_potenziale=3):
    extra = {} if bonus_potenziale is None else {"bonus_potenziale": bonus_potenziale}
    return registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 2}}, "Hollow": {"stats": H}},
                    {"Freccia Sacra": {"potenziale": 10, "category": category, "extra": extra}})


SB_ATK = "Attacco [Freccia Sacra, Sbalzo] (Quincy vs Hollow): (-2 [Sbalzo] +2 [Raggio Ottimale] +4 [Destrezza])"


def sbalzo_fight(reg, face=8, hollow_rolls=(), body="Difesa Nulla"):
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", face, SB_ATK)])
    f.post("Hollow", pv=52, stats=H, body=body, rolls=list(hollow_rolls))
    return f.replay()


def test_dms_of_a_declared_sbalzo_that_lands():
    # DMS = (Dado 8 + Bonus Pot. 3 + Bonus Stat. 2 − Forza Avv. 5) × 2 [B] = 16
    a = sbalzo_fight(sb_reg())
    [v] = find(a, "outcome.sbalzo", "101")
    assert (v.severity, v.found, v.rule) == ("info", 16, "Sbalzo e Reazione › Sbalzo")
    assert v.details["steps"] == ["DMS: (Dado 8 + Bonus Pot. 3 + Bonus Stat. 2 − Forza Avv. 5) × 2 [B] = 16"]
    assert "Distanza Massima di Sbalzo 16 m" in v.message
    assert codes(a, "101") == ["outcome.hit", "outcome.sbalzo"]


def test_dms_with_category_c_is_exact():
    # (9 + 3 + 2 − 5) × 1,5 [C] = 13,5
    [v] = find(sbalzo_fight(sb_reg("C"), face=9), "outcome.sbalzo", "101")
    assert v.found == 13.5 and "13,5 m" in v.message


def test_dms_after_a_protezione_riuscita_and_none_for_a_dodged_sbalzo():
    prot = R("1d24+8", 15, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")
    a = sbalzo_fight(sb_reg(), hollow_rolls=[prot], body="")
    [v] = find(a, "outcome.sbalzo", "101")
    assert (v.found, v.roll) == (16, 0)
    dodge = R("1d12+6", 9, "Schivata (Hollow vs Quincy): (+6 [Destrezza])")
    a = sbalzo_fight(sb_reg(), hollow_rolls=[dodge], body="")
    assert find(a, "outcome.defended", "101") and not find(a, "outcome.sbalzo")


def test_reazione_riuscita_says_the_halved_distance():
    # Valore di Sbalzo 8 + 2 + 2 = 12; Reazione 6 + Destrezza 6 = 12: DMS 16 → 8
    reaz = R("1d12+6", 6, "Reazione (Hollow): (+6 [Destrezza])")
    a = sbalzo_fight(sb_reg(), hollow_rolls=[reaz])
    [v] = [x for x in find(a, "outcome.defended", "101") if x.roll == 0]
    assert (v.details["dms"], v.details["distanza"]) == (16, 8)
    assert "DMS 16 m → 8 m" in v.message


def test_dms_missing_numbers_ask_the_master_naming_them():
    a = sbalzo_fight(sb_reg(bonus_potenziale=None))
    assert not find(a, "outcome.sbalzo")
    [v] = [x for x in find(a, "ruling.needed", "101") if x.rule == "Sbalzo e Reazione › Sbalzo"]
    assert v.details["missing"] == ["Bonus Potenziale di Freccia Sacra (registro `extra.bonus_potenziale`)"]
    reg = registry({"Quincy": {"stats": Q}}, {})
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 8, SB_ATK)])
    f.post("Hollow", pv=52, stats={"Destrezza": 6}, body="Difesa Nulla")
    [v] = [x for x in find(f.replay(), "ruling.needed", "101") if x.rule == "Sbalzo e Reazione › Sbalzo"]
    assert v.details["missing"] == ["Tecnica nel registro (categoria, Bonus Potenziale, Bonus Statistica)",
                                    "Forza di Hollow (Livello Totale)"]


def test_dms_of_a_sbalzo_from_a_defence_halves_the_die():
    from engine.rulesets.guida.state import evolve
    from engine.rulesets.guida.step import sbalzo_dms
    f = Fight(sb_reg())
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 9, SB_ATK)])
    f.post("Hollow", pv=52, stats=H)
    state = f.replay().snapshots[0].state
    [atk] = state.incoming
    assert sbalzo_dms(state, atk)[0].value == (9 + 3 + 2 - 5) * 2
    # a Contrattacco (a Defence): Fattore di Casualità halved, 9 → 4
    calc_, missing = sbalzo_dms(state, evolve(atk, counter=True))
    assert (calc_.value, missing) == ((4 + 3 + 2 - 5) * 2, [])
    assert calc_.steps[0] == "Sbalzo da Difesa: Fattore di Casualità dimezzato 9 → 4"
