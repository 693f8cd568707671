"""Tiro del Potere: a roll's esito (Fallimento, Successo, Successo Critico) and margine, as stated or as rolled."""
from __future__ import annotations

import re

from ...history import describe_problems
from .._shared import face_of
from . import tables as T
from .state import State
from .turno import Item, Turno

# Codes spelled out whole, so that every code the ruleset emits can be found in its source (tests/test_docs.py).
POWER_OUTCOME = {"fallimento": "outcome.power_failure", "critico": "outcome.power_critical",
                 "successo": "outcome.power_success"}

_MARGIN = re.compile(r"(?i)margine\s*[:=]?\s*([+\-−]?\s*\d+)")
_CRIT = re.compile(r"(?i)\b(?:successo\s+)?critico\b")
_FAIL = re.compile(r"(?i)\b(?:fallimento|fallit[oa]|fallisce)\b")
_SUCC = re.compile(r"(?i)\b(?:successo|riuscit[oa]|riesce)\b")


def against(face: int | None, value: int | None, margin: int | None = None, extra: str | None = None) -> str:
    """" (tiro 25 contro il valore 55, margine +30)": what the outcome of a Power's roll was read from."""
    parts = [f"tiro {face} contro il valore {value}"] if face is not None and value is not None else []
    parts += [f"margine {margin:+d}"] if margin is not None else []
    parts += [extra] if extra else []
    return f" ({', '.join(parts)})" if parts else ""


def _signed(text: str) -> int:
    t = text.replace(" ", "").replace("−", "-")
    return int(t)


def outcome(state: State, turn: Turno, it: Item, value: int | None, rule: str,
            what: str) -> tuple[str | None, int | None, str | None]:
    """(esito, margine, assumption): the post's own statement first, else the roll system."""
    text = f"{it.label.rest} {it.line}"
    stated_margin = _MARGIN.search(text)
    stated = None
    if _CRIT.search(text):
        stated = "critico"
    elif _FAIL.search(text):
        stated = "fallimento"
    elif _SUCC.search(text) or stated_margin:
        stated = "successo"
    margin = _signed(stated_margin.group(1)) if stated_margin else None
    computed = cmargin = None
    face = face_of(it.roll)
    if state.settings["roll_system"] == "d100_sotto" and value is not None and face is not None:
        if (it.roll.count, it.roll.sides) != (1, T.POWER_DIE):
            turn.add("dice.wrong_die", f"Con il sistema di tiro in uso {what} si tira con 1d100.",
                     rule, roll=it.index, expected="1d100", found=f"{it.roll.count}d{it.roll.sides}",
                     assumption="roll_system")
        else:
            cmargin = value - face
            computed = ("critico" if face <= min(state.settings["critical_max"], value) else
                        "successo" if face <= value else "fallimento")
    if not it.roll.authentic:
        turn.add("dice.not_authentic", "Il tiro non è autentico (scritto a mano o incoerente).",
                 rule, roll=it.index, expected="tiro del forum",
                 found=describe_problems(it.roll.problems) or it.roll.source)
    if stated is not None:
        if computed is not None and (stated != computed or (margin is not None and margin != cmargin)):
            turn.add("poteri.margin_mismatch",
                     f"{what}: il post dichiara {stated}"
                     + (f" con margine {margin:+d}" if margin is not None else "")
                     + f", il dado {face} su valore {value} dà {computed} con margine {cmargin:+d}. "
                     "Vale quanto scritto nel post; il master verifichi.", rule, roll=it.index,
                     expected={"esito": computed, "margine": cmargin}, found={"esito": stated, "margine": margin},
                     assumption="roll_system")
        return stated, margin if margin is not None else cmargin if stated == computed else margin, None
    if computed is not None:
        return computed, cmargin, "roll_system"
    return None, None, None
