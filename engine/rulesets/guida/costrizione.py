"""Costrizione e Liberazione of `guida`: one Valore di Costrizione per target, Liberazione attempts with Allentamento.

API:
- `Costrizione(id, nome, effetti, bonus_potenziale, impropria=False, fonte=None)`: one applied Costrizione;
  `effetti` from `tables.COSTRIZIONE_DESTREZZA` ("Blocco Braccia", …); `bonus_potenziale` = the technique's
  Bonus Potenziale from the registry (Regolamento Tecniche), not yet halved.
- `CostrizioneState(valore, attive, allentamento, ultimo_tentativo)`: per target; `NESSUNA` = free.
- `bonus_potenziale_effettivo(c)`: halved for a Costrizione Impropria.
- `applica(state, c, *, dado, bonus_statistica) -> CostrizioneStep`: the first Costrizione sets the
  Valore (Dado + Bonus Pot. + Bonus Stat.), each later one adds half its Bonus Potenziale.
- `valore_liberazione(dado, bonus_potenziale, bonus_statistica, allentamento, *, impropria=False,
  difensiva=False, gigantismo_taglie=None) -> Calc`.
- `tentativo(state, *, turn, dado, bonus_potenziale, bonus_statistica, impropria=False, difensiva=False,
  gigantismo_taglie=None) -> LiberazioneResult`: one attempt per turn (`NotAllowed` otherwise; `puo_tentare`
  says beforehand), Allentamento 0, +2, +4… reset when the Costrizione is broken; success frees from all.
  `LiberazioneResult.trasformazione_annullata` for a failed Gigantismo change.
- `destrezza_malus(attive, *, cumulativi=True) -> Calc` (Blocco Totale absorbs the others; more than one
  different kind → `ruling`), `IMPROPRIA_COLPIRE` (−2 to the attack), `gigantismo_categoria(taglie)`.
`Calc(value, steps, ruling=None, assumption=None)` explains every number.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .tables import (
    ALLENTAMENTO_PASSO, COSTRIZIONE_DESTREZZA, COSTRIZIONE_IMPROPRIA_COLPIRE, GIGANTISMO_CATEGORIA, LIBERAZIONE_DADO,
    LIBERAZIONI_PER_TURNO, RULE_COSTRIZIONE, RULE_COSTRIZIONE_IMPROPRIA, RULE_LIBERAZIONE, RULE_LIBERAZIONE_IMPROPRIA,
    BadValue, NotAllowed, OutOfTable,
)

IMPROPRIA_COLPIRE = COSTRIZIONE_IMPROPRIA_COLPIRE
DADO_LIBERAZIONE = LIBERAZIONE_DADO


@dataclass(frozen=True)
class Calc:
    value: int
    steps: tuple[str, ...]
    ruling: str | None = None
    assumption: str | None = None
    rule: str = RULE_COSTRIZIONE


@dataclass(frozen=True)
class Costrizione:
    id: str  # stable id (binds Type-4 Stacks to it)
    nome: str
    effetti: tuple[str, ...] = ()
    bonus_potenziale: int = 0
    impropria: bool = False
    fonte: str | None = None  # who applied it

    def __post_init__(self) -> None:
        for e in self.effetti:
            if e not in COSTRIZIONE_DESTREZZA:
                raise BadValue(f"effetto di Costrizione sconosciuto: {e!r}")
        if not isinstance(self.bonus_potenziale, int) or self.bonus_potenziale < 0:
            raise BadValue(f"Bonus Potenziale non valido: {self.bonus_potenziale!r}")


@dataclass(frozen=True)
class CostrizioneState:
    valore: int | None = None  # None = no active Costrizione
    attive: tuple[Costrizione, ...] = ()
    allentamento: int = 0  # Bonus Allentamento of the NEXT attempt
    ultimo_tentativo: int | None = None  # target's turn of the last Liberazione attempt

    @property
    def costretto(self) -> bool:
        return bool(self.attive)


NESSUNA = CostrizioneState()


@dataclass(frozen=True)
class CostrizioneStep:
    state: CostrizioneState
    valore: int
    steps: tuple[str, ...]
    rule: str = RULE_COSTRIZIONE


def bonus_potenziale_effettivo(c: Costrizione) -> int:
    """The Bonus Potenziale of a Costrizione Impropria is halved (rounded down)."""
    return c.bonus_potenziale // 2 if c.impropria else c.bonus_potenziale


def _die(dado: int, sides: int | None = None) -> int:
    if not isinstance(dado, int) or isinstance(dado, bool) or dado < 1 or (sides and dado > sides):
        raise BadValue(f"Fattore di Casualità non valido: {dado!r}")
    return dado


def applica(state: CostrizioneState, c: Costrizione, *, dado: int, bonus_statistica: int) -> CostrizioneStep:
    """A Costrizione hits the target. `dado` and `bonus_statistica` are those of the hitting Offensiva
    (used only for the first Costrizione)."""
    if any(a.id == c.id for a in state.attive):
        raise BadValue(f"Costrizione {c.id!r} già attiva")
    bp = bonus_potenziale_effettivo(c)
    steps: list[str] = []
    if c.impropria:
        steps.append(f"Costrizione Impropria: Bonus Potenziale dimezzato {c.bonus_potenziale} → {bp}")
    if state.valore is None or not state.attive:
        d = _die(dado)
        valore = d + bp + bonus_statistica
        steps.append(f"Valore di Costrizione: Dado {d} + Bonus Pot. {bp} + Bonus Stat. {bonus_statistica} = {valore}")
        new = CostrizioneState(valore, (c,), 0, state.ultimo_tentativo)
    else:
        inc = bp // 2
        valore = state.valore + inc
        steps.append(f"Costrizione aggiuntiva: Valore {state.valore} + metà Bonus Pot. {inc} = {valore}")
        new = replace(state, valore=valore, attive=state.attive + (c,))
    return CostrizioneStep(new, valore, tuple(steps), RULE_COSTRIZIONE_IMPROPRIA if c.impropria else RULE_COSTRIZIONE)


def gigantismo_categoria(taglie: int) -> str:
    """Passaggio ad un Gigantismo differente: Taglie di differenza → categoria of the Bonus Potenziale."""
    try:
        return GIGANTISMO_CATEGORIA[taglie]
    except KeyError:
        raise OutOfTable(f"Gigantismo: {taglie} Taglie di differenza non previste (1, 2 o 3)") from None


def valore_liberazione(dado: int, bonus_potenziale: int, bonus_statistica: int, allentamento: int, *,
                       impropria: bool = False, difensiva: bool = False,
                       gigantismo_taglie: int | None = None) -> Calc:
    """Valore di Liberazione = Dado (1d12) + Bonus Pot. + Bonus Stat. + Allentamento.

    A proper attempt rolls 1d12. Liberazione Impropria (the technique's own roll): Bonus Potenziale halved,
    and the die halved for Azioni Difensive. A change of
    Gigantismo keeps the Bonus Potenziale whole (its category comes from `gigantismo_categoria`, its value
    from the registry)."""
    # a proper attempt rolls its own 1d12; an improper one uses the technique's roll (any die)
    improper = impropria or gigantismo_taglie is not None
    d = _die(dado, None if improper else LIBERAZIONE_DADO)
    steps: list[str] = []
    bp = bonus_potenziale
    rule = RULE_LIBERAZIONE
    if gigantismo_taglie is not None:
        cat = gigantismo_categoria(gigantismo_taglie)
        steps.append(f"Gigantismo ({gigantismo_taglie} Taglie): Bonus Potenziale di categoria {cat}, non dimezzato")
        rule = RULE_LIBERAZIONE_IMPROPRIA
    elif impropria:
        bp = bonus_potenziale // 2
        steps.append(f"Liberazione Impropria: Bonus Potenziale dimezzato {bonus_potenziale} → {bp}")
        rule = RULE_LIBERAZIONE_IMPROPRIA
        if difensiva:
            steps.append(f"Azione Difensiva: Fattore di Casualità dimezzato {d} → {d // 2}")
            d //= 2
    value = d + bp + bonus_statistica + allentamento
    steps.append(f"Valore di Liberazione: Dado {d} + Bonus Pot. {bp} + Bonus Stat. {bonus_statistica} "
                 f"+ Allentamento {allentamento} = {value}")
    return Calc(value, tuple(steps), rule=rule)


def puo_tentare(state: CostrizioneState, turn: int) -> bool:
    """At most one Tentativo di Liberazione (proper or improper) per turn, and only when costretto."""
    return state.costretto and (state.ultimo_tentativo is None or state.ultimo_tentativo < turn)


@dataclass(frozen=True)
class LiberazioneResult:
    state: CostrizioneState
    success: bool
    valore_liberazione: int
    valore_costrizione: int
    allentamento: int  # the bonus used in this attempt
    liberate: tuple[Costrizione, ...]  # Costrizioni removed (all of them on success)
    trasformazione_annullata: bool
    steps: tuple[str, ...]
    rule: str = RULE_LIBERAZIONE


def tentativo(state: CostrizioneState, *, turn: int, dado: int, bonus_potenziale: int, bonus_statistica: int,
              impropria: bool = False, difensiva: bool = False,
              gigantismo_taglie: int | None = None) -> LiberazioneResult:
    """One Tentativo di Liberazione in the target's turn `turn`."""
    if not state.costretto or state.valore is None:
        raise NotAllowed("nessuna Costrizione attiva da cui liberarsi")
    if not puo_tentare(state, turn):
        raise NotAllowed(f"già un Tentativo di Liberazione nel turno {turn}: al più {LIBERAZIONI_PER_TURNO} per Turno")
    calc = valore_liberazione(dado, bonus_potenziale, bonus_statistica, state.allentamento, impropria=impropria,
                              difensiva=difensiva, gigantismo_taglie=gigantismo_taglie)
    steps = list(calc.steps)
    if calc.value >= state.valore:
        steps.append(f"{calc.value} ≥ Valore di Costrizione {state.valore}: liberato da tutte le Costrizioni")
        new = CostrizioneState(None, (), 0, turn)
        return LiberazioneResult(new, True, calc.value, state.valore, state.allentamento, state.attive, False,
                                 tuple(steps), calc.rule)
    steps.append(f"{calc.value} < Valore di Costrizione {state.valore}: la Costrizione resiste; "
                 f"Allentamento {state.allentamento} → {state.allentamento + ALLENTAMENTO_PASSO}")
    annulled = gigantismo_taglie is not None
    if annulled:
        steps.append("Tentativo fallito: la Trasformazione (Gigantismo) è annullata")
    new = replace(state, allentamento=state.allentamento + ALLENTAMENTO_PASSO, ultimo_tentativo=turn)
    return LiberazioneResult(new, False, calc.value, state.valore, state.allentamento, (), annulled,
                             tuple(steps), calc.rule)


def rimuovi(state: CostrizioneState, costrizione_id: str) -> CostrizioneState:
    """A Costrizione ends by other means (its Type-4 Stacks are all gone, the user dismisses it). The
    Valore and the Allentamento stay while others remain; with none left the target is free."""
    attive = tuple(c for c in state.attive if c.id != costrizione_id)
    if not attive:
        return CostrizioneState(None, (), 0, state.ultimo_tentativo)
    return replace(state, attive=attive)


def destrezza_malus(attive: tuple[Costrizione, ...] | list[Costrizione], *, cumulativi: bool = True) -> Calc:
    """Punti Bonus of Destrezza lost to the active Costrizioni. The text leaves the sum to the case
    ("potrebbe o meno sommarne gli effetti"): Blocco Totale absorbs the others; the same effect counts
    once; different effects are summed (setting `costrizioni_effetti_cumulativi`, ours) and flagged."""
    kinds = sorted({e for c in attive for e in c.effetti}, key=lambda k: COSTRIZIONE_DESTREZZA[k])
    if not kinds:
        return Calc(0, ())
    if "Blocco Totale" in kinds:
        others = [k for k in kinds if k != "Blocco Totale"]
        steps = [f"Blocco Totale: Destrezza {COSTRIZIONE_DESTREZZA['Blocco Totale']:+d} Punti Bonus"]
        if others:
            steps.append(f"assorbe {', '.join(others)}")
        return Calc(COSTRIZIONE_DESTREZZA["Blocco Totale"], tuple(steps))
    malus = [(k, COSTRIZIONE_DESTREZZA[k]) for k in kinds]
    relevant = [(k, v) for k, v in malus if v]
    if len(relevant) <= 1 or not cumulativi:
        k, v = min(malus, key=lambda kv: kv[1])
        steps = [f"{k}: Destrezza {v:+d} Punti Bonus"]
        ruling = None if len(relevant) <= 1 else "Più Costrizioni: il master stabilisce se gli effetti si sommano"
        return Calc(v, tuple(steps), ruling=ruling,
                    assumption=None if len(relevant) <= 1 else "costrizioni_effetti_cumulativi")
    total = sum(v for _, v in relevant)
    steps = [" + ".join(f"{k} {v:+d}" for k, v in relevant) + f" = Destrezza {total:+d} Punti Bonus"]
    return Calc(total, tuple(steps), ruling="Più Costrizioni: il master stabilisce se gli effetti si sommano",
                assumption="costrizioni_effetti_cumulativi")
