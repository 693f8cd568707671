"""Fase Offensiva: an attack registered as incoming, and a hit landing with its Fattore Mira effects."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from . import calcolo_danni as CD
from . import controllo as AC
from . import cure as CU
from . import reazione as RE
from . import tables as T
from . import tecniche as TC
from ...history import Registry
from .actions import ActionSpec, limb_stack
from .damage import _MIRA_PARTS, _mira_effects
from .checks import Requirement, RollCheck, declared as declared_requirements, label_key
from .messages import P_DIFENSIVA, P_FLUSSO, verdict
from .state import Incoming
from .turno import HALF, ONE, _Defence, _Hit, _Incoming, _name_keys, _Post


def _hit(p: _Post, atk: Incoming, mult: Fraction, reasons: list[str], defence: str | None, roll: int | None, *,
         numbers: dict[str, Any] | None = None, protezione: bool = False, defended_message: bool = False) -> None:
    """An attack that lands: Mira effects from its die face, then a Hit waiting for the attacker's Calcolo."""
    post = p.post
    stacks: list[tuple[str, int]] = []
    if atk.face is not None and not atk.generic:
        part = atk.mira or "corpo"
        # the Mira and the limb a part names ("gamba" → arti, gambe), as below for any part not in the table
        mira, arti = _MIRA_PARTS.get(part) or (
            "arti" if part in ("arti", "braccia", "braccio", "gambe", "gamba") else part,
            "gambe" if part in ("gambe", "gamba") else ("braccia" if part in ("braccia", "braccio") else None))
        eff = _mira_effects(mira, atk.face, arti)
        if eff is not None:
            if eff.multiplier is not None:
                mult *= eff.multiplier.factor
                reasons = [*reasons, eff.multiplier.label]  # a new list: the caller's stays as it was
            stacks.extend(eff.stacks)
            if mira == "arti" and arti is None and atk.face >= T.MIRA_ARTI_STORPIATURA_FACCIA:
                stacks.append((limb_stack(None), 1))
                p.verdicts.append(verdict("ruling.needed", post.id, "Mira agli Arti: arto non indicato, applicata Storpiatura Debilitante "
                    "(braccia); il master può decidere diversamente.", "Successo e Fallimento delle Azioni › Fattore Mira"))
    code = "outcome.defended" if defended_message else "outcome.hit"
    shown = "1" if mult is ONE else "1/2" if mult is HALF else str(mult)  # "1" exactly when mult == 1
    techs = f" [{', '.join(atk.techniques)}]" if atk.techniques else ""
    msg = (f"L'Attacco di {atk.attacker}{techs} colpisce {atk.target}"
           f"{' ma la Protezione dimezza i Danni' if protezione else ''}{f' (×{shown})' if shown != '1' else ''}: "
           f"{'; '.join(reasons)}.")
    if numbers:
        details = numbers.copy()  # dict(numbers, attack_post=…, multiplier=…, defence=…) without a keyword dict
        details["attack_post"] = atk.post
        details["multiplier"] = shown
        details["defence"] = defence
        expected, found = numbers.get("attack_total", atk.total), numbers.get("defence_total")
    else:
        details = {"attack_post": atk.post, "multiplier": shown, "defence": defence}
        expected, found = atk.total, None
    p.verdicts.append(verdict(code, post.id, msg, P_DIFENSIVA if defence else P_FLUSSO, roll=roll,
                              expected=expected, found=found, details=details))
    if atk.sbalzo:
        RE._sbalzo_landed(p, atk, roll)
    own = TC._tech_stacks(p.state.registry, atk) if atk.techniques and p.state.registry.techniques else None
    if own:
        stacks.extend(own)  # the technique's own Stacks (registry `extra.stack`): the rules', not the Calcolo's
    applied: list[tuple[str, int]] = []
    if stacks and atk.target in p.fighters:
        p.fighters[atk.target] = CD._apply_stacks(p, p.fighters[atk.target], stacks, protezione=protezione,
                                               source=atk.post, aggiuntivo=_aggiuntivo(p.state.registry, atk),
                                               applied=applied)
    # Hit(attack, resolved_in, multiplier, reasons, defense, expected, ruled, reazione, protezione, condizioni,
    # applicate), every field in order
    p.hits.append(_Hit(atk, post.id, mult, tuple(reasons), defence, None, None, False, protezione, tuple(stacks),
                       tuple(applied)))


def _aggiuntivo(reg: Registry, atk: Incoming) -> bool:
    """The attack deals a Danno Aggiuntivo by its technique (registry): it applies no Type-1/2 Stacks."""
    tech = TC._technique(reg, atk.techniques, atk.attacker) if atk.techniques and reg.techniques else None
    if tech is None:
        return False
    return any(isinstance(c, str) and c.lower() == "aggiuntivo" for c in (tech.extra.get("danno"), tech.type))


def _register(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, actor: str, multi: str | None,
              dfn: _Defence, annulled: bool = False, declared: tuple[Requirement, ...] | None = None,
              cura: bool = False) -> None:
    """An offensive main action: one incoming attack (or generic action) per target, for their next post."""
    tag = roll.tag
    aliases = p.state.aliases
    if cura:
        CU._register_cura(p, i, roll, spec, chk, actor, annulled)
        return
    if tag is None:
        targets = []
    elif len(tag.targets) == 1:  # most labels: no comprehension frame for one name
        t = tag.targets[0]
        targets = [(aliases.get(*_name_keys(t)) if t else None) or t]  # _resolve_name
    else:
        targets = [((aliases.get(*_name_keys(t)) if t else None) or t) for t in tag.targets]
    if not targets:
        if spec.counter and dfn.counter_target.get(spec.key):
            targets = [dfn.counter_target[spec.key]]
        else:
            others = [n for n in p.fighters if n != actor and n in (p.state.order + (p.name,))]
            if spec.role == "offensiva" and len(others) == 1:
                targets = others
            elif spec.role == "offensiva" or spec.counter:
                if not annulled:
                    p.verdicts.append(verdict("ruling.needed", p.post.id, f"{spec.name} senza bersaglio indicato nell'etichetta del lancio.",
                        "Successo e Fallimento delle Azioni › Lancio del Dado", roll=i))
                return
            else:
                targets = others
    generic = spec.role == "generica" and not spec.counter
    if declared is None:
        declared = declared_requirements(label_key(tag), roll.label, spec, "offensiva", multi)
    sbalzo = any(r.factor == "sbalzo" for r in declared) if declared else False
    post_id = p.post.id
    techniques = tuple(tag.techniques) if tag else ()
    if not sbalzo and techniques:
        # a Sbalzo that is an effect of the technique (registry `extra.sbalzo`): no −2, the same DMS and Reazione
        eff = RE._SBALZO_MEMO[0][1] if RE._SBALZO_MEMO[0][0] is p.state.registry else RE._sbalzo_techniques(p.state.registry)
        if eff and any(t.lower() in eff for t in techniques):
            sbalzo = True
    group = f"{post_id}#{i}"
    n_targets = len(targets)
    factor = dfn.counter_factor.get(spec.key, ONE)
    actor_f = p.fighters.get(actor)
    # "Sbilanciamento: Potenziale di Attacchi e Difese ridotto di 1 modificatore per Stack", from this turn's Stacks
    pot_mod = T.SBILANCIAMENTO_POTENZIALE_MOD * actor_f.stack_count("Sbilanciamento") if (
        actor_f is not None and actor_f.stacks.entries) else 0
    for t in targets:
        if t == actor:
            continue
        # every Incoming field in order: id, attacker, target, post, roll, action, techniques, total, rendered, face,
        # mira, generic, group, multi, n_targets, counter, potenziale_factor, annulled, sbalzo, authentic, potenziale_mod
        p.new_incoming.append(_Incoming(
            f"{post_id}#{i}#{t}", actor, t, post_id, i, spec.key, techniques, chk.total, chk.rendered, chk.face,
            chk.mira, generic, group, multi, n_targets, spec.counter, factor, annulled, sbalzo, roll.authentic,
            pot_mod))
    if not annulled and (p.aree or techniques and (
            AC._AREA_MEMO[0][1] if AC._AREA_MEMO[0][0] is p.state.registry else AC._area_techniques(p.state.registry))):
        AC._aree_azione(p, i, roll, spec, actor, techniques, targets)
