"""`guida` hit resolution (RULINGS #1/#6): totals, ties, per-defence rules, Confronto di Potenza, Mira die faces."""
from __future__ import annotations

import pytest

from tests.plugins.engine import Fight, R, calc, codes, find, registry

H = {"Destrezza": 6, "Costituzione": 4}
Q = {"Destrezza": 4, "Costituzione": 5}
ATK_Q = "Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"  # 1d12+6


def duel(defence: str, expr: str, face: int, atk_face: int = 6, reg=None, atk_label: str = ATK_Q):
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", atk_face, atk_label)])
    f.post("Hollow", pv=52, stats=H, rolls=[R(expr, face, defence)])
    return f


@pytest.mark.parametrize("label,expr,face,code,mult", [
    ("Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])", "1d24+8", 4, "outcome.defended", "1/2"),  # 12 = 12: tie → Difensore
    ("Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])", "1d24+8", 3, "outcome.hit", "1"),
    ("Schivata (Hollow vs Quincy): (+6 [Destrezza])", "1d12+6", 6, "outcome.hit", "1/2"),  # tie: half damage
    ("Schivata (Hollow vs Quincy): (+6 [Destrezza])", "1d12+6", 7, "outcome.defended", None),
    ("Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])", "1d8+6", 6, "outcome.hit", "1/2"),
    ("Parata (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 6, "outcome.hit", "1/2"),
    ("Parata (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 5, "outcome.hit", "1"),
])
def test_defence_outcomes(label, expr, face, code, mult):
    a = duel(label, expr, face).replay()
    v = find(a, code, "101")[0]
    assert v.severity == "info"
    assert v.expected == 12
    if mult is not None:
        assert v.details["multiplier"] == mult
    if code == "outcome.defended" and mult is None:
        assert a.snapshots[-1].state.hits == ()


def test_failed_protezione_is_a_failed_defence_successful_one_is_not():
    ok = duel("Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])", "1d24+8", 10)
    ok.posts[-1] = ok.posts[-1].__class__(**{**ok.posts[-1].__dict__, "rolls": ok.posts[-1].rolls + (
        R("1d12+8", 5, "Attacco (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])"),)})
    a = ok.replay()
    assert "outcome.action_annulled" not in codes(a)
    assert a.next["incoming"][0]["total"] == 13


def test_corrected_total_decides(fight):
    # Quincy writes +6 Destrezza (live total 4): the attack's trusted total is 2 lower (RULINGS #6)
    fight.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+8", 6, "Attacco (Quincy vs Hollow): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    fight.post("Hollow", pv=52, stats=H, rolls=[R("1d12+6", 7, "Schivata (Hollow vs Quincy): (+6 [Destrezza])")])
    a = fight.replay()
    assert find(a, "dice.stat_mismatch", "100")
    v = find(a, "outcome.defended", "101")[0]
    assert v.expected == 12 and v.details["attack_rendered"] == 14


def test_sbilanciamento_gives_attacker_two_stacks_for_its_next_turn_only():
    f = duel("Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])", "1d8+6", 8)
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=52, stats=H)
    f.post("Quincy", pv=40, stats=Q)
    a = f.replay()
    assert a.posts[1].state["Quincy"]["stacks"] == {"Sbilanciamento": 2}
    assert a.posts[2].state["Quincy"]["stacks"] == {"Sbilanciamento": 2}  # acts in this turn
    assert a.posts[4].state["Quincy"]["stacks"] == {}  # gone at the start of the turn after


def test_protezione_blocks_stordimento_from_head_twelve():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+3", 12, "Attacco (Quincy vs Hollow): (-3 [Mirato Testa] +4 [Destrezza] +2 [Raggio Ottimale])")])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d24+8", 9, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    a = f.replay()
    assert a.characters["Hollow"]["stacks"] == {}
    hit = find(a, "outcome.defended", "101")[0]
    assert hit.details["multiplier"] == "1"  # ½ Protezione × 2 head critical
    assert any(v.details.get("reason") == "protezione" for v in find(a, "outcome.stacks"))


@pytest.mark.parametrize("mira,face,stacks,mult", [
    ("(+2 [Raggio Ottimale] +4 [Destrezza])", 12, {}, "2"),  # body 12: double
    ("(+2 [Raggio Ottimale] +4 [Destrezza])", 11, {}, "1"),
    ("(-3 [Mirato Testa] +2 [Raggio Ottimale] +4 [Destrezza])", 12, {"Stordimento": 2}, "2"),
    ("(-3 [Mirato Testa] +2 [Raggio Ottimale] +4 [Destrezza])", 9, {}, "2"),
    ("(-3 [Mirato Testa] +2 [Raggio Ottimale] +4 [Destrezza])", 8, {}, "1"),
    ("(-1 [Mirato Braccia] +2 [Raggio Ottimale] +4 [Destrezza])", 10, {"Storpiatura Debilitante": 1}, "1"),
    ("(-1 [Mirato Gambe] +2 [Raggio Ottimale] +4 [Destrezza])", 10, {"Storpiatura Articolare": 1}, "1"),
    ("(-1 [Mirato Gambe] +2 [Raggio Ottimale] +4 [Destrezza])", 9, {}, "1"),
])
def test_mira_die_face_effects(mira, face, stacks, mult):
    const = sum(int(x) for x in __import__("re").findall(r"[+-]\d+", mira))
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R(f"1d12{const:+d}", face, f"Attacco (Quincy vs Hollow): {mira}")])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    a = f.replay()
    assert a.characters["Hollow"]["stacks"] == stacks
    assert find(a, "outcome.hit", "101")[0].details["multiplier"] == mult


REG = registry(
    {"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}}, "Hollow": {"stats": H, "extra": {"bonus_statistica": 3}}},
    {"Freccia Sacra": {"potenziale": 10, "category": "C", "kind": "tecnica", "type": "normale"},
     "Artigli": {"potenziale": 6, "category": "D", "kind": "arma"},
     "Cero": {"potenziale": 14, "category": "B"}},
)


def test_power_clash_parata_loses():
    f = duel("Parata [Artigli] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10, reg=REG)
    a = f.replay()
    [clash] = find(a, "outcome.power_clash", "101")
    # Freccia Sacra 10 + 4 = 14 vs Artigli 6 + 3 = 9: difference 5, weaker is D → ≥ 4: intatto
    assert (clash.expected, clash.found, clash.details["outcome"]) == (14, 9, "intatto")
    assert find(a, "outcome.hit", "101")
    assert find(a, "ruling.needed", "101")  # adequacy of the defence: the master's call


def test_power_clash_counter_wins_and_continues():
    f = duel("Contrattacco [Cero] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10, reg=REG)
    f.posts[-1] = f.posts[-1].__class__(**{**f.posts[-1].__dict__, "rolls": f.posts[-1].rolls + (
        R("1d12+10", 5, "Contrattacco [Cero] (Hollow vs Quincy): (+2 [Contrattacco] +2 [Raggio Ottimale] +6 [Destrezza])"),)})
    a = f.replay()
    [clash] = find(a, "outcome.power_clash", "101")
    # Cero 14 + 3 = 17 vs Freccia 14 (C): difference 3 → dimezzato
    assert clash.details["outcome"] == "dimezzato"
    assert "outcome.hit" not in codes(a, "101")
    assert "dice.undue_bonus" not in codes(a)
    [inc] = a.next["incoming"]
    assert inc["attacker"] == "Hollow" and inc["total"] == 15
    state = a.snapshots[-1].state
    assert str(state.incoming[0].potenziale_factor) == "1/2"


def test_counter_follow_up_bonus_not_taken_is_info():
    f = duel("Contrattacco Diretto (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10)
    f.posts[-1] = f.posts[-1].__class__(**{**f.posts[-1].__dict__, "rolls": f.posts[-1].rolls + (
        R("1d12+8", 5, "Contrattacco Diretto (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])"),)})
    a = f.replay()
    [info] = find(a, "dice.bonus_not_taken", "101")
    assert info.expected == 3
    assert find(a, "outcome.hit", "101")  # Diretto: the defender takes the attack in full


def test_contrattacco_su_azione_generica_suspends():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d15+6", 3, "Spostamento (Quincy vs Hollow): (+2 [Spostamento] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d18+6", 5, "Contrattacco su Azione Generica (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    assert find(a, "outcome.suspended", "101")[0].details["attack_total"] == 9


def test_multi_target_mirato_stopped_by_one_is_annulled_for_all():
    f = Fight()
    f.post("Hollow", pv=52, stats=H)
    f.post("Orihime", pv=30, stats={"Destrezza": 2})
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 3, "Attacco [Freccia] (Quincy vs Hollow, Orihime): (-2 [Bersagli Multipli] +2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+6", 8, "Schivata (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    assert find(a, "outcome.action_annulled", "103")
    assert a.next["character"] == "Orihime" and a.next["incoming"] == []


# Confronto di Potenza at each category boundary of the weaker action [Y] (here the attack): the table of the text
BOUNDARIES = {"D": (2, 4), "C": (3, 5), "B": (3, 6), "A": (4, 6), "S": (4, 7)}


@pytest.mark.parametrize("cat,diff,outcome", [
    (cat, d, o) for cat, (half, intact) in BOUNDARIES.items()
    for d, o in ((half - 1, "entrambe_annullate"), (half, "dimezzato"), (intact - 1, "dimezzato" if intact - 1 >= half else "entrambe_annullate"), (intact, "intatto"))
])
def test_power_clash_boundaries_through_the_engine(cat, diff, outcome):
    reg = registry(
        {"Quincy": {"stats": Q, "extra": {"bonus_statistica": 0}}, "Hollow": {"stats": H, "extra": {"bonus_statistica": 0}}},
        {"Freccia Sacra": {"potenziale": 10, "category": cat}, "Spada": {"potenziale": 10 + diff, "category": "A"}},
    )
    a = duel("Parata [Spada] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10, reg=reg).replay()
    [clash] = find(a, "outcome.power_clash", "101")
    assert clash.details["outcome"] == outcome and clash.details["difference"] == diff
    assert (clash.expected, clash.found) == (10, 10 + diff)
    assert not find(a, "outcome.hit")  # the Parata intercepted: the attack is annulled either way


def test_power_clash_attack_survives_halved_and_hits():
    reg = registry(
        {"Quincy": {"stats": Q, "extra": {"bonus_statistica": 0}}, "Hollow": {"stats": H, "extra": {"bonus_statistica": 0}}},
        {"Freccia Sacra": {"potenziale": 13, "category": "B"}, "Spada": {"potenziale": 10, "category": "C"}},
    )
    f = duel("Parata [Spada] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10, reg=reg)
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 2, technique="Freccia Sacra")])
    a = f.replay()
    assert find(a, "outcome.power_clash", "101")[0].details["outcome"] == "dimezzato"
    assert find(a, "outcome.hit", "101")
    # Potenziale 13 halved → 6, + 0 − Resistenza 4 = 2
    assert codes(a, "102") == []


def test_counter_beaten_on_time_leaves_the_defender_hit():
    a = duel("Contrattacco (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 2, atk_face=12).replay()
    assert find(a, "outcome.hit", "101")[0].details["defence"] == "Contrattacco"


def test_sbilanciamento_against_a_non_physical_attack_fails():
    reg = registry({}, {"Freccia Sacra": {"potenziale": 10, "category": "B", "type": "Offensiva Spirituale"}})
    a = duel("Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])", "1d8+6", 8, reg=reg).replay()
    hit = find(a, "outcome.hit", "101")[0]
    assert "Attacchi Fisici Diretti" in hit.message
    assert a.characters["Quincy"]["stacks"] == {}


def test_roll_without_total_asks_for_a_ruling():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", None, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+6", 9, "Schivata (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    assert find(a, "dice.no_total", "101") and find(a, "ruling.needed", "101")


def test_multi_target_stopped_by_the_second_target_annuls_the_first_hit():
    f = Fight()
    f.post("Hollow", pv=52, stats=H)
    f.post("Orihime", pv=30, stats={"Destrezza": 2})
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 9, "Attacco [Freccia] (Quincy vs Hollow, Orihime): (-2 [Bersagli Multipli] +2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Orihime", pv=30, stats={"Destrezza": 2}, rolls=[R("1d24+4", 20, "Protezione (Orihime vs Quincy): (+2 [Bonus Protezione] +2 [Destrezza])")])
    a = f.replay()
    assert find(a, "outcome.hit", "103")
    # a Protezione halves: it does not stop the attack, so Hollow's hit stands
    assert len(a.snapshots[-1].state.hits) == 2
    f.posts[-1] = f.posts[-1].__class__(**{**f.posts[-1].__dict__, "rolls": (
        R("1d12+2", 12, "Schivata (Orihime vs Quincy): (+2 [Destrezza])"),)})
    a = f.replay()
    [ann] = find(a, "outcome.action_annulled", "104")
    assert "Hollow" in ann.message
    assert a.snapshots[-1].state.hits == ()


SB_REG = registry(
    {"Quincy": {"stats": Q, "extra": {"bonus_statistica": 2}}, "Hollow": {"stats": H}},
    {"Freccia Sacra": {"potenziale": 10, "category": "B"}},
)
SB_ATK = "Attacco [Freccia Sacra, Sbalzo] (Quincy vs Hollow): (-2 [Sbalzo] +2 [Raggio Ottimale] +4 [Destrezza])"


@pytest.mark.parametrize("reaction_face,ok", [(6, True), (5, False)])
def test_reazione_against_the_valore_di_sbalzo(reaction_face, ok):
    # Valore di Sbalzo = Dado 8 + Modificatore B 2 + Bonus Stat. 2 = 12; Reazione 1d12 + Destrezza 6
    f = Fight(SB_REG)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 8, SB_ATK)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla", rolls=[
        R("1d12+6", reaction_face, "Reazione (Hollow): (+6 [Destrezza])"),
        R("1d12+8", 5, "Attacco (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])"),
    ])
    a = f.replay()
    v = [x for x in find(a, "outcome.defended" if ok else "outcome.hit", "101") if x.roll == 0][0]
    assert v.expected == "12" and v.found == 6 + reaction_face
    assert bool(find(a, "outcome.action_annulled", "101")) is (not ok)


def test_reazione_needs_difesa_nulla_or_protezione_riuscita():
    f = Fight(SB_REG)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 8, SB_ATK)])
    f.post("Hollow", pv=52, stats=H, rolls=[
        R("1d12+6", 1, "Schivata (Hollow vs Quincy): (+6 [Destrezza])"),
        R("1d12+6", 12, "Reazione (Hollow): (+6 [Destrezza])"),
    ])
    a = f.replay()
    assert any("Difesa Nulla o Protezione riuscita" in v.message for v in find(a, "ruling.needed", "101"))


def test_overclaimed_bonus_protezione_is_undue_and_the_total_corrected():
    # +3 [Bonus Protezione]: the rules give +2. 3 + 9 = 12 would tie Quincy's 12 (defended); corrected 11: hit
    a = duel("Protezione (Hollow vs Quincy): (+3 [Bonus Protezione] +6 [Destrezza])", "1d24+9", 3).replay()
    [v] = find(a, "dice.undue_bonus", "101")
    assert (v.severity, v.expected, v.found) == ("error", 2, 3)
    assert v.rule == "Successo e Fallimento delle Azioni › Fattore Casualità › Protezione"
    [hit] = find(a, "outcome.hit", "101")
    assert (hit.expected, hit.found) == (12, 11)


def test_overclaimed_counter_follow_up_is_undue():
    # a Contrattacco riuscito gives +2 in Fase Offensiva, not +3 (that is the Diretto's)
    f = duel("Contrattacco [Cero] (Hollow vs Quincy): (+6 [Destrezza])", "1d18+6", 10, reg=REG)
    f.posts[-1] = f.posts[-1].__class__(**{**f.posts[-1].__dict__, "rolls": f.posts[-1].rolls + (
        R("1d12+11", 5, "Contrattacco [Cero] (Hollow vs Quincy): (+3 [Contrattacco] +2 [Raggio Ottimale] +6 [Destrezza])"),)})
    a = f.replay()
    [v] = find(a, "dice.undue_bonus", "101")
    assert (v.expected, v.found) == (2, 3)
    [inc] = a.next["incoming"]
    assert inc["total"] == 15  # 5 + 11 − 1


def test_overclaimed_preparazione_is_undue():
    f = Fight()
    f.post("Hollow", pv=52, stats=H, body="Preparazione")
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d24+11", 3, "Protezione (Hollow vs Quincy): (+3 [Preparazione] +2 [Bonus Protezione] +6 [Destrezza])")])
    a = f.replay()
    [v] = find(a, "dice.undue_bonus", "102")
    assert (v.expected, v.found) == (2, 3)


CIECA = "Attacco alla Cieca [Cero] (Hollow vs Quincy) Area 40 m: (+2 [Raggio Ottimale] +6 [Destrezza])"


@pytest.mark.parametrize("face,fails", [(7, True), (8, False)])  # Area 26-60 m, Attacco Mirato: 7 or less fails
def test_attacco_alla_cieca_fails_automatically_by_the_table(face, fails):
    f = Fight()
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", face, CIECA)])
    a = f.replay()
    annulled = find(a, "outcome.action_annulled", "100")
    assert bool(annulled) == fails
    if fails:
        [v] = annulled
        assert (v.expected, v.found, v.rule) == (7, 7, "Percezione e Mimetizzazione › Attacco alla Cieca")
        assert a.next["incoming"] == []
    else:
        assert a.next["incoming"][0]["attacker"] == "Hollow"


def test_attacco_alla_cieca_without_a_radius_goes_to_the_master():
    f = Fight()
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 3, "Attacco alla Cieca [Cero] (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    a = f.replay()
    [r] = find(a, "ruling.needed", "100")
    assert r.rule == "Percezione e Mimetizzazione › Attacco alla Cieca"
    assert a.next["incoming"]
