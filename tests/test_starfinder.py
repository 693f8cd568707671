"""The `starfinder` ruleset: attack rolls, CAE/CAC, damage, Stamina/Ferita/Risolutezza, saves, rerolls."""
from __future__ import annotations

from dataclasses import replace

import pytest

from engine import BadSetting, available_rulesets, replay
from engine.history import (
    Character, CombatHistory, Post, PostSchema, Registry, Resource, Roll, Stat, Technique, Thread,
)
from engine.rulesets.starfinder import combine_multipliers
from tests.plugins.engine import assert_explained, plain_roll as roll, post_codes as codes, post_verdict as verdict

THREAD = Thread(url="https://gdr.example/t1", platform="generic", host="gdr.example", thread_id="1",
                title="Duello sulla stazione", pages=1, fetched_at=None)

_n = 0


def post(character: str, *rolls: Roll, body: str = "", schema: dict | None = None, role: str = "player") -> Post:
    global _n
    _n += 1
    sch = None
    if schema is not None:
        sch = PostSchema(resources={k: Resource(*v) for k, v in schema.items()}, character=character)
    return Post(id=f"p{_n}", page=1, url=f"https://gdr.example/t1#p{_n}", author=character.lower(),
                author_id=None, timestamp=None, role=role, body=body or " ".join(r.label for r in rolls),
                schema=sch, rolls=rolls, character=character if role == "player" else None)


def registry(**overrides) -> Registry:
    kira = Character(name="Kira", stats={"Forza": Stat(14), "Destrezza": Stat(16)},
                     resources={"PS": Resource(12, 12), "PF": Resource(10, 10), "PR": Resource(3, 3)},
                     techniques=("Pistola Laser", "Coltello Stellare", "Granata a Frammentazione"),
                     extra={"BAB": 5, "CAE": 15, "CAC": 16, "competenze": ["armi piccole", "armi da mischia base",
                                                                           "granate"],
                            "TS": {"Tempra": 3, "Riflessi": 6, "Volontà": 2}})
    drone = Character(name="Drone", stats={"Forza": Stat(12), "Destrezza": Stat(14), "Costituzione": Stat(12)},
                      resources={"PS": Resource(6, 6), "PF": Resource(8, 8), "PR": Resource(1, 1)},
                      techniques=("Artiglio", "Fucile a Raggi"),
                      extra={"BAB": 3, "CAE": 14, "CAC": 15, "competenze": [],
                             "TS": {"Tempra": 4, "Riflessi": 5, "Volontà": 0}})
    chars = {"Kira": kira, "Drone": drone}
    chars.update(overrides)
    techs = {
        "Pistola Laser": Technique("Pistola Laser", kind="arma", type="fuoco",
                                   extra={"danni": "1d4", "attacco": "distanza", "categoria": "armi piccole",
                                          "livello": 1}),
        "Coltello Stellare": Technique("Coltello Stellare", kind="arma", type="perforante",
                                       extra={"danni": "1d4", "attacco": "mischia",
                                              "categoria": "armi da mischia base", "livello": 1}),
        "Granata a Frammentazione": Technique("Granata a Frammentazione", kind="arma", type="perforante",
                                              extra={"danni": "1d6", "attacco": "granata", "categoria": "granate",
                                                     "livello": 2, "ts": {"tipo": "Riflessi", "esito": "Dimezza"}}),
        "Artiglio": Technique("Artiglio", kind="arma", type="tagliente",
                              extra={"danni": "1d6", "attacco": "mischia", "naturale": True}),
        "Fucile a Raggi": Technique("Fucile a Raggi", kind="arma", type="elettricità",
                                    extra={"danni": "1d8", "attacco": "distanza", "categoria": "armi lunghe"}),
    }
    return Registry(characters=chars, techniques=techs)


def audit(*posts: Post, reg: Registry | None = None, **settings):
    h = CombatHistory(thread=THREAD, posts=tuple(posts), registry=reg if reg is not None else registry())
    return replay(h, "starfinder", settings=settings or None)


# ------------------------------------------------------------------ registration

def test_registered_and_settings_described():
    rs = available_rulesets()["starfinder"]
    assert rs.title
    names = {s.name for s in rs.settings}
    assert {"critical_multiplier", "natural_20_critical", "round_rule"} <= names
    assert all(s.description for s in rs.settings)


@pytest.mark.parametrize("bad", [{"critical_multiplier": "due"}, {"critical_multiplier": 0},
                                 {"natural_20_critical": "sì"}, {"round_rule": "ogni post"},
                                 {"nonlethal_at_zero_ps": 1}, {"moltiplicatore": 2}])
def test_bad_setting_is_named_error(bad):
    with pytest.raises(BadSetting):
        audit(post("Kira"), **bad)


# ------------------------------------------------------------------ the text's worked examples

def test_six_stamina_nine_damage_example():
    """'se si hanno 6 PS e si subiscono 9 danni, i PS si riducono a 0, si perdono 3 PF'."""
    reg = registry()
    reg.techniques["Cannone"] = Technique("Cannone", kind="arma", type="fuoco",
                                          extra={"danni": "2d6", "attacco": "distanza", "categoria": "armi piccole"})
    a = audit(
        post("Kira", roll("1d20+8", (10,), "Attacco [Cannone] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
             roll("2d6", (4, 5), "Danni [Cannone] (Kira vs Drone)")),
        reg=reg,
    )
    d = a.characters["Drone"]
    assert (d["ps"], d["pf"]) == (0, 5)  # 6 PS absorbed, 3 PF lost out of 8
    v = verdict(a, 0, "outcome.damage")
    assert (v.expected, v.details["ps_loss"], v.details["pf_loss"]) == (9, 6, 3)
    # "tutti i danni seguenti riducono i PF finché non si recuperano PS"
    a = audit(post("Drone", schema={"PS": (0, 6), "PF": (5, 8), "PR": (1, 1)}),
              post("Kira", roll("1d20+8", (10,), "Attacco [Cannone] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("2d6", (1, 1), "Danni [Cannone] (Kira vs Drone)")), reg=reg)
    assert (a.characters["Drone"]["ps"], a.characters["Drone"]["pf"]) == (0, 3)


def test_doubling_twice_is_times_three():
    assert combine_multipliers([2, 2]) == 3
    assert combine_multipliers([2, 3]) == 4
    assert combine_multipliers([2]) == 2
    assert combine_multipliers([]) == 1


def test_critical_with_extra_doubling_needs_three_damage_rolls():
    a = audit(
        post("Kira",
             roll("1d20+8", (20,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza]) x2 [Colpo Mirato]"),
             roll("1d4", (1,), "Danni [Pistola Laser] (Kira vs Drone)"),
             roll("1d4", (2,), "Danni [Pistola Laser] (Kira vs Drone)"),
             roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")),
    )
    v = verdict(a, 0, "starfinder.multipliers_combined")
    assert (v.expected, v.found) == (3, 4)
    assert "starfinder.damage_roll_count" not in codes(a, 0)
    assert a.characters["Drone"]["ps"] == 0 and a.characters["Drone"]["pf"] == 8
    assert verdict(a, 0, "outcome.damage").expected == 6


# ------------------------------------------------------------------ attack roll composition

def test_legal_ranged_attack_hits_cae():
    a = audit(post("Kira", roll("1d20+8", (7,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")))
    v = verdict(a, 0, "outcome.hit")
    assert (v.expected, v.found) == (14, 15)  # CAE of the Drone: the laser is energy only
    assert [c for c in codes(a, 0) if a.posts[0].verdicts[codes(a, 0).index(c)].severity == "error"] == []
    assert a.characters["Drone"]["ps"] == 3


def test_kinetic_weapon_goes_against_cac_and_wrong_ca_is_flagged():
    a = audit(post("Kira", roll("1d20+7", (7,), "Attacco [Coltello Stellare] (Kira vs Drone): (+5 [BAB] +2 [Forza]) vs CAE 14"),
                   roll("1d4+2", (2,), "Danni [Coltello Stellare] (Kira vs Drone): (+2 [Forza])")))
    v = verdict(a, 0, "starfinder.wrong_ac")
    assert (v.expected, v.found) == ("CAC", "CAE")
    assert verdict(a, 0, "outcome.miss").expected == 15  # 14 vs CAC 15: miss
    assert verdict(a, 0, "starfinder.damage_on_miss")
    assert a.characters["Drone"]["ps"] == 6


def test_ranged_attack_with_strength_is_wrong_ability():
    a = audit(post("Kira", roll("1d20+7", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +2 [Forza])")))
    v = verdict(a, 0, "starfinder.wrong_ability")
    assert (v.expected, v.found) == ("Destrezza", "Forza")
    # resolution uses the right bonus (+8): 18 vs CAE 14
    assert verdict(a, 0, "outcome.hit").found == 18


def test_thrown_uses_strength_melee_uses_strength():
    reg = registry()
    reg.techniques["Giavellotto"] = Technique("Giavellotto", kind="arma", type="perforante",
                                              extra={"danni": "1d6", "attacco": "lancio", "categoria": "armi piccole"})
    a = audit(post("Kira", roll("1d20+7", (10,), "Attacco [Giavellotto] (Kira vs Drone): (+5 [BAB] +2 [Forza])"),
                   roll("1d6+2", (3,), "Danni [Giavellotto] (Kira vs Drone): (+2 [Forza])")), reg=reg)
    assert not [v for v in a.posts[0].verdicts if v.severity == "error"]
    assert a.characters["Drone"]["ps"] == 1


def test_wrong_bab_and_sum_mismatch():
    a = audit(post("Kira", roll("1d20+9", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+6 [BAB] +3 [Destrezza])")))
    v = [v for v in a.posts[0].verdicts if v.code == "dice.modifier_mismatch"][0]
    assert (v.expected, v.found) == (5, 6)
    a = audit(post("Kira", roll("1d20+9", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])")))
    v = verdict(a, 0, "dice.modifier_mismatch")
    assert (v.expected, v.found) == (8, 9)


def test_non_proficient_weapon_minus_four():
    reg = registry()
    a = audit(post("Drone", roll("1d20+5", (10,), "Attacco [Fucile a Raggi] (Drone vs Kira): (+3 [BAB] +2 [Destrezza])")),
              reg=reg)
    v = verdict(a, 0, "starfinder.non_proficient")
    assert (v.expected, v.found) == (-4, 0)
    assert verdict(a, 0, "outcome.miss").found == 11  # 10 + 3 + 2 − 4 vs CAE 15
    a = audit(post("Drone", roll("1d20+1", (14,), "Attacco [Fucile a Raggi] (Drone vs Kira): (+3 [BAB] +2 [Destrezza] -4 [Non competente])")),
              reg=reg)
    assert "starfinder.non_proficient" not in codes(a, 0)
    assert verdict(a, 0, "outcome.hit").found == 15


def test_natural_weapon_is_always_proficient():
    a = audit(post("Drone", roll("1d20+4", (12,), "Attacco [Artiglio] (Drone vs Kira): (+3 [BAB] +1 [Forza])"),
                   roll("1d6+1", (4,), "Danni [Artiglio] (Drone vs Kira): (+1 [Forza])")))
    assert "starfinder.non_proficient" not in codes(a, 0)
    v = verdict(a, 0, "outcome.hit")
    assert (v.expected, v.found) == (16, 16)  # slashing: CAC; the Drone has no proficiencies at all
    assert a.characters["Kira"]["ps"] == 7


def test_non_proficient_armour_lowers_ca():
    reg = registry()
    drone = reg.characters["Drone"]
    reg.characters["Drone"] = Character(name="Drone", stats=drone.stats, resources=drone.resources,
                                        techniques=drone.techniques,
                                        extra={**drone.extra, "armatura": {"competente": False, "potenziata": True}})
    a = audit(post("Kira", roll("1d20+8", (2,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza]) vs CAE 14")),
              reg=reg)
    v = verdict(a, 0, "starfinder.ac_mismatch")
    assert (v.expected, v.found) == (10, 14)
    assert verdict(a, 0, "outcome.hit").found == 10
    assert {"Impreparato", "Deconcentrato"} <= set(a.characters["Drone"]["conditions"])


def test_natural_one_always_misses_and_natural_twenty_always_hits():
    reg = registry()
    kira = reg.characters["Kira"]
    reg.characters["Kira"] = Character(name="Kira", stats=kira.stats, resources=kira.resources,
                                       extra={**kira.extra, "BAB": 20})
    a = audit(post("Kira", roll("1d20+23", (1,), "Attacco [Pistola Laser] (Kira vs Drone): (+20 [BAB] +3 [Destrezza])"),
                   roll("1d4", (4,), "Danni [Pistola Laser] (Kira vs Drone)")), reg=reg)
    assert "starfinder.natural_one" in codes(a, 0) and "outcome.hit" not in codes(a, 0)
    assert a.characters["Drone"]["ps"] == 6
    reg2 = registry()
    reg2.characters["Drone"] = Character(name="Drone", resources=reg2.characters["Drone"].resources,
                                         extra={"CAE": 40, "CAC": 40})
    a = audit(post("Kira", roll("1d20+8", (20,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)"),
                   roll("1d4", (2,), "Danni [Pistola Laser] (Kira vs Drone)")), reg=reg2)
    v = verdict(a, 0, "starfinder.natural_twenty")
    assert v.assumption == "natural_20_critical"
    assert a.characters["Drone"]["ps"] == 1  # 3 + 2: rolled twice


def test_critical_damage_multiplied_instead_of_rolled_twice():
    a = audit(post("Kira", roll("1d20+8", (20,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone) x2 [Critico]")))
    v = verdict(a, 0, "starfinder.multiplied_not_rolled")
    assert (v.expected, v.found) == (2, 1) and v.assumption == "critical_multiplier"
    assert a.characters["Drone"]["ps"] == 6  # not applied: the master decides


def test_critical_with_one_damage_roll_is_counted_wrong():
    a = audit(post("Kira", roll("1d20+8", (20,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")))
    v = verdict(a, 0, "starfinder.damage_roll_count")
    assert (v.expected, v.found) == (2, 1)


# ------------------------------------------------------------------ damage

def test_strength_to_melee_damage_only():
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4+2", (3,), "Danni [Pistola Laser] (Kira vs Drone): (+2 [Forza])")))
    v = verdict(a, 0, "starfinder.strength_on_ranged")
    assert (v.expected, v.found) == (0, 2)
    assert a.characters["Drone"]["ps"] == 3  # 3, not 5
    a = audit(post("Kira", roll("1d20+7", (12,), "Attacco [Coltello Stellare] (Kira vs Drone): (+5 [BAB] +2 [Forza])"),
                   roll("1d4", (3,), "Danni [Coltello Stellare] (Kira vs Drone)")))
    v = verdict(a, 0, "dice.missing_modifier")  # melee damage without Forza
    assert (v.expected, v.found) == (2, 0)
    assert a.characters["Drone"]["ps"] == 1  # resolved with the right modifier: 3 + 2
    a = audit(post("Kira", roll("1d20+7", (12,), "Attacco [Coltello Stellare] (Kira vs Drone): (+5 [BAB] +2 [Forza])"),
                   roll("1d4+1", (3,), "Danni [Coltello Stellare] (Kira vs Drone): (+1 [Arma Specializzata])")))
    v = verdict(a, 0, "dice.missing_modifier")
    assert (v.expected, v.found) == (2, 0)
    assert a.characters["Drone"]["ps"] == 0 and a.characters["Drone"]["pf"] == 8  # 3 + 1 + 2 = 6


def test_wrong_damage_die():
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d6", (5,), "Danni [Pistola Laser] (Kira vs Drone)")))
    v = verdict(a, 0, "dice.wrong_die")
    assert (v.expected, v.found) == ("1d4", "1d6")


def test_minimum_damage_is_one_nonlethal():
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4-3", (1,), "Danni [Pistola Laser] (Kira vs Drone): (-3 [Indebolito])")))
    v = verdict(a, 0, "starfinder.minimum_damage")
    assert (v.expected, v.found) == (1, -2)
    assert a.characters["Drone"]["ps"] == 5 and a.characters["Drone"]["nonlethal"] == 1


def test_stated_damage_total_checked():
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)"),
                   body="Sparo al drone. Danni totali: 4"))
    v = verdict(a, 0, "damage.miscalculated")
    assert (v.expected, v.found) == (3, 4)


def test_not_authentic_and_wrong_die_on_attack():
    a = audit(post("Kira", roll("1d20+8", (15,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])",
                                authentic=False)))
    assert "dice.not_authentic" in codes(a, 0)
    assert verdict(a, 0, "dice.not_authentic").severity == "warning"  # one severity per code (docs/verdicts.md)
    a = audit(post("Kira", roll("1d12+8", (11,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])")))
    v = verdict(a, 0, "dice.wrong_die")
    assert (v.expected, v.found) == ("1d20", "1d12")


# ------------------------------------------------------------------ Stamina, Ferita, Risolutezza

def _knock_out():
    reg = registry()
    reg.techniques["Cannone"] = Technique("Cannone", kind="arma", type="fuoco",
                                          extra={"danni": "3d6", "attacco": "distanza", "categoria": "armi piccole"})
    return reg, post("Kira", roll("1d20+8", (10,), "Attacco [Cannone] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                     roll("3d6", (6, 5, 6), "Danni [Cannone] (Kira vs Drone)"))


def test_zero_pf_unconscious_dying_then_pr_loss_then_death():
    reg, hit = _knock_out()
    a = audit(post("Drone", schema={"PS": (6, 6), "PF": (8, 8), "PR": (1, 1)}), hit,
              post("Drone", schema={"PS": (0, 6), "PF": (0, 8), "PR": (0, 1)}),  # round 2: −1 PR
              post("Kira"),
              post("Drone", schema={"PS": (0, 6), "PF": (0, 8), "PR": (0, 1)}),  # round 3: at 0 PR → dead
              reg=reg)
    assert verdict(a, 1, "starfinder.dying").severity == "info"
    assert {"Privo di Sensi", "Morente"} <= set(a.posts[1].state["Drone"]["conditions"])
    v = verdict(a, 2, "starfinder.dying")
    assert (v.expected, v.found, v.assumption) == (0, 1, "round_rule")
    assert not [c for c in codes(a, 2) if c.startswith("registro.")]
    assert "starfinder.dead" in codes(a, 4)
    assert "Morto" in a.characters["Drone"]["conditions"]


def test_stabilised_stops_pr_loss():
    reg, hit = _knock_out()
    a = audit(post("Drone", schema={"PS": (6, 6), "PF": (8, 8), "PR": (1, 1)}), hit,
              post("Medico", body="Stabilizzato: Drone", role="master"),
              post("Drone"), post("Kira"), post("Drone"), reg=reg)
    assert "starfinder.stabilised" in codes(a, 2)
    assert a.characters["Drone"]["pr"] == 1
    assert "Morto" not in a.characters["Drone"]["conditions"]


def test_unconscious_cannot_attack():
    reg, hit = _knock_out()
    a = audit(hit, post("Drone", roll("1d20+4", (15,), "Attacco [Artiglio] (Drone vs Kira): (+3 [BAB] +1 [Forza])")),
              reg=reg)
    assert "starfinder.acts_while_unconscious" in codes(a, 1)


def test_schema_pool_mismatch():
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")),
              post("Drone", schema={"PS": (6, 6), "PF": (8, 8), "PR": (1, 1)}))
    v = verdict(a, 1, "registro.ps_mismatch")
    assert (v.expected, v.found, v.details["resource"]) == (3, 6, "PS")


def test_first_schema_opens_the_accounts_without_registry_pools():
    reg = registry()
    reg.characters["Drone"] = Character(name="Drone", extra=reg.characters["Drone"].extra)
    a = audit(post("Drone", schema={"PS": (4, 6), "PF": (8, 8), "PR": (1, 1)}),
              post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")),
              reg=reg)
    assert a.characters["Drone"]["ps"] == 1 and a.characters["Drone"]["ps_max"] == 6


# ------------------------------------------------------------------ saves

def _grenade(stated_cd: int | None = None):
    cd = f" CD {stated_cd}" if stated_cd is not None else ""
    return post("Kira", roll("1d6", (5,), f"Danni [Granata a Frammentazione] (Kira vs Drone){cd}"))


def test_grenade_save_dimezza_rounds_down():
    # CD = 10 + ½ item level 2 (1) + Forza +2 (thrown) = 13
    a = audit(_grenade(13),
              post("Drone", roll("1d20+5", (9,), "Tiro Salvezza [Riflessi] (Drone vs Kira): (+3 [Riflessi] +2 [Destrezza]) CD 13")))
    assert verdict(a, 0, "starfinder.save_required").expected == 13
    assert verdict(a, 1, "outcome.save_success").found == 14
    v = verdict(a, 1, "starfinder.half_damage")
    assert (v.expected, v.found) == (2, 5)  # 5 / 2 → 2
    assert a.characters["Drone"]["ps"] == 4


def test_wrong_dc_and_failed_save():
    a = audit(_grenade(15),
              post("Drone", roll("1d20+5", (3,), "Tiro Salvezza [Riflessi] (Drone vs Kira): (+5 [Riflessi])")))
    v = verdict(a, 0, "starfinder.dc_mismatch")
    assert (v.expected, v.found) == (13, 15)
    assert "outcome.save_failure" in codes(a, 1)
    assert a.characters["Drone"]["ps"] == 1


def test_save_wrong_ability_and_natural_results():
    a = audit(_grenade(),
              post("Drone", roll("1d20+5", (20,), "Tiro Salvezza [Riflessi] (Drone vs Kira): (+4 [Riflessi] +1 [Costituzione])")))
    assert verdict(a, 1, "starfinder.wrong_save_ability").expected == "Destrezza"
    assert "starfinder.natural_twenty" in codes(a, 1)
    a = audit(_grenade(),
              post("Drone", roll("1d20+5", (1,), "Tiro Salvezza [Riflessi] (Drone vs Kira): (+3 [Riflessi] +2 [Destrezza])")))
    assert "starfinder.natural_one" in codes(a, 1) and "outcome.save_failure" in codes(a, 1)
    a = audit(_grenade(),
              post("Drone", roll("1d20+4", (12,), "Tiro Salvezza [Tempra] (Drone vs Kira): (+4 [Tempra])")))
    assert verdict(a, 1, "starfinder.wrong_save").expected == "Riflessi"


def test_missing_save_counts_as_failed_and_renouncing_is_allowed():
    a = audit(_grenade(), post("Drone", body="Il drone ronza."))
    assert verdict(a, 1, "starfinder.save_missing").severity == "warning"
    assert a.characters["Drone"]["ps"] == 1
    a = audit(_grenade(), post("Drone", body="Rinuncio al tiro salvezza."))
    assert "starfinder.save_renounced" in codes(a, 1) and "starfinder.save_missing" not in codes(a, 1)


def test_spell_dc_formula_mismatch_detected():
    reg = registry()
    kira = reg.characters["Kira"]
    reg.characters["Kira"] = Character(name="Kira", stats={**kira.stats, "Saggezza": Stat(16)},
                                       resources=kira.resources, extra=kira.extra)
    reg.techniques["Onda Mentale"] = Technique("Onda Mentale", kind="incantesimo",
                                               extra={"danni": "2d6", "livello": 1, "caratteristica": "Saggezza",
                                                      "ts": {"tipo": "Volontà", "esito": "Nega"}})
    a = audit(post("Kira", roll("2d6", (3, 4), "Danni [Onda Mentale] (Kira vs Drone) CD 13")),
              post("Drone", roll("1d20", (14,), "Tiro Salvezza [Volontà] (Drone vs Kira)")), reg=reg)
    v = verdict(a, 0, "starfinder.dc_mismatch")
    assert (v.expected, v.found) == (14, 13)  # 10 + spell level 1 + Saggezza +3
    assert "outcome.save_success" in codes(a, 1)  # 14 vs 14: Nega
    assert a.characters["Drone"]["ps"] == 6


# ------------------------------------------------------------------ rerolls

def test_reroll_uses_better_result_only():
    a = audit(post("Kira", roll("1d20+8", (3,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d20+8", (12,), "Ripetizione [Attacco] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (2,), "Danni [Pistola Laser] (Kira vs Drone)")))
    v = verdict(a, 0, "outcome.hit")
    assert v.found == 20 and v.roll == 1
    a = audit(post("Kira", roll("1d20+8", (12,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d20+8", (2,), "Ripetizione [Attacco] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])")))
    assert "starfinder.reroll_worse" in codes(a, 0)
    assert verdict(a, 0, "outcome.hit").found == 20


def test_second_reroll_on_same_roll_refused():
    a = audit(post("Kira", roll("1d20+8", (3,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d20+8", (4,), "Ripetizione [Attacco] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d20+8", (19,), "Ripetizione [Attacco] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])")))
    v = verdict(a, 0, "starfinder.reroll_limit")
    assert v.roll == 2
    assert verdict(a, 0, "outcome.miss").found == 12


def test_roll_twice_best_and_worst_cancel():
    a = audit(post("Kira", roll("1d20+8", (5,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d20+8", (18,), "Secondo tiro (migliore)"),
                   roll("1d20+8", (2,), "Secondo tiro (peggiore)"),
                   roll("1d20+8", (19,), "Ripetizione [Attacco]")))
    assert "starfinder.roll_twice_cancelled" in codes(a, 0)
    assert "starfinder.reroll_limit" in codes(a, 0)
    assert verdict(a, 0, "outcome.miss").found == 13


def test_reroll_in_a_later_post_is_late():
    a = audit(post("Kira", roll("1d20+8", (3,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])")),
              post("Kira", roll("1d20+8", (15,), "Ripetizione [Attacco] (Kira vs Drone)")))
    assert "starfinder.reroll_late" in codes(a, 1)


# ------------------------------------------------------------------ every verdict explains itself, hint

def test_every_verdict_has_rule_post_and_italian_message():
    reg, hit = _knock_out()
    a = audit(post("Drone", schema={"PS": (6, 6), "PF": (8, 8), "PR": (1, 1)}), hit,
              post("Drone", roll("1d20+4", (15,), "Attacco [Artiglio] (Drone vs Kira): (+3 [BAB] +1 [Forza])"),
                   schema={"PS": (0, 6), "PF": (8, 8), "PR": (1, 1)}), reg=reg)
    vs = [v for p in a.posts for v in p.verdicts]
    assert vs
    for v in vs:
        assert v.rule and v.post and v.message and v.severity in ("error", "warning", "info")
    assert {"registro.pf_mismatch", "registro.pr_mismatch"} <= set(codes(a, 2))
    a.to_dict()  # serialisable


def test_next_hint_names_next_fighter_and_pending_save():
    a = audit(post("Drone"), _grenade())
    assert a.next["character"] == "Drone"
    inc = a.next["incoming"][0]
    assert (inc["action"], inc["total"], inc["from"]) == ("Tiro Salvezza su Riflessi", 13, "Kira")
    assert a.next["dice_tags"][0]["tag"] == "[dice=1d20+5]Tiro Salvezza [Riflessi] (Drone vs Kira): (+5 [Riflessi]) CD 13[/dice]"
    tags = [d["tag"] for d in audit(post("Kira"), post("Drone")).next["dice_tags"]]
    assert any("[dice=1d20+8]Attacco [Pistola Laser]" in t and "CAE" in t for t in tags)
    assert any("[dice=1d20+7]Attacco [Coltello Stellare]" in t and "CAC" in t for t in tags)


def test_next_hint_registro_lines_owed_since_last_post():
    a = audit(post("Drone"), post("Kira", roll("1d20+8", (10,), "Attacco [Cannone] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                                   roll("3d6", (4, 4, 3), "Danni [Cannone] (Kira vs Drone)")), reg=_knock_out()[0])
    assert [r["line"] for r in a.next["registro"]] == ["-6 PS [Cannone]", "-5 PF [Cannone]"]
    assert a.next["stats"]["PS"] == "0/6" and a.next["stats"]["CAC"] == 15
    a = audit(post("Drone"), post("Kira"), post("Drone"))
    assert a.next["character"] == "Kira" and a.next["registro"] == []


def test_replay_resumes_from_previous():
    reg, hit = _knock_out()
    posts = (post("Drone", schema={"PS": (6, 6), "PF": (8, 8), "PR": (1, 1)}), hit)
    h1 = CombatHistory(thread=THREAD, posts=posts, registry=reg)
    first = replay(h1, "starfinder")
    h2 = CombatHistory(thread=THREAD, posts=posts + (post("Drone"),), registry=reg)
    second = replay(h2, "starfinder", previous=first)
    assert second.replayed == 1
    assert second.characters == replay(h2, "starfinder").characters


# ------------------------------------------------------------------ bad input never crashes

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st  # noqa: E402

_words = st.sampled_from(["Attacco", "Danni", "Tiro Salvezza", "Ripetizione", "Secondo tiro (peggiore)", "TS",
                          "[Pistola Laser]", "[Granata a Frammentazione]", "[Riflessi]", "(Kira vs Drone)",
                          "(Drone vs Kira)", "+5 [BAB]", "-4 [Non competente]", "+3 [Destrezza]", "+2 [Forza]",
                          "x2 [Critico]", "x3", "CAE 14", "CAC", "CD 99", ":", "(", "]", "{", "vs", "Kira"])


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(_words, max_size=8), st.integers(1, 3), st.sampled_from([4, 6, 20]),
                          st.integers(-5, 12), st.booleans()), max_size=5),
       st.sampled_from(["Kira", "Drone", "Nessuno"]))
def test_random_posts_never_crash(rolls, who):
    rs = []
    for words, count, sides, const, show in rolls:
        faces = tuple(min(sides, 1 + (i * 7) % sides) for i in range(count)) if show else None
        expr = f"{count}d{sides}" + (f"{const:+d}" if const else "")
        rs.append(roll(expr, faces, " ".join(words)))
    a = audit(post(who, *rs), post("Drone", *rs[:1], schema={"PS": (1, 6)}), post(who, *rs[::-1]))
    assert_explained(a)


def test_garbage_registry_values_are_ignored_not_fatal():
    reg = registry()
    reg.characters["Kira"] = Character(name="Kira", extra={"BAB": "tanto", "CAE": None, "competenze": "armi piccole",
                                                           "TS": ["Riflessi"], "mod": {"Destrezza": "x"}})
    reg.techniques["Pistola Laser"] = Technique("Pistola Laser", kind="arma", extra={"danni": 7, "ts": "Riflessi"})
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")), reg=reg)
    assert verdict(a, 0, "outcome.hit").details["verified"] is False  # BAB unknown: the rendered bonus is used


def test_master_round_rule_counts_rounds_from_master_lines():
    reg, hit = _knock_out()
    posts = (post("Drone", schema={"PS": (6, 6), "PF": (8, 8), "PR": (1, 1)}), hit, post("Drone"), post("Kira"))
    a = audit(*posts, reg=reg, round_rule="master")
    assert not any("starfinder.dying" == c for i in (2, 3) for c in codes(a, i))  # no master line: no new round
    a = audit(*posts, post("Aurora", body="Round 2", role="master"), reg=reg, round_rule="master")
    v = verdict(a, 4, "starfinder.dying")
    assert v.assumption is None and a.characters["Drone"]["pr"] == 0


def test_hit_without_target_asks_for_ruling():
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser]: (+5 [BAB] +3 [Destrezza]) vs CAE 14"),
                   roll("1d4", (3,), "Danni [Pistola Laser]")))
    assert "outcome.hit" in codes(a, 0)
    assert verdict(a, 0, "ruling.needed").expected == "bersaglio"
    assert a.characters["Drone"]["ps"] == 6


def test_next_hint_for_a_named_character_from_snapshot():
    a = audit(post("Drone"), _grenade())
    rs = available_rulesets()["starfinder"]
    assert rs.next_hint(a.snapshots[-1].state, "Kira")["incoming"] == []
    assert rs.next_hint(a.snapshots[-1].state, "Sconosciuto")["character"] == "Sconosciuto"


# ------------------------------------------------------------------ the less common paths

def test_damage_without_attack_is_not_applied():
    a = audit(post("Kira", roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")))
    assert verdict(a, 0, "starfinder.damage_without_attack").severity == "warning"
    assert a.characters["Drone"]["ps"] == 6


def test_parziale_success_asks_the_master_and_failure_applies_damage():
    reg = registry()
    reg.techniques["Raggio Rallentante"] = Technique("Raggio Rallentante", kind="incantesimo",
                                                     extra={"danni": "1d6", "CD": 12,
                                                            "ts": {"tipo": "Tempra", "esito": "Parziale"}})
    cast = post("Kira", roll("1d6", (4,), "Danni [Raggio Rallentante] (Kira vs Drone)"))
    a = audit(cast, post("Drone", roll("1d20+4", (15,), "Tiro Salvezza [Tempra] (Drone vs Kira): (+4 [Tempra])")), reg=reg)
    v = verdict(a, 1, "ruling.needed")
    assert v.expected == "effetto parziale" and a.characters["Drone"]["ps"] == 6
    a = audit(cast, post("Drone", roll("1d20+4", (2,), "Tiro Salvezza [Tempra] (Drone vs Kira): (+4 [Tempra])")), reg=reg)
    assert a.characters["Drone"]["ps"] == 2


def test_nonlethal_minimum_at_zero_stamina_setting():
    reg, hit = _knock_out()
    reg.techniques["Pugno"] = Technique("Pugno", kind="arma", type="contundente",
                                        extra={"danni": "1d4", "attacco": "mischia", "naturale": True})
    weak = post("Kira", roll("1d20+7", (15,), "Attacco [Pugno] (Kira vs Drone): (+5 [BAB] +2 [Forza])"),
                roll("1d4-5", (1,), "Danni [Pugno] (Kira vs Drone): (+2 [Forza] -7 [Indebolito])"))
    drained = post("Drone", schema={"PS": (0, 6), "PF": (8, 8), "PR": (1, 1)})
    a = audit(drained, weak, reg=reg)
    v = verdict(a, 1, "ruling.needed")
    assert v.assumption == "nonlethal_at_zero_ps" and a.characters["Drone"]["pf"] == 8
    a = audit(drained, weak, reg=reg, nonlethal_at_zero_ps="pf")
    assert a.characters["Drone"]["pf"] == 7 and a.characters["Drone"]["nonlethal"] == 1


def test_undue_non_proficient_penalty_and_weapon_critical_multiplier():
    a = audit(post("Kira", roll("1d20+4", (15,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza] -4 [Non competente])")))
    assert verdict(a, 0, "starfinder.proficiency_mismatch").found == -4
    reg = registry()
    w = reg.techniques["Pistola Laser"]
    reg.techniques["Pistola Laser"] = Technique(w.name, kind=w.kind, type=w.type, extra={**w.extra, "critico": "x3"})
    a = audit(post("Kira", roll("1d20+8", (20,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   *[roll("1d4", (1,), "Danni [Pistola Laser] (Kira vs Drone)") for _ in range(3)]), reg=reg)
    assert "starfinder.damage_roll_count" not in codes(a, 0)
    assert a.characters["Drone"]["ps"] == 3


def test_stated_ac_mismatch_and_unknown_target_ca():
    a = audit(post("Kira", roll("1d20+8", (6,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza]) vs CAE 12")))
    v = verdict(a, 0, "starfinder.ac_mismatch")
    assert (v.expected, v.found) == (14, 12)
    assert "outcome.hit" in codes(a, 0)  # 14 vs the registry's CAE 14
    a = audit(post("Kira", roll("1d20+8", (6,), "Attacco [Pistola Laser] (Kira vs Ombra): (+5 [BAB] +3 [Destrezza])")))
    assert verdict(a, 0, "ruling.needed").expected == "CAE"
    a = audit(post("Kira", roll("1d20+8", (6,), "Attacco [Pistola Laser] (Kira vs Ombra): (+5 [BAB] +3 [Destrezza]) vs CAE 13")),
              post("Kira", roll("1d4", (2,), "Danni [Pistola Laser] (Kira vs Ombra)")))
    assert "outcome.hit" in codes(a, 0)


def test_reroll_after_damage_is_late():
    a = audit(post("Kira", roll("1d20+8", (3,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (2,), "Danni [Pistola Laser] (Kira vs Drone)"),
                   roll("1d20+8", (18,), "Ripetizione [Attacco] (Kira vs Drone)")))
    assert "starfinder.reroll_late" in codes(a, 0)
    assert "outcome.miss" in codes(a, 0)


def test_roll_declared_for_another_character_is_noted():
    a = audit(post("Drone", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])")))
    v = verdict(a, 0, "starfinder.other_actor")
    assert (v.severity, v.expected, v.found) == ("info", "Drone", "Kira")
    assert "outcome.hit" in codes(a, 0)  # noted, not refused: the attack is Kira's


def test_save_without_its_type_says_so_in_italian():
    a = audit(post("Drone", roll("1d20+2", (1,), "Tiro Salvezza (Drone) CD 99")))
    v = verdict(a, 0, "outcome.save_failure")
    assert "None" not in v.message and "tipo non indicato" in v.message and (v.expected, v.found) == (99, 3)


# ------------------------------------------------------------------ rulesets/_shared.py (cosmo and poteri too)

def test_shared_name_folding_and_lookups():
    from engine.rulesets import _shared as S
    from engine.rulesets.cosmo.tables import fold as cosmo_fold

    assert S.fold("  Volontà   ALTA ") == "volonta alta" and S.fold(None) == ""
    assert S.fold("Catene d'Ombra") == "catene d'ombra" and cosmo_fold("Catene d'Ombra") == "catene dombra"
    techs = {"Catene d'Ombra": 1, "Scudo di Luce": 2}
    assert S.find(techs, "scudo di LUCE") == 2 and S.find(techs, "") is None and S.find(techs, "Altro") is None
    assert S.find(techs, "catene dombra") is None and S.find(techs, "catene dombra", cosmo_fold) == 1
    state = type("S", (), {"fighters": {"Kira": None}, "registry": registry()})()
    assert S.canon(state, "kira") == "Kira" and S.canon(state, "DRONE") == "Drone"
    assert S.canon(state, "  Nuovo ") == "Nuovo" and S.canon(state, None) is None


def test_shared_numbers_turns_and_registro_lines():
    from engine.rulesets import _shared as S

    assert [S.as_int(v) for v in (3, "+4", " -2 ", 5.0, 5.5, True, None, "tre")] == [3, 4, -2, 5] + [None] * 4
    assert S.as_list(None) == [] and S.as_list("Rissa") == ["Rissa"] and S.as_list(("a", "b")) == ["a", "b"]
    assert S.next_in_order(("A", "B", "C"), "C") == "A" and S.next_in_order(("A", "B"), "Z") == "A"
    assert S.next_in_order((), "A") is None
    assert S.face_of(roll("1d20+5", (7,), "x")) == 7 and S.face_of(roll("1d20+5", None, "x")) is None
    assert S.registro_lines([(-3, "PS", "Pistola Laser")]) == [
        {"amount": -3, "resource": "PS", "label": "Pistola Laser", "line": "-3 PS [Pistola Laser]"}]


def test_each_attacker_uses_its_own_weapon_of_a_shared_name():
    """Drone's sheet and Kira's both list a "Pistola Laser" (1d8 and 1d4): each attack is checked on its own."""
    base = registry()
    drone_gun = Technique("Pistola Laser", kind="arma", type="fuoco", owner="Drone",
                          extra={"danni": "1d8", "attacco": "distanza", "livello": 1})
    drone = Registry(characters={"Drone": replace(base.characters["Drone"], techniques=("Pistola Laser",))},
                     techniques={"Pistola Laser": drone_gun})
    kira = Registry(characters={"Kira": base.characters["Kira"]},
                    techniques={k: replace(t, owner="Kira") for k, t in base.techniques.items()})
    reg = drone.merged(kira)
    assert reg.techniques["Pistola Laser"] is drone_gun and reg.techniques["Pistola Laser [Kira]"].owner == "Kira"
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d4", (3,), "Danni [Pistola Laser] (Kira vs Drone)")),
              post("Drone", roll("1d20+5", (18,), "Attacco [Pistola Laser] (Drone vs Kira): (+3 [BAB] +2 [Destrezza])"),
                   roll("1d6", (5,), "Danni [Pistola Laser] (Drone vs Kira)")), reg=reg)
    assert "dice.wrong_die" not in codes(a, 0)  # Kira's 1d4 (was: Drone's 1d8)
    v = verdict(a, 1, "dice.wrong_die")
    assert (v.expected, v.found) == ("1d8", "1d6")


def test_damage_on_the_wrong_die_is_never_applied():
    """1d6 for a 1d4 weapon: the roll says nothing of the weapon's damage, which is not applied (was: 5 PS)."""
    a = audit(post("Kira", roll("1d20+8", (10,), "Attacco [Pistola Laser] (Kira vs Drone): (+5 [BAB] +3 [Destrezza])"),
                   roll("1d6", (5,), "Danni [Pistola Laser] (Kira vs Drone)")))
    assert verdict(a, 0, "dice.wrong_die").found == "1d6"
    assert "ruling.needed" not in codes(a, 0)  # the wrong die says why no damage is applied
    drone = a.characters["Drone"]
    assert (drone["ps"], drone["pf"]) == (drone["ps_max"], drone["pf_max"])
