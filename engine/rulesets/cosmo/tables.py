"""Rule paragraphs, settings and small tables of the `cosmo` ruleset (rule text 001)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core import BadSetting, Setting
from .._shared import fold as shared_fold

# --- rule paragraphs (as the text titles them) ----------------------------------------------------
R_TAB5 = "Basi › Tabella 5"
R_ONESHOT = "Basi › Tabella 5 › One shot"
R_ATTACK = "Attaccare"
R_COSMO = "Attaccare › uso del cosmo (scalato dal residuo)"
R_DEFEND = "Difendere › Difendere / Schivare"
R_INCASSARE = "Difendere › Incassare (farsi colpire)"
R_COUNTER = "Difendere › Contrattaccare"
R_SCONFITTO = "Status speciali › Sconfitto"
R_SVENUTO = "Status speciali › Svenuto"
R_AFFATICATO = "Status speciali › Affaticato"
R_BLOCCATO = "Status speciali › Bloccato"
R_GHERMITO = "Status speciali › Ghermito"
R_MALUS = "Malus alle difese dei personaggi bloccati/ghermiti"
R_REFLECTED = "Malus alle difese dei personaggi bloccati/ghermiti › Special Bloccante/Ghermente riflessa"
R_ENTRANCE = "Azione di ingresso legata ad un attacco"
R_SCHEMA = "Schema del post (Punti Salute e Cosmo)"

# --- the text's own numbers ------------------------------------------------------------------------
BLOCK_MALUS_STEP = 80  # "1 turno di blocco rimasto: Stat di difesa – 80" … up to 5 turns (400)
BLOCK_MALUS_MAX_TURNS = 5
SCONFITTO_MAX_PV = 200  # "qualora la vita sia inferiore a 200"
COUNTER_DIE = (1, 100)  # "tirare un d100"

# The two basic attacks: skill → (stat, nature). "fisico (basato su Forza, che richiede l'uso di Sblocco
# Potenziale Fisico) e mentale (basato su Mente, che richiede l'uso di Telecinesi)".
FISICO, MENTALE = "fisico", "mentale"
BASIC_SKILLS = {"sblocco potenziale fisico": ("Forza", FISICO), "spf": ("Forza", FISICO),
                "telecinesi": ("Mente", MENTALE)}
SKILL_NAMES = {FISICO: "Sblocco Potenziale Fisico", MENTALE: "Telecinesi"}
ATTACK_STATS = {"forza": FISICO, "mente": MENTALE}
DEFENCE_STAT = {FISICO: "Resistenza", MENTALE: "Volontà"}  # "Statistica Primaria di Difesa"
STAT_NATURE = {"forza": FISICO, "resistenza": FISICO, "mente": MENTALE, "volonta": MENTALE}
STAT_CANON = {"forza": "Forza", "mente": "Mente", "resistenza": "Resistenza", "volonta": "Volontà",
              "reattivita": "Reattività", "agilita": "Agilità", "tempra": "Tempra"}
ALLOWED_WHILE_BLOCKED = ("Telepatia", "Chiaroveggenza")
MODERATO = "Moderato"
LEGGERO = "Leggero"
ONESHOT_KEYS = ("oneshot", "one shot")


def fold(text: str | None) -> str:
    """Lower-case, accents and apostrophes removed, spaces collapsed: how cosmo compares names."""
    return shared_fold(text, drop="'")


def is_oneshot(band: str | None) -> bool:
    return fold(band).replace("-", " ") in ONESHOT_KEYS


# --- Tabella 5 ---------------------------------------------------------------------------------------

# Only what the text's examples pin down: 20 and 30 → Leggero, 60 → Moderato, 130 → Pesante. The bands'
# ranges, the damage dice (with / without armour) and the block turns are NOT in the text.
DEFAULT_TABELLA5: tuple[dict[str, Any], ...] = (
    {"nome": "Leggero", "valori": [20, 30]},
    {"nome": "Moderato", "valori": [60]},
    {"nome": "Pesante", "valori": [130]},
)


@dataclass(frozen=True)
class Band:
    """One row of Tabella 5. `values` (exact known points) or `low`..`high` (a range, `high` None = open)."""

    name: str
    low: int | None = None
    high: int | None = None
    values: tuple[int, ...] = ()
    die_armour: str | None = None  # "Con Armatura"
    die_no_armour: str | None = None  # "Senza Armatura"
    turns: int | None = None  # Bloccante / Ghermente / Teleportante / Dimensionale

    def covers(self, diff: int) -> bool:
        if diff in self.values:
            return True
        if self.low is None:
            return False
        return diff >= self.low and (self.high is None or diff <= self.high)


_DIE = re.compile(r"^\s*(\d*)d(\d+)\s*([+-]\s*\d+)?\s*$", re.I)


def _int_or_none(v: Any, what: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadSetting(f"cosmo: tabella5 {what} deve essere un numero intero")
    return v


def parse_tabella5(value: Any) -> tuple[Band, ...]:
    """The `tabella5` setting → bands, lightest first. Raises BadSetting on a malformed table."""
    if not isinstance(value, (list, tuple)) or not value:
        raise BadSetting("cosmo: tabella5 deve essere un elenco non vuoto di fasce")
    bands = []
    for row in value:
        if not isinstance(row, dict) or not isinstance(row.get("nome"), str) or not row["nome"].strip():
            raise BadSetting("cosmo: ogni fascia di tabella5 vuole un 'nome'")
        vals = row.get("valori", ())
        if not isinstance(vals, (list, tuple)) or any(isinstance(v, bool) or not isinstance(v, int) for v in vals):
            raise BadSetting("cosmo: i 'valori' di tabella5 devono essere un elenco di numeri interi")
        low = _int_or_none(row.get("min"), "'min'")
        high = _int_or_none(row.get("max"), "'max'")
        if high is not None and low is None:
            raise BadSetting("cosmo: una fascia di tabella5 con 'max' vuole anche 'min'")
        dice = []
        for key in ("con_armatura", "senza_armatura"):
            d = row.get(key)
            if d is not None and (not isinstance(d, str) or not _DIE.match(d)):
                raise BadSetting(f"cosmo: '{key}' di tabella5 deve essere un'espressione di dadi come '1d20'")
            dice.append(_norm_die(d) if d else None)
        turns = _int_or_none(row.get("turni"), "'turni'")
        if not vals and low is None and not is_oneshot(row["nome"]):
            raise BadSetting(f"cosmo: la fascia {row['nome']!r} di tabella5 non ha né 'valori' né 'min'")
        bands.append(Band(row["nome"].strip(), low, high, tuple(vals), dice[0], dice[1], turns))
    return tuple(bands)


def _norm_die(expr: str) -> str:
    m = _DIE.match(expr)
    assert m
    const = (m.group(3) or "").replace(" ", "")
    return f"{m.group(1) or 1}d{m.group(2)}{const}"


def norm_die(expr: str) -> str:
    return _norm_die(expr) if _DIE.match(expr or "") else (expr or "")


def band_for(diff: int, bands: tuple[Band, ...]) -> Band | None:
    """The band covering a positive pool difference, None when the table does not say."""
    for b in bands:
        if b.covers(diff):
            return b
    return None


def band_named(name: str | None, bands: tuple[Band, ...]) -> Band | None:
    key = fold(name)
    for b in bands:
        if fold(b.name) == key:
            return b
    return None


def band_rank(name: str | None, bands: tuple[Band, ...]) -> int | None:
    key = fold(name)
    for i, b in enumerate(bands):
        if fold(b.name) == key:
            return i
    return None


def block_malus(turns: int | None, lowered: int = 0) -> int | None:
    """Defence malus of a blocked fighter: 80 per remaining block turn, up to 5 (400); `lowered` categories less."""
    if turns is None:
        return None
    n = max(0, min(turns, BLOCK_MALUS_MAX_TURNS) - lowered)
    return BLOCK_MALUS_STEP * n


def counter_threshold(reattivita: int) -> int:
    """`d100 ≤ Reattività / 10, arrotondato per difetto`: 235 → 23."""
    return reattivita // 10


# --- settings ----------------------------------------------------------------------------------------

SETTINGS: tuple[Setting, ...] = (
    Setting("tabella5", [dict(b) for b in DEFAULT_TABELLA5],
            "Tabella 5 del forum: fasce di differenza tra i Pool → nome del danno, dado 'Con Armatura' / 'Senza "
            "Armatura', turni di Bloccante/Ghermente. Ogni fascia: {nome, min, max | valori, con_armatura, "
            "senza_armatura, turni}, dalla più leggera. Il testo NON la riporta: di serie solo i punti fissati "
            "dai suoi esempi (20 e 30 → Leggero, 60 → Moderato, 130 → Pesante); fuori da questi serve una "
            "decisione (ruling.needed).", ours=True, required=True),
    Setting("level_malus", None,
            "Malus alla difesa per differenza di livello tra il colpo in arrivo e la difesa (Base, Special 1, "
            "Special 2): {\"1\": N, \"2\": M} per 1 o 2 livelli di differenza. Il testo lo nomina ma non dà i "
            "numeri: senza valore serve una decisione.", ours=True, required=True),
    Setting("special_defence_other_nature", "incassare",
            "Una difesa con una Special vale solo per la sua natura (fisica o mentale); contro un colpo dell'altra "
            "natura: 'incassare' = si subisce come Incassare (lettura nostra di 'senza utilizzare special, la "
            "difesa avrà valenza sia su Resistenza sia su Volontà'); 'valida' = vale comunque.", ours=True),
    Setting("round_rule", "ciclo",
            "Come finisce un round (turni di blocco, danno Leggero del Ghermito): 'ciclo' = quando posta di "
            "nuovo un personaggio che ha già agito nel round; 'master' = solo le righe `Round N` del master.",
            ours=True),
    Setting("natural_defence_rounding", "difetto",
            "Difesa Naturale = metà della statistica di difesa: il testo non dice come si arrotonda una statistica "
            "dispari. 'difetto' (come per la Reattività / 10) o 'eccesso'.", ours=True),
    Setting("oneshot_ends_fight", True,
            "Un danno One shot fa svenire chi lo subisce e termina lo scontro (dal testo).", ours=False),
)


def check_settings(settings: dict[str, Any]) -> tuple[Band, ...]:
    bands = parse_tabella5(settings.get("tabella5"))
    lm = settings.get("level_malus")
    if lm is not None:
        if not isinstance(lm, dict) or any(
                str(k) not in ("1", "2") or isinstance(v, bool) or not isinstance(v, int) or v < 0
                for k, v in lm.items()):
            raise BadSetting("cosmo: level_malus deve essere {\"1\": N, \"2\": M} con numeri interi non negativi")
    if settings.get("special_defence_other_nature") not in ("incassare", "valida"):
        raise BadSetting("cosmo: special_defence_other_nature deve essere 'incassare' o 'valida'")
    if settings.get("round_rule") not in ("ciclo", "master"):
        raise BadSetting("cosmo: round_rule deve essere 'ciclo' o 'master'")
    if settings.get("natural_defence_rounding") not in ("difetto", "eccesso"):
        raise BadSetting("cosmo: natural_defence_rounding deve essere 'difetto' o 'eccesso'")
    if not isinstance(settings.get("oneshot_ends_fight"), bool):
        raise BadSetting("cosmo: oneshot_ends_fight deve essere true o false")
    return bands


def is_default_table(settings: dict[str, Any]) -> bool:
    return list(settings.get("tabella5") or []) == [dict(b) for b in DEFAULT_TABELLA5]
