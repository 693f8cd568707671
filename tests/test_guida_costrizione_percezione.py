"""`guida` Costrizione/Liberazione and Percezione/Mimetizzazione computed by the step: Valore di Costrizione on the
hit, Liberazione (proper, Impropria, Gigantismo) against it, Costrizione Impropria, Percezione vs Mimetizzazione."""
from __future__ import annotations

from tests.plugins.engine import Fight, R, calc, codes, find, registry

H = {"Destrezza": 6, "Costituzione": 4}
Q = {"Destrezza": 4, "Costituzione": 5}
ATK_CATENE = "Attacco [Catene] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"  # 1d12+6
ATK_RETE = "Attacco [Rete] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
ATK_IMPROPRIA = ("Attacco [Catene, Costrizione Impropria] (Quincy vs Hollow): "
                 "(+2 [Raggio Ottimale] -2 [Costrizione Impropria] +4 [Destrezza])")  # 1d12+4
P_COSTR = "Costrizione e Liberazione › Costrizione"
P_IMPROPRIA = "Costrizione e Liberazione › Costrizioni Improprie"
P_LIB = "Costrizione e Liberazione › Liberazione"
P_LIB_IMPROPRIA = "Costrizione e Liberazione › Liberazioni Improprie"

TECHS = {"Catene": {"potenziale": 10, "category": "C", "type": "normale", "extra": {"bonus_potenziale": 3}},
         "Rete": {"potenziale": 10, "category": "C", "type": "normale", "extra": {"bonus_potenziale": 5}},
         "Scudo": {"potenziale": 8, "category": "C", "type": "difensiva", "extra": {"bonus_potenziale": 6}}}


def reg(hollow_extra=None, techs=TECHS):
    return registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}},
                     "Hollow": {"stats": H, "extra": {"bonus_statistica": 3, "bonus_potenziale": 2,
                                                      **(hollow_extra or {})}}}, techs)


def constrained(r=None, face=6, label=ATK_CATENE, expr="1d12+6", raw="Catene: 10 danni, Hollow ha un Blocco Braccia"):
    """Quincy hits Hollow (Difesa Nulla) and, in its next Fase Iniziale, declares the Costrizione (post 102)."""
    f = Fight(r or reg())
    f.post("Quincy", pv=40, stats=Q, rolls=[R(expr, face, label)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Catene", raw=raw)])
    return f


def costrizione_verdict(a, post="102"):
    [v] = [v for v in find(a, "outcome.stacks", post) if "Costrizione" in v.message]
    return v


# --- 1. Valore di Costrizione ----------------------------------------------------------------------------------

def test_valore_di_costrizione_is_computed_when_the_hit_lands():
    a = constrained().replay()
    v = costrizione_verdict(a)
    # Dado 6 (the attack's face) + Bonus Potenziale 3 (Catene) + Bonus Statistica 4 (Quincy's, as in the Potenza)
    assert v.details["valore_costrizione"] == 13
    assert v.details["steps"] == ["Valore di Costrizione: Dado 6 + Bonus Pot. 3 + Bonus Stat. 4 = 13"]
    assert "13" in v.message and v.rule == P_COSTR and v.found == ["Blocco Braccia"]
    assert a.characters["Hollow"]["costrizione"] == 13
    assert a.characters["Hollow"]["conditions"] == ["Blocco Braccia"]
    assert "ruling.needed" not in codes(a, "102")


def test_a_further_costrizione_adds_half_its_bonus_potenziale():
    f = constrained()
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"], body="Hollow si dibatte.")
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 11, ATK_RETE)])
    f.post("Hollow", pv=42, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Rete", raw="Rete: 10 danni, Blocco Gambe")])
    a = f.replay()
    v = costrizione_verdict(a, "106")
    # the second die (11) does not count: 13 + 5 // 2
    assert v.details["valore_costrizione"] == 15
    assert v.details["steps"] == ["Costrizione aggiuntiva: Valore 13 + metà Bonus Pot. 2 = 15"]
    assert a.characters["Hollow"]["costrizione"] == 15
    assert a.characters["Hollow"]["conditions"] == ["Blocco Braccia", "Blocco Gambe"]


def test_unknown_bonus_potenziale_asks_the_master_naming_it():
    techs = {"Catene": {"potenziale": 10, "category": "C", "type": "normale"}}
    a = constrained(reg(techs=techs)).replay()
    v = costrizione_verdict(a)
    assert v.details["valore_costrizione"] is None
    [r] = find(a, "ruling.needed", "102")
    assert r.details["missing"] == ["Bonus Potenziale di Catene (categoria C) nel registro"]
    assert r.details["partial"] == 10 and r.details["known"] == {"Dado": 6, "Bonus Stat.": 4}
    assert a.characters["Hollow"]["costrizione"] is None
    assert a.characters["Hollow"]["conditions"] == ["Blocco Braccia"]


def test_stated_bonus_potenziale_in_the_calculation_is_used_when_the_registry_lacks_it():
    techs = {"Catene": {"potenziale": 10, "category": "C", "type": "normale"}}
    f = Fight(reg(techs=techs))
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_CATENE)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Catene", raw="Catene: Blocco Braccia",
                                                   terms=[("+", "Potenza", 14), ("-", "Resistenza", 4),
                                                          ("+", "Bonus Potenziale", 0)])])
    a = f.replay()
    v = costrizione_verdict(a)
    assert v.details["valore_costrizione"] == 6 + 0 + 4 and v.assumption == "calcolo_dichiarato"


# --- 3. Costrizione Impropria ----------------------------------------------------------------------------------

def test_costrizione_impropria_halves_the_bonus_potenziale():
    a = constrained(face=8, label=ATK_IMPROPRIA, expr="1d12+4").replay()
    assert "dice.missing_modifier" not in codes(a, "100")
    v = costrizione_verdict(a)
    # Dado 8 + Bonus Potenziale 3 // 2 = 1 + Bonus Statistica 4
    assert v.details["valore_costrizione"] == 13 and v.details["impropria"] is True
    assert v.details["steps"][0] == "Costrizione Impropria: Bonus Potenziale dimezzato 3 → 1"
    assert v.rule == P_IMPROPRIA
    assert a.characters["Hollow"]["costrizione"] == 13


def test_costrizione_impropria_without_its_malus_is_flagged_and_still_halved():
    label = "Costrizione Impropria [Catene] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
    a = constrained(face=8, label=label).replay()
    [m] = find(a, "dice.missing_modifier", "100")
    assert m.expected == -2
    assert costrizione_verdict(a).details["valore_costrizione"] == 8 + 1 + 4


def test_a_plain_attack_of_the_same_attacker_is_not_improper():
    f = constrained(face=8, label=ATK_IMPROPRIA, expr="1d12+4")
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 6, ATK_RETE)])
    f.post("Hollow", pv=42, stats=H, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 10, technique="Rete", raw="Rete: Blocco Gambe")])
    v = costrizione_verdict(f.replay(), "106")
    assert v.details["impropria"] is False and v.details["valore_costrizione"] == 13 + 5 // 2


# --- 2. Liberazione --------------------------------------------------------------------------------------------

LIB = "Liberazione (Hollow): (+2 [Bonus Potenziale] +3 [Bonus Statistica])"  # 1d12+5


def test_liberazione_fails_then_succeeds_with_allentamento():
    f = constrained()
    f.post("Hollow", pv=42, stats=(H | {"Destrezza": (6, -1)}), registro=["-10 PV [Catene di Quincy]"],
           rolls=[R("1d12+5", 7, LIB)])
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=42, stats=H, rolls=[R("1d12+7", 7, LIB[:-1] + " +2 [Allentamento])")])
    a = f.replay()
    [no] = find(a, "outcome.liberation_failed", "103")
    # Dado 7 + Bonus Potenziale 2 (Hollow's) + Bonus Statistica 3 + Allentamento 0 = 12 < 13
    assert (no.expected, no.found, no.rule) == (13, 12, P_LIB)
    assert no.details["steps"][-1] == "12 < Valore di Costrizione 13: Allentamento 0 → 2"
    assert a.posts[3].state["Hollow"]["conditions"] == ["Blocco Braccia"]
    [ok] = find(a, "outcome.liberated", "105")
    assert (ok.expected, ok.found) == (13, 7 + 2 + 3 + 2)
    assert ok.details["allentamento"] == 2
    h = a.characters["Hollow"]
    assert (h["conditions"], h["costrizione"]) == ([], None)
    assert "ruling.needed" not in codes(a, "105")


def test_liberazione_frees_the_destrezza_malus_and_type4_stacks():
    f = constrained(raw="Catene: 10 danni, Blocco Braccia, 3 Stack di Congelamento")
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"], rolls=[R("1d12+5", 12, LIB)])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 5, "Attacco (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=42, stats=H, rolls=[R("1d12+6", 9, "Schivata (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    assert a.posts[2].state["Hollow"]["stacks"] == {"Congelamento": 3}
    [ok] = find(a, "outcome.liberated", "103")
    assert (ok.expected, ok.found) == (13, 17)
    assert a.posts[3].state["Hollow"]["stacks"] == {}
    assert find(a, "dice.stat_mismatch", "105") == []  # Destrezza 6 again: no Blocco Braccia malus


def test_liberazione_without_bonus_statistica_names_it_with_the_partial_sum():
    r = registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}},
                  "Hollow": {"stats": H, "extra": {"bonus_potenziale": 2}}}, TECHS)
    f = constrained(r)
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"],
           rolls=[R("1d12+2", 7, "Liberazione (Hollow): (+2 [Bonus Potenziale])")])
    a = f.replay()
    [n] = find(a, "ruling.needed", "103")
    assert n.details["missing"] == ["Bonus Statistica di Hollow nel registro"]
    assert n.details["known"] == {"Dado": 7, "Bonus Pot.": 2, "Allentamento": 0} and n.details["partial"] == 9
    assert n.rule == P_LIB and n.found == 9
    assert find(a, "outcome.liberated") == [] and find(a, "outcome.liberation_failed") == []


def test_liberazione_impropria_on_a_defence_halves_die_and_bonus_potenziale():
    f = constrained()
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 3, "Attacco (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=42, stats=H, rolls=[
        R("1d24+7", 21, "Protezione [Scudo, Liberazione Impropria] (Hollow vs Quincy): (+2 [Bonus Protezione] +5 [Destrezza])"),
        R("1d12+5", 12, LIB)])
    a = f.replay()
    [ok] = find(a, "outcome.liberated", "105")
    # Dado 21 → 10 (Azione Difensiva), Bonus Potenziale 6 (Scudo) → 3, Bonus Statistica 3: 16 ≥ 13
    assert (ok.expected, ok.found, ok.rule, ok.roll) == (13, 16, P_LIB_IMPROPRIA, 0)
    assert ok.details["steps"][:2] == ["Liberazione Impropria: Bonus Potenziale dimezzato 6 → 3",
                                       "Azione Difensiva: Fattore di Casualità dimezzato 21 → 10"]
    # the improper attempt counts: the proper one of the same turn is one too many
    [x] = find(a, "turn.extra_liberazione", "105")
    assert (x.roll, x.expected, x.found) == (1, 1, 2)
    assert find(a, "outcome.defended", "105")


def test_liberazione_impropria_on_an_attack_keeps_its_die_and_may_be_written_in_the_action():
    techs = TECHS | {"Esplosione": {"potenziale": 12, "category": "B", "type": "normale",
                                    "extra": {"bonus_potenziale": 7}}}
    f = constrained(reg(techs=techs))
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"], rolls=[
        R("1d12+7", 7, "Attacco [Esplosione, Liberazione Impropria] (Hollow vs Quincy): (+2 [Raggio Ottimale] +5 [Destrezza])")])
    a = f.replay()
    [ok] = find(a, "outcome.liberated", "103")
    # Dado 7 (an Azione Offensiva: not halved) + Bonus Potenziale 7 → 3 + Bonus Statistica 3 = 13 ≥ 13
    assert (ok.expected, ok.found, ok.rule) == (13, 13, P_LIB_IMPROPRIA)
    assert "Azione Difensiva: Fattore di Casualità dimezzato 7 → 3" not in ok.details["steps"]
    f2 = constrained(reg(techs=techs))
    f2.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"])
    f2.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 3, "Attacco (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f2.post("Hollow", pv=42, stats=H, rolls=[
        R("1d24+7", 11, "Protezione con Liberazione Impropria [Scudo] (Hollow vs Quincy): (+2 [Bonus Protezione] +5 [Destrezza])")])
    [no] = find(f2.replay(), "outcome.liberation_failed", "105")
    # Dado 11 → 5, Bonus Potenziale 6 → 3, Bonus Statistica 3: 11 < 13
    assert (no.expected, no.found, no.rule) == (13, 11, P_LIB_IMPROPRIA)


def test_liberazione_impropria_of_an_annulled_action_is_no_attempt():
    f = constrained()
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 11, "Attacco (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=42, stats=H, rolls=[
        R("1d12+5", 1, "Schivata (Hollow vs Quincy): (+5 [Destrezza])"),
        R("1d12+7", 12, "Attacco [Catene, Liberazione Impropria] (Hollow vs Quincy): (+2 [Raggio Ottimale] +5 [Destrezza])")])
    a = f.replay()
    assert find(a, "outcome.action_annulled", "105")
    assert find(a, "outcome.liberated") == [] and find(a, "outcome.liberation_failed") == []
    assert a.characters["Hollow"]["costrizione"] == 13


def test_gigantismo_change_uses_the_size_category_and_a_failure_annuls_it():
    r = reg({"bonus_potenziale": {"B": 4, "A": 6, "S": 8}})
    label = "Liberazione [Gigantismo 2 Taglie] (Hollow): (+3 [Bonus Statistica])"
    ok = constrained(r)
    ok.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"], rolls=[R("1d12+3", 4, label)])
    a = ok.replay()
    [v] = find(a, "outcome.liberated", "103")
    # Dado 4 + Bonus Potenziale of category A (2 Taglie) 6, not halved + Bonus Statistica 3 = 13 ≥ 13
    assert (v.expected, v.found, v.rule) == (13, 13, P_LIB_IMPROPRIA)
    assert v.details["steps"][0] == "Gigantismo (2 Taglie): Bonus Potenziale di categoria A, non dimezzato"
    ko = constrained(r)
    ko.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"], rolls=[R("1d12+3", 3, label)])
    a = ko.replay()
    [v] = find(a, "outcome.liberation_failed", "103")
    assert (v.expected, v.found) == (13, 12)
    [ann] = find(a, "outcome.action_annulled", "103")
    assert ann.details == {"gigantismo": 2} and ann.rule == P_LIB_IMPROPRIA
    assert a.characters["Hollow"]["costrizione"] == 13


def test_gigantismo_without_the_category_table_names_it():
    label = "Liberazione [Gigantismo 3 Taglie] (Hollow): (+3 [Bonus Statistica])"
    f = constrained()
    f.post("Hollow", pv=42, stats=H, registro=["-10 PV [Catene di Quincy]"], rolls=[R("1d12+3", 3, label)])
    [n] = find(f.replay(), "ruling.needed", "103")
    assert n.details["missing"] == ["Bonus Potenziale di categoria S (Gigantismo, 3 Taglie) nel registro di Hollow"]


# --- 4. Percezione, Mimetizzazione, Mascheramento ---------------------------------------------------------------

P_PERC = "Percezione e Mimetizzazione › Percezione"
P_MIM = "Percezione e Mimetizzazione › Mimetizzazione"
PREG = registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}},
                 "Hollow": {"stats": H, "extra": {"bonus_statistica": 3}}})
MIM = "Mimetizzazione [Camuffamento della Reiatsu] (Hollow): (+3 [Bonus Statistica])"  # 1d12+3
PERC = "Percezione [Percezione della Reiatsu] (Quincy vs Hollow): (+4 [Bonus Statistica])"  # 1d12+4


def hide_and_seek(mim_face: int, perc_faces: list[int], r=PREG):
    f = Fight(r)
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+3", mim_face, MIM)])
    for face in perc_faces:
        f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", face, PERC)])
        f.post("Hollow", pv=52, stats=H)
    return f


def test_mimetizzazione_sets_the_value_and_a_lower_percezione_does_not_find():
    a = hide_and_seek(8, [6]).replay()
    [h] = find(a, "outcome.hidden", "100")
    assert (h.found, h.rule) == (11, P_MIM)
    assert h.details["steps"] == ["Mimetizzazione: Dado 8 + Bonus Statistica 3 = 11"]
    [n] = find(a, "outcome.not_detected", "101")
    # Dado 6 + Bonus Statistica 4 + Concentrazione 0 = 10 < 11
    assert (n.expected, n.found, n.rule, n.details["concentrazione"]) == (11, 10, P_PERC, 0)
    assert find(a, "outcome.detected") == [] and "ruling.needed" not in codes(a)


def test_concentrazione_grows_by_two_per_repeated_attempt_until_found():
    a = hide_and_seek(8, [6, 6, 4]).replay()
    [n1] = find(a, "outcome.not_detected", "101")
    [d] = find(a, "outcome.detected", "103")
    # second attempt: 6 + 4 + Concentrazione 2 = 12 ≥ 11 (a tie finds: "non supera")
    assert (d.expected, d.found, d.details["concentrazione"]) == (11, 12, 2)
    assert d.details["steps"] == ["Percezione: Dado 6 + Bonus Statistica 4 + Concentrazione 2 = 12"]
    # found: Hollow is no longer Mimetizzato (Valore 0), so the third attempt finds it whatever the die; its post 104
    # was a turn not Mimetizzato: Concentrazione 4 − 2
    [d3] = find(a, "outcome.detected", "105")
    assert (d3.expected, d3.found, d3.details["concentrazione"]) == (0, 4 + 4 + 2, 2)
    assert "non è Mimetizzato" in d3.message


def test_concentrazione_drops_two_per_turn_the_target_is_not_mimetizzato():
    f = hide_and_seek(8, [6, 6])  # found at 103: Concentrazione 4 for the next attempt
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=52, stats=H)  # a second turn not Mimetizzato (104 was the first)
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+3", 12, MIM)])  # hides again: 15
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 6, PERC)])
    a = f.replay()
    [n] = find(a, "outcome.not_detected", "109")
    # Hollow's turns not Mimetizzato since the attempt at 103: its posts 104 and 106 → 4 − 2 − 2 = 0
    assert (n.expected, n.found, n.details["concentrazione"]) == (15, 10, 0)


def test_mascheramento_is_compared_like_mimetizzazione():
    f = Fight(PREG)
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+3", 2, "Mascheramento (Hollow): (+3 [Bonus Statistica])")])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 1, PERC)])
    a = f.replay()
    [h] = find(a, "outcome.hidden", "100")
    assert h.found == 5 and h.details["what"] == "Mascheramento"
    assert h.rule == "Percezione e Mimetizzazione › Mascheramento"
    [d] = find(a, "outcome.detected", "101")
    assert (d.expected, d.found, d.details["what"]) == (5, 5, "Mascheramento")


def test_percezione_without_bonus_statistica_names_it():
    r = registry({"Quincy": {"stats": Q}, "Hollow": {"stats": H, "extra": {"bonus_statistica": 3}}})
    f = hide_and_seek(8, [], r)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12", 6, "Percezione (Quincy vs Hollow)")])
    a = f.replay()
    [n] = find(a, "ruling.needed", "101")
    assert n.details["missing"] == ["Bonus Statistica di Quincy per la Percezione nel registro"]
    assert n.details["known"] == {"Dado": 6, "Concentrazione": 0} and n.rule == P_PERC
    assert find(a, "outcome.detected") == [] and find(a, "outcome.not_detected") == []


def test_mimetizzazione_without_bonus_statistica_names_it_and_percezione_waits_for_the_master():
    r = registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}}, "Hollow": {"stats": H}})
    f = Fight(r)
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12", 8, "Mimetizzazione (Hollow)")])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 6, PERC)])
    a = f.replay()
    [m] = find(a, "ruling.needed", "100")
    assert m.details["missing"] == ["Bonus Statistica di Hollow per la Mimetizzazione nel registro"]
    [n] = find(a, "ruling.needed", "101")
    assert n.details["missing"] == ["Valore di Mimetizzazione di Hollow (non calcolato)"]
    assert n.details["partial"] == 10
