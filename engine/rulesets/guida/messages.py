"""Verdicts of the `guida` ruleset: rule paragraphs, the Italian messages readers see (severities: CODE_SEVERITY)."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...verdicts import Verdict, severity_of

P_SCHEMA = "Schema Post"
P_INIZIALE = "Struttura dei Turni › Fase Iniziale"
P_DIFENSIVA = "Struttura dei Turni › Fase Difensiva"
P_OFFENSIVA = "Struttura dei Turni › Fase Offensiva"
P_AZIONI = "Struttura dei Turni › Azioni Principali e Secondarie"
P_FLUSSO = "Struttura dei Turni › Flusso delle Azioni"
P_TURNI = "Struttura dei Turni"
P_LANCIO = "Successo e Fallimento delle Azioni › Lancio del Dado"
P_CASUALITA = "Successo e Fallimento delle Azioni › Fattore Casualità"
P_DISTANZA = "Successo e Fallimento delle Azioni › Fattore Distanza"
P_MIRA = "Successo e Fallimento delle Azioni › Fattore Mira"
P_DESCRIZIONE = "Successo e Fallimento delle Azioni › Fattore Descrizione"
P_STATISTICA = "Successo e Fallimento delle Azioni › Fattore Statistica"
P_ADEGUATEZZA = "Successo e Fallimento delle Azioni"
P_PROBABILITA = "Attacchi e Difese › Probabilità di Successo"
P_CONFRONTO = "Confronto di Potenza › Potenza contro Potenza"
P_DANNI = "Calcolo dei Danni › Tipologie di Danno"
P_DANNI_POST = "Calcolo dei Danni › Resistenza e Armatura"
P_STACK1 = "Condizioni Fisiche › Stack Tipo-1: Condizioni Passeggere"
P_STACK2 = "Condizioni Fisiche › Stack Tipo-2: Storpiature"
P_STACK3 = "Condizioni Fisiche › Stack Tipo-3: Stack Durature"
P_STACK4 = "Condizioni Fisiche › Stack Tipo-4: Stack Condizionate"
P_ACCECAMENTO = "Condizioni Fisiche › Altre Condizioni Fisiche › Accecamento"
P_SBALZO = "Sbalzo e Reazione › Sbalzo"
P_REAZIONE = "Sbalzo e Reazione › Reazione"
P_COSTR_IMPROPRIA = "Costrizione e Liberazione › Costrizioni Improprie"
P_LIBERAZIONE = "Costrizione e Liberazione › Liberazione"
P_BERSAGLI = "Bersagli Multipli › Attacco a Bersagli Multipli"
P_ALLEATI = "Bersagli Multipli › Difesa su Alleati"
P_RULING = "Arbitro › Decisioni del master"

# What each Stack / condition does to rolls, shown in the "next" hint.
EFFECTS: dict[str, str] = {
    "Sbilanciamento": "-1 Probabilità di Difendere per Stack; Potenziale di Attacchi e Difese ridotto di 1 modificatore per Stack",
    "Stordimento": "-1 Probabilità di Successo (colpire e difendere) per Stack",
    "Storpiatura Debilitante": "-3 Punti Bonus a Forza per Stack",
    "Storpiatura Articolare": "-3 Punti Bonus a Destrezza per Stack",
    "Storpiatura Spirituale": "-3 Punti Bonus a Intelligenza per Stack",
    "Ustione": "malus a Costituzione secondo la tabella dell'Ustione",
    "Avvelenamento": "effetti secondo il Veleno (Regolamento Equipaggiamenti)",
    "Incendio": "Danni Puri a inizio turno secondo la tabella; perde Stack nella Fase Iniziale",
    "Congelamento": "Danni Puri a inizio turno e malus a Destrezza secondo la tabella",
    "Accecamento": "-4 Punti Bonus a Destrezza; oltre 25 m tutti sono Nascosti",
}


_FIELDS = tuple(Verdict.__dataclass_fields__)
# Verdicts are built by the thousand in a replay: fill the frozen dataclass's __dict__ directly when it is a plain
# one (no slots, no __post_init__); otherwise go through its constructor.
_PLAIN = _FIELDS == ("code", "severity", "message", "rule", "post", "roll", "expected", "found", "details",
                     "assumption") and not hasattr(Verdict, "__slots__") and not hasattr(Verdict, "__post_init__")
_new = object.__new__
_setattr = object.__setattr__


def verdict(code: str, post: str, message: str, rule: str, *, roll: int | None = None, expected: Any = None,
            found: Any = None, details: dict[str, Any] | None = None, assumption: str | None = None) -> Verdict:
    """A Verdict whose severity is its code's own (engine.verdicts.CODE_SEVERITY): never chosen per case."""
    severity = severity_of(code)
    if not _PLAIN:
        return Verdict(code=code, severity=severity, message=message, rule=rule, post=post,
                       roll=roll, expected=expected, found=found, details=details or {}, assumption=assumption)
    v = _new(Verdict)
    _setattr(v, "__dict__", {"code": code, "severity": severity, "message": message, "rule": rule,
                             "post": post, "roll": roll, "expected": expected, "found": found,
                             "details": details or {}, "assumption": assumption})
    return v


def cifra(x: int | float | Fraction) -> str:
    """A number for a message, Italian style: "8", "6,5", "13,5"."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):g}".replace(".", ",") if isinstance(x, (float, Fraction)) else str(x)


def signed(n: int) -> str:
    return f"+{n}" if n >= 0 else str(n)


def dice_expr(sides: int, constant: int) -> str:
    return f"1d{sides}" + (signed(constant) if constant else "")
