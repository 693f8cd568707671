"""parse_schema's fast paths give what its plain definitions give (the old implementation, kept here)."""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.history import PostSchema, RegistroEntry, Resource, Stat
from scraper import schema
from scraper.dicetag import clean_markup
from scraper.schema import (RESOURCE_ALIASES, _BULLET, _CACHE_MAX, _EMPTY_REGISTRO, _LABEL_WRAP, _LINE_CACHE,
                            _MAX_LINE, _NAME, _NO_VALUES, _REGISTRO_HEAD, _STAT_CANON, _STAT_WORDS, _WORD,
                            _action_spans, _canon, _first_words, _has_digit, _is_calc, _join_cells, _patterns,
                            _pick_sheet, _signed, _strength, _unify_signs,
                            _core_entries, _depth0, _accent)

# --- the reference: scraper/schema.py before the fast paths (commit 892bf4a), names prefixed `ref` ---

_HINTS = ("egistro", "EGISTRO", "cheda", "CHEDA")


_REF_FIRST_GROUP = [re.compile(rf"{re.escape(o)}([^{re.escape(o + c)}]*){re.escape(c)}(.*\S.*)", re.DOTALL)
                    for o, c in ("[]", "()", "«»", '""', "''")]


def ref_clean_label(label: str) -> str:
    label = label.strip(" \t.,;:-")
    # changed 2026-12-01: a first group followed by more text ("[Sonido] (costo 3)") loses only its brackets
    for pat in _REF_FIRST_GROUP:
        m = pat.fullmatch(label)
        if m:
            return " ".join(p for p in (m.group(1).strip(), m.group(2).strip()) if p)
    m = _LABEL_WRAP.match(label)
    if m:
        label = m.group(1)
    return label.strip()


def ref_part_entries(line: str, aliases: Mapping[str, str]) -> list[RegistroEntry] | None:
    """The entries of one Registro part. changed 2026-12-01: a part may hold several changes or a label first
    (read by schema._core_entries); was one entry per part."""
    if not isinstance(line, str) or not _has_digit(line):
        return None
    raw = line.strip()
    # changed 2026-12-01: signs clean_markup leaves (U+2010, U+2011, U+2015, U+FE62) unified too
    text = _BULLET.sub("", _unify_signs(clean_markup(line[:_MAX_LINE * 4])))
    pats = _patterns(aliases)
    m = pats["entry_a"].match(text) or pats["entry_b"].match(text)
    if m:
        tail = text[max(m.end("amt"), m.end("res")):]
        if not any(_depth0(tail, c.start()) for c in pats["core"].finditer(tail)):
            try:
                amount = _signed(m.group("amt"))
            except ValueError:
                return None
            return [RegistroEntry(amount=amount, resource=_canon(m.group("res"), aliases),
                                  label=ref_clean_label(m.group("label")), raw=raw)]
    return _core_entries(text, pats, aliases, raw)


def refparse_registro_line(line: str, *, aliases: Mapping[str, str] = RESOURCE_ALIASES) -> RegistroEntry | None:
    """One Registro entry: `-8 PV [Artigli Affilati di Hollow]`, `PE -5 (Freccia Sacra)`, `+4 PV (Cura)`.

    None when the line is not a signed change of a known pool (an unsigned amount is not guessed).
    """
    if isinstance(line, str):
        line = ref_nfkc_digits(line)  # changed 2026-12-01: "−８ PV" is -8 PV
    entries = ref_part_entries(line, aliases)
    return entries[0] if entries else None


def ref_nfkc_digits(text: str) -> str:
    """changed 2026-12-01: the digits NFKC makes ASCII ones ("４") are those; other non-ASCII digits ("٣") none."""
    return "".join(unicodedata.normalize("NFKC", c) if unicodedata.category(c) == "Nd" and not c.isascii()
                   and unicodedata.normalize("NFKC", c).isascii() else c for c in text)


def ref_inside_closed(text: str, p: int) -> bool:
    """Whether `p` is inside a (...) or [...] that closes (an opening still open at `p` whose close follows)."""
    for o, c in ("()", "[]"):
        depth = 0
        for ch in text[:p]:
            depth = depth + 1 if ch == o else max(depth - 1, 0) if ch == c else depth
        balance = 0
        for ch in text[p:]:
            balance += (ch == c) - (ch == o)
            if depth and balance >= 1:
                return True
    return False


def ref_read_registro(text: str, aliases: Mapping[str, str]) -> tuple[list[RegistroEntry], bool]:
    """changed 2026-12-01: the entries read, and whether a part looking like a change was not read."""
    text = _BULLET.sub("", text)
    # changed 2026-12-01: no split inside a closed (...) or [...] ("-8 PV (Artigli, -3 PE Sonido)" is one entry)
    cuts = [m for m in re.finditer(r";|,\s*(?=[+-]\s*[0-9]|[A-Za-z]{2}\s*[+-]\s*[0-9])", text)
            if not ref_inside_closed(text, m.start())]
    parts = [p for p in (text[a.end() if a else 0:b.start() if b else len(text)]
                         for a, b in zip([None] + cuts, cuts + [None])) if p.strip()]
    entries: list[RegistroEntry] = []
    unread = False
    for p in parts:
        e = ref_part_entries(p, aliases)
        if e:
            entries.extend(e)
        elif _patterns(aliases)["change"].match(_BULLET.sub("", _unify_signs(clean_markup(p)))):
            unread = True
    return entries, unread


def ref_line_values(line: str, pats: dict[str, re.Pattern[str]], pool_words: frozenset[str],
                 aliases: Mapping[str, str]) -> tuple[tuple[tuple[str, Resource], ...], int, tuple[tuple[str, Stat], ...],
                                                       int, tuple[tuple[str, Stat], ...]]:
    """(pools, their _strength, stats, their _strength, other `Nome N (+M)` stats) of one short schema line with
    digits, in reading order, the first reading of each name per line; an action's bracketed values are skipped."""
    if _is_calc(line):
        return _NO_VALUES
    low = line.lower()
    # Cheap gate: run the pool/stat patterns only on lines holding one of their words.
    words = set(_WORD.findall(low))
    pool_spans: list[tuple[int, int]] = []
    pools: list[tuple[str, Resource]] = []
    # "44/52 PV | 10/40 PE" and "PV 44/52 | PE 10/40": the earliest reading of each span wins.
    # Positions in `low` are positions in `line` unless lowercasing changed the length (rare letters).
    same = len(low) == len(line)
    subject = low if same else line
    candidates = sorted((m for pat in ((pats["pool_lower"], pats["pool_after_lower"]) if same else
                                       (pats["pool"], pats["pool_after"])) for m in pat.finditer(subject)),
                        key=lambda m: (m.start(), -m.end())) if not words.isdisjoint(pool_words) else ()
    skip = _action_spans(line)
    if skip:  # an action's bracketed values are never read as the schema's
        candidates = [m for m in candidates if not any(s <= m.start() < e for s, e in skip)]
    line_first: int | None = None  # where the line's first pool/stat reading starts
    seen: set[str] = set()
    for m in candidates:
        if any(m.start() < e and s < m.end() for s, e in pool_spans):
            continue
        pool_spans.append((m.start(), m.end()))
        line_first = m.start() if line_first is None else line_first
        name = _canon(m.group("name"), aliases)
        if name in seen:
            continue
        seen.add(name)
        # changed 2026-12-01: "1.000" (thousands dot) is 1000
        mx = int(m.group("max").replace(".", "")) if m.group("max") else None
        pools.append((name, Resource(current=int(m.group("cur").replace(".", "")), max=mx)))
    stat_spans: list[tuple[int, int]] = []
    line_stats: list[tuple[str, Stat]] = []
    seen = set()
    pool_level = _strength(line, line_first) if line_first is not None else 1
    stat_first: int | None = None
    for m in ((pats["stat_lower"] if same else pats["stat"]).finditer(subject)
              if not words.isdisjoint(_STAT_WORDS) else ()):
        if skip and any(s <= m.start() < e for s, e in skip):
            continue
        name = _STAT_CANON[" ".join(m.group("name").lower().split())]
        stat_spans.append((m.start(), m.end()))
        if stat_first is None:
            stat_first = m.start() if line_first is None else min(line_first, m.start())
        if name not in seen:
            seen.add(name)
            bonus = _signed(m.group("bonus")) if m.group("bonus") else 0
            line_stats.append((name, Stat(base=int(m.group("base")), bonus=bonus)))
    any_stats: list[tuple[str, Stat]] = []
    for m in (pats["stat_any"].finditer(line) if "(" in line else ()):
        if any(m.start() < e and s < m.end() for s, e in stat_spans + pool_spans + skip):
            continue
        name = _accent(" ".join(m.group("name").split()))  # changed 2026-12-01: "Abilita'" is "Abilità"
        if name.lower() in aliases or name.lower() in RESOURCE_ALIASES or name in seen:
            continue
        seen.add(name)
        any_stats.append((name, Stat(base=int(m.group("base")), bonus=_signed(m.group("bonus")))))
    stat_level = _strength(line, stat_first) if stat_first is not None else 1
    return tuple(pools), pool_level, tuple(line_stats), stat_level, tuple(any_stats)



def refparse_schema(text: str, *, sheet_url: str | None = None, links: Iterable[object] = (),
                 aliases: Mapping[str, str] = RESOURCE_ALIASES,
                 sheet_pattern: str | re.Pattern[str] | None = None) -> PostSchema | None:
    """The post schema in a post's own text (quotes removed, one line per block/row/cell); never raises.

    `links` are the post's hrefs (or `(text, href)` pairs): the sheet link is the one whose URL or text
    mentions "scheda" (or matches `sheet_pattern`). None when the post holds no schema at all; otherwise
    what is written is filled and the rest listed in `missing`.
    """
    if not isinstance(text, str):
        text = ""
    text = ref_nfkc_digits(text)  # changed 2026-12-01: schema numbers in fullwidth digits are read
    try:
        pattern = re.compile(sheet_pattern, re.IGNORECASE) if isinstance(sheet_pattern, str) else sheet_pattern
    except re.error:
        pattern = None
    pats = _patterns(aliases)
    pool_words = _first_words(aliases)
    cacheable = False  # the reference reads every line
    raw_lines = _join_cells(text.splitlines(), pats["name_cell"])
    if sheet_url is None:
        sheet_url = _pick_sheet(links, [ln for ln in raw_lines if len(ln) < 2000], pattern)
    # Bail out early: no digits and no Registro/Scheda keyword means no schema.
    if sheet_url is None and not _has_digit(text) and not any(h in text for h in _HINTS):
        return None

    resources: dict[str, Resource] = {}
    stats: dict[str, Stat] = {}
    registro: list[RegistroEntry] | None = None
    strength: dict[str, int] = {}  # how schema-like the line each pool/stat was read from (see _strength)
    character: str | None = None
    in_registro = False
    registro_unread = False
    for raw_line in raw_lines:
        n = len(raw_line)
        if n > _MAX_LINE and (n > _MAX_LINE * 4 or ("[" not in raw_line and "<" not in raw_line)):
            in_registro = False  # a prose paragraph: never schema, and it ends the Registro
            continue
        line = clean_markup(raw_line) if ("[" in raw_line or "<" in raw_line or "&" in raw_line) else raw_line.strip()
        line = _unify_signs(line)  # changed 2026-12-01: typographic signs read on every line, not only cleaned ones
        if not line:
            in_registro = False  # a blank line ends the Registro
            continue
        head = _REGISTRO_HEAD.match(line) if ("egistro" in line or "EGISTRO" in line) else None
        # changed 2026-12-01: a Registro after a separator mid-line (outside brackets); the text before it is
        # read as any line
        mid = re.search(r"(?i)[|·•,;/-]\s*registro\b(?:\s*:\s*|\s*-?\s*(?=[+-]\s*[0-9]))(?P<rest>.*)$", line) \
            if head is None else None
        mid = mid if mid is not None and _depth0(line, mid.start()) else None
        if head or mid:
            in_registro = True
            registro = registro if registro is not None else []
            rest = (head or mid).group("rest").strip()
            if rest and not _EMPTY_REGISTRO.match(rest):
                entries, unread = ref_read_registro(rest, aliases)  # changed 2026-12-01: partial reads kept
                registro.extend(entries)
                registro_unread = registro_unread or unread
            if head:
                continue
            line = line[:mid.start()].rstrip()
        if in_registro and not mid:
            if _EMPTY_REGISTRO.match(line):
                continue
            entries, unread = ref_read_registro(line, aliases)
            if entries or unread:  # changed 2026-12-01: an unread change stays in the Registro
                registro.extend(entries)  # type: ignore[union-attr]
                registro_unread = registro_unread or unread
                continue
            in_registro = False  # the next section starts
        if len(line) > _MAX_LINE or not _has_digit(line):
            if character is None and ":" in line:
                nm = _NAME.match(line)
                if nm:
                    character = nm.group("name").strip()
            continue
        if character is None and ":" in line:
            nm = _NAME.match(line)
            if nm and not _is_calc(line):
                character = nm.group("name").strip()
                continue
        values = _LINE_CACHE.get(line) if cacheable else None
        if values is None:
            values = ref_line_values(line, pats, pool_words, aliases)
            if cacheable:
                if len(_LINE_CACHE) >= _CACHE_MAX:
                    _LINE_CACHE.clear()
                _LINE_CACHE[line] = values
        pools, pool_level, line_stats, stat_level, any_stats = values
        # the first reading stands unless a later line looks more like a schema (see _strength)
        for name, res in pools:
            # changed 2026-12-01: a partial reading never replaces a complete one
            if name in resources and (strength.get(name, 2) >= pool_level or (
                    res.max is None and resources[name].max is not None)):
                continue
            resources[name] = res
            strength[name] = pool_level
        for name, st in line_stats:
            if name not in stats or strength.get("stat:" + name, 2) < stat_level:
                stats[name] = st
                strength["stat:" + name] = stat_level
        for name, st in any_stats:
            if name not in stats:
                stats[name] = st

    if not resources and not stats and registro is None and sheet_url is None:
        return None
    missing = []
    if sheet_url is None:
        missing.append("sheet_url")
    for pool in ("PV", "PE"):
        if pool not in resources:
            missing.append(pool)
    if not stats:
        missing.append("stats")
    if registro is None or registro_unread:  # changed 2026-12-01
        missing.append("registro")
    return PostSchema(sheet_url=sheet_url, resources=resources, stats=stats,
                      registro=tuple(registro) if registro is not None else None,
                      missing=tuple(missing), character=character)



# --- random schema-like texts: names in odd cases, numbers, separators, markup, Registro, odd letters ---

PIECES = ["PV", "pv", "Pv", "Punti Vita", "punti  salute", "PE", "Cosmo", "PF", "PS", "sp", "PR", "hp", "vita",
          "Forza", "FORZA", "Volontà", "volonta'", "Reattività", "Mente", "Destrezza", "Tizio", "Nome", "Personaggio",
          "Registro", "registro", "Scheda", "nessuna", "attuali", "su", "di", "vs", "contro", "danni", "Incasso",
          "0", "5", "44", "52", "1000", "1234567", "٣", "12.5", "3,2", "４", "５２", "𝟒", "1.000", "2.500.000",
          " ", "  ", "\t", ": ", ":", "/", " / ", " su ", "|", " | ", "=", "-", "+", "- ", "(", ")", "(+1)", "( -2 )",
          "(0)", "[", "]", "{", "}", "[b]", "[/b]", "<b>", "&amp;", "&colon;", "'", "«", "»", ".", ",", ";", "•", "*",
          "−", "—", "×", "\u00a0", "é", "İ", "K", "ſ", "\n", "\n", "\n", "\n\n", "\r\n", "\u2028", "#1 'Attacco (d12)' :",
          # added 2026-12-01: pool forms "«PV» 44/52", "PV → 44/52", "PV (44/52)", "PV: 44 (max 52)", odd slashes/spaces
          "«PV»", '"PE"', "→", " -> ", "=>", "(max 52)", "(max.", "[Max:", "\u200b", "\ufeff", "\u2044", "／", "\u2009"]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
lines = st.lists(st.sampled_from([p for p in PIECES if p not in ("\n", "\n\n", "\r\n", "\u2028")]),
                 max_size=16).map("".join)
NAMES = ["PV", "Punti Vita", "punti salute", "PE", "Cosmo", "PF", "PD", "hp", "Forza", "Volontà", "volonta'",
         "Velocita’", "Abilita'",
         "Mente", "Reattività", "Tizio", "Mana", "Punti Danno", "«PV»", '"PE"', "“Punti Vita”", "'Punti Energia'"]
SEPS = ["", " ", ": ", ":", " :  ", " = ", " | ", "-", " → ", "->", " => ", ": (", " [", "(", "\u2009", "\u200b"]
NUMS = ["0", "5", "44", "830", "123456", "1234567", "٣", "3.5", "４４", "５", "1.000", "44,5"]
MAXES = ["", "/52", " / 52", " su 48", "di 9", "/1234567", "/1.200", "/52,5", "/52)", " / 52 ]", " su 48)", " (max 52)",
         "(max. 1.200)", " [Max: 52]", " (su 52)", " (/52)", " (-8)", "/52 (-8)", " \u2044 52", "／52", "\u200b/52",
         " (max 52"]
BONUS = ["", " (+1)", "(-2)", " ( + 3 )", " (4)", " [+1]", " (+1", "(+123456)"]
item = st.tuples(st.sampled_from(NAMES), st.sampled_from(SEPS), st.sampled_from(NUMS), st.sampled_from(MAXES),
                 st.sampled_from(BONUS)).map("".join)
item_after = st.tuples(st.sampled_from(NUMS), st.sampled_from(MAXES), st.sampled_from([" ", ""]),
                       st.sampled_from(NAMES)).map("".join)
schema_lines = st.lists(st.one_of(item, item_after), min_size=1, max_size=3).flatmap(
    lambda items: st.sampled_from([" | ", " ", ", "]).map(lambda sep: sep.join(items)))
schema_texts = st.lists(st.one_of(schema_lines, st.sampled_from(["Registro:", "Registro: -8 PV [Artigli]", "-5 PE",
                                                                   "nessuna", "", "Nome: Kira", "Scheda"])),
                        max_size=8).map("\n".join)
LINKS = st.sampled_from([(), (("Scheda", "https://f.example/t1"),), (("x", "https://f.example/t2"),), ("https://f/scheda",)])
CUSTOM = {**RESOURCE_ALIASES, "mana": "PE", "punti magia": "PM"}
ODD = {"p.v.": "PV", "pv": "PV", "mana": "PE"}  # not plain words: the patterns scan every position


@settings(max_examples=400, deadline=None)
@given(texts, LINKS)
def test_parse_schema_matches_the_reference(text, links):
    schema.clear_caches()
    assert schema.parse_schema(text, links=links) == refparse_schema(text, links=links)
    assert schema.parse_schema(text, links=links) == refparse_schema(text, links=links)  # the lines cached


@settings(max_examples=400, deadline=None)
@given(schema_texts, LINKS)
def test_schema_texts_match_the_reference(text, links):
    schema.clear_caches()
    assert schema.parse_schema(text, links=links) == refparse_schema(text, links=links)


@settings(max_examples=400, deadline=None)
@given(schema_lines)
def test_schema_lines_match_the_reference(line):
    for aliases in (RESOURCE_ALIASES, CUSTOM):
        pats, words = _patterns(aliases), _first_words(aliases)
        for text in (line, line.upper(), line.title()):
            assert schema._line_values(text, pats, words, aliases) == ref_line_values(text, pats, words, aliases)


@settings(max_examples=150, deadline=None)
@given(texts, st.sampled_from([CUSTOM, ODD]))
def test_parse_schema_custom_aliases_match_the_reference(text, aliases):
    assert schema.parse_schema(text, aliases=aliases) == refparse_schema(text, aliases=aliases)


@settings(max_examples=400, deadline=None)
@given(lines)
def test_line_values_match_the_reference(line):
    for aliases in (RESOURCE_ALIASES, CUSTOM, ODD):
        pats, words = _patterns(aliases), _first_words(aliases)
        assert schema._line_values(line, pats, words, aliases) == ref_line_values(line, pats, words, aliases)


@settings(max_examples=300, deadline=None)
@given(lines)
def test_registro_lines_match_the_reference(line):
    assert schema.parse_registro_line(line) == refparse_registro_line(line)
    # changed 2026-12-01: _registro_entries replaced by _read_registro (partial reads kept)
    assert schema._read_registro(line, RESOURCE_ALIASES) == ref_read_registro(line, RESOURCE_ALIASES)
    assert schema._clean_label(line) == ref_clean_label(line)
    assert schema._clean(line) == clean_markup(line)


def test_fast_shapes_examples():
    pats, words = _patterns(RESOURCE_ALIASES), _first_words(RESOURCE_ALIASES)
    for line in ("PV: 44/52", "Punti Salute 833 su 900", "pv44", "Forza 5 (+1)", "Volontà: 220", "volonta' 3( - 1 )",
                 "Punti Danno: 5/5", "Forza 5 (+1) | Mente 4", "PV 44/52 PE", "Forza 5 | PV 44", " | PV 4",
                 "PV 44 | Forza 5 (+1) | PE: 3/4 | PV 2", "Mente: 3 | Forza 5 | Mente 4", "PV 4 || PE 3", "Forza | 5"):
        assert schema._line_values(line, pats, words, RESOURCE_ALIASES) == \
            ref_line_values(line, pats, words, RESOURCE_ALIASES), line
    assert schema._clean_label(" [Danno Pesante]. ") == "Danno Pesante"
