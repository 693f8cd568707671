"""`guida` issue #13: conditions written in the Calcolo dei Danni are a report of the hit's, not a second application;
a Cura is resolved as the action it is (lands unless stopped, computed, checked, capped at the maximum)."""
from __future__ import annotations

import pytest

from scraper.damage import parse_damage_calcs
from tests.plugins.engine import Fight, R, calc, codes, find, registry

I = {"Destrezza": 6, "Costituzione": 4}
RU = {"Destrezza": 5, "Costituzione": 4}
O = {"Destrezza": 2, "Costituzione": 10}
HEAD = "Attacco [Zangetsu] (Ichigo vs Rukia): (+2 [Raggio Ottimale] -3 [Mirato Testa] +6 [Destrezza])"  # 1d12+5
LEGS = "Attacco [Zangetsu] (Ichigo vs Rukia): (+2 [Raggio Ottimale] -1 [Mirato Gambe] +6 [Destrezza])"  # 1d12+7


def zangetsu(stack=None):
    """Zangetsu in the registry, its own Stacks listed (`extra.stack`) or not (None: the registry does not say)."""
    extra = {} if stack is None else {"stack": stack}
    return registry({"Ichigo": {"stats": I, "extra": {"bonus_statistica": 4}}, "Rukia": {"stats": RU}},
                    {"Zangetsu": {"potenziale": 10, "category": "C", "owner": "Ichigo", "extra": extra}})


def aimed(raw, *, face=12, label=HEAD, expr="1d12+5", result=20, reg=None):
    """Ichigo's aimed Zangetsu lands on Rukia (Difesa Nulla); Ichigo's Calcolo (post 102) writes `raw`."""
    f = Fight(reg)
    f.post("Ichigo", pv=60, stats=I, rolls=[R(expr, face, label)])
    f.post("Rukia", pv=50, stats=RU, body="Difesa Nulla")
    f.post("Ichigo", pv=60, stats=I, damage=[calc("Rukia", result, technique="Zangetsu", raw=raw)])
    return f


# --- 1. the written conditions are a report ---------------------------------------------------------------------

def test_head_twelve_written_in_the_calcolo_is_applied_once_and_the_fight_audits_clean():
    # the issue's fight: 12 at the head → ×2 and 2 Stordimento; the Calcolo reports them; Rukia's correct −2
    # Schivata ties Ichigo's 12 (half damage), Ichigo's correct 5, Rukia's Registro: no error, no warning
    f = aimed("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 4 x 2 = 20 Danni, Mira Testa, "
              "2 Stack di Stordimento")
    f.posts[2] = f.posts[2].__class__(**{**f.posts[2].__dict__, "rolls": (
        R("1d12+8", 4, "Attacco [Zangetsu] (Ichigo vs Rukia): (+2 [Raggio Ottimale] +6 [Destrezza])"),)})
    f.post("Rukia", pv=30, stats=RU, registro=["-20 PV [Zangetsu di Ichigo]"],
           rolls=[R("1d12+3", 9, "Schivata (Rukia vs Ichigo): (+5 [Destrezza] -2 [Stordimento])")])
    f.post("Ichigo", pv=60, stats=I, damage=[calc("Rukia", 5, technique="Zangetsu",
                                                   raw="Zangetsu su Rukia: (14 - 4) / 2 = 5 Danni")])
    f.post("Rukia", pv=25, stats=RU, registro=["-5 PV [Zangetsu di Ichigo]"])
    a = f.replay()
    assert [c for p in a.posts for c in codes(a, p.id) if not c.startswith(("outcome.", "ruling."))] == []
    assert a.posts[2].state["Rukia"]["stacks"] == {"Stordimento": 2}  # not 4
    assert find(a, "outcome.hit", "103")[0].details["multiplier"] == "1/2"  # 12 + 0 = 12 against 9 + 3 = 12
    assert a.characters["Rukia"]["pv"] == 25


@pytest.mark.parametrize("line,result", [
    ("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 4 x 2 = 20 Danni, Mira Testa, "
     "2 Stack di Stordimento", 20),
    ("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 4 = 10 Danni, 2 Stack di Stordimento", 10),
    ("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 4 = 10 Danni + 1 Stack di Storpiatura "
     "Articolare", 10),
    ("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 4 = 10 Danni 1 Stack di Sbilanciamento", 10),
    ("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 4 = 10 Danni; Sbilanciamento 1", 10),
])
def test_conditions_reported_after_the_result_are_text_not_arithmetic(line, result):
    [c] = parse_damage_calcs(line)
    assert (c.result, c.value, c.target) == (result, result, "Rukia")
    assert all(t.name != "Mira Testa" for t in c.terms)


def test_after_the_result_an_operation_still_goes_on():
    [c] = parse_damage_calcs("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 6 = 8 Danni x2")
    assert (c.result, c.value) == (None, 16)  # "= 8 Danni x2": 8 is not the end of the calculation
    [c] = parse_damage_calcs("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Armatura 6,5 = 7,5 Danni")
    assert (c.result, c.value) == (7.5, 7.5)  # a decimal comma is no list


def test_the_issue_s_fight_from_the_written_text_audits_clean():
    # the same fight, every Calcolo read by the scraper from the line the player wrote
    line = ("Calcolo Danni [Zangetsu] (Ichigo vs Rukia): Potenza 14 - Resistenza 4 x 2 = 20 Danni, Mira Testa, "
            "2 Stack di Stordimento")
    f = Fight()
    f.post("Ichigo", pv=60, stats=I, rolls=[R("1d12+5", 12, HEAD)])
    f.post("Rukia", pv=50, stats=RU, body="Difesa Nulla")
    f.post("Ichigo", pv=60, stats=I, damage=parse_damage_calcs(line),
           rolls=[R("1d12+8", 4, "Attacco [Zangetsu] (Ichigo vs Rukia): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    f.post("Rukia", pv=30, stats=RU, registro=["-20 PV [Zangetsu di Ichigo]"],
           rolls=[R("1d12+3", 9, "Schivata (Rukia vs Ichigo): (+5 [Destrezza] -2 [Stordimento])")])
    f.post("Ichigo", pv=60, stats=I, damage=parse_damage_calcs(
        "Calcolo Danni [Zangetsu] (Ichigo vs Rukia): (Potenza 14 - Resistenza 4) / 2 = 5 Danni"))
    f.post("Rukia", pv=25, stats=RU, registro=["-5 PV [Zangetsu di Ichigo]"])
    a = f.replay()
    assert [c for p in a.posts for c in codes(a, p.id) if not c.startswith(("outcome.", "ruling."))] == []
    assert a.posts[2].state["Rukia"]["stacks"] == {"Stordimento": 2}
    assert a.characters["Rukia"]["pv"] == 25


def test_head_twelve_not_written_is_a_missing_condition_and_the_state_has_it():
    a = aimed("Zangetsu su Rukia: 20 Danni").replay()
    [v] = find(a, "damage.missing_condition", "102")
    assert (v.severity, v.expected, v.found, v.rule) == ("warning", 2, 0, "Calcolo dei Danni › Resistenza e Armatura")
    assert "2 Stack di Stordimento" in v.message and "dado 12" in v.message
    assert a.characters["Rukia"]["stacks"] == {"Stordimento": 2}


def test_stordimento_written_on_a_head_ten_is_undue_when_the_registry_knows_the_technique():
    # a 10 at the head doubles the damage but gives no Stordimento (only a 12 does); Zangetsu lists no Stacks
    a = aimed("Zangetsu su Rukia: 20 Danni, 2 Stack di Stordimento", face=10, reg=zangetsu({})).replay()
    [v] = find(a, "stacks.undue", "102")
    assert (v.severity, v.expected, v.found, v.rule) == ("error", 0, 2, "Successo e Fallimento delle Azioni › Fattore Mira")
    assert "Stordimento solo con 12" in v.message and "Zangetsu (registro): nessuna Stack" in v.message
    assert a.characters["Rukia"]["stacks"] == {}  # the state follows the rules
    assert codes(a, "102", severity="error") == ["stacks.undue"]


def test_stordimento_written_on_a_head_ten_without_registry_is_taken_once_and_says_so():
    a = aimed("Zangetsu su Rukia: 20 Danni, 2 Stack di Stordimento", face=10).replay()
    assert find(a, "stacks.undue") == []
    [v] = find(a, "outcome.stacks", "102")
    assert (v.found, v.assumption) == ({"Stordimento": 2}, "condizioni_dichiarate")
    assert "prese una volta" in v.message
    assert a.characters["Rukia"]["stacks"] == {"Stordimento": 2}


def test_leg_shot_storpiatura_written_once_no_over_limit_and_the_right_destrezza():
    # Mirato Gambe with a 10: 1 Storpiatura Articolare (Destrezza 5 → 2), reported; Rukia's next roll with +2 is right
    f = aimed("Zangetsu su Rukia: 10 Danni, 1 Stack di Storpiatura Articolare", face=10, label=LEGS, expr="1d12+7",
              result=10)
    f.post("Rukia", pv=40, stats=RU, registro=["-10 PV [Zangetsu di Ichigo]"],
           rolls=[R("1d12+2", 5, "Attacco (Rukia vs Ichigo): (+2 [Destrezza])")])
    a = f.replay()
    assert a.characters["Rukia"]["stacks"] == {"Storpiatura Articolare": 1}
    assert [c for c in codes(a) if c in ("stacks.over_limit", "dice.stat_mismatch", "damage.missing_condition")] == []
    wrong = aimed("Zangetsu su Rukia: 10 Danni, 2 Stack di Storpiatura Articolare", face=10, label=LEGS,
                  expr="1d12+7", result=10, reg=zangetsu({})).replay()
    [v] = find(wrong, "stacks.undue", "102")
    assert (v.expected, v.found) == (1, 2)
    assert wrong.characters["Rukia"]["stacks"] == {"Storpiatura Articolare": 1}


@pytest.mark.parametrize("written,verdict", [
    ("Zangetsu su Rukia: 10 Danni, 1 Stack di Sbilanciamento", None),
    ("Zangetsu su Rukia: 10 Danni", "damage.missing_condition"),
    ("Zangetsu su Rukia: 10 Danni, 3 Stack di Sbilanciamento", "stacks.undue"),
])
def test_a_technique_s_own_stacks_from_the_registry_are_applied_when_it_lands(written, verdict):
    # Zangetsu (registry) applies 1 Sbilanciamento by itself: the hit gives it, the Calcolo only reports it
    a = aimed(written, face=5, label="Attacco [Zangetsu] (Ichigo vs Rukia): (+2 [Raggio Ottimale] +6 [Destrezza])",
              expr="1d12+8", result=10, reg=zangetsu({"Sbilanciamento": 1})).replay()
    assert a.posts[1].state["Rukia"]["stacks"] == {"Sbilanciamento": 1}
    assert a.characters["Rukia"]["stacks"] == {"Sbilanciamento": 1}
    got = [c for c in codes(a, "102") if c in ("damage.missing_condition", "stacks.undue")]
    assert got == ([verdict] if verdict else [])
    if verdict:
        [v] = find(a, verdict, "102")
        assert (v.expected, v.found) == (1, 0 if verdict == "damage.missing_condition" else 3)


# --- 2. the Cura ----------------------------------------------------------------------------------------------

CURA = "Cura [Kaido] (Orihime vs Ichigo): (+2 [Destrezza])"  # 1d12+2


def cure_reg(**tech):
    return registry({"Orihime": {"stats": O, "extra": {"bonus_statistica": 5}},
                     "Ichigo": {"stats": I, "resources": {"PV": 60}}},
                    {"Kaido": {"potenziale": 8, "category": "C", "type": "cura", "owner": "Orihime"},
                     "Rigenerazione": {"category": "B", "owner": "Orihime", "extra": {"statistica": "Costituzione"}},
                     **tech})


def cure_fight(written, *, pv=50, answer=(), label=CURA, expr="1d12+2", registro=None, registro_pv=None):
    """Orihime's Kaido on Ichigo (100); Ichigo's post (101); Orihime's Calcolo delle Cure (102): [8 + 5/5] / 2 = 4."""
    f = Fight(cure_reg())
    f.post("Orihime", pv=30, stats=O, rolls=[R(expr, 7, label)])
    f.post("Ichigo", pv=(pv, 60), stats=I, rolls=list(answer))
    f.post("Orihime", pv=30, stats=O,
           damage=parse_damage_calcs(f"Cura [Kaido] (Orihime vs Ichigo): [8 + (5 / 5)] / 2 = {written} PV"))
    if registro is not None:
        f.post("Ichigo", pv=(registro_pv, 60), stats=I, registro=registro)
    return f


def test_a_cura_that_lands_is_computed_and_recorded_by_the_healed_character():
    a = cure_fight(4, registro=["+4 PV [Kaido di Orihime]"], registro_pv=54).replay()
    [v] = find(a, "outcome.cure", "102")
    assert (v.expected, v.found, v.rule, v.assumption) == (4, 4, "Calcolo delle Cure › Tipologie di Cura", None)
    assert "Nel Registro di Ichigo: +4 PV" in v.message
    assert codes(a, severity="error") == [] and codes(a, severity="warning") == []
    assert a.characters["Ichigo"]["pv"] == 54


def test_a_wrong_cura_is_flagged_and_the_registro_asks_for_the_right_amount():
    a = cure_fight(7, registro=["+7 PV [Kaido di Orihime]"], registro_pv=57).replay()
    [v] = find(a, "damage.miscalculated", "102")
    assert (v.expected, v.found) == (4, 7)
    [r] = find(a, "registro.missing_damage", "103")
    assert (r.expected, r.found) == (4, 7) and "la cura da registrare è +4" in r.message
    assert a.characters["Ichigo"]["pv"] == 54


def test_a_cura_stopped_by_a_contrattacco_su_azione_generica_does_not_land():
    stop = R("1d18+6", 15, "Contrattacco su Azione Generica (Ichigo vs Orihime): (+6 [Destrezza])")  # 21 ≥ 9
    a = cure_fight(4, answer=[stop], registro=[], registro_pv=50).replay()
    [s] = find(a, "outcome.action_annulled", "101")
    assert "non va a segno su Ichigo" in s.message and s.rule == "Calcolo delle Cure › Tipologie di Cura"
    [v] = find(a, "damage.no_hit", "102")
    assert (v.severity, v.details["fermata"]) == ("error", "101")
    assert find(a, "outcome.cure") == [] and a.characters["Ichigo"]["pv"] == 50
    # beaten on time (5 + 6 = 11 ≥ 9 is in time; 2 + 6 = 8 < 9 is not): the Cura lands
    late = R("1d18+6", 2, "Contrattacco su Azione Generica (Ichigo vs Orihime): (+6 [Destrezza])")
    b = cure_fight(4, answer=[late]).replay()
    assert find(b, "damage.no_hit") == [] and find(b, "outcome.cure", "102")[0].expected == 4


def test_an_opponent_may_stop_a_self_cura():
    f = Fight(cure_reg())
    f.post("Hollow", pv=52, stats=I)
    f.post("Orihime", pv=20, stats=O, rolls=[R("1d12+2", 7, "Cura [Kaido] (Orihime): (+2 [Destrezza])")])
    f.post("Hollow", pv=52, stats=I, rolls=[
        R("1d18+6", 10, "Contrattacco su Azione Generica (Hollow vs Orihime): (+6 [Destrezza])")])
    f.post("Orihime", pv=20, stats=O, damage=parse_damage_calcs("Cura [Kaido] (Orihime): [8 + (5 / 5)] / 2 = 4 PV"))
    a = f.replay()
    assert "non va a segno su Orihime" in find(a, "outcome.action_annulled", "102")[0].message
    assert [v.code for v in find(a, "damage.no_hit", "103")] == ["damage.no_hit"]
    # nobody stops it: Orihime records her own +4 in her next Registro
    g = Fight(cure_reg())
    g.post("Hollow", pv=52, stats=I)
    g.post("Orihime", pv=20, stats=O, rolls=[R("1d12+2", 7, "Cura [Kaido] (Orihime): (+2 [Destrezza])")])
    g.post("Hollow", pv=52, stats=I)
    g.post("Orihime", pv=20, stats=O, damage=parse_damage_calcs("Cura [Kaido] (Orihime): [8 + (5 / 5)] / 2 = 4 PV"))
    g.post("Hollow", pv=52, stats=I)
    g.post("Orihime", pv=20, stats=O, registro=[])
    b = g.replay()
    assert find(b, "outcome.cure", "103")[0].expected == 4
    [r] = find(b, "registro.missing_damage", "105")
    assert (r.expected, r.found) == (4, None) and "la cura di Orihime [Kaido]: +4 PV" in r.message


def test_a_cura_never_lifts_pv_above_the_maximum_and_says_what_to_record():
    # Ichigo at 58 of 60: the cure of 4 gives back 2; the Registro records +2 and PV 60
    a = cure_fight(4, pv=58, registro=["+2 PV [Kaido di Orihime]"], registro_pv=60).replay()
    [v] = find(a, "outcome.cure", "102")
    assert (v.expected, v.found, v.assumption) == (2, 4, "cure_entro_il_massimo")
    assert "Ichigo ha 58 PV su 60: ne recupera 2, non 4" in v.message and "Nel Registro di Ichigo: +2 PV" in v.message
    assert codes(a, severity="error") == [] and a.characters["Ichigo"]["pv"] == 60
    # the issue's case: the Registro writes the whole cure, PV 62 > 60 → told the amount, PV stay at 60
    b = cure_fight(4, pv=58, registro=["+4 PV [Kaido di Orihime]"], registro_pv=62).replay()
    [r] = find(b, "registro.missing_damage", "103")
    assert (r.expected, r.found) == (2, 4)
    assert b.characters["Ichigo"]["pv"] == 60
    # the forum lifts the cap: no limit
    c = cure_fight(4, pv=58, registro=["+4 PV [Kaido di Orihime]"], registro_pv=62).replay(
        settings={"cure_entro_il_massimo": False})
    assert find(c, "outcome.cure", "102")[0].expected == 4 and c.characters["Ichigo"]["pv"] == 62


DIST = "Cura [Kaido] (Orihime vs Ichigo): (+2 [Raggio Ottimale] +2 [Destrezza])"  # 1d12+4


@pytest.mark.parametrize("setting,code", [(None, "dice.distance_on_cure"), ("attacco", None),
                                          ("esclusa", "dice.factor_out_of_range")])
def test_fattore_distanza_on_a_cura_follows_the_setting(setting, code):
    settings = {} if setting is None else {"distanza_cura": setting}
    a = cure_fight(4, label=DIST, expr="1d12+4").replay(settings=settings)
    assert codes(a, "100") == ([code] if code else [])
    if code == "dice.distance_on_cure":
        [v] = find(a, code, "100")
        assert (v.severity, v.found, v.assumption) == ("warning", 2, "distanza_cura")
        assert v.rule == "Successo e Fallimento delle Azioni › Fattore Distanza" and "`distanza_cura`" in v.message
    assert find(a, "outcome.cure", "102")[0].expected == 4  # the Cura lands either way


def test_an_armatura_that_blocks_danni_puri_halves_its_potenziale_off_the_cura():
    reg = cure_reg(**{"Scudo": {"kind": "armatura", "potenziale": 4, "owner": "Ichigo",
                                "extra": {"attiva": True, "blocca_puri": True}}})
    chars = dict(reg.characters)
    chars["Ichigo"] = chars["Ichigo"].__class__(**{**chars["Ichigo"].__dict__, "techniques": ("Scudo",)})
    f = cure_fight(4)
    f.registry = reg.__class__(characters=chars, techniques=reg.techniques, sources=reg.sources)
    a = f.replay()
    [v] = find(a, "damage.miscalculated", "102")  # (9 − 2) / 2 = 3
    assert (v.expected, v.found, v.rule) == (3, 4, "Calcolo delle Cure › Resistenza e Armatura")


@pytest.mark.parametrize("lines,expected,errors", [
    (["Rigenerazione [Rigenerazione] (Orihime): 10 / 5 = 2 PV"], 2, []),
    (["Rigenerazione [Rigenerazione] (Orihime): 10 / 3 = 3 PV"], 2, ["damage.miscalculated"]),
])
def test_rigenerazione_by_category_one_per_turn(lines, expected, errors):
    # category B: 1 PV every 5 levels of Costituzione 10 → 2
    f = Fight(cure_reg())
    f.post("Orihime", pv=(20, 30), stats=O, damage=[c for line in lines for c in parse_damage_calcs(line)])
    f.post("Hollow", pv=52, stats=I)
    f.post("Orihime", pv=(22, 30), stats=O, registro=[f"+{expected} PV [Rigenerazione di Orihime]"])
    a = f.replay()
    assert codes(a, "100", severity="error") == errors
    assert find(a, "outcome.cure", "100")[0].expected == expected
    assert codes(a, "102", severity="error") == [] and a.characters["Orihime"]["pv"] == 22


def test_two_rigenerazioni_in_one_turn_only_the_strongest_counts():
    reg = cure_reg(**{"Luce": {"category": "S", "owner": "Orihime", "extra": {"statistica": "Costituzione"}}})
    f = Fight(reg)
    f.post("Orihime", pv=(20, 30), stats=O, damage=[
        *parse_damage_calcs("Rigenerazione [Rigenerazione] (Orihime): 10 / 5 = 2 PV"),
        *parse_damage_calcs("Rigenerazione [Luce] (Orihime): 10 / 3 = 3 PV")])  # S: 10 / 3 = 3
    a = f.replay()
    [v] = find(a, "damage.miscalculated", "100")
    assert (v.expected, v.found, v.details["amounts"]) == (3, 5, [2, 3])
    assert [x.expected for x in find(a, "outcome.cure", "100")] == [3]


@pytest.mark.parametrize("written,errors", [(4, []), (7, ["damage.miscalculated"])])
def test_a_calcolo_delle_cure_written_with_the_cura_is_checked_when_it_resolves(written, errors):
    # the target's Difesa plays no part, so the Calcolo may come in the Cura's own post (100); it is checked when
    # the Cura resolves (102, after the post in which it could be stopped), never reported missing
    f = Fight(cure_reg())
    f.post("Orihime", pv=30, stats=O, rolls=[R("1d12+2", 7, CURA)],
           damage=parse_damage_calcs(f"Cura [Kaido] (Orihime vs Ichigo): [8 + (5 / 5)] / 2 = {written} PV"))
    f.post("Ichigo", pv=(50, 60), stats=I)
    f.post("Orihime", pv=30, stats=O)
    f.post("Ichigo", pv=(54, 60), stats=I, registro=["+4 PV [Kaido di Orihime]"])
    a = f.replay()
    assert codes(a, severity="error") == errors and find(a, "damage.missing_calc") == []
    if errors:
        [v] = find(a, "damage.miscalculated", "102")
        assert (v.expected, v.found) == (4, 7) and "scritto con la Cura, nel post 100" in v.message
    assert find(a, "outcome.cure", "102")[0].details["pv_recuperati"] == 4
    assert a.characters["Ichigo"]["pv"] == 54
