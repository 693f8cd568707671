"""Condizioni Fisiche of `guida`: Stack types 1–4 and Accecamento, absolute expiry, limits, effects."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from engine.rulesets.guida import stacks as S
from engine.rulesets.guida.tables import BadValue


def fresh(owner="Quincy"):
    return S.StackSet(owner)


# --- expiry: every duration of the text, as (applied at owner's turn, acts in turns, gone after turn) --

EXPIRY_TABLE = [
    # Type-1: "1 Turno = 1 Fase Difensiva + 1 Fase Offensiva" → the receiver's next post (RULINGS #4)
    ("Sbilanciamento", 2, {}, [3], 3),
    ("Stordimento", 0, {}, [1], 1),
    # Type-2: "spariscono tutte insieme dopo 3 Turni"
    ("Storpiatura Debilitante", 2, {"damage_taken": 5}, [3, 4, 5], 5),
    ("Storpiatura Articolare", 4, {"damage_taken": 1}, [5, 6, 7], 7),
    ("Storpiatura Spirituale", 1, {"damage_taken": 2}, [2, 3, 4], 4),
    # Type-3: "non vengono rimosse durante una role"
    ("Ustione", 2, {}, [3, 4, 10, 100], None),
    ("Avvelenamento", 2, {"source": "Cicuta"}, [3, 50], None),
    # Type-4: until their condition ends
    ("Incendio", 1, {"condition": "fiamme"}, [2, 3], None),
    ("Congelamento", 1, {"condition": "ghiaccio"}, [2, 3], None),
    # Accecamento: as long as the technique says (here: until the end of turn 4)
    ("Accecamento", 2, {"expires": S.Expiry("Quincy", 4)}, [3, 4], 4),
]


@pytest.mark.parametrize("name,at,kw,acts,gone_after", EXPIRY_TABLE)
def test_expiry_table(name, at, kw, acts, gone_after):
    r = S.apply(fresh(), [(name, 1)], turn=at, **kw)
    st_ = r.stacks
    assert r.applied == ((name, 1),)
    assert st_.count(name, at) == 0  # never acts in the turn it was received
    for t in acts:
        assert st_.count(name, t) == 1, t
    entry = st_.entries[0]
    if gone_after is None:
        assert entry.expires is None
        assert S.expire_at(st_, 10_000).count(name) == 1
    else:
        assert entry.expires == S.Expiry("Quincy", gone_after)
        assert "fine del turno" in entry.expires.describe()
        assert st_.count(name, gone_after + 1) == 0
        assert S.expire_at(st_, gone_after - 1).count(name) == 1
        assert S.expire_at(st_, gone_after).count(name) == 0
        assert S.expiring(st_, gone_after) == (entry,)


def test_type1_limit_four_and_attacker_order():
    r = S.apply(fresh(), [("Sbilanciamento", 2), ("Stordimento", 2)], turn=1)
    assert r.overflow == ()
    r = S.apply(r.stacks, [("Stordimento", 2), ("Sbilanciamento", 1)], turn=1)
    assert r.applied == ()
    assert [(o.name, o.requested, o.applied, o.limit, o.existing) for o in r.overflow] == [
        ("Stordimento", 2, 0, 4, 4), ("Sbilanciamento", 1, 0, 4, 4)]
    assert r.stacks.counts(2) == {"Sbilanciamento": 2, "Stordimento": 2}
    # the attacker chooses on overflow: the first listed are applied
    r = S.apply(fresh(), [("Stordimento", 3), ("Sbilanciamento", 3)], turn=1)
    assert r.applied == (("Stordimento", 3), ("Sbilanciamento", 1))
    assert r.overflow[0].message().startswith("3 Stack di Sbilanciamento richieste")


def test_type1_expired_ones_do_not_count_toward_the_limit():
    r = S.apply(fresh(), [("Sbilanciamento", 4)], turn=2)  # act in turn 3
    # received again during the owner's own turn 3: the old ones end with turn 3, the new act in turn 4
    r = S.apply(r.stacks, [("Sbilanciamento", 4)], turn=3)
    assert r.overflow == ()
    assert r.stacks.count("Sbilanciamento", 3) == 4 and r.stacks.count("Sbilanciamento", 4) == 4
    assert S.expire_at(r.stacks, 3).counts() == {"Sbilanciamento": 4}


def test_type2_limit_per_category_and_reset():
    r = S.apply(fresh(), [("Storpiatura Articolare", 2), ("Storpiatura Debilitante", 3)], turn=1, damage_taken=4)
    r = S.apply(r.stacks, [("Storpiatura Articolare", 2)], turn=3, damage_taken=4)
    assert r.applied == (("Storpiatura Articolare", 1),)
    assert (r.overflow[0].limit, r.overflow[0].existing, r.overflow[0].scope) == (3, 2, "Storpiatura Articolare")
    s = r.stacks
    # the new application reset the whole Articolare category to end at turn 6; Debilitante still ends at 4
    assert s.count("Storpiatura Articolare", 6) == 3
    assert s.count("Storpiatura Debilitante", 4) == 3 and s.count("Storpiatura Debilitante", 5) == 0
    # even an application that adds nothing (full) resets the count
    r = S.apply(s, [("Storpiatura Articolare", 1)], turn=5, damage_taken=1)
    assert r.applied == () and r.overflow
    assert r.stacks.count("Storpiatura Articolare", 8) == 3 and r.stacks.count("Storpiatura Articolare", 9) == 0


def test_type2_needs_damage():
    r = S.apply(fresh(), [("Storpiatura Articolare", 1)], turn=1, damage_taken=0)
    assert r.applied == () and r.rejected[0].reason == "nessun_danno"
    r = S.apply(fresh(), [("Storpiatura Articolare", 1)], turn=1)
    assert r.applied and r.notes  # unknown damage: applied, flagged


def test_aggiuntivo_and_protezione_block_stacks():
    r = S.apply(fresh(), [("Sbilanciamento", 1), ("Storpiatura Articolare", 1), ("Ustione", 2)],
                turn=1, damage_taken=3, aggiuntivo=True)
    assert r.applied == (("Ustione", 2),)
    assert {x.reason for x in r.rejected} == {"aggiuntivo"}
    r = S.apply(fresh(), [("Stordimento", 2), ("Sbilanciamento", 2), ("Storpiatura Debilitante", 1)],
                turn=1, damage_taken=3, protezione=True)
    assert r.applied == (("Storpiatura Debilitante", 1),)
    assert [x.name for x in r.rejected] == ["Stordimento", "Sbilanciamento"]


def test_unknown_stack_and_bad_counts():
    assert S.rule_of("Ustione").endswith("Stack Tipo-3: Stack Durature")
    assert S.rule_of("Accecamento").endswith("Accecamento")
    with pytest.raises(BadValue):
        S.apply(fresh(), [("Ustione", 1)], turn=-1)
    with pytest.raises(S.UnknownStack):
        S.apply(fresh(), [("Paura", 1)], turn=1)
    with pytest.raises(BadValue):
        S.apply(fresh(), [("Ustione", -1)], turn=1)
    with pytest.raises(BadValue):
        S.apply(fresh(), [("Incendio", 1)], turn=1)  # Type-4 needs its condition


def test_effects_type1():
    s = S.apply(fresh(), [("Sbilanciamento", 3), ("Stordimento", 1)], turn=1).stacks
    e = S.effects(s, 2)
    assert e.modifier("difendere") == -3 - 1
    assert e.modifier("colpire") == -1
    assert e.potenziale_mod == -3
    assert [m.tag() for m in e.mods] == ["-3 [Sbilanciamento]", "-1 [Stordimento]"]
    assert S.effects(s, 1).mods == () and S.effects(s, 3).mods == ()


@pytest.mark.parametrize("name,stat", [
    ("Storpiatura Debilitante", "Forza"), ("Storpiatura Articolare", "Destrezza"), ("Storpiatura Spirituale", "Intelligenza")])
def test_effects_storpiature(name, stat):
    s = S.apply(fresh(), [(name, 2)], turn=1, damage_taken=1).stacks
    assert S.effects(s, 2).stats == {stat: -6}


@pytest.mark.parametrize("n,malus", [(1, -1), (2, -1), (3, -2), (5, -2), (6, -4), (9, -4), (10, -6), (14, -6),
                                     (15, -9), (20, -9), (21, -12), (40, -12)])
def test_ustione_table(n, malus):
    s = S.apply(fresh(), [("Ustione", n)], turn=0).stacks
    assert S.effects(s, 1).stats == {"Costituzione": malus}


@pytest.mark.parametrize("n,dmg_i,dmg_c,dex", [
    (1, 2, 1, -1), (2, 2, 1, -1), (3, 3, 2, -2), (6, 5, 3, -3), (10, 7, 4, -5), (15, 9, 5, -7), (21, 12, 6, -8),
    (30, 12, 6, -8)])
def test_type4_tables(n, dmg_i, dmg_c, dex):
    s = S.apply(fresh(), [("Incendio", n)], turn=0, condition="fiamme").stacks
    s = S.apply(s, [("Congelamento", n)], turn=0, condition="gelo").stacks
    dmg = S.damage_per_turn(s, 1)
    assert [(d.amount, d.kind) for d in dmg] == [(dmg_i, "puro"), (dmg_c, "puro")]
    assert S.effects(s, 1).stats == {"Destrezza": dex}


@pytest.mark.parametrize("n,lost_by_turn", [
    # 1-5: −1 every 2 turns; 6-10: −1 per turn; 11-17: −2; 18-25: −3; 26+: −4
    (5, {1: 0, 2: 1, 3: 0, 4: 1}),
    (6, {1: 1, 2: 0, 3: 1}),  # 6 → 5 then the 1-5 band: every 2 turns
    (10, {1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 0, 7: 1}),  # 10 → 6 in four turns, 6 → 5, then every 2
    (11, {1: 2}),
    (17, {1: 2}),
    (18, {1: 3}),
    (25, {1: 3}),
    (26, {1: 4}),
])
def test_type4_decay(n, lost_by_turn):
    s = S.apply(fresh(), [("Incendio", n)], turn=0, condition="fiamme").stacks
    for t in sorted(lost_by_turn):
        f = S.fase_iniziale(s, t)
        lost = sum(x[2] for x in f.decayed)
        assert lost == lost_by_turn[t], (t, f.decayed)
        s = f.stacks


def test_type4_damage_before_decay_and_broken_condition():
    s = S.apply(fresh(), [("Congelamento", 1)], turn=0, condition="gelo").stacks
    f = S.fase_iniziale(s, 1)
    assert [d.amount for d in f.damages] == [1] and f.decayed == () and f.broken == ()
    f = S.fase_iniziale(f.stacks, 2)
    assert [d.amount for d in f.damages] == [1]  # damage on the Stack present, then it is lost
    assert f.decayed == (("Congelamento", "gelo", 1),)
    assert f.broken == ("gelo",) and f.stacks.counts() == {}


def test_type4_damage_after_decay_setting():
    s = S.apply(fresh(), [("Incendio", 6)], turn=0, condition="fiamme").stacks
    assert [d.amount for d in S.fase_iniziale(s, 1).damages] == [5]  # 6 Stack: 5 Danni Puri
    f = S.fase_iniziale(s, 1, danno_prima_del_decadimento=False)
    assert [d.amount for d in f.damages] == [3] and f.stacks.count("Incendio") == 5  # 5 Stack: 3


def test_type4_removed_with_condition():
    s = S.apply(fresh(), [("Incendio", 6)], turn=0, condition="fiamme").stacks
    s = S.apply(s, [("Incendio", 2)], turn=1, condition="fiamme").stacks
    assert s.count("Incendio") == 8
    s = S.apply(s, [("Sbilanciamento", 1)], turn=1).stacks
    s2, gone = S.remove_condition(s, "fiamme")
    assert gone == 8 and s2.counts() == {"Sbilanciamento": 1}


def test_preparazione_removes_type1():
    s = S.apply(fresh(), [("Sbilanciamento", 2), ("Stordimento", 1), ("Ustione", 3)], turn=1).stacks
    assert S.remove(s, S.PREPARAZIONE_RIMUOVE).counts() == {"Ustione": 3}


def test_accecamento():
    s = S.apply(fresh(), [("Accecamento", 1)], turn=1).stacks
    e = S.effects(s, 2)
    assert e.stats == {"Destrezza": -4} and e.nascosti_oltre_m == 25
    r = S.apply(fresh(), [("Accecamento", 1)], turn=1, immune=True)
    assert r.applied == () and r.rejected[0].reason == "immune"


def test_avvelenamento_from_registry():
    v = S.veleno_from_extra("Cicuta", {"veleno": {"danni": [[1, 1], [4, 3]], "statistica": "Costituzione",
                                                  "malus": [[2, -1]]}})
    s = S.apply(fresh(), [("Avvelenamento", 4)], turn=0, source="Cicuta").stacks
    assert [d.amount for d in S.damage_per_turn(s, 1, {"Cicuta": v})] == [3]
    e = S.effects(s, 1, {"Cicuta": v})
    assert e.stats == {"Costituzione": -1} and e.unknown == ()
    e = S.effects(s, 1)
    assert e.unknown and "Regolamento Equipaggiamenti" in e.unknown[0]
    assert S.damage_per_turn(s, 1) == ()
    assert S.veleno_from_extra("X", {}) is None
    with pytest.raises(BadValue):
        S.veleno_from_extra("X", {"veleno": {"danni": [["a", 1]]}})


# --- properties ------------------------------------------------------------------------------------

names = st.sampled_from(["Sbilanciamento", "Stordimento", "Storpiatura Articolare", "Storpiatura Debilitante",
                         "Ustione", "Incendio"])
events = st.lists(st.tuples(st.integers(0, 3), st.lists(st.tuples(names, st.integers(0, 5)), max_size=3),
                            st.booleans()), max_size=12)


@settings(deadline=None)
@given(events)
def test_limits_never_exceeded(evs):
    s = fresh()
    turn = 0
    for step, incoming, expire in evs:
        turn += step
        s = S.apply(s, incoming, turn=turn, damage_taken=1, condition="c").stacks
        if expire:
            s = S.expire_at(s, turn)
        for t in range(turn, turn + 5):
            c = s.counts(t)
            assert c.get("Sbilanciamento", 0) + c.get("Stordimento", 0) <= 4
            assert c.get("Storpiatura Articolare", 0) <= 3 and c.get("Storpiatura Debilitante", 0) <= 3
        assert all(e.count > 0 for e in s.entries)


@settings(deadline=None)
@given(events, st.integers(0, 20), st.integers(0, 20))
def test_expiry_monotonic(evs, t1, t2):
    s = fresh()
    turn = 0
    for step, incoming, _ in evs:
        turn += step
        s = S.apply(s, incoming, turn=turn, damage_taken=1, condition="c").stacks
    lo, hi = sorted((t1, t2))
    later, earlier = S.expire_at(s, hi), S.expire_at(s, lo)
    assert set(later.entries) <= set(earlier.entries)
    assert S.expire_at(earlier, hi) == later
