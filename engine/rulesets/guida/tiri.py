"""Successo e Fallimento delle Azioni: each roll of a post classified and checked (die, modifiers, requirements)."""
from __future__ import annotations

import re
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from . import attacco as AT
from . import cure as CU
from . import difesa as DF
from . import liberazione as LI
from . import mimetizzazione as MI
from . import percezione as PZ
from . import stacks as S
from . import tables as T
from .actions import ACTIONS, ActionSpec, classify, normalise, phase_of
from .checks import (
    _AMOUNT_LABEL, _NO_BONUSES, Requirement, RollCheck, _multi, check, declared as declared_requirements, live_stat,
    requirement_stacks,
)
from .messages import P_ACCECAMENTO, P_CONFRONTO, P_DESCRIZIONE, P_DIFENSIVA, P_DISTANZA, P_OFFENSIVA, signed, verdict
from .state import EMPTY, Fighter, Incoming, evolve, maker
from .state import _SUMMARY_FIELDS
from .turno import ONE, _DIFESA_NULLA, _PREPARAZIONE, _Defence, _Post, _name_keys


# --- rolls: Fase Difensiva and Fase Offensiva -----------------------------------------------------

# The requirements a roll may carry, built once (the hot path creates none).
P_LIBERAZIONE_ALLENTAMENTO = "Costrizione e Liberazione › Liberazione › Valore di Liberazione"
_REQ_PROTEZIONE = {k: Requirement("protezione", a.bonus, a.bonus_label, a.paragraph, True)
                   for k, a in ACTIONS.items() if a.bonus_label == "Bonus Protezione"}
_REQ_PREPARAZIONE_DIFESA = Requirement("preparazione", 2, "Preparazione", P_DESCRIZIONE, True)
_REQ_PREPARAZIONE_COLPIRE = Requirement("preparazione", 1, "Preparazione", P_DESCRIZIONE, True)
_REQ_COUNTER_OK = {k: Requirement("contrattacco", 3 if k == "contrattacco_diretto" else 2, f"{a.name} riuscito",
                                  a.paragraph, True) for k, a in ACTIONS.items() if a.counter}
_REQ_COUNTER_KO = Requirement("contrattacco", -2, f"{ACTIONS['contrattacco_generica'].name} fallito",
                              ACTIONS["contrattacco_generica"].paragraph, False)
_REQ_ATTACCO_PREVEDIBILE = {n: Requirement("prevedibile_attacco", n, "Attacco Prevedibile", P_DESCRIZIONE, True)
                            for n in (1, 2, 3)}
_REQ_DIFESA_PREVEDIBILE = {n: Requirement("prevedibile_difesa", -n, "Difesa Prevedibile", P_DESCRIZIONE, False)
                           for n in (1, 2, 3)}


def _rolls(p: _Post) -> None:
    post, name = p.post, p.name
    post_id = post.id
    fighters = p.fighters
    aliases = p.state.aliases
    mine = []  # the actions aimed at the poster (a loop: no comprehension frame for a list of one or two)
    for a in p.incoming:
        if a.target == name:
            mine.append(a)
    dfn = _Defence()
    main_count: dict[str, int] = {}
    liberazioni: dict[str, int] = {}
    defensive_open = True
    offensive_seen = False
    for i, roll in enumerate(post.rolls):
        tag = roll.tag
        spec = classify(tag.action if tag and tag.action else roll.label)
        if spec is None:
            p.verdicts.append(verdict("dice.unknown_action", post_id,
                f"Azione non riconosciuta nell'etichetta del lancio: «{(tag.action if tag else None) or roll.label}».",
                "Successo e Fallimento delle Azioni › Lancio del Dado", roll=i, found=roll.label))
            continue
        actor = name
        if tag is not None and tag.actor:
            actor = aliases.get(*_name_keys(tag.actor)) or name
        actor_f = fighters.get(actor)
        phases = _ONE_PHASE.get(spec.key)
        if phases is not None and phases[0] is spec:
            phase = phases[1]  # an action of one phase only
        else:
            phase = phase_of(spec, roll.sides, defensive_open=defensive_open,
                             has_incoming=bool(mine), counter_in_defense=spec.key in dfn.counter)
        f = actor_f or fighters[name]
        tkey = None if tag is None else (tag.action, tag.techniques, tuple(map(_AMOUNT_LABEL, tag.modifiers)))  # label_key
        # the requirements in a fixed order (the checks report them in this order): Stacks, declared maluses,
        # Bonus Protezione, Preparazione, Contrattacco follow-up, Attacco / Difesa Prevedibile
        reqs: list[Requirement] = requirement_stacks(actor_f, spec, phase) if actor_f is not None and actor_f.stacks.entries else []
        target_attack: Incoming | None = None
        cura = False
        distanza_warn: int | None = None
        if phase == "offensiva":
            defensive_open = False
            multi = None if tag is None or len(tag.targets) < 2 else _multi(tag)  # multi_kind
            declared = declared_requirements(tkey, roll.label, spec, phase, multi)
            if declared:
                reqs += declared
            if f.preparazione and actor == name and (not mine or not dfn.any_defence) and spec.rolls:
                # no Fase Difensiva, or a Difesa Nulla: +1 to hit
                reqs.append(_REQ_PREPARAZIONE_COLPIRE)
            if spec.counter:
                res = dfn.counter.get(spec.key)
                if res == "riuscito":
                    reqs.append(_REQ_COUNTER_OK[spec.key])
                elif res == "fallito" and spec.key == "contrattacco_generica":
                    reqs.append(_REQ_COUNTER_KO)
            attack = spec.role == "offensiva" or spec.counter
            cura = spec.key == "generica" and CU._is_cura(p.state.registry, tag, roll.label, actor)
            if cura:
                attack, distanza_warn = CU._distanza_cura(p.state.settings, tag)
        else:
            multi = None
            declared = ()
            if spec.counts_as_defense:
                if len(mine) == 1 and not spec.ally:
                    # one action incoming: _pick_attack's pool is it or nothing
                    a = mine[0]
                    target_attack = a if a.id not in dfn.answered and a.generic == (
                        spec.key == "contrattacco_generica") else None
                else:
                    target_attack = DF._pick_attack(p, mine, dfn, roll, spec)
            if spec.bonus and spec.bonus_label == "Bonus Protezione":
                reqs.append(_REQ_PROTEZIONE[spec.key])
            if spec.key == "difesa_nulla_alleato" and actor_f is not None:
                # "Probabilità di Difendere: +1 per ogni 5 livelli di Destrezza"
                dex = live_stat(actor_f, "Destrezza")
                if dex:
                    n = dex // T.DIFESA_NULLA_ALLEATO_DESTREZZA_PASSO
                    if n > 0:
                        reqs.append(_alleato_destrezza_req(n))
            if f.preparazione and actor == name and spec.role == "difensiva":
                reqs.append(_REQ_PREPARAZIONE_DIFESA)
            # Attacco / Difesa Prevedibile act on Probabilità di Difendere: a Contrattacco uses Probabilità di Colpire
            if target_attack is not None and target_attack.techniques and not spec.counter:
                attacker = fighters.get(target_attack.attacker)
                uses = attacker.uses_attack if attacker is not None else EMPTY
                techs = target_attack.techniques
                if len(techs) == 1:
                    tech = techs[0]
                    n = uses.get(tech, 0)
                else:
                    n, tech = max((uses.get(t, 0), t) for t in techs)
                lvl = _PREVEDIBILE_LVL[n if n < 10 else 10]  # _prevedibile(n), read from its table
                if lvl:  # which technique and how many uses: the verdict says so
                    reqs.append(_prevedibile_req("prevedibile_attacco", lvl, tech, n))
            if spec.role == "difensiva" and not spec.counter and tag and tag.techniques:
                n, tech = max((f.uses_defense.get(t, 0) + 1, t) for t in tag.techniques)
                lvl = _PREVEDIBILE_LVL[n if n < 10 else 10]
                if lvl:
                    reqs.append(_prevedibile_req("prevedibile_difesa", lvl, tech, n))
            attack = False
        if spec.key == "liberazione" and actor_f is not None and actor_f.allentamento:
            # Bonus Allentamento: +2 for each earlier attempt against the same Costrizione
            reqs.append(_allentamento_req(actor_f.allentamento))
        # Liberazione / Percezione / Mimetizzazione add a Bonus Statistica, not the Fattore Statistica
        destrezza = ds = None
        dmalus = 0
        if actor_f is not None:
            if spec.key not in _VALUES:
                if actor_f.stacks.entries or actor_f.conditions or actor_f.costrizioni:
                    destrezza = live_stat(actor_f, "Destrezza")
                    if destrezza is not None:
                        ref = actor_f.stats["Destrezza"]
                        dmalus = destrezza - ref[0] - ref[1]
                else:  # nothing to subtract: the reference Livello Totale
                    ref = actor_f.stats.get("Destrezza")
                    destrezza = ref[0] + ref[1] if ref is not None else None
            ds = actor_f.schema_stats.get("Destrezza")
        chk = check(post_id, i, roll, spec, phase, destrezza, (ds[0] + ds[1]) if ds else None, tuple(reqs),
                    _NO_BONUSES, attack, tkey, dmalus)
        if chk.verdicts:
            p.verdicts.extend(chk.verdicts)
        if cura and distanza_warn is not None:
            p.verdicts.append(verdict("dice.distance_on_cure", post_id,
                f"Cura con Fattore Distanza ({signed(distanza_warn)}): il testo lo applica «esclusivamente agli "
                "Attacchi» e non dice se una Cura lo sia. Letto come scritto finché il forum non sceglie "
                "l'impostazione `distanza_cura` ('attacco' o 'esclusa').", P_DISTANZA, roll=i, found=distanza_warn,
                assumption="distanza_cura"))
        if not (spec.die_difensiva if phase == "difensiva" else spec.die_offensiva):
            continue  # an action without a die (flagged above): nothing to resolve from the roll
        if tag is not None and spec.key != "liberazione" and LI._liberazione_label(
                tag.action, tag.techniques, "")[0] and not (
                phase == "offensiva" and (dfn.failed or dfn.no_offense is not None)):  # not of an annulled action
            LI._liberazione_impropria(p, i, roll, spec, phase, chk, actor, liberazioni)
        if spec.key in _VALUES:
            _value_roll(p, i, spec, chk, actor, liberazioni)
            if phase == "offensiva":
                continue
        if phase == "difensiva":
            if tag and tag.techniques:
                _count_uses(p, actor, spec, phase, tag)
            DF._defend(p, i, roll, spec, chk, target_attack, dfn, mine)
            continue
        offensive_seen = True
        if dfn.failed or dfn.no_offense is not None:
            why = dfn.failed_roll if dfn.failed else dfn.no_offense
            what = "una Difesa è fallita" if dfn.failed else "la Reazione è fallita"
            p.verdicts.append(verdict("outcome.action_annulled", post_id,
                f"{spec.name} annullata: {what} (lancio {why + 1}), quindi la Fase Offensiva non avviene.",
                P_DIFENSIVA, roll=i, details={"failed_roll": why}))
            if spec.kind == "principale" and spec.rolls:
                AT._register(p, i, roll, spec, chk, actor, multi, dfn, annulled=True, declared=declared)
            continue
        if spec.counter and dfn.counter.get(spec.key) == "annullato":
            p.verdicts.append(verdict("outcome.action_annulled", post_id,
                f"{spec.name} annullato nel Confronto di Potenza: non prosegue verso l'Avversario.",
                P_CONFRONTO, roll=i))
            continue
        if spec.kind == "principale" and (spec.die_difensiva or spec.die_offensiva):  # spec.rolls, no property call
            main_count[actor] = main_count.get(actor, 0) + 1
            if main_count[actor] > 1:
                # the extra action does not count: it is not an attack the target must answer
                p.verdicts.append(verdict("turn.extra_main_action", post_id,
                    f"{actor} compie più di un'Azione Principale in questo turno ({spec.name}): non conta.",
                    P_OFFENSIVA, roll=i, expected=1, found=main_count[actor]))
                continue
            if tag and tag.techniques:
                _count_uses(p, actor, spec, phase, tag)
            if (actor_f is not None and (actor_f.conditions or actor_f.stacks.entries)
                    or _alla_cieca(roll.label or "")) and _cieca(p, i, roll, spec, chk, actor_f):
                continue  # failed automatically: nobody has to defend against it
            AT._register(p, i, roll, spec, chk, actor, multi, dfn, declared=declared, cura=cura)
            if declared and any(r.factor == "costrizione" for r in declared):
                LI._costrizione_impropria(p, actor, f"{post_id}#{i}")
    # attacks nobody defended: Difesa Nulla (it cannot fail, the Fase Offensiva goes on)
    for a in mine:
        if a.id in dfn.answered or a.generic or a.annulled:
            continue
        if dfn.failed:
            AT._hit(p, a, ONE, ["Difese successive a una fallita: considerate fallite"], None, dfn.failed_roll)
            continue
        said = bool(_DIFESA_NULLA.search(post.body or ""))
        n0 = len(p.verdicts)
        AT._hit(p, a, ONE, ["Difesa Nulla" if said else "nessuna Difesa lanciata (Difesa Nulla)"], "Difesa Nulla", None)
        if not a.authentic and (p.hits and p.hits[-1].reasons[1:]
                                or any(v.code == "outcome.stacks" for v in p.verdicts[n0:])):
            # the hit is certain, but a Mira effect (×2, Stacks) comes from a die face typed by hand
            DF._not_authentic_outcome(p, n0, None, [f"l'Attacco di {a.attacker} (post {a.post}, lancio {a.roll + 1})"])
    # Preparazione: no main action rolled and the post says so
    me = p.fighters[p.name]
    prepared = not offensive_seen and bool(_PREPARAZIONE.search(post.body or "")) and not dfn.failed
    if prepared:
        stacks = S.remove(me.stacks, S.PREPARAZIONE_RIMUOVE)
        if stacks != me.stacks:
            p.verdicts.append(verdict("outcome.stacks", post.id, f"Preparazione: {name} rimuove le Stack di Stordimento e Sbilanciamento.",
                ACTIONS["preparazione"].paragraph))
        me = evolve(me, stacks=stacks)
    if me.preparazione != prepared or me is not p.fighters[p.name]:
        p.fighters[p.name] = evolve(me, preparazione=prepared)


# Actions of the table allowed in one phase only (phase_of answers that phase whatever the context).
_ONE_PHASE = {k: (a, a.phases()[0]) for k, a in ACTIONS.items() if len(a.phases()) == 1}

_VALUES = {
    "liberazione": ("Valore di Liberazione", "il Valore di Costrizione", "Costrizione e Liberazione › Liberazione"),
    "percezione": ("Valore di Percezione", "il Valore di Mimetizzazione del Bersaglio",
                   "Percezione e Mimetizzazione › Percezione"),
    "mimetizzazione": ("Valore di Mimetizzazione", "il Valore di Percezione di chi cerca",
                       "Percezione e Mimetizzazione › Mimetizzazione"),
    "mascheramento": ("Valore di Mascheramento", "il Valore di Percezione di chi cerca",
                      "Percezione e Mimetizzazione › Mascheramento"),
}


_CIECA = re.compile(r"\balla\s+cieca\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _alla_cieca(label: str) -> bool:
    """The label declares an Attacco alla Cieca (read once per distinct label: every attack asks)."""
    return _CIECA.search(label) is not None


# "Area 40 m", "Raggio Area di 30 metri": the radius of the Area where the hidden target may be
_AREA_RAGGIO = re.compile(r"(?:raggio\s+)?(?:dell'?\s*)?area\s+(?:di\s+)?(\d+(?:[.,]\d+)?)\s*(?:m|metri)\b", re.IGNORECASE)


def _cieca(p: _Post, i: int, roll: Any, spec: ActionSpec, chk: RollCheck, actor_f: Fighter | None) -> bool:
    """Attacco alla Cieca (declared "alla Cieca" with the Area's radius): True when it fails automatically by the
    table. An Accecato attacker who declares nothing: targets beyond 25 m are Nascosti, the master says if so."""
    label = roll.label or ""
    if spec.role != "offensiva" and not spec.counter:
        return False
    if not _CIECA.search(label):
        if actor_f is not None and ("Accecamento" in actor_f.conditions or actor_f.stack_count("Accecamento")):
            p.verdicts.append(verdict("ruling.needed", p.post.id,
                f"{actor_f.name} è Accecato: i Personaggi oltre 25 m sono Nascosti. Se il Bersaglio lo è, questo è un "
                "Attacco alla Cieca (fallimento automatico secondo la tabella): lo stabilisce il master.",
                P_ACCECAMENTO, roll=i))
        return False
    m = _AREA_RAGGIO.search(label)
    if m is None or chk.face is None:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            "Attacco alla Cieca senza il raggio dell'Area dichiarato (es. «Area 40 m»): il fallimento automatico lo "
            "stabilisce il master.", T.RULE_CIECA, roll=i))
        return False
    tag = roll.tag
    head = normalise(_AREA_RAGGIO.sub(" ", " ".join(((tag.action or "") if tag else label,)
                                                      + (tuple(tag.techniques) if tag else ()))))
    tipo = "area_totale" if "area totale" in head else "area" if "area" in head.split() else "mirato"
    try:
        r = PZ.attacco_alla_cieca(float(m.group(1).replace(",", ".")), chk.face, tipo)
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", p.post.id, f"Attacco alla Cieca: {exc}.", T.RULE_CIECA, roll=i))
        return False
    if not r.auto_fail:
        return False
    p.verdicts.append(verdict("outcome.action_annulled", p.post.id,
        "Attacco alla Cieca fallito automaticamente: " + "; ".join(r.steps) + ".", r.rule, roll=i,
        expected=r.soglia, found=chk.face, details={"steps": list(r.steps), "band": r.banda, "kind": r.tipo}))
    return True


def _value_roll(p: _Post, i: int, spec: ActionSpec, chk: RollCheck, actor: str, liberazioni: dict[str, int]) -> None:
    """Liberazione / Percezione / Mimetizzazione / Mascheramento: the die is checked (by `check`), then the value is
    computed and compared (`_liberazione`, `_percezione`, `_mimetizzazione`); a Liberazione without a Costrizione the
    engine knows of goes to the master."""
    name, other, rule = _VALUES[spec.key]
    if spec.key == "liberazione":
        liberazioni[actor] = liberazioni.get(actor, 0) + 1
        if liberazioni[actor] > T.LIBERAZIONI_PER_TURNO:
            p.verdicts.append(verdict("turn.extra_liberazione", p.post.id,
                f"{actor}: al più {T.LIBERAZIONI_PER_TURNO} Tentativo di Liberazione per Turno.", rule, roll=i,
                expected=T.LIBERAZIONI_PER_TURNO, found=liberazioni[actor]))
            return
        f = p.fighters.get(actor)
        if f is not None and f.costrizioni:
            # the engine knows the Costrizione: it computes the attempt (a failure, or unknown numbers, add +2
            # Allentamento to the next one; a success or a "liberato" ruling resets it)
            roll = p.post.rolls[i]
            tag = roll.tag
            imp, gig = LI._liberazione_label(tag.action if tag else None, tuple(tag.techniques) if tag else (),
                                          roll.label or "")
            # a Liberazione roll is not an Azione Difensiva: its die is never halved
            LI._liberazione(p, i, roll, "generica", chk, actor, impropria=imp, gigantismo=gig)
            return
    elif spec.key == "percezione":
        MI._percezione(p, i, chk, actor, rule)
        return
    elif actor in p.fighters:
        MI._mimetizzazione(p, i, spec, chk, actor, rule)
        return
    p.verdicts.append(verdict("ruling.needed", p.post.id,
        f"{name} di {actor}: dado {chk.face if chk.face is not None else '?'}, totale {chk.total if chk.total is not None else '?'}"
        + (f"; nessuna Costrizione attiva nota al motore su {actor}" if spec.key == "liberazione" else "")
        + f": il master lo confronta con {other}.",
        rule, roll=i, found=chk.total))


@lru_cache(maxsize=64)
def _alleato_destrezza_req(amount: int) -> Requirement:
    return Requirement("alleato", amount, "Destrezza su Alleato", ACTIONS["difesa_nulla_alleato"].paragraph, True)


@lru_cache(maxsize=64)
def _allentamento_req(amount: int) -> Requirement:
    return Requirement("allentamento", amount, "Allentamento", P_LIBERAZIONE_ALLENTAMENTO, True)


def _prevedibile(n: int) -> int:
    return 3 if n >= 10 else 2 if n >= 7 else 1 if n >= 4 else 0


# _prevedibile(n) for n = 0..10 (10 and more: index 10), read by _rolls without a call
_PREVEDIBILE_LVL = tuple(_prevedibile(k) for k in range(11))


_Requirement = maker(Requirement)


def _prevedibile_req(factor: str, lvl: int, technique: str, uses: int) -> Requirement:
    """Attacco Prevedibile (bonus) / Difesa Prevedibile (malus) for `uses` uses of `technique` (not cached: the
    use count grows every turn; built without the dataclass's __init__)."""
    base = (_REQ_ATTACCO_PREVEDIBILE if factor == "prevedibile_attacco" else _REQ_DIFESA_PREVEDIBILE)[lvl]
    return _Requirement(base.factor, base.amount, base.label, base.rule, base.bonus,
                        (("technique", technique), ("uses", uses)))


def _count_uses(p: _Post, actor: str, spec: ActionSpec, phase: str, tag: Any) -> None:
    if actor not in p.fighters or not tag or not tag.techniques:
        return
    f = p.fighters[actor]
    if phase == "offensiva" and (spec.role == "offensiva" or spec.counter):
        uses = f.uses_attack.copy()  # a mappingproxy's copy is its dict's (one block), dict() would go key by key
        for t in tag.techniques:
            uses[t] = uses.get(t, 0) + 1
        _set_own(p, actor, f, "uses_attack", MappingProxyType(uses))
    elif phase == "difensiva" and spec.role == "difensiva":
        uses = f.uses_defense.copy()
        for t in tag.techniques:
            uses[t] = uses.get(t, 0) + 1
        _set_own(p, actor, f, "uses_defense", MappingProxyType(uses))


def _set_own(p: _Post, name: str, f: Fighter, field: str, value: Any) -> None:
    """p.fighters[name] = `f` with `field` (not one the summary shows) set: in place when `f` is the step's own
    Fighter (p.own), else a new one."""
    if f is p.own and field not in _SUMMARY_FIELDS:
        f.__dict__[field] = value
    else:
        p.fighters[name] = evolve(f, **{field: value})
