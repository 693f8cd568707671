"""`guida` turn structure: who acts, phases, one Defence per attack, one main action, out-of-turn posts, rulings."""
from __future__ import annotations

from engine.core import replay
from tests.plugins.engine import Fight, R, codes, find, registry

H = {"Destrezza": 6, "Costituzione": 4}
Q = {"Destrezza": 4, "Costituzione": 5}
ATK_Q = "Attacco [Freccia] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])"  # 1d12+6
ATK_H = "Attacco [Artigli] (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])"  # 1d12+8


def test_character_from_post_then_schema_then_author():
    reg = registry({"Quincy": {"player": "uryu", "stats": Q}})
    f = Fight(reg)
    f.post("uryu", character=None, pv=40, stats=Q)
    a = f.replay()
    assert a.posts[0].state.keys() == {"Quincy"}


def test_failed_defence_fails_later_ones_and_annuls_offensive_phase():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 11, ATK_Q)])
    f.post("Orihime", pv=30, stats={"Destrezza": 2}, rolls=[R("1d12+4", 10, "Attacco (Orihime vs Hollow): (+2 [Raggio Ottimale] +2 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, rolls=[
        R("1d12+6", 2, "Schivata (Hollow vs Quincy): (+6 [Destrezza])"),      # 8 < 17: fails
        R("1d24+8", 24, "Protezione (Hollow vs Orihime): (+2 [Bonus Protezione] +6 [Destrezza])"),  # would succeed
        R("1d12+8", 12, ATK_H),
    ])
    a = f.replay()
    c = codes(a, "102")
    assert c == ["outcome.hit", "outcome.action_annulled", "outcome.hit", "outcome.action_annulled"]
    annulled = find(a, "outcome.action_annulled", "102")
    assert all(v.severity == "info" for v in annulled)
    assert annulled[1].roll == 2
    # the annulled attack is not pending for Quincy
    assert a.next["character"] == "Quincy" and a.next["incoming"] == []


def test_one_defence_per_attack():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 3, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[
        R("1d24+8", 20, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])"),
        R("1d18+6", 10, "Parata (Hollow vs Quincy): (+6 [Destrezza])"),
    ])
    [v] = find(f.replay(), "turn.extra_defense")
    assert (v.roll, v.expected, v.found, v.severity) == (1, 1, 2, "error")


def test_independent_secondary_action_is_not_a_defence():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 3, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[
        R("1d18+6", 10, "Azione Secondaria Indipendente [Tonico] (Hollow): (+6 [Destrezza])"),
        R("1d24+8", 20, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])"),
    ])
    a = f.replay()
    assert "turn.extra_defense" not in codes(a)
    assert find(a, "outcome.defended", "101")[0].details.get("independent") is True


def test_one_main_action_per_turn_but_summons_have_their_own():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[
        R("1d12+6", 3, ATK_Q),
        R("1d15+6", 3, "Spostamento (Quincy): (+2 [Spostamento] +4 [Destrezza])"),
        R("1d12+2", 5, "Attacco [Morso] (Lupo vs Hollow): (+2 [Raggio Ottimale])"),
    ])
    a = f.replay()
    [v] = find(a, "turn.extra_main_action")
    assert (v.roll, v.expected, v.found) == (1, 1, 2)
    # the summon's attack is pending for Hollow as well as Quincy's
    assert [x["attacker"] for x in a.next["incoming"]] == ["Quincy", "Lupo"]


def test_secondary_action_takes_no_roll():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 3, "Azione Secondaria [Tonico] (Quincy): (+4 [Destrezza])")])
    assert codes(f.replay()) == ["dice.unexpected_roll"]


def test_out_of_turn():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q)
    f.post("Hollow", pv=52, stats=H)
    f.post("Quincy", pv=40, stats=Q)
    f.post("Quincy", pv=40, stats=Q)
    a = f.replay()
    assert codes(a, "102") == []
    [v] = find(a, "turn.out_of_turn")
    assert v.post == "103" and v.found == "Quincy"


def test_out_of_turn_three_fighters():
    f = Fight()
    for n in ("A", "B", "C", "A", "C"):
        f.post(n, pv=10, stats={"Destrezza": 1})
    [v] = find(f.replay(), "turn.out_of_turn")
    assert (v.post, v.expected, v.found) == ("104", "B", "C")


def test_missing_schema_parts():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, missing=("sheet_url", "registro"))
    f.post("Hollow", schema=False)
    a = f.replay()
    [v] = find(a, "schema.missing_part", "100")
    assert v.severity == "warning" and v.expected == ["sheet_url", "registro"]
    assert find(a, "schema.missing_part", "101")[0].found is None


def test_registro_with_an_unread_change_says_so():
    """The scraper keeps what it read of a Registro and marks it incomplete ("registro" in missing): the message
    says a line was not understood, not that the Registro is absent."""
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, registro=["-5 PE [Freccia]"], missing=("registro",))
    f.post("Hollow", pv=52, stats=H, missing=("registro",), registro=None)
    a = f.replay()
    [v] = find(a, "schema.missing_part", "100")
    assert v.expected == ["registro"] and "non è stata capita" in v.message
    [v] = find(a, "schema.missing_part", "101")
    assert v.message == "Nello schema manca: Registro."


def test_master_posts_are_not_turns_and_rulings_apply():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 11, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla")
    f.master("Ruling: ruling.needed post 101: danno 7\nBel combattimento.")
    f.post("Quincy", pv=40, stats=Q)  # no Calcolo: the master's number stands
    f.post("Hollow", pv=45, stats=H, registro=["-7 PV [Freccia di Quincy]"])
    a = f.replay()
    assert codes(a, "102") == ["ruling.applied"]
    assert "turn.out_of_turn" not in codes(a)
    [missing] = find(a, "damage.missing_calc", "103")
    assert missing.expected == 7
    assert codes(a, "104", severity="error") == []
    assert a.characters["Hollow"]["pv"] == 45


def test_ruling_annotates_verdicts():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 5, "Attacco (Quincy vs Hollow): (+2 [Sorpresa] +4 [Destrezza])")])
    f.master("[ruling]ruling.needed post 100: sorpresa confermata[/ruling]")
    a = f.replay()
    [v] = find(a, "ruling.needed", "100")
    assert v.details["ruling"] == "sorpresa confermata"


def test_forumotion_game_master_dice_complete_the_answered_post():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, id="p1")
    f.post("Game Master", role="gm_bot", schema=False, answers="p1", id="g1",
           rolls=[R("1d12+6", 11, ATK_Q, source="forumotion_gm")])
    f.post("Hollow", pv=52, stats=H, body="Difesa Nulla", id="p2")
    a = f.replay()
    [hit] = find(a, "outcome.hit", "p2")
    assert hit.expected == 17
    assert "turn.out_of_turn" not in codes(a)


def test_determinism_and_immutability():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 11, ATK_Q)])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d24+8", 3, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    h = f.history()
    a1, a2 = replay(h), replay(h)
    assert a1.to_dict() == a2.to_dict()
    state = a1.snapshots[-1].state
    import dataclasses
    import pytest
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.last = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.fighters["Hollow"] = None  # type: ignore[index]


def test_liberazione_value_goes_to_the_master_and_one_attempt_per_turn():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[
        R("1d12+2", 7, "Liberazione [Forza Bruta] (Quincy): (+2 [Bonus Statistica])"),
        R("1d12+2", 9, "Liberazione [Forza Bruta] (Quincy): (+2 [Bonus Statistica])"),
    ])
    a = f.replay()
    [r] = find(a, "ruling.needed")
    assert r.found == 9 and "Valore di Costrizione" in r.message
    [x] = find(a, "turn.extra_liberazione")
    assert (x.roll, x.expected, x.found) == (1, 1, 2)


def test_preparazione_removes_type1_stacks_and_gives_next_defence_bonus():
    f = Fight()
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+6", 3, "Attacco [Spada] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d8+6", 8, "Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=Q, body="Quincy si ferma: Preparazione.")
    f.post("Hollow", pv=52, stats=H, rolls=[R("1d12+8", 3, ATK_H)])
    f.post("Quincy", pv=40, stats=Q, rolls=[R("1d12+4", 5, "Schivata (Quincy vs Hollow): (+4 [Destrezza])")])
    a = f.replay()
    assert a.posts[1].state["Quincy"]["stacks"] == {"Sbilanciamento": 2}
    assert a.posts[2].state["Quincy"]["stacks"] == {}
    assert "dice.missing_modifier" not in codes(a, "104")
    [bonus] = find(a, "dice.bonus_not_taken", "104")
    assert bonus.expected == 2 and "Preparazione" in bonus.message
