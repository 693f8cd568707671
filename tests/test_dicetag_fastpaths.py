"""dicetag's fast paths give what its first implementations gave: those reference copies are gone (issue #17), their
outputs on a fixed corpus — hypothesis samples of the strategies below and every roll label, post body and
argument the parser passes on the fixture and real pages — are frozen in tests/golden/dicetag.json.gz
(tests/golden/make_fastpath_golden.py says how). Also here: the fast paths' properties on random inputs (the caches
answer as the functions they remember, the fast patterns match as the patterns they stand for) and
engine.fastdata.maker builds what a dataclass builds."""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.fastdata import maker
from engine.history import DiceLabel, Modifier, Roll
from scraper import dicetag as new
from scraper.dicetag import _DSTART, _FACES_BEFORE, _KEYWORD, _SOURCES, TextRoll
from tests.golden.fastpath import assert_reproduces, decode_faces


# --- the frozen reference outputs --------------------------------------------------------------------------------

def test_clean_markup_gives_the_reference_outputs():
    assert_reproduces("dicetag", "clean_markup", new.clean_markup)


def _a_label(got: object) -> bool:
    return type(got) is DiceLabel and hash(got) is not None  # hashable: tuples, not lists


def test_parse_label_gives_the_reference_outputs():
    assert_reproduces("dicetag", "_parse_label", new._parse_label, _a_label)
    new.clear_caches()
    for _ in range(2):  # the labels read, then remembered
        assert_reproduces("dicetag", "_parse_label", new.parse_label, _a_label)


def test_parse_modifiers_gives_the_reference_outputs():
    assert_reproduces("dicetag", "parse_modifiers", new.parse_modifiers,
                      lambda got: type(got[0]) is tuple and all(type(m) is Modifier for m in got[0]))


def test_find_text_rolls_gives_the_reference_outputs():
    new.clear_caches()
    for _ in range(2):  # the per-page readings remembered give the same
        assert_reproduces("dicetag", "find_text_rolls", new.find_text_rolls,
                          lambda got: all(type(r) is TextRoll for r in got) and hash(tuple(got)) is not None)


def test_read_results_gives_the_reference_outputs():
    # [segment, count, constant, const_text or null (the argument left out)]
    assert_reproduces("dicetag", "_read_results",
                      lambda x: new._read_results(*x[:3]) if x[3] is None else new._read_results(*x))


def test_make_roll_gives_the_reference_outputs():
    # faces stored with their type: a tuple, a list, an iterator's items or a scalar (tests/golden/fastpath.py)
    def run(x):
        return new.make_roll(**{**x, "faces": decode_faces(x["faces"])})

    new.clear_caches()
    for _ in range(2):  # the readings remembered give the same
        assert_reproduces("dicetag", "make_roll", run, lambda got: type(got) is Roll and hash(got) is not None)


# --- properties of the fast paths on random inputs ------------------------------------------------------------

# Pieces of labels, roll lines and posts: the markup, separators, signs and forms each fast path gates on.
PIECES = [
    "Attacco", "Parata", "Danni", " ", "  ", "[", "]", "(", ")", "Hollow", "Quincy", "Kira la Rossa", " vs ", " VS ",
    " v. ", " contro ", " CONTRO ", "->", "→", "=>", ":", ",", ";", "+", "-", "−", "–", "2", "14", " +2 [Raggio Corto]",
    "+2 Raggio Corto", "[Destrezza +6]", "3 [Bonus]", " e ", " ed ", " and ", "/", "&", "&amp;", "&lt;", "<b>", "</b>",
    "<script>x</script>", "[b]", "[/b]", "[i]", "[B]", "[color=red]", "[/color]", "\n", "\t", "\r", "\x0b", "\u00a0",
    "\u200b", "\u2009", "é", "ı", "v", "V", ".", "1d12+6", "d20", "D6", "1 d 8", "2d6-1", "1d0", "=", " = ", "7",
    " + ", "13", "123456", "1234567", "Risultato", "Totale: ", "risultati", "[dice=1d6]", "[/dice]", "[DICE=2d6-1]",
    "Lancio dadi ", "Dado: ", "=> ", "7 (1d12) +6 = 13", ": [17] + 6 = 23", ": 7 + 6 = 13", ": 45 = 45", "= 4 + 2 = 6",
    "= 13 (7 + 6)", " (7, 6)", " +2 -1", "= 7 + 6 + 2 - 1 = 14", "Risultato: 7\nTotale: 13", "\nTotale: 13", " e ",
    "poi ", "d1=", " =>x",
]
texts = st.lists(st.sampled_from(PIECES), max_size=25).map("".join)
any_text = st.text(max_size=60)


@settings(max_examples=100, deadline=None)
@given(st.one_of(texts, any_text))
def test_remembered_label_is_the_label_read_afresh(raw):
    new.clear_caches()
    first = new.parse_label(raw)
    assert first == new._parse_label(raw) and repr(first) == repr(new._parse_label(raw))
    assert new.parse_label(raw) == first  # the remembered reading


@settings(max_examples=100, deadline=None)
@given(st.one_of(texts, any_text))
@example("1d12+6 => 7 => 13 [dice=1d6]Danni[/dice] Parata 1d8 => 5 => 5")  # a tag after a text roll
@example("d1=d1=d1 =>x\nRisultato: 7\nTotale: 13 1d6 = ( Attacco")
def test_remembered_text_rolls_are_the_rolls_read_afresh(text):
    new.clear_caches()
    got = new.find_text_rolls(text)
    assert all(0 <= r.start < r.end <= len(text) for r in got)
    assert [r.start for r in got] == sorted(r.start for r in got)
    assert new.find_text_rolls(text) == got


@settings(max_examples=100, deadline=None)
@given(expression=st.one_of(st.sampled_from(["1d12+6", "d20", "2d6-1", "bad <b>x</b>", "", "1d0", None, 5]), texts),
       faces=st.one_of(st.none(), st.lists(st.one_of(st.integers(-2, 30), st.sampled_from(["7", "x", True, 2.5])),
                                            max_size=4).map(tuple)),
       total=st.one_of(st.none(), st.integers(-5, 40), st.sampled_from(["13", "x", True, 7.0, 7.5])),
       label=st.one_of(st.none(), texts), source=st.sampled_from(_SOURCES + ("weird",)))
def test_remembered_roll_is_the_roll_made_afresh(expression, faces, total, label, source):
    args = dict(expression=expression, faces=faces, total=total, label=label, source=source)
    new.clear_caches()
    got = new.make_roll(**args)
    assert got.authentic is (not got.problems)
    again = new.make_roll(**args)
    assert again == got and repr(again) == repr(got)


@settings(max_examples=150, deadline=None)
@given(st.one_of(texts, any_text))
def test_dstarts_are_the_dstart_matches(text):
    assert [m.span() for m in new._dstarts(text)] == [m.span() for m in _DSTART.finditer(text)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["1", "23", " ", "  ", "\n", "\t", "(", ",", "+", "x", ")", "\u00a0", "٣"]),
                max_size=30).map("".join), st.integers(0, 40))
def test_faces_before_is_the_search(text, p):
    p = min(p, len(text))
    got, want = new._faces_before(text, p), _FACES_BEFORE.search(text, max(0, p - 120), p)
    assert (got and got.span()) == (want and want.span())


KW_PIECES = ["r", "R", "t", "T", "e", "l", "d", "D", "f", "i", "s", "ı", "İ", "ſ", " ", ":", "\n", "_", "1", "é",
             "risultato", "Totale", "TIRO", "esito", "lanci", "lancio", "dadi", "dado", "facce", "results", "result", "total", "x"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(KW_PIECES), max_size=12).map("".join), st.integers(0, 40))
def test_fast_keyword_pattern_is_the_keyword_pattern(text, p):
    assert [m.span() for m in new._KEYWORD_FAST.finditer(text)] == [m.span() for m in _KEYWORD.finditer(text)]
    assert new._KEYWORD_FAST.sub("#", text) == _KEYWORD.sub("#", text)
    p = min(p, len(text))
    got, want = new._KEYWORD_FAST.match(text, p), _KEYWORD.match(text, p)
    assert (got and got.span()) == (want and want.span())
    assert new._has_keyword(text) is (_KEYWORD.search(text) is not None)


def test_a_changed_dataclass_is_still_constructed_right():
    # the fast constructors follow the class's fields (a field added later takes its default) and give way to
    # the class itself when it has a __post_init__
    @dataclass(frozen=True)
    class Grown:
        a: int
        b: int = 0
        c: tuple = field(default_factory=tuple)

    @dataclass(frozen=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            assert self.a >= 0

    made = maker(Grown)(1)
    assert made == Grown(1) and list(vars(made).items()) == list(vars(Grown(1)).items())
    assert maker(Grown)(1, c=(2,)) == Grown(1, c=(2,))
    assert maker(Checked) is Checked
