"""The `poteri` ruleset ("Combattimento magico", rules/002): registers itself with the engine at import."""
from __future__ import annotations

from ...core import Setting, register
from ...recognise import Conventions
from .._turn import Rules
from . import hints as _hints
from . import schema as _schema
from . import step as _step
from . import tables as T
from .state import Effect, Fighter, Pending, State

SETTINGS: tuple[Setting, ...] = (
    Setting("roll_system", "d100_sotto",
            "Come un tiro dà esito e margine (il testo dà i margini ma non il tiro). 'd100_sotto': 1d100 ≤ "
            "valore riesce, margine = valore − dado; 'dichiarato': solo esito e margine scritti nel post. Un "
            "margine scritto nel post vale sempre.", ours=True),
    Setting("critical_max", 5,
            "Con 'd100_sotto', un dado ≤ questo numero (e ≤ valore) è un Successo Critico.", ours=True),
    Setting("partial_damage", "metà",
            "Danno parziale quando la Resistenza riesce con margine inferiore (il testo: 'calcolata "
            "automaticamente'). 'metà' = danno pieno / 2 per difetto; 'proporzionale' = danno × (Potere + "
            "Intensità − margine Resistenza) / (Potere + Intensità), per difetto.", ours=True),
    Setting("slots", T.SLOTS, "Slot magici per personaggio.", ours=False),
    Setting("damage_cap", T.DAMAGE_CAP, "Danno massimo di un normale Potere di Attacco (PD).", ours=False),
)

# PF/PD in the schema, the Power's d100 and the damage's d6, the roll kinds' words
RULESET = register(Rules(
    id="poteri", title="Poteri — Combattimento magico (PF, PD, Intensità, Resistenza, slot)", settings=SETTINGS,
    initial_state=_step.initial_state, step=_step.step, characters=_hints.characters, next_hint=_hints.next_hint,
    conventions=Conventions.of([p.key for p in _schema.POOLS], (T.POWER_DIE, T.DAMAGE_DIE),
                               [w for w, _ in T.ROLL_KINDS])))

__all__ = ["RULESET", "SETTINGS", "Effect", "Fighter", "Pending", "State"]
