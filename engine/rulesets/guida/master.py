"""Master posts: rulings, damage and liberation lines of the Game Master."""
from __future__ import annotations

import re
from types import MappingProxyType

from . import controllo as AC
from . import stacks as S
from ...history import Post
from ...verdicts import Verdict
from .messages import P_RULING, verdict
from .state import GuidaState, Ruling, evolve
from .turno import _RULING_LINE, _resolve_name


# --- master posts: rulings ------------------------------------------------------------------------

def parse_rulings(text: str) -> list[tuple[str, str, str]]:
    """`Ruling: <codice> post <id>: <decisione>` lines and `[ruling]…[/ruling]` blocks → (code, post, decision)."""
    return [(m.group(1).lower(), m.group(2), m.group(3).strip()) for m in _RULING_LINE.finditer(text or "")]


_LIBERATO = re.compile(r"^liberat[oaie]\s+(.+)$", re.IGNORECASE)
_DANNO = re.compile(r"^danno\s+(-?\d+)$|^danni\s+(-?\d+)$", re.IGNORECASE)


def _master(state: GuidaState, post: Post) -> tuple[GuidaState, list[Verdict]]:
    verdicts: list[Verdict] = []
    rulings = list(state.rulings)
    hits = list(state.hits)
    incoming = list(state.incoming)
    fighters = dict(state.fighters)
    for code, target_post, decision in parse_rulings(post.body):
        rulings.append(Ruling(code, target_post, decision, post.id))
        applied = "annotata"
        m = _DANNO.match(decision.strip())
        low = decision.strip().lower()
        if m:
            n = int(m.group(1) or m.group(2))
            for k, h in enumerate(hits):
                if h.attack.post == target_post or h.resolved_in == target_post:
                    hits[k] = evolve(h, ruled=n)
                    applied = f"danno {n} per il colpo del post {h.attack.post}"
            for name, f in fighters.items():
                due = tuple(evolve(d, amount=n, basis="ruling") if d.attack_post == target_post else d for d in f.due)
                if due != f.due:
                    fighters[name] = evolve(f, due=due)
                    applied = f"danno {n} da registrare per {name}"
        elif _LIBERATO.match(low):
            who = _resolve_name(state, _LIBERATO.match(low).group(1)) or ""
            f = fighters.get(who) or next((x for n, x in fighters.items() if n.lower() == who.lower()), None)
            if f is not None:
                stacks = f.stacks
                for cond in {e.condition for e in f.stacks.entries if e.condition}:
                    stacks, _ = S.remove_condition(stacks, cond)
                fighters[f.name] = evolve(f, costrizioni=(), costrizione=None, allentamento=0, stacks=stacks)
                applied = f"{f.name} è libero da ogni Costrizione"
        elif low in ("annullato", "annullata", "fallito", "fallita", "nessun danno"):
            before = len(incoming) + len(hits)
            incoming = [a for a in incoming if a.post != target_post]
            hits = [h for h in hits if h.attack.post != target_post and h.resolved_in != target_post]
            if len(incoming) + len(hits) != before:
                applied = "azione annullata"
        verdicts.append(verdict("ruling.applied", post.id,
                                f"Decisione del master su {code} (post {target_post}): {decision} — {applied}.",
                                P_RULING, details={"code": code, "post": target_post, "decision": decision}))
    new = evolve(state, rulings=tuple(rulings), hits=tuple(hits), incoming=tuple(incoming),
                 fighters=MappingProxyType(fighters), posts=state.posts + 1)
    if AC._AREA_LINE.search(post.body or ""):
        aree = AC._master_aree(new, post, verdicts)
        if aree is not new.aree:
            new = evolve(new, aree=aree)
    return new, verdicts
