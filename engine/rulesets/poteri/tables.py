"""The `poteri` rule tables as data: power types, PF → Intensità, damage cap, cures, slots, rule paragraphs."""
from __future__ import annotations

POWER_TYPES = ("Attacco", "Curativo", "Debilitante", "Mentale", "Difensivo", "Narrativo")

PF_MIN, PF_MAX = 1, 3  # "da 1 a 3 PF"
INTENSITA = {1: 0, 2: 1, 3: 2}  # "PF spesi / Intensità"
DAMAGE_BASE = 3  # "3 + Nd6"
DAMAGE_DIE = 6  # "3 + Nd6"
POWER_DIE = 100  # the roll of a Power under the default roll_system ('d100_sotto', ours)
DAMAGE_CAP = 9  # "Il danno possiede sempre un limite massimo di: 9 PD"
CURE = {"successo": 2, "critico": 4}  # "2 PD con un Successo, 4 PD con un Successo Critico"
SLOTS = 2  # "Ogni personaggio dispone complessivamente di: 2 slot magici"
RISSA_PF = 1  # "il relativo 1 PF" (Azioni imposte e Fatica)

# what counts as an Attacco for ending a Difensivo ("Sono considerati Attacchi")
ATTACK_ACTIONS = ("rissa", "attacco", "arma", "colpo", "morso", "artigli", "assalto")
# What a roll label's first words make it, checked in order ("rissa" before the other attack words).
ROLL_KINDS: tuple[tuple[str, str], ...] = (
    ("potere", "power"), ("lancio", "power"), ("dann", "damage"), ("resistenza", "resist"),
    ("liberazione", "liberation"), ("liberarsi", "liberation"), ("prova di liberazione", "liberation"),
    ("rissa", "rissa"), *((w, "weapon") for w in ATTACK_ACTIONS),
)

R_TYPES = "Combattimento magico › tipologia del Potere"
R_ATTACK = "Poteri di Attacco"
R_PF = "Poteri di Attacco › Spendere PF"
R_ROLL = "Poteri di Attacco › Tiro del Potere"
R_FAIL = "Poteri di Attacco › Fallimento"
R_CRIT = "Poteri di Attacco › Successo Critico"
R_DAMAGE = "Poteri di Attacco › Danno degli Attacchi"
R_INTENSITY = "Poteri di Attacco › Intensità"
R_RESIST = "Poteri di Attacco › Resistenza"
R_CRIT_ATTACK = "Critici degli Attacchi magici"
R_CURE = "Poteri Curativi"
R_DEBIL = "Poteri Debilitanti"
R_MENTAL = "Poteri Mentali"
R_DEFENSIVE = "Poteri Difensivi"
R_NARRATIVE = "Poteri Narrativi"
R_SLOTS = "Slot magici"
R_TIMING = "Prima e Dopo"
R_ONE = "Un Potere per turno"
R_DURATION = "Durata degli effetti"
R_NO_ATTACK_CASTER = "Effetti che impediscono di attaccare il caster"
R_FATIGUE = "Azioni imposte e Fatica"
R_EXAMPLE = "Esempio completo di Attacco magico"
