"""Property: no history, however odd, makes the `guida` replay raise; the fold stays deterministic."""
from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core import replay
from engine.history import CombatHistory, DamageCalc, DamageTerm, DiceLabel, Modifier, Post, PostSchema, RegistroEntry, Resource, Roll, Stat
from tests.plugins.engine import THREAD

NAMES = ["Hollow", "Quincy", "Orihime", "", "hollow"]
ACTIONS = ["Attacco", "Protezione", "Parata", "Schivata", "Sbilanciamento", "Contrattacco", "Contrattacco Diretto",
           "Contrattacco su Azione Generica", "Spostamento", "Preparazione", "Difesa Nulla", "Liberazione", "Reazione",
           "Azione Secondaria Indipendente", "Protezione su Alleato", "Boh", None]
LABELS = ["Raggio Corto", "Destrezza", "Mirato Testa", "Mirato Gambe", "Bonus Protezione", "Sbilanciamento",
          "Sorpresa", "Contrattacco", "Preparazione", "Sbalzo", "x"]

mods = st.lists(st.builds(Modifier, st.integers(-20, 20), st.sampled_from(LABELS)), max_size=5)
tags = st.builds(DiceLabel, raw=st.just("label"), action=st.sampled_from(ACTIONS),
                 techniques=st.lists(st.sampled_from(["Artigli", "Cero", "Sbalzo", "Costrizione Impropria"]), max_size=2).map(tuple),
                 actor=st.sampled_from(NAMES + [None]), targets=st.lists(st.sampled_from(NAMES), max_size=3).map(tuple),
                 modifiers=mods.map(tuple))


@st.composite
def rolls(draw):
    sides = draw(st.sampled_from([0, 8, 12, 15, 18, 20, 24]))
    const = draw(st.integers(-10, 20))
    faces = draw(st.one_of(st.none(), st.lists(st.integers(0, 30), min_size=1, max_size=2).map(tuple)))
    total = draw(st.one_of(st.none(), st.integers(-50, 80)))
    return Roll(expression=f"1d{sides}", count=1, sides=sides, constant=const, faces=faces, total=total, label="l",
                tag=draw(st.one_of(st.none(), tags)), source=draw(st.sampled_from(["forum_roller", "forumotion_gm", "typed_text"])),
                authentic=draw(st.booleans()))


calcs = st.builds(DamageCalc, raw=st.sampled_from(["", "2 Stack di Sbilanciamento", "Blocco Totale", "99 stack di incendio"]),
                  technique=st.sampled_from([None, "Artigli", "Cero"]), actor=st.none(), target=st.sampled_from(NAMES + [None]),
                  kind=st.sampled_from(["normale", "puro", "cura", "aggiuntivo", "boh"]),
                  terms=st.lists(st.builds(DamageTerm, st.sampled_from(["+", "-", "*", "/"]), st.sampled_from(["Potenza", "Resistenza", ""]),
                                           st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-100, 100).map(float))),
                                 max_size=4).map(tuple),
                  result=st.one_of(st.none(), st.integers(-100, 100)))


@st.composite
def posts(draw, i):
    role = draw(st.sampled_from(["player", "player", "player", "master", "gm_bot"]))
    schema = None
    if draw(st.booleans()):
        schema = PostSchema(resources={"PV": Resource(draw(st.integers(-10, 60)), draw(st.one_of(st.none(), st.integers(0, 60))))},
                            stats={"Destrezza": Stat(draw(st.integers(-5, 10)), draw(st.integers(-5, 5)))},
                            registro=draw(st.one_of(st.none(), st.lists(st.builds(RegistroEntry, st.integers(-30, 30), st.sampled_from(["PV", "PE"]),
                                                                                    st.sampled_from(["Artigli di Hollow", "x"]), st.just("r")), max_size=3).map(tuple))))
    body = draw(st.sampled_from(["", "Difesa Nulla", "Preparazione", "Ruling: damage.miscalculated post 101: danno 5",
                                 "[ruling]ruling.needed post 100: liberato Hollow[/ruling]", "Ruling: x.y post 1: annullato"]))
    return Post(id=str(100 + i), page=1, url="u", author=draw(st.sampled_from(NAMES[:3])), author_id=None, timestamp=None,
                role=role, body=body, schema=schema, rolls=tuple(draw(st.lists(rolls(), max_size=3))),
                damage=tuple(draw(st.lists(calcs, max_size=2))), character=draw(st.sampled_from(NAMES + [None])),
                answers=draw(st.sampled_from([None, str(99 + i)])))


@st.composite
def histories(draw):
    n = draw(st.integers(1, 8))
    return CombatHistory(thread=THREAD, posts=tuple(draw(posts(i)) for i in range(n)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_replay_never_raises(history):
    a = replay(history, "guida")
    assert len(a.posts) == len(history.posts)
    assert a.to_dict() == replay(history, "guida").to_dict()
    for p in a.posts:
        for v in p.verdicts:
            assert v.severity in ("error", "warning", "info") and v.message and v.rule
            assert v.code != "engine.internal_error", v.details


def test_non_finite_numbers_in_a_calculation():
    from tests.plugins.engine import Fight, R, calc

    f = Fight()
    f.post("Quincy", pv=40, stats={"Destrezza": 4}, rolls=[R("1d12+4", 6, "Attacco (Quincy vs Hollow): (+4 [Destrezza])")])
    f.post("Hollow", pv=52, stats={"Destrezza": 6}, body="Difesa Nulla")
    f.post("Quincy", pv=40, stats={"Destrezza": 4},
           damage=[calc("Hollow", None, terms=[("+", "Potenza", math.nan), ("-", "Resistenza", math.inf)])])
    a = replay(f.history(), "guida")
    codes = [v.code for p in a.posts for v in p.verdicts]
    assert "ruling.needed" in codes and "engine.internal_error" not in codes
