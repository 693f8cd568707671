"""Starfinder's rule tables as data: damage types → CA, saves → abilities, label words, rule paragraphs."""
from __future__ import annotations

from .._shared import fold

# "Classe Armatura di Energia": acido, freddo, elettricità, fuoco, sonoro (Italian and English abbreviations).
ENERGY_TYPES = frozenset({
    "acido", "freddo", "elettricita", "fuoco", "sonoro", "energia",
    "ac", "fr", "el", "fu", "so", "a", "c", "e", "f", "acid", "cold", "electricity", "fire", "sonic",
})
# "Classe Armatura Cinetica": contundente, perforante, tagliente (and falls, crushing, unspecified).
KINETIC_TYPES = frozenset({
    "contundente", "perforante", "tagliente", "co", "pe", "ta", "b", "p", "s",
    "bludgeoning", "piercing", "slashing", "caduta", "schiacciamento", "soffocamento",
})

ABILITIES = {
    "forza": "Forza", "for": "Forza", "str": "Forza",
    "destrezza": "Destrezza", "des": "Destrezza", "dex": "Destrezza",
    "costituzione": "Costituzione", "cos": "Costituzione", "con": "Costituzione",
    "intelligenza": "Intelligenza", "int": "Intelligenza",
    "saggezza": "Saggezza", "sag": "Saggezza", "wis": "Saggezza",
    "carisma": "Carisma", "car": "Carisma", "cha": "Carisma",
}

SAVES = {"tempra": "Tempra", "riflessi": "Riflessi", "volonta": "Volontà",
         "fortitude": "Tempra", "reflex": "Riflessi", "will": "Volontà"}
# What a roll label's first words make it, checked in order (a save named alone is read by `save_of`).
ROLL_KINDS: tuple[tuple[str, str], ...] = (
    ("ripetizione", "reroll"), ("ripeti", "reroll"), ("secondo tiro", "twice"), ("tira due volte", "twice"),
    ("tiro doppio", "twice"), ("tiro salvezza", "save"), ("ts ", "save"), ("attacc", "attack"),
    ("tiro per colpire", "attack"), ("dann", "damage"),
)
DAMAGE_DICE = (4, 6, 8, 10, 12)  # the weapons' damage dice (Nd4 … Nd12)
SAVE_ABILITY = {"Tempra": "Costituzione", "Riflessi": "Destrezza", "Volontà": "Saggezza"}

BAB_LABELS = frozenset({"bab", "bonus di attacco base", "attacco base", "bonus attacco base"})
NON_PROFICIENT_LABELS = frozenset({"non competente", "non competenza", "senza competenza", "arma non competente"})

# attack modes of a weapon: which ability goes to the attack roll and whether Forza goes to damage
MODES = {
    "mischia": ("Forza", True),
    "lancio": ("Forza", True),
    "distanza": ("Destrezza", False),
    "granata": ("Forza", False),  # thrown, but "non si aggiunge il modificatore di Forza al danno delle granate"
}

SAVE_RESULTS = {"nega": "Nega", "parziale": "Parziale", "dimezza": "Dimezza", "meta danno": "Dimezza",
                "dubita": "Nega", "nessuno": "Nessuno"}

R_ATTACK = "Combattimento › Tiro per Colpire"
R_RANGED = "Combattimento › Attacchi a Distanza"
R_MELEE = "Combattimento › Attacchi in Mischia"
R_NATURAL = "Combattimento › Fallimenti e Successi Automatici"
R_CA = "Combattimento › Classe Armatura (CA)"
R_CAE = "Combattimento › Classe Armatura di Energia (CAE)"
R_CAC = "Combattimento › Classe Armatura Cinetica (CAC)"
R_DAMAGE = "Combattimento › Danno"
R_STRENGTH = "Combattimento › Danno › Modificatore di Forza"
R_MULTIPLY = "Combattimento › Danno › Moltiplicare i Danni"
R_MIN_DAMAGE = "Combattimento › Danno › Danno Minimo"
R_POOLS = "Combattimento › Punti Stamina e Punti Ferita"
R_SAVES = "Tiri Salvezza"
R_SAVE_TYPES = "Tiri Salvezza › Tipi di Tiro Salvezza"
R_DC = "Tiri Salvezza nel Gioco › Classe Difficoltà (CD)"
R_SAVE_NATURAL = "Tiri Salvezza nel Gioco › Successi e Fallimenti Automatici"
R_RENOUNCE = "Tiri Salvezza nel Gioco › Rinunciare a un Tiro Salvezza"
R_SAVE_TERMS = "Tiri Salvezza nel Gioco › Terminologia dei Tiri Salvezza"
R_MULTIPLY_TWICE = "Altri Termini Regolistici › Moltiplicare Più di Una Volta"
R_ROUND = "Altri Termini Regolistici › Arrotondare"
R_WEAPON_PROF = "Altri Termini Regolistici › Competenza nelle Armi"
R_ARMOUR_PROF = "Altri Termini Regolistici › Competenza nelle Armature"
R_POWERED = "Altri Termini Regolistici › Armature Potenziate"
R_REROLL = "Altri Termini Regolistici › Ripetizioni di Tiro e Tirare Due Volte"


def ca_for_damage_type(damage_type: str | None) -> str:
    """CAE only when every listed damage type is energy; anything kinetic, unspecified or unknown → CAC."""
    if not damage_type:
        return "CAC"
    parts = [fold(p) for p in damage_type.replace("/", ",").replace("&", ",").replace("+", ",").split(",")]
    parts = [p for p in parts if p]
    if parts and all(p in ENERGY_TYPES for p in parts):
        return "CAE"
    return "CAC"


def ability_of(label: str) -> str | None:
    words = fold(label).replace("mod.", "").replace("modificatore di", "").replace("mod ", "").split()
    for w in words:
        if w in ABILITIES:
            return ABILITIES[w]
    return None


def save_of(label: str) -> str | None:
    for w in fold(label).split():
        if w in SAVES:
            return SAVES[w]
    return None


def combine_multipliers(multipliers: list[int] | tuple[int, ...]) -> int:
    """×2 and ×2 make ×3: each extra multiplier adds its value − 1 to the first ("Moltiplicare Più di Una Volta")."""
    if not multipliers:
        return 1
    first, *others = multipliers
    return first + sum(m - 1 for m in others)


def ability_modifier(score: int) -> int:
    """Modifier of an ability score, rounding down (−1 for 8 and 9)."""
    return (score - 10) // 2
