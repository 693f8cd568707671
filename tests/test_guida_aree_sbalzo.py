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
    from engine.rulesets.guida.reazione import sbalzo_dms
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


# --- 3. Aree di Controllo Espansive in the state -------------------------------------------------------

def aree_reg(saturazione=6, nome="Cortina Velenosa"):
    extra = {"area": "espansiva", "area_nome": nome}
    if saturazione is not None:
        extra["saturazione"] = saturazione
    return registry(
        {"Quincy": {"stats": Q, "extra": {"bonus_statistica": 4}}, "Hollow": {"stats": H, "extra": {"bonus_statistica": 3}}},
        {"Nube Tossica": {"potenziale": 8, "category": "B", "extra": extra},
         "Freccia Sacra": {"potenziale": 10, "category": "C"},
         "Pioggia di Frecce": {"potenziale": 12, "category": "A"},
         "Luce Sacra": {"potenziale": 14, "category": "S"}})


CREA = "Attacco [Nube Tossica] (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])"  # 1d12+8
ATK_H = "Attacco (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])"


def saturazione(audit, post_index):
    return {a.nome: a.saturazione for a in audit.snapshots[post_index].state.aree}


def test_a_technique_creates_an_area_espansiva():
    f = Fight(aree_reg())
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, CREA)])
    a = f.replay()
    [v] = find(a, "outcome.area", "100")
    assert (v.severity, v.found, v.rule) == ("info", 6, "Aree di Controllo › Creazione di Aree di Controllo")
    d = v.details
    assert (d["area"], d["event"], d["saturazione"], d["raggio_m"], d["potenziale"], d["owner"]) == (
        "Cortina Velenosa", "creata", 6, 25, 6, "Hollow")
    assert "perde 1 Stack di Saturazione al turno 3 di Hollow" in v.message
    [area] = a.snapshots[-1].state.aree
    assert (area.decay_anchor, area.tecnica, area.post) == (1, "Nube Tossica", "100")
    # the next hint shows it, the existing keys untouched
    [row] = a.next["aree"]
    assert (row["nome"], row["saturazione"], row["raggio_m"], row["potenziale"], row["prossima_perdita"]) == (
        "Cortina Velenosa", 6, 25, 6, {"turn": 3, "character": "Hollow", "stacks": 1})
    assert any(h.startswith("Area di Controllo Cortina Velenosa di Hollow: Saturazione 6") for h in a.next["hints"])


def test_no_area_no_key_in_the_hint():
    f = Fight(aree_reg())
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, ATK_H)])
    a = f.replay()
    assert "aree" not in a.next and a.snapshots[-1].state.aree == ()


@pytest.mark.parametrize("start,by_turn", [
    (6, [6, 5, 5, 4, 4]),          # 1-7: −1 every 2 turns of the owner
    (8, [7, 7, 6, 6, 5]),          # 8-15: −1 every turn, then 1-7
    (16, [14, 13, 12, 11, 10]),    # 16-24: −2, then 8-15: −1
    (25, [22, 20, 18, 16, 14]),    # 25+: −3, then 16-24: −2
    (2, [2, 1, 1, None, None]),    # down to 0: the Area vanishes
])
def test_saturazione_decays_at_the_owners_turns(start, by_turn):
    f = Fight(aree_reg(start))
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, CREA)])
    for _ in range(5):
        f.post("Quincy", stats=Q)
        f.post("Hollow", stats=H)
    a = f.replay()
    got = [saturazione(a, k).get("Cortina Velenosa") for k in range(2, 12, 2)]
    assert got == by_turn
    # Quincy's posts do not move it
    assert [saturazione(a, k).get("Cortina Velenosa") for k in range(1, 11, 2)] == [start] + by_turn[:-1]
    decays = find(a, "outcome.area")[1:]
    assert all(v.rule == "Aree di Controllo › Tipologie di Aree di Controllo" for v in decays)
    if start == 2:
        [gone] = [v for v in decays if v.details["event"] == "scomparsa"]
        assert (gone.post, gone.expected, gone.found) == ("108", 1, 0)  # Hollow's 5th turn
        assert "l'Area di Controllo scompare" in gone.message
        assert "aree" not in a.next


def test_missing_saturazione_asks_the_master():
    f = Fight(aree_reg(None))
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, CREA)])
    a = f.replay()
    [v] = find(a, "ruling.needed", "100")
    assert "`extra.saturazione`" in v.message and v.rule == "Aree di Controllo › Creazione di Aree di Controllo"
    assert a.snapshots[-1].state.aree == ()


def master_area_fight(line, *rest):
    f = Fight(aree_reg())
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=52, stats=H)
    f.master(line)
    for author, rolls in rest:
        f.post(author, stats=Q if author == "Quincy" else H, rolls=rolls)
    return f.replay()


def test_master_declares_an_area_of_the_environment():
    a = master_area_fight("La nebbia sale.\nArea: Cortina Fumogena (Espansiva), Saturazione 10, di Quincy; "
                          "dentro: Hollow, Quincy", ("Quincy", []), ("Hollow", []), ("Quincy", []))
    [v] = find(a, "outcome.area", "102")
    d = v.details
    assert (d["event"], d["saturazione"], d["raggio_m"], d["potenziale"], d["owner"], d["dentro"]) == (
        "creata", 10, 60, 10, "Quincy", ["Hollow", "Quincy"])
    # 8-15: −1 at each of Quincy's turns (its 2nd and 3rd), not at Hollow's
    assert [saturazione(a, k)["Cortina Fumogena"] for k in (3, 4, 5)] == [9, 9, 8]
    [d1] = find(a, "outcome.area", "103")
    assert (d1.expected, d1.found, d1.details["event"]) == (10, 9, "decadimento")
    assert not find(a, "outcome.area", "104")


def test_master_area_without_owner_runs_on_the_first_of_the_turn_order():
    a = master_area_fight("Area: Cortina Fumogena (Espansiva), Saturazione 8", ("Quincy", []), ("Hollow", []))
    assert a.snapshots[2].state.aree[0].owner == "Quincy"
    assert [saturazione(a, k)["Cortina Fumogena"] for k in (3, 4)] == [7, 7]


def test_master_updates_and_ends_an_area():
    f = Fight(aree_reg())
    f.post("Quincy", pv=40, stats=Q)
    f.master("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Quincy")
    f.master("Area: Cortina Fumogena, Saturazione 4; dentro: Hollow")
    f.master("Area: Cortina Fumogena distrutta")
    a = f.replay()
    [upd] = find(a, "outcome.area", "102")
    assert (upd.details["event"], upd.expected, upd.found, upd.details["dentro"]) == ("aggiornata", 10, 4, ["Hollow"])
    assert saturazione(a, 2) == {"Cortina Fumogena": 4}
    [end] = find(a, "outcome.area", "103")
    assert end.details["event"] == "scomparsa" and a.snapshots[-1].state.aree == ()
    assert end.rule == "Aree di Controllo › Distruzione di Aree di Controllo"


@pytest.mark.parametrize("label,removed", [
    ("Attacco [Pioggia di Frecce] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])", 1),        # A
    ("Attacco [Luce Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])", 2),               # S
    ("Attacco ad Area [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])", 1),    # Area
    ("Attacco ad Area Totale [Luce Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])", 4),  # S + Totale
    ("Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])", 0),            # C mirato
])
def test_attacks_inside_the_area_remove_saturazione(label, removed):
    a = master_area_fight("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Hollow; dentro: Hollow",
                          ("Quincy", [R("1d12+6", 5, label)]))
    assert saturazione(a, 3) == {"Cortina Fumogena": 10 - removed}
    got = find(a, "outcome.area", "103")
    if removed:
        [v] = got
        assert (v.expected, v.found, v.details["event"], v.roll) == (10, 10 - removed, "rimozione", 0)
        assert v.message.startswith("Attacco di Quincy dentro Cortina Fumogena: ")
    else:
        assert got == []


def test_attack_outside_the_area_removes_nothing_and_one_naming_it_does():
    outside = "Attacco [Pioggia di Frecce] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
    a = master_area_fight("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Hollow; dentro: nessuno",
                          ("Quincy", [R("1d12+6", 5, outside)]))
    assert saturazione(a, 3) == {"Cortina Fumogena": 10}
    named = "Attacco [Pioggia di Frecce, Cortina Fumogena] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
    a = master_area_fight("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Hollow",
                          ("Quincy", [R("1d12+6", 5, named)]))
    assert saturazione(a, 3) == {"Cortina Fumogena": 9}


def test_an_attack_empties_the_area_and_it_vanishes():
    label = "Attacco [Luce Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
    a = master_area_fight("Area: Cortina Fumogena (Espansiva), Saturazione 1, di Hollow; dentro: Quincy",
                          ("Quincy", [R("1d12+6", 5, label)]))
    [v] = find(a, "outcome.area", "103")
    assert (v.details["event"], v.expected, v.found) == ("scomparsa", 1, 0)
    assert "l'Area di Controllo scompare" in v.message
    assert a.snapshots[-1].state.aree == () and "aree" not in a.next


def test_cortina_velenosa_poisons_who_is_inside_each_turn():
    f = Fight(aree_reg(6))
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, CREA)], body="Area: Cortina Velenosa; dentro: Quincy")
    f.post("Quincy", pv=40, stats=Q, body="Difesa Nulla")
    f.post("Hollow", stats=H)
    f.post("Quincy", stats=Q)
    f.post("Hollow", stats=H)   # Hollow's 3rd turn: Saturazione 6 → 5
    f.post("Quincy", stats=Q)
    a = f.replay()
    assert [v.details["event"] for v in find(a, "outcome.area", "100")] == ["creata", "dentro"]
    # 6 Saturazione → 3 Stack Veleno per Turno; 5 → 2
    poison = [(v.post, v.found) for v in find(a, "outcome.area") if v.details["event"] == "veleno"]
    assert poison == [("101", 3), ("103", 3), ("105", 2)]
    assert a.characters["Quincy"]["stacks"] == {"Avvelenamento": 8}
    assert a.characters["Hollow"]["stacks"] == {}
    [row] = a.next["aree"]
    assert row["dentro"] == ["Quincy"] and row["veleno_per_turno"] == 2


def test_cortina_velenosa_without_who_is_inside_asks_the_master():
    f = Fight(aree_reg(6))
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, CREA)])
    f.post("Quincy", pv=40, stats=Q, body="Difesa Nulla")
    f.post("Hollow", stats=H)
    a = f.replay()
    assert not [v for v in find(a, "outcome.area") if v.details["event"] == "veleno"]
    [v] = find(a, "ruling.needed", "102")
    assert v.rule == "Aree di Controllo › Aree di Controllo Note" and v.details["veleno_per_turno"] == 3
    assert a.characters["Quincy"]["stacks"] == {}


def test_contrattacco_riuscito_destroys_the_area_in_creation():
    f = Fight(aree_reg(6))
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 5, CREA)])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d18+4", 12, "Contrattacco Diretto (Quincy vs Hollow): (+4 [Destrezza])")])
    a = f.replay()
    [v] = find(a, "outcome.area", "101")
    assert (v.details["event"], v.details["area"], v.rule) == (
        "distrutta", "Cortina Velenosa", "Aree di Controllo › Distruzione di Aree di Controllo")
    assert a.snapshots[-1].state.aree == ()
    # beaten on time: the Area is created all the same
    f.posts[-1] = f.posts[-1].__class__(**{**f.posts[-1].__dict__, "rolls": (
        R("1d18+4", 2, "Contrattacco Diretto (Quincy vs Hollow): (+4 [Destrezza])"),)})
    a = f.replay()
    assert not find(a, "outcome.area", "101") and saturazione(a, 1) == {"Cortina Velenosa": 6}


@pytest.mark.parametrize("reaction_face,ok", [(6, True), (5, False)])
def test_reazione_riuscita_means_no_danno_ambientale(reaction_face, ok):
    # Valore di Sbalzo 12; Reazione face + 6. Danno Normale: 10 + 2 − 4 = 8. Danno Ambientale (B): Dado 8 / 2 = 4;
    # (4 + 2 − 4) / 2 = 1, only when the Reazione fails
    f = Fight(sb_reg())
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 8, SB_ATK)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla",
           rolls=[R("1d12+6", reaction_face, "Reazione (Hollow): (+6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 8, technique="Freccia Sacra"), ambientale(1)])
    a = f.replay()
    if ok:
        [v] = find(a, "damage.miscalculated", "102")
        assert (v.expected, v.found, v.rule) == (0, 1, "Sbalzo e Reazione › Reazione")
        assert [r["amount"] for r in a.next["registro"]] == [-8]
    else:
        assert codes(a, "102") == []
        assert sorted(r["amount"] for r in a.next["registro"]) == [-8, -1]


def test_armatura_given_way_to_a_danno_ambientale_protects_no_more_that_turn():
    # Quincy's Luce Pura ignores the Armatura; its Danno Ambientale (19 > Armatura 10) makes it give way, so
    # Orihime's Freccia Sacra, resolved in the same turn of Hollow, meets none: 14 − 4 = 10 (with it: 7)
    reg = armoured(6)
    reg.characters["Orihime"] = reg.characters["Quincy"].__class__(
        name="Orihime", stats=reg.characters["Quincy"].stats, extra={"bonus_statistica": 4})
    for stated, expected in ((10, None), (7, 10)):
        f = Fight(reg)
        f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 10, ATK.format(t="Luce Pura"))])
        f.post("Orihime", pv=30, stats=Q, rolls=[R("1d12+6", 5, "Attacco [Freccia Sacra] (Orihime vs Hollow): "
                                                  "(+2 [Raggio Ottimale] +4 [Destrezza])")])
        f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
        f.post("Quincy", pv=40, stats=Q, damage=[calc("Hollow", 8, technique="Luce Pura", kind="puro"), ambientale(6)])
        f.post("Orihime", pv=30, stats=Q, damage=[calc("Hollow", stated, technique="Freccia Sacra")])
        a = f.replay()
        assert codes(a, "103") == []
        got = find(a, "damage.miscalculated", "104")
        assert [(v.expected, v.found) for v in got] == ([] if expected is None else [(expected, stated)])


def test_attacchi_multipli_inside_the_area_by_colpi():
    lab = "Attacco Multiplo [Freccia Sacra, Raffica 20 Colpi] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
    a = master_area_fight("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Hollow; dentro: Hollow",
                          ("Quincy", [R("1d12+6", 5, lab)]))
    assert saturazione(a, 3) == {"Cortina Fumogena": 9}
    lab = "Attacco Multiplo [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
    a = master_area_fight("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Hollow; dentro: Hollow",
                          ("Quincy", [R("1d12+6", 5, lab)]))
    assert saturazione(a, 3) == {"Cortina Fumogena": 10}
    [v] = [x for x in find(a, "ruling.needed", "103") if x.details.get("area") == "Cortina Fumogena"]
    assert "Colpi" in v.message


def test_a_player_cannot_declare_an_area_only_who_is_inside():
    f = Fight(aree_reg())
    f.post("Quincy", pv=40, stats=Q, body="Area: Cortina Fumogena (Espansiva), Saturazione 10; dentro: Hollow")
    a = f.replay()
    assert a.snapshots[-1].state.aree == () and not find(a, "outcome.area")


from hypothesis import given, settings, strategies as st  # noqa: E402

_PIECES = st.sampled_from(["Area:", "Area di Controllo:", " Cortina", " Fumogena", "(Espansiva)", "(Statica)", ",",
                           ";", " Saturazione", " 0", " 7", " 999", " di", " Quincy", " dentro:", " e ", " nessuno",
                           " distrutta", "\n", ".", "(", ")", " Hollow"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=25), st.lists(_PIECES, max_size=25))
def test_any_area_line_gives_verdicts_never_an_internal_error(master_text, player_text):
    f = Fight(aree_reg())
    f.post("Quincy", pv=40, stats=Q)
    f.master("".join(master_text))
    f.post("Hollow", pv=52, stats=H, body="".join(player_text),
           rolls=[R("1d12+8", 5, "Attacco [Nube Tossica, Cortina Fumogena] (Hollow vs Quincy): "
                                  "(+2 [Raggio Ottimale] +6 [Destrezza])")])
    f.post("Quincy", stats=Q, body="Difesa Nulla")
    a = f.replay()
    assert "engine.internal_error" not in codes(a)
    for area in a.snapshots[-1].state.aree:
        assert area.saturazione >= 1 and area.potenziale_area <= 30
    a.to_dict()


SPOST = "Spostamento [Fuga] (Quincy): (+2 [Spostamento] +4 [Destrezza])"  # 1d15+6
CGEN = "Contrattacco su Azione Generica (Hollow vs Quincy): (+6 [Destrezza])"  # 1d18+6


@pytest.mark.parametrize("counter_face,escaped", [(None, True), (12, False), (1, True)])
def test_fuga_by_spostamento_unless_countered(counter_face, escaped):
    f = Fight(aree_reg())
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=52, stats=H)
    f.master("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Hollow; dentro: Quincy, Hollow")
    f.post("Quincy", stats=Q, rolls=[R("1d15+6", 8, SPOST)])                         # 103: 14
    f.post("Hollow", stats=H, rolls=[R("1d18+6", counter_face, CGEN)] if counter_face else [])  # 104
    f.post("Quincy", stats=Q)                                                            # 105
    a = f.replay()
    events = [(v.post, v.details["event"]) for v in find(a, "outcome.area")
              if v.details["event"].startswith("fuga")]
    if escaped:
        assert events == [("103", "fuga_tentata"), ("105", "fuga")]
        assert a.snapshots[-1].state.aree[0].dentro == ("Hollow",)
    else:
        assert events == [("103", "fuga_tentata"), ("104", "fuga_fallita")]
        assert a.snapshots[-1].state.aree[0].dentro == ("Quincy", "Hollow")
    assert all(v.rule == "Aree di Controllo › Fuga dalle Aree di Controllo" for v in find(a, "outcome.area")
               if v.details["event"].startswith("fuga"))
    assert a.snapshots[-1].state.aree[0].fughe == ()


def test_a_spostamento_of_someone_outside_is_no_fuga():
    f = Fight(aree_reg())
    f.post("Quincy", pv=40, stats=Q)
    f.master("Area: Cortina Fumogena (Espansiva), Saturazione 10, di Quincy; dentro: Hollow")
    f.post("Quincy", stats=Q, rolls=[R("1d15+6", 8, SPOST)])
    a = f.replay()
    assert not [v for v in find(a, "outcome.area") if v.details["event"].startswith("fuga")]


@pytest.mark.parametrize("reaction_face,distanza", [(6, 8), (5, 16)])
def test_the_attacker_hint_gives_the_sbalzo_distance(reaction_face, distanza):
    f = Fight(sb_reg())
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 8, SB_ATK)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla",
           rolls=[R("1d12+6", reaction_face, "Reazione (Hollow): (+6 [Destrezza])")])
    nxt = f.replay().next
    assert nxt["character"] == "Quincy"
    [row] = nxt["pending_calcs"]
    assert (row["sbalzo"]["dms"], row["sbalzo"]["distanza"], row["sbalzo"]["reazione"]) == (16, distanza, distanza == 8)
    assert any(h.startswith("Sbalzo su Hollow: Distanza Massima di Sbalzo 16 m") for h in nxt["hints"])


@pytest.mark.parametrize("technique,saturazione_,resists", [
    ("Pioggia di Frecce", 16, True),   # Potenza 12 + 4 = 16 ≤ Potenza dell'Area 16
    ("Pioggia di Frecce", 15, False),  # 16 > 15: destroyed if it covers half the Area (master)
])
def test_destroying_a_formed_area_needs_more_potenza(technique, saturazione_, resists):
    lab = f"Attacco ad Area [{technique}, Distruggere Cortina Fumogena] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"
    a = master_area_fight(f"Area: Cortina Fumogena (Espansiva), Saturazione {saturazione_}, di Hollow",
                          ("Quincy", [R("1d12+6", 5, lab)]))
    rule = "Aree di Controllo › Distruzione di Aree di Controllo"
    if resists:
        [v] = [x for x in find(a, "outcome.area", "103") if x.details["event"] == "non_distrutta"]
        assert (v.expected, v.found, v.rule) == (16, 16, rule)
        assert not [x for x in find(a, "ruling.needed", "103") if x.rule == rule]
    else:
        [v] = [x for x in find(a, "ruling.needed", "103") if x.rule == rule]
        assert (v.expected, v.found) == (15, 16) and "ingloba almeno metà" in v.message
    # the attack inside still removes Saturazione: A −1, Area −1
    assert saturazione(a, 3) == {"Cortina Fumogena": saturazione_ - 2}


def test_hint_inside_a_cortina_fumogena():
    a = master_area_fight("AREA: Cortina Fumogena (Espansiva), Saturazione 10, di Quincy; dentro: Hollow e Quincy",
                          ("Quincy", []))
    assert a.next["character"] == "Hollow" and a.next["aree"][0]["dentro"] == ["Hollow", "Quincy"]
    [line] = [h for h in a.next["hints"] if h.startswith("Area di Controllo Cortina Fumogena")]
    assert "sei dentro: Accecato contro i Personaggi più lontani di 5 m" in line


@pytest.mark.parametrize("effect", [True, False])
def test_a_sbalzo_that_is_the_techniques_effect_lands_without_the_malus(effect):
    extra = {"bonus_potenziale": 3, "sbalzo": True} if effect else {"bonus_potenziale": 3}
    reg = registry({"Quincy": {"stats": Q, "extra": {"bonus_statistica": 2}}, "Hollow": {"stats": H}},
                   {"Onda d'Urto": {"potenziale": 10, "category": "A", "extra": extra}})
    f = Fight(reg)
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 8, ATK.format(t="Onda d'Urto"))])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    a = f.replay()
    assert codes(a, "100") == []  # no −2: the Sbalzo is an effect, not declared
    # DMS (8 + 3 + 2 − 5) × 3 [A]; without the effect there is no Sbalzo at all
    assert [v.found for v in find(a, "outcome.sbalzo", "101")] == ([24] if effect else [])


def test_sbalzo_of_a_contrattacco_halves_the_die_for_the_valore_and_the_dms():
    # Quincy's Contrattacco Diretto goes on in Fase Offensiva with a declared Sbalzo, die 9 → 4 (a Defence):
    # Valore di Sbalzo 4 + 2 [B] + 2 = 8 (not 13); DMS (4 + 3 + 2 − 5) × 2 = 8, halved by the Reazione 2 + 6 = 8
    f = Fight(sb_reg())
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 3, ATK_H)])
    f.post("Quincy", pv=40, stats=Q, rolls=[
        R("1d18+4", 15, "Contrattacco Diretto (Quincy vs Hollow): (+4 [Destrezza])"),
        R("1d12+7", 9, "Contrattacco Diretto [Freccia Sacra, Sbalzo] (Quincy vs Hollow): "
                       "(+3 [Contrattacco] -2 [Sbalzo] +2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla",
           rolls=[R("1d12+6", 2, "Reazione (Hollow): (+6 [Destrezza])")])
    a = f.replay()
    [v] = [x for x in find(a, "outcome.defended", "102") if x.roll == 0]
    assert (v.expected, v.found, v.details["dms"], v.details["distanza"]) == ("8", 8, 8, 4)
    [s] = find(a, "outcome.sbalzo", "102")
    assert s.found == 8 and s.details["da_difesa"] is True
