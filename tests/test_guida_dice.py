"""`guida` dice checks: die per action and phase, listed modifiers, factor ranges, Destrezza, imposed maluses."""
from __future__ import annotations

import pytest

from engine.rulesets.guida.actions import ACTIONS, classify, factor_of, phase_of
from tests.plugins.engine import Fight, R, codes, find, registry

HOLLOW = {"Destrezza": 6, "Costituzione": 4}
QUINCY = {"Destrezza": 4, "Costituzione": 5}
EX_DEF = "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +4 [Destrezza])"
EX_OFF = ("Attacco [Artigli Affilati, Sonìdo] (Hollow vs Quincy): (+2 [Raggio Corto], +2 [Bonus Arma] "
          "-1 [Mirato Arti] +6 [Destrezza])")


def two(first_rolls=(), second_rolls=(), *, hollow=HOLLOW, quincy=QUINCY, body=""):
    f = Fight()
    f.post("Quincy", pv=40, pe=30, stats=quincy, rolls=first_rolls)
    f.post("Hollow", pv=52, pe=45, stats=hollow, rolls=second_rolls, body=body)
    return f


def test_rule_text_defensive_example_is_clean():
    # "Esempio di Lancio Difensivo": Hollow (Destrezza 4 here) protects against Quincy's attack
    f = Fight()
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+6", 5, "Attacco [Arco] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats={"Destrezza": 4, "Costituzione": 4}, rolls=[R("1d24+6", 10, EX_DEF)])
    a = f.replay()
    assert codes(a, "101", severity="error") == []
    assert codes(a, "101", severity="warning") == []


def test_rule_text_offensive_example_is_flagged():
    # "Esempio di Lancio Offensivo": the listed modifiers add to +9 under a +6 roll
    f = Fight()
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d12+6", 7, EX_OFF)])
    a = f.replay()
    [v] = find(a, "dice.modifier_mismatch")
    assert (v.expected, v.found, v.severity, v.roll) == (9, 6, "error", 0)
    assert v.rule == "Successo e Fallimento delle Azioni › Lancio del Dado"
    assert "+9" in v.message and "+6" in v.message
    assert codes(a, severity="error") == ["dice.modifier_mismatch"]


@pytest.mark.parametrize("action,phase,sides", [
    ("Spostamento", "offensiva", 15), ("Attacco", "offensiva", 12), ("Protezione", "difensiva", 24),
    ("Contrattacco", "difensiva", 18), ("Contrattacco", "offensiva", 12), ("Contrattacco Diretto", "difensiva", 18),
    ("Contrattacco su Azione Generica", "offensiva", 12), ("Parata", "difensiva", 18),
    ("Azione Secondaria Indipendente", "difensiva", 18), ("Schivata", "difensiva", 12),
    ("Sbilanciamento", "difensiva", 8), ("Liberazione", "offensiva", 12), ("Percezione", "offensiva", 12),
    ("Mimetizzazione", "offensiva", 12), ("Reazione", "difensiva", 12), ("Protezione su Alleato", "difensiva", 24),
    ("Difesa Nulla su Alleato", "difensiva", 24), ("Contrattacco per Alleato", "difensiva", 18),
    ("Parata per Alleato", "difensiva", 18), ("Schivata con Alleato", "difensiva", 18),
])
def test_die_table(action, phase, sides):
    spec = classify(action)
    assert spec is not None and spec.die(phase) == sides


@pytest.mark.parametrize("action", ["Preparazione", "Difesa Nulla", "Azione Secondaria"])
def test_actions_without_roll(action):
    spec = classify(action)
    assert spec is not None and not spec.rolls


def test_aliases_and_factor_words():
    assert classify("Attacco Mirato Testa").key == "attacco"
    assert classify("contrattacco  diretto").key == "contrattacco_diretto"
    assert classify("Schivata").key == "schivata"
    assert classify("Danza della pioggia") is None
    assert factor_of("Raggio Corto") == "distanza"
    assert factor_of("Mirato Arti") == "mira"
    assert factor_of("Destrezza") == "destrezza"
    assert factor_of("Bonus Arma") == "altro"
    spec = ACTIONS["contrattacco"]
    assert phase_of(spec, 18, defensive_open=True, has_incoming=True, counter_in_defense=False) == "difensiva"
    assert phase_of(spec, 12, defensive_open=True, has_incoming=True, counter_in_defense=False) == "offensiva"


def test_wrong_die():
    f = two([R("1d12+6", 5, "Attacco (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")],
            [R("1d18+8", 10, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    [v] = find(f.replay(), "dice.wrong_die")
    assert (v.expected, v.found, v.post, v.roll) == ("1d24", "1d18", "101", 0)


def test_unexpected_roll_for_difesa_nulla_and_preparazione():
    f = Fight()
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+4", 3, "Preparazione (Quincy): (+4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d12+6", 3, "Difesa Nulla (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    assert codes(a, "100") == ["dice.unexpected_roll"]
    assert codes(a, "101") == ["dice.unexpected_roll"]


def test_unknown_action_and_not_authentic():
    f = Fight()
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[
        R("1d12+4", 3, "Danza Lunare (Quincy vs Hollow): (+4 [Destrezza])"),
        R("1d12+4", 3, "Attacco (Quincy vs Hollow): (+4 [Destrezza])", source="typed_text"),
    ])
    a = f.replay()
    assert find(a, "dice.unknown_action")[0].severity == "warning"
    [v] = find(a, "dice.not_authentic")
    assert v.severity == "warning" and v.roll == 1 and "typed_by_hand" in v.found


@pytest.mark.parametrize("label,expected,found", [
    ("Attacco (Quincy vs Hollow): (+4 [Raggio Lunghissimo] +4 [Destrezza])", [-6, 2], 4),
    ("Attacco (Quincy vs Hollow): (-8 [Distanza] +4 [Destrezza])", [-6, 2], -8),
    ("Attacco (Quincy vs Hollow): (-4 [Mirato Testa] +4 [Destrezza])", [-3, 0], -4),
    ("Attacco (Quincy vs Hollow): (-2 [Mirato Testa] +4 [Destrezza])", -3, -2),
])
def test_factor_out_of_range(label, expected, found):
    const = 4 + found
    f = two([R(f"1d12{const:+d}", 5, label)])
    [v] = find(f.replay(), "dice.factor_out_of_range")
    assert (v.expected, v.found) == (expected, found)


def test_distance_not_allowed_on_defensive_roll():
    f = two([R("1d12+4", 3, "Attacco (Quincy vs Hollow): (+4 [Destrezza])")],
            [R("1d18+8", 10, "Parata (Hollow vs Quincy): (+2 [Raggio Corto] +6 [Destrezza])")])
    [v] = find(f.replay(), "dice.factor_out_of_range")
    assert (v.expected, v.found, v.rule) == (0, 2, "Successo e Fallimento delle Azioni › Fattore Distanza")


def test_stat_mismatch_uses_live_total():
    f = two([R("1d12+6", 5, "Attacco (Quincy vs Hollow): (+6 [Destrezza])")])
    [v] = find(f.replay(), "dice.stat_mismatch")
    assert (v.expected, v.found, v.severity) == (4, 6, "error")


def test_stat_mismatch_counts_storpiatura_articolare():
    f = Fight()
    # Quincy hits Hollow's legs with a 10: 1 Storpiatura Articolare (−3 Destrezza) from Hollow's next turn
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+3", 10, "Attacco (Quincy vs Hollow): (-1 [Mirato Gambe] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=HOLLOW, body="Difesa Nulla",
           rolls=[R("1d12+8", 2, "Attacco (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+4", 2, "Attacco (Quincy vs Hollow): (+4 [Destrezza])")],
           body="Difesa Nulla")
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d24+8", 20, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    a = f.replay()
    assert a.characters["Hollow"]["stacks"] == {"Storpiatura Articolare": 1}
    [v] = find(a, "dice.stat_mismatch", "103")
    assert (v.expected, v.found) == (3, 6)


def test_missing_malus_from_sbilanciamento_and_declared_sbalzo():
    f = Fight()
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+4", 6, "Attacco [Spada] (Quincy vs Hollow): (+4 [Destrezza])")])
    # Hollow unbalances Quincy: 2 Sbilanciamento on Quincy for its next turn
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[
        R("1d8+6", 5, "Sbilanciamento (Hollow vs Quincy): (+6 [Destrezza])"),
        R("1d12+6", 8, "Attacco [Artigli, Sbalzo] (Hollow vs Quincy): (+6 [Destrezza])"),
    ])
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d24+6", 20, "Protezione (Quincy vs Hollow): (+2 [Bonus Protezione] +4 [Destrezza])")])
    a = f.replay()
    assert a.posts[1].state["Quincy"]["stacks"] == {"Sbilanciamento": 2}
    [sbalzo] = [v for v in find(a, "dice.missing_modifier", "101")]
    assert (sbalzo.expected, sbalzo.found, sbalzo.rule) == (-2, 0, "Sbalzo e Reazione › Sbalzo")
    [sb] = find(a, "dice.missing_modifier", "102")
    assert (sb.expected, sb.found) == (-2, 0)
    assert sb.rule.startswith("Condizioni Fisiche › Stack Tipo-1")


def test_bonus_not_taken_is_info_only():
    f = two([R("1d12+4", 3, "Attacco (Quincy vs Hollow): (+4 [Destrezza])")],
            [R("1d24+6", 10, "Protezione (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    [v] = find(a, "dice.bonus_not_taken")
    assert v.severity == "info" and v.expected == 2
    assert codes(a, "101", severity="error") == []


def test_bersagli_multipli_mirati_need_minus_two():
    f = Fight()
    f.post("Hollow", pv=52, stats=HOLLOW)
    f.post("Orihime", pv=30, stats={"Destrezza": 2})
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+4", 3, "Attacco [Freccia] (Quincy vs Hollow, Orihime): (+4 [Destrezza])")])
    [v] = find(f.replay(), "dice.missing_modifier")
    assert (v.expected, v.rule) == (-2, "Bersagli Multipli › Attacco a Bersagli Multipli")


def test_undue_counter_bonus_is_flagged():
    f = Fight()
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+6", 3, "Attacco (Quincy vs Hollow): (+2 [Contrattacco] +4 [Destrezza])")])
    [v] = find(f.replay(), "dice.undue_bonus")
    assert v.found == 2


def test_known_malus_applies_on_top_of_an_unverifiable_schema_buff():
    # the registry says Destrezza 3; the schema's 6 may hold a buff the engine does not know (warning only), but
    # the Storpiatura Articolare it does know (−3) is not dodged by leaving the schema at 6 (error, total corrected)
    f = Fight(registry({"Hollow": {"stats": {"Destrezza": 3, "Costituzione": 4}},
                        "Quincy": {"stats": {"Destrezza": 4, "Costituzione": 5}}}))
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+3", 10, "Attacco (Quincy vs Hollow): (-1 [Mirato Gambe] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=HOLLOW, body="Difesa Nulla",
           rolls=[R("1d12+8", 2, "Attacco (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+4", 10, "Attacco (Quincy vs Hollow): (+4 [Destrezza])")],
           body="Difesa Nulla")
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d24+8", 7, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    a = f.replay()
    [w] = find(a, "dice.stat_unverifiable", "101")
    assert (w.expected, w.found, w.severity) == (3, 6, "warning")
    [v] = find(a, "dice.stat_mismatch", "103")
    assert (v.expected, v.found, v.severity) == (3, 6, "error")
    assert v.details == {"schema": 6, "malus": -3}
    # 7 + 8 = 15 would beat Quincy's 14; with the −3 it is 12: hit
    assert find(a, "outcome.hit", "103")


def test_sbilanciamento_does_not_touch_a_contrattacco_in_fase_difensiva():
    # Quincy's Sbilanciamento on Hollow's attack gives Hollow 2 Stacks; Hollow then counters Quincy's attack:
    # "Si considerano le Probabilità di Colpire e non quelle di Difendere", so no −2 is missing
    f = Fight()
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d12+6", 2, "Attacco [Artigli] (Hollow vs Quincy): (+6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[
        R("1d8+4", 8, "Sbilanciamento (Quincy vs Hollow): (+4 [Destrezza])"),
        R("1d12+6", 5, "Attacco [Spada] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[
        R("1d18+6", 15, "Contrattacco [Artigli] (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    assert a.posts[1].state["Hollow"]["stacks"] == {"Sbilanciamento": 2}
    assert find(a, "dice.missing_modifier", "102") == []
    # a Protezione in the same spot would owe the −2
    g = Fight()
    g.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d12+6", 2, "Attacco [Artigli] (Hollow vs Quincy): (+6 [Destrezza])")])
    g.post("Quincy", pv=40, stats=QUINCY, rolls=[
        R("1d8+4", 8, "Sbilanciamento (Quincy vs Hollow): (+4 [Destrezza])"),
        R("1d12+6", 5, "Attacco [Spada] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    g.post("Hollow", pv=52, stats=HOLLOW, rolls=[
        R("1d24+8", 15, "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +6 [Destrezza])")])
    [v] = find(g.replay(), "dice.missing_modifier", "102")
    assert (v.expected, v.found) == (-2, 0)


def test_next_hint_counter_tag_has_no_defence_maluses():
    f = Fight()
    f.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d12+6", 2, "Attacco [Artigli] (Hollow vs Quincy): (+6 [Destrezza])")])
    f.post("Quincy", pv=40, stats=QUINCY, rolls=[
        R("1d8+4", 8, "Sbilanciamento (Quincy vs Hollow): (+4 [Destrezza])"),
        R("1d12+6", 5, "Attacco [Spada] (Quincy vs Hollow): (+2 [Raggio Ottimale] +4 [Destrezza])")])
    tags = {d["action"]: d["tag"] for d in f.replay().next["dice_tags"] if d["phase"] == "difensiva"}
    assert tags["Contrattacco"] == "[dice=1d18+6]Contrattacco (Hollow vs Quincy): (+6 [Destrezza])[/dice]"
    assert tags["Parata"] == "[dice=1d18+4]Parata (Hollow vs Quincy): (+6 [Destrezza] -2 [Sbilanciamento])[/dice]"


def test_difesa_prevedibile_says_which_technique_and_how_many_uses():
    f = Fight()
    schivata = "Schivata [Hirenkyaku] (Quincy vs Hollow): (+4 [Destrezza])"
    for _ in range(4):
        f.post("Hollow", pv=52, stats=HOLLOW, rolls=[R("1d12+6", 2, "Attacco [Artigli] (Hollow vs Quincy): (+6 [Destrezza])")])
        f.post("Quincy", pv=40, stats=QUINCY, rolls=[R("1d12+4", 10, schivata)])
    a = f.replay()
    assert find(a, "dice.missing_modifier", "105") == []
    [v] = find(a, "dice.missing_modifier", "107")
    assert (v.expected, v.found, v.rule) == (-1, 0, "Successo e Fallimento delle Azioni › Fattore Descrizione")
    assert v.details == {"technique": "Hirenkyaku", "uses": 4}
    assert "Difesa Prevedibile" in v.message and "Hirenkyaku usata 4 volte" in v.message


def test_outcome_on_a_roll_typed_by_hand_is_not_final():
    f = two([R("1d12+4", 3, "Attacco (Quincy vs Hollow): (+4 [Destrezza])")],
            [R("1d12+6", 10, "Schivata (Hollow vs Quincy): (+6 [Destrezza])", source="typed_text")])
    a = f.replay()
    assert find(a, "dice.not_authentic", "101")
    [out] = find(a, "outcome.defended", "101")
    assert "non autentico" in out.message and out.details["not_authentic"]
    [r] = find(a, "ruling.needed", "101")
    assert r.rule == "Successo e Fallimento delle Azioni › Lancio del Dado" and r.roll == 0
    # the attack typed by hand: the same when the defence is the forum's own
    f = two([R("1d12+4", 3, "Attacco (Quincy vs Hollow): (+4 [Destrezza])", source="typed_text")],
            [R("1d12+6", 10, "Schivata (Hollow vs Quincy): (+6 [Destrezza])")])
    a = f.replay()
    [out] = find(a, "outcome.defended", "101")
    assert out.details["not_authentic"] == ["l'Attacco di Quincy (post 100, lancio 1)"]
    assert find(a, "ruling.needed", "101")
    # both authentic: no ruling
    a = two([R("1d12+4", 3, "Attacco (Quincy vs Hollow): (+4 [Destrezza])")],
            [R("1d12+6", 10, "Schivata (Hollow vs Quincy): (+6 [Destrezza])")]).replay()
    assert find(a, "ruling.needed") == [] and "not_authentic" not in find(a, "outcome.defended", "101")[0].details
