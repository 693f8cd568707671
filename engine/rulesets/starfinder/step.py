"""The `starfinder` step function: one post → the new state and its verdicts, dispatched to the section modules."""
from __future__ import annotations

from typing import Any

from ...core import BadSetting
from ...history import Post, Registry, Thread
from ...verdicts import Verdict
from .._shared import canon, poster_name
from .._turn import Phase, run_phases
from . import master as MA
from . import punti_stamina as PS
from . import ripetizioni as RI
from . import schema as SC
from . import tiri_salvezza as TS
from . import tiro_per_colpire as TC
from .registro import fighter_from_registry
from .state import Fighter, State
from .turno import Turno


def initial_state(thread: Thread, registry: Registry, settings: dict[str, Any]) -> State:
    mult = settings.get("critical_multiplier")
    if not isinstance(mult, int) or isinstance(mult, bool) or mult < 1:
        raise BadSetting("starfinder: critical_multiplier deve essere un numero intero ≥ 1")
    if not isinstance(settings.get("natural_20_critical"), bool):
        raise BadSetting("starfinder: natural_20_critical deve essere true o false")
    if settings.get("round_rule") not in ("ciclo", "master"):
        raise BadSetting("starfinder: round_rule deve essere 'ciclo' o 'master'")
    if settings.get("nonlethal_at_zero_ps") not in ("master", "pf"):
        raise BadSetting("starfinder: nonlethal_at_zero_ps deve essere 'master' o 'pf'")
    fighters: dict[str, Fighter] = {}
    for name, c in registry.characters.items():
        fighters[name] = fighter_from_registry(name, c)
    return State(settings=dict(settings), registry=registry, fighters=fighters)


# each roll group's head, to the section that resolves it (a group's head is one of these three kinds)
_BY_KIND = {"attack": TC.attack, "damage": TS.damage_alone, "save": TS.saving_throw}


def _rolls(state: State, turn: Turno) -> State:
    """The post's roll groups in their order (an effect's save may follow an attack in the same post)."""
    actor = turn.actor
    for g in turn.groups:
        state = _BY_KIND[g.head.kind](state, g, actor, turn)
    return state


# what every post may hold: `Stabilizzato` lines, then its rolls (grouped, refused to the unconscious, resolved)
_ROLLS = (
    Phase("Punti Stamina e Punti Ferita", PS.stabilise),
    Phase("Ripetizioni di Tiro e Tirare Due Volte", RI.group_rolls),
    Phase("Punti Stamina e Punti Ferita", PS.unconscious),
    Phase("Combattimento", _rolls),
)
# a player's post: its turn (and the round it may open), its rolls, the saves it owed, its schema
PHASES = (
    Phase("Punti Stamina e Punti Ferita", SC.open_turn),
    Phase("Punti Stamina e Punti Ferita", PS.cycle_round),
    *_ROLLS,
    Phase("Rinunciare a un Tiro Salvezza", TS.unrolled_saves),
    Phase("Punti Stamina e Punti Ferita", SC.read),
)
# a master's post: its `Round N` line, then its rolls like anyone's
MASTER_PHASES = (Phase("Punti Stamina e Punti Ferita", MA.round_line), *_ROLLS)
# a Forumotion Game-Master post: its dice are paired with the player post it answers by the scraper, not read here
GM_BOT_PHASES = MASTER_PHASES[:2]


def step(state: State, post: Post) -> tuple[State, list[Verdict]]:
    """One post: a player's turn, a master's post or the forum's dice bot."""
    turn = Turno(post, state, canon(state, poster_name(post)))
    if post.role == "player":
        # a player post nobody can be named for: only its rolls
        return run_phases(PHASES if turn.actor else _ROLLS, state, turn), turn.verdicts
    return run_phases(GM_BOT_PHASES if post.role == "gm_bot" else MASTER_PHASES, state, turn), turn.verdicts
