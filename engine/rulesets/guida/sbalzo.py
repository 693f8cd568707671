"""Sbalzo e Reazione of `guida`: Distanza Massima di Sbalzo, Valore di Sbalzo, Reazione.

API:
- `modificatore(categoria) -> Fraction` (D 1, C 1.5, B 2, A 3, S 4).
- `dms(dado, bonus_potenziale, bonus_statistica, forza_avversario, categoria, *, da_difesa=False) -> Calc`:
  (Dado + Bonus Pot. + Bonus Stat. − Forza Avv.) × Mod; the die is halved for Difese; never below 0.
- `valore_sbalzo(dado, bonus_statistica, categoria, *, da_difesa=False) -> Calc`: Dado + Mod + Bonus Stat.
  (exact: with C the modifier is 1.5 and is not rounded).
- `valore_reazione(dado, destrezza_totale, modificatori=0) -> Calc`: 1d12 + Livello Totale Destrezza.
- `puo_reagire(difesa, riuscita) -> bool`: only after Difesa Nulla or a Protezione riuscita.
- `reazione(valore_reazione, valore_sbalzo, distanza) -> ReazioneResult`: success when it equals or beats the
  Sbalzo: no Danni Ambientali and half the distance; failure: no Fase Offensiva.
- `colpire_sbalzo(dichiarato, effetto=False) -> int`: −2 to the attack for a declared Sbalzo, 0 when the
  Sbalzo is an effect of the attack or defence.
Bonus Potenziale and Bonus Statistica are the "Regolamento Tecniche"'s: the caller takes them from the registry.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from .messages import cifra
from .tables import (
    REAZIONE_DADO, REAZIONE_DOPO, RULE_REAZIONE, RULE_SBALZO, SBALZO_DICHIARATO_COLPIRE, SBALZO_MODIFICATORE, BadValue,
    category,
)


@dataclass(frozen=True)
class Calc:
    value: Fraction  # exact (Sbalzo modifiers include 1.5)
    steps: tuple[str, ...]
    rule: str = RULE_SBALZO

    @property
    def floor(self) -> int:
        return math.floor(self.value)


def _die(dado: int) -> int:
    if not isinstance(dado, int) or isinstance(dado, bool) or dado < 1:
        raise BadValue(f"Fattore di Casualità non valido: {dado!r}")
    return dado


def modificatore(categoria: str) -> Fraction:
    return SBALZO_MODIFICATORE[category(categoria)]


def _fattore_casualita(dado: int, da_difesa: bool) -> tuple[int, list[str]]:
    """The die as the formulas use it: halved for a Sbalzo caused by a Defence."""
    d = _die(dado)
    if not da_difesa:
        return d, []
    return d // 2, [f"Sbalzo da Difesa: Fattore di Casualità dimezzato {d} → {d // 2}"]


def dms(dado: int, bonus_potenziale: int, bonus_statistica: int, forza_avversario: int, categoria: str, *,
        da_difesa: bool = False) -> Calc:
    """Distanza Massima di Sbalzo = (Dado + Bonus Pot. + Bonus Stat. − Forza Avv.) × Modificatore."""
    d, steps = _fattore_casualita(dado, da_difesa)
    mod = modificatore(categoria)
    base = d + bonus_potenziale + bonus_statistica - forza_avversario
    value = Fraction(base) * mod
    steps.append(f"DMS: (Dado {d} + Bonus Pot. {bonus_potenziale} + Bonus Stat. {bonus_statistica} − Forza Avv. "
                 f"{forza_avversario}) × {cifra(mod)} [{category(categoria)}] = {cifra(value)}")
    if value < 0:
        steps.append("nessuno Sbalzo (distanza non negativa)")
        value = Fraction(0)
    return Calc(value, tuple(steps))


def valore_sbalzo(dado: int, bonus_statistica: int, categoria: str, *, da_difesa: bool = False) -> Calc:
    """Valore di Sbalzo = Dado + Modificatore + Bonus Stat."""
    d, steps = _fattore_casualita(dado, da_difesa)
    mod = modificatore(categoria)
    value = d + mod + bonus_statistica
    steps.append(f"Valore di Sbalzo: Dado {d} + Modificatore {cifra(mod)} [{category(categoria)}] + "
                 f"Bonus Stat. {bonus_statistica} = {cifra(value)}")
    return Calc(value, tuple(steps))


def valore_reazione(dado: int, destrezza_totale: int, modificatori: int = 0) -> Calc:
    """Valore di Reazione = Dado (1d12) + Livello Totale Destrezza (+ other modifiers of the roll)."""
    d = _die(dado)
    if d > REAZIONE_DADO:
        raise BadValue(f"la Reazione usa 1d{REAZIONE_DADO}: dado {d}")
    value = d + destrezza_totale + modificatori
    extra = f" + modificatori {modificatori}" if modificatori else ""
    return Calc(Fraction(value), (f"Reazione: Dado {d} + Destrezza {destrezza_totale}{extra} = {value}",), RULE_REAZIONE)


def puo_reagire(difesa: str | None, riuscita: bool = True) -> bool:
    """"Si può tentare una Reazione solo con Difesa Nulla o Protezione riuscita"."""
    if difesa == "Difesa Nulla":
        return True
    return difesa == "Protezione" and riuscita


@dataclass(frozen=True)
class ReazioneResult:
    success: bool
    danni_ambientali: bool  # still taken
    distanza: Fraction  # the Sbalzo distance after the Reazione
    fase_offensiva: bool  # False when the Reazione failed
    steps: tuple[str, ...]
    rule: str = RULE_REAZIONE


def reazione(valore_reazione: Fraction | int, valore_sbalzo: Fraction | int, distanza: Fraction | int) -> ReazioneResult:
    """Outcome of a Reazione against a Sbalzo of `distanza` (metres)."""
    r, s, dist = Fraction(valore_reazione), Fraction(valore_sbalzo), Fraction(distanza)
    if r >= s:
        half = dist / 2
        return ReazioneResult(True, False, half, True, (
            f"Reazione {cifra(r)} ≥ Sbalzo {cifra(s)}: nessun Danno Ambientale, distanza dimezzata {cifra(dist)} → {cifra(half)}",))
    return ReazioneResult(False, True, dist, False, (
        f"Reazione {cifra(r)} < Sbalzo {cifra(s)}: Reazione fallita, niente Fase Offensiva",))


def colpire_sbalzo(dichiarato: bool, effetto: bool = False) -> int:
    """Probabilità di Colpire for the attack: −2 when the Sbalzo is declared, unless it is an effect."""
    return SBALZO_DICHIARATO_COLPIRE if dichiarato and not effetto else 0


REAZIONE_AMMESSA_DOPO = REAZIONE_DOPO
