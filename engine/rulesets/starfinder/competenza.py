"""Competenza nelle Armi, Competenza nelle Armature, Armature Potenziate: who is proficient, what it costs."""
from __future__ import annotations

from ...history import Character, Technique
from .._shared import as_list, fold


def proficient(c: Character | None, w: Technique | None) -> bool | None:
    """Whether the character is proficient with the weapon (None when the registry does not say)."""
    if c is None or w is None:
        return None
    if w.extra.get("naturale"):
        return True  # "Tutti i personaggi sono competenti con le proprie armi naturali"
    profs = c.extra.get("competenze")
    if profs is None:
        return None
    names = {fold(str(p)) for p in as_list(profs)}
    return fold(w.name) in names or fold(str(w.extra.get("categoria", ""))) in names


def armour_penalty(c: Character | None) -> tuple[int, tuple[str, ...]]:
    """A non-proficient armour's CA penalty and, for a powered one, the conditions it brings."""
    arm = (c.extra.get("armatura") if c else None) or {}  # {competente = false, potenziata = true}
    if not isinstance(arm, dict) or arm.get("competente", True):
        return 0, ()
    if arm.get("potenziata"):
        return -4, ("Impreparato", "Deconcentrato", "Velocità dimezzata")
    return -4, ()
