"""Percezione e Mimetizzazione of `guida`: Concentrazione, detection of Nascosti, Attacco alla Cieca.

API:
- `Concentrazione(bonus=0)`: per (perceiver, target); `tentativo_percezione(c, *, mimetizzato) -> (bonus_usato,
  Concentrazione)`: 0 on the first attempt, +2 for each later one, no growth without a Mimetizzato target;
  `turno_senza_mimetizzazione(c)`: −2 (not below 0) for every turn the target is not Mimetizzato.
- `valore_percezione(dado, bonus_statistica, concentrazione) -> Calc`, `valore_mimetizzazione(dado, bonus_statistica)`
  (also Mascheramento; without Mimetizzazione the value is 0: `NESSUNA_MIMETIZZAZIONE`).
- `individua(percezione, mimetizzazione) -> bool`: found unless Mimetizzazione exceeds Percezione.
- `tipo_attacco_multiplo(colpi) -> "mirato" | "area" | "area_totale"` (`OutOfTable` for 6-19, 101-999 colpi).
- `attacco_alla_cieca(raggio_area_m, dado, tipo, *, colpi=None, oltre_raggio_massimo=False) -> CiecaResult`:
  automatic failure by the text's table (Attacchi ad Area Totale never fail automatically within range).
The Bonus Statistica of both is the "Regolamento Tecniche"'s: the caller takes it from the registry.
"""
from __future__ import annotations

from dataclasses import dataclass

from .tables import (
    CIECA_BANDE, CIECA_FALLIMENTO, CONCENTRAZIONE_PASSO, MIMETIZZAZIONE_DADO, MULTIPLI_COME, PERCEZIONE_DADO, RULE_CIECA,
    RULE_MIMETIZZAZIONE, RULE_PERCEZIONE, BadValue, OutOfTable,
)

NESSUNA_MIMETIZZAZIONE = 0


@dataclass(frozen=True)
class Calc:
    value: int
    steps: tuple[str, ...]
    rule: str = RULE_PERCEZIONE


@dataclass(frozen=True)
class Concentrazione:
    bonus: int = 0  # Bonus Concentrazione of the next attempt


def tentativo_percezione(c: Concentrazione, *, mimetizzato: bool) -> tuple[int, Concentrazione]:
    """A Tentativo di Percezione of one target: the bonus it uses, and the Concentrazione after it."""
    used = c.bonus
    return used, (Concentrazione(c.bonus + CONCENTRAZIONE_PASSO) if mimetizzato else c)


def turno_senza_mimetizzazione(c: Concentrazione) -> Concentrazione:
    """A turn in which the target is not Mimetizzato: Concentrazione −2, never below 0 (it starts at 0)."""
    return Concentrazione(max(c.bonus - CONCENTRAZIONE_PASSO, 0))


def _die(dado: int, sides: int) -> int:
    if not isinstance(dado, int) or isinstance(dado, bool) or not 1 <= dado <= sides:
        raise BadValue(f"dado 1d{sides} non valido: {dado!r}")
    return dado


def valore_percezione(dado: int, bonus_statistica: int, concentrazione: int = 0) -> Calc:
    """Valore di Percezione = Dado (1d12) + Bonus Statistica + Bonus Concentrazione."""
    d = _die(dado, PERCEZIONE_DADO)
    v = d + bonus_statistica + concentrazione
    return Calc(v, (f"Percezione: Dado {d} + Bonus Statistica {bonus_statistica} + Concentrazione {concentrazione} = {v}",))


def valore_mimetizzazione(dado: int, bonus_statistica: int) -> Calc:
    """Valore di Mimetizzazione (and of Mascheramento) = Dado (1d12) + Bonus Statistica."""
    d = _die(dado, MIMETIZZAZIONE_DADO)
    v = d + bonus_statistica
    return Calc(v, (f"Mimetizzazione: Dado {d} + Bonus Statistica {bonus_statistica} = {v}",), RULE_MIMETIZZAZIONE)


def individua(percezione: int, mimetizzazione: int = NESSUNA_MIMETIZZAZIONE) -> bool:
    """Individua le presenze "se il loro Valore di Mimetizzazione non supera quello di Percezione"."""
    return mimetizzazione <= percezione


def tipo_attacco_multiplo(colpi: int) -> str:
    """How an Attacco Multiplo counts for the Attacco alla Cieca, by its number of Colpi."""
    for lo, hi, kind in MULTIPLI_COME:
        if lo <= colpi <= hi:
            return kind
    raise OutOfTable(f"Attacco Multiplo di {colpi} Colpi: il testo copre solo 1-5, 20-100 e 1000 Colpi")


@dataclass(frozen=True)
class CiecaResult:
    auto_fail: bool
    tipo: str  # "mirato", "area", "area_totale" (after mapping Attacchi Multipli)
    banda: str | None  # the table's column ("0-25m", …), None for Area Totale
    soglia: int | None  # fails automatically with a die of this or less
    steps: tuple[str, ...]
    rule: str = RULE_CIECA


def _band(raggio: float) -> int:
    for i, (upper, _label) in enumerate(CIECA_BANDE):
        if upper is None or raggio <= upper:
            return i
    raise AssertionError("unreachable")  # the last band is open


def attacco_alla_cieca(raggio_area_m: float, dado: int, tipo: str, *, colpi: int | None = None,
                       oltre_raggio_massimo: bool = False) -> CiecaResult:
    """Whether an Attacco alla Cieca on an Area of radius `raggio_area_m` fails automatically.

    `tipo`: "mirato", "area", "area_totale" or "multiplo" (then `colpi` decides). Band edges: 25 m belongs
    to 0-25, 60 m to 26-60, 100 m to 60-100 (the text's bands overlap at 60 and 100: our reading)."""
    if raggio_area_m is None or raggio_area_m < 0:
        raise BadValue(f"raggio dell'Area non valido: {raggio_area_m!r}")
    if not isinstance(dado, int) or dado < 1:
        raise BadValue(f"dado non valido: {dado!r}")
    steps: list[str] = []
    kind = tipo.strip().lower().replace(" ", "_")
    if kind == "multiplo":
        if colpi is None:
            raise BadValue("Attacco Multiplo senza numero di Colpi")
        kind = tipo_attacco_multiplo(colpi)
        steps.append(f"Attacco Multiplo di {colpi} Colpi: considerato {kind.replace('_', ' ')}")
    if kind == "area_totale":
        if oltre_raggio_massimo:
            steps.append("Attacco ad Area Totale: il Bersaglio è oltre il Raggio Massimo, fallimento")
            return CiecaResult(True, kind, None, None, tuple(steps))
        steps.append("Attacco ad Area Totale: nessuna possibilità di fallimento automatico")
        return CiecaResult(False, kind, None, None, tuple(steps))
    if kind not in CIECA_FALLIMENTO:
        raise BadValue(f"tipo di Attacco sconosciuto: {tipo!r}")
    i = _band(raggio_area_m)
    soglia = CIECA_FALLIMENTO[kind][i]
    banda = CIECA_BANDE[i][1]
    fail = dado <= soglia
    steps.append(f"Area di raggio {raggio_area_m:g} m ({banda}), Attacco {kind}: fallisce con {soglia} o meno; "
                 f"dado {dado} → {'fallimento automatico' if fail else 'nessun fallimento automatico'}")
    return CiecaResult(fail, kind, banda, soglia, tuple(steps))
