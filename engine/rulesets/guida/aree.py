"""Aree di Controllo of `guida`: sizes, Saturazione, decay, removal by attacks, creation, destruction, escape.

API:
- `malus_statico(raggio_m) -> int`: modificatori of Potenziale lost by an Area Statica of that radius
  (5 m 0 … 250 m −5; a radius between two rows takes the larger row; over 250 m → `OutOfTable`).
- `raggio_espansivo(saturazione) -> int | None`, `potenziale_espansivo(saturazione) -> int` (= Stacks, max 30).
- `Area(nome, tipo, owner, saturazione, potenziale=None, raggio_m=None, decay_anchor=0)`; `.potenziale_area`,
  `.raggio`, `.attiva`.
- `crea(nome, tipo, owner, *, turn, saturazione=0, potenziale=None, raggio_m=None, dentro=None, post=None,
  tecnica=None)`; `Area.dentro` (who is inside, None = not said), `.post`, `.tecnica`.
- `prossima_perdita(area) -> (turn, lost) | None`: the owner's turn of the next decay; `is_cortina_velenosa(area)`.
- `decadimento(area, turn) -> AreaStep`: Saturazione lost "in assenza di altri fattori" in the owner's turn
  `turn` (1-7: −1 every 2 turns, …); the Area vanishes at 0 Saturazione.
- `rimozione_da_attacco(*, categoria=None, tipo="mirato", colpi=None, cumulativa=True) -> Calc` and
  `colpita(area, rimozione) -> AreaStep`.
- `dado_creazione(via) -> "proprio" | "azione_principale"`: a main action rolls; a secondary one uses the
  main action's Fattore di Casualità.
- `distrutta_in_creazione(contrattacco_riuscito) -> bool`; `distrugge(area_potenza, tecnica_potenza,
  frazione_coperta) -> Calc` (≥ half the Area and Potenza above the Area's).
- `fuga(prima_della_formazione, azione, *, fuori_dall_area=True, contrattaccata=False) -> Calc`.
- `cortina_velenosa(saturazione) -> int` (Stack Veleno per Turno), `CORTINA_FUMOGENA_ACCECATO_OLTRE_M`.
`AreaStep(area, removed, vanished, steps)`; `Calc(value, steps, ruling=None)`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Literal

from .tables import (
    AREA_ESPANSIVA_RAGGIO, AREA_POTENZIALE_MAX, AREA_STATICA_MALUS, CORTINA_FUMOGENA_ACCECATO_OLTRE_M,
    CORTINA_VELENOSA_VELENO, RULE_AREE, RULE_AREE_CREAZIONE, RULE_AREE_DISTRUZIONE, RULE_AREE_FUGA, RULE_AREE_NOTE,
    SATURAZIONE_DECADIMENTO, SATURAZIONE_RIMOZIONE, BadValue, OutOfTable, band_value, category,
)
from .percezione import tipo_attacco_multiplo

TipoArea = Literal["statica", "espansiva"]
CORTINA_FUMOGENA_OLTRE_M = CORTINA_FUMOGENA_ACCECATO_OLTRE_M


@dataclass(frozen=True)
class Calc:
    value: Any
    steps: tuple[str, ...]
    ruling: str | None = None
    rule: str = RULE_AREE


def malus_statico(raggio_m: float) -> int:
    """Area Statica: "le Dimensioni dell'Area riducono il Potenziale della Tecnica"."""
    if raggio_m is None or raggio_m <= 0:
        raise BadValue(f"raggio non valido: {raggio_m!r}")
    for limit, malus in AREA_STATICA_MALUS:
        if raggio_m <= limit:
            return malus
    raise OutOfTable(f"Area di raggio {raggio_m:g} m: la tabella arriva a {AREA_STATICA_MALUS[-1][0]} m")


def raggio_espansivo(saturazione: int) -> int | None:
    """Radius (m) of an Area Espansiva with that many Stack di Saturazione (None at 0: no Area)."""
    return band_value(AREA_ESPANSIVA_RAGGIO, saturazione, None)


def potenziale_espansivo(saturazione: int) -> int:
    return min(max(saturazione, 0), AREA_POTENZIALE_MAX)


@dataclass(frozen=True)
class Area:
    nome: str
    tipo: TipoArea
    owner: str  # whose turns drive the decay
    saturazione: int = 0
    potenziale: int | None = None  # Area Statica: the technique's Potenziale (already reduced by the size malus)
    raggio_m: float | None = None  # Area Statica: fixed radius
    decay_anchor: int = 0  # owner's turn of the creation or of the last decay
    dentro: tuple[str, ...] | None = None  # who is inside, as a post or the master said (None: not said)
    post: str | None = None  # post of the creation (or of the master's declaration)
    tecnica: str | None = None  # the technique that created it (its registry `extra.veleno` for a Cortina Velenosa)
    fughe: tuple[tuple[str, str], ...] = ()  # (character, post) of a Fuga by Spostamento not yet resolved

    @property
    def potenziale_area(self) -> int | None:
        if self.tipo == "espansiva":
            return potenziale_espansivo(self.saturazione)
        return self.potenziale

    @property
    def raggio(self) -> float | None:
        return raggio_espansivo(self.saturazione) if self.tipo == "espansiva" else self.raggio_m


@dataclass(frozen=True)
class AreaStep:
    area: Area | None  # None: the Area has vanished
    removed: int
    steps: tuple[str, ...]
    rule: str = RULE_AREE

    @property
    def vanished(self) -> bool:
        return self.area is None


def crea(nome: str, tipo: TipoArea, owner: str, *, turn: int, saturazione: int = 0, potenziale: int | None = None,
         raggio_m: float | None = None, dentro: tuple[str, ...] | None = None, post: str | None = None,
         tecnica: str | None = None) -> Area:
    """A new Area di Controllo created in the owner's turn `turn`."""
    if tipo not in ("statica", "espansiva"):
        raise BadValue(f"tipo di Area sconosciuto: {tipo!r}")
    if tipo == "espansiva" and saturazione < 1:
        raise BadValue("un'Area Espansiva nasce con almeno 1 Stack di Saturazione")
    if tipo == "statica" and raggio_m is not None:
        malus_statico(raggio_m)  # validates the radius against the table
    return Area(nome, tipo, owner, saturazione, potenziale, raggio_m, turn, dentro, post, tecnica)


def prossima_perdita(area: Area) -> tuple[int, int] | None:
    """(owner's turn of the next decay, Stack di Saturazione it takes) "in assenza di altri fattori"; None for an
    Area without Saturazione."""
    if area.tipo != "espansiva" or area.saturazione <= 0:
        return None
    lost, every = band_value(SATURAZIONE_DECADIMENTO, area.saturazione, (0, 1))
    return area.decay_anchor + every, lost


def is_cortina_velenosa(area: Area) -> bool:
    """A Cortina Velenosa (Aree di Controllo Note): known by its name."""
    return "cortina velenosa" in area.nome.lower()


def _vanish_if_empty(area: Area, removed: int, steps: list[str]) -> AreaStep:
    if area.saturazione <= 0 and (area.tipo == "espansiva" or removed):
        steps.append(f"{area.nome}: Stack di Saturazione a 0, l'Area di Controllo scompare")
        return AreaStep(None, removed, tuple(steps))
    return AreaStep(area, removed, tuple(steps))


def decadimento(area: Area, turn: int) -> AreaStep:
    """Decay of Saturazione in the owner's turn `turn`, counted from the creation or the last decay."""
    if area.saturazione <= 0:
        return AreaStep(area, 0, ())
    lost, every = band_value(SATURAZIONE_DECADIMENTO, area.saturazione, (0, 1))
    if turn - area.decay_anchor < every:
        return AreaStep(area, 0, ())
    left = max(area.saturazione - lost, 0)
    steps = [f"{area.nome}: {area.saturazione} Stack di Saturazione, −{lost} "
             f"{f'ogni {every} Turni' if every > 1 else 'ogni Turno'} → {left}"]
    return _vanish_if_empty(replace(area, saturazione=left, decay_anchor=turn), area.saturazione - left, steps)


def rimozione_da_attacco(*, categoria: str | None = None, tipo: str = "mirato", colpi: int | None = None,
                         cumulativa: bool = True) -> Calc:
    """Stack di Saturazione an attack inside the Area removes (Potenziale A/S, Area, Area Totale, Multipli).
    An attack matching several rows removes their sum (setting `rimozione_saturazione_cumulativa`, ours)
    or, with `cumulativa=False`, the largest."""
    rows: list[tuple[str, int]] = []
    if categoria is not None:
        cat = category(categoria)
        if cat in ("A", "S"):
            rows.append((f"Potenziale {cat}", SATURAZIONE_RIMOZIONE[f"potenziale_{cat}"]))
    kind = tipo.strip().lower().replace(" ", "_")
    if kind == "area":
        rows.append(("Attacco ad Area", SATURAZIONE_RIMOZIONE["area"]))
    elif kind == "area_totale":
        rows.append(("Attacco ad Area Totale", SATURAZIONE_RIMOZIONE["area_totale"]))
    elif kind == "multiplo":
        if colpi is None:
            raise BadValue("Attacco Multiplo senza numero di Colpi")
        as_kind = tipo_attacco_multiplo(colpi)
        if as_kind == "area":
            rows.append((f"Attacco Multiplo ({colpi} Colpi)", SATURAZIONE_RIMOZIONE["multipli_20_100"]))
        elif as_kind == "area_totale":
            rows.append((f"Attacco Multiplo ({colpi} Colpi)", SATURAZIONE_RIMOZIONE["multipli_1000"]))
    elif kind != "mirato":
        raise BadValue(f"tipo di Attacco sconosciuto: {tipo!r}")
    if not rows:
        return Calc(0, ("l'Attacco non rimuove Stack di Saturazione",))
    if cumulativa:
        total = sum(n for _, n in rows)
        return Calc(total, (" + ".join(f"{label} −{n}" for label, n in rows) + f": −{total} Stack di Saturazione",))
    label, n = max(rows, key=lambda r: r[1])
    return Calc(n, (f"{label}: −{n} Stack di Saturazione",))


def colpita(area: Area, rimozione: int) -> AreaStep:
    """The Area loses `rimozione` Stack di Saturazione to an attack inside it."""
    if rimozione < 0:
        raise BadValue(f"rimozione negativa: {rimozione}")
    if rimozione == 0 or area.saturazione <= 0:
        return AreaStep(area, 0, ())
    left = max(area.saturazione - rimozione, 0)
    steps = [f"{area.nome}: {area.saturazione} − {rimozione} = {left} Stack di Saturazione"]
    return _vanish_if_empty(replace(area, saturazione=left), area.saturazione - left, steps)


def dado_creazione(via: str) -> str:
    """A creation by Azione Principale rolls its own die; by Azione Secondaria it uses the Fattore di
    Casualità of the Azione Principale."""
    v = via.strip().lower()
    if v in ("principale", "azione principale"):
        return "proprio"
    if v in ("secondaria", "azione secondaria"):
        return "azione_principale"
    raise BadValue(f"via di creazione sconosciuta: {via!r}")


def distrutta_in_creazione(contrattacco_riuscito: bool) -> bool:
    """A Contrattacco against the creating action destroys the Area only if it succeeds in Fase Difensiva;
    otherwise the Area is created (and the creator still has to defend from the Contrattacco)."""
    return bool(contrattacco_riuscito)


def distrugge(area_potenza: int, tecnica_potenza: int, frazione_coperta: Fraction | float) -> Calc:
    """An already formed Area is destroyed by a technique covering at least half of it whose Potenza
    exceeds the Area's."""
    cover = Fraction(frazione_coperta).limit_denominator(1000)
    ok_cover = cover >= Fraction(1, 2)
    ok_power = tecnica_potenza > area_potenza
    steps = [
        f"copre {float(cover):.0%} dell'Area ({'almeno' if ok_cover else 'meno della'} metà)",
        f"Potenza {tecnica_potenza} {'>' if ok_power else '≤'} Potenza dell'Area {area_potenza}",
    ]
    return Calc(ok_cover and ok_power, tuple(steps), rule=RULE_AREE_DISTRUZIONE)


def fuga(prima_della_formazione: bool, azione: str, *, fuori_dall_area: bool = True,
         contrattaccata: bool = False) -> Calc:
    """Escape from an Area di Controllo. Before it forms: a Schivata against the creating action that
    ends outside the Area. After: only an Azione Principale di Spostamento (a Schivata is not accepted
    "salvo casi particolari": `ruling`); a successful Contrattacco on it makes the escape fail."""
    a = azione.strip().lower()
    if prima_della_formazione:
        ok = a == "schivata" and fuori_dall_area
        why = ("Schivata contro l'azione che genera l'Area, fuori dall'Area" if ok
               else "serve una Schivata contro l'azione che genera l'Area che porti fuori dall'Area")
        return Calc(ok, (why,), rule=RULE_AREE_FUGA)
    if a == "schivata":
        return Calc(False, ("dopo la formazione la Schivata non vale per la Fuga (salvo casi particolari)",),
                    ruling="Schivata per fuggire da un'Area già formata: caso particolare?", rule=RULE_AREE_FUGA)
    if a != "spostamento":
        return Calc(False, ("dopo la formazione serve un'Azione Principale di Spostamento",), rule=RULE_AREE_FUGA)
    if contrattaccata:
        return Calc(False, ("Spostamento Contrattaccato con Successo: Fuga fallita, ancora dentro l'Area",),
                    rule=RULE_AREE_FUGA)
    if not fuori_dall_area:
        return Calc(False, ("lo Spostamento non porta fuori dall'Area",), rule=RULE_AREE_FUGA)
    return Calc(True, ("Spostamento (Azione Principale) fuori dall'Area: Fuga riuscita",), rule=RULE_AREE_FUGA)


def cortina_velenosa(saturazione: int) -> int:
    """Cortina Velenosa: Stack Veleno per Turno by Stack di Saturazione."""
    return band_value(CORTINA_VELENOSA_VELENO, saturazione, 0)


RULE_CREAZIONE = RULE_AREE_CREAZIONE
RULE_NOTE = RULE_AREE_NOTE
