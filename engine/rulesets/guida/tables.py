"""The `guida` rule tables as data (numbers exactly as the rule text gives them) and the mechanics' settings.

API (read by the `guida` step function):
- `CATEGORIES` ("D", "C", "B", "A", "S"); `category(value) -> str` (raises `UnknownCategory`).
- `MechanicsError` (root of the mechanics' errors) ⊃ `UnknownCategory`, `OutOfTable`, `NotAllowed`, `BadValue`.
- `band_value(table, n)`: the value of a threshold table `((from, value), …)` for `n` (0/None below the first row).
- Tables: `CLASH_THRESHOLDS`, `AMBIENTALE_FACTOR`, `RIGENERAZIONE_LIVELLI`, `USTIONE_COSTITUZIONE`,
  `INCENDIO_DANNI`, `CONGELAMENTO_DANNI`, `CONGELAMENTO_DESTREZZA`, `TIPO4_DECADIMENTO`,
  `SATURAZIONE_DECADIMENTO`, `AREA_STATICA_MALUS`, `AREA_ESPANSIVA_RAGGIO`, `AREA_POTENZIALE_MAX`,
  `SATURAZIONE_RIMOZIONE`, `CORTINA_VELENOSA_VELENO`, `SBALZO_MODIFICATORE`, `CIECA_FALLIMENTO`,
  `CIECA_BANDE`, `MULTIPLI_COME`, `GIGANTISMO_CATEGORIA`, `COSTRIZIONE_DESTREZZA`, `STORPIATURE`,
  `TIPO1_MAX`, `TIPO2_MAX_PER_CATEGORIA`, `TIPO2_DURATA_TURNI`, `ACCECAMENTO_DESTREZZA`, …
- `SETTINGS`: tuple of `engine.core.Setting` — every number or reading the text leaves open, ours.
- `RULE_*` strings: the rule paragraphs verdicts cite.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from ...core import Setting


class MechanicsError(ValueError):
    """Root of the errors of the `guida` mechanics (bad input to a pure mechanics function)."""


class UnknownCategory(MechanicsError):
    """A Potenziale category that is not one of D, C, B, A, S."""


class OutOfTable(MechanicsError):
    """A value the rule text's table does not cover (the master must rule)."""


class NotAllowed(MechanicsError):
    """An action the rules forbid in this situation (e.g. a second Liberazione in one turn)."""


class BadValue(MechanicsError):
    """A number outside its domain (negative die face, negative radius, …)."""


CATEGORIES: tuple[str, ...] = ("D", "C", "B", "A", "S")


def category(value: Any) -> str:
    """The canonical category letter of `value` ("b", " B " → "B")."""
    if isinstance(value, str) and value.strip().upper() in CATEGORIES:
        return value.strip().upper()
    raise UnknownCategory(f"categoria di Potenziale sconosciuta: {value!r} (attese: D, C, B, A, S)")


def band_value(table: Sequence[tuple[int, Any]], n: int | float, below: Any = None) -> Any:
    """Value of the last row whose threshold is <= n; `below` when n is under the first row.

    The text's tables list thresholds ("1 Stack … 3 Stack … 6 Stack"): a count between two rows takes
    the lower row, and past the last row the effect stops growing ("un limite oltre il quale gli
    effetti non cresceranno")."""
    out = below
    for threshold, value in table:
        if n >= threshold:
            out = value
        else:
            break
    return out


# --- rule paragraphs cited by verdicts -------------------------------------------------------------

RULE_CLASH = "Confronto di Potenza › Potenza contro Potenza"
RULE_DANNI = "Calcolo dei Danni › Tipologie di Danno"
RULE_ARMATURA = "Calcolo dei Danni › Resistenza e Armatura"
RULE_AMBIENTALE = "Calcolo dei Danni › Danno Ambientale"
RULE_CURE = "Calcolo delle Cure › Tipologie di Cura"
RULE_CURE_ARMATURA = "Calcolo delle Cure › Resistenza e Armatura"
RULE_MIRA = "Successo e Fallimento delle Azioni › Fattore Mira"
RULE_TIPO1 = "Condizioni Fisiche › Stack Tipo-1: Condizioni Passeggere"
RULE_TIPO2 = "Condizioni Fisiche › Stack Tipo-2: Storpiature"
RULE_TIPO3 = "Condizioni Fisiche › Stack Tipo-3: Stack Durature"
RULE_TIPO4 = "Condizioni Fisiche › Stack Tipo-4: Stack Condizionate"
RULE_ACCECAMENTO = "Condizioni Fisiche › Altre Condizioni Fisiche › Accecamento"
RULE_COSTRIZIONE = "Costrizione e Liberazione › Costrizione"
RULE_COSTRIZIONE_IMPROPRIA = "Costrizione e Liberazione › Costrizioni Improprie"
RULE_LIBERAZIONE = "Costrizione e Liberazione › Liberazione"
RULE_LIBERAZIONE_IMPROPRIA = "Costrizione e Liberazione › Liberazioni Improprie"
RULE_PERCEZIONE = "Percezione e Mimetizzazione › Percezione"
RULE_MIMETIZZAZIONE = "Percezione e Mimetizzazione › Mimetizzazione"
RULE_CIECA = "Percezione e Mimetizzazione › Attacco alla Cieca"
RULE_SBALZO = "Sbalzo e Reazione › Sbalzo"
RULE_REAZIONE = "Sbalzo e Reazione › Reazione"
RULE_AREE = "Aree di Controllo › Tipologie di Aree di Controllo"
RULE_AREE_CREAZIONE = "Aree di Controllo › Creazione di Aree di Controllo"
RULE_AREE_DISTRUZIONE = "Aree di Controllo › Distruzione di Aree di Controllo"
RULE_AREE_FUGA = "Aree di Controllo › Fuga dalle Aree di Controllo"
RULE_AREE_NOTE = "Aree di Controllo › Aree di Controllo Note"
RULE_BERSAGLI = "Bersagli Multipli › Attacco a Bersagli Multipli"
RULE_ALLEATI = "Bersagli Multipli › Difesa su Alleati"

# --- Confronto di Potenza --------------------------------------------------------------------------
# Category of the weaker action's Potenziale → (minimum difference for "[X] prosegue con Potenziale
# dimezzato", minimum difference for "[X] prosegue con Potenziale intatto"). Below the first: both annulled.
CLASH_THRESHOLDS: dict[str, tuple[int, int]] = {
    "D": (2, 4),
    "C": (3, 5),
    "B": (3, 6),
    "A": (4, 6),
    "S": (4, 7),
}

# --- Danni -----------------------------------------------------------------------------------------
# Danno Ambientale: Potenziale D.A. = Dado × factor, by the category of the generating attack's Potenziale.
AMBIENTALE_FACTOR: dict[str, Fraction] = {
    "D": Fraction(1, 4),
    "C": Fraction(1, 3),
    "B": Fraction(1, 2),
    "A": Fraction(1),
    "S": Fraction(3, 2),
}
PURO_BONUS_DIVISORE = 5  # Danno Puro / Cura Principale: Bonus Statistica / 5
MIRA_CORPO_CRITICO_FACCIA = 12  # Mira al Corpo: Fattore di Casualità 12 → Danno raddoppiato
MIRA_TESTA_CRITICO_FACCIA = 9  # Mira alla Testa: 9 o superiore → Danno raddoppiato
MIRA_TESTA_STORDIMENTO_FACCIA = 12  # Mira alla Testa: 12 → 2 Stack di Stordimento
MIRA_TESTA_STORDIMENTO_STACK = 2
MIRA_ARTI_STORPIATURA_FACCIA = 10  # Mira agli Arti: 10 o superiore → 1 Stack di Storpiatura
MIRA_ARTI_STORPIATURA = {"braccia": "Storpiatura Debilitante", "gambe": "Storpiatura Articolare"}

# --- Cure ------------------------------------------------------------------------------------------
# Rigenerazione: 1 Punto Vita ogni N livelli di Statistica, by category.
RIGENERAZIONE_LIVELLI: dict[str, int] = {"D": 7, "C": 6, "B": 5, "A": 4, "S": 3}

# --- Stack -----------------------------------------------------------------------------------------
TIPO1 = ("Sbilanciamento", "Stordimento")
TIPO1_MAX = 4  # al più 4 Stack Tipo-1 in tutto
TIPO1_DURATA_TURNI = 1  # 1 Turno = 1 Fase Difensiva + 1 Fase Offensiva (RULINGS #4: il post successivo)
SBILANCIAMENTO_DIFENDERE = -1  # per Stack: Probabilità di Difendere −1
SBILANCIAMENTO_POTENZIALE_MOD = -1  # per Stack: Potenziale di Attacchi e Difese ridotto di 1 modificatore
STORDIMENTO_SUCCESSO = -1  # per Stack: Probabilità di Successo −1 (colpire e difendere)
SBILANCIAMENTO_DA_DIFESA = 2  # Sbilanciamento riuscito: l'Attaccante riceve 2 Stack

TIPO2_MAX_PER_CATEGORIA = 3
TIPO2_DURATA_TURNI = 3  # spariscono tutte insieme dopo 3 Turni; ogni applicazione resetta il conteggio
# Storpiature: statistic and Punti Bonus per Stack.
STORPIATURE: dict[str, tuple[str, int]] = {
    "Storpiatura Debilitante": ("Forza", -3),
    "Storpiatura Articolare": ("Destrezza", -3),
    "Storpiatura Spirituale": ("Intelligenza", -3),
}
TIPO3 = ("Ustione", "Avvelenamento")
USTIONE_COSTITUZIONE: tuple[tuple[int, int], ...] = ((1, -1), (3, -2), (6, -4), (10, -6), (15, -9), (21, -12))
TIPO4 = ("Incendio", "Congelamento")
INCENDIO_DANNI: tuple[tuple[int, int], ...] = ((1, 2), (3, 3), (6, 5), (10, 7), (15, 9), (21, 12))
CONGELAMENTO_DANNI: tuple[tuple[int, int], ...] = ((1, 1), (3, 2), (6, 3), (10, 4), (15, 5), (21, 6))
CONGELAMENTO_DESTREZZA: tuple[tuple[int, int], ...] = ((1, -1), (3, -2), (6, -3), (10, -5), (15, -7), (21, -8))
# Fase Iniziale decay of Incendio / Congelamento: from stacks → (stacks lost, every N turns).
TIPO4_DECADIMENTO: tuple[tuple[int, tuple[int, int]], ...] = (
    (1, (1, 2)), (6, (1, 1)), (11, (2, 1)), (18, (3, 1)), (26, (4, 1)),
)
ACCECAMENTO_DESTREZZA = -4
ACCECAMENTO_NASCOSTI_OLTRE_M = 25
ACCECAMENTO_IMMUNITA = "Sensi Alternativi alla Vista"

# --- Costrizione e Liberazione ---------------------------------------------------------------------
COSTRIZIONE_DESTREZZA: dict[str, int] = {
    "Limitazione Distanza": 0,
    "Blocco Spostamenti": -1,
    "Limitazione Movimenti": -1,
    "Blocco Braccia": -1,
    "Blocco Gambe": -2,
    "Blocco Totale": -4,
}
COSTRIZIONE_IMPROPRIA_COLPIRE = -2
ALLENTAMENTO_PASSO = 2
LIBERAZIONE_DADO = 12
LIBERAZIONI_PER_TURNO = 1
# Passaggio ad un Gigantismo differente: Taglie di differenza → categoria del Bonus Potenziale.
GIGANTISMO_CATEGORIA: dict[int, str] = {1: "B", 2: "A", 3: "S"}

# --- Percezione e Mimetizzazione -------------------------------------------------------------------
PERCEZIONE_DADO = 12
MIMETIZZAZIONE_DADO = 12
CONCENTRAZIONE_PASSO = 2
# Attacco alla Cieca: raggio dell'Area (upper bounds in metres, None = oltre) → automatic failure if die <=.
CIECA_BANDE: tuple[tuple[float | None, str], ...] = ((25, "0-25m"), (60, "26-60m"), (100, "60-100m"), (None, "100+ m"))
CIECA_FALLIMENTO: dict[str, tuple[int, int, int, int]] = {
    "mirato": (6, 7, 8, 10),
    "area": (4, 5, 6, 8),
}
# Attacchi Multipli by number of Colpi: (from, to) → treated as.
MULTIPLI_COME: tuple[tuple[int, int, str], ...] = ((1, 5, "mirato"), (20, 100, "area"), (1000, 1000, "area_totale"))

# --- Sbalzo e Reazione -----------------------------------------------------------------------------
SBALZO_MODIFICATORE: dict[str, Fraction] = {
    "D": Fraction(1), "C": Fraction(3, 2), "B": Fraction(2), "A": Fraction(3), "S": Fraction(4),
}
SBALZO_DICHIARATO_COLPIRE = -2
REAZIONE_DADO = 12
REAZIONE_DOPO = ("Difesa Nulla", "Protezione")

# --- Aree di Controllo -----------------------------------------------------------------------------
AREA_STATICA_MALUS: tuple[tuple[int, int], ...] = ((5, 0), (10, -1), (25, -2), (60, -3), (100, -4), (250, -5))
AREA_ESPANSIVA_RAGGIO: tuple[tuple[int, int], ...] = ((1, 5), (3, 10), (6, 25), (10, 60), (15, 100), (21, 250))
AREA_POTENZIALE_MAX = 30
# Decay "in assenza di altri fattori": from stacks → (stacks lost, every N turns).
SATURAZIONE_DECADIMENTO: tuple[tuple[int, tuple[int, int]], ...] = ((1, (1, 2)), (8, (1, 1)), (16, (2, 1)), (25, (3, 1)))
# Attacks inside the Area remove Saturazione.
SATURAZIONE_RIMOZIONE: dict[str, int] = {
    "potenziale_A": 1, "potenziale_S": 2, "area": 1, "area_totale": 2, "multipli_20_100": 1, "multipli_1000": 2,
}
CORTINA_VELENOSA_VELENO: tuple[tuple[int, int], ...] = ((1, 1), (3, 2), (6, 3), (10, 4), (15, 5), (21, 6))
CORTINA_FUMOGENA_ACCECATO_OLTRE_M = 5

# --- Bersagli Multipli -----------------------------------------------------------------------------
MIRATI_MULTIPLI_COLPIRE = -2
MULTIPLI_POTENZA_PER_BERSAGLIO = -1
ALLEATO_LONTANO_DIFENDERE = -2
PROTEZIONE_BONUS = 2
DIFESA_NULLA_ALLEATO_DESTREZZA_PASSO = 5  # +1 Probabilità di Difendere ogni 5 livelli di Destrezza
SCHIVATA_ALLEATO_DESTREZZA = -6
SCHIVATA_ALLEATO_FORZA_PASSO = 5  # malus ridotto di 1 ogni 5 livelli di Forza
# "su Alleato" actions: name → dice sides (Fase Difensiva[, Fase Offensiva]).
AZIONI_ALLEATO: dict[str, tuple[int, ...]] = {
    "Difesa Nulla su Alleato": (24,),
    "Protezione su Alleato": (24,),
    "Contrattacco per Alleato": (18, 12),
    "Parata per Alleato": (18,),
    "Schivata con Alleato": (18,),
}

# --- settings: numbers and readings the text leaves open (all ours) --------------------------------
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "danno_minimo", 0,
        "Minimo di un Danno (Normale, Semi-Puro, Ambientale) quando la formula dà meno: il testo non "
        "prevede Danni negativi; 0 = nessun Danno. Lettura nostra.",
    ),
    Setting(
        "armatura_blocca_puri", "meta_potenziale",
        "Danno Puro contro un'Armatura che blocca i Danni Puri: 'meta_potenziale' sottrae metà del "
        "Potenziale dell'Armatura come il testo fa per le Cure; 'ruling' chiede al master.",
    ),
    Setting(
        "rimozione_saturazione_cumulativa", True,
        "Un Attacco dentro un'Area di Controllo che ricade in più righe della tabella (es. Potenziale S "
        "e Attacco ad Area) rimuove la somma delle Stack di Saturazione; False = solo la riga più alta.",
    ),
    Setting(
        "costrizioni_effetti_cumulativi", True,
        "Effetti di più Costrizioni diverse sulla Destrezza: sommati (un Blocco Totale assorbe gli altri "
        "e la stessa Costrizione non conta due volte); il testo lascia il caso al master (ruling).",
    ),
    Setting(
        "cure_entro_il_massimo", True,
        "Una Cura (Principale o Rigenerazione) non porta i PV oltre il massimo: il testo non lo dice; True = "
        "si recupera al più fino al massimo e il verdetto dice cosa va nel Registro; False = nessun limite.",
    ),
    Setting(
        "distanza_cura", None,
        "Fattore Distanza su una Cura: il testo lo applica «esclusivamente agli Attacchi» e non dice se una Cura "
        "lo sia. 'attacco' = controllato come su un Attacco; 'esclusa' = non si applica (dice.factor_out_of_range); "
        "non impostato = letto come scritto, con un avviso che nomina l'impostazione (dice.distance_on_cure).",
    ),
    Setting(
        "tipo4_danno_prima_del_decadimento", True,
        "Incendio/Congelamento nella Fase Iniziale: il Danno si calcola sulle Stack presenti prima della "
        "perdita di Stack dello stesso turno.",
    ),
)
