"""`guida` rules of docs/rulesets/guida.md (✓/◐ rows) that had no small-history test: one short fight per rule."""
from __future__ import annotations

import pytest

from scraper.damage import parse_damage_calcs
from tests.plugins.engine import Fight, R, calc, codes, find, registry

H = {"Destrezza": 6, "Costituzione": 4}
Q = {"Destrezza": 4, "Costituzione": 5}
O = {"Destrezza": 2, "Costituzione": 3}
ATK_Q = "Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"  # 1d12+6
ATK_H = "Attacco (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])"  # 1d12+8


def reg_with(**techniques):
    """Quincy (Bonus Statistica 4), Hollow (3) and Orihime (10) with these techniques."""
    return registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}},
                     "Hollow": {"stats": H, "extra": {"bonus_statistica": 3}},
                     "Orihime": {"stats": O, "extra": {"bonus_statistica": 10}}}, techniques)


def hit_then_calc(reg, technique, damage, *, target="Hollow", face=6):
    """Quincy's attack with `technique` lands on `target` (Difesa Nulla), then Quincy posts its Calcolo."""
    f = Fight(reg)
    f.post("Quincy", pv=40, pe=30, stats=Q,
           rolls=[R("1d12+6", face, f"Attacco [{technique}] (Quincy vs {target}): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post(target, pv=52 if target == "Hollow" else 30, stats=H if target == "Hollow" else O, body="Difesa Nulla")
    f.post("Quincy", pv=40, pe=30, stats=Q, damage=damage)
    return f


def duel(defence, expr, face, *, atk_face=6, reg=None, extra=()):
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", atk_face, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[R(expr, face, defence), *extra])
    return f


# --- Struttura dei Turni ---------------------------------------------------------------------------------

def test_no_incoming_attack_skips_the_fase_difensiva():
    # nothing to defend from: a Contrattacco on 1d12 is the Fase Offensiva's (no wrong die), and becomes Incoming
    f = Fight()
    f.post("Quincy", pv=40, stats=Q,
           rolls=[R("1d12+6", 10, "Contrattacco (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    a = f.replay()
    assert codes(a, "100") == []
    [inc] = a.next["incoming"]
    assert (inc["attacker"], inc["action"], inc["total"]) == ("Quincy", "Contrattacco", 16)
    # a defence with nothing incoming is an extra Defence; the hint says the phase is skipped
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d18+4", 10, "Parata (Quincy vs Hollow): (+4 [Destrezza])")])
    a = f.replay()
    [v] = find(a, "turn.extra_defense", "100")
    assert (v.severity, v.expected, v.found, v.rule) == ("error", 0, 1, "Struttura dei Turni › Fase Difensiva")
    assert "Nessun Attacco in arrivo: la Fase Difensiva si salta." in a.next["hints"]


def test_independent_secondary_action_beaten_on_time_has_no_consequence():
    f = duel("Azione Secondaria Indipendente [Tonico] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 2,
             atk_face=10, extra=[R("1d12+8", 5, ATK_H)])
    a = f.replay()
    [beaten] = [v for v in find(a, "outcome.hit", "101") if v.details.get("independent")]
    assert (beaten.expected, beaten.found, beaten.severity) == (16, 8, "info")
    assert beaten.rule == "Successo e Fallimento delle Azioni › Fattore Casualità › Azione Secondaria Indipendente"
    assert "nessuna conseguenza" in beaten.message
    # not a failed Defence: the Fase Offensiva goes on
    assert "outcome.action_annulled" not in codes(a)
    assert [(i["attacker"], i["total"]) for i in a.next["incoming"]] == [("Hollow", 13)]


def test_only_main_actions_become_incoming():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[
        R("1d18+4", 10, "Azione Secondaria Indipendente [Tonico] (Quincy): (+4 [Destrezza])")])
    assert f.replay().next["incoming"] == []
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 3, "Azione Secondaria [Tonico] (Quincy vs Hollow): (+4 [Destrezza])")])
    a = f.replay()
    assert codes(a) == ["dice.unexpected_roll"] and a.next["incoming"] == []


# --- Attacchi e Difese, Successo e Fallimento --------------------------------------------------------------

@pytest.mark.parametrize("mod", ["+2 [Raggio Ottimale]", "-2 [Raggio Corto]", "-4 [Raggio Lungo]",
                                 "-6 [Raggio Lunghissimo]"])
def test_distance_values_in_range_are_accepted(mod):
    const = int(mod.split()[0]) + 4
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R(f"1d12{const:+d}", 5, f"Attacco (Quincy vs Hollow): ({mod} +4 [Destrezza])")])
    a = f.replay()
    assert codes(a, "100") == []
    assert a.next["incoming"][0]["total"] == 5 + const


def test_a_listed_movement_malus_is_read_in_the_defence_total():
    # Parata 8 + 6 − 2 [Spostamento] = 12 ties the attack's 12: Parata's tie, half damage (without the −2: 14)
    a = duel("Parata (Hollow vs Quincy): (-2 [Spostamento] +6 [Destrezza])", "1d18+4", 8).replay()
    assert codes(a, "101") == ["outcome.hit"]
    [v] = find(a, "outcome.hit", "101")
    assert (v.expected, v.found, v.details["multiplier"], v.details["defence"]) == (12, 12, "1/2", "Parata")


def test_aimed_attack_without_its_mira_malus():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q,
           rolls=[R("1d12+6", 5, "Attacco Mirato Testa [Freccia] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    a = f.replay()
    [v] = find(a, "dice.missing_modifier", "100")
    assert (v.severity, v.expected, v.found, v.roll) == ("error", -3, 0, 0)
    assert v.rule == "Successo e Fallimento delle Azioni › Fattore Mira"
    assert a.next["incoming"][0]["total"] == 8  # 5 + 6 − 3


def test_attacco_prevedibile_gives_the_defender_plus_one_at_the_fourth_use():
    f = Fight()
    for _ in range(4):
        f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+6", 2, "Attacco [Artigli] (Hollow vs Quincy): (+6 [Destrezza])")])
        f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 10, "Schivata (Quincy vs Hollow): (+4 [Destrezza])")])
    a = f.replay()
    assert find(a, "dice.bonus_not_taken", "105") == []
    [v] = find(a, "dice.bonus_not_taken", "107")
    assert (v.severity, v.expected, v.found) == ("info", 1, 0)
    assert v.rule == "Successo e Fallimento delle Azioni › Fattore Descrizione"
    assert v.details == {"technique": "Artigli", "uses": 4}


# --- Azioni e dadi ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("expr,label,expected,rule", [
    ("1d12+6", "Spostamento (Quincy): (+2 [Spostamento] +4 [Destrezza])", "1d15",
     "Successo e Fallimento delle Azioni › Fattore Casualità › Spostamento"),
    ("1d10+6", ATK_Q, "1d12", "Successo e Fallimento delle Azioni › Fattore Casualità › Azione Offensiva"),
    ("1d20+4", "Liberazione (Quincy): (+4 [Bonus Statistica])", "1d12", "Costrizione e Liberazione › Liberazione"),
])
def test_offensive_actions_roll_their_own_die(expr, label, expected, rule):
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R(expr, 4, label)])
    [v] = find(f.replay(), "dice.wrong_die", "100")
    assert (v.severity, v.expected, v.found, v.roll, v.rule) == ("error", expected, expr.split("+")[0], 0, rule)


@pytest.mark.parametrize("expr,label,expected,rule", [
    ("1d10+6", "Parata (Hollow vs Quincy): (+6 [Destrezza])", "1d18",
     "Successo e Fallimento delle Azioni › Fattore Casualità › Parata"),
    ("1d12+6", "Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])", "1d8",
     "Successo e Fallimento delle Azioni › Fattore Casualità › Sbilanciamento"),
    ("1d8+6", "Reazione (Hollow): (+6 [Destrezza])", "1d12", "Sbalzo e Reazione › Reazione"),
])
def test_defensive_actions_roll_their_own_die(expr, label, expected, rule):
    a = duel(label, expr, 4).replay()
    [v] = find(a, "dice.wrong_die", "101")
    assert (v.severity, v.expected, v.found, v.roll, v.rule) == ("error", expected, expr.split("+")[0], 0, rule)


@pytest.mark.parametrize("mod,factor", [("+2 [Raggio Ottimale]", "Distanza"), ("-1 [Mirato Arti]", "Mira")])
def test_contrattacco_in_fase_difensiva_takes_no_distance_or_mira(mod, factor):
    const = int(mod.split()[0]) + 6
    a = duel(f"Contrattacco (Hollow vs Quincy): ({mod} +6 [Destrezza])", f"1d18{const:+d}", 4).replay()
    [v] = find(a, "dice.factor_out_of_range", "101")
    assert (v.severity, v.expected, v.found) == ("error", 0, int(mod.split()[0]))
    assert v.rule == f"Successo e Fallimento delle Azioni › Fattore {factor}"
    assert "Contrattacco in Fase Difensiva" in v.message


def test_preparazione_gives_plus_one_to_hit_when_no_fase_difensiva():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, body="Preparazione")
    f.post("Hollow", pv=52, stats=H)  # no attack: Quincy has no Fase Difensiva
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 5, ATK_Q)])
    a = f.replay()
    [v] = find(a, "dice.bonus_not_taken", "102")
    assert (v.severity, v.expected, v.found) == ("info", 1, 0)
    assert "Preparazione" in v.message
    f.posts[-1] = f.posts[-1].__class__(**{**f.posts[-1].__dict__, "rolls": (R(
        "1d12+7", 5, "Attacco [Freccia Sacra] (Quincy vs Hollow): (+1 [Preparazione] +2 [Raggio Ottimale] +4 [Destrezza])"),)})
    assert codes(f.replay(), "102") == []


def test_difesa_nulla_takes_the_attack_in_full_and_the_offensive_goes_on():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 12, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla", rolls=[R("1d12+8", 5, ATK_H)])
    a = f.replay()
    [hit] = find(a, "outcome.hit", "101")
    assert (hit.details["defence"], hit.expected) == ("Difesa Nulla", 18)
    assert hit.details["multiplier"] == "2"  # in full: the body critical of the 12 doubles, nothing halves
    assert "outcome.action_annulled" not in codes(a)
    assert [(i["attacker"], i["total"]) for i in a.next["incoming"]] == [("Hollow", 13)]


def test_an_attack_left_without_a_defence_roll_is_a_difesa_nulla():
    # "un lancio per ogni Azione": a missing defence roll cannot be told from a Difesa Nulla
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, ATK_H)])
    a = f.replay()
    [hit] = find(a, "outcome.hit", "101")
    assert (hit.severity, hit.expected, hit.details["defence"], hit.details["multiplier"]) == (
        "info", 12, "Difesa Nulla", "1")
    assert hit.rule == "Struttura dei Turni › Fase Difensiva"


def test_failed_contrattacco_su_azione_generica_owes_minus_two():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d15+6", 9, "Spostamento (Quincy vs Hollow): (+2 [Spostamento] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, rolls=[
        R("1d18+6", 2, "Contrattacco su Azione Generica (Hollow vs Quincy): (+6 [Destrezza])"),
        R("1d12+8", 5, "Contrattacco su Azione Generica (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    a = f.replay()
    [beaten] = find(a, "outcome.hit", "101")
    assert (beaten.expected, beaten.found) == (15, 8) and "comunque lanciato" in beaten.message
    [v] = find(a, "dice.missing_modifier", "101")
    assert (v.severity, v.expected, v.found, v.roll) == ("error", -2, 0, 1)
    assert v.rule == "Successo e Fallimento delle Azioni › Fattore Casualità › Contrattacco su Azione Generica"


ATK_ON_ORIHIME = "Attacco [Freccia Sacra] (Quincy vs Orihime): (+2 [Raggio Ottimale] +4 [Destrezza])"


def ally_fight(label, expr, face, reg=None):
    """Quincy attacks Orihime (12); Hollow defends her."""
    f = Fight(reg)
    f.post("Orihime", pv=30, stats=O)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_ON_ORIHIME)])
    f.post("Hollow", pv=52, stats=H, rolls=[R(expr, face, label)])
    return f.replay()


@pytest.mark.parametrize("action", ["Protezione su Alleato", "Difesa Nulla su Alleato"])
def test_protezione_on_an_ally_halves_and_rolls_1d24(action):
    label = f"{action} (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])"
    a = ally_fight(label, "1d24+8", 10)
    [v] = find(a, "outcome.defended", "102")
    assert (v.expected, v.found, v.details["multiplier"], v.details["defence"]) == (12, 18, "1/2", action)
    assert find(a, "dice.wrong_die") == []
    [w] = find(ally_fight(label, "1d18+8", 10), "dice.wrong_die", "102")
    assert (w.expected, w.found) == ("1d24", "1d18")
    assert w.rule.startswith("Bersagli Multipli › Difesa su Alleati")


@pytest.mark.parametrize("action", ["Parata per Alleato", "Contrattacco per Alleato"])
def test_parata_and_contrattacco_for_an_ally_go_to_the_confronto_di_potenza(action):
    a = ally_fight(f"{action} (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10)
    [v] = find(a, "outcome.defended", "102")
    assert (v.expected, v.found) == (12, 16)
    assert "Confronto di Potenza" in v.message
    assert any(r.rule == "Confronto di Potenza › Potenza contro Potenza" for r in find(a, "ruling.needed", "102"))
    # the attack on the ally was intercepted: nothing lands on Orihime
    assert find(a, "outcome.hit") == []


def test_difesa_nulla_su_alleato_gets_plus_one_per_five_destrezza():
    # Hollow's Destrezza 6: +1
    left_out = ally_fight("Difesa Nulla su Alleato (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])", "1d24+8", 10)
    [v] = [x for x in find(left_out, "dice.bonus_not_taken", "102") if x.expected == 1]
    assert (v.severity, v.found) == ("info", 0)
    listed = ally_fight("Difesa Nulla su Alleato (Hollow vs Quincy): "
                        "(+2 [Bonus Protezione] +1 [Destrezza su Alleato] +6 [Destrezza])", "1d24+9", 10)
    assert codes(listed, "102", severity="error") == []
    [d] = find(listed, "outcome.defended", "102")
    assert d.found == 19


def test_schivata_con_alleato_rolls_1d18_and_prevents_all_damage():
    a = ally_fight("Schivata con Alleato (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10)
    [v] = find(a, "outcome.defended", "102")
    assert (v.expected, v.found) == (12, 16) and "nessun Danno" in v.message
    [w] = find(ally_fight("Schivata con Alleato (Hollow vs Quincy): (+6 [Destrezza])", "1d12+6", 10), "dice.wrong_die")
    assert (w.expected, w.found) == ("1d18", "1d12")


# --- Confronto di Potenza --------------------------------------------------------------------------------

CLASH_REG = reg_with(**{"Freccia Sacra": {"potenziale": 10, "category": "C"},
                        "Artigli": {"potenziale": 6, "category": "D", "kind": "arma"}})


@pytest.mark.parametrize("label,expr,face", [
    ("Schivata [Artigli] (Hollow vs Quincy): (+6 [Destrezza])", "1d12+6", 10),                         # succeeds
    ("Protezione [Artigli] (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])", "1d24+8", 10),  # succeeds
    ("Parata [Artigli] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 2),                             # fails
])
def test_only_successful_parate_and_contrattacchi_make_a_power_clash(label, expr, face):
    a = duel(label, expr, face, reg=CLASH_REG).replay()
    assert find(a, "outcome.power_clash") == []
    # the same Parata in time does
    a = duel("Parata [Artigli] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10, reg=CLASH_REG).replay()
    [clash] = find(a, "outcome.power_clash", "101")
    assert (clash.expected, clash.found) == (14, 9)


def test_power_clash_without_registry_numbers_asks_the_master():
    a = duel("Parata [Spada Ignota] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10, reg=CLASH_REG).replay()
    assert find(a, "outcome.power_clash") == []
    [r] = [v for v in find(a, "ruling.needed", "101") if v.rule == "Confronto di Potenza › Potenza contro Potenza"]
    assert "non noti dal registro" in r.message and "Parata di Hollow" in r.message
    [v] = find(a, "outcome.defended", "101")
    assert "da stabilire" in v.message


# --- Calcolo dei Danni -----------------------------------------------------------------------------------

def armoured(pot):
    return registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}},
                     "Hollow": {"stats": H, "techniques": ["Corazza"]}},
                    {"Freccia Sacra": {"potenziale": 10, "category": "C"},
                     "Corazza": {"kind": "armatura", "potenziale": pot, "category": "C", "extra": {"attiva": True}}})


@pytest.mark.parametrize("pot,amount,last_step", [
    (11, 0, "Potenza 14 < Armatura 15"),   # weaker attack: no damage, the Armatura holds
    (10, 0, "Potenza 14 = Armatura 14"),   # equal: no damage, it gives way
    (6, 7, "Potenza 14 > Armatura 10"),    # stronger: 14 − 4 − 6/2 = 7
])
def test_armatura_three_cases_through_the_engine(pot, amount, last_step):
    a = hit_then_calc(armoured(pot), "Freccia Sacra", [calc("Hollow", 99, technique="Freccia Sacra")]).replay()
    [v] = find(a, "damage.miscalculated", "102")
    assert (v.severity, v.expected, v.found) == ("error", amount, 99)
    assert v.details["steps"][0] == f"Corazza: Potenziale {pot} + Resistenza 4 = {pot + 4}"
    assert v.details["steps"][-1].startswith(last_step)
    assert a.next["registro"][0]["amount"] == -amount


def test_danno_semipuro_through_the_engine():
    # Normale 11 + 4 − 4 = 11; Puro 11 + 4 / 5 = 11; (11 / 2 = 5) + (11 / 2 = 5) = 10
    reg = reg_with(**{"Lama Mista": {"potenziale": 11, "category": "C", "type": "semi-puro"}})
    a = hit_then_calc(reg, "Lama Mista", [calc("Hollow", 11, technique="Lama Mista")]).replay()
    [v] = find(a, "damage.miscalculated", "102")
    assert (v.expected, v.found, v.rule) == (10, 11, "Calcolo dei Danni › Tipologie di Danno")
    assert v.details["steps"][-1] == "Danno Semi-Puro: 11 / 2 = 5 + 11 / 2 = 5 → 10"
    assert codes(hit_then_calc(reg, "Lama Mista", [calc("Hollow", 10, technique="Lama Mista")]).replay(), "102") == []


@pytest.mark.parametrize("face,mira,amount,steps", [
    # 11 × ½ = 5,5 → 5 (rounded down)
    (6, "", 5, ["Potenza 15 − Resistenza 4 = 11",
                "11 × 0,5 (Protezione riuscita (20 ≥ 12): Danni dimezzati) = 5,5", "arrotondato per difetto: 5"]),
    # ×½ Protezione and ×2 head critical: 11 × 1 = 11, once (not 11 // 2 × 2 = 10)
    (10, "-3 [Mirato Testa] ", 11, ["Potenza 15 − Resistenza 4 = 11"]),
])
def test_multipliers_apply_once_and_round_down(face, mira, amount, steps):
    reg = reg_with(**{"Freccia Sacra": {"potenziale": 11, "category": "C"}})
    const = 6 + int(mira.split()[0]) if mira else 6
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R(f"1d12{const:+d}", face,
                                              f"Attacco [Freccia Sacra] (Quincy vs Hollow): ({mira}+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d24+8", 12, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 99, technique="Freccia Sacra")])
    a = f.replay()
    [v] = find(a, "damage.miscalculated", "102")
    assert (v.expected, v.found, v.details["steps"]) == (amount, 99, steps)
    assert a.next["registro"][0]["amount"] == -amount


AGG_REG = reg_with(**{"Veleno Lieve": {"potenziale": 10, "category": "C", "type": "aggiuntivo"}})


def test_danno_aggiuntivo_is_half_the_damage():
    # (10 + 4 − 4) / 2 = 5
    a = hit_then_calc(AGG_REG, "Veleno Lieve", [calc("Hollow", 10, technique="Veleno Lieve")]).replay()
    [v] = find(a, "damage.miscalculated", "102")
    assert (v.expected, v.found) == (5, 10)
    assert v.details["steps"] == ["Potenza 14 − Resistenza 4 = 10", "10 × 0,5 (Danno Aggiuntivo: Danno / 2) = 5"]


def test_danno_aggiuntivo_line_applies_no_type_1_stack():
    line = calc("Hollow", 5, technique="Veleno Lieve", kind="aggiuntivo",
                raw="Veleno Lieve su Hollow: 5, 2 Stack di Sbilanciamento")
    a = hit_then_calc(AGG_REG, "Veleno Lieve", [line]).replay()
    [v] = find(a, "outcome.stacks", "102")
    assert (v.found, v.details) == (2, {"stack": "Sbilanciamento", "reason": "aggiuntivo"})
    assert a.characters["Hollow"]["stacks"] == {}


def test_attack_that_deals_danno_aggiuntivo_applies_no_type_1_stack_whatever_the_line_says():
    line = calc("Hollow", 5, technique="Veleno Lieve", raw="Veleno Lieve su Hollow: 5, 2 Stack di Sbilanciamento")
    a = hit_then_calc(AGG_REG, "Veleno Lieve", [line]).replay()
    assert codes(a, "102", severity="error") == []  # the engine agrees the damage is the Aggiuntivo's 5
    assert a.characters["Hollow"]["stacks"] == {}


def test_danno_ambientale_of_a_contrattacco_halves_its_potenziale():
    # Quincy's Contrattacco Diretto [Freccia Sacra, B] lands with a 9: Potenziale D.A. 9 × 0,5 = 4, halved → 2
    # (a Defence); (2 + Bonus Statistica 4 − Resistenza 4) / 2 = 1 (not 2)
    reg = reg_with(**{"Freccia Sacra": {"potenziale": 10, "category": "B"}})
    f = Fight(reg)
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 3, ATK_H)])
    f.post("Quincy", pv=40, stats=Q, rolls=[
        R("1d18+4", 15, "Contrattacco Diretto (Quincy vs Hollow): (+4 [Destrezza])"),
        R("1d12+9", 9, "Contrattacco Diretto [Freccia Sacra] (Quincy vs Hollow): "
                       "(+3 [Contrattacco] +2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Freccia Sacra"),
                                             calc("Hollow", 2, kind="ambientale", raw="Danno Ambientale su Hollow: 2")])
    a = f.replay()
    [v] = [x for x in find(a, "damage.miscalculated", "103") if x.details.get("kind") == "ambientale"]
    assert (v.severity, v.expected, v.found) == ("error", 1, 2)
    assert "provocato da una Difesa: Potenziale dimezzato 4 → 2" in v.details["steps"]


# --- Calcolo delle Cure ----------------------------------------------------------------------------------

CURE_REG = reg_with(**{"Luce Curativa": {"potenziale": 10, "category": "C", "type": "cura"},
                       "Scudo Sacro": {"kind": "armatura", "potenziale": 6, "category": "C",
                                       "extra": {"attiva": True, "blocca_puri": True}}})


def cure_reg(armour: bool):
    reg = CURE_REG
    if not armour:
        return reg
    chars = dict(reg.characters)
    chars["Orihime"] = chars["Orihime"].__class__(**{**chars["Orihime"].__dict__, "techniques": ("Scudo Sacro",)})
    return reg.__class__(characters=chars, techniques=reg.techniques, sources=reg.sources)


def cure_fight(armour: bool, written: int):
    damage = parse_damage_calcs(f"Cura [Luce Curativa] (Quincy vs Orihime): Potenziale 10 / 2 = {written} PV")
    assert [(c.kind, c.result) for c in damage] == [("cura", written)]
    return hit_then_calc(cure_reg(armour), "Luce Curativa", damage, target="Orihime").replay()


@pytest.mark.parametrize("armour,amount", [(False, 5), (True, 3)])
def test_cura_principale_goes_in_the_registro_of_the_target(armour, amount):
    # [10 + 4 / 5] / 2 = 5; an Armatura that blocks Danni Puri (Potenziale 6): (10 − 3) / 2 = 3
    a = cure_fight(armour, amount)
    [row] = a.next["registro"]
    assert (row["amount"], row["line"]) == (amount, f"+{amount} PV [Luce Curativa di Quincy]")


@pytest.mark.parametrize("armour,amount", [(False, 5), (True, 3)])
def test_a_correct_cura_principale_is_not_flagged(armour, amount):
    a = cure_fight(armour, amount)
    assert find(a, "damage.miscalculated", "102") == []
    wrong = cure_fight(armour, amount + 2)
    [v] = find(wrong, "damage.miscalculated", "102")
    assert (v.expected, v.found) == (amount, amount + 2)
    assert v.rule == ("Calcolo delle Cure › Resistenza e Armatura" if armour else "Calcolo delle Cure › Tipologie di Cura")


# --- Percezione e Mimetizzazione -------------------------------------------------------------------------

def test_percezione_and_mimetizzazione_roll_1d12():
    f = Fight()
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d20+3", 10, "Mimetizzazione [Camuffamento] (Hollow): (+3 [Bonus Statistica])")])
    f.post("Quincy", pv=40, stats=Q, rolls=[
        R("1d8+4", 5, "Percezione [Percezione della Reiatsu] (Quincy vs Hollow): (+4 [Bonus Statistica])")])
    a = f.replay()
    [m] = find(a, "dice.wrong_die", "100")
    assert (m.severity, m.expected, m.found, m.rule) == ("error", "1d12", "1d20", "Percezione e Mimetizzazione › Mimetizzazione")
    [p] = find(a, "dice.wrong_die", "101")
    assert (p.expected, p.found, p.rule) == ("1d12", "1d8", "Percezione e Mimetizzazione › Percezione")


# --- Condizioni Fisiche ----------------------------------------------------------------------------------

STACK_REG = reg_with(**{"Freccia Sacra": {"potenziale": 10, "category": "C"}})


def sbilanciato_attack(extra):
    """Quincy attacks (102) with the 2 Stacks of Sbilanciamento Hollow's Sbilanciamento gave it; Calcolo: 10."""
    reg = reg_with(**{"Freccia Sacra": {"potenziale": 10, "category": "C", "extra": extra}})
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 2, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d8+6", 8, "Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Freccia Sacra")])
    return f.replay()


def test_sbilanciamento_lowers_the_potenziale_of_the_attack_or_asks_the_master():
    # one modificatore = 2 points (registry): Potenziale 10 − 2 Stacks × 2 = 6, Potenza 6 + 4 − Resistenza 4 = 6
    a = sbilanciato_attack({"modificatore": 2})
    assert a.posts[2].state["Quincy"]["stacks"] == {"Sbilanciamento": 2}
    [v] = find(a, "damage.miscalculated", "104")
    assert (v.severity, v.expected, v.found) == ("error", 6, 10)
    assert v.details["steps"][0] == "Sbilanciamento: Potenziale -2 modificatori × 2 = Potenziale 10 → 6"
    # without the value of a modificatore the engine does not guess: the master checks the declared damage
    a = sbilanciato_attack({})
    assert find(a, "damage.miscalculated", "104") == []
    [r] = find(a, "ruling.needed", "104")
    assert (r.found, r.rule) == (10, "Condizioni Fisiche › Stack Tipo-1: Condizioni Passeggere")
    assert "Sbilanciamento" in r.message and "modificatore" in r.message
    # meanwhile the declared number is what the target records
    assert a.next["character"] == "Hollow"
    assert [(x["amount"], x["line"]) for x in a.next["registro"]] == [(-10, "-10 PV [Freccia Sacra di Quincy]")]


def test_protezione_riuscita_blocks_declared_sbilanciamento_and_stordimento():
    f = Fight(STACK_REG)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d24+8", 12, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 5, technique="Freccia Sacra",
                                                   raw="Freccia Sacra su Hollow: 5, 2 Stack di Sbilanciamento e 1 Stack di Stordimento")])
    a = f.replay()
    assert find(a, "outcome.defended", "101")[0].details["multiplier"] == "1/2"
    assert codes(a, "102", severity="error") == []
    assert a.characters["Hollow"]["stacks"] == {}
    assert {v.details.get("reason") for v in find(a, "outcome.stacks", "102")} == {"protezione"}


def test_stordimento_lowers_every_roll_by_one_per_stack():
    # a 12 at the head: 2 Stordimento on Hollow, whose next attack owes −2
    f = Fight()
    f.post("Quincy", pv=40, stats=Q,
           rolls=[R("1d12+3", 12, "Attacco (Quincy vs Hollow): (-3 [Mirato Testa] +4 [Destrezza] +2 [Raggio Ottimale])")])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, ATK_H)])
    a = f.replay()
    assert a.posts[3].state["Hollow"]["stacks"] == {"Stordimento": 2}
    [v] = find(a, "dice.missing_modifier", "103")
    assert (v.severity, v.expected, v.found) == ("error", -2, 0)
    assert v.rule == "Condizioni Fisiche › Stack Tipo-1: Condizioni Passeggere"
    assert a.next["incoming"][0]["total"] == 11  # 5 + 8 − 2


def stack_fight(raw, stated=10, reg=STACK_REG):
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", stated, technique="Freccia Sacra", raw=raw)])
    return f


def test_type2_at_most_three_per_category():
    a = stack_fight("Freccia Sacra su Hollow: 10, 5 Stack di Storpiatura Debilitante").replay()
    [v] = find(a, "stacks.over_limit", "102")
    assert (v.severity, v.expected, v.found, v.details["applied"]) == ("error", 3, 5, 3)
    assert v.rule == "Condizioni Fisiche › Stack Tipo-2: Storpiature"
    assert a.characters["Hollow"]["stacks"] == {"Storpiatura Debilitante": 3}


def test_type2_only_with_damage():
    # Corazza 11 + Resistenza 4 = 15 > Potenza 14: no damage, so no Storpiatura
    f = stack_fight("Freccia Sacra su Hollow: 0, 1 Stack di Storpiatura Debilitante", stated=0, reg=armoured(11))
    a = f.replay()
    [v] = find(a, "outcome.stacks", "102")
    assert v.details == {"stack": "Storpiatura Debilitante", "reason": "nessun_danno"}
    assert v.rule == "Condizioni Fisiche › Stack Tipo-2: Storpiature"
    assert a.characters["Hollow"]["stacks"] == {}


def test_ustione_lowers_the_resistenza_of_later_hits():
    # 3 Stack di Ustione: Costituzione −2, Resistenza 4 → 2: the next Freccia Sacra does 14 − 2 = 12
    f = stack_fight("Freccia Sacra su Hollow: 10, 3 Stack di Ustione")
    f.posts[2] = f.posts[2].__class__(**{**f.posts[2].__dict__, "rolls": (R("1d12+6", 6, ATK_Q),)})
    f.post("Hollow", pv=42, stats=H, body="Difesa Nulla", registro=["-10 PV [Freccia Sacra di Quincy]"])
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Freccia Sacra")])
    a = f.replay()
    assert a.posts[3].state["Hollow"]["stacks"] == {"Ustione": 3}
    [v] = find(a, "damage.miscalculated", "104")
    assert (v.expected, v.found, v.details["steps"]) == (12, 10, ["Potenza 14 − Resistenza 2 = 12"])


def test_congelamento_lowers_the_destrezza():
    # 3 Stack di Congelamento: Destrezza −2 (and 2 Danni in the Fase Iniziale)
    f = stack_fight("Freccia Sacra su Hollow: 10, 3 Stack di Congelamento")
    f.post("Hollow", pv=40, stats=H, registro=["-10 PV [Freccia Sacra di Quincy]", "-2 PV [Congelamento]"],
           rolls=[R("1d12+8", 5, ATK_H)])
    a = f.replay()
    assert codes(a, "103", severity="error") == ["dice.stat_mismatch"]
    [v] = find(a, "dice.stat_mismatch", "103")
    assert (v.expected, v.found, v.details) == (4, 6, {"schema": 6, "malus": -2})
    assert v.rule == "Successo e Fallimento delle Azioni › Fattore Statistica"


@pytest.mark.parametrize("stack,rule", [
    ("Ustione", "Condizioni Fisiche › Stack Tipo-3: Stack Durature"),
    ("Congelamento", "Condizioni Fisiche › Stack Tipo-4: Stack Condizionate"),
])
def test_declared_stacks_cite_their_own_type(stack, rule):
    a = stack_fight(f"Freccia Sacra su Hollow: 10, 3 Stack di {stack}").replay()
    [v] = find(a, "outcome.stacks", "102")
    assert v.found == {stack: 3}
    assert v.rule == rule


# --- Bersagli Multipli -----------------------------------------------------------------------------------

def test_attacchi_multipli_lose_one_potenza_per_extra_target():
    # Raffica 10 + 4 = 14, two targets: 13; Hollow 13 − 4 = 9, Orihime 13 − 3 = 10
    reg = reg_with(**{"Raffica": {"potenziale": 10, "category": "C"}})
    f = Fight(reg)
    f.post("Hollow", pv=52, stats=H)
    f.post("Orihime", pv=30, stats=O)
    f.post("Quincy", pv=40, stats=Q, rolls=[
        R("1d12+6", 6, "Attacco Multiplo [Raffica] (Quincy vs Hollow, Orihime): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Orihime", pv=30, stats=O, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Raffica"), calc("Orihime", 10, technique="Raffica")])
    a = f.replay()
    assert find(a, "dice.missing_modifier", "102") == []  # not Mirati: no −2
    [v] = find(a, "damage.miscalculated", "105")
    assert (v.expected, v.found, v.details["steps"]) == (9, 10, ["Potenza 13 − Resistenza 4 = 9"])


# --- smaller readings --------------------------------------------------------------------------------------

def test_contrattacco_su_azione_generica_against_an_attack_says_it_is_the_wrong_answer():
    a = duel("Contrattacco su Azione Generica [Artigli] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10).replay()
    [v] = find(a, "turn.extra_defense", "101")
    assert (v.severity, v.expected, v.found) == ("error", 0, 1)
    assert "risponde solo a un'Azione Generica" in v.message and "un Attacco di Quincy (post 100)" in v.message
    assert v.details["pending_kind"] == "attacco"
    # the attack it did not answer lands as Difesa Nulla
    [hit] = find(a, "outcome.hit", "101")
    assert "Difesa Nulla" in hit.message


def test_attacchi_multipli_is_an_attack_label():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, "Attacchi Multipli [Freccia Sacra] (Quincy vs Hollow): "
                                                             "(+2 [Raggio Ottimale] +4 [Destrezza])")])
    a = f.replay()
    assert "dice.unknown_action" not in codes(a, "100")
    assert a.next["character"] == "Hollow" and len(a.next["incoming"]) == 1


def test_danno_ambientale_cites_its_own_paragraph():
    reg = reg_with(**{"Freccia Sacra": {"potenziale": 10, "category": "C"}})
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Freccia Sacra"),
                                             calc("Hollow", 9, kind="ambientale", raw="Danno Ambientale su Hollow: 9")])
    a = f.replay()
    [v] = [x for x in find(a, "damage.miscalculated", "102") if x.details.get("kind") == "ambientale"]
    assert v.rule == "Calcolo dei Danni › Danno Ambientale" and v.found == 9
