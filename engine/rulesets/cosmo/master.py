"""Master posts: statuses, block turns and rounds it declares, its rulings on the verdicts."""
from __future__ import annotations

import re
from dataclasses import replace

from .._shared import ensure_fighter, set_fighter
from . import registro as R
from . import tables as T
from .lines import master_lines, master_round, master_turns
from .state import Fighter, State
from .status import end_round
from .tables import fold
from .turno import _Ctx

_RULING_LINE = re.compile(
    r"(?:\[ruling\]\s*|^\s*ruling\s*:\s*)([a-z_]+\.[a-z_]+)\s+post\s+#?([\w.-]+)\s*:\s*(.+?)\s*(?:\[/ruling\]|$)",
    re.IGNORECASE | re.MULTILINE)


def master(state: State, ctx: _Ctx) -> State:
    """A master's post: its rulings, then its status lines, block turns and `Round N`."""
    body = ctx.post.body or ""
    rulings = [(m.group(1).lower(), m.group(2), m.group(3).strip()) for m in _RULING_LINE.finditer(body)]
    if rulings:
        state = replace(state, rulings=state.rulings + tuple(rulings))
    for code, target_post, decision in rulings:
        state = _apply_ruling(state, ctx, code, target_post, decision)
    for word, name in master_lines(body):
        who = R.canon_name(state, name)
        if not who:
            continue
        state = ensure_fighter(state, who, Fighter)
        f = state.fighters[who]
        if word.startswith("sconfitt"):
            f, what = f.with_cond("Sconfitto"), "Sconfitto"
            state = replace(state, incoming=tuple(a for a in state.incoming if a.target != who))
        elif word.startswith("svenut"):
            f, what = f.with_cond("Svenuto"), "Svenuto"
        elif word.startswith("affaticat"):
            f, what = f.with_cond("Affaticato"), "Affaticato"
        elif word.startswith("non piu"):
            f, what = f.with_cond(drop=("Affaticato",)), "non più Affaticato"
        elif word.startswith("liberat"):
            f, what = replace(f, block=None), "liberato dal blocco"
        else:
            state = replace(state, permits=state.permits + (who,))
            ctx.add("cosmo.entrance_allowed",
                    f"Il master permette a {who} un'azione di ingresso legata ad un attacco.", T.R_ENTRANCE,
                    fighter=who)
            continue
        state = set_fighter(state, f)
        rule = {"Sconfitto": T.R_SCONFITTO, "Svenuto": T.R_SVENUTO}.get(what, T.R_AFFATICATO
                                                                        if "ffaticat" in what else T.R_BLOCCATO)
        ctx.add("cosmo.master_status", f"Il master dichiara {who}: {what}.", rule, fighter=who,
                status=what)
    for name, turns in master_turns(body):
        who = R.canon_name(state, name)
        f = state.fighters.get(who or "")
        if f is not None and f.block is not None:
            state = set_fighter(state, replace(f, block=replace(f.block, turns=turns)))
            ctx.add("cosmo.master_status", f"Il master fissa i turni di blocco di {who}: {turns}.",
                    T.R_TAB5, fighter=who, turns=turns)
    n = master_round(body)
    if state.settings["round_rule"] == "master" and n is not None and n > state.round:
        state = end_round(replace(state, round=n, acted=()), ctx, None)
    return state


def _apply_ruling(state: State, ctx: _Ctx, code: str, target_post: str, decision: str) -> State:
    """A master's decision on a post: a Tabella 5 band for a damage the table did not give, or block turns."""
    applied = "annotata"
    band = T.band_named(decision.strip(" ."), state.bands)
    name = band.name if band else (decision.strip(" .").capitalize() if T.is_oneshot(decision.strip(" .")) or
                                   fold(decision.strip(" .")) in ("leggero", "moderato", "pesante") else None)
    turns = re.fullmatch(r"\s*(\d+)\s*turn[oi]\s*\.?\s*", decision, re.I)
    for who, f in list(state.fighters.items()):
        if name is not None and any(d.post == target_post and d.band is None for d in f.due):
            due = tuple(replace(d, band=name, assumption=None) if d.post == target_post and d.band is None else d
                        for d in f.due)
            state = set_fighter(state, replace(f, due=due))
            applied = f"{who} tira un danno {name}"
        elif turns and f.block is not None and f.block.post == target_post and f.block.turns is None:
            state = set_fighter(state, replace(f, block=replace(f.block, turns=int(turns.group(1)))))
            applied = f"{who} resta bloccato {turns.group(1)} turni"
    ctx.add("ruling.applied", f"Decisione del master su {code} (post {target_post}): {decision} — {applied}.",
            "Arbitro › Decisioni del master", ruled_code=code, target_post=target_post, decision=decision)
    return state


def rulings(state: State) -> list[tuple[str, str, str]]:
    """Master rulings seen so far: (code, post, decision), for the audit to annotate verdicts."""
    return list(state.rulings)
