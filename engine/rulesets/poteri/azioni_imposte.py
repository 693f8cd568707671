"""Azioni imposte e Fatica: Rissa and weapon attacks, their PF paid by the body that acts, imposed or not."""
from __future__ import annotations

from dataclasses import replace

from .._shared import canon, ensure_fighter, fold, set_fighter
from . import attaccare_il_caster as AC
from . import difensivi as DI
from . import tables as T
from .state import Fighter, State
from .turno import Item, Turno


def physical_attack(state: State, turn: Turno, it: Item) -> State:
    """A Rissa or a weapon attack: by the poster (it ends its Difensivi) or imposed on another by a Power."""
    poster = turn.poster
    actor = canon(state, it.label.actor) or poster
    target = canon(state, it.label.targets[0]) if it.label.targets else None
    if actor is None:
        return state
    state = ensure_fighter(state, actor, Fighter)
    forced = poster is not None and actor != poster
    kind = "Rissa" if it.kind == "rissa" else "Arma"
    if not forced:
        state = DI.end_defensives(state, turn, actor, it.index)
    else:
        controls = any(e.caster == poster and e.target == actor and e.type in ("Mentale", "Debilitante")
                       for e in state.effects)
        if not controls:
            turn.add("poteri.forced_without_control",
                     f"{poster} fa agire {actor} senza un Potere attivo che lo consenta.", T.R_MENTAL,
                     roll=it.index, expected="Potere Mentale attivo", found=None)
    state, _ = AC.attack_checks(state, turn, actor, target, kind, it)
    if it.kind == "rissa":
        f = state.fighters[actor]
        if f.pf is not None:
            if f.pf < T.RISSA_PF:
                turn.add("poteri.pf_exceeded", f"{actor} non ha il PF per la Rissa.", T.R_FATIGUE,
                         roll=it.index, expected=T.RISSA_PF, found=f.pf)
            else:
                state = set_fighter(state, replace(f, pf=f.pf - T.RISSA_PF, touched=f.touched or not f.seen,
                                                   since=f.since + ((-T.RISSA_PF, "PF", "Rissa"),)))
        if forced and turn.post.schema and turn.post.schema.registro:
            for entry in turn.post.schema.registro:
                if entry.resource == "PF" and entry.amount < 0 and "rissa" in fold(entry.label):
                    turn.add("poteri.fatigue_wrong_payer",
                             f"La Rissa imposta la paga {actor}, il cui corpo attacca, non {poster}.",
                             T.R_FATIGUE, roll=it.index, expected=actor, found=poster)
        turn.add("ruling.needed", f"Esito della Rissa di {actor} contro {target}: lo decide il master "
                 "(il testo non ne dà il calcolo).", T.R_FATIGUE, roll=it.index, expected=None, found=None)
    return state
