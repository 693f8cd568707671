"""Calcolo delle Cure: a Cura resolved as an action, the healed PV capped, the Rigenerazioni."""
from __future__ import annotations

import re
from typing import Any

from . import calcolo_danni as CD
from . import damage as D
from . import tables as T
from ...history import DamageCalc, Registry
from .actions import ActionSpec, factor_of, normalise
from .checks import RollCheck, live_stat
from .messages import cifra
from .messages import verdict
from .state import Fighter, Incoming, evolve
from .turno import ONE, _DueDamage, _Hit, _Incoming, _Post, _name_keys, _resolve_name


# --- Calcolo delle Cure ---------------------------------------------------------------------------------

def _is_cura(reg: Registry, tag: Any, label: str | None, actor: str) -> bool:
    """An Azione Generica that is a Cura Principale: its label says «Cura», or its technique is a cure (registry
    type «Curativa», `extra.danno = "cura"`)."""
    if normalise((tag.action if tag is not None and tag.action else label) or "").startswith("cura"):
        return True
    tech = CD._technique(reg, tuple(tag.techniques), actor) if tag is not None and tag.techniques else None
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
    written = [c for c in p.post.damage if c.kind == "cura" and not _RIGENERAZIONE.match(c.raw)]
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


def _cap_cura(p: _Post, target: Fighter, heal: int, who: str, steps: Any, basis: str | None, post: str) -> int:
    """The PV a cure gives back (`outcome.cure`): with the setting `cure_entro_il_massimo` (default, ours) PV never
    exceed the maximum, and the verdict says what the Registro then records."""
    pv, pv_max = target.pv, target.pv_max
    cap = bool(p.state.settings.get("cure_entro_il_massimo", True))
    now = None
    if pv is not None:
        now = pv - sum(d.amount for d in target.due if d.amount is not None and d.resource == "PV")
    given = heal
    note = ""
    assumption = None
    if cap and now is not None and pv_max is not None and now + heal > pv_max:
        given = max(pv_max - now, 0)
        note = (f" {target.name} ha {now} PV su {pv_max}: ne recupera {given}, non {heal} (i PV non superano il "
                "massimo; impostazione `cure_entro_il_massimo`, lettura nostra).")
        assumption = "cure_entro_il_massimo"
    p.verdicts.append(verdict("outcome.cure", p.post.id,
        f"{who} cura {target.name}: +{given} PV." + note + f" Nel Registro di {target.name}: +{given} PV.",
        T.RULE_CURE, expected=given, found=heal,
        details={"attack_post": post, "steps": list(steps or ()), "cura": heal, "pv_recuperati": given,
                 "pv": now, "pv_max": pv_max, "limitata": given != heal, "basis": basis or "dichiarato"},
        assumption=assumption))
    return given


_RIGENERAZIONE = re.compile(r"^\s*rigenerazion", re.IGNORECASE)


def _rigenerazioni(p: _Post, lines: list[DamageCalc]) -> None:
    """Rigenerazione lines (Azioni Secondarie or passive: never stopped): 1 PV every N levels of the technique's
    Statistica by its category (D 7 … S 3), at most one per turn per character — the strongest counts."""
    reg = p.state.registry
    by_target: dict[str, list[tuple[DamageCalc, int | None, list[str], str]]] = {}
    for c in lines:
        user = _resolve_name(p.state, c.actor) or p.name
        healed = _resolve_name(p.state, c.target) or user
        stated = c.result if c.result is not None else CD._evaluate(c)
        tech = CD._technique(reg, (c.technique,), user) if c.technique else None
        amount, steps, basis = None, [], "dichiarato"
        uf = p.fighters.get(user)
        stat = tech.extra.get("statistica") if tech is not None else None
        if tech is not None and tech.category and isinstance(stat, str) and uf is not None:
            level = live_stat(uf, stat.capitalize())
            if level is not None:
                try:
                    r = D.rigenerazione(tech.category, level)
                    amount, steps, basis = r.amount, list(r.steps), "motore"
                except T.MechanicsError as exc:
                    steps = [str(exc)]
        if amount is not None and stated is not None and amount != stated:
            p.verdicts.append(verdict("damage.miscalculated", p.post.id,
                f"Rigenerazione di {healed}" + (f" [{c.technique}]" if c.technique else "")
                + f": {cifra(stated)} dichiarato, {amount} calcolato.", T.RULE_CURE, expected=amount, found=stated,
                details={"kind": "rigenerazione", "steps": steps}))
        if amount is None:
            if stated is None:
                p.verdicts.append(verdict("ruling.needed", p.post.id,
                    f"Rigenerazione di {healed}" + (f" [{c.technique}]" if c.technique else "")
                    + ": né categoria e Statistica della Tecnica nel registro (`extra.statistica`) né un numero "
                    "scritto.", T.RULE_CURE, details={"raw": c.raw}))
                continue
            amount = int(stated)
        by_target.setdefault(healed, []).append((c, amount, steps, basis))
    for healed, items in by_target.items():
        best = max(items, key=lambda x: x[1] or 0)
        if len(items) > 1:
            p.verdicts.append(verdict("damage.miscalculated", p.post.id,
                f"Più Rigenerazioni su {healed} nello stesso turno: conta solo la più forte ({best[1]}); scartate "
                f"{[x[1] for x in items if x is not best]}.", T.RULE_CURE, expected=best[1],
                found=sum(x[1] or 0 for x in items), details={"kind": "rigenerazione",
                                                             "amounts": [x[1] for x in items]}))
        c, amount, steps, basis = best
        target = p.fighters.get(healed)
        if target is None or not amount:
            continue
        given = _cap_cura(p, target, amount, f"Rigenerazione [{c.technique or '?'}]", steps, basis, p.post.id)
        target = p.fighters[healed]
        p.fighters[healed] = evolve(target, due=target.due + (
            _DueDamage(-given, "PV", c.actor or p.name, c.technique or "Rigenerazione", p.post.id, basis),))
