"""The `guida` action table: which die for which action and phase, tie rules, kinds, and the words players write."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Phase = Literal["difensiva", "offensiva"]
Kind = Literal["principale", "secondaria", "indipendente"]
Role = Literal["offensiva", "difensiva", "generica"]

P_DADO = "Successo e Fallimento delle Azioni › Fattore Casualità"
P_ALLEATI = "Bersagli Multipli › Difesa su Alleati"


@dataclass(frozen=True, eq=False)
class ActionSpec:
    """One action of the rule text. `die_difensiva`/`die_offensiva` are the sides of the die in that phase
    (None = not allowed in that phase, 0 = allowed but no roll)."""

    key: str
    name: str
    die_difensiva: int | None
    die_offensiva: int | None
    kind: Kind
    role: Role
    paragraph: str
    tie_half_damage: bool = False  # a tie goes to the defender but the damage is halved
    intercepts: bool = False  # success leads to a Confronto di Potenza
    counter: bool = False  # Contrattacco family: continues in Fase Offensiva
    bonus: int = 0  # fixed bonus the rule text gives (Protezione +2, Spostamento +2)
    bonus_label: str = ""
    physical_only: bool = False  # Sbilanciamento: only against Attacchi Fisici Diretti
    counts_as_defense: bool = True  # answers one incoming attack (Azione Secondaria Indipendente does not)
    ally: bool = False  # "su Alleato" variants

    # One spec per action key (the ACTIONS table): hashing and comparing by key keeps the checks' caches cheap.
    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, ActionSpec) and self.key == other.key)

    @property
    def rolls(self) -> bool:
        return bool(self.die_difensiva or self.die_offensiva)

    def phases(self) -> tuple[Phase, ...]:
        out: list[Phase] = []
        if self.die_difensiva is not None:
            out.append("difensiva")
        if self.die_offensiva is not None:
            out.append("offensiva")
        return tuple(out)

    def die(self, phase: Phase) -> int | None:
        return self.die_difensiva if phase == "difensiva" else self.die_offensiva


def _spec(*args, **kw) -> ActionSpec:
    return ActionSpec(*args, **kw)


_C = "Successo e Fallimento delle Azioni › Fattore Casualità › "
ACTIONS: dict[str, ActionSpec] = {a.key: a for a in (
    _spec("preparazione", "Preparazione", None, 0, "principale", "generica", _C + "Preparazione",
          counts_as_defense=False),
    _spec("spostamento", "Spostamento", None, 15, "principale", "generica", _C + "Spostamento",
          bonus=2, bonus_label="Spostamento", counts_as_defense=False),
    _spec("attacco", "Azione Offensiva", None, 12, "principale", "offensiva", _C + "Azione Offensiva",
          counts_as_defense=False),
    _spec("generica", "Azione Generica", None, 12, "principale", "generica", _C + "Azione Offensiva",
          counts_as_defense=False),
    _spec("difesa_nulla", "Difesa Nulla", 0, None, "principale", "difensiva", _C + "Difesa Nulla"),
    _spec("protezione", "Protezione", 24, None, "principale", "difensiva", _C + "Protezione",
          bonus=2, bonus_label="Bonus Protezione"),
    _spec("contrattacco", "Contrattacco", 18, 12, "principale", "difensiva", _C + "Contrattacco",
          intercepts=True, counter=True),
    _spec("contrattacco_diretto", "Contrattacco Diretto", 18, 12, "principale", "difensiva",
          _C + "Contrattacco Diretto", counter=True),
    _spec("contrattacco_generica", "Contrattacco su Azione Generica", 18, 12, "principale", "difensiva",
          _C + "Contrattacco su Azione Generica", counter=True),
    _spec("parata", "Parata", 18, None, "principale", "difensiva", _C + "Parata",
          tie_half_damage=True, intercepts=True),
    _spec("secondaria_indipendente", "Azione Secondaria Indipendente", 18, None, "indipendente", "difensiva",
          _C + "Azione Secondaria Indipendente", counts_as_defense=False),
    _spec("secondaria", "Azione Secondaria", 0, 0, "secondaria", "generica",
          "Struttura dei Turni › Azioni Principali e Secondarie", counts_as_defense=False),
    _spec("schivata", "Schivata", 12, None, "principale", "difensiva", _C + "Schivata", tie_half_damage=True),
    _spec("sbilanciamento", "Sbilanciamento", 8, None, "principale", "difensiva", _C + "Sbilanciamento",
          tie_half_damage=True, physical_only=True),
    _spec("liberazione", "Tentativo di Liberazione", 12, 12, "indipendente", "generica",
          "Costrizione e Liberazione › Liberazione", counts_as_defense=False),
    _spec("percezione", "Percezione", 12, 12, "indipendente", "generica", "Percezione e Mimetizzazione › Percezione",
          counts_as_defense=False),
    _spec("mimetizzazione", "Mimetizzazione", 12, 12, "indipendente", "generica",
          "Percezione e Mimetizzazione › Mimetizzazione", counts_as_defense=False),
    _spec("mascheramento", "Mascheramento", 12, 12, "indipendente", "generica",
          "Percezione e Mimetizzazione › Mascheramento", counts_as_defense=False),
    _spec("reazione", "Reazione", 12, None, "indipendente", "difensiva", "Sbalzo e Reazione › Reazione",
          counts_as_defense=False),
    _spec("difesa_nulla_alleato", "Difesa Nulla su Alleato", 24, None, "principale", "difensiva",
          P_ALLEATI + " › Difesa Nulla su Alleato", bonus=2, bonus_label="Bonus Protezione", ally=True),
    _spec("protezione_alleato", "Protezione su Alleato", 24, None, "principale", "difensiva",
          P_ALLEATI + " › Protezione su Alleato", bonus=2, bonus_label="Bonus Protezione", ally=True),
    _spec("contrattacco_alleato", "Contrattacco per Alleato", 18, 12, "principale", "difensiva",
          P_ALLEATI + " › Contrattacco per Alleato", intercepts=True, counter=True, ally=True),
    _spec("parata_alleato", "Parata per Alleato", 18, None, "principale", "difensiva",
          P_ALLEATI + " › Parata per Alleato", tie_half_damage=True, intercepts=True, ally=True),
    _spec("schivata_alleato", "Schivata con Alleato", 18, None, "principale", "difensiva",
          P_ALLEATI + " › Schivata con Alleato", tie_half_damage=True, ally=True),
)}

# Words players write in labels → action key. Matched on the normalised action text (lower case, no accents),
# longest alias first, so "contrattacco diretto" wins over "contrattacco".
ALIASES: dict[str, str] = {
    "preparazione": "preparazione",
    "spostamento": "spostamento", "movimento": "spostamento", "fuga": "spostamento",
    "attacco": "attacco", "azione offensiva": "attacco", "offensiva": "attacco", "offesa": "attacco",
    "attacco mirato": "attacco", "attacco a bersagli multipli": "attacco", "attacco multiplo": "attacco",
    "attacchi multipli": "attacco", "attacchi mirati": "attacco",
    "attacco ad area": "attacco", "attacco ad area totale": "attacco", "colpo": "attacco",
    "attacco alla cieca": "attacco", "costrizione": "attacco", "tecnica offensiva": "attacco",
    "azione generica": "generica", "generica": "generica", "cura": "generica", "cura principale": "generica",
    "creazione area": "generica", "area di controllo": "generica",
    "difesa nulla": "difesa_nulla", "nessuna difesa": "difesa_nulla",
    "protezione": "protezione",
    "contrattacco": "contrattacco", "contro attacco": "contrattacco", "controattacco": "contrattacco",
    "contrattacco diretto": "contrattacco_diretto", "controattacco diretto": "contrattacco_diretto",
    "contrattacco su azione generica": "contrattacco_generica",
    "contrattacco azione generica": "contrattacco_generica",
    "contrattacco su generica": "contrattacco_generica",
    "parata": "parata", "blocco": "parata", "intercettazione": "parata",
    "azione secondaria indipendente": "secondaria_indipendente", "secondaria indipendente": "secondaria_indipendente",
    "azione indipendente": "secondaria_indipendente",
    "azione secondaria": "secondaria", "secondaria": "secondaria",
    "schivata": "schivata", "schivare": "schivata", "evasione": "schivata",
    "sbilanciamento": "sbilanciamento",
    "liberazione": "liberazione", "tentativo di liberazione": "liberazione",
    "liberazione impropria": "liberazione",
    "percezione": "percezione", "percezione della reiatsu": "percezione",
    "mimetizzazione": "mimetizzazione", "camuffamento": "mimetizzazione", "camuffamento spirituale": "mimetizzazione",
    "camuffamento della reiatsu": "mimetizzazione",
    "mascheramento": "mascheramento",
    "reazione": "reazione",
    "difesa nulla su alleato": "difesa_nulla_alleato",
    "protezione su alleato": "protezione_alleato", "protezione alleato": "protezione_alleato",
    "protezione per alleato": "protezione_alleato",
    "contrattacco per alleato": "contrattacco_alleato", "contrattacco su alleato": "contrattacco_alleato",
    "parata per alleato": "parata_alleato", "parata su alleato": "parata_alleato",
    "schivata con alleato": "schivata_alleato", "schivata su alleato": "schivata_alleato",
}
_SORTED_ALIASES = sorted(ALIASES, key=len, reverse=True)
_NON_WORD = re.compile(r"[^a-z0-9 ]+")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=4096)
def normalise(text: str) -> str:
    """Lower case, accents removed, punctuation to spaces: `"Contrattacco  Diretto!"` → `"contrattacco diretto"`."""
    text = unicodedata.normalize("NFKD", text or "")
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text)).strip()


@lru_cache(maxsize=4096)
def classify(action_text: str | None) -> ActionSpec | None:
    """The action a label names, or None. An exact alias wins; then the longest alias the text starts with;
    then the longest alias the text contains as whole words ("Attacco Mirato Testa" → Azione Offensiva)."""
    if not action_text:
        return None
    norm = normalise(action_text)
    if not norm:
        return None
    key = ALIASES.get(norm)
    if key is None:
        padded = f" {norm} "
        for alias in _SORTED_ALIASES:
            if norm.startswith(alias + " "):
                key = ALIASES[alias]
                break
        else:
            for alias in _SORTED_ALIASES:
                if f" {alias} " in padded:
                    key = ALIASES[alias]
                    break
    return ACTIONS[key] if key else None


def phase_of(spec: ActionSpec, sides: int, *, defensive_open: bool, has_incoming: bool,
             counter_in_defense: bool) -> Phase:
    """Which phase a roll of `spec` belongs to. Actions of one phase only are that phase; for the
    Contrattacco family (1d18 in Fase Difensiva, 1d12 in Fase Offensiva) the die decides, then the context:
    the first one while attacks are incoming is the defensive one, the next its offensive follow-up."""
    phases = _PHASES.get(spec.key)
    if phases is None or phases[0] is not spec:  # not one of the table's specs: ask it
        phases = (spec, spec.phases())
    phases = phases[1]
    if len(phases) == 1:
        return phases[0]
    if spec.die_difensiva and spec.die_offensiva and spec.die_difensiva != spec.die_offensiva:
        if sides == spec.die_difensiva:
            return "difensiva"
        if sides == spec.die_offensiva:
            return "offensiva"
    if spec.counter:
        if has_incoming and defensive_open and not counter_in_defense:
            return "difensiva"
        return "offensiva"
    return "difensiva" if defensive_open and has_incoming else "offensiva"


# The phases of each action of the table, computed once (phase_of runs for every roll).
_PHASES: dict[str, tuple[ActionSpec, tuple[Phase, ...]]] = {k: (a, a.phases()) for k, a in ACTIONS.items()}


# --- factors (labels of the modifiers in a dice tag) ----------------------------------------------

DISTANZA_RANGE = (-6, 2)
MIRA_RANGE = (-3, 0)
MIRA_VALUES = {"corpo": 0, "arti": -1, "braccia": -1, "braccio": -1, "gambe": -1, "gamba": -1, "testa": -3}

Factor = Literal["distanza", "mira", "destrezza", "sbilanciamento", "stordimento", "sbalzo", "costrizione",
                 "spostamento", "bersagli", "protezione", "preparazione", "contrattacco", "sorpresa", "spalle",
                 "prevedibile_attacco", "prevedibile_difesa", "storpiatura", "alleato", "allentamento", "altro"]

_FACTOR_WORDS: tuple[tuple[str, Factor], ...] = (
    ("attacco prevedibile", "prevedibile_attacco"),
    ("difesa prevedibile", "prevedibile_difesa"),
    ("bersagli multipli", "bersagli"), ("bersaglio multiplo", "bersagli"), ("multipl", "bersagli"),
    ("costrizione", "costrizione"),
    ("sbalzo", "sbalzo"),
    ("sbilanciament", "sbilanciamento"),
    ("stordiment", "stordimento"),
    ("storpiatura", "storpiatura"),
    # the Difesa Nulla su Alleato's +1 per 5 Destrezza is not the Fattore Statistica
    ("destrezza su alleato", "alleato"), ("destrezza per alleato", "alleato"), ("destrezza alleato", "alleato"),
    ("destrezza", "destrezza"), ("des", "destrezza"), ("dex", "destrezza"), ("fattore statistica", "destrezza"),
    ("mirato", "mira"), ("mira", "mira"),
    ("raggio", "distanza"), ("distanza", "distanza"), ("gittata", "distanza"), ("range", "distanza"),
    ("bonus protezione", "protezione"), ("protezione", "protezione"),
    ("preparazione", "preparazione"),
    ("contrattacco", "contrattacco"),
    ("sorpresa", "sorpresa"), ("spalle", "spalle"),
    ("spostamento", "spostamento"), ("movimento", "spostamento"),
    ("alleato", "alleato"),
    ("allentament", "allentamento"),
)


@lru_cache(maxsize=4096)
def factor_of(label: str) -> Factor:
    """Which factor a modifier's label names (`"Raggio Corto"` → distanza, `"Mirato Arti"` → mira)."""
    norm = normalise(label)
    words = norm.split()
    for word, factor in _FACTOR_WORDS:
        if " " in word or len(word) > 4:
            if word in norm:
                return factor
        elif word in words:
            return factor
    return "altro"


@lru_cache(maxsize=4096)
def mira_target(label: str) -> str | None:
    """The body part a Mira label names: "corpo", "arti"/"braccia"/"gambe", "testa"."""
    for word in normalise(label).split():
        if word in MIRA_VALUES:
            return word
    return None


def limb_stack(part: str | None) -> str:
    """Mira agli Arti: arms → Storpiatura Debilitante, legs → Storpiatura Articolare (arms when unspecified)."""
    return "Storpiatura Articolare" if part in ("gambe", "gamba") else "Storpiatura Debilitante"
