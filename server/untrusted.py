"""Documents from strangers (request bodies, history files): nesting depth refused before parsing, no lone surrogate."""
from __future__ import annotations

import json
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

# Deepest nesting of arrays/objects read (docs/service.md "Limits"). An arbitro.history/1 or audit document is
# 8 deep; Python's parsers and everything after them recurse once per level, so 100,000 levels would be a
# RecursionError deep in some library, not a refusal.
MAX_DEPTH = 64

# What is not nesting: JSON strings (TOML's basic and literal strings too), TOML comments. An unterminated string
# runs to the end (the optional closing quote keeps the scan linear: no retry from every later quote).
_NOT_NESTING = re.compile(r'"(?:[^"\\]+|\\.)*"?|\'[^\']*\'?|#[^\n]*', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile("[\ud800-\udfff]")


class Refused(ValueError):
    """A document that is not read: `.code` (bad_json, too_deep, bad_unicode), an Italian message, `.details`."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}


def nesting_depth(text: str) -> int:
    """How deep `[`/`{` nest in JSON or TOML text, brackets inside strings and comments not counted. Exact for
    valid JSON; for invalid text it may count more than a parser would reach before it stops (never less)."""
    brackets = _NOT_BRACKET.sub("", _NOT_NESTING.sub("", text))
    if len(brackets) <= 1:
        return len(brackets)
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets))))


def check_depth(text: str, max_depth: int = MAX_DEPTH) -> None:
    """Refused(too_deep) when `text` nests deeper than `max_depth`."""
    depth = nesting_depth(text)
    if depth > max_depth:
        raise Refused("too_deep", f"documento annidato troppo in profondità ({depth} livelli, al massimo {max_depth})",
                      {"max_depth": max_depth, "depth": depth})


def surrogate_at(value: Any, path: str = "") -> str | None:
    """Where the first string with a lone UTF-16 surrogate is in a parsed JSON value (`pages[0]`, `history.thread`),
    or None. Such a string cannot be written as UTF-8: not to a page, not to the database."""
    if isinstance(value, str):
        return (path or "$") if not value.isascii() and _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if not key.isascii() and _SURROGATE.search(key):
                return _printable(here)
            found = surrogate_at(item, here)
            if found:
                return _printable(found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = surrogate_at(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _printable(path: str) -> str:
    return _SURROGATE.sub("\ufffd", path)


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (RFC 8259): accepted, they would come back out as invalid JSON
    raise Refused("bad_json", f"JSON non valido: {name} non è un numero JSON")


def loads(data: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """JSON text or UTF-8 bytes → the value; Refused when it is not JSON, nests deeper than `max_depth` (checked
    before parsing) or holds a lone surrogate."""
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise Refused("bad_json", f"il documento non è testo UTF-8 (byte {exc.start})",
                          {"position": exc.start}) from None
    else:
        text = data
    check_depth(text, max_depth)
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise Refused("bad_json", f"JSON non valido: riga {exc.lineno}, colonna {exc.colno}",
                      {"line": exc.lineno, "column": exc.colno}) from None
    except Refused:
        raise
    except ValueError:  # a number of more than 4,300 digits (Python's int limit)
        raise Refused("bad_json", "JSON non valido: un numero ha troppe cifre") from None
    except RecursionError:  # pragma: no cover - the depth check comes first; kept as the last guard
        raise Refused("too_deep", "documento annidato troppo in profondità", {"max_depth": max_depth}) from None
    where = surrogate_at(value)
    if where:
        raise Refused("bad_unicode", f"testo non valido in {where}: un surrogato UTF-16 isolato (\\ud800–\\udfff) "
                                     "non è un carattere", {"field": where})
    return value




def check_toml_file(path: str | Path, option: str, max_bytes: int) -> None:
    """Refused when a TOML file a command reads (`--registry`, `--forum-config`) is larger than `max_bytes` or
    nests deeper than MAX_DEPTH (tomllib recurses once per level: checked before it parses). A missing file is
    left to the command's own message."""
    p = Path(path)
    if not p.is_file():
        return
    with p.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Refused("too_large", f"{option} {p}: il file supera il limite di {max_bytes} byte", {"max_bytes": max_bytes})
    try:
        check_depth(data.decode("utf-8", "replace"))
    except Refused as exc:
        raise Refused(exc.code, f"{option} {p}: {exc.message}", exc.details) from None


__all__ = ["MAX_DEPTH", "Refused", "nesting_depth", "check_depth", "surrogate_at", "loads", "check_toml_file"]
