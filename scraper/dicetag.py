"""Dice expressions, dice-tag labels (`guida` form) and text recognition of rolls in a post."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from engine.history import DiceLabel, Modifier, Roll

from scraper.errors import DiceExpressionError


# A frozen dataclass's __init__ sets every field through object.__setattr__: `maker` gives the new instance
# its dict in one piece, the same object (eq, hash, repr, pickle) in a third of the time.

# Resource limits of an expression: a forum roller never shows more, and they keep every check cheap.
MAX_COUNT = 100
MAX_SIDES = 1000
MAX_CONSTANT = 10000
# Labels longer than this are kept raw but only their head is parsed (a label is one line of a dice tag).
MAX_LABEL_PARSE = 2000

_SOURCES = ("forum_roller", "forumotion_gm", "phpbb_dice", "typed_text")

# Dashes and minus signs players paste from word processors, all read as "-"; odd spaces as " ".
_UNIFY = {"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2012": "-", "\ufe63": "-", "\uff0d": "-",
          "\uff0b": "+", "\u00d7": "x", "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u200b": ""}
_UNIFY_RE = re.compile("[" + "".join(_UNIFY) + "]")


def unify_signs(text: str) -> str:
    """`text` with unicode minus/dashes as "-", "×" as "x", odd spaces as " " (same length unless U+200B)."""
    if text.isascii() or not any(c in text for c in _UNIFY):
        return text  # the common case costs a few C-level scans
    return _UNIFY_RE.sub(lambda m: _UNIFY[m.group(0)], text)


# --- expressions ---------------------------------------------------------------------------------

_EXPR_FULL = re.compile(r"\s*([0-9]{0,6})\s*[dD]\s*([0-9]{1,7})((?:\s*[+-]\s*[0-9]{1,9})*)\s*")
_CONST_TERM = re.compile(r"([+-])\s*([0-9]{1,9})")


# Labels and expressions repeat within a thread (the same attacks, the same dice): their parses are
# immutable, so one parse serves every repeat. Bounded: emptied when full (a thread has a few hundred).
_CACHE_MAX = 4096
_EXPR_CACHE: dict[str, tuple[int, int, int]] = {}
_LABEL_CACHE: dict[str, DiceLabel] = {}
# make_roll's reading of an expression text: (count, sides, constant, normalised or cleaned text, parsed)
_ROLL_EXPR_CACHE: dict[str, tuple[int, int, int, str, bool]] = {}
# find_text_rolls' reading of a written expression: (normalised or as written, count, constant)
_EXPR_OF_CACHE: dict[str, tuple[str, int, int]] = {}


def clear_caches() -> None:
    """Forget the remembered parses (benchmarks measure a page parsed from cold)."""
    _EXPR_CACHE.clear()
    _LABEL_CACHE.clear()
    _ROLL_EXPR_CACHE.clear()
    _EXPR_OF_CACHE.clear()


def parse_expression(expr: str) -> tuple[int, int, int]:
    """`"1d12+6"` → `(1, 12, 6)`; `"d20"` → `(1, 20, 0)`; `"2d6-1"` → `(2, 6, -1)`.

    Several constants are summed (`1d12+6-1` → constant 5). Raises `DiceExpressionError` on anything else
    or beyond the limits (count ≤ 100, sides ≤ 1000, |constant| ≤ 10000).
    """
    if expr.__class__ is str:
        hit = _EXPR_CACHE.get(expr)
        if hit is not None:
            return hit
    elif not isinstance(expr, str):
        raise DiceExpressionError(f"espressione del dado non valida: {expr!r}")
    result = _parse_expression(expr)
    if expr.__class__ is str:
        if len(_EXPR_CACHE) >= _CACHE_MAX:
            _EXPR_CACHE.clear()
        _EXPR_CACHE[expr] = result
    return result


def _parse_expression(expr: str) -> tuple[int, int, int]:
    text = unify_signs(expr)
    if len(text) > 200:
        raise DiceExpressionError("espressione del dado troppo lunga")
    m = _EXPR_FULL.fullmatch(text)
    if not m:
        raise DiceExpressionError(f"espressione del dado non valida: {expr!r}")
    count = int(m.group(1)) if m.group(1) else 1
    sides = int(m.group(2))
    constant = 0
    for sign, num in _CONST_TERM.findall(m.group(3)):
        constant += int(num) if sign == "+" else -int(num)
    if not 1 <= count <= MAX_COUNT:
        raise DiceExpressionError(f"numero di dadi fuori dai limiti (1–{MAX_COUNT}): {count}")
    if not 1 <= sides <= MAX_SIDES:
        raise DiceExpressionError(f"numero di facce fuori dai limiti (1–{MAX_SIDES}): {sides}")
    if abs(constant) > MAX_CONSTANT:
        raise DiceExpressionError(f"costante fuori dai limiti (±{MAX_CONSTANT}): {constant}")
    return count, sides, constant


def normalise_expression(count: int, sides: int, constant: int = 0) -> str:
    """`(1, 12, 6)` → `"1d12+6"`, `(2, 6, -1)` → `"2d6-1"`, `(1, 20, 0)` → `"1d20"`."""
    text = f"{count}d{sides}"
    if constant > 0:
        text += f"+{constant}"
    elif constant < 0:
        text += f"-{-constant}"
    return text


# --- labels --------------------------------------------------------------------------------------

# Only formatting BBCode is stripped: plain [..] brackets carry technique and modifier names.
_BBCODE = re.compile(
    r"\[/?(?:b|i|u|s|em|strong|color|colour|size|font|url|center|left|right|justify|sup|sub|align|"
    r"highlight|bgcolor|glow|shadow|quote|code|spoiler|dice|img|hr|br|span|div|p)(?:=[^\[\]]{0,200})?\]",
    re.IGNORECASE,
)
_HTML_TAG = re.compile(r"<[^<>]{0,500}>")
# Script/style bodies are code, not label text. Bounded so a missing end tag cannot make it quadratic.
_SCRIPT = re.compile(r"<(script|style)\b[^<>]{0,500}>[^<]{0,5000}(?:<(?!/\1)[^<]{0,5000}){0,20}</\1\s*>",
                     re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_VS = re.compile(r"\s+(?:vs\.?|v\.|versus|contro)\s+|\s*(?:->|→|=>)\s*", re.IGNORECASE)
_TARGET_SPLIT = re.compile(r"\s*(?:,|;|&|\+|/)\s*|\s+(?:e|ed|and)\s+", re.IGNORECASE)
_TECH_SPLIT = re.compile(r"[,;]|\s\+\s")
_PAREN_GROUP = re.compile(r"\(([^()]*)\)")
_BRACKET_GROUP = re.compile(r"\[([^\[\]]*)\]")
_HAS_SIGNED_NUMBER = re.compile(r"[+-]\s*[0-9]")
# One modifier: `+2 [Raggio Corto]`, `+2 Raggio Corto`, `[Destrezza +6]`, `2 [Bonus]` (sign optional only
# when the label is bracketed). A bare label ends at the next bracket/comma/paren or signed number.
_MODIFIER = re.compile(
    r"(?P<s1>[+-])\s*(?P<n1>[0-9]{1,6})\s*(?:\[(?P<l1>[^\[\]]*)\]|(?P<b1>(?:(?![+-]\s*[0-9])[^\[\],;:()])*))"
    r"|\[(?P<l2>[^\[\]0-9+-][^\[\]]*?)\s*(?P<s2>[+-])\s*(?P<n2>[0-9]{1,6})\s*\]"
    r"|(?<![\w\]])(?P<n3>[0-9]{1,6})\s*\[(?P<l3>[^\[\]]*)\]"
)
_SEPARATOR_CHARS = " \t\n\r,;:()"


def clean_markup(text: str) -> str:
    """Text with HTML tags, formatting BBCode and entities removed, dashes unified, spaces collapsed."""
    if "<" in text:
        if "<s" in text.lower():
            text = _SCRIPT.sub(" ", text)
        text = _HTML_TAG.sub(" ", text)
    if "[" in text and ("[/" in text or "=" in text or "[b]" in text or "[i]" in text or "[B]" in text):
        text = _BBCODE.sub("", text)  # formatting tags come in pairs or carry "=": cheap gate first
    elif ("&" not in text and text.isascii() and text.isprintable() and "  " not in text
          and text[:1] != " " and text[-1:] != " " and text.__class__ is str):
        return text  # nothing to clean: printable ASCII (no whitespace but " "), single-spaced, trimmed
    if "&" in text:
        text = html.unescape(text)
    return " ".join(unify_signs(text).split())


def _balanced(text: str) -> bool:
    # Counting is C-level; an inverted pair ("]x[") is caught by the first-closer check.
    if text.count("[") != text.count("]") or text.count("(") != text.count(")"):
        return False
    return text.find("]") >= text.find("[") and text.find(")") >= text.find("(")


_CANONICAL_MODIFIER = re.compile(r"([+-])\s*([0-9]{1,6})\s*\[([^\[\]]*)\]")
# Separators (_SEPARATOR_CHARS) and canonical terms only: the terms cannot start inside the separators
# (no sign there) nor end but at their first "]", so this split is the one finditer finds.
_CANONICAL_ALL = re.compile(r"[ \t\n\r,;:()]*(?:[+-]\s*[0-9]{1,6}\s*\[[^\[\]]*\][ \t\n\r,;:()]*)*")


def parse_modifiers(text: str) -> tuple[tuple[Modifier, ...], bool]:
    """Signed labelled terms in `text`, and whether something other than separators was left over."""
    if not text.strip(_SEPARATOR_CHARS):
        return (), False  # no modifiers at all (most labels)
    # Fast path: the canonical `+2 [Raggio Corto] +6 [Destrezza]` with only separators in between
    # (one pattern checks the whole text, then the terms are read in one call).
    if _CANONICAL_ALL.fullmatch(text) is not None:
        return tuple([Modifier(-int(amount) if sign == "-" else int(amount), label.strip(" :.-"))
                      for sign, amount, label in _CANONICAL_MODIFIER.findall(text)]), False
    mods: list[Modifier] = []
    leftover = False
    pos = 0
    for m in _MODIFIER.finditer(text):
        if text[pos:m.start()].strip(_SEPARATOR_CHARS):
            leftover = True
        pos = m.end()
        if m.group("n1") is not None:
            amount = int(m.group("n1")) * (-1 if m.group("s1") == "-" else 1)
            label = m.group("l1") if m.group("l1") is not None else m.group("b1")
        elif m.group("n2") is not None:
            amount = int(m.group("n2")) * (-1 if m.group("s2") == "-" else 1)
            label = m.group("l2")
        else:
            amount = int(m.group("n3"))
            label = m.group("l3")
        mods.append(Modifier(amount, (label or "").strip(" :.-")))
    if text[pos:].strip(_SEPARATOR_CHARS):
        leftover = True
    return tuple(mods), leftover


def _split_names(text: str) -> tuple[str, ...]:
    # One name (the common case): no separator char and, the text being cleaned, no space for " e ".
    if " " not in text and "," not in text and ";" not in text and "&" not in text and "+" not in text \
            and "/" not in text:
        name = text.strip(" .:-")
        return (name,) if name else ()
    return tuple(n for n in (p.strip(" .:-") for p in _TARGET_SPLIT.split(text)) if n)


def parse_label(raw: str) -> DiceLabel:
    """Parse a dice label in the `guida` form; never raises.

    `Attacco [Artigli Affilati, Sonìdo] (Hollow vs Quincy): (+2 [Raggio Corto], +2 [Bonus Arma] ...)`.
    Partial parses keep what was read and name the first problem in `error`: "empty", "no_action",
    "no_actor", "no_target", "unbalanced_brackets", "unparsed_modifiers".
    """
    if not isinstance(raw, str):
        raw = "" if raw is None else str(raw)
    if raw.__class__ is str:  # (a str subclass may compare equal and differ: never cached)
        hit = _LABEL_CACHE.get(raw)
        if hit is not None:
            return hit
    label = _parse_label(raw)
    if raw.__class__ is str:
        if len(_LABEL_CACHE) >= _CACHE_MAX:
            _LABEL_CACHE.clear()
        _LABEL_CACHE[raw] = label
    return label


def _vs_search(text: str) -> re.Match[str] | None:
    # _VS needs a "v", "contro" or an arrow: most labels and names have none of them.
    if "v" in text or "V" in text or "->" in text or "→" in text or "=>" in text or "contro" in text.lower():
        return _VS.search(text)
    return None


def _parse_label(raw: str) -> DiceLabel:
    text = clean_markup(raw[:MAX_LABEL_PARSE])
    if not text:
        return DiceLabel(raw, None, (), None, (), (), "empty")
    # The common "Azione [Tecnica] (A vs B)…": one pattern splits it, and what the general reading below
    # would find follows from its shape: with one [..] and one (..) before the tail, the brackets balance
    # when the tail's do, the (..) is the first group and names "A vs B", the [..] holds the techniques.
    shape = _CANON_SHAPE.match(text) if "(" in text else None
    vs = _vs_search(shape.group(3)) if shape is not None else None
    if vs is not None:
        action_text, group, inner, tail = shape.groups()  # type: ignore[union-attr]
        errors: list[str] = []
        if tail.count("[") != tail.count("]") or tail.count("(") != tail.count(")"):
            errors.append("unbalanced_brackets")
        actor = inner[:vs.start()].strip(" :.-") or None
        targets = _split_names(inner[vs.end():])
        if actor is None:
            errors.append("no_actor")
        elif not targets:
            errors.append("no_target")
        return _label_rest(raw, errors, action_text, [group], actor, targets, tail)
    errors = []
    # _balanced, inline: counting is C-level; an inverted pair ("]x[") is caught by the first-closer check
    if (text.count("[") != text.count("]") or text.count("(") != text.count(")")
            or text.find("]") < text.find("[") or text.find(")") < text.find("(")):
        errors.append("unbalanced_brackets")

    # The actor group is the first (...) naming "A vs B"; failing that, the first (...) with no numbers.
    actor_m = None
    fallback = None
    vs = None
    if "(" in text:
        for g in _PAREN_GROUP.finditer(text):
            inner = g.group(1)
            vs = _vs_search(inner)
            if vs:
                actor_m = g
                break
            if fallback is None and inner.strip() and not _HAS_SIGNED_NUMBER.search(inner) and "[" not in inner:
                fallback = g
    actor: str | None = None
    targets: tuple[str, ...] = ()
    if actor_m is None and fallback is None:
        # No parentheses: "Attacco [X] Hollow vs Quincy: +2 [..]" — read "A vs B" up to the colon.
        head_end = text.find(":")
        head_text = text if head_end < 0 else text[:head_end]
        vs = _vs_search(head_text)
        if vs:
            before = head_text[:vs.start()]
            cut = max(before.rfind("]"), -1)
            actor = before[cut + 1:].strip(" :.-") or None
            targets = _split_names(head_text[vs.end():])
            head = before[:cut + 1] if cut >= 0 else ""
            tail = text[head_end + 1:] if head_end >= 0 else ""
            if head == "" and actor and " " in actor:
                # "Attacco Hollow vs Quincy": the last word is the actor, the rest the action.
                head, actor = actor.rsplit(" ", 1)
        else:
            first_sign = _HAS_SIGNED_NUMBER.search(text)
            head = text[:head_end] if head_end >= 0 else (text[:first_sign.start()] if first_sign else text)
            tail = text[len(head):]
            errors.append("no_actor")
    else:
        g = actor_m or fallback
        inner = g.group(1)  # vs: its "A vs B" match, None for the fallback (it has none)
        if vs:
            actor = inner[:vs.start()].strip(" :.-") or None
            targets = _split_names(inner[vs.end():])
        else:
            actor = inner.strip(" :.-") or None
        head = text[:g.start()]
        tail = text[g.end():]
        if actor is None:
            errors.append("no_actor")
        elif vs and not targets:
            errors.append("no_target")

    # Head: "Azione [Tecnica, Tecnica]" — techniques are the bracketed groups, the action the text before.
    first_br = head.find("[")
    action_text = head if first_br < 0 else head[:first_br]
    tech_groups: list[str] = []
    if first_br >= 0:
        tech_groups = [b.group(1) for b in _BRACKET_GROUP.finditer(head)]
        if not tech_groups:
            tech_groups = [head[first_br + 1:]]  # "Parata [Spada (A vs B)": the bracket never closes
    return _label_rest(raw, errors, action_text, tech_groups, actor, targets, tail)


_CANON_SHAPE = re.compile(r"([^\[\]()]*)\[([^\[\]()]*)\] ?\(([^()\[\]]*)\)(.*)", re.DOTALL)


def _label_rest(raw: str, errors: list[str], action_text: str, tech_groups: list[str], actor: str | None,
                targets: tuple[str, ...], tail: str) -> DiceLabel:
    """The label from its read parts: techniques, action and modifiers, and the first problem."""
    techniques: list[str] = []
    for group in tech_groups:
        if "," in group or ";" in group or "+" in group:
            techniques.extend(t for t in (p.strip(" .:-[]") for p in _TECH_SPLIT.split(group)) if t)
        else:  # one technique (the text is cleaned: its only space is " ", _TECH_SPLIT needs ",;+")
            t = group.strip(" .:-[]")
            if t:
                techniques.append(t)
    action = action_text.strip(" :.-,") or None
    if action is None:
        errors.append("no_action")

    modifiers, leftover = parse_modifiers(tail)
    if leftover:
        errors.append("unparsed_modifiers")
    return DiceLabel(raw, action, tuple(techniques), actor, targets, modifiers, errors[0] if errors else None)


# --- rolls ---------------------------------------------------------------------------------------

def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = unify_signs(value.strip())
        if s.isascii() and re.fullmatch(r"[+-]?\d{1,12}", s):  # ASCII digits only: int() would read "٧" or "７" as 7
            return int(s)
    return None


def make_roll(*, expression: str, faces: Iterable[Any] | None, total: Any, label: str, source: str) -> Roll:
    """Build a `Roll`, parse its label and check it against its expression; never raises.

    Problems: "typed_by_hand" (source "typed_text"), "unparsable_expression", "faces_out_of_range",
    "face_count_mismatch", "total_mismatch" (sum(faces) + constant != total), "total_out_of_range" (no faces
    shown and the total cannot come from the expression), "unreadable_faces", "unreadable_total",
    "unknown_source" (source recorded as "typed_text"). Authentic = no problems.
    """
    problems: list[str] = []
    if source not in _SOURCES:
        problems.append("unknown_source")
        source = "typed_text"
    if source == "typed_text":
        problems.append("typed_by_hand")
    expr_text = expression if isinstance(expression, str) else ("" if expression is None else str(expression))
    # A page repeats its few expressions: their reading is remembered (per page, see clear_caches).
    read = _ROLL_EXPR_CACHE.get(expr_text) if expr_text.__class__ is str else None
    if read is None:
        try:
            count, sides, constant = parse_expression(expr_text)
            read = (count, sides, constant, normalise_expression(count, sides, constant), True)
        except DiceExpressionError:
            read = (0, 0, 0, clean_markup(expr_text[:200]), False)
        if expr_text.__class__ is str:
            if len(_ROLL_EXPR_CACHE) >= _CACHE_MAX:
                _ROLL_EXPR_CACHE.clear()
            _ROLL_EXPR_CACHE[expr_text] = read
    count, sides, constant, norm, parsed = read
    if not parsed:
        problems.append("unparsable_expression")

    face_tuple: tuple[int, ...] | None = None
    if faces is not None:
        if faces.__class__ is tuple or faces.__class__ is list:
            head = faces[: MAX_COUNT * 10 + 1]
            for f in head:
                if f.__class__ is not int:
                    break
            else:  # plain ints (the adapters' case): _int_or_none would keep each as it is
                face_tuple = tuple(head)
        if face_tuple is None:
            try:
                converted = [_int_or_none(f) for f in list(faces)[: MAX_COUNT * 10 + 1]]
            except TypeError:
                converted = [None]
            if any(f is None for f in converted):
                problems.append("unreadable_faces")
            else:
                face_tuple = tuple(converted)  # type: ignore[arg-type]
    total_value = total if total.__class__ is int else _int_or_none(total)
    if total is not None and total_value is None:
        problems.append("unreadable_total")

    if sides:
        if face_tuple is not None:
            if face_tuple and (min(face_tuple) < 1 or max(face_tuple) > sides):
                problems.append("faces_out_of_range")
            if len(face_tuple) != count:
                problems.append("face_count_mismatch")
            if total_value is not None and sum(face_tuple) + constant != total_value:
                problems.append("total_mismatch")
        elif total_value is not None and not count + constant <= total_value <= count * sides + constant:
            problems.append("total_out_of_range")

    label_text = label if isinstance(label, str) else ("" if label is None else str(label))
    if label_text and not label_text.isspace():
        tag = _LABEL_CACHE.get(label_text) if label_text.__class__ is str else None  # parse_label, inline
        if tag is None:
            tag = parse_label(label_text)
    else:
        tag = None
    return Roll(norm, count, sides, constant, face_tuple, total_value, label_text, tag, source,
                 not problems, tuple(problems))


# --- text recognition ----------------------------------------------------------------------------

@dataclass(frozen=True)
class TextRoll:
    """A roll recognised in a post's text, with the span [start, end) it covers."""

    start: int
    end: int
    expression: str  # normalised when it parses, else as written
    faces: tuple[int, ...] | None
    total: int | None
    label: str
    kind: Literal["rendered", "typed"]



_QUICK = re.compile(r"[dD]\s?[0-9]")
# A total is never the count of the next expression ("1d6 = 1d6 = 3", "1d1 =1d1 ="): after its digits, no
# "d<digit>" as _EXPR reads one (an expression without a result is skipped, the next one read).
_NOT_A_COUNT = r"(?![0-9]*\s?[dD]\s?[0-9])"
# ...nor are faces written before "(" the sides of an expression before them ("1d6 (1d12)").
_SIDES_END = re.compile(r"[dD]\s?$")
_DICE_OPEN = re.compile(r"\[dice\s*=\s*([^\[\]\n]{1,60})\]", re.IGNORECASE)
_DICE_CLOSE = re.compile(r"\[/dice\]", re.IGNORECASE)
_MAX_TAG_LABEL = 4000
_EXPR = re.compile(r"(?<![\w.])([0-9]{0,3})\s?[dD]\s?([0-9]{1,4})(?![\w])((?:\s*[+-]\s*[0-9]{1,5}(?![\w.]))*)")
# "Risultato: 7 (1d12) +6 = 13" — faces written before the expression in parentheses.
_FACES_BEFORE = re.compile(r"([0-9]{1,4}(?:\s{0,3}[,+]\s{0,3}[0-9]{1,4}){0,20})\s{0,3}\(\s{0,3}$")
_AFTER_PAREN = re.compile(r"\s{0,3}\)((?:\s{0,3}[+-]\s{0,3}[0-9]{1,5}){0,5})\s{0,3}(?:=>|=|→)\s{0,3}(-?[0-9]{1,6})"
                          + _NOT_A_COUNT)
_NUM = re.compile(r"-?[0-9]{1,6}")
_ARROW = re.compile(r"=>|->|→|⇒|=|:")
_KEYWORD = re.compile(r"\b(?:risultat[oi]|totale|tiro|esito|lancio|lanci|dadi|dado|facce|results?|total)\b\s*:?",
                      re.IGNORECASE)
# _KEYWORD, scanned several times faster: the words grouped by their first letter, which is matched first (a
# character class the scan can skip to); "(?<!\w\w)" after it is "\b" before it. Same matches (tested).
_KEYWORD_FAST = re.compile(
    r"[rtelfd](?<!\w\w)(?:(?<=[rR])(?:isultat[oi]|esults?)|(?<=[tT])(?:otale|iro|otal)|(?<=[eE])sito"
    r"|(?<=[lL])(?:ancio|anci)|(?<=[dD])(?:adi|ado)|(?<=[fF])acce)\b\s*:?", re.IGNORECASE)
_LABEL_PREFIX = re.compile(r"^\s*(?:lancio(?: dadi| del dado| dado)?|dado|dadi|tiro|roll|risultat[oi])\s*[:\-]?\s*",
                           re.IGNORECASE)
_WINDOW = 240
_FB_RUN = re.compile(r"[0-9\s,+(]*")  # the characters _FACES_BEFORE is made of
# After an expression: an arrow, brackets maybe, then an ASCII letter (unless a result keyword starts there):
# a line _read_results reads nothing from (the part after the arrow is prose with no leading number).
_PROSE_AFTER = re.compile(r"[ \t)]*(?:=>|->|→|⇒|=|:)[ \t]*(?:[(\[+,)][ \t]*)*[A-Za-z]")
# The keyworded form on lines of their own: "Risultato: 7" then "Totale: 13" (faces, then the total).
_RIS_TOT = re.compile(r"[ \t:-]*(?:\n[ \t]*)?risultat[oi][ \t]*:?[ \t]*"
                      r"([0-9]{1,4}(?:(?:[ \t]*[,+][ \t]*|[ \t]+)[0-9]{1,4}){0,99})"
                      r"[ \t]*\n[ \t]*totale\b[ \t]*:?[ \t]*(-?[0-9]{1,6})(?![0-9])" + _NOT_A_COUNT, re.IGNORECASE)


_CONNECTIVES = frozenset(("e", "ed", "poi", "e poi", "and", "then", "o", "oppure"))


def _label_before(text: str, start: int, floor: int = 0) -> str:
    """The text before `start` on its line, not reaching back before `floor` (a previous roll's end)."""
    lo = max(floor, start - 500)
    if lo >= start:
        return ""
    line_start = text.rfind("\n", lo, start) + 1
    cut = line_start <= floor  # the line holds the previous roll: only what follows it
    before = text[max(line_start, lo):start]
    if cut:
        before = before.lstrip(" \t,;.")
    prefix = _LABEL_PREFIX.match(before)  # anchored at the start: the one match sub() would remove
    if prefix is not None:
        before = before[prefix.end():]
    label = before.strip(" \t:=->(").strip()
    if cut and label.lower() in _CONNECTIVES:  # "1d12+6 => 7 => 13 e 1d8 => 5 => 5": no label
        return ""
    return label


def _expr_of(n: str, s: str, const: str) -> tuple[str, int, int]:
    """Normalised expression (or as written when beyond the limits), count and constant."""
    written = f"{n}d{s}{const}"
    hit = _EXPR_OF_CACHE.get(written)
    if hit is None:
        if len(_EXPR_OF_CACHE) >= _CACHE_MAX:
            _EXPR_OF_CACHE.clear()
        hit = _EXPR_OF_CACHE[written] = _read_written(written, n)
    return hit


def _read_written(written: str, n: str) -> tuple[str, int, int]:
    try:
        count, sides, constant = parse_expression(written)
        return normalise_expression(count, sides, constant), count, constant
    except DiceExpressionError:
        return _SPACES.sub("", written), int(n) if n else 1, 0


_BRACKET_FACES = re.compile(r"[:=>→\s]{0,6}\[\s*([0-9]{1,4}(?:\s*[,+;]\s*[0-9]{1,4}|\s+[0-9]{1,4}){0,99})\s*\]")
_BRACKET_TOTAL = re.compile(r"(?:\s*[+-]\s*[0-9]{1,5}){0,5}\s*(?:=>|=|→)\s*(-?[0-9]{1,6})" + _NOT_A_COUNT)
_NOT_ARITH = re.compile(r"[^0-9\s+,\-()\[\]]")
_LEAD_NUM = re.compile(r"\s*(-?[0-9]{1,6})" + _NOT_A_COUNT)


_SIMPLE_RESULT = re.compile(r"[=:] ?([0-9]{1,6})((?: \+ [0-9]{1,6})*) = ([0-9]{1,6})")
# "= 13 (7 + 6)": the total first, its breakdown (faces, the constants written again) in parentheses.
_TOTAL_PAREN = re.compile(r"\s*(-?[0-9]{1,6})\s*\(\s*([0-9]{1,6}(?:(?:\s*[+,-]\s*|\s+)[0-9]{1,6}){0,100})\s*\)")
_DIGITS = re.compile(r"[0-9]+")
# The literal heads of _KEYWORD's words (lower case): an ASCII text holding none has no keyword, and the
# literal checks cost far less than the pattern's scan of every position.
_KEYWORD_HEADS = ("risultat", "total", "tiro", "esito", "lanci", "dad", "facce", "result")


def _has_keyword(seg: str) -> bool:
    """`_KEYWORD.search(seg) is not None`, literal checks first."""
    low = seg.lower()
    # The pattern's case folding also reads "ı", "İ" (lowered "i\u0307") as i and "ſ" as s.
    if seg.isascii() or ("\u0131" not in low and "\u017f" not in low and "\u0307" not in low):
        for k in _KEYWORD_HEADS:
            if k in low:
                break
        else:
            return False
    return _KEYWORD_FAST.search(seg) is not None


def _drop_constants(faces: list[int], count: int, constant: int, const_text: str) -> list[int]:
    """The faces without the expression's constants written again after them ("7 + 6", "7 + 6 + 2 - 1")."""
    if constant and len(faces) == count + 1 and abs(faces[-1]) == abs(constant):
        return faces[:-1]
    if len(faces) > count + 1 and const_text:
        # `1d12 +6 +2 -1 = 7 + 6 + 2 - 1 = 14`: each written term again, in order (signs are the text's).
        terms = [int(x) for x in _DIGITS.findall(const_text)]
        if len(faces) == count + len(terms) and [abs(f) for f in faces[count:]] == terms:
            return faces[:count]
    return faces


def _blank(k: re.Match[str]) -> str:
    return " " * len(k.group(0))


def _read_results(segment: str, count: int, constant: int,
                  const_text: str = "") -> tuple[tuple[int, ...] | None, int | None, bool, int]:
    """Faces, total, whether a rendered form was seen, and how many chars of `segment` were read.

    `const_text` is the expression's constant part as written (" +6 +2 -1"), to recognise its terms
    written again after the faces."""
    seg = segment.lstrip(" \t)")
    skipped = len(segment) - len(seg)
    bracket = _BRACKET_FACES.match(seg) if "[" in seg else None
    if bracket:
        faces = tuple(int(x) for x in _NUM.findall(bracket.group(1)))
        tot = _BRACKET_TOTAL.match(seg, bracket.end())
        if tot:
            return faces, int(tot.group(1)), True, skipped + tot.end()
        return faces, None, True, skipped + bracket.end()
    # The phpBB roller's ": 7 + 6 = 13" (single spaces, no letters): what the general reading below
    # gives, read by one pattern: faces, the constant dropped when it repeats, the total.
    simple = _SIMPLE_RESULT.fullmatch(seg) if bracket is None else None
    if simple is not None:
        first, more, tot = simple.groups()
        faces = [int(first)]
        if more:
            faces.extend(int(x) for x in more[3:].split(" + "))
        faces = _drop_constants(faces, count, constant, const_text)
        return (tuple(faces) if faces else None), int(tot), True, skipped + len(seg)
    # Segments separated by arrows / "=": "=> 7 => 13", "= 7 + 6 = 13", ": 7 + 6 = 13".
    if not seg or (seg[0] not in "=:-→⇒" and not _KEYWORD_FAST.match(seg)):
        return None, None, False, 0
    keyworded = _has_keyword(seg)
    work = _KEYWORD_FAST.sub(_blank, seg) if keyworded else seg
    run: list[list[str]] = []
    read = 0
    pos = 0
    # Lazily: the reading stops at the first prose part, so a long line costs what is read of it.
    arrows = _ARROW.finditer(work)
    while True:
        sep = next(arrows, None)
        part_end = sep.start() if sep else len(work)
        part = work[pos:part_end]
        if part.strip():
            paren = _TOTAL_PAREN.match(part) if "(" in part else None
            if paren is not None:  # "= 13 (7 + 6)": the total, then its breakdown
                read = pos + paren.end()
                if not run:
                    faces = _drop_constants([int(x) for x in _NUM.findall(paren.group(2))], count, constant,
                                            const_text)
                    return tuple([abs(f) for f in faces]), int(paren.group(1)), True, skipped + read
                run.append([paren.group(1)])
                break
            nums = _NUM.findall(part)
            if not nums or _NOT_ARITH.search(part):
                lead = _LEAD_NUM.match(part)
                if lead:  # "= 13 Danni": the number leading a prose part is still the total
                    run.append([lead.group(1)])
                    read = pos + lead.end()
                break
            run.append(nums)
            read = part_end
        if sep is None:
            break
        pos = sep.end()
    if not run:
        return None, None, False, 0
    total = int(run[-1][-1])
    if len(run) == 1:
        if len(run[0]) == 1:
            return None, total, keyworded, skipped + read  # "1d12+6 = 13": only a total
        faces_nums = run[0][:-1]
    else:
        faces_nums = [n for part in run[:-1] for n in part]
    faces = _drop_constants([int(x) for x in faces_nums], count, constant, const_text)
    faces = [abs(f) for f in faces]
    return (tuple(faces) if faces else None), total, True, skipped + read


def _dice_tags(text: str) -> list[tuple[int, int, str, str]]:
    """`[dice=EXPR]label[/dice]` spans, paired open→next close (linear: both lists walked once)."""
    if "[" not in text:
        return []
    opens = list(_DICE_OPEN.finditer(text))
    if not opens:
        return []
    closes = [c.start() for c in _DICE_CLOSE.finditer(text)]
    tags: list[tuple[int, int, str, str]] = []
    ci = 0
    last_end = 0
    for o in opens:
        if o.start() < last_end:
            continue
        while ci < len(closes) and closes[ci] < o.end():
            ci += 1
        if ci == len(closes):
            break
        close = closes[ci]
        if close - o.end() > _MAX_TAG_LABEL:
            continue
        tags.append((o.start(), close + len("[/dice]"), o.group(1).strip(), text[o.end():close]))
        last_end = close + len("[/dice]")
    return tags


# A rendered or typed result is introduced by one of these; lines without them (and not followed by a line
# with them) hold no roll, so the expression scan skips them: prose costs a few substring checks.
_ANCHORS = ("=", "[", "isultat", "ISULTAT", "otale", "OTALE", "→", "⇒", "->")


def _has_anchor(line: str) -> bool:
    for a in _ANCHORS:
        if a in line:
            return True
    return False


_DSTART = re.compile(r"[dD]\s?[0-9]")
# No "d<digit>" and no "[dice": no roll (U+200B counts as the space it becomes before the scan). One
# pattern per letter: a literal first character makes the scan several times faster than "[dD]".
_GATE_D = (re.compile(r"d[\s\u200b]?[0-9]"), re.compile(r"D[\s\u200b]?[0-9]"))
_GATE_TAG = re.compile(r"\[dice", re.IGNORECASE)


def _may_roll(text: str) -> bool:
    return (_GATE_D[0].search(text) is not None or _GATE_D[1].search(text) is not None
            or ("[" in text and _GATE_TAG.search(text) is not None))
_TWO_LINE = ("isultat", "ISULTAT", "otale", "OTALE")


_DSTART_LOW = re.compile(r"d\s?[0-9]")
_DSTART_UP = re.compile(r"D\s?[0-9]")


def _dstarts(text: str) -> list[re.Match[str]]:
    """_DSTART.finditer(text) as a list, from two literal-led scans (faster): the matches of the two cannot
    overlap (a match's tail is spaces and a digit), so their union in order is _DSTART's."""
    low = list(_DSTART_LOW.finditer(text))
    if "D" not in text:
        return low
    up = list(_DSTART_UP.finditer(text))
    if not up:
        return low
    if not low:
        return up
    return sorted(low + up, key=_match_start)


# After an expression's own constants: more terms of which one is a die ("1d20+1d6+3", "2d6 + 1d4"). A
# compound roll is one roll of the whole expression (flagged unparsable by make_roll), never its tail alone.
_COMPOUND_REST = re.compile(r"(?:\s*[+-]\s*[0-9]{1,5}(?![\w.]))*\s*[+-]\s*[0-9]{0,3}\s?[dD]\s?[0-9]{1,4}(?![\w])"
                            r"(?:\s*[+-]\s*(?:[0-9]{0,3}\s?[dD]\s?[0-9]{1,4}(?![\w])|[0-9]{1,5}(?![\w.])))*")
_COMPOUND_TERM = re.compile(r"([+-]?)\s*([0-9]{0,3})\s?([dD]\s?[0-9]{1,4})?")


def compound_roll(text: str, start: int, me: int) -> tuple[int, str, tuple[int, ...] | None, int | None, bool] | None:
    """For an expression at text[start:me] that goes on with another die: (end, expression as written, faces,
    total, rendered), the end being the compound's end when it has no result (nothing read, no tail re-read);
    None when the expression is no compound."""
    if me >= len(text) or text[me] not in " +-\t" or "d" not in text[me:me + 12].lower():
        return None
    c = _COMPOUND_REST.match(text, me)
    if c is None:
        return None
    written = "".join(text[start:c.end()].split())
    count = constant = 0
    consts: list[str] = []
    for sign, num, die in _COMPOUND_TERM.findall(written):
        if die:
            count += int(num or 1)
        elif num:
            constant += -int(num) if sign == "-" else int(num)
            consts.append(f"{sign or '+'}{num}")
    end_window = min(len(text), c.end() + _WINDOW)
    line = text[c.end():end_window].split("\n", 1)[0]
    faces, total, rendered, used = _read_results(line, min(count, MAX_COUNT), constant, " ".join(consts))
    if total is None:
        return c.end(), written, None, None, False
    return c.end() + used, written, faces, total, rendered


def _match_start(m: re.Match[str]) -> int:
    return m.start()


def _candidate_exprs(text: str) -> Iterable[re.Match[str]]:
    """`_EXPR` matches on lines that have a result anchor, or whose next line opens with a result keyword."""
    # Scan the whole text for "d<digit>" (a fast charset scan); only the lines holding one are looked at.
    # A match running over a line end ("d\n5") is one no line holds: skipped (it hides no other match).
    n = len(text)
    end = -1  # end of the line of the last match looked at
    ok = False
    offset = 0
    for d in _dstarts(text):
        p = d.start()
        if p > end:
            offset = text.rfind("\n", 0, p) + 1
            end = text.find("\n", p)
            if end < 0:
                end = n
            ok = end - offset > 3 and _has_anchor(text[offset:end])
            if not ok and end < n and end - offset > 3:
                nxt = text[end + 1:end + 41]
                cut = nxt.find("\n")
                ok = any(k in (nxt if cut < 0 else nxt[:cut]) for k in _TWO_LINE)
        if not ok or d.end() > end:
            continue
        # Read the whole expression from its count.
        i0 = p - 1 if p - 1 >= offset and text[p - 1] == " " else p
        j = i0
        while j > offset and i0 - j < 3 and text[j - 1].isdigit():
            j -= 1
        m = _EXPR.match(text, j if j < i0 else p, end) or (_EXPR.match(text, p, end) if j < i0 else None)
        if m:
            yield m


def find_text_rolls(text: str) -> list[TextRoll]:
    """Rolls written in a post's text, in order. Never raises; linear in the text length.

    kind "typed": an unrendered `[dice=1d12+6]label[/dice]` tag, or a bare `1d12+6 = 13` with no faces.
    kind "rendered": `1d12+6 => 7 => 13`, `1d12+6 = 7 + 6 = 13`, `1d24+6: [17] + 6 = 23`,
    `Risultato: 7 (1d12) +6 = 13`, `Dado: 1d12+6` followed by `Risultato: 7 + 6 = 13` on the same or the
    next line, or by `Risultato: 7` and `Totale: 13` lines, `1d12+6 = 13 (7 + 6)` (docs/history-format.md).
    The label is the text before the expression on its line, after the previous roll; an expression with
    no result after it is not a roll and is skipped.
    """
    if not isinstance(text, str) or not _has_anchor(text) or not _may_roll(text):
        return []
    # Zero-width spaces are dropped, so offsets would shift: keep them as spaces for the spans.
    text = unify_signs(text.replace("\u200b", " ")) if not text.isascii() else text
    found: list[TextRoll] = []
    for start, end, expr_raw, label in _dice_tags(text):
        try:
            expr = normalise_expression(*parse_expression(expr_raw))
        except DiceExpressionError:
            expr = expr_raw
        found.append(TextRoll(start, end, expr, None, None, clean_markup(label), "typed"))
    tag_i = 0
    last_end = 0
    n = len(text)
    passed_end = 0  # the latest end of the rolls in found[:tag_i] (tags, then text rolls: not in order)
    for m in _candidate_exprs(text):
        ms = m.start()
        if ms < last_end:
            continue
        while tag_i < len(found) and found[tag_i].end <= ms:
            if found[tag_i].end > passed_end:
                passed_end = found[tag_i].end
            tag_i += 1
        if tag_i < len(found) and found[tag_i].start <= ms:
            continue  # inside a [dice] tag
        me = m.end()
        # Faces-first form: "7 (1d12) +6 = 13".
        fb = _faces_before(text, ms) if ms and "(" in text[ms - 4 if ms >= 4 else 0:ms] else None
        if fb and _SIDES_END.search(text, fb.start() - 2 if fb.start() >= 2 else 0, fb.start()):
            fb = None  # "1d6 (1d12) +6 = 13": the "6" is the sides of the expression before, not a face
        if fb:
            after = _AFTER_PAREN.match(text, me)
            if after:
                expr, count, constant = _expr_of(m.group(1), m.group(2), m.group(3) + after.group(1))
                faces = tuple(int(x) for x in _NUM.findall(fb.group(1)))
                found.append(TextRoll(fb.start(), after.end(), expr, faces, int(after.group(2)),
                                        _label_before(text, fb.start(), max(last_end, passed_end)),
                                        "rendered"))
                last_end = after.end()
                continue
        comp = compound_roll(text, ms, me) if me < n and text[me] in " +-\t" else None
        if comp is not None:
            end, written, faces, total, rendered = comp
            if total is not None:
                found.append(TextRoll(ms, end, written, faces, total,
                                        _label_before(text, ms, max(last_end, passed_end)),
                                        "rendered" if rendered or faces is not None else "typed"))
            last_end = end
            continue
        # Results sit after the expression, on the same line or (ForumFree-ish "Dado: …\nRisultato: …") next.
        end_window = me + _WINDOW if me + _WINDOW < n else n
        prose = _PROSE_AFTER.match(text, me, end_window)
        if prose is not None and _KEYWORD_FAST.match(text, prose.end() - 1, end_window) is None:
            # "d1=d1=…": an arrow then a word that is no keyword: _read_results would read nothing on this line.
            first_nl = text.find("\n", me, end_window)
            if first_nl < 0:
                continue
            first_nl -= me
            faces, total, rendered, used = None, None, False, 0
            window = text[me:end_window]
            expr, count, constant = _expr_of(m.group(1), m.group(2), m.group(3))
        else:
            window = text[me:end_window]
            first_nl = window.find("\n")
            line = window if first_nl < 0 else window[:first_nl]
            expr, count, constant = _expr_of(m.group(1), m.group(2), m.group(3))
            faces, total, rendered, used = _read_results(line, count, constant, m.group(3))
        consumed = used
        if total is None and first_nl >= 0:
            rest = window[first_nl + 1:]
            nl2 = rest.find("\n")
            nxt_line = rest if nl2 < 0 else rest[:nl2]
            stripped = nxt_line.lstrip()
            if _KEYWORD_FAST.match(stripped) and not _QUICK.search(stripped):
                faces2, total, rendered, used = _read_results(stripped, count, constant, m.group(3))
                if faces is None:
                    faces = faces2
                consumed = first_nl + 1 + (len(nxt_line) - len(stripped)) + used
        if total is None:
            continue
        if first_nl >= 0:
            # "Dado: 1d12+6" / "Risultato: 7" / "Totale: 13": the "Risultato" numbers are the faces, not the total.
            rt = _RIS_TOT.match(text, me, end_window)
            if rt is not None:
                faces = tuple(_drop_constants([int(x) for x in _NUM.findall(rt.group(1))], count, constant,
                                              m.group(3)))
                total = int(rt.group(2))
                consumed = rt.end() - me
        end = me + consumed
        found.append(TextRoll(ms, end, expr, faces, total, _label_before(text, ms, max(last_end, passed_end)),
                                "rendered" if rendered or faces is not None else "typed"))
        last_end = end
    if len(found) > 1:
        found.sort(key=_start_of)
    return found


def _faces_before(text: str, p: int) -> re.Match[str] | None:
    """`_FACES_BEFORE.search(text, max(0, p - 120), p)`, searched only where it can match: after the last
    character before `p` that the pattern cannot hold (0-9, \\s, ",", "+", "(")."""
    lo = max(0, p - 120)
    tail = text[p - 5 if p >= 5 else 0:p]
    head = tail.rstrip()
    spaces = len(tail) - len(head)
    # The pattern ends in "(", at most 3 spaces and "$" (which also matches before a last "\n").
    if not head.endswith("(") or spaces > 4 or (spaces == 4 and tail[-1] != "\n"):
        return None
    run = _FB_RUN.match(text[lo:p][::-1])
    return _FACES_BEFORE.search(text, p - run.end(), p)  # type: ignore[union-attr]


def _start_of(r: TextRoll) -> int:
    return r.start


__all__ = [
    "MAX_COUNT", "MAX_SIDES", "MAX_CONSTANT", "parse_expression", "normalise_expression", "parse_label",
    "parse_modifiers", "clean_markup", "make_roll", "TextRoll", "find_text_rolls",
]
