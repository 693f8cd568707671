"""The `poteri` ruleset: PF spending, damage cap, Intensità vs Resistenza, cures, slots, Difensivi, fatigue."""
from __future__ import annotations

import re

import pytest

from engine import BadSetting, available_rulesets, replay
from engine.history import (
    Character, CombatHistory, Post, PostSchema, RegistroEntry, Registry, Resource, Roll, Stat, Technique, Thread,
)

THREAD = Thread(url="https://gdr.example/t2", platform="generic", host="gdr.example", thread_id="2",
                title="Scontro alla torre", pages=1, fetched_at=None)


def roll(expr: str, faces: tuple[int, ...] | None, label: str, authentic: bool = True) -> Roll:
    m = re.fullmatch(r"(\d+)d(\d+)([+-]\d+)?", expr)
    count, sides, const = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    return Roll(expression=expr, count=count, sides=sides, constant=const, faces=faces,
                total=None if faces is None else sum(faces) + const, label=label, tag=None,
                source="forum_roller", authentic=authentic, problems=() if authentic else ("typed_by_hand",))


_n = 0


def post(character: str, *rolls: Roll, body: str | None = None, schema: dict | None = None,
         registro: tuple[RegistroEntry, ...] | None = None) -> Post:
    global _n
    _n += 1
    sch = None
    if schema is not None or registro is not None:
        sch = PostSchema(resources={k: Resource(*v) for k, v in (schema or {}).items()}, registro=registro,
                         character=character)
    return Post(id=f"q{_n}", page=1, url=f"https://gdr.example/t2#q{_n}", author=character.lower(), author_id=None,
                timestamp=None, body=body if body is not None else "\n".join(r.label for r in rolls), schema=sch,
                rolls=rolls, character=character)


def registry() -> Registry:
    aria = Character(name="Aria", stats={"Agilità": Stat(50), "Volontà": Stat(40)},
                     resources={"PF": Resource(5, 5), "PD": Resource(12, 12)},
                     techniques=("Dardo di Fuoco", "Tocco Guaritore", "Scudo di Luce", "Catene d'Ombra",
                                 "Voce Suadente", "Lucciole"))
    bruno = Character(name="Bruno", stats={"Agilità": Stat(45), "Volontà": Stat(30)},
                      resources={"PF": Resource(3, 3), "PD": Resource(10, 10)}, techniques=("Dardo di Fuoco",))
    p = "potere"
    techs = {
        "Dardo di Fuoco": Technique("Dardo di Fuoco", kind=p, type="Attacco",
                                    extra={"valore": 60, "resistenza": "Agilità"}),
        "Tocco Guaritore": Technique("Tocco Guaritore", kind=p, type="Curativo", extra={"valore": 70}),
        "Scudo di Luce": Technique("Scudo di Luce", kind=p, type="Difensivo",
                                   extra={"valore": 80, "slot": 1, "durata": 3, "immune": ["Rissa"]}),
        "Catene d'Ombra": Technique("Catene d'Ombra", kind=p, type="Debilitante",
                                    extra={"valore": 55, "slot": 2, "durata": 2, "impedisce": ["Rissa"]}),
        "Voce Suadente": Technique("Voce Suadente", kind=p, type="Mentale",
                                   extra={"valore": 60, "slot": 1, "vieta_attacco_al_caster": True,
                                          "termina_se_caster_attacca": True}),
        "Lucciole": Technique("Lucciole", kind=p, type="Narrativo", extra={"valore": 90}),
        "Aura Gemella": Technique("Aura Gemella", kind=p, type="Difensivo", extra={"valore": 90, "slot": 1}),
        "Fiamma Lenta": Technique("Fiamma Lenta", kind=p, type="Difensivo",
                                  extra={"valore": 90, "slot": 1, "tempo": "Prima"}),
    }
    return Registry(characters={"Aria": aria, "Bruno": bruno}, techniques=techs)


def audit(*posts: Post, reg: Registry | None = None, **settings):
    h = CombatHistory(thread=THREAD, posts=tuple(posts), registry=reg or registry())
    return replay(h, "poteri", settings=settings or None)


def codes(a, i):
    return [v.code for v in a.posts[i].verdicts]


def verdict(a, i, code):
    found = [v for v in a.posts[i].verdicts if v.code == code]
    assert found, f"{code} not in {codes(a, i)}"
    return found[0]


def dardo(face: int, pf: int = 2, damage: tuple[int, ...] | None = (3, 4), caster="Aria", target="Bruno",
          extra: str = "") -> Post:
    rolls = [roll("1d100", (face,), f"Potere [Dardo di Fuoco] ({caster} vs {target}) PF {pf}{extra}")]
    if damage is not None:
        rolls.append(roll(f"{len(damage)}d6+3", damage, f"Danni [Dardo di Fuoco] ({caster} vs {target})"))
    return post(caster, *rolls)


def resist(face: int, stat: str = "Agilità", who="Bruno", vs="Aria", extra: str = "", **kw) -> Post:
    return post(who, roll("1d100", (face,), f"Resistenza [{stat}] ({who} vs {vs}){extra}"), **kw)


# ------------------------------------------------------------------ registration

def test_registered_with_settings():
    rs = available_rulesets()["poteri"]
    names = {s.name: s for s in rs.settings}
    assert names["partial_damage"].ours and names["roll_system"].ours
    assert not names["slots"].ours and names["slots"].default == 2
    with pytest.raises(BadSetting):
        audit(post("Aria"), partial_damage="tutto")


# ------------------------------------------------------------------ the text's step-by-step example

def test_example_failure_spends_pf_and_stops():
    """Steps 3–5: 2 PF consumed, the roll fails, the sequence ends and the PF stay consumed."""
    a = audit(dardo(80), resist(10))
    assert "outcome.power_failure" in codes(a, 0)
    assert verdict(a, 0, "poteri.damage_after_failure").severity == "warning"
    assert a.characters["Aria"]["pf"] == 3
    assert a.characters["Bruno"]["pd"] == 10
    assert "poteri.resistance_not_allowed" in codes(a, 1)


def test_example_success_resistance_failed_full_damage_capped():
    """Steps 6–8 and 12: success with Intensità +1, B fails, full damage, never above 9 PD."""
    a = audit(dardo(56, damage=(5, 6)), resist(70))
    v = verdict(a, 0, "outcome.power_success")
    assert v.details["intensity"] == 1 and v.assumption == "roll_system"
    assert verdict(a, 0, "poteri.damage_capped").found == 14
    assert "outcome.resistance_failed" in codes(a, 1)
    assert a.characters["Bruno"]["pd"] == 1  # 10 − 9


def test_example_lower_margin_partial_damage():
    """Step 9: margin +4 + Intensità +1 = +5 against a Resistenza margin of +3 → partial damage."""
    a = audit(dardo(56), resist(42))
    v = verdict(a, 1, "outcome.partial_damage")
    assert (v.expected, v.found) == (5, 3) and v.assumption == "partial_damage"
    assert (v.details["partial"], v.details["full"]) == (4, 9)  # 3 + 3 + 4 = 10 → capped 9 → half, down
    assert a.characters["Bruno"]["pd"] == 6


def test_example_equal_margin_resisted():
    """Step 10: +4 margin +1 Intensità = +5; a Resistenza margin of +5 gives 0 PD."""
    a = audit(dardo(56), resist(40))
    v = verdict(a, 1, "outcome.resisted")
    assert (v.expected, v.found) == (5, 5)
    assert a.characters["Bruno"]["pd"] == 10


def test_example_critical_skips_resistance_damage_rolled_and_capped():
    """Step 11–12: a critical skips Resistenza; damage is still rolled and still capped at 9."""
    a = audit(dardo(3, pf=3, damage=(6, 6, 6)), resist(20))
    assert "outcome.power_critical" in codes(a, 0)
    assert verdict(a, 0, "poteri.damage_capped").expected == 9
    assert a.characters["Bruno"]["pd"] == 1  # applied at once
    assert "poteri.resistance_not_allowed" in codes(a, 1)
    a = audit(dardo(3, pf=1, damage=(1,)))
    assert a.characters["Bruno"]["pd"] == 6  # critical ≠ 9 automatic: 3 + 1
    a = audit(post("Aria", roll("1d100", (3,), "Potere [Dardo di Fuoco] (Aria vs Bruno) PF 1")))
    assert "poteri.damage_missing" in codes(a, 0)


def test_intensity_only_counts_against_resistance():
    """'margine +4 ... +4 di margine +1 di Intensità = +5': stated margins are used as written."""
    a = audit(dardo(0, extra=" Successo margine +4", damage=(2, 2)),
              resist(0, extra=" Successo margine +4"), roll_system="dichiarato")
    assert "outcome.power_success" in codes(a, 0)
    v = verdict(a, 1, "outcome.partial_damage")
    assert (v.expected, v.found) == (5, 4)
    assert a.characters["Bruno"]["pd"] == 10 - 3  # (3 + 4) // 2


def test_partial_damage_proportional_setting():
    a = audit(dardo(56), resist(42), partial_damage="proporzionale")
    v = verdict(a, 1, "outcome.partial_damage")
    assert v.details["partial"] == 9 * (5 - 3) // 5  # 3


def test_stated_margin_disagreeing_with_roll_is_flagged_but_used():
    a = audit(dardo(56, extra=" margine +10"), resist(45))
    v = verdict(a, 0, "poteri.margin_mismatch")
    assert v.expected == {"esito": "successo", "margine": 4} and v.found["margine"] == 10
    assert verdict(a, 1, "outcome.partial_damage").expected == 11


# ------------------------------------------------------------------ PF

def test_pf_rules():
    a = audit(dardo(56, pf=4, damage=(1, 1, 1)))
    assert verdict(a, 0, "poteri.pf_out_of_range").found == 4
    a = audit(post("Bruno", schema={"PF": (1, 3), "PD": (10, 10)}), dardo(56, pf=2, caster="Bruno", target="Aria"))
    v = verdict(a, 1, "poteri.pf_exceeded")
    assert (v.expected, v.found) == (1, 2)
    assert a.characters["Bruno"]["pf"] == 0
    a = audit(post("Bruno", schema={"PF": (0, 3), "PD": (10, 10)}), dardo(56, pf=1, caster="Bruno", target="Aria",
                                                                          damage=(4,)))
    assert "poteri.no_fatigue" in codes(a, 1)
    assert a.characters["Aria"]["pd"] == 12
    a = audit(post("Aria", roll("1d100", (56,), "Potere [Dardo di Fuoco] (Aria vs Bruno)")))
    assert "poteri.pf_missing" in codes(a, 0)


def test_pf_from_registro_when_label_omits_it():
    p = post("Aria", roll("1d100", (56,), "Potere [Dardo di Fuoco] (Aria vs Bruno)"),
             roll("3d6+3", (1, 1, 1), "Danni [Dardo di Fuoco] (Aria vs Bruno)"),
             registro=(RegistroEntry(-3, "PF", "Dardo di Fuoco", "-3 PF [Dardo di Fuoco]"),))
    a = audit(p)
    assert "poteri.pf_missing" not in codes(a, 0)
    assert verdict(a, 0, "outcome.power_success").details["intensity"] == 2


def test_wrong_damage_dice_for_pf():
    a = audit(dardo(56, pf=2, damage=(3, 3, 3)))
    v = verdict(a, 0, "dice.wrong_die")
    assert (v.expected, v.found) == ("2d6+3", "3d6+3")


def test_schema_mismatch_when_pf_not_paid_on_failure():
    a = audit(dardo(80), post("Bruno"), post("Aria", schema={"PF": (5, 5), "PD": (12, 12)}))
    v = verdict(a, 2, "registro.pool_mismatch")
    assert (v.expected, v.found, v.details["resource"]) == (3, 5, "PF")


# ------------------------------------------------------------------ cures

def test_cure_two_on_success_four_on_critical_capped_at_max():
    a = audit(dardo(56, damage=(1, 1)), resist(90),  # Bruno... Aria hits Bruno for 5
              post("Bruno", roll("1d100", (60,), "Potere [Tocco Guaritore] (Bruno vs Bruno)")), reg=_healer())
    assert verdict(a, 2, "outcome.cure").expected == 2
    assert a.characters["Bruno"]["pd"] == 7
    a = audit(dardo(56, damage=(1, 1)), resist(90),
              post("Bruno", roll("1d100", (2,), "Potere [Tocco Guaritore] (Bruno vs Bruno)")), reg=_healer())
    assert a.characters["Bruno"]["pd"] == 9
    a = audit(post("Bruno", roll("1d100", (60,), "Potere [Tocco Guaritore] (Bruno vs Bruno)")), reg=_healer())
    v = verdict(a, 0, "poteri.cure_capped")
    assert (v.expected, v.found) == (10, 12)
    assert a.characters["Bruno"]["pd"] == 10


def _healer() -> Registry:
    reg = registry()
    b = reg.characters["Bruno"]
    reg.characters["Bruno"] = Character(name="Bruno", stats=b.stats, resources=b.resources,
                                        techniques=b.techniques + ("Tocco Guaritore",))
    return reg


# ------------------------------------------------------------------ one Power per turn, slots, durations

def test_one_power_per_turn():
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Scudo di Luce] (Aria vs Aria)"),
                   roll("1d100", (10,), "Potere [Tocco Guaritore] (Aria vs Aria)")))
    v = verdict(a, 0, "turn.extra_main_action")
    assert (v.expected, v.found, v.roll) == (1, 2, 1)


def test_slots_one_plus_one_then_two_ends_previous():
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Scudo di Luce] (Aria vs Aria)")), post("Bruno"),
              post("Aria", roll("1d100", (10,), "Potere [Voce Suadente] (Aria vs Bruno)")), post("Bruno"),
              post("Aria", roll("1d100", (10,), "Potere [Catene d'Ombra] (Aria vs Bruno)")))
    assert a.posts[2].state["Aria"]["slots_used"] == 2
    ended = [v for v in a.posts[4].verdicts if v.code == "poteri.effect_ended"]
    assert {v.details["power"] for v in ended} == {"Scudo di Luce", "Voce Suadente"}
    assert a.characters["Aria"]["slots_used"] == 2
    # a {2} held, then another slot power: the {2} ends
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Catene d'Ombra] (Aria vs Bruno)")), post("Bruno"),
              post("Aria", roll("1d100", (10,), "Potere [Aura Gemella] (Aria vs Aria)")))
    assert verdict(a, 2, "poteri.effect_ended").details["power"] == "Catene d'Ombra"


def test_duration_expires_after_casters_turns():
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Scudo di Luce] (Aria vs Aria)")),
              post("Bruno"), post("Aria"), post("Bruno"), post("Aria"), post("Bruno"), post("Aria"))
    assert "poteri.effect_expired" not in codes(a, 4)
    assert "poteri.effect_expired" in codes(a, 6)
    assert a.characters["Aria"]["effects"] == []


def test_voluntary_stop_and_already_active():
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Scudo di Luce] (Aria vs Aria)")), post("Bruno"),
              post("Aria", roll("1d100", (10,), "Potere [Scudo di Luce] (Aria vs Aria)")),
              post("Bruno"), post("Aria", body="Interrompo: Scudo di Luce"))
    assert "poteri.already_active" in codes(a, 2)
    assert verdict(a, 4, "poteri.effect_ended").details["reason"] == "interrotto dal lanciatore"


def test_timing_prima_rolled_after_the_action():
    narrative = "Aria solleva le mani e lascia che la luce le danzi attorno, lenta, mentre avanza verso Bruno. " * 2
    label = "Potere [Fiamma Lenta] (Aria vs Aria)"
    a = audit(post("Aria", roll("1d100", (10,), label), body=narrative + "\n" + label))
    assert verdict(a, 0, "poteri.timing").expected == "Prima"
    a = audit(post("Aria", roll("1d100", (10,), label), body=label + "\n" + narrative))
    assert "poteri.timing" not in codes(a, 0)


# ------------------------------------------------------------------ Difensivi, Debilitanti, Mentali, Narrativi

def test_defensive_blocks_rissa_until_holder_attacks_and_ends_before_resolution():
    scudo = post("Aria", roll("1d100", (10,), "Potere [Scudo di Luce] (Aria vs Aria)"))
    a = audit(scudo, post("Bruno", roll("1d6", (4,), "Rissa (Bruno vs Aria)")))
    assert verdict(a, 1, "poteri.target_protected").details["power"] == "Scudo di Luce"
    # Aria attacks: the Scudo ends before the roll, and stays ended though the attack fails
    a = audit(scudo, post("Bruno"), dardo(95), post("Bruno", roll("1d6", (4,), "Rissa (Bruno vs Aria)")))
    order = codes(a, 2)
    assert order.index("poteri.defensive_ended") < order.index("outcome.power_failure")
    assert "poteri.target_protected" not in codes(a, 3)
    assert a.characters["Bruno"]["pf"] == 2  # the Rissa cost 1 PF


def test_debilitante_prevents_rissa():
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Catene d'Ombra] (Aria vs Bruno)")),
              post("Bruno", roll("1d6", (4,), "Rissa (Bruno vs Aria)")))
    assert verdict(a, 1, "poteri.action_prevented").details["power"] == "Catene d'Ombra"


def test_mental_forbids_attacking_caster_and_ends_when_caster_attacks_that_target():
    voce = post("Aria", roll("1d100", (10,), "Potere [Voce Suadente] (Aria vs Bruno)"))
    a = audit(voce, dardo(56, caster="Bruno", target="Aria", damage=(1, 1)))
    assert "poteri.attack_forbidden" in codes(a, 1)
    assert a.characters["Aria"]["pd"] == 12
    assert a.characters["Bruno"]["pf"] == 1  # still spent: the energy was called
    a = audit(voce, post("Bruno"), dardo(56))
    assert verdict(a, 2, "poteri.effect_ended").details["power"] == "Voce Suadente"


def test_forced_rissa_costs_the_controlled_body():
    voce = post("Aria", roll("1d100", (10,), "Potere [Voce Suadente] (Aria vs Bruno)"))
    forced = post("Aria", roll("1d6", (3,), "Rissa (Bruno vs Bruno)"),
                  registro=(RegistroEntry(-1, "PF", "Rissa", "-1 PF [Rissa]"),))
    a = audit(voce, post("Bruno"), forced)
    assert a.characters["Bruno"]["pf"] == 2 and a.characters["Aria"]["pf"] == 5
    v = verdict(a, 2, "poteri.fatigue_wrong_payer")
    assert (v.expected, v.found) == ("Bruno", "Aria")
    a = audit(post("Aria", roll("1d6", (3,), "Rissa (Bruno vs Bruno)")))
    assert "poteri.forced_without_control" in codes(a, 0)


def test_narrative_power_has_no_mechanics():
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Lucciole] (Aria vs Bruno)"),
                   roll("1d6+3", (6,), "Danni [Lucciole] (Aria vs Bruno)")))
    assert "poteri.narrative_no_mechanics" in codes(a, 0)
    assert "poteri.stray_damage" not in codes(a, 0)
    assert a.characters["Bruno"]["pd"] == 10


def test_unknown_type_asks_for_ruling_and_resistance_missing_is_full_damage():
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Segreto] (Aria vs Bruno)")))
    assert "ruling.needed" in codes(a, 0)
    a = audit(post("Aria", roll("1d100", (10,), "Potere [Segreto] {Difensivo} {1} (Aria vs Aria) Successo")))
    assert "poteri.effect_started" in codes(a, 0) and a.characters["Aria"]["slots_used"] == 1
    a = audit(dardo(56), post("Bruno", body="Bruno schiva… o ci prova."))
    assert "poteri.resistance_missing" in codes(a, 1)
    assert a.characters["Bruno"]["pd"] == 1


def test_wrong_resistance_stat_and_verdicts_explain_themselves():
    a = audit(dardo(56), resist(42, stat="Volontà"))
    v = verdict(a, 1, "poteri.wrong_resistance")
    assert (v.expected, v.found) == ("Agilità", "Volontà")
    for p in a.posts:
        for v in p.verdicts:
            assert v.rule and v.post == p.id and v.message
    assert a.next["character"] == "Aria"
    a.to_dict()


def test_next_hint_shows_pending_resistance():
    a = audit(post("Bruno"), dardo(56))
    assert a.next["character"] == "Bruno"
    r = a.next["resistenze"][0]
    assert r["caratteristica"] == "Agilità" and r["potere_piu_intensita"] == 5
