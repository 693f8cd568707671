"""Ripetizioni di Tiro e Tirare Due Volte: the post's rolls grouped with their rerolls, and the d20 face that counts."""
from __future__ import annotations

from .._shared import face_of, fold
from . import tables as T
from .state import State
from .turno import Group, Turno, check_d20, items


def group_rolls(state: State, turn: Turno) -> State:
    """The post's rolls into groups: an attack or save with its rerolls (right after it) and its damage rolls."""
    groups: list[Group] = []
    for it in items(turn.post):
        cur = groups[-1] if groups else None
        if it.kind in ("reroll", "twice"):
            if cur is None or cur.head.kind not in ("attack", "save") or cur.damage:
                turn.add("starfinder.reroll_late",
                         "Una ripetizione o un secondo tiro va fatto subito dopo il tiro a cui si riferisce, "
                         "nello stesso post, prima dell'esito e di qualsiasi altra capacità.",
                         T.R_REROLL, roll=it.index, expected="subito dopo il tiro originale",
                         found="nessun tiro d20 da ripetere prima")
                continue
            cur.extra.append(it)
        elif it.kind == "damage" and cur is not None and cur.head.kind == "attack":
            cur.damage.append(it)
        elif it.kind == "other":
            continue
        else:
            groups.append(Group(it))
    turn.groups = groups
    return state


def better(g: Group, turn: Turno, rule: str) -> tuple[int | None, int, list[int]]:
    """The d20 face that counts after rerolls / roll-twice: (face, index of the roll used, all faces)."""
    head = g.head
    face = face_of(head.roll)
    used = head.index
    faces = [face] if face is not None else []
    best = [i for i in g.extra if i.kind == "twice" and "peggior" not in fold(i.label.raw)]
    worst = [i for i in g.extra if i.kind == "twice" and "peggior" in fold(i.label.raw)]
    rerolls = [i for i in g.extra if i.kind == "reroll"]
    cancelled = bool(best) and bool(worst)
    if cancelled:
        turn.add("starfinder.roll_twice_cancelled",
                 "Tirare due volte (migliore) e (peggiore) si annullano: conta un solo tiro, il primo, "
                 "che non può essere ripetuto.", rule + " / " + T.R_REROLL, roll=head.index,
                 expected="un solo tiro", found=f"{1 + len(best) + len(worst)} tiri")
        for extra in rerolls:
            turn.add("starfinder.reroll_limit",
                     "Quando tirare due volte e farlo tirare due volte si annullano, il tiro non può "
                     "beneficiare di ripetizioni.", T.R_REROLL, roll=extra.index, expected=0, found=len(rerolls))
        return face, used, faces
    applied = 0
    for extra in g.extra:
        if not check_d20(extra, turn, T.R_REROLL):
            continue
        f2 = face_of(extra.roll)
        applied += 1
        if applied > 1:
            turn.add("starfinder.reroll_limit",
                     "Si può applicare una sola capacità di ripetizione o di tirare due volte allo stesso tiro.",
                     T.R_REROLL, roll=extra.index, expected=1, found=applied)
            continue
        if f2 is None or face is None:
            continue
        faces.append(f2)
        worse = extra.kind == "twice" and "peggior" in fold(extra.label.raw)
        if (f2 < face) if worse else (f2 > face):
            face, used = f2, extra.index
        if extra.kind == "reroll" and f2 <= face and used == head.index:
            turn.add("starfinder.reroll_worse",
                     f"La ripetizione ({f2}) non è migliore del tiro originale ({face}): vale l'originale.",
                     T.R_REROLL, roll=extra.index, expected=face, found=f2)
    return face, used, faces
