"""Bersagli Multipli of `guida`: attacks on several targets and defences of allies ("su Alleato").

API:
- `colpire_multipli(tipo, n_bersagli) -> int`: Probabilità di Colpire of an attack on several targets
  (Attacchi Mirati −2; other kinds 0).
- `potenza_multipli(potenza, n_bersagli, *, max_bersagli=None) -> Calc`: Attacchi Multipli lose 1 Potenza
  per target beyond the first; `max_bersagli` (the Raffica, from the registry) → `NotAllowed` if exceeded.
- `fermato_per_tutti(tipo) -> bool | None`: one target stopping the attack annuls it for all — True for
  Attacchi Mirati, None ("si deve valutare caso per caso": the master rules) for Area, Area Totale, Multipli.
- `difesa_alleato(azione, *, piu_lontano=False, destrezza=0, forza=0, gigantismo_superiore=False,
  fase="difensiva") -> AllyDefence`: the die, the roll modifiers with labels (as in dice tags) and the
  Destrezza Punti Bonus of the "su Alleato" defences.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .tables import (
    ALLEATO_LONTANO_DIFENDERE, AZIONI_ALLEATO, DIFESA_NULLA_ALLEATO_DESTREZZA_PASSO, MIRATI_MULTIPLI_COLPIRE,
    MULTIPLI_POTENZA_PER_BERSAGLIO, PROTEZIONE_BONUS, RULE_ALLEATI, RULE_BERSAGLI, SCHIVATA_ALLEATO_DESTREZZA,
    SCHIVATA_ALLEATO_FORZA_PASSO, BadValue, NotAllowed,
)

TIPI = ("mirato", "area", "area_totale", "multiplo")


@dataclass(frozen=True)
class Calc:
    value: int
    steps: tuple[str, ...]
    rule: str = RULE_BERSAGLI


def _tipo(tipo: str) -> str:
    t = tipo.strip().lower().replace(" ", "_")
    if t not in TIPI:
        raise BadValue(f"tipo di Attacco sconosciuto: {tipo!r} (attesi: {', '.join(TIPI)})")
    return t


def _n(n: int) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise BadValue(f"numero di Bersagli non valido: {n!r}")
    return n


def colpire_multipli(tipo: str, n_bersagli: int) -> int:
    """Attacchi Mirati on more than one target: Probabilità di Colpire −2."""
    return MIRATI_MULTIPLI_COLPIRE if _tipo(tipo) == "mirato" and _n(n_bersagli) > 1 else 0


def potenza_multipli(potenza: int, n_bersagli: int, *, max_bersagli: int | None = None) -> Calc:
    """Attacchi Multipli: "per ogni Bersaglio oltre il primo, la Potenza è ridotta di 1 punto"."""
    n = _n(n_bersagli)
    if max_bersagli is not None and n > max_bersagli:
        raise NotAllowed(f"{n} Bersagli: la Raffica ne consente al più {max_bersagli}")
    cut = MULTIPLI_POTENZA_PER_BERSAGLIO * (n - 1)
    value = potenza + cut
    return Calc(value, (f"Attacco Multiplo su {n} Bersagli: Potenza {potenza} {cut:+d} = {value}",))


def fermato_per_tutti(tipo: str) -> bool | None:
    """If one target stops the attack: annulled for all (Mirati), or the master decides (None)."""
    return True if _tipo(tipo) == "mirato" else None


@dataclass(frozen=True)
class AllyDefence:
    azione: str
    dado: int  # sides of the die for this phase
    mods: tuple[tuple[int, str], ...]  # (amount, label) of Probabilità di Difendere / Colpire
    stats: dict[str, int] = field(default_factory=dict)  # Punti Bonus (Schivata con Alleato: Destrezza)
    steps: tuple[str, ...] = ()
    rule: str = RULE_ALLEATI

    @property
    def modifier(self) -> int:
        return sum(a for a, _ in self.mods)


def difesa_alleato(azione: str, *, piu_lontano: bool = False, destrezza: int = 0, forza: int = 0,
                   gigantismo_superiore: bool = False, fase: str = "difensiva") -> AllyDefence:
    """A defence of an ally. `destrezza`/`forza` are Livelli Totali; `piu_lontano`: the defender is farther
    from the target than the attacker; `gigantismo_superiore`: the target has a higher Classe di Gigantismo.
    The defender must also make a Spostamento in Fase Difensiva to stand between attacker and target."""
    if azione not in AZIONI_ALLEATO:
        raise BadValue(f"azione su Alleato sconosciuta: {azione!r}")
    dice = AZIONI_ALLEATO[azione]
    if fase == "offensiva":
        if len(dice) < 2:
            raise BadValue(f"{azione} non ha una Fase Offensiva")
        die = dice[1]
    elif fase == "difensiva":
        die = dice[0]
    else:
        raise BadValue(f"fase sconosciuta: {fase!r}")
    mods: list[tuple[int, str]] = []
    stats: dict[str, int] = {}
    steps: list[str] = [f"{azione}: 1d{die}"]
    if azione in ("Difesa Nulla su Alleato", "Protezione su Alleato"):
        mods.append((PROTEZIONE_BONUS, "Bonus Protezione"))
        steps.append(f"stessi bonus della Protezione: {PROTEZIONE_BONUS:+d}")
    if azione == "Difesa Nulla su Alleato":
        extra = max(destrezza, 0) // DIFESA_NULLA_ALLEATO_DESTREZZA_PASSO
        if extra:
            mods.append((extra, "Destrezza su Alleato"))
        steps.append(f"+1 ogni {DIFESA_NULLA_ALLEATO_DESTREZZA_PASSO} livelli di Destrezza ({destrezza}): {extra:+d}")
    if azione == "Schivata con Alleato":
        if gigantismo_superiore:
            raise NotAllowed("Schivata con Alleato: non funziona se il Bersaglio ha una Classe di Gigantismo superiore")
        reduction = max(forza, 0) // SCHIVATA_ALLEATO_FORZA_PASSO
        malus = min(SCHIVATA_ALLEATO_DESTREZZA + reduction, 0)
        stats["Destrezza"] = malus
        steps.append(f"Destrezza {SCHIVATA_ALLEATO_DESTREZZA:+d} Punti Bonus, ridotto di {reduction} "
                     f"(1 ogni {SCHIVATA_ALLEATO_FORZA_PASSO} livelli di Forza {forza}) → {malus:+d}")
    if piu_lontano and fase == "difensiva":
        mods.append((ALLEATO_LONTANO_DIFENDERE, "Alleato Lontano"))
        steps.append(f"più lontano dal Bersaglio dell'Attaccante: {ALLEATO_LONTANO_DIFENDERE:+d}")
    return AllyDefence(azione, die, tuple(mods), stats, tuple(steps))
