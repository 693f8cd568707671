"""Calcolo delle Cure: a Cura resolved as an action (the healed PV capped and the Rigenerazioni: calcolo_danni)."""
from __future__ import annotations

from typing import Any

from . import calcolo_danni as CD
from . import tables as T
from . import tecniche as TC
from ...history import Registry
from .actions import ActionSpec, factor_of, normalise
from .checks import RollCheck
from .messages import verdict
from .state import Incoming, evolve
from .turno import ONE, _Hit, _Incoming, _Post, _name_keys


# --- Calcolo delle Cure ---------------------------------------------------------------------------------

def _is_cura(reg: Registry, tag: Any, label: str | None, actor: str) -> bool:
    """An Azione Generica that is a Cura Principale: its label says «Cura», or its technique is a cure (registry
    type «Curativa», `extra.danno = "cura"`)."""
    if normalise((tag.action if tag is not None and tag.action else label) or "").startswith("cura"):
        return True
    tech = TC._technique(reg, tuple(tag.techniques), actor) if tag is not None and tag.techniques else None
    return tech is not None and any(isinstance(c, str) and c.lower().startswith("cura")
                                    for c in (tech.extra.get("danno"), tech.type))


def _distanza_cura(settings: Any, tag: Any) -> tuple[bool, int | None]:
    """Fattore Distanza on a Cura ("si applica esclusivamente agli Attacchi": whether a Cura is one, the text does
    not say): setting `distanza_cura` — 'attacco' checks it as on an Attack, 'esclusa' refuses it as on any other
    action, unset (default) reads it as written with a warning. Returns (checked as an Attack, the Distanza to warn
    about)."""
    mode = settings.get("distanza_cura")
    if mode == "attacco":
        return True, None
    if mode == "esclusa" or tag is None:
        return False, None
    listed = [m.amount for m in tag.modifiers if factor_of(m.label) == "distanza"]
    return (True, sum(listed)) if listed else (False, None)


def _register_cura(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, actor: str, annulled: bool) -> None:
    """A Cura Principale rolled: it lands on its targets (the poster when it names none) unless the target or an
    opponent stops its user with a Contrattacco su Azione Generica, so every other fighter may answer it (a generic
    Incoming); its Calcolo delle Cure comes in the user's next post, as for damage, or in this same post."""
    tag = roll.tag
    aliases = p.state.aliases
    targets = [(aliases.get(*_name_keys(t)) if t else None) or t for t in (tag.targets if tag is not None else ())]
    targets = [t for t in targets if t] or [actor]
    post_id = p.post.id
    group = f"{post_id}#{i}"
    techniques = tuple(tag.techniques) if tag else ()
    others = [n for n in p.fighters if n != actor and n not in targets and n in (p.state.order + (p.name,))]
    written = [c for c in p.post.damage if c.kind == "cura" and not CD._RIGENERAZIONE.match(c.raw)]
    for t in targets + others:
        inc = _Incoming(f"{post_id}#{i}#{t}", actor, t, post_id, i, spec.key, techniques, chk.total, chk.rendered,
                        chk.face, None, True, group, None, len(targets), False, ONE, annulled, False, roll.authentic,
                        0, True)
        if t != actor:
            p.new_incoming.append(inc)
        if t in targets and not annulled:
            early = CD._match_calc(written, inc)
            if early is not None:
                written.remove(early)
            p.hits.append(_Hit(inc, post_id, ONE, ("Cura: la Difesa del Bersaglio non si considera",), None,
                               calcolo=early))


def _cura_fermata(p: _Post, i: int, atk: Incoming) -> None:
    """A Contrattacco su Azione Generica in time against a Cura Principale: «possono non andare a segno se il
    Bersaglio o un Avversario riescono a fermare l'Utilizzatore» — the Cura does not land on any of its targets."""
    stopped = [h.attack.target for h in p.hits if h.attack.cura and h.attack.group == atk.group and h.fermata is None]
    if not stopped:
        return
    p.hits = [evolve(h, fermata=p.post.id) if h.attack.cura and h.attack.group == atk.group else h for h in p.hits]
    p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
        f"La Cura di {atk.attacker}" + (f" [{', '.join(atk.techniques)}]" if atk.techniques else "")
        + f" è fermata da {p.name}: non va a segno su " + ", ".join(stopped) + ".",
        T.RULE_CURE, roll=i, details={"attack_post": atk.post, "targets": stopped}))
