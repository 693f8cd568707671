"""Fase Difensiva: the incoming attack a defence answers, and the outcome of the defence."""
from __future__ import annotations

from typing import Any

from . import attacco as AT
from . import calcolo_danni as CD
from . import confronto as CF
from . import controllo as AC
from . import cure as CU
from . import reazione as RE
from . import tables as T
from .actions import ActionSpec
from .checks import RollCheck
from .messages import P_DIFENSIVA, P_LANCIO, verdict
from .state import Incoming, evolve
from .turno import HALF, ONE, _Defence, _name_keys, _Post


def _pick_attack(p: _Post, mine: list[Incoming], dfn: _Defence, roll: Any, spec: ActionSpec) -> Incoming | None:
    """The incoming action this defence answers: the one from the attacker its label names, else the first."""
    generic = spec.key == "contrattacco_generica"
    pool = [a for a in mine if a.id not in dfn.answered and a.generic == generic]
    if len(pool) > 1:
        pool.sort(key=lambda a: a.annulled)  # an annulled action is answered only when nothing else is left
    if spec.ally:
        pool = [a for a in p.incoming if a.id not in dfn.answered and not a.generic and a.target != p.name
                and a.attacker != p.name] or pool
    tag = roll.tag
    if len(pool) > 1 and tag and tag.targets:  # with one candidate the label cannot pick another
        aliases = p.state.aliases
        named = {(aliases.get(*_name_keys(t)) or t).lower() if t else t.lower() for t in tag.targets}
        for a in pool:
            if a.attacker.lower() in named or a.target.lower() in named:
                return a
    return pool[0] if pool else None


def _who(atk: Incoming) -> str:
    """"l'Attacco di X [Tecnica]": built only for the messages that name it."""
    return f"l'Attacco di {atk.attacker}" + (f" [{', '.join(atk.techniques)}]" if atk.techniques else "")


def _defend(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, atk: Incoming | None,
            dfn: _Defence, mine: list[Incoming]) -> None:
    """One defensive roll against its attack; an outcome resting on a roll typed by hand is not final."""
    n0 = len(p.verdicts)
    _resolve_defence(p, i, roll, spec, chk, atk, dfn, mine)
    if spec.counter and atk is not None and p.aree:
        AC._area_contrattaccata(p, i, spec, atk, dfn)
    if roll.authentic and (atk is None or atk.authentic):
        return  # the forum's own rolls: the outcome stands
    suspect = [] if roll.authentic else [f"la {spec.name} (lancio {i + 1} di questo post)"]
    if atk is not None and not atk.authentic:
        suspect.append(f"l'Attacco di {atk.attacker} (post {atk.post}, lancio {atk.roll + 1})")
    if suspect:
        _not_authentic_outcome(p, n0, i, suspect)


def _not_authentic_outcome(p: _Post, n0: int, i: int | None, suspect: list[str]) -> None:
    """The outcome verdicts added since `n0` rest on rolls that are not the forum's (dice.not_authentic): they say
    so, and the master confirms the outcome (ruling.needed)."""
    what = " e ".join(suspect)
    touched = False
    for k in range(n0, len(p.verdicts)):
        v = p.verdicts[k]
        if v.code.startswith("outcome.") and "not_authentic" not in v.details:
            p.verdicts[k] = evolve(v, message=f"{v.message} Esito basato su un lancio non autentico ({what}).",
                                   details=dict(v.details, not_authentic=list(suspect)))
            touched = True
    if touched:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"L'esito si basa su un lancio non autentico del forum ({what}): lo conferma il master.",
            P_LANCIO, roll=i, details={"not_authentic": list(suspect)}))


def _resolve_defence(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, atk: Incoming | None,
                     dfn: _Defence, mine: list[Incoming]) -> None:
    post = p.post
    if not spec.counts_as_defense:
        # Azione Secondaria Indipendente, Reazione, Liberazione…: never stopped, may be beaten on time
        first = next((a for a in mine if not a.generic), None)
        if spec.key == "reazione":
            RE._reazione(p, i, chk, dfn, mine)
            return
        if first is not None and chk.total is not None and first.total is not None:
            ok = chk.total >= first.total
            p.verdicts.append(verdict("outcome.defended" if ok else "outcome.hit", post.id,
                f"{spec.name}: {chk.total} contro {first.total} dell'Attacco di {first.attacker}: "
                + ("in tempo." if ok else "battuta sul tempo (nessuna conseguenza)."),
                spec.paragraph, roll=i, expected=first.total, found=chk.total, details={"independent": True}))
        return
    if atk is None:
        generic = spec.key == "contrattacco_generica"
        other = next((a for a in mine if a.id not in dfn.answered and a.generic != generic), None)
        if other is not None:
            # the wrong kind of answer, not one too many: a Contrattacco su Azione Generica answers an Azione
            # Generica, every other Difesa an Attacco
            p.verdicts.append(verdict("turn.extra_defense", post.id,
                f"{spec.name} risponde solo " + ("a un'Azione Generica" if generic else "a un Attacco")
                + ", ma in arrivo c'è " + ("un Attacco" if generic else "un'Azione Generica")
                + f" di {other.attacker} (post "
                f"{other.post}): " + ("contro un Attacco serve una Difesa o un Contrattacco." if generic else
                                      "contro un'Azione Generica serve un Contrattacco su Azione Generica."),
                spec.paragraph, roll=i, expected=0, found=1,
                details={"pending": other.id, "pending_kind": "generica" if other.generic else "attacco"}))
            return
        p.verdicts.append(verdict("turn.extra_defense", post.id,
            f"{spec.name}: nessun Attacco in arrivo a cui rispondere (al più una Difesa per Attacco).",
            P_DIFENSIVA, roll=i, expected=len([a for a in mine if not a.generic]), found=len(dfn.answered) + 1))
        return
    dfn.answered.add(atk.id)
    if atk.annulled:
        # written before knowing: the attack never came (its author's Fase Offensiva was annulled)
        p.verdicts.append(verdict("outcome.action_annulled", post.id,
            f"{spec.name} contro {_who(atk)}: quell'Attacco era già annullato (post {atk.post}), la Difesa non serve.",
            P_DIFENSIVA, roll=i, details={"attack_post": atk.post}))
        return
    dfn.any_defence = True
    if dfn.failed:
        p.verdicts.append(verdict("outcome.action_annulled", post.id,
            f"{spec.name} contro {_who(atk)}: considerata fallita perché una Difesa precedente è fallita.",
            P_DIFENSIVA, roll=i, details={"failed_roll": dfn.failed_roll}))
        AT._hit(p, atk, ONE, ["Difesa successiva a una fallita"], spec.name, i)
        return
    if chk.total is None or atk.total is None:
        p.verdicts.append(verdict("dice.no_total", post.id,
            f"{spec.name} contro {_who(atk)}: manca il risultato di uno dei due lanci, esito da stabilire.",
            P_DIFENSIVA, roll=i, expected=atk.total, found=chk.total))
        p.verdicts.append(verdict("ruling.needed", post.id, f"Esito di {spec.name} contro {_who(atk)} da stabilire.", P_DIFENSIVA, roll=i))
        return
    A, Dv = atk.total, chk.total
    numbers = {"attack_total": A, "defence_total": Dv, "attack_rendered": atk.rendered, "defence_rendered": chk.rendered,
               "attack_post": atk.post, "attack_roll": atk.roll}
    if spec.key == "contrattacco_generica":
        dfn.counter_target[spec.key] = atk.attacker  # launched either way (Azione Generica)
        if Dv >= A:
            p.verdicts.append(verdict("outcome.suspended", post.id,
                f"Contrattacco su Azione Generica riuscito ({Dv} ≥ {A}): l'Azione Generica di {atk.attacker} è Sospesa "
                "(può confermarla subendo il Contrattacco, o annullarla e difendersi).",
                spec.paragraph + " › Azione Sospesa", roll=i, expected=A, found=Dv, details=numbers))
            dfn.counter[spec.key] = "riuscito"
            if atk.cura:
                CU._cura_fermata(p, i, atk)
        else:
            p.verdicts.append(verdict("outcome.hit", post.id,
                f"Contrattacco su Azione Generica battuto sul tempo ({Dv} < {A}): l'Azione Generica riesce, il "
                "Contrattacco è comunque lanciato.", spec.paragraph, roll=i, expected=A, found=Dv, details=numbers))
            dfn.counter[spec.key] = "fallito"
        return
    if Dv < A:
        # beaten on time: the defence fails, later defences fail, no Fase Offensiva (RULINGS #1)
        dfn.failed = True
        dfn.failed_roll = i
        if spec.counter:
            dfn.counter[spec.key] = "fallito"
        AT._hit(p, atk, ONE, [f"{spec.name} battuta sul tempo ({Dv} < {A})"], spec.name, i, numbers=numbers)
        return
    tie = Dv == A
    if spec.key in ("protezione", "protezione_alleato", "difesa_nulla_alleato"):
        dfn.protezione_ok = True
        AT._hit(p, atk, HALF, [f"Protezione riuscita ({Dv} ≥ {A}): Danni dimezzati"], spec.name, i,
             numbers=numbers, protezione=True, defended_message=True)
        return
    if spec.counter:
        dfn.counter_target[spec.key] = atk.attacker  # the follow-up in Fase Offensiva goes back to the attacker
    if spec.key == "contrattacco_diretto":
        dfn.counter[spec.key] = "riuscito"
        AT._hit(p, atk, ONE, [f"Contrattacco Diretto riuscito ({Dv} ≥ {A}): il Difensore subisce in pieno "
                                   "l'Attacco e l'Attaccante dovrà difendersi dal Contrattacco"], spec.name, i,
             numbers=numbers)
        return
    if tie and spec.tie_half_damage:
        AT._hit(p, atk, HALF, [f"Pareggio ({Dv} = {A}): vince il Difensore ma subisce Danno dimezzato"],
             spec.name, i, numbers=numbers)
        return
    if spec.intercepts:
        if spec.counter:
            dfn.counter[spec.key] = "riuscito"
        CF._clash(p, i, roll, spec, chk, atk, dfn, numbers)
        return
    # Schivata / Sbilanciamento won on time: no damage
    if spec.physical_only:
        physical = CF._physical(p.state.registry, atk)
        if physical is False:
            dfn.failed = True
            dfn.failed_roll = i
            AT._hit(p, atk, ONE, ["Sbilanciamento funziona solo contro gli Attacchi Fisici Diretti"], spec.name, i,
                 numbers=numbers)
            return
        if physical is None:
            p.verdicts.append(verdict("ruling.needed", post.id,
                f"Sbilanciamento contro {_who(atk)}: va confermato che sia un Attacco Fisico Diretto.",
                spec.paragraph, roll=i))
    p.verdicts.append(verdict("outcome.defended", post.id,
        f"{spec.name} riuscita ({Dv} ≥ {A}) contro {_who(atk)}: nessun Danno.", spec.paragraph, roll=i,
        expected=A, found=Dv, details=numbers))
    if spec.key == "sbilanciamento" and atk.attacker in p.fighters:
        p.fighters[atk.attacker] = CD._apply_stacks(p, p.fighters[atk.attacker], [("Sbilanciamento", T.SBILANCIAMENTO_DA_DIFESA)],
                                                 source=post.id)
    CF._drop_group(p, atk, i)
