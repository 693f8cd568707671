"""The post schema ("Schema Post"): sheet link, pools (PV/PE/…), stats and the Registro, read from post text."""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Mapping, Sequence

from engine.history import PostSchema, RegistroEntry, Resource, Stat

from scraper.dicetag import clean_markup


# Lowercased alias → canonical pool name. Clashes between rulesets, resolved here once:
# * "PF" is Punti Fatica in `poteri` and Punti Ferita in `starfinder`: both are canonical "PF"; the
#   ruleset in use says which one it is (a thread plays one system).
# * `cosmo` calls its health "Punti Salute" and abbreviates it PV in its own text, so "punti salute" → "PV";
#   "PS" stays starfinder's Punti Stamina.
RESOURCE_ALIASES: dict[str, str] = {
    "pv": "PV", "punti vita": "PV", "vita": "PV", "hp": "PV", "punti salute": "PV", "salute": "PV",
    "pe": "PE", "punti energia": "PE", "energia": "PE",
    "pf": "PF", "punti fatica": "PF", "fatica": "PF", "punti ferita": "PF",
    "pd": "PD", "punti danno": "PD",
    "ps": "PS", "punti stamina": "PS", "stamina": "PS", "sp": "PS",
    "pr": "PR", "punti risolutezza": "PR", "risolutezza": "PR", "rp": "PR",
    "cosmo": "Cosmo", "punti cosmo": "Cosmo",
}

# Stat names the four rulesets and common sheets use. Unknown capitalised names are accepted only in the
# unambiguous `Nome N (+M)` form.
STAT_NAMES: tuple[str, ...] = (
    "Forza", "Destrezza", "Costituzione", "Intelligenza", "Saggezza", "Carisma", "Volontà", "Mente",
    "Resistenza", "Reattività", "Agilità", "Velocità", "Percezione", "Spirito", "Tempra", "Riflessi",
    "Precisione", "Reiatsu", "Concentrazione", "Fortuna", "Vigore", "Intuito", "Tecnica", "Potere",
)
# Italian keyboards without accented capitals (and hurried typists) write a final accent as an apostrophe
# ("Velocita'") or drop it ("Velocita"): every name ending in an accented vowel is also known so.
_ACCENT_OF = {"a": "à", "e": "è", "i": "ì", "o": "ò", "u": "ù", "A": "À", "E": "È", "I": "Ì", "O": "Ò", "U": "Ù"}
_PLAIN_OF = {"à": "a", "è": "e", "é": "e", "ì": "i", "ò": "o", "ó": "o", "ù": "u"}
_STAT_CANON = {n.lower(): n for n in STAT_NAMES}
for _n in STAT_NAMES:
    if _n[-1] in _PLAIN_OF:
        for _tail in ("", "'", "\u2019"):
            _STAT_CANON[_n[:-1].lower() + _PLAIN_OF[_n[-1]] + _tail] = _n
_APOSTROPHE_ACCENT = re.compile("([AEIOUaeiou])['\u2019](?![A-Za-zÀ-ÖØ-öø-ÿ])")


def _accent(name: str) -> str:
    """`name` with a final vowel's apostrophe as its accent: "Abilita'" → "Abilità"."""
    return _APOSTROPHE_ACCENT.sub(lambda m: _ACCENT_OF[m.group(1)], name) if "'" in name or "\u2019" in name else name

_W = r"A-Za-zÀ-ÖØ-öø-ÿ"  # letters, with the accented ones Italian uses

# Typographic minus, dashes and fullwidth/small signs read as "-"/"+" on every line, with or without markup
# (clean_markup unifies only the lines it cleans, and not all of these); fraction/division/fullwidth slashes
# as "/" ("PV 44⁄52"); zero-width spaces and joiners dropped, as clean_markup drops U+200B ("PV 44\u200b/52").
_SIGN_TABLE = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"}
                            | {"\ufe62": "+", "\uff0b": "+", "\u2044": "/", "\u2215": "/", "\uff0f": "/"}
                            | {"\u200b": None, "\u2060": None, "\ufeff": None})
_ODD_SIGN = re.compile("[\u2010-\u2015\u2212\ufe62\ufe63\uff0b\uff0d\u2044\u2215\uff0f\u200b\u2060\ufeff]")


def _unify_signs(text: str) -> str:
    """`text` with the signs of _SIGN_TABLE as ASCII "-"/"+"/"/" and its zero-width spaces dropped; ASCII text is
    returned as is."""
    if text.isascii() or _ODD_SIGN.search(text) is None:
        return text
    return text.translate(_SIGN_TABLE)
_MAX_LINE = 300  # schema lines are short; prose paragraphs are skipped for pools and stats

# Digits that NFKC reads as ASCII ones (fullwidth "４４/５２", mathematical, segmented) are read as those in
# schema numbers; any other non-ASCII digit ("٣") is no digit (the patterns say [0-9], never \d). Dice text
# reads ASCII digits only (scraper.dicetag: a roll is what the forum rendered).
_NFKC_DIGIT = re.compile("[\uff10-\uff19\U0001d7ce-\U0001d7ff\U0001fbf0-\U0001fbf9]")
_NFKC_DIGITS = {cp: unicodedata.normalize("NFKC", chr(cp))
                for lo, hi in ((0xFF10, 0xFF19), (0x1D7CE, 0x1D7FF), (0x1FBF0, 0x1FBF9)) for cp in range(lo, hi + 1)}


def _ascii_digits(text: str) -> str:
    """`text` with the digits of _NFKC_DIGIT as ASCII ones (same length); ASCII text is returned as is."""
    if text.isascii() or _NFKC_DIGIT.search(text) is None:
        return text
    return text.translate(_NFKC_DIGITS)


def _alias_pattern(aliases: Mapping[str, str]) -> str:
    names = sorted((re.escape(a).replace(r"\ ", r"\s+") for a in aliases), key=len, reverse=True)
    return "(?:" + "|".join(names) + ")"


# A pool's number: "1.000" is a thousand (an Italian thousands dot), "44,5" or "44.5" is no pool value (a
# decimal: not read, rather than read as 44).
_N = r"(?:[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]{1,6})(?![.,][0-9])"


def _int(number: str) -> int:
    return int(number) if "." not in number else int(number.replace(".", ""))


# An entry's label runs to a ";" outside brackets: "-3 PE (Sonido; Cero)" is labelled "Sonido; Cero".
_LABEL_TEXT = r"(?:\[[^\[\]]*\]|\([^()]*\)|[^;])*"


def _compile(aliases: Mapping[str, str]) -> dict[str, re.Pattern[str]]:
    alias = _alias_pattern(aliases)
    stat = "(?:" + "|".join(sorted((re.escape(k) for k in _STAT_CANON), key=len, reverse=True)) + ")"
    pats = {
        # "PV 44/52", "Punti Vita: 44 su 52", "PV: 44", "PV: -3/52"; not "PE -6 (Freccia)" (a change: a
        # negative value needs its max) and "PV -3/52" is -3 (a "-" is a separator only before a space)
        # Also "«PV» 44/52", "PV → 44/52", "PV (44/52)", "PV: [44/52]" (bracketed: only with its max, "PV (5)"
        # is no pool), "PV: 44 (max 52)".
        "pool": re.compile(
            rf"(?<![{_W}0-9])(?P<name>{alias})(?![{_W}])(?:[»\"”’']\s*|\s*)(?:attuali\s*)?"
            rf"(?:(?:->|=>|[:=|→⇒➔➜➡])\s*|-(?![0-9])\s*)?(?P<po>[(\[]\s*)?"
            rf"(?P<cur>{_N}|-[0-9]{{1,6}}(?=\s*(?:/|su|di)\s*[0-9]))(?(po)(?=\s*(?:/|su|di)\s*[0-9]))"
            rf"(?:\s*(?:/|su|di|(?P<mo>[(\[])\s*(?:max\.?|massimo|su|/)\s*:?)\s*(?P<max>{_N})(?(mo)\s*[)\]]))?"
            rf"(?(po)\s*[)\]])(?![0-9{_W}])",
            re.IGNORECASE),
        # "44/52 PV"; a bare "5 PE" is an amount (a cost "(5 PE)", a change "8 PV [Artigli]"), never the pool
        "pool_after": re.compile(
            rf"(?<![0-9+\-{_W}])(?<![0-9][.,])(?P<cur>{_N})\s*(?:/|su|di)\s*(?P<max>{_N})\s*(?P<name>{alias})"
            rf"(?![{_W}])", re.IGNORECASE),
        "stat": re.compile(
            # (a base is no die "3d6" nor a fraction "5/10")
            rf"(?<![{_W}])(?P<name>{stat})(?![{_W}])\s*(?:[:|]\s*)?(?P<base>[0-9]{{1,5}})"
            rf"(?![0-9]|[.,][0-9]|[dD][0-9]|\s*/\s*[0-9])"
            # the bonus in brackets "(+1)", "[+1]", "(1)", or signed without them "5 + 1", "5 +1" (not a modifier
            # "+2 [Arma]", a fraction, a die)
            # ("(bonus +1)", "(Bonus: 1)", "(+1 bonus)" say it in words)
            rf"(?:\s*(?:(?P<o>[(\[])\s*(?:bonus\s*:?\s*)?|(?=[+-]\s*[0-9]))(?P<bonus>[+-]?\s*[0-9]{{1,5}})"
            rf"(?(o)(?:\s*bonus)?\s*[)\]]|(?![0-9.,][0-9]|[0-9]|\s*[\[/]|[dD][0-9])))?"
            # a bracketed number not read as the bonus ("(+1+2)", "(+1 Arma)"): no bonus 0 guessed, no stat
            rf"(?!\s*[(\[]\s*(?:bonus\s*:?\s*)?[+-]?\s*[0-9])",
            re.IGNORECASE),
        # A table cell holding only a pool or stat name: its value is in the next cell (next line).
        "name_cell": re.compile(rf"^\W{{0,3}}(?:{alias}|{stat})\W{{0,3}}$", re.IGNORECASE),
        "stat_any": re.compile(
            rf"(?<![{_W}])(?P<name>[A-ZÀ-Ý][{_W}'\u2019]{{2,30}}(?: [A-ZÀ-Ý][{_W}'\u2019]{{2,30}})?)\s*(?::\s*)?"
            rf"(?P<base>[0-9]{{1,5}})"
            rf"\s*\(\s*(?P<bonus>[+-]\s*[0-9]{{1,5}})\s*\)"),
        # Registro entries, sign first ("-8 PV [..]", "-5 PE: Freccia Sacra") or pool first ("PE -5 (..)")
        "entry_a": re.compile(
            rf"(?P<amt>[+-]\s*[0-9]{{1,6}})\s*(?P<res>{alias})(?![{_W}])\s*[:\-]?\s*(?P<label>{_LABEL_TEXT})",
            re.IGNORECASE),
        "entry_b": re.compile(
            rf"(?<![{_W}])(?P<res>{alias})(?![{_W}])\s*(?::\s*)?(?P<amt>[+-]\s*[0-9]{{1,6}})(?![0-9]|\s*/)\s*[:\-]?\s*(?P<label>{_LABEL_TEXT})",
            re.IGNORECASE),
        # One change anywhere in a Registro line ("-8 PV", "PE -5"): a line holding several is split at them.
        "core": re.compile(
            rf"(?P<amt>[+-]\s*[0-9]{{1,6}})\s*(?P<res>{alias})(?![{_W}])"
            # (not a pool name that is the unit of a number before it: "Cura 5 PV: +5 PV" is +5 PV, not PV +5)
            rf"|(?<![{_W}])(?<![0-9])(?<![0-9]\s)(?P<res2>{alias})(?![{_W}])\s*(?::\s*)?(?P<amt2>[+-]\s*[0-9]{{1,6}})"
            rf"(?![0-9]|\s*/)",
            re.IGNORECASE),
        # What looks like a change at the start of a Registro line (after a "Label:", digits and all): a number next to a pool
        # name ("8 PV [Artigli]", "-1,5 PV", "PV: 36"), not a complete pool reading ("PV 36/52", "36/52 PV").
        "change": re.compile(
            # (signed, with arithmetic: "-2x4 PV", "-8+3 PV", "--8 PV"; never N/M, "- 40/50 PE" is a pool reading
            # after a dash, "44/52 PV" one without)
            rf"(?:[^:\[\]]{{1,60}}:\s*)?(?:(?:[+-]{{1,2}}\s*[0-9]{{1,9}}(?:\s*[x×*+\-.,]\s*[0-9]{{1,6}})*"
            rf"|[0-9]{{1,6}}(?:[.,][0-9]{{1,3}})?)\s*(?:{alias})(?![{_W}])"
            rf"|(?:{alias})(?![{_W}])\s*[:=]?\s*[+-]?\s*[0-9]{{1,9}}(?![0-9])(?!\s*(?:/|su|di)\s*[0-9])"
            # (nor "PV: 44 (max 52)", a complete reading too)
            rf"(?!\s*[(\[]\s*(?:max\.?|massimo|su|/)\s*:?\s*[0-9]))",
            re.IGNORECASE),
    }
    # Case-sensitive twins run on the lowercased line: IGNORECASE on non-ASCII text is about twice as slow.
    for key in ("pool", "pool_after", "stat"):
        pats[key + "_lower"] = re.compile(pats[key].pattern)
    return pats


_PATTERNS = _compile(RESOURCE_ALIASES)
_POOL_WORDS = frozenset(w for a in RESOURCE_ALIASES for w in a.split())  # _first_words(RESOURCE_ALIASES)
_PATTERN_CACHE: dict[int, tuple[Mapping[str, str], dict[str, re.Pattern[str]]]] = {}

_REGISTRO_HEAD = re.compile(r"^\W{0,3}registro\b\s*[:\-]?\s*(?P<rest>.*)$", re.IGNORECASE)
# "PV 44/52 - PE 30/40 - Registro: -8 PV [Artigli]": a Registro after a separator in the middle of a line,
# with its colon or a change right after it (not prose: "…, Registro aggiornato a inizio turno").
_REGISTRO_MID = re.compile("[|·•,;/\\-\u2010-\u2015\u2212\ufe63\uff0d]\\s*registro\\b"
                           "(?:\\s*:\\s*|\\s*-?\\s*(?=[+-]\\s*[0-9]))(?P<rest>.*)$", re.IGNORECASE)
_EMPTY_REGISTRO = re.compile(
    r"^\W{0,3}(?:nessun[ao]?\s+(?:modific\w*|cambiament\w*|variazion\w*)|nessuna|niente|vuoto|n/?a|/|-+|—)?\W{0,3}$",
    re.IGNORECASE)
# A dash is a bullet only before a signed amount ("- -2 PE") or a word ("- PE -5"): "- 8 PV [Artigli]" in a
# Registro is a loss of 8, written with a space after its minus.
# Numbered items: "1)", "1.", "1-" before a space (and "1-" only before a signed amount, a word or a "[").
_BULLET = re.compile(r"^\s*(?:[•*·▪►>]+|-(?=\s+[+-]\s*[0-9])|-\s+(?=[A-Za-z])|[0-9]{1,2}[.)](?=\s)"
                     r"|[0-9]{1,2}-(?=\s+(?:[+-]\s*[0-9]|[A-Za-z\[])))\s*")
_LABEL_WRAP = re.compile(r"^[\[(«\"']\s*(.*?)\s*[\])»\"']\.?$")
_NAME = re.compile(rf"^\W{{0,3}}(?:nome|personaggio|pg)\s*:\s*(?P<name>[{_W}][{_W}' .\-]{{0,60}}?)\s*$",
                   re.IGNORECASE)
# "Scheda: URL", "Scheda PG: URL", "Scheda del personaggio: URL", "Link scheda: URL", "Scheda: [url]URL[/url]"
# (up to two short words between), or "[url=URL]Scheda …[/url]".
_URL_IN_TEXT = re.compile(
    r"(?i)scheda(?:\W{1,5}[A-Za-zÀ-ÖØ-öø-ÿ]{1,20}){0,2}?\W{0,20}(?:\[url\])?(https?://[^\s\"'<>\[\]]{1,500})"
    r"|\[url=[\"']?(https?://[^\s\"'<>\[\]]{1,500})[\"']?\][^\[\]]{0,40}?scheda")
_DIGITS = "0123456789"
# A line after the first that starts with a value cell's first character (see _join_cells): str.splitlines's
# line breaks, then one of _DIGITS_SIGNS.
_JOIN_GATE = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029][0-9+\\-\\[<]")


def _has_digit(text: str) -> bool:
    # Ten C-level substring scans beat one regex scan by an order of magnitude on non-ASCII text.
    for d in _DIGITS:
        if d in text:
            return True
    return False


def _patterns(aliases: Mapping[str, str]) -> dict[str, re.Pattern[str]]:
    if aliases is RESOURCE_ALIASES:
        return _PATTERNS
    cached = _PATTERN_CACHE.get(id(aliases))
    if cached is None or cached[0] is not aliases:
        cached = (aliases, _compile({k.lower(): v for k, v in aliases.items()}))
        _PATTERN_CACHE[id(aliases)] = cached
    return cached[1]


def _canon(name: str, aliases: Mapping[str, str]) -> str:
    key = " ".join(name.lower().split())
    return aliases.get(key) or RESOURCE_ALIASES.get(key) or name.upper()


def _signed(text: str) -> int:
    return int(text.replace(" ", ""))


def _clean_label(label: str) -> str:
    label = label.strip(" \t.,;:-")
    close = _CLOSER.get(label[:1])
    if close is not None:
        # "[Sonido] (costo 3)": the first group loses its brackets, what follows it is kept
        k = label.find(close, 1)
        if k > 0 and (close == label[0] or label.find(label[0], 1, k) < 0) and label[k + 1:].strip():
            return " ".join(p for p in (label[1:k].strip(), label[k + 1:].strip()) if p)
    if len(label) > 1 and label[0] in _LABEL_OPEN and label[-1] in _LABEL_CLOSE and "\n" not in label:
        return label[1:-1].strip()  # what _LABEL_WRAP gives a wrapped label that cannot end with "."
    if label[:1] in _LABEL_OPEN:  # what _LABEL_WRAP needs first
        m = _LABEL_WRAP.match(label)
        if m:
            label = m.group(1)
    return label.strip()


_LABEL_OPEN = frozenset("[(«\"'")
_CLOSER = {"[": "]", "(": ")", "«": "»", '"': '"', "'": "'"}
_LABEL_CLOSE = frozenset("])»\"'")
_BULLET_START = frozenset("•*·▪►>-")


def _clean(text: str) -> str:
    """clean_markup(text), without its work when a cheap test shows it would only collapse spaces: ASCII
    (no odd dashes), no tag, no entity, no formatting BBCode (the hints clean_markup itself looks for)."""
    if "<" in text or "&" in text or not text.isascii() or ("[" in text and (
            "[/" in text or "=" in text or "[b]" in text or "[i]" in text or "[B]" in text)):
        return clean_markup(text)
    return " ".join(text.split())


def _debullet(text: str) -> str:
    # _BULLET only matches text that starts with a space, a bullet, a dash or a digit
    return _BULLET.sub("", text) if text[:1] in _BULLET_START or text[:1].isspace() or text[:1] in _DIGITS else text


def _depth0(text: str, pos: int) -> bool:
    """Whether `pos` is outside every [...], (...) and «...» of `text`."""
    return (text.count("[", 0, pos) <= text.count("]", 0, pos) and text.count("(", 0, pos) <= text.count(")", 0, pos)
            and ("«" not in text or text.count("«", 0, pos) <= text.count("»", 0, pos)))


# The connectors between two changes of one line ("-8 PV e -3 PE [Artigli]", "-8 PV / -3 PE", "· ").
_GAP_EDGE = re.compile(r"^(?:[\s,;/|&+·•]|(?:e|ed)(?=\s))+|(?:[\s,;/|&+·•]|(?<=\s)(?:ed|e))+$", re.IGNORECASE)


def _core_entries(text: str, pats: dict[str, re.Pattern[str]], aliases: Mapping[str, str],
                  raw: str) -> list[RegistroEntry] | None:
    """The entries of a Registro part holding several changes or a label written first: `-8 PV -3 PE [Artigli]`
    (both Artigli), `-8 PV [Artigli] -3 PE [Sonido]`, `Artigli di Hollow: -8 PV`, `[Artigli] -8 PV`. Only
    changes outside brackets count. None when the part is not made of entries."""
    cores = [m for m in pats["core"].finditer(text) if _depth0(text, m.start())]
    if not cores:
        return None
    head = text[:cores[0].start()].strip()
    # A label first: "Label:" or a whole "[Label]"; anything else before the first change is not a Registro entry
    prefix = bool(head)
    if prefix and (not (head.endswith(":") or (head[0] in _LABEL_OPEN and head[-1] in _LABEL_CLOSE))
                   or _REGISTRO_HEAD.match(head)):
        return None  # "Registro: -8 PV" is the section's head, not a label
    n = len(cores)
    pre = [""] * n
    post = [""] * n
    pre[0] = head
    for i in range(1, n + 1):
        gap = _GAP_EDGE.sub("", text[cores[i - 1].end():cores[i].start() if i < n else len(text)])
        if i < n and (prefix or gap.endswith(":")):
            pre[i] = gap  # "Label: -8 PV, Sonido: -3 PE": the label of the next change
        else:
            post[i - 1] = gap
    labels = [" ".join(x for x in (_clean_label(a), _clean_label(b)) if x) for a, b in zip(pre, post)]
    # A change with no label of its own shares its neighbour's: the next one's ("-8 PV e -3 PE [Artigli]"),
    # the previous one's when labels come first ("Artigli: -8 PV e -3 PE").
    order = range(1, n) if prefix else range(n - 2, -1, -1)
    for i in order:
        if not labels[i]:
            labels[i] = labels[i - 1] if prefix else labels[i + 1]
    entries = []
    for m, label in zip(cores, labels):
        amt = m.group("amt") or m.group("amt2")
        entries.append(RegistroEntry(amount=_signed(amt), resource=_canon(m.group("res") or m.group("res2"), aliases),
                                   label=label, raw=raw))
    return entries


def _part_entries(line: str, pats: dict[str, re.Pattern[str]],
                  aliases: Mapping[str, str]) -> list[RegistroEntry] | None:
    """The entries of one Registro part (a line, or a piece of it between `;`), None if it is none."""
    if not _has_digit(line):
        return None
    text = _debullet(_unify_signs(_clean(line[:_MAX_LINE * 4])))
    m = (pats["entry_a"].match(text) if text[:1] in "+-" else None) or pats["entry_b"].match(text)
    if m:
        label = m.group("label")
        # the common case: one change, its label after it (one more change after it: several; the "-" the
        # pattern takes as a separator may be the next change's sign, "-8 PV -3 PE")
        tail = text[max(m.end("amt"), m.end("res")):]
        if ("-" not in tail and "+" not in tail) or not any(  # a change has a sign
                _depth0(tail, c.start()) for c in pats["core"].finditer(tail)):
            return [RegistroEntry(amount=_signed(m.group("amt")), resource=_canon(m.group("res"), aliases),
                                label=_clean_label(label), raw=line.strip())]
    return _core_entries(text, pats, aliases, line.strip())


def _registro_entry(line: str, pats: dict[str, re.Pattern[str]],
                    aliases: Mapping[str, str]) -> RegistroEntry | None:
    """parse_registro_line(line, aliases=aliases) of a str, `pats` being _patterns(aliases)."""
    entries = _part_entries(line, pats, aliases)
    return entries[0] if entries else None


def parse_registro_line(line: str, *, aliases: Mapping[str, str] = RESOURCE_ALIASES) -> RegistroEntry | None:
    """One Registro entry: `-8 PV [Artigli Affilati di Hollow]`, `PE -5 (Freccia Sacra)`, `+4 PV (Cura)`,
    `Artigli: -8 PV`; the first one of a line holding several (`-8 PV -3 PE [Artigli]`).

    None when the line is not a signed change of a known pool (an unsigned amount is not guessed).
    """
    if not isinstance(line, str):
        return None
    return _registro_entry(_ascii_digits(line), _patterns(aliases), aliases)


_ENTRY_SPLIT = re.compile(r";|,\s*(?=[+-]\s*[0-9]|[A-Za-z]{2}\s*[+-]\s*[0-9])")


def _closed_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the closed (...) and [...] of `text` (an unclosed one is none: it never hides a split)."""
    spans = []
    opened: dict[str, list[int]] = {"(": [], "[": []}
    for i, c in enumerate(text):
        if c in "([":
            opened[c].append(i)
        elif c in ")]":
            stack = opened["(" if c == ")" else "["]
            if stack:
                spans.append((stack.pop(), i))
    return spans


def _split_entries(text: str) -> list[str]:
    """`_ENTRY_SPLIT.split(text)` at the separators outside brackets only: "-8 PV (Artigli, -3 PE Sonido)" is
    one entry, its label holding the comma; "-8 PV [Artigli], -3 PE [Sonido]" two."""
    if "(" not in text and "[" not in text:
        return _ENTRY_SPLIT.split(text)
    cuts = list(_ENTRY_SPLIT.finditer(text))
    if not cuts:
        return [text]
    spans = _closed_spans(text)
    parts = []
    pos = 0
    for m in cuts:
        if not any(s < m.start() < e for s, e in spans):
            parts.append(text[pos:m.start()])
            pos = m.end()
    parts.append(text[pos:])
    return parts


def _read_registro(text: str, aliases: Mapping[str, str]) -> tuple[list[RegistroEntry], bool]:
    """The entries of one Registro line (several may share it, split by `;` or `,`), and whether some part of
    it looks like a change (a number next to a pool name) but could not be read."""
    text = _debullet(text)
    pats = _patterns(aliases)
    entries: list[RegistroEntry] = []
    unread = False
    for p in (_split_entries(text) if ";" in text or "," in text else (text,)):
        if not p.strip():
            continue
        found = _part_entries(p, pats, aliases)
        if found:
            entries.extend(found)
        elif not unread and _has_digit(p):
            unread = pats["change"].match(_debullet(_unify_signs(_clean(p)))) is not None
    return entries, unread


def _pick_sheet(links: Iterable[object], text_lines: Sequence[str], pattern: re.Pattern[str] | None) -> str | None:
    hrefs: list[tuple[str, str]] = []
    for link in links or ():
        if isinstance(link, str):
            hrefs.append(("", link))
        elif isinstance(link, (tuple, list)) and len(link) == 2:
            a, b = link
            # (text, href) or (href, text): the href is the one that looks like a URL.
            if isinstance(b, str) and ("/" in b or b.startswith("http")):
                hrefs.append((str(a or ""), b))
            elif isinstance(a, str):
                hrefs.append((str(b or ""), a))
    for text, href in hrefs:
        if pattern is not None:
            if pattern.search(href) or pattern.search(text):
                return href
        elif "scheda" in href.lower() or "scheda" in text.lower() or "sheet" in href.lower():
            return href
    for line in text_lines:
        if "cheda" in line or "CHEDA" in line:
            m = _URL_IN_TEXT.search(line)
            if m:
                return (m.group(1) or m.group(2)).rstrip(".,;)")
    return None


# "Potenza 14 - Resistenza 6 = 8" is a calculation; "Forza 5 (+1) = 6" (a stat and its total) is not.
_CALC_EQUALS = re.compile(r"[0-9]\s*=")
_DIGITS_SIGNS = frozenset("0123456789+-[<")
_WORD = re.compile(rf"[{_W}]+")
_STAT_WORDS = frozenset(_STAT_CANON)
_FIRST_WORDS: dict[int, tuple[Mapping[str, str], frozenset[str]]] = {}


def _first_words(aliases: Mapping[str, str]) -> frozenset[str]:
    cached = _FIRST_WORDS.get(id(aliases))
    if cached is None or cached[0] is not aliases:
        words = frozenset(w for a in list(aliases) + list(RESOURCE_ALIASES) for w in a.lower().split())
        cached = (aliases, words)
        _FIRST_WORDS[id(aliases)] = cached
    return cached[1]


# "Liberazione [Cosmo 100]", "Difesa [Volontà 220] (A vs B)": an action named before its bracketed values;
# those values are what the action spends or rolls against, not the schema's.
_ACTION_LINE = re.compile(rf"^\W{{0,3}}[{_W}][{_W}' ]{{0,40}}?\s*[\[{{]")
_BRACKETS = re.compile(r"\[[^\[\]]*\]|\{[^{}]*\}")
_LEAD = re.compile(r"^[\W_]*$")


def _action_spans(line: str) -> list[tuple[int, int]]:
    """Spans of an action line's bracketed values (none for other lines)."""
    if ("[" not in line and "{" not in line) or not _ACTION_LINE.match(line):
        return []
    return [m.span() for m in _BRACKETS.finditer(line)]


def _strength(line: str, first: int) -> int:
    """2 for a line that starts with its pool/stat ("Cosmo: 180/400", "Forza 5 (+1) | Mente 4"), else 1."""
    return 2 if _LEAD.match(line[:first]) else 1


_BONUS_CELL = re.compile(r"^\s*[(\[]?\s*([+-]\s*[0-9]{1,5})\s*[)\]]?\s*$")
_STARTS_WITH_NUMBER = re.compile(r"^\W{0,3}[+-]?[0-9]")


def _join_cells(lines: list[str], name_cell: re.Pattern[str]) -> list[str]:
    """Rejoin `PV` / `44/52` written as two cells (two lines) into `PV 44/52`."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and len(line) < 40 and lines[i + 1][:1].strip()[:1] in _DIGITS_SIGNS \
                and name_cell.match(clean_markup(line)) \
                and _STARTS_WITH_NUMBER.match(clean_markup(lines[i + 1][:200])):
            joined = line.rstrip() + " " + lines[i + 1].strip()
            i += 2
            # A third cell holding only the bonus: "Forza" / "5" / "+1".
            if i < len(lines) and len(lines[i]) < 20:
                bonus = _BONUS_CELL.match(lines[i])
                if bonus:
                    joined += f" ({bonus.group(1).replace(' ', '')})"
                    i += 1
            out.append(joined)
            continue
        out.append(line)
        i += 1
    return out


def _join_row(line: str, name_cell: re.Pattern[str]) -> str:
    """A table row's ` | `-joined cells with `name | value [| bonus]` rejoined as `_join_cells` rejoins lines."""
    cells = line.split(" | ")
    joined = _join_cells([c.strip() for c in cells], name_cell)
    return line if len(joined) == len(cells) else " | ".join(joined)


# The pools and stats one schema line gives are a function of the line alone, and a character's lines
# repeat from post to post (its stats, its pools when unchanged): read once, reused while the cache lasts.
_CACHE_MAX = 4096
_LINE_CACHE: dict[str, tuple[tuple[tuple[str, Resource], ...], tuple[tuple[str, Stat], ...],
                             tuple[tuple[str, Stat], ...]]] = {}


def clear_caches() -> None:
    """Forget the remembered line readings (benchmarks measure a page parsed from cold)."""
    _LINE_CACHE.clear()


def _is_calc(line: str) -> bool:
    """Calculations, rolls and "A vs B" lines carry stat names and numbers that are not the schema."""
    low = line.lower()
    return ("[dice" in low or "calcolo" in low or " vs" in low or "contro" in low or "dann" in low
            or ("=" in line and _CALC_EQUALS.search(line) is not None))


_NO_VALUES: tuple = ((), 1, (), 1, ())
_PLAIN_ALIAS = re.compile(rf"[{_W}]+(?: [{_W}]+)*")
_DIGIT_RUN = re.compile(r"[0-9]+")
_BONUS_OPEN = re.compile(r"\(\s*[+-]")  # what every `Nome N (+M)` holds
# A stat name starts a letter run that is one of these ("volonta'" starts the run "volonta").
_STAT_RUNS = frozenset(k.rstrip("'\u2019") for k in _STAT_CANON)
# The two commonest schema lines, whole: one pool ("pv: 44/52", "punti vita 30 su 48") or one stat
# ("forza 5 (+1)", "mente: 250"), lowercased. What the general reading gives them is known (see _line_values).
_ONE_POOL = re.compile(rf"(?P<name>{_alias_pattern(RESOURCE_ALIASES)}) *:? *(?P<cur>[0-9]{{1,6}})"
                       r"(?: *(?:/|su|di) *(?P<max>[0-9]{1,6}))?")
_ONE_STAT = re.compile(r"(?P<name>(?:" + "|".join(sorted((re.escape(k) for k in _STAT_CANON), key=len, reverse=True))
                       + r")) *:? *(?P<base>[0-9]{1,5})(?: *\( *(?P<bonus>[+-]? *[0-9]{1,5}) *\))?")
_ALIAS_RUNS: dict[int, tuple[Mapping[str, str], frozenset[str] | None]] = {}


def _alias_runs(aliases: Mapping[str, str]) -> frozenset[str] | None:
    """The letter runs a pool name can start with, or None when some alias is not plain words (then the
    patterns scan every position)."""
    cached = _ALIAS_RUNS.get(id(aliases))
    if cached is None or cached[0] is not aliases:
        keys = list(aliases) if aliases is RESOURCE_ALIASES else [k.lower() for k in aliases]
        runs = (frozenset(k.split(" ")[0] for k in keys)
                if all(_PLAIN_ALIAS.fullmatch(k) for k in keys) else None)
        cached = (aliases, runs)
        _ALIAS_RUNS[id(aliases)] = cached
    return cached[1]


def _scan(pat: re.Pattern[str], s: str, starts: Iterable[int]) -> list[re.Match[str]]:
    """`pat.finditer(s)` when every match of `pat` starts at one of `starts` (ascending): anchored tries
    there only, instead of the pattern's look-behind and alternation at every position."""
    out = []
    end = 0
    for p in starts:
        if p >= end:
            m = pat.match(s, p)
            if m:
                out.append(m)
                end = m.end()
    return out


def _cells_values(line: str, cells: list[tuple[int, re.Match[str]]], aliases: Mapping[str, str]) -> tuple:
    """_line_values of a line of `|`-separated cells, each one _ONE_POOL or _ONE_STAT match (with its start)."""
    pools: list[tuple[str, Resource]] = []
    line_stats: list[tuple[str, Stat]] = []
    seen: set[str] = set()
    seen_stats: set[str] = set()
    line_first = stat_at = None
    for start, m in cells:
        if m.re is _ONE_POOL:
            line_first = start if line_first is None else line_first
            name = _canon(m.group("name"), aliases)
            if name not in seen:
                seen.add(name)
                mx = m.group("max")
                pools.append((name, Resource(current=int(m.group("cur")), max=int(mx) if mx else None)))
        else:
            stat_at = start if stat_at is None else stat_at
            name = _STAT_CANON[m.group("name")]
            if name not in seen_stats:
                seen_stats.add(name)
                bonus = m.group("bonus")
                line_stats.append((name, Stat(base=int(m.group("base")), bonus=_signed(bonus) if bonus else 0)))
    stat_first = stat_at if stat_at is None or line_first is None else min(line_first, stat_at)
    return (tuple(pools), _strength(line, line_first) if line_first is not None else 1, tuple(line_stats),
            _strength(line, stat_first) if stat_first is not None else 1, ())


def _line_values(line: str, pats: dict[str, re.Pattern[str]], pool_words: frozenset[str],
                 aliases: Mapping[str, str]) -> tuple[tuple[tuple[str, Resource], ...], int, tuple[tuple[str, Stat], ...],
                                                       int, tuple[tuple[str, Stat], ...]]:
    """(pools, their _strength, stats, their _strength, other `Nome N (+M)` stats) of one short schema line with
    digits, in reading order, the first reading of each name per line; an action's bracketed values are skipped."""
    low = line.lower()
    if ("[dice" in low or "calcolo" in low or " vs" in low or "contro" in low or "dann" in low
            or ("=" in line and _CALC_EQUALS.search(line) is not None)):  # _is_calc
        return _NO_VALUES
    # "44/52 PV | 10/40 PE" and "PV 44/52 | PE 10/40": the earliest reading of each span wins.
    # Positions in `low` are positions in `line` unless lowercasing changed the length (rare letters).
    same = len(low) == len(line)
    if same and pats is _PATTERNS:
        # One pool or one stat and nothing else: the general reading finds that one match at 0 (strength 2),
        # no other pool, stat or `Nome N (+M)` (no other name, no action bracket).
        m = _ONE_POOL.fullmatch(low)
        if m:
            mx = m.group("max")
            return (((_canon(m.group("name"), aliases), Resource(current=int(m.group("cur")),
                                                                 max=int(mx) if mx else None)),),
                    2, (), 1, ())
        m = _ONE_STAT.fullmatch(low)
        if m:
            bonus = m.group("bonus")
            return ((), 1, ((_STAT_CANON[m.group("name")], Stat(base=int(m.group("base")),
                                                                 bonus=_signed(bonus) if bonus else 0)),), 2, ())
        if "|" in low:
            # "PV: 47/52 | PE: 25/40", "Forza 5 (+1) | Mente 4": cells each one pool or one stat, read as
            # above; no reading crosses a "|" (no name, number or bonus spans one).
            cells = []
            pos = 0
            for part in low.split("|"):
                cell = part.strip(" ")
                m = (_ONE_POOL.fullmatch(cell) or _ONE_STAT.fullmatch(cell)) if cell else None
                if m is None:
                    break
                cells.append((pos + len(part) - len(part.lstrip(" ")), m))
                pos += len(part) + 1
            else:
                return _cells_values(line, cells, aliases)
    runs = _alias_runs(aliases) if same else None
    if runs is not None:
        # Every pool/stat name starts a letter run that is one of its words: the patterns are tried there
        # only (and "44/52 PV" at the digit runs before such a name).
        pool_at: list[int] = []
        stat_at: list[int] = []
        for m in _WORD.finditer(low):
            w = m.group()
            if w in runs:
                pool_at.append(m.start())
            if w in _STAT_RUNS:
                stat_at.append(m.start())
        if pool_at:
            candidates = _scan(pats["pool_lower"], low, pool_at)
            after = _scan(pats["pool_after_lower"], low,
                          [m.start() for m in _DIGIT_RUN.finditer(low, 0, pool_at[-1])])
            if after:
                candidates = sorted(candidates + after, key=lambda m: (m.start(), -m.end()))
        else:
            candidates = []
        stat_matches = _scan(pats["stat_lower"], low, stat_at) if stat_at else ()
    else:
        # Cheap gate: run the pool/stat patterns only on lines holding one of their words.
        words = set(_WORD.findall(low))
        subject = low if same else line
        candidates = sorted((m for pat in ((pats["pool_lower"], pats["pool_after_lower"]) if same else
                                           (pats["pool"], pats["pool_after"])) for m in pat.finditer(subject)),
                            key=lambda m: (m.start(), -m.end())) if not words.isdisjoint(pool_words) else []
        stat_matches = ((pats["stat_lower"] if same else pats["stat"]).finditer(subject)
                        if not words.isdisjoint(_STAT_WORDS) else ())
    pool_spans: list[tuple[int, int]] = []
    pools: list[tuple[str, Resource]] = []
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
        mx = _int(m.group("max")) if m.group("max") else None
        pools.append((name, Resource(current=_int(m.group("cur")), max=mx)))
    stat_spans: list[tuple[int, int]] = []
    line_stats: list[tuple[str, Stat]] = []
    seen = set()
    pool_level = _strength(line, line_first) if line_first is not None else 1
    stat_first: int | None = None
    for m in stat_matches:
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
    for m in (pats["stat_any"].finditer(line) if "(" in line and _BONUS_OPEN.search(line) else ()):
        if any(m.start() < e and s < m.end() for s, e in stat_spans + pool_spans + skip):
            continue
        name = _accent(" ".join(m.group("name").split()))
        if name.lower() in aliases or name.lower() in RESOURCE_ALIASES or name in seen:
            continue
        seen.add(name)
        any_stats.append((name, Stat(base=int(m.group("base")), bonus=_signed(m.group("bonus")))))
    stat_level = _strength(line, stat_first) if stat_first is not None else 1
    return tuple(pools), pool_level, tuple(line_stats), stat_level, tuple(any_stats)


def parse_schema(text: str, *, sheet_url: str | None = None, links: Iterable[object] = (),
                 aliases: Mapping[str, str] = RESOURCE_ALIASES,
                 sheet_pattern: str | re.Pattern[str] | None = None) -> PostSchema | None:
    """The post schema in a post's own text (quotes removed, one line per block/row/cell); never raises.

    `links` are the post's hrefs (or `(text, href)` pairs): the sheet link is the one whose URL or text
    mentions "scheda" (or matches `sheet_pattern`). None when the post holds no schema at all; otherwise
    what is written is filled and the rest listed in `missing`.
    """
    if not isinstance(text, str):
        text = ""
    text = _ascii_digits(text)  # "PV ４４/５２" is PV 44/52
    try:
        pattern = re.compile(sheet_pattern, re.IGNORECASE) if isinstance(sheet_pattern, str) else sheet_pattern
    except re.error:
        pattern = None
    if aliases is RESOURCE_ALIASES:
        pats, pool_words, cacheable = _PATTERNS, _POOL_WORDS, True
    else:
        pats, pool_words, cacheable = _patterns(aliases), _first_words(aliases), False
    # No digit in the text: none in any line (markup cleaning adds none), so no pool, stat or entry.
    digits = _has_digit(text)
    hints = "egistro" in text or "EGISTRO" in text or "cheda" in text or "CHEDA" in text
    if not digits and not hints:
        # Bail out early: no digits and no Registro/Scheda keyword means no schema, unless a link is the
        # sheet (no line names one: no "cheda" in the text).
        if sheet_url is None:
            sheet_url = _pick_sheet(links, (), pattern)
            if sheet_url is None:
                return None
        raw_lines = text.splitlines()  # a cell is only joined to a number's cell: none here
    else:
        raw_lines = text.splitlines()
        if _JOIN_GATE.search(text):  # some line after the first starts as a value cell does
            raw_lines = _join_cells(raw_lines, pats["name_cell"])
        if " | " in text:  # a table row's cells on one line: `Destrezza | 5 | +1` is one stat, as on three lines
            raw_lines = [_join_row(ln, pats["name_cell"]) if " | " in ln else ln for ln in raw_lines]
        if sheet_url is None:
            sheet_url = _pick_sheet(links, [ln for ln in raw_lines if len(ln) < 2000]
                                    if "cheda" in text or "CHEDA" in text else (),
                                    pattern)

    resources: dict[str, Resource] = {}
    stats: dict[str, Stat] = {}
    registro: list[RegistroEntry] | None = None
    strength: dict[str, int] = {}  # how schema-like the line each pool/stat was read from (see _strength)
    character: str | None = None
    in_registro = False
    registro_unread = False  # a Registro line looked like a change but was not read
    for raw_line in raw_lines:
        n = len(raw_line)
        if n > _MAX_LINE and (n > _MAX_LINE * 4 or ("[" not in raw_line and "<" not in raw_line)):
            in_registro = False  # a prose paragraph: never schema, and it ends the Registro
            continue
        line = _clean(raw_line) if ("[" in raw_line or "<" in raw_line or "&" in raw_line) else raw_line.strip()
        if not line.isascii():
            # "(−1)", "PV: −3/52"; also without digits (rare: a Registro/Scheda hint), where a dropped
            # zero-width space may join words ("Registro\u200bPV")
            line = _unify_signs(line)
        if not line:
            in_registro = False  # a blank line ends the Registro
            continue
        registro_here = False  # the Registro starts in the middle of this line
        if "egistro" in line or "EGISTRO" in line:
            head = _REGISTRO_HEAD.match(line)
            mid = _REGISTRO_MID.search(line) if head is None else None
            if mid is not None and not _depth0(line, mid.start()):
                mid = None  # "-8 PV [Danni - Registro: x]": a label's text
            if head or mid:
                in_registro = True
                registro = registro if registro is not None else []
                rest = (head or mid).group("rest").strip()  # type: ignore[union-attr]
                if rest and not _EMPTY_REGISTRO.match(rest):
                    entries, unread = _read_registro(rest, aliases)
                    registro.extend(entries)
                    registro_unread = registro_unread or unread
                if head:
                    continue
                # "PV 44/52 - PE 30/40 - Registro: -8 PV [Artigli]": what comes before is read as usual
                line = line[:mid.start()].rstrip()  # type: ignore[union-attr]
                registro_here = True
        if in_registro and not registro_here:
            if _EMPTY_REGISTRO.match(line):
                continue
            entries, unread = _read_registro(line, aliases)
            if entries or unread:
                # a change that could not be read ("8 PV [Artigli]": no sign) stays in the Registro: never a
                # pool reading, and the Registro is incomplete
                registro.extend(entries)  # type: ignore[union-attr]
                registro_unread = registro_unread or unread
                continue
            in_registro = False  # the next section starts
        if len(line) > _MAX_LINE or not digits or not _has_digit(line):
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
            values = _line_values(line, pats, pool_words, aliases)
            if cacheable:
                if len(_LINE_CACHE) >= _CACHE_MAX:
                    _LINE_CACHE.clear()
                _LINE_CACHE[line] = values
        pools, pool_level, line_stats, stat_level, any_stats = values
        # the first reading stands unless a later line looks more like a schema (see _strength)
        for name, res in pools:
            if name in resources and (strength.get(name, 2) >= pool_level or (
                    res.max is None and resources[name].max is not None)):
                continue  # nor does a partial reading ("PV: 36") replace a complete one ("PV 44/52")
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
    if registro is None or registro_unread:
        missing.append("registro")  # none, or some change in it not read (the entries read are kept)
    return PostSchema(sheet_url=sheet_url, resources=resources, stats=stats,
                      registro=tuple(registro) if registro is not None else None,
                      missing=tuple(missing), character=character)


__all__ = ["RESOURCE_ALIASES", "STAT_NAMES", "parse_schema", "parse_registro_line"]
