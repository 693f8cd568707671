"""parse_schema's fast paths give what its plain definitions gave: those reference copies (scraper/schema.py before
the fast paths, kept here until issue #17) are gone, their outputs on a fixed corpus — hypothesis samples of the
strategies this file had and every text, line and argument the parser passes on the fixture and real pages — are
frozen in tests/golden/schema.json.gz (tests/golden/make_fastpath_golden.py says how). Three parse_schema inputs
hold production's output instead of the stale reference's: a pool's table row right after a Registro head is read
as a Registro line since 590edc6 (the golden file's metadata lists them, with the reason). Also here: production's
properties on random inputs (never raises, lists what it misses, the remembered lines answer as lines read afresh)."""
from __future__ import annotations

from typing import Any, Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.history import PostSchema, RegistroEntry, Resource, Stat
from scraper import schema
from scraper.dicetag import clean_markup
from scraper.schema import RESOURCE_ALIASES, _first_words, _patterns
from tests.golden.fastpath import assert_reproduces, load


def _aliases(function: str) -> dict[str, Mapping[str, str]]:
    """The alias maps the stored inputs of `function` name: RESOURCE_ALIASES is production's own map (the one the
    line cache serves), the golden file's copy of it checked equal; CUSTOM and ODD as the golden file holds them."""
    stored = load("schema")["functions"][function]["aliases"]
    assert stored["RESOURCE_ALIASES"] == RESOURCE_ALIASES, "RESOURCE_ALIASES is not the map the golden file read"
    return {**stored, "RESOURCE_ALIASES": RESOURCE_ALIASES}


# --- the frozen reference outputs --------------------------------------------------------------------------------

def _a_schema(got: object) -> bool:
    return got is None or (type(got) is PostSchema and type(got.missing) is tuple
                           and (got.registro is None or type(got.registro) is tuple))


def test_parse_schema_gives_the_reference_outputs():
    # [text, links (an href or a [text, href] pair each), the alias map's name]
    aliases = _aliases("parse_schema")

    def run(x: list[Any]) -> PostSchema | None:
        text, links, al = x
        return schema.parse_schema(text, links=tuple(lk if isinstance(lk, str) else tuple(lk) for lk in links),
                                   aliases=aliases[al])

    schema.clear_caches()
    for _ in range(2):  # the lines read, then remembered
        assert_reproduces("schema", "parse_schema", run, _a_schema)


def test_the_overridden_inputs_are_the_registro_table_rows():
    # what the golden file stores as production's reading: a pool's row right after a Registro head, read as the
    # untabled line is (590edc6's table-row join), i.e. as a Registro line, not as the pool the stale reference read
    meta = load("schema")["metadata"]["overridden_by_production"]
    assert meta["commit"].startswith("590edc6")
    cases = meta["cases"]["parse_schema"]
    assert cases and set(meta["cases"]) == {"parse_schema"}
    for case in cases:
        text = case["input"][0]
        assert "Registro:\nPunti Vita | 0" in text
        assert schema.parse_schema(text) == schema.parse_schema(text.replace("Punti Vita | 0", "Punti Vita 0"))


def test_line_values_give_the_reference_outputs():
    # [line, the alias map's name]; the patterns and first words are those of the map, as parse_schema reads them
    aliases = _aliases("_line_values")

    def run(x: list[Any]):
        al = aliases[x[1]]
        return schema._line_values(x[0], _patterns(al), _first_words(al), al)

    assert_reproduces("schema", "_line_values", run,
                      lambda got: type(got) is tuple and all(type(got[i]) is tuple for i in (0, 2, 4)))


def test_parse_registro_line_gives_the_reference_outputs():
    assert_reproduces("schema", "parse_registro_line", schema.parse_registro_line,
                      lambda got: got is None or type(got) is RegistroEntry)


def test_read_registro_gives_the_reference_outputs():
    assert_reproduces("schema", "_read_registro", lambda line: schema._read_registro(line, RESOURCE_ALIASES),
                      lambda got: type(got) is tuple and type(got[0]) is list)


def test_clean_label_gives_the_reference_outputs():
    assert_reproduces("schema", "_clean_label", schema._clean_label)


# --- properties on random inputs ----------------------------------------------------------------------------------

# Random schema-like texts: names in odd cases, numbers, separators, markup, Registro, odd letters.
PIECES = ["PV", "pv", "Pv", "Punti Vita", "punti  salute", "PE", "Cosmo", "PF", "PS", "sp", "PR", "hp", "vita",
          "Forza", "FORZA", "Volontà", "volonta'", "Reattività", "Mente", "Destrezza", "Tizio", "Nome", "Personaggio",
          "Registro", "registro", "Scheda", "nessuna", "attuali", "su", "di", "vs", "contro", "danni", "Incasso",
          "0", "5", "44", "52", "1000", "1234567", "٣", "12.5", "3,2", "４", "５２", "𝟒", "1.000", "2.500.000",
          " ", "  ", "\t", ": ", ":", "/", " / ", " su ", "|", " | ", "=", "-", "+", "- ", "(", ")", "(+1)", "( -2 )",
          "(0)", "[", "]", "{", "}", "[b]", "[/b]", "<b>", "&amp;", "&colon;", "'", "«", "»", ".", ",", ";", "•", "*",
          "−", "—", "×", "\u00a0", "é", "İ", "K", "ſ", "\n", "\n", "\n", "\n\n", "\r\n", "\u2028", "#1 'Attacco (d12)' :",
          "«PV»", '"PE"', "→", " -> ", "=>", "(max 52)", "(max.", "[Max:", "\u200b", "\ufeff", "\u2044", "／", "\u2009"]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
lines = st.lists(st.sampled_from([p for p in PIECES if p not in ("\n", "\n\n", "\r\n", "\u2028")]),
                 max_size=16).map("".join)
# Schema lines: `name sep number max bonus` items and `number max name` ones, a few to a line.
NAMES = ["PV", "Punti Vita", "punti salute", "PE", "Cosmo", "PF", "PD", "hp", "Forza", "Volontà", "volonta'",
         "Velocita’", "Abilita'", "Mente", "Reattività", "Tizio", "Mana", "Punti Danno", "«PV»", '"PE"', "“Punti Vita”"]
SEPS = ["", " ", ": ", ":", " = ", " | ", "-", " → ", "->", ": (", " [", "(", "\u2009", "\u200b"]
NUMS = ["0", "5", "44", "830", "1234567", "٣", "3.5", "４４", "1.000", "44,5"]
MAXES = ["", "/52", " / 52", " su 48", "di 9", "/1.200", "/52)", " (max 52)", " [Max: 52]", " (-8)", "／52", " (max 52"]
BONUS = ["", " (+1)", "(-2)", " ( + 3 )", " [+1]", " (+1"]
item = st.tuples(st.sampled_from(NAMES), st.sampled_from(SEPS), st.sampled_from(NUMS), st.sampled_from(MAXES),
                 st.sampled_from(BONUS)).map("".join)
item_after = st.tuples(st.sampled_from(NUMS), st.sampled_from(MAXES), st.sampled_from([" ", ""]),
                       st.sampled_from(NAMES)).map("".join)
schema_lines = st.lists(st.one_of(item, item_after), min_size=1, max_size=3).flatmap(
    lambda items: st.sampled_from([" | ", " ", ", "]).map(lambda sep: sep.join(items)))
schema_texts = st.lists(st.one_of(schema_lines, st.sampled_from(["Registro:", "Registro: -8 PV [Artigli]", "-5 PE",
                                                                   "nessuna", "", "Nome: Kira", "Scheda"])),
                        max_size=8).map("\n".join)
LINKS = st.sampled_from([(), (("Scheda", "https://f.example/t1"),), (("x", "https://f.example/t2"),),
                         ("https://f/scheda",)])
ALIAS_NAMES = st.sampled_from(["RESOURCE_ALIASES", "CUSTOM", "ODD"])


@settings(max_examples=100, deadline=None)
@given(st.one_of(texts, schema_texts), LINKS, ALIAS_NAMES)
def test_parse_schema_never_raises_and_lists_what_is_missing(text, links, al):
    aliases = _aliases("parse_schema")[al]
    schema.clear_caches()
    got = schema.parse_schema(text, links=links, aliases=aliases)
    assert schema.parse_schema(text, links=links, aliases=aliases) == got  # the lines remembered
    if got is None:
        return
    assert type(got) is PostSchema
    assert ("sheet_url" in got.missing) is (got.sheet_url is None)
    for pool in ("PV", "PE"):
        assert (pool in got.missing) is (pool not in got.resources)
    assert ("stats" in got.missing) is (not got.stats)
    assert got.registro is not None or "registro" in got.missing
    assert all(type(r) is Resource for r in got.resources.values())
    assert all(type(s) is Stat for s in got.stats.values())
    assert all(type(e) is RegistroEntry for e in got.registro or ())


@settings(max_examples=60, deadline=None)
@given(st.one_of(lines, schema_lines))
def test_line_values_read_each_name_once(line):
    for aliases in _aliases("_line_values").values():
        pats, words = _patterns(aliases), _first_words(aliases)
        for text in (line, line.upper(), line.title()):
            pools, pool_level, stats, stat_level, others = schema._line_values(text, pats, words, aliases)
            assert pool_level in (1, 2) and stat_level in (1, 2)
            names = [n for n, _ in pools]
            assert len(names) == len(set(names))
            assert len({n for n, _ in stats + others}) == len(stats) + len(others)


@settings(max_examples=100, deadline=None)
@given(lines)
def test_registro_readings_never_raise(line):
    entry = schema.parse_registro_line(line)
    assert entry is None or type(entry) is RegistroEntry
    entries, unread = schema._read_registro(line, RESOURCE_ALIASES)
    assert all(type(e) is RegistroEntry for e in entries) and type(unread) is bool
    assert schema._clean_label(line) == schema._clean_label(line).strip()
    assert schema._clean(line) == clean_markup(line)  # the fast path: clean_markup only where markup is


def test_examples():
    assert schema._clean_label(" [Danno Pesante]. ") == "Danno Pesante"
    assert schema.parse_schema(None) is None and schema.parse_schema("") is None
    # since 590edc6 a pool's table row right after a Registro head is the Registro line it is without a table: an
    # unsigned change, the Registro incomplete and the pool missing (the stale reference copy read PV 8)
    for text in ("Registro\nPV | 8", "Registro\nPV 8"):
        got = schema.parse_schema(text)
        assert got.resources == {} and got.registro == () and "PV" in got.missing and "registro" in got.missing
