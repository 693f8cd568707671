"""The replay's fast paths give the same values as the plain ones: collector paused and restored, fast constructors,
cached summaries and roll checks, incremental replay equal to a full one."""
from __future__ import annotations

import gc
import sys
import pathlib

import pytest

from engine.core import Setting, replay
from engine.history import CombatHistory, Thread
from engine.rulesets.guida import calcolo_danni as CD
from engine.rulesets.guida import difesa as DF
from engine.rulesets.guida import hints as H
from engine.rulesets.guida import tiri as TI
from engine.rulesets.guida import turno as TU
from engine.rulesets.guida.checks import RollCheck, RollContext, check, check_roll
from engine.rulesets.guida.actions import ACTIONS
from engine.rulesets.guida.messages import verdict
from engine.rulesets.guida.state import DueDamage, Fighter, Hit, Incoming, evolve, maker
from engine.verdicts import Verdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "bench"))
from bench_replay import generate  # noqa: E402

THREAD = Thread(url="https://x.forumfree.it/?t=1", platform="forumfree", host="x.forumfree.it", thread_id="1",
                title="t", pages=1, fetched_at=None)


class _Boom:
    """A ruleset whose summary fails after its second post (a bug outside the step's guard): replay raises, the
    collector must come back."""

    id = "test-boom"
    title = "boom"
    settings: tuple[Setting, ...] = ()

    def initial_state(self, thread, registry, settings):
        return 0

    def step(self, state, post):
        return state + 1, []

    def characters(self, state):
        if state > 1:
            raise RuntimeError("boom")
        return {}

    def next_hint(self, state, character=None):
        return {}


def test_replay_restores_the_collector_as_it_was():
    history = generate(6)
    assert gc.isenabled()
    replay(history, "guida")
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        replay(CombatHistory(thread=THREAD, posts=history.posts[:2]), _Boom())
    assert gc.isenabled()
    gc.disable()
    try:
        replay(history, "guida")
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()


def test_replay_leaves_frozen_objects_frozen_and_collects_cycles_later():
    history = generate(6)
    assert gc.get_freeze_count() == 0
    replay(history, "guida")
    assert gc.get_freeze_count() == 0  # its own freeze + unfreeze leaves nothing frozen
    frozen = [[]]  # someone else's frozen object (a server that froze its preloaded heap)
    frozen.append(frozen)
    gc.freeze()
    try:
        assert not any(o is frozen for o in gc.get_objects())  # the permanent generation is not listed
        replay(history, "guida")
        assert gc.get_freeze_count() > 0
        assert not any(o is frozen for o in gc.get_objects())  # still frozen: not thawed by the replay
    finally:
        gc.unfreeze()
    cycle: list = []
    cycle.append(cycle)
    del cycle, frozen
    replay(history, "guida")
    assert gc.collect() >= 2  # cyclic garbage made around a replay is still found by a full collection


def test_incremental_replay_equals_full_replay():
    history = generate(60)
    head = CombatHistory(thread=history.thread, posts=history.posts[:-15], registry=history.registry)
    full = replay(history, "guida")
    incremental = replay(history, "guida", previous=replay(head, "guida"))
    assert incremental.replayed == 15
    assert incremental.to_dict() == full.to_dict()


def test_maker_builds_what_the_constructor_builds():
    inc = ("p#0#Q", "H", "Q", "p", 0, "attacco", ("Artigli",), 14, 14, 8, None, False, "p#0", None, 1, False,
           1, False, False)
    assert maker(Incoming)(*inc) == Incoming(*inc)
    assert maker(Hit)(Incoming(*inc), "q", 1, ("r",), "Protezione", None, None) == Hit(
        Incoming(*inc), "q", 1, ("r",), "Protezione")
    assert maker(DueDamage)(5, "PV", "H", None, "p", "motore") == DueDamage(5, "PV", "H", None, "p", "motore")
    f = maker(Fighter)("Q", pv=3)
    assert f == Fighter("Q", pv=3)
    assert f.uses_attack == {} and f.stacks.entries == ()  # defaults and factories filled
    with pytest.raises(TypeError):
        maker(Hit)(Incoming(*inc))  # required fields are required


def test_fast_verdict_equals_the_dataclass():
    v = verdict("outcome.hit", "p1", "msg", "rule", roll=2, expected=3, found=4, details={"a": 1})
    assert v == Verdict("outcome.hit", "info", "msg", "rule", "p1", 2, 3, 4, {"a": 1}, None)
    assert verdict("ruling.needed", "p1", "m", "r").details == {}


def test_character_summary_is_rebuilt_when_a_shown_field_changes():
    history = generate(4)
    state = replay(history, "guida").snapshots[-1].state
    first = H.characters(state)
    assert H.characters(state) == first
    hollow = state.fighters["Hollow"]
    # a field the summary does not show: the same summary; one it shows: a new one with the new value
    same = evolve(state, fighters={**state.fighters, "Hollow": evolve(hollow, due=())})
    assert H.characters(same)["Hollow"] is first["Hollow"]
    hurt = evolve(state, fighters={**state.fighters, "Hollow": evolve(hollow, pv=1)})
    assert H.characters(hurt)["Hollow"]["pv"] == 1
    assert H.characters(state)["Hollow"]["pv"] == hollow.pv


def test_check_and_check_roll_agree_and_stamp_each_roll():
    history = generate(6)
    roll = history.posts[3].rolls[1]
    spec = ACTIONS["attacco"]
    ctx = RollContext(spec=spec, phase="offensiva", destrezza=9, destrezza_schema=4, attack=True)
    a = check_roll("p1", 1, roll, ctx)
    b = check("p2", 5, roll, spec, "offensiva", 9, 4, (), frozenset(), True)
    assert isinstance(a, RollCheck) and a.verdicts
    assert [v.post for v in a.verdicts] == ["p1"] * len(a.verdicts)
    assert [v.post for v in b.verdicts] == ["p2"] * len(b.verdicts)
    assert {v.roll for v in b.verdicts} <= {5, None}
    assert [(v.code, v.message) for v in a.verdicts] == [(v.code, v.message) for v in b.verdicts]
    assert (a.face, a.rendered, a.total) == (b.face, b.rendered, b.total)
    # the cached verdicts are copies: changing one roll's details leaves the next roll's alone
    a.verdicts[0].details["x"] = 1
    assert "x" not in check_roll("p3", 1, roll, ctx).verdicts[0].details


def test_damage_memo_follows_the_registry():
    from engine.history import Registry, Technique

    history = generate(8)
    strong = Registry(techniques={"Artigli": Technique("Artigli", potenziale=20, extra={"bonus_statistica": 3})})

    def damages(registry):
        audit = replay(history, "guida", registry)
        return [(v.code, v.expected) for p in audit.posts for v in p.verdicts if v.code.startswith("damage.")]

    with_registry = damages(strong)
    without = damages(None)
    assert with_registry != without  # Potenza 23 from the registry, not the 14 the posts state
    assert damages(strong) == with_registry
    CD._DAMAGE_MEMO[0] = (None, None, {})  # a cold memo gives the same numbers
    assert damages(strong) == with_registry
    assert damages(None) == without


@pytest.mark.parametrize("field,value,key,shown", [
    ("pv", 1, "pv", 1), ("pv_max", 2, "pv_max", 2), ("pe", 3, "pe", 3), ("pe_max", 4, "pe_max", 4),
    ("turn", 99, "turn", 99), ("costrizione", 7, "costrizione", 7),
    ("conditions", ("Accecamento",), "conditions", ["Accecamento"]),
    ("costrizioni", ("Blocco Braccia",), "conditions", ["Blocco Braccia"]),
])
def test_every_shown_field_refreshes_the_cached_summary(field, value, key, shown):
    state = replay(generate(4), "guida").snapshots[-1].state
    H.characters(state)  # cache the summaries
    hollow = state.fighters["Hollow"]
    changed = evolve(state, fighters={**state.fighters, "Hollow": evolve(hollow, **{field: value})})
    assert H.characters(changed)["Hollow"][key] == shown


def test_stacks_refresh_the_cached_summary():
    from engine.rulesets.guida import stacks as S

    state = replay(generate(4), "guida").snapshots[-1].state
    H.characters(state)
    hollow = state.fighters["Hollow"]
    stacks = S.apply(hollow.stacks, [("Sbilanciamento", 2)], turn=hollow.turn).stacks
    changed = evolve(state, fighters={**state.fighters, "Hollow": evolve(hollow, stacks=stacks)})
    assert H.characters(changed)["Hollow"]["stacks"] == {"Sbilanciamento": 2}


@pytest.mark.parametrize("factor, lvl, code", [("prevedibile_attacco", 1, "dice.bonus_not_taken"),
                                               ("prevedibile_difesa", 2, "dice.missing_modifier")])
def test_roll_check_cache_ignores_the_use_count_but_the_verdict_tells_it(factor, lvl, code):
    from engine.rulesets.guida import checks as C
    from engine.rulesets.guida.tiri import _prevedibile_req

    roll = generate(6).posts[3].rolls[0]  # a Protezione listing neither Prevedibile factor
    spec = ACTIONS["protezione"]

    def run(uses: int) -> list[Verdict]:
        req = _prevedibile_req(factor, lvl, "Artigli", uses)
        return [v for v in check("p", 0, roll, spec, "difensiva", 4, 4, (req,), frozenset(), False).verdicts
                if v.code == code]

    C._STATIC.clear()
    cold = {n: run(n) for n in (4, 5, 6)}  # the first call computes, the others reword the cached verdicts
    assert len(C._STATIC) == 1  # one entry for every use count
    for n, found in cold.items():
        assert len(found) == 1
        assert f"Artigli usata {n} volte" in found[0].message
        assert found[0].details == {"technique": "Artigli", "uses": n}
    for n in (6, 5, 4):  # each as computed on a cold cache
        C._STATIC.clear()
        assert [(v.message, v.details) for v in run(n)] == [(v.message, v.details) for v in cold[n]]


def test_clear_caches_empties_the_ruleset_caches_and_changes_no_verdict():
    from engine.rulesets import guida
    from engine.rulesets.guida import checks as C
    from engine.rulesets.guida.actions import classify

    history = generate(12)
    warm = replay(history, "guida").to_dict()
    assert C._STATIC and CD._DAMAGE_MEMO[0][2] and classify.cache_info().currsize
    guida.clear_caches()
    assert not C._STATIC and CD._DAMAGE_MEMO[0] == (None, None, {}) and classify.cache_info().currsize == 0
    assert replay(history, "guida").to_dict() == warm


def test_later_posts_never_change_an_earlier_snapshot():
    """The step sets some fields of the poster's new Fighter in place (step._set_own): only on the Fighter it built
    itself, so every snapshot stays what a replay stopped at that post gives."""
    history = generate(30)
    full = replay(history, "guida")
    for k in (0, 1, 2, 7, 18, 29):
        prefix = replay(CombatHistory(thread=history.thread, posts=history.posts[:k + 1]), "guida")
        want, got = prefix.snapshots[-1].state, full.snapshots[k].state
        assert set(got.fighters) == set(want.fighters)
        for name, f in want.fighters.items():
            assert got.fighters[name] == f, (k, name)  # every field, use counts included
            assert dict(got.fighters[name].uses_attack) == dict(f.uses_attack)
        assert got.incoming == want.incoming and got.hits == want.hits


def test_mira_parts_table_is_the_rule_it_shortcuts():
    from engine.rulesets.guida.attacco import _MIRA_PARTS

    for part, (mira, arti) in _MIRA_PARTS.items():
        assert mira == ("arti" if part in ("arti", "braccia", "braccio", "gambe", "gamba") else part)
        assert arti == ("gambe" if part in ("gambe", "gamba") else ("braccia" if part in ("braccia", "braccio") else None))


@pytest.mark.parametrize("label", ["Attacco (Hollow vs Quincy)", "Attacco alla Cieca Area 40 m", "ALLA  CIECA",
                                   "Attacco allacieca", "Attacco alla Ciecaa", ""])
def test_alla_cieca_cache_answers_as_the_pattern(label):
    from engine.rulesets.guida.tiri import _CIECA, _alla_cieca

    assert _alla_cieca(label) == bool(_CIECA.search(label))


@pytest.mark.parametrize("key", ["protezione", "parata", "schivata", "contrattacco_generica"])
@pytest.mark.parametrize("generic,answered", [(False, False), (True, False), (False, True)])
def test_one_incoming_action_is_picked_as_pick_attack_picks_it(key, generic, answered):
    """_rolls picks the only incoming action itself; _pick_attack's answer for the same pool."""

    history = generate(3)
    state = replay(CombatHistory(thread=history.thread, posts=history.posts[:2]), "guida").snapshots[-1].state
    (atk,) = [a for a in state.incoming if a.target == "Hollow"]
    atk = evolve(atk, generic=generic)
    spec = ACTIONS[key]
    p = TU._Post(evolve(state, incoming=(atk,)), history.posts[2], "Hollow")
    dfn = TI._Defence()
    if answered:
        dfn.answered.add(atk.id)
    picked = atk if atk.id not in dfn.answered and atk.generic == (spec.key == "contrattacco_generica") else None
    assert DF._pick_attack(p, [atk], dfn, history.posts[2].rolls[0], spec) is picked


def test_state_roots_built_by_maker_equal_the_dataclass_ones():
    """initial_state and a newcomer's first Fighter are built by state.maker (plain dicts, fast attribute reads all
    along the fold): the same values as the dataclass constructors give."""
    from engine.history import Character, Registry, Resource, Stat
    from engine.rulesets.guida import stacks as S
    from engine.rulesets.guida import step as ST
    from engine.rulesets.guida.state import GuidaState, frozen_map

    ch = Character(name="Quincy", player="q", resources={"PV": Resource(40, 48)}, stats={"Destrezza": Stat(4, 1)})
    reg = Registry(characters={"Quincy": ch})
    state = ST.initial_state(THREAD, reg, {"ordine_turni": True})
    assert state == GuidaState(settings=frozen_map({"ordine_turni": True}), registry=reg,
                               fighters=frozen_map({"Quincy": ST._fighter_from_registry("Quincy", ch)}),
                               aliases=frozen_map({"quincy": "Quincy", "q": "Quincy"}))
    assert ST._fighter_from_registry("Quincy", ch) == Fighter(
        name="Quincy", pv_max=48, stats=frozen_map({"Destrezza": (4, 1)}), stacks=S.StackSet("Quincy"), player="q")
    assert ST._fighter_from_registry("X", None) == Fighter(name="X", stacks=S.StackSet("X"))


def test_player_step_state_is_the_evolved_one():
    """_player builds the new GuidaState positionally (every field in order): the same value as evolve gives, for a
    plain post and one that opens an Area (aree set in the same call)."""
    from dataclasses import fields

    from engine.rulesets.guida.state import GuidaState

    assert tuple(f.name for f in fields(GuidaState)) == (
        "settings", "registry", "fighters", "order", "last", "incoming", "hits", "rulings", "posts", "aliases",
        "extra", "aree")
    history = generate(4)
    audit = replay(history, "guida")
    before, after = audit.snapshots[-2].state, audit.snapshots[-1].state
    assert list(after.__dict__) == [f.name for f in fields(GuidaState)]
    assert after == evolve(before, fighters=after.fighters, last=after.last, incoming=after.incoming,
                           hits=after.hits, posts=before.posts + 1, extra=after.extra)


def test_prevedibile_why_words_the_details_as_the_dict_reading():
    """Requirement.why's fast path (technique, uses) gives the words of the general reading."""
    from engine.rulesets.guida.checks import Requirement

    r = Requirement("prevedibile_attacco", 1, "Attacco Prevedibile", "x", True, (("technique", "Artigli"), ("uses", 4)))
    assert r.why() == " (Artigli usata 4 volte)"
    swapped = Requirement("prevedibile_attacco", 1, "Attacco Prevedibile", "x", True,
                          (("uses", 4), ("technique", "Artigli")))
    assert swapped.why() == r.why()
    assert Requirement("x", 1, "X", "x", True).why() == ""


def test_prevedibile_table_is_the_function():
    """_rolls reads _prevedibile from its table (_PREVEDIBILE_LVL, index 10 for ten uses or more)."""
    for n in range(0, 40):
        assert TI._PREVEDIBILE_LVL[n if n < 10 else 10] == TI._prevedibile(n)


@pytest.mark.parametrize("factor,amount,label,bonus", [("prevedibile_attacco", 1, "Attacco Prevedibile", True),
                                                       ("prevedibile_difesa", -1, "Difesa Prevedibile", False)])
def test_prevedibile_requirement_built_without_init_is_the_dataclass(factor, amount, label, bonus):
    """_prevedibile_req builds its Requirement with the fast constructor: the value the dataclass gives."""
    from engine.rulesets.guida.checks import Requirement

    for lvl in (1, 2, 3):
        got = TI._prevedibile_req(factor, lvl, "Artigli", 7)
        want = Requirement(factor, amount * lvl, label, TI.P_DESCRIZIONE, bonus,
                           (("technique", "Artigli"), ("uses", 7)))
        assert type(got) is Requirement and got == want and repr(got) == repr(want)
        assert list(vars(got).items()) == list(vars(want).items())


def test_poster_is_named_and_live_stats_read_as_the_helpers_say():
    """A replayed post's poster is the character character_of names; with no stacks, conditions or costrizioni a
    fighter's live Costituzione and Destrezza are the reference Livello Totale (Base + Bonus), what
    _compute_damage and _rolls read without calling live_stat."""
    from engine.rulesets.guida.checks import live_stat

    history = generate(6)
    audit = replay(history, "guida")
    plain = 0
    for post, snap in zip(history.posts, audit.snapshots):
        assert snap.state.last == TU.character_of(snap.state, post)
        for f in snap.state.fighters.values():
            if not (f.stacks.entries or f.conditions or f.costrizioni):
                for stat in ("Costituzione", "Destrezza"):
                    ref = f.stats.get(stat)
                    assert live_stat(f, stat) == (ref[0] + ref[1] if ref is not None else None)
                plain += 1
    assert plain  # some fighter was read on the shortcut


def test_evolve_with_equals_evolve_and_drops_a_stale_summary():
    """state.evolve_with (a dict of changes, as _registro builds it) gives what evolve(**changes) gives: the same
    fields, in the same order, and the cached summary dropped exactly when a shown field changes."""
    from engine.history import Registry
    from engine.rulesets.guida import step as ST
    from engine.rulesets.guida.state import SUMMARY, evolve_with

    f = Fighter(name="Hollow", pv=10, pe=5)
    state = evolve(ST.initial_state(THREAD, Registry(), {}), fighters={"Hollow": f}, order=("Hollow",))
    H.characters(state)  # caches the summary on f
    assert SUMMARY in f.__dict__
    for changes in ({"pv": 3, "turn": 2}, {"uses_attack": {"Artigli": 1}}, {}):
        a, b = evolve(f, **changes), evolve_with(f, dict(changes))
        assert a == b and list(a.__dict__) == list(b.__dict__)
        assert (SUMMARY in b.__dict__) == (SUMMARY in a.__dict__) == ("pv" not in changes)


def test_fastdata_evolve_is_dataclasses_replace():
    import dataclasses

    import pytest

    from engine.fastdata import evolve
    from engine.history import Post, Roll

    post = Post(id="1", page=1, url="u#1", author="Hollow", author_id=None, timestamp=None, role="player",
                edited_by=None, edited_at=None, body="testo", quotes=(), schema=None, rolls=(), damage=(),
                character=None, digest="d")
    roll = Roll(expression="1d12", count=1, sides=12, constant=0, faces=(7,), total=7, label="Attacco", tag=None,
                source="forum_roller", authentic=True, problems=())
    for changes in ({"rolls": (roll,)}, {"rolls": (), "answers": "7"}, {}):
        got, want = evolve(post, **changes), dataclasses.replace(post, **changes)
        assert got == want and list(vars(got).items()) == list(vars(want).items())
    assert post.rolls == ()  # the old value is untouched
    with pytest.raises(TypeError):
        evolve(post, nope=1)  # an unknown field fails as dataclasses.replace fails


def test_pausing_switched_off_leaves_the_collector_running_for_the_other_threads():
    from engine.gcpause import collector_paused, set_pausing

    set_pausing(False)  # what `arbitro serve` does with more than one request thread
    try:
        with collector_paused():
            assert gc.isenabled()
        replay(generate(4), "guida")
        assert gc.isenabled()
    finally:
        set_pausing(True)
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
