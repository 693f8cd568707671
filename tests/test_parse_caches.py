"""The parse's remembered readings (dice labels, expressions, schema lines) give what a cold parse gives."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from engine.history import Resource, Stat
from scraper import dicetag, schema
from scraper.dicetag import find_text_rolls, parse_expression, parse_label
from scraper.errors import DiceExpressionError
from scraper.htmltext import inline_text
from scraper.schema import RESOURCE_ALIASES, parse_schema


@pytest.fixture(autouse=True)
def _cold():
    dicetag.clear_caches()
    schema.clear_caches()
    yield
    dicetag.clear_caches()
    schema.clear_caches()


LABELS = st.one_of(
    st.text(max_size=80),
    st.builds(lambda a, t, x, y, n: f"{a} [{t}] ({x} vs {y}): +{n} [Destrezza]",
              st.sampled_from(["Attacco", "Parata", "Schivata", ""]), st.text(max_size=12),
              st.text(max_size=8), st.text(max_size=8), st.integers(0, 99)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(LABELS, min_size=1, max_size=6))
def test_label_cache_gives_the_cold_parse(raws):
    # every repeat (in any order) returns what a fresh parse of that very label returns
    for raw in raws + raws[::-1]:
        assert parse_label(raw) == dicetag._parse_label(raw)


def test_label_cache_is_bounded():
    for i in range(dicetag._CACHE_MAX + 10):
        parse_label(f"Attacco {i} (A vs B)")
    assert len(dicetag._LABEL_CACHE) <= dicetag._CACHE_MAX
    assert parse_label("Attacco 3 (A vs B)").actor == "A"


def test_str_subclass_labels_are_not_cached():
    class Odd(str):
        pass

    label = parse_label(Odd("Attacco (Hollow vs Quincy)"))
    assert label.actor == "Hollow"
    assert dicetag._LABEL_CACHE == {}


def test_expression_errors_raise_every_time_and_results_repeat():
    for _ in range(2):
        with pytest.raises(DiceExpressionError):
            parse_expression("1d0")
        assert parse_expression("1d12+6") == (1, 12, 6)
    assert "1d0" not in dicetag._EXPR_CACHE
    with pytest.raises(DiceExpressionError):
        parse_expression(12)  # type: ignore[arg-type]


def test_schema_line_cache_follows_the_aliases():
    # The same line read with the default aliases (no pool "Mana") and then with a forum's own aliases.
    text = "Mana 10/20\nPV 40/52\nForza 5 (+1)"
    default = parse_schema(text)
    assert default is not None and "PM" not in default.resources
    custom = parse_schema(text, aliases={**RESOURCE_ALIASES, "mana": "PM"})
    assert custom is not None
    assert custom.resources["PM"] == Resource(current=10, max=20)
    again = parse_schema(text)
    assert again == default


def test_schema_line_cache_keeps_first_readings_across_lines():
    # A remembered line must not bring its values over ones read earlier in the post.
    first = parse_schema("Forza 7 (+2)\nPV 10/52")
    assert first is not None
    post = parse_schema("PV 44/52 | Forza 5 (+1)\nForza 7 (+2)\nPV 10/52")
    assert post is not None
    assert post.resources["PV"] == Resource(current=44, max=52)
    assert post.stats["Forza"] == Stat(base=5, bonus=1)


def test_schema_line_cache_leaves_registro_and_calculations_alone():
    # "PE -5 (Freccia Sacra)" is a pool line outside the Registro and an entry inside it.
    parse_schema("PE -5 (Freccia Sacra)")
    post = parse_schema("PV 40/52\nRegistro:\nPE -5 (Freccia Sacra)")
    assert post is not None and post.registro is not None
    assert [(e.amount, e.resource, e.label) for e in post.registro] == [(-5, "PE", "Freccia Sacra")]
    calc = parse_schema("Forza 5 (+1) = 6 vs Resistenza 4 = 2 Danni")
    assert calc is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([
    "PV 44/52", "PE 30 su 40", "Forza 5 (+1)", "Destrezza: 6(+0)", "Registro:", "-8 PV [Artigli]",
    "", "Nome: Hollow", "Arcano 3 (+1)", "Potenza 14 - Resistenza 6 = 8 Danni", "44/52 PV | 10/40 PE",
    "Forza 7", "PV 12", "Mana 3 (+1)", "Scheda: https://x.forumfree.it/?t=1",
]), max_size=12), st.lists(st.integers(0, 11), max_size=4))
def test_schema_warm_equals_cold(lines, order):
    text = "\n".join(lines)
    schema.clear_caches()
    cold = parse_schema(text)
    # warm the line cache with other posts made of the same lines in another order
    for k in order:
        parse_schema("\n".join(lines[k:] + lines[:k]))
    assert parse_schema(text) == cold


def test_text_rolls_without_dice_expression_skip_the_scan_but_keep_tags():
    assert find_text_rolls("Risultato = 13, nessun dado scritto") == []
    found = find_text_rolls("Attacco: 1 d 12 + 6 = 7 + 6 = 13")
    assert [(r.expression, r.total) for r in found] == [("1d12+6", 13)]
    tag = find_text_rolls("[dice=1d20]Attacco (A vs B)[/dice]")
    assert [(r.expression, r.kind) for r in tag] == [("1d20", "typed")]


def test_inline_text_of_a_leaf_and_of_a_tree():
    leaf = etree.fromstring("<a>  Kuro\u00a0gane \n</a>")
    assert inline_text(leaf) == "Kuro gane"
    tree = etree.fromstring("<span> Kuro<script>x()</script><br/>gane <!-- c --></span>")
    assert inline_text(tree) == "Kuro gane"
    assert inline_text(etree.fromstring("<a/>")) == ""
