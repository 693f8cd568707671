"""The `starfinder` ruleset ("Combattimento", rules/004): registers itself with the engine at import."""
from __future__ import annotations

from ...core import Setting, register
from ...recognise import Conventions
from .._turn import Rules
from . import hints as _hints
from . import step as _step
from . import tables as _tables
from .schema import POOLS as _POOLS
from .state import Fighter, PendingSave, State
from .tables import combine_multipliers

SETTINGS: tuple[Setting, ...] = (
    Setting("critical_multiplier", 2,
            "Moltiplicatore di un Colpo Critico (quante volte si tirano i danni). Il testo dice solo che il "
            "critico moltiplica i danni; 2 è il valore di Starfinder.", ours=True),
    Setting("natural_20_critical", True,
            "Un 20 naturale che colpisce è un Colpo Critico. Il testo lo chiama 'possibile Colpo Critico' "
            "senza dire come si conferma: di default nessuna conferma.", ours=True),
    Setting("round_rule", "ciclo",
            "Come si riconosce un round in un thread: 'ciclo' = un round finisce quando posta di nuovo un "
            "personaggio che ha già agito nel round; 'master' = solo le righe `Round N` del master.", ours=True),
    Setting("nonlethal_at_zero_ps", "master",
            "Cosa fa il Danno Non Letale minimo (1) quando i PS sono già a 0: il testo non lo dice. "
            "'master' = chiede una decisione e non tocca i PF; 'pf' = riduce i PF come il danno normale.",
            ours=True),
)


# PS/PF/PR in the schema, the d20 and the weapons' damage dice, the roll kinds' words and the saves' names
RULESET = register(Rules(
    id="starfinder", title="Starfinder — Combattimento (d20 contro CAE/CAC, Stamina, Ferita, Risolutezza)",
    settings=SETTINGS, initial_state=_step.initial_state, step=_step.step, characters=_hints.characters,
    next_hint=_hints.next_hint,
    conventions=Conventions.of([p.key for p in _POOLS], (20, *_tables.DAMAGE_DICE),
                               [w for w, _ in _tables.ROLL_KINDS] + ["ts"] + list(_tables.SAVES)),
    # checks of a roll against the registry alone (abilities, proficiency, rerolls, DCs): page-local
    local_codes=frozenset({"starfinder.wrong_ability", "starfinder.non_proficient", "starfinder.strength_on_ranged",
                           "starfinder.multiplied_not_rolled", "starfinder.reroll_limit", "starfinder.reroll_late",
                           "starfinder.dc_mismatch", "starfinder.wrong_save_ability"})))

__all__ = ["RULESET", "SETTINGS", "Fighter", "PendingSave", "State", "combine_multipliers"]
