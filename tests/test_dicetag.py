"""Tests of scraper.dicetag: expressions, guida labels, roll authenticity and text recognition of rolls."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from engine.history import Modifier
from scraper.dicetag import (
    TextRoll, find_text_rolls, make_roll, normalise_expression, parse_expression, parse_label,
)
from scraper.errors import DiceExpressionError, ParseError, ScrapeError

# The two "Lancio del Dado" examples of the guida rule text, verbatim.
RULE_DEFENSIVE = "[dice=1d24+6]Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +4 [Destrezza])[/dice]"
RULE_OFFENSIVE = ("[dice=1d12+6]Attacco [Artigli Affilati, Sonìdo] (Hollow vs Quincy): (+2 [Raggio Corto], "
                  "+2 [Bonus Arma] -1 [Mirato Arti] +6 [Destrezza])[/dice]")


# --- expressions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, expected", [
    ("1d12+6", (1, 12, 6)),
    ("1D24 + 6", (1, 24, 6)),
    ("2d6-1", (2, 6, -1)),
    ("d20", (1, 20, 0)),
    ("3d8", (3, 8, 0)),
    ("1d12 − 2", (1, 12, -2)),
    ("1d12+6-1", (1, 12, 5)),
    (" 100d1000+10000 ", (100, 1000, 10000)),
])
def test_parse_expression(expr, expected):
    assert parse_expression(expr) == expected


@pytest.mark.parametrize("expr", [
    "", "d", "1d", "12", "1d12+", "1d12+six", "0d6", "1d0", "101d6", "1d1001", "1d6+10001", "1d6-10001",
    "1d12 Attacco", "dd12", "1d12*2", "<script>1d6</script>",
])
def test_parse_expression_rejects(expr):
    with pytest.raises(DiceExpressionError) as info:
        parse_expression(expr)
    assert info.value.code == "dice_expression"
    assert isinstance(info.value, ParseError) and isinstance(info.value, ScrapeError)


@pytest.mark.parametrize("args, text", [((1, 12, 6), "1d12+6"), ((2, 6, -1), "2d6-1"), ((1, 20, 0), "1d20")])
def test_normalise_expression(args, text):
    assert normalise_expression(*args) == text
    assert parse_expression(text) == args


# --- labels --------------------------------------------------------------------------------------

def test_label_rule_text_offensive_example():
    raw = RULE_OFFENSIVE[len("[dice=1d12+6]"):-len("[/dice]")]
    label = parse_label(raw)
    assert label.raw == raw
    assert label.action == "Attacco"
    assert label.techniques == ("Artigli Affilati", "Sonìdo")
    assert label.actor == "Hollow"
    assert label.targets == ("Quincy",)
    assert label.modifiers == (Modifier(2, "Raggio Corto"), Modifier(2, "Bonus Arma"), Modifier(-1, "Mirato Arti"),
                               Modifier(6, "Destrezza"))
    assert label.error is None


def test_label_rule_text_defensive_example():
    label = parse_label("Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +4 [Destrezza])")
    assert (label.action, label.techniques, label.actor, label.targets) == ("Protezione", (), "Hollow", ("Quincy",))
    assert label.modifiers == (Modifier(2, "Bonus Protezione"), Modifier(4, "Destrezza"))
    assert label.error is None


@pytest.mark.parametrize("raw, action, techniques, actor, targets, modifiers", [
    ("Attacco Multiplo [Freccia Sacra] (Quincy VS Hollow, Ichigo) (+2 Raggio Corto −1 [Mirato] [Destrezza +6])",
     "Attacco Multiplo", ("Freccia Sacra",), "Quincy", ("Hollow", "Ichigo"),
     ((2, "Raggio Corto"), (-1, "Mirato"), (6, "Destrezza"))),
    ("Contrattacco Diretto [Zanpakuto] (Ichigo contro Quincy e Hollow): +2 [Raggio Corto] +5 [Destrezza]",
     "Contrattacco Diretto", ("Zanpakuto",), "Ichigo", ("Quincy", "Hollow"), ((2, "Raggio Corto"), (5, "Destrezza"))),
    ("[b]Schivata[/b] (Quincy vs Hollow): ([color=red]+4 [Destrezza][/color])",
     "Schivata", (), "Quincy", ("Hollow",), ((4, "Destrezza"),)),
    ("<b>Parata</b> [Scudo di Reishi] (Quincy vs Hollow) (+2 [Bonus Protezione], +4 [Destrezza])",
     "Parata", ("Scudo di Reishi",), "Quincy", ("Hollow",), ((2, "Bonus Protezione"), (4, "Destrezza"))),
    ("Azione Secondaria Indipendente (Hollow vs Quincy) +2 [Preparazione] +6 [Destrezza]",
     "Azione Secondaria Indipendente", (), "Hollow", ("Quincy",), ((2, "Preparazione"), (6, "Destrezza"))),
    ("Attacco [Cero] (Hollow vs. Quincy):(+2 [Raggio Corto]+6 [Destrezza])",
     "Attacco", ("Cero",), "Hollow", ("Quincy",), ((2, "Raggio Corto"), (6, "Destrezza"))),
    ("Attacco  [Cero]  ( Hollow  vs  Quincy ) :  + 2  [Raggio Corto] , + 6 Destrezza",
     "Attacco", ("Cero",), "Hollow", ("Quincy",), ((2, "Raggio Corto"), (6, "Destrezza"))),
    ("Attacco [Cero] (Hollow vs Quincy) &minus;2 [Sbilanciamento] &#43;6 [Destrezza]",
     "Attacco", ("Cero",), "Hollow", ("Quincy",), ((-2, "Sbilanciamento"), (6, "Destrezza"))),
    ("Attacco Hollow vs Quincy: +2 [Raggio Corto]",
     "Attacco", (), "Hollow", ("Quincy",), ((2, "Raggio Corto"),)),
    ("Potenziamento [Sonìdo] (Hollow): +0 [Nessun bonus]",
     "Potenziamento", ("Sonìdo",), "Hollow", (), ((0, "Nessun bonus"),)),
])
def test_label_variants(raw, action, techniques, actor, targets, modifiers):
    label = parse_label(raw)
    assert label.action == action
    assert label.techniques == techniques
    assert label.actor == actor
    assert label.targets == targets
    assert tuple((m.amount, m.label) for m in label.modifiers) == modifiers
    assert label.raw == raw


@pytest.mark.parametrize("raw, error", [
    ("", "empty"),
    ("   ", "empty"),
    ("Attacco [Artigli Affilati: +2 [Raggio Corto]", "unbalanced_brackets"),
    ("Attacco con tanta rabbia", "no_actor"),
    ("(Hollow vs Quincy): +2 [Raggio Corto]", "no_action"),
    ("Attacco (Hollow vs Quincy): +2 [Raggio Corto] e poi corre via", "unparsed_modifiers"),
])
def test_label_errors(raw, error):
    label = parse_label(raw)
    assert label.error == error
    assert label.raw == raw


def test_label_partial_keeps_what_it_read():
    label = parse_label("Attacco con rabbia +2 [Raggio Corto]")
    assert label.error == "no_actor"
    assert label.modifiers == (Modifier(2, "Raggio Corto"),)


def test_label_script_injection_is_text_only():
    label = parse_label("<script>alert('x')</script>Attacco (Hollow vs Quincy): +2 [X]")
    assert label.action == "Attacco"
    assert label.actor == "Hollow"
    assert "script" not in (label.action or "")


# --- rolls ---------------------------------------------------------------------------------------

def test_make_roll_authentic():
    roll = make_roll(expression="1D12 + 6", faces=[7], total=13, label=RULE_OFFENSIVE[13:-7], source="forum_roller")
    assert (roll.expression, roll.count, roll.sides, roll.constant) == ("1d12+6", 1, 12, 6)
    assert roll.faces == (7,) and roll.total == 13
    assert roll.authentic is True and roll.problems == ()
    assert roll.tag is not None and roll.tag.actor == "Hollow" and roll.source == "forum_roller"


@pytest.mark.parametrize("kwargs, problems", [
    (dict(expression="1d12+6", faces=[7], total=13, source="typed_text"), ("typed_by_hand",)),
    (dict(expression="1d12+6", faces=[13], total=19, source="forum_roller"), ("faces_out_of_range",)),
    (dict(expression="1d12+6", faces=[0], total=6, source="forum_roller"), ("faces_out_of_range",)),
    (dict(expression="2d6", faces=[3], total=3, source="phpbb_dice"), ("face_count_mismatch",)),
    (dict(expression="1d12+6", faces=[7], total=15, source="forum_roller"), ("total_mismatch",)),
    (dict(expression="1d12+6", faces=None, total=19, source="forum_roller"), ("total_out_of_range",)),
    (dict(expression="1d12+6", faces=None, total=18, source="forum_roller"), ()),
    (dict(expression="un dado", faces=[3], total=3, source="forum_roller"), ("unparsable_expression",)),
    (dict(expression="1d12", faces=["7"], total="7", source="forumotion_gm"), ()),
    (dict(expression="1d12", faces=["sette"], total=7, source="forum_roller"), ("unreadable_faces",)),
    (dict(expression="1d12", faces=[7], total="tredici", source="forum_roller"), ("unreadable_total",)),
    (dict(expression="1d12", faces=[7], total=7, source="carrier pigeon"), ("unknown_source", "typed_by_hand")),
    (dict(expression="1d12+6", faces=[13, 2], total=30, source="forum_roller"),
     ("faces_out_of_range", "face_count_mismatch", "total_mismatch")),
])
def test_make_roll_problems(kwargs, problems):
    roll = make_roll(label="Attacco (Hollow vs Quincy): +6 [Destrezza]", **kwargs)
    assert roll.problems == problems
    assert roll.authentic is (problems == ())


def test_make_roll_empty_label_has_no_tag():
    roll = make_roll(expression="d20", faces=[20], total=20, label="", source="forum_roller")
    assert roll.tag is None and roll.label == "" and roll.expression == "1d20"


# --- text recognition ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, expression, faces, total, kind", [
    ("1d12+6 => 7 => 13", "1d12+6", (7,), 13, "rendered"),
    ("Lancio: 1d12+6 = 7 + 6 = 13", "1d12+6", (7,), 13, "rendered"),
    ("1d24+6: [17] + 6 = 23", "1d24+6", (17,), 23, "rendered"),
    ("Risultato: 7 (1d12) +6 = 13", "1d12+6", (7,), 13, "rendered"),
    ("Dado: 1d12+6\nRisultato: 7 + 6 = 13", "1d12+6", (7,), 13, "rendered"),
    ("Dado: 1d12+6 Risultato: 7 Totale: 13", "1d12+6", (7,), 13, "rendered"),
    ("2d6+1 => 3, 4 => 8", "2d6+1", (3, 4), 8, "rendered"),
    ("2D6 − 1 => 3 + 4 => 6", "2d6-1", (3, 4), 6, "rendered"),
    ("Attacco (Hollow vs Quincy): 1d12+6 = 13 e poi colpisce", "1d12+6", None, 13, "typed"),
])
def test_find_text_rolls_forms(text, expression, faces, total, kind):
    rolls = find_text_rolls(text)
    assert [(r.expression, r.faces, r.total, r.kind) for r in rolls] == [(expression, faces, total, kind)]


def test_find_text_rolls_rule_examples_as_typed_tags():
    text = "Hollow scatta in avanti.\n" + RULE_OFFENSIVE + "\nPoi si protegge.\n" + RULE_DEFENSIVE
    rolls = find_text_rolls(text)
    assert [(r.expression, r.kind, r.faces, r.total) for r in rolls] == [
        ("1d12+6", "typed", None, None), ("1d24+6", "typed", None, None)]
    assert rolls[0].label == RULE_OFFENSIVE[13:-7]
    assert rolls[1].label == "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +4 [Destrezza])"
    assert text[rolls[0].start:rolls[0].end] == RULE_OFFENSIVE
    assert text[rolls[1].start:rolls[1].end] == RULE_DEFENSIVE


def test_find_text_rolls_label_and_span():
    text = "Narrazione.\nAttacco [Cero] (Hollow vs Quincy): (+6 [Destrezza]) 1d12+6 => 9 => 15\nAltro."
    (roll,) = find_text_rolls(text)
    assert roll.label == "Attacco [Cero] (Hollow vs Quincy): (+6 [Destrezza])"
    assert text[roll.start:roll.end] == "1d12+6 => 9 => 15"
    assert roll == TextRoll(roll.start, roll.end, "1d12+6", (9,), 15, roll.label, "rendered")


def test_find_text_rolls_several_in_order():
    text = "Prima 1d12+6 => 7 => 13, poi 1d18+4 => 18 => 22 e infine [dice=d8]Sbilanciamento[/dice]"
    rolls = find_text_rolls(text)
    assert [(r.expression, r.total) for r in rolls] == [("1d12+6", 13), ("1d18+4", 22), ("1d8", None)]
    assert rolls[2].label == "Sbilanciamento"


def test_find_text_rolls_ignores_prose_without_results():
    assert find_text_rolls("Il dado è un d12 e io ho 3d6 di esperienza, vado al D2 di via Roma.") == []
    assert find_text_rolls("Nessun numero qui") == []
    assert find_text_rolls("") == []


def _made(text: str) -> list[tuple]:
    return [(r.expression, r.faces, r.total, r.kind, r.label, text[r.start:r.end], made.authentic, made.problems)
            for r in find_text_rolls(text)
            for made in [make_roll(expression=r.expression, faces=r.faces, total=r.total, label=r.label,
                                   source="forum_roller")]]


def test_find_text_rolls_risultato_then_totale_lines():
    # Review R1: the lone "Risultato" number is the face, the "Totale" line the total (was total 7, faces null).
    text = "Dado: 1d12+6\nRisultato: 7\nTotale: 13"
    assert _made(text) == [("1d12+6", (7,), 13, "rendered", "", "1d12+6\nRisultato: 7\nTotale: 13", True, ())]
    text = "Dado: 2d6+1 Risultato: 3, 4\nTotale: 8"
    assert _made(text) == [("2d6+1", (3, 4), 8, "rendered", "", "2d6+1 Risultato: 3, 4\nTotale: 8", True, ())]
    # the constant written again among the faces, and a contradicting total still flagged
    assert _made("Dado: 1d12+6\nRisultato: 7 + 6\nTotale: 14") == [
        ("1d12+6", (7,), 14, "rendered", "", "1d12+6\nRisultato: 7 + 6\nTotale: 14", False, ("total_mismatch",))]
    # the forms that were already read stay as they were
    assert _made("Dado: 1d12+6\nRisultato: 7 + 6 = 13") == [
        ("1d12+6", (7,), 13, "rendered", "", "1d12+6\nRisultato: 7 + 6 = 13", True, ())]
    assert _made("Dado: 1d12+6\nTotale: 13") == [("1d12+6", None, 13, "rendered", "", "1d12+6\nTotale: 13", True, ())]
    assert _made("Dado: 1d12+6\nRisultato: 7") == [
        ("1d12+6", None, 7, "rendered", "", "1d12+6\nRisultato: 7", True, ())]


def test_find_text_rolls_several_constants_written_again():
    # Review R2: "+6 +2 -1" written again after the face are not faces (was faces (7, 6, 2, 1), flagged).
    text = "1d12 +6 +2 -1 = 7 + 6 + 2 - 1 = 14"
    assert _made(text) == [("1d12+7", (7,), 14, "rendered", "", text, True, ())]
    assert _made("2d6+1-1 = 3 + 4 + 1 - 1 = 7") == [("2d6", (3, 4), 7, "rendered", "", "2d6+1-1 = 3 + 4 + 1 - 1 = 7",
                                                     True, ())]
    # numbers that are not the written terms stay faces (and are flagged)
    assert _made("1d12 +6 +2 = 7 + 5 + 2 = 14") == [
        ("1d12+8", (7, 5, 2), 14, "rendered", "", "1d12 +6 +2 = 7 + 5 + 2 = 14", False,
         ("face_count_mismatch", "total_mismatch"))]


def test_find_text_rolls_total_then_breakdown():
    # Review R3: "= 13 (7 + 6)" is the total, then faces and constant (was faces (13, 7), total 6).
    assert _made("1d12+6 = 13 (7 + 6)") == [("1d12+6", (7,), 13, "rendered", "", "1d12+6 = 13 (7 + 6)", True, ())]
    assert _made("Attacco 2d6 => 7 (3, 4) poi") == [("2d6", (3, 4), 7, "rendered", "Attacco", "2d6 => 7 (3, 4)", True,
                                                     ())]
    assert _made("1d12+6 => 7 => 13 (7 + 6)") == [
        ("1d12+6", (7,), 13, "rendered", "", "1d12+6 => 7 => 13 (7 + 6)", True, ())]
    # a word in the parentheses: only the total, as before
    assert _made("1d12+6 = 13 (Attacco)") == [("1d12+6", None, 13, "typed", "", "1d12+6 = 13", True, ())]


def test_find_text_rolls_label_stops_at_the_previous_roll():
    text = "1d12+6 => 7 => 13 e 1d8 => 5 => 5"
    assert [(r.label, text[r.start:r.end]) for r in find_text_rolls(text)] == [
        ("", "1d12+6 => 7 => 13"), ("", "1d8 => 5 => 5")]
    text = "Attacco (A vs B) 1d12+6 => 7 => 13, Parata (B vs A) 1d8 => 5 => 5"
    assert [r.label for r in find_text_rolls(text)] == ["Attacco (A vs B)", "Parata (B vs A)"]
    text = "[dice=1d12+6]Attacco[/dice] 1d12+6 => 7 => 13"
    assert [(r.label, r.kind) for r in find_text_rolls(text)] == [("Attacco", "typed"), ("", "rendered")]
    # a tag between two text rolls: the label starts after the tag, not after the first roll
    text = "1d12+6 => 7 => 13 [dice=1d6]Danni[/dice] Parata 1d8 => 5 => 5"
    assert [r.label for r in find_text_rolls(text)] == ["", "Danni", "Parata"]


def test_make_roll_reads_only_ascii_digits():
    # "٧" (Arabic-Indic 7) and "７" (full-width 7) are not read as 7.
    assert make_roll(expression="1d12+6", faces=["٧"], total="13", label="", source="forum_roller").problems == (
        "unreadable_faces",)
    assert make_roll(expression="1d12+6", faces=[7], total="１３", label="", source="forum_roller").problems == (
        "unreadable_total",)
    roll = make_roll(expression="1d12+6", faces=[" 7 "], total="−13", label="", source="forum_roller")
    assert (roll.faces, roll.total, roll.problems) == ((7,), -13, ("total_mismatch",))


def test_dice_text_reads_only_ascii_digits():
    # as make_roll: a roll's numbers are what the forum rendered, "３" / "٣" are no digits in dice text
    assert find_text_rolls("1d6 = ３") == []
    assert find_text_rolls("１d６ = 3") == []
    assert find_text_rolls("1d6 => ４ => ４") == []
    assert find_text_rolls("Risultato: ７ (1d12) +6 = 13") == []
    with pytest.raises(DiceExpressionError):
        parse_expression("１d１２+６")
    assert parse_label("Attacco (A vs B): +２ [Raggio Corto]").error == "unparsed_modifiers"
    assert parse_label("Attacco (A vs B): +2 [Raggio Corto]").modifiers == (Modifier(2, "Raggio Corto"),)


@pytest.mark.parametrize("text, rolls", [
    # a total is never the count of the next expression: the roll without a result is skipped
    ("1d1 =1d1 =", []),
    ("1d6 = 1d6 = 3", [("1d6", None, 3, "1d6 = 3")]),
    ("1d6 = 4 = 2d6 = 7", [("1d6", None, 4, "1d6 = 4 "), ("2d6", None, 7, "2d6 = 7")]),
    ("1d24+6: [17] + 6 = 2d6 = 9", [("2d6", None, 9, "2d6 = 9")]),
    ("Risultato: 7 (1d12) +6 = 1d6 = 4", [("1d6", None, 4, "1d6 = 4")]),
    ("Dado: 1d12+6\nRisultato: 7\nTotale: 1d6 = 4", [("1d12+6", None, 7, "1d12+6\nRisultato: 7"),
                                                     ("1d6", None, 4, "1d6 = 4")]),
    ("1d6 (1d12) +6 = 13", []),  # the "6" before "(" is the sides of "1d6", not a face
    # its neighbours still read
    ("1d6 = 4 1d6 = 3", [("1d6", None, 4, "1d6 = 4"), ("1d6", None, 3, "1d6 = 3")]),
    ("1d6 = 13 danni", [("1d6", None, 13, "1d6 = 13")]),
    ("Risultato: 7 (1d12) +6 = 13", [("1d12+6", (7,), 13, "7 (1d12) +6 = 13")]),
    ("1d24+6: [17] + 6 = 23", [("1d24+6", (17,), 23, "1d24+6: [17] + 6 = 23")]),
    ("Dado: 1d12+6\nRisultato: 7\nTotale: 13", [("1d12+6", (7,), 13, "1d12+6\nRisultato: 7\nTotale: 13")]),
])
def test_a_total_is_not_the_next_expressions_count(text, rolls):
    assert [(r.expression, r.faces, r.total, text[r.start:r.end]) for r in find_text_rolls(text)] == rolls


def test_find_text_rolls_keeps_out_of_limit_expressions_raw():
    (roll,) = find_text_rolls("5d2000 => 3 => 3")
    assert roll.expression == "5d2000"
    assert make_roll(expression=roll.expression, faces=roll.faces, total=roll.total, label="",
                     source="forum_roller").problems == ("unparsable_expression",)


# --- properties ----------------------------------------------------------------------------------

_HOSTILE = st.one_of(
    st.text(max_size=400),
    st.text(alphabet="[]()<>+-−=:,/dD0123456789 vsVS\n&;#x", max_size=400),
    st.builds(lambda a, b: a + "[dice=" + b + "]" + a + "[/dice]", st.text(max_size=50), st.text(max_size=30)),
    st.builds(lambda n: "[" * n + "(" * n + "1d6+" * n + ")" * n, st.integers(0, 300)),
    st.just("<script>alert(1)</script><img src=x onerror=alert(1)>[url=javascript:alert(1)]x[/url]"),
)


@settings(max_examples=200, deadline=None)
@given(_HOSTILE)
def test_parsers_never_raise(text):
    label = parse_label(text)
    assert label.raw == text
    for roll in find_text_rolls(text):
        assert 0 <= roll.start < roll.end <= len(text)
        assert roll.kind in ("rendered", "typed")
    roll = make_roll(expression=text, faces=[1], total=text, label=text, source="forum_roller")
    assert roll.authentic is (roll.problems == ())


@settings(max_examples=200, deadline=None)
@given(_HOSTILE)
def test_parse_expression_only_raises_its_error(text):
    try:
        count, sides, constant = parse_expression(text)
    except DiceExpressionError:
        return
    assert 1 <= count <= 100 and 1 <= sides <= 1000 and abs(constant) <= 10000


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 100), st.integers(1, 1000), st.integers(-10000, 10000))
def test_expression_round_trip(count, sides, constant):
    assert parse_expression(normalise_expression(count, sides, constant)) == (count, sides, constant)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5), st.integers(2, 30), st.integers(-20, 20), st.data())
def test_rendered_roll_round_trip(count, sides, constant, data):
    faces = data.draw(st.lists(st.integers(1, sides), min_size=count, max_size=count))
    total = sum(faces) + constant
    expr = normalise_expression(count, sides, constant)
    text = f"Attacco (Hollow vs Quincy): {expr} => {', '.join(map(str, faces))} => {total}"
    (roll,) = find_text_rolls(text)
    assert (roll.expression, roll.faces, roll.total, roll.kind) == (expr, tuple(faces), total, "rendered")
    made = make_roll(expression=roll.expression, faces=roll.faces, total=roll.total, label=roll.label,
                     source="phpbb_dice")
    assert made.authentic and made.tag.actor == "Hollow"


@pytest.mark.parametrize("unit", ["[(" , "1d6+", "[dice=1d6]", "a vs b (", "+1 [", "1d12+6 = ", "Risultato: 7 ("])
def test_huge_hostile_input_completes(unit):
    # A property, not a timing: 100k characters of a pathological unit are parsed to the end.
    text = unit * (100_000 // len(unit))
    parse_label(text)
    rolls = find_text_rolls(text)
    assert all(r.end <= len(text) for r in rolls)
    with pytest.raises(DiceExpressionError):
        parse_expression(text)


_UNITS = ["[", "(", "1d6", "+", "-", "=", "=>", " ", "\n", "[dice=1d6]", "[/dice]", "vs", "Risultato:", "7", ",",
          "<script>", "&minus;", "−", "Attacco", "[b]", ":"]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(_UNITS), min_size=1, max_size=6))
def test_huge_random_inputs_complete(units):
    # A property, not a timing: any 100k-character repetition of hostile units is read to the end.
    unit = "".join(units)
    text = unit * (100_000 // len(unit) + 1)
    parse_label(text)
    for roll in find_text_rolls(text):
        assert roll.end <= len(text)


def test_error_hierarchy_and_codes():
    from scraper import errors as e
    codes = {cls: cls.code for cls in (e.HostNotAllowed, e.NotAThread, e.UnsupportedPlatform, e.PageTooLarge,
                                       e.FetchFailed, e.FetchTimeout, e.BlockedByRobots, e.ParseError,
                                       e.DiceExpressionError, e.SchemaError, e.RegistryFileError)}
    assert list(codes.values()) == ["host_not_allowed", "not_a_thread", "unsupported_platform", "page_too_large",
                                    "fetch_failed", "fetch_timeout", "blocked_by_robots", "parse_error",
                                    "dice_expression", "schema", "registry_file"]
    assert all(issubclass(cls, e.ScrapeError) for cls in codes)
    err = e.FetchTimeout("tempo scaduto", status=None, url="https://x.it/?t=1")
    assert isinstance(err, e.FetchFailed) and err.url == "https://x.it/?t=1" and err.status is None
    err = e.FetchFailed("il server ha risposto 503", status=503)
    assert (err.status, err.message, str(err)) == (503, "il server ha risposto 503", "il server ha risposto 503")
    assert str(e.NotAThread()) == "la pagina non è una discussione del forum"
    err = e.RegistryFileError("valore non valido", line=3, path="reg.toml")
    assert (err.line, str(err)) == (3, "valore non valido (reg.toml; riga 3)")


@pytest.mark.parametrize("text, expression, faces, total, label", [
    ("1d20+1d6+3 => 12, 4 => 19", "1d20+1d6+3", (12, 4), 19, ""),
    ("Attacco: 1d20+1d6+3 = 19", "1d20+1d6+3", None, 19, "Attacco"),
    ("Danni 2d6 + 1d4 = 9", "2d6+1d4", None, 9, "Danni"),
    ("Attacco 1d20 + 5 + 1d6 = 20", "1d20+5+1d6", None, 20, "Attacco"),
])
def test_a_compound_roll_is_one_roll_of_the_whole_expression_never_its_tail(text, expression, faces, total, label):
    [r] = find_text_rolls(text)
    assert (r.expression, r.faces, r.total, r.label) == (expression, faces, total, label)
    roll = make_roll(expression=r.expression, faces=r.faces, total=r.total, label=r.label, source="forum_roller")
    assert not roll.authentic and "unparsable_expression" in roll.problems  # a master checks it by hand


def test_a_compound_without_result_is_skipped_and_the_next_roll_still_read():
    [r] = find_text_rolls("1d20 + 1d6 a testa, poi 1d12+6 = 14")
    assert (r.expression, r.total) == ("1d12+6", 14)
