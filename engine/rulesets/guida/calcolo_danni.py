"""Calcolo dei Danni in the flow: the calculation matched to its hit, checked, applied; its conditions; cures capped."""
from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from operator import attrgetter
from typing import Any

from . import aree as AR
from . import damage as D
from . import liberazione as LI
from . import stacks as S
from . import tables as T
from . import tecniche as TC
from ...history import DamageCalc, Registry, Technique
from .actions import limb_stack
from .checks import live_stat
from .messages import P_DANNI, P_DANNI_POST, P_MIRA, P_STACK1, verdict
from .messages import cifra
from .state import Fighter, GuidaState, Hit, Incoming, evolve
from .tecniche import _bonus_statistica, _technique
from .turno import DAMAGE_KINDS, HALF, ONE, _DueDamage, _Post, _STACK_DECL, _resolve_name


# --- damage posted by the attacker ----------------------------------------------------------------

def _armatura(reg: Registry, target: str, spent: bool = False) -> D.Armatura | None:
    """The Armatura the target wears (`spent`: it gave way earlier in this turn and protects no more)."""
    ch = reg.characters.get(target)
    if ch is None:
        return None
    for n in ch.techniques:
        t = reg.technique(n, ch.name, str.lower)
        # only an armour the registry marks as worn ("attiva"): owning one does not mean wearing it
        if t is not None and t.kind == "armatura" and t.potenziale is not None and t.extra.get("attiva"):
            return D.Armatura(t.potenziale, t.name, bool(t.extra.get("blocca_puri")), attiva=not spent)
    return None


def _stated_all(calc: DamageCalc) -> dict[str, float | None]:
    """`_stated` for every name of the calculation at once: lower-cased name → its first term's value."""
    out: dict[str, float | None] = {}
    for t in calc.terms:
        key = t.name.lower()
        if key not in out:
            out[key] = t.value if math.isfinite(t.value) else None
    return out


def _evaluate(calc: DamageCalc) -> int | None:
    """The value of a written calculation, left to right, rounding down once at the end."""
    if calc.value is not None:
        # the scraper's reading of the written arithmetic (brackets, halved Armatura, breakdowns), rounded down once
        return math.floor(calc.value) if math.isfinite(calc.value) else None
    if not calc.terms:
        return None
    return _evaluate_terms(tuple([(t.op, t.value) for t in calc.terms]))


@lru_cache(maxsize=2048)
def _evaluate_terms(terms: tuple[tuple[str, float], ...]) -> int | None:
    """`_evaluate` of (op, value) pairs (cached: exact Fraction arithmetic is slow and calculations repeat)."""
    value = Fraction(0)
    for op, v in terms:
        if not math.isfinite(v):
            return None
        x = Fraction(v).limit_denominator(1000)
        if op == "+":
            value += x
        elif op == "-":
            value -= x
        elif op == "*":
            value *= x
        elif op == "/" and x:
            value /= x
    return int(value // 1)


@lru_cache(maxsize=2048)
def _formula(kind: str, pot: int | None, res: int | None, potenziale: int | None, bonus: int | None,
             mult_num: int, mult_den: int, reasons: str, armatura: D.Armatura | None, minimo: int,
             blocca_puri: str = "meta_potenziale", categoria: str | None = None, dado: int | None = None,
             da_difesa: bool = False) -> D.DamageResult | None:
    """The damage.py formula for these numbers (cached: fights repeat the same numbers turn after turn; the
    multiplier comes as numerator and denominator, cheaper to hash than a Fraction)."""
    mult = Fraction(mult_num, mult_den)
    mults = [D.Multiplier(mult, reasons)] if mult != 1 else []
    if kind == "puro" and potenziale is not None and bonus is not None:
        return D.danno_puro(potenziale, bonus, armatura=armatura, multipliers=mults, armatura_blocca_puri=blocca_puri)
    if kind == "semi-puro" and None not in (pot, res, potenziale, bonus):
        return D.danno_semipuro(pot, res, potenziale, bonus, armatura=armatura, multipliers=mults,  # type: ignore[arg-type]
                                danno_minimo=minimo, armatura_blocca_puri=blocca_puri)
    if kind == "cura":  # never a damage formula, whatever numbers are known
        return D.cura_principale(potenziale, bonus, armatura=armatura) if None not in (potenziale, bonus) else None
    if kind == "ambientale":
        # Potenziale D.A. from the generating attack's die and category; never critical (RULINGS #3 multipliers
        # that are not critical still apply: ties, Protezione)
        if categoria is None or dado is None or bonus is None or res is None:
            return None
        return D.danno_ambientale(categoria, dado, bonus, res, da_difesa=da_difesa, armatura=armatura,
                                  multipliers=[m for m in mults if not m.critical], danno_minimo=minimo)
    if pot is not None and res is not None:
        return D.danno_normale(pot, res, armatura=armatura, multipliers=mults, aggiuntivo=kind == "aggiuntivo",
                               danno_minimo=minimo)
    return None


def compute_damage(state: GuidaState, hit: Hit, calc: DamageCalc | None,
                   kind: str | None = None) -> tuple[int | None, list[str], str | None]:
    """The engine's damage for a hit: registry first, then the numbers stated in the calculation (RULINGS #7).
    `kind` forces the damage type (a Danno Ambientale line of the hit). Returns (amount or None, explanation
    steps, basis)."""
    target = state.fighters.get(hit.attack.target)
    spent = target is not None and target.armatura_ceduta == hit.resolved_in
    amount, steps, basis, _, _, _ = _compute_damage(state, hit, calc, kind, spent)
    return amount, list(steps), basis


def damage_of(state: GuidaState, hit: Hit, calc: DamageCalc | None, kind: str | None = None,
              armatura_spent: bool = False) -> tuple[int | None, list[str], str | None, str | None]:
    """`compute_damage`, with the target's Armatura already spent in this turn when `armatura_spent`; the 4th
    value is the Armatura's outcome ("regge", "cede" or None)."""
    amount, steps, basis, armour, _, _ = _compute_damage(state, hit, calc, kind, armatura_spent)
    return amount, list(steps), basis, armour


# Damages of this registry and settings by everything else they depend on (hits repeat the same numbers turn after
# turn). One registry at a time, held with its map: a replay of another registry starts a new map, and a step that
# took the map before keeps writing into its own.
_DamageNow = tuple[int | None, Any, str | None, str | None, str | None, str | None]
_DAMAGE_MEMO: list[tuple[Any, Any, dict[tuple[Any, ...], _DamageNow]]] = [
    (None, None, {})]
_NAME_VALUE = attrgetter("name", "value")


def _compute_damage(state: GuidaState, hit: Hit, calc: DamageCalc | None, kind: str | None = None,
                    armatura_spent: bool = False) -> _DamageNow:
    """damage_of with the steps as they come (a tuple or list, not copied: read-only)."""
    atk = hit.attack
    target = state.fighters.get(atk.target)
    if target is None:
        res = None
    elif target.stacks.entries or target.conditions or target.costrizioni:
        res = live_stat(target, "Costituzione")
    else:  # live_stat with nothing to subtract (stat_maluses' own test): the reference Livello Totale
        ref = target.stats.get("Costituzione")
        res = ref[0] + ref[1] if ref is not None else None
    pf, mult = atk.potenziale_factor, hit.multiplier
    # the die face, Mira and Contrattacco enter the Danno Ambientale (never critical) and the counter's damage
    key = (atk.techniques, atk.attacker, atk.target, 1 if pf is ONE else (pf.numerator, pf.denominator), atk.multi,
           atk.n_targets, res, None if calc is None else (calc.kind, tuple(map(_NAME_VALUE, calc.terms))),
           1 if mult is ONE else (1, 2) if mult is HALF else (mult.numerator, mult.denominator), hit.reasons, kind,
           armatura_spent, atk.face, atk.mira, atk.generic, atk.counter, atk.potenziale_mod)
    memo = _DAMAGE_MEMO[0]
    if memo[0] is not state.registry or memo[1] is not state.settings:
        memo = _DAMAGE_MEMO[0] = (state.registry, state.settings, {})
    try:
        done = memo[2].get(key)
    except TypeError:  # something unhashable in a hand-built history: no memo
        return _damage_now(state, hit, calc, res, kind, armatura_spent)
    if done is None:
        if len(memo[2]) >= 4096:
            memo[2].clear()
        done = memo[2][key] = _damage_now(state, hit, calc, res, kind, armatura_spent)
    return done


def _damage_now(state: GuidaState, hit: Hit, calc: DamageCalc | None, res: int | None, kind: str | None,
                armatura_spent: bool) -> _DamageNow:
    """(amount — negative for a cure —, steps, basis, Armatura outcome, damage kind, rule paragraph of the formula)."""
    reg = state.registry
    atk = hit.attack
    tech = _technique(reg, atk.techniques, atk.attacker)
    if kind is None and tech is not None:
        for cand in (tech.extra.get("danno"), tech.type):
            if isinstance(cand, str) and cand.lower() in DAMAGE_KINDS:
                kind = cand.lower()
                break
    if kind is None and calc is not None and calc.kind in DAMAGE_KINDS:
        kind = calc.kind
    kind = (kind or "normale").replace("semipuro", "semi-puro")
    potenziale = tech.potenziale if tech else None
    bonus = _bonus_statistica(reg, atk.attacker, tech)
    basis = "motore"
    area_steps: list[str] = []
    if potenziale is not None and tech is not None and tech.extra.get("area_statica_m") is not None:
        potenziale, area_steps = _area_statica(tech, potenziale)
        if potenziale is None:
            return None, area_steps, None, None, kind, None
    if potenziale is not None and atk.potenziale_mod:
        potenziale, why = _potenziale_modificato(tech, potenziale, atk.potenziale_mod, "Sbilanciamento")
        area_steps = [*area_steps, why]
        if potenziale is None:
            return None, tuple(area_steps), None, None, kind, None
    if potenziale is not None and atk.potenziale_factor != 1:
        potenziale = int(potenziale * atk.potenziale_factor)
    pot = (potenziale + bonus) if potenziale is not None and bonus is not None else None
    if atk.multi == "multipli" and pot is not None:
        pot += T.MULTIPLI_POTENZA_PER_BERSAGLIO * (atk.n_targets - 1)
    if calc is not None and calc.terms and (pot is None or potenziale is None or res is None):
        stated = _stated_all(calc)
        if pot is None and stated.get("potenza") is not None:
            pot, basis = int(stated["potenza"]), "dichiarato"
        if potenziale is None and stated.get("potenziale") is not None:
            potenziale, basis = int(stated["potenziale"]), "dichiarato"
            if bonus is None and stated.get("bonus statistica") is not None:
                bonus = int(stated["bonus statistica"])
            if pot is None and bonus is not None:
                pot = potenziale + bonus
        if res is None and stated.get("resistenza") is not None:
            res, basis = int(stated["resistenza"]), "dichiarato"
        if bonus is None and kind == "ambientale" and stated.get("bonus statistica") is not None:
            bonus, basis = int(stated["bonus statistica"]), "dichiarato"
    minimo = int(state.settings.get("danno_minimo", 0) or 0)
    mult = hit.multiplier
    categoria = dado = None
    if kind == "ambientale":
        # never critical: the Fattore Mira doubling of the hit does not reach the Danno Ambientale
        mult = _without_critical(hit)
        categoria = tech.category if tech is not None else None
        dado = atk.face
    try:
        r = _formula(kind, pot, res, potenziale, bonus, mult.numerator, mult.denominator, "; ".join(hit.reasons),
                     _armatura(reg, atk.target, armatura_spent), minimo,
                     str(state.settings.get("armatura_blocca_puri", "meta_potenziale")),
                     categoria, dado, atk.counter)
    except T.MechanicsError as exc:
        return None, (str(exc),), None, None, kind, None
    if r is None:
        return None, tuple(area_steps), None, None, kind, None
    amount = -r.amount if r.cura else r.amount  # a cure adds PV: negative as a damage to record
    return amount, tuple(area_steps) + tuple(r.steps) if area_steps else r.steps, basis, r.armatura, kind, r.rule


def _potenziale_modificato(tech: Technique | None, potenziale: int, mods: int, why: str) -> tuple[int | None, str]:
    """A Potenziale lowered by `mods` modificatori (Sbilanciamento): one modificatore is worth the technique's
    registry `extra.modificatore` points (Regolamento Tecniche); without it the Potenziale is unknown (None)."""
    head = f"{why}: Potenziale {mods:+d} modificatori"
    step = tech.extra.get("modificatore") if tech is not None else None
    if not isinstance(step, int) or isinstance(step, bool):
        return None, head + " (il valore di un modificatore è del Regolamento Tecniche: registro `extra.modificatore`)"
    lowered = max(potenziale + mods * step, 0)
    return lowered, head + f" × {step} = Potenziale {potenziale} → {lowered}"


def _area_statica(tech: Technique, potenziale: int) -> tuple[int | None, list[str]]:
    """Area Statica (registry `extra.area_statica_m`, ours): "le Dimensioni dell'Area riducono il Potenziale della
    Tecnica" by modificatori; how many points one modificatore is comes from the Regolamento Tecniche (registry
    `extra.modificatore`), else the Potenziale is unknown (the master or the written calculation decides)."""
    try:
        mods = AR.malus_statico(float(tech.extra["area_statica_m"]))
    except (T.MechanicsError, TypeError, ValueError) as exc:
        return None, [f"Area Statica di {tech.name}: {exc}"]
    head = f"Area Statica di {tech.name} ({tech.extra['area_statica_m']} m): Potenziale {mods:+d} modificatori"
    if not mods:
        return potenziale, [head]
    step = tech.extra.get("modificatore")
    if not isinstance(step, int) or isinstance(step, bool):
        return None, [head + " (il valore di un modificatore è del Regolamento Tecniche: registro `extra.modificatore`)"]
    reduced = max(potenziale + mods * step, 0)
    return reduced, [head + f" × {step} = Potenziale {potenziale} → {reduced}"]


def _without_critical(hit: Hit) -> Fraction:
    """The hit's multiplier without the Colpo Critico of the Fattore Mira (Danni Ambientali are never critical)."""
    atk = hit.attack
    mult = hit.multiplier
    if atk.face is not None and not atk.generic:
        part = atk.mira or "corpo"
        mira = "arti" if part in ("arti", "braccia", "braccio", "gambe", "gamba") else part
        eff = D._mira_effects(mira, atk.face, None)
        if eff is not None and eff.multiplier is not None and eff.multiplier.critical:
            mult /= eff.multiplier.factor
    return mult


# the lowest die face that can make a Colpo Critico of the Fattore Mira (head ≥ 9, body 12)
_CRITICO_MIN_FACCIA = min(T.MIRA_TESTA_CRITICO_FACCIA, T.MIRA_CORPO_CRITICO_FACCIA)
# Lines that come on top of a hit's own calculation, never in its place (when the hit has another line).
_EXTRA_KINDS = frozenset({"ambientale", "aggiuntivo"})
# Lines that need no hit of the poster: cures and regenerations.
_NO_HIT_KINDS = frozenset({"cura", "rigenerazione"})


class _LazyDetails:
    """The details of a damage verdict, built on first use and then shared by the hit's verdicts."""

    __slots__ = ("post", "steps", "hit", "value")

    def __init__(self, post: str, steps: Any, hit: Hit) -> None:
        self.post, self.steps, self.hit, self.value = post, steps, hit, None

    def get(self) -> dict[str, Any]:
        if self.value is None:
            h = self.hit
            m = h.multiplier
            self.value = {"attack_post": self.post, "steps": list(self.steps),
                          "multiplier": "1" if m is ONE else "1/2" if m is HALF else str(m), "reasons": list(h.reasons)}
        return self.value


def _damage_calcs(p: _Post) -> None:
    """The attacker's Calcolo dei Danni in its Fase Iniziale, for every hit resolved since its last turn; the
    Danno Ambientale / Aggiuntivo lines that come with them; lines for which no hit is pending."""
    post = p.post
    name = p.name
    mine: list[Hit] = []
    keep: list[Hit] = []
    for h in p.hits:
        (mine if h.attack.attacker == name else keep).append(h)
    if not mine and not post.damage:
        return
    calcs = list(post.damage)
    extras = False
    for c in calcs:
        if c.kind in _EXTRA_KINDS:
            extras = True
            break
    regen = [c for c in calcs if c.kind == "cura" and _RIGENERAZIONE.match(c.raw)]
    if regen:
        calcs = [c for c in calcs if c not in regen]
    for h in mine:
        atk = h.attack
        where = ""
        if atk.cura:
            # a Cura's own line first (the Calcolo delle Cure), else any line naming it
            calc = _match_calc([c for c in calcs if c.kind == "cura"], atk) or _match_calc(calcs, atk)
            if calc is None and h.calcolo is not None:
                calc = h.calcolo  # written with the Cura itself
                calcs.append(calc)  # removed again just below
                where = f" Il Calcolo delle Cure è scritto con la Cura, nel post {atk.post}."
        elif extras:
            calc = _match_calc([c for c in calcs if c.kind not in _EXTRA_KINDS], atk) or _match_calc(calcs, atk)
        else:
            calc = _match_calc(calcs, atk)
        if calc is not None:
            calcs.remove(calc)
        if h.fermata is not None:
            if calc is not None:
                p.verdicts.append(verdict("damage.no_hit", post.id,
                    f"Calcolo delle Cure su {atk.target}" + (f" [{atk.techniques[0]}]" if atk.techniques else "")
                    + f": la Cura non è andata a segno (fermata da un Contrattacco su Azione Generica nel post "
                    f"{h.fermata}). Non va registrata." + where, T.RULE_CURE, expected=None,
                    found=calc.result if calc.result is not None else _evaluate(calc),
                    details={"raw": calc.raw, "attack_post": atk.post, "fermata": h.fermata}))
            continue
        target = p.fighters.get(atk.target)
        spent = target is not None and target.armatura_ceduta == h.resolved_in
        amount, steps, basis, armour, kind_of, rule_of = _compute_damage(p.state, h, calc, "cura" if atk.cura else None,
                                                                         spent)
        if armour == "cede" and target is not None:
            # "L'Armatura non offrirà protezione per il resto del Turno": the other hits of that turn (the
            # target's, where the hits were resolved)
            p.fighters[atk.target] = evolve(target, armatura_ceduta=h.resolved_in)
        stated = calc.result if calc is not None else None
        if calc is not None and stated is None:
            stated = _evaluate(calc)
        tech = atk.techniques[0] if atk.techniques else None
        # the verdicts below share one details dict; most hits need none
        details = _LazyDetails(atk.post, steps, h)
        if h.ruled is not None:
            amount, basis = h.ruled, "ruling"
        # a cure: the engine keeps it negative (PV the target gains), the player writes what it heals
        cura = (amount is not None and amount < 0) or kind_of == "cura" or (calc is not None and calc.kind == "cura")
        shown = -amount if cura and amount is not None else amount
        if calc is None:
            p.verdicts.append(verdict("damage.missing_calc", post.id,
                (f"Manca il Calcolo delle Cure della Cura andata a segno su {atk.target}" if atk.cura else
                 f"Manca il Calcolo dei Danni del colpo a segno su {atk.target}")
                + (f" [{tech}]" if tech else "") + (f": il motore calcola {shown}." if shown is not None else "."),
                P_DANNI_POST, expected=shown, found=None, details=details.get()))
        elif amount is not None and stated is not None and shown != stated:
            rule, why = rule_of or P_DANNI, ""
            face = atk.face
            # `is not`: _without_critical gives the hit's own multiplier back when no Colpo Critico is in it (a
            # Fraction compared with == is a Python-level call)
            if (h.ruled is None and face is not None and face >= _CRITICO_MIN_FACCIA
                    and _without_critical(h) is not h.multiplier):
                # the Colpo Critico of the Fattore Mira left out: that is the rule to cite
                plain = _compute_damage(p.state, evolve(h, multiplier=_without_critical(h)), calc, None, spent)[0]
                if plain == stated:
                    rule = P_MIRA
                    why = " Manca il Colpo Critico (Fattore Mira): " + "; ".join(
                        r for r in h.reasons if "raddoppiato" in r.lower() or "mira" in r.lower()) + "."
            p.verdicts.append(verdict("damage.miscalculated", post.id,
                ("Cura di " if cura else "Danno a ") + atk.target + (f" [{tech}]" if tech else "")
                + f": {cifra(stated)} dichiarato, {shown} calcolato." + why + where, rule, expected=shown, found=stated,
                details=details.get(),
                assumption="calcolo_dichiarato" if basis == "dichiarato" else None))
        elif amount is None and stated is not None:
            if atk.potenziale_mod and h.ruled is None:
                p.verdicts.append(verdict("ruling.needed", post.id,
                    f"L'Attacco di {atk.attacker} su {atk.target}" + (f" [{tech}]" if tech else "")
                    + f" parte con Stack di Sbilanciamento (Potenziale {atk.potenziale_mod:+d} modificatori): il valore "
                    f"di un modificatore non è nel registro, il master verifica il danno dichiarato ({stated}).",
                    T.RULE_TIPO1, expected=None, found=stated, details=details.get()))
            own = _evaluate(calc)
            # "= -2 → 0 Danni": a calculation below zero written as no damage is no error
            if calc.result is not None and own is not None and own != calc.result and not (own < 0 and calc.result == 0):
                p.verdicts.append(verdict("damage.miscalculated", post.id,
                    f"Il calcolo scritto dà {own}, non {cifra(calc.result)}.", P_DANNI, expected=own, found=calc.result,
                    details=details.get(), assumption="calcolo_dichiarato"))
                stated = own
            amount, basis = (-stated if cura else stated), "dichiarato"
        if amount is None:
            p.verdicts.append(verdict("ruling.needed", post.id,
                f"Danno su {atk.target}" + (f" [{tech}]" if tech else "")
                + ": Potenziale, Bonus Statistica o Resistenza sconosciuti e nessun calcolo scritto.",
                P_DANNI, details=details.get()))
        target = p.fighters.get(atk.target)
        if target is not None and cura and amount is not None and resource_of(calc) == "PV":
            amount = -_cap_cura(p, target, -amount, f"{atk.attacker}" + (f" [{tech}]" if tech else ""), steps,
                                basis, atk.post)
        if target is not None:
            resource = calc.resource if calc is not None else "PV"
            due = target.due + (_DueDamage(amount, resource, atk.attacker, tech, atk.post, basis or "dichiarato"),)
            target = evolve(target, due=due)
            # stacks the attacker declares in its calculation ("2 Stack di Sbilanciamento"); most declare none
            if calc is not None and not atk.cura and (h.applicate or _declared_text(calc.raw) != _NOTHING_DECLARED):
                target = _declared_stacks(p, target, calc, damage=amount, atk=atk, hit=h, kind=kind_of)
            p.fighters[atk.target] = target
    if calcs:
        _extra_calcs(p, mine, calcs)
    if regen:
        _rigenerazioni(p, regen)
    p.hits = keep


def resource_of(calc: DamageCalc | None) -> str:
    return calc.resource if calc is not None else "PV"


def _hit_for(mine: list[Hit], calc: DamageCalc) -> Hit | None:
    """The hit (of this batch) an extra line belongs to: same target (and technique when both name one)."""
    if calc.target is None:
        return mine[0] if len(mine) == 1 else None
    low = calc.target.lower()
    on_target = [h for h in mine if h.attack.target.lower() == low]
    if calc.technique:
        tech = calc.technique.lower()
        named = [h for h in on_target if tech in {t.lower() for t in h.attack.techniques}]
        if named:
            return named[0]
    return on_target[0] if on_target else None


def _extra_calcs(p: _Post, mine: list[Hit], calcs: list[DamageCalc]) -> None:
    """Calculation lines left after every hit took its own: Danni Ambientali (the engine's formula), Danni
    Aggiuntivi (one per target per turn, the strongest), and lines for which no hit is pending (error)."""
    post = p.post
    aggiuntivi: dict[str, list[tuple[DamageCalc, Hit, int | None]]] = {}
    for c in calcs:
        if c.kind in _NO_HIT_KINDS:
            continue
        h = _hit_for(mine, c)
        stated = c.result if c.result is not None else _evaluate(c)
        who = c.target or "?"
        if h is None or c.kind not in _EXTRA_KINDS:
            if h is not None:
                continue  # a second line for a target hit this turn (a breakdown of its calculation): not checked
            p.verdicts.append(verdict("damage.no_hit", post.id,
                f"Calcolo dei Danni su {who}" + (f" [{c.technique}]" if c.technique else "")
                + (f" ({stated})" if stated is not None else "") + ": nessun colpo a segno in attesa di calcolo "
                "(l'Attacco è stato difeso, mancato o già calcolato). Il danno non va registrato.",
                P_DANNI_POST, expected=None, found=stated, details={"raw": c.raw}))
            continue
        if c.kind == "aggiuntivo":
            aggiuntivi.setdefault(h.attack.target, []).append((c, h, stated))
            continue
        atk = h.attack
        if h.reazione:
            # "Se il Valore di Reazione eguaglia o supera quella di Sbalzo: non si subiscono i Danni Ambientali"
            if stated:
                p.verdicts.append(verdict("damage.miscalculated", post.id,
                    f"Danno Ambientale a {atk.target}: {stated} dichiarato, ma la Reazione di {atk.target} allo Sbalzo "
                    f"(post {h.resolved_in}) è riuscita: nessun Danno Ambientale.", T.RULE_REAZIONE, expected=0,
                    found=stated, details={"attack_post": atk.post, "kind": "ambientale", "reazione": h.resolved_in}))
            continue  # nothing to record in the target's Registro
        target = p.fighters.get(h.attack.target)
        amount, steps, basis, armour, _, rule = _compute_damage(
            p.state, h, c, "ambientale", target is not None and target.armatura_ceduta == h.resolved_in)
        steps = list(steps)
        if armour == "cede" and target is not None:
            # the Armatura gave way to the Danno Ambientale: no protection for the rest of that turn
            p.fighters[atk.target] = evolve(target, armatura_ceduta=h.resolved_in)
        details = {"attack_post": atk.post, "steps": steps, "kind": "ambientale"}
        if amount is not None and stated is not None and amount != stated:
            p.verdicts.append(verdict("damage.miscalculated", post.id,
                f"Danno Ambientale a {atk.target}: {stated} dichiarato, {amount} calcolato.",
                rule or T.RULE_AMBIENTALE, expected=amount, found=stated, details=details,
                assumption="calcolo_dichiarato" if basis == "dichiarato" else None))
        if amount is None:
            amount, basis = stated, "dichiarato"
        _due_extra(p, atk, c, amount, basis, "Danno Ambientale")
    for target, items in aggiuntivi.items():
        known = [(c, h, a) for c, h, a in items if a is not None]
        if not known:
            c, h, _ = items[0]
            _due_extra(p, h.attack, c, None, None, "Danno Aggiuntivo")
            continue
        best = D.piu_forte([D.DamageResult(amount=max(a, 0), kind="aggiuntivo", steps=(c.raw,)) for c, _, a in known])
        i_best = next(i for i, (_, _, a) in enumerate(known) if best is not None and max(a, 0) == best.amount)
        c, h, a = known[i_best]
        if len(items) > 1:
            p.verdicts.append(verdict("damage.miscalculated", post.id,
                f"Più Danni Aggiuntivi su {target} nello stesso turno: conta solo il più forte ({a}); scartati "
                f"{[x for j, (_, _, x) in enumerate(known) if j != i_best]}.",
                P_DANNI, expected=a, found=sum(x for _, _, x in known),
                details={"kind": "aggiuntivo", "amounts": [x for _, _, x in known]}))
        _due_extra(p, h.attack, c, a, "dichiarato", "Danno Aggiuntivo")


def _due_extra(p: _Post, atk: Incoming, calc: DamageCalc, amount: int | None, basis: str | None, what: str) -> None:
    """An extra damage of a hit, for the target's next Registro."""
    target = p.fighters.get(atk.target)
    if target is None:
        return
    label = calc.technique or what
    due = target.due + (_DueDamage(amount, calc.resource, atk.attacker, label, atk.post, basis or "dichiarato"),)
    p.fighters[atk.target] = evolve(target, due=due)


def _match_calc(calcs: list[DamageCalc], atk: Incoming) -> DamageCalc | None:
    if not calcs:
        return None
    techs = set(map(str.lower, atk.techniques))
    for c in calcs:
        if c.target and c.target.lower() == atk.target.lower() and (not c.technique or not techs or c.technique.lower() in techs):
            return c
    for c in calcs:
        if c.technique and c.technique.lower() in techs and not c.target:
            return c
    for c in calcs:
        if not c.target and not c.technique:
            return c
    return None


_ACCECATO = re.compile(r"\baccecat[oaie]\b|\baccecamento\b", re.IGNORECASE)
_COSTRIZIONI = tuple(sorted(T.COSTRIZIONE_DESTREZZA, key=len, reverse=True))


def _declared_stacks(p: _Post, target: Fighter, calc: DamageCalc, damage: int | None,
                     atk: Incoming | None = None, hit: Hit | None = None, kind: str | None = None) -> Fighter:
    """The conditions the attacker's calculation reports ("2 Stack di Stordimento", "Accecato", a Costrizione
    effect such as "Blocco Braccia", with its Valore di Costrizione: `_costrizione_hit`). The Calcolo reports, it
    does not apply again: the Stacks the rules gave when the hit landed (`Hit.condizioni`: Fattore Mira, the
    technique's registry `extra.stack`) are compared with the written ones — written and not due →
    `stacks.undue`, due and not written → `damage.missing_condition` — and neither changes the state. Only when
    the registry does not list the technique's own Stacks are the written ones beyond the rules' taken, once, as
    the technique's (`assumption: condizioni_dichiarate`); the hit still decides what may stick (Danno
    Aggiuntivo, Protezione riuscita, Type-2 without damage: stacks.apply)."""
    declared, present = _declared_text(calc.raw)
    if present:
        target = LI._costrizione_hit(p, target, calc, atk, present)
    written: dict[str, int] = {}
    for n, c in declared:
        written[n] = written.get(n, 0) + c
    due: dict[str, int] = {}
    applied: dict[str, int] = {}
    if hit is not None:
        for n, c in hit.condizioni:
            due[n] = due.get(n, 0) + c
        for n, c in hit.applicate:
            applied[n] = applied.get(n, 0) + c
    known = atk is not None and TC._tech_stacks(p.state.registry, atk) is not None
    tech = (atk.techniques[0] if atk is not None and atk.techniques else None) or calc.technique
    who = f"{atk.attacker}" + (f" [{tech}]" if tech else "") if atk is not None else (calc.actor or "?")
    limb = _limb_unknown(atk) if atk is not None else False
    extra: list[tuple[str, int]] = []
    for name, n in written.items():
        over = n - due.get(name, 0)
        if over > 0 and limb and name in T.STORPIATURE and due.get(limb_stack(None), 0):
            continue  # Mira agli Arti without the limb: the written Storpiatura is the attacker's choice (ruling)
        if over <= 0:
            continue
        if known:
            have = due.get(name, 0)
            p.verdicts.append(verdict("stacks.undue", p.post.id,
                f"Il Calcolo di {who} su {target.name} riporta {n} Stack di {name}, ma ne sono dovute {have}: "
                + _due_reasons(p, atk, name) + " Lo stato segue le regole: non vengono applicate.",
                _undue_rule(atk, name), expected=have, found=n,
                details={"stack": name, "attack_post": atk.post if atk is not None else None,
                         "due": dict(due), "written": dict(written)}))
        else:
            extra.append((name, over))
    for name, n in applied.items():
        if written.get(name, 0) >= n or (limb and name == limb_stack(None)
                                         and any(k in T.STORPIATURE for k in written)):
            continue
        p.verdicts.append(verdict("damage.missing_condition", p.post.id,
            f"Il Calcolo di {who} su {target.name} non riporta {n - written.get(name, 0)} Stack di {name} "
            f"({_due_reasons(p, atk, name, brief=True)}): «devono essere riportate tutte le eventuali condizioni». "
            "Lo stato le applica comunque.", P_DANNI_POST, expected=n, found=written.get(name, 0),
            details={"stack": name, "attack_post": atk.post if atk is not None else None}))
    if not extra:
        return target
    return _apply_stacks(p, target, extra, damage=damage, aggiuntivo="aggiuntivo" in (calc.kind, kind),
                         protezione=hit is not None and hit.protezione,
                         source=p.post.id, condition=calc.technique or "Costrizione",
                         assumption="condizioni_dichiarate",
                         why=" come le scrive il Calcolo: il registro non elenca le Stack proprie della Tecnica "
                             "(`extra.stack`), prese una volta")


def _limb_unknown(atk: Incoming) -> bool:
    """Mira agli Arti without the limb (`_hit` guessed the arms and asked the master)."""
    return atk.mira in ("arti",) and atk.face is not None and atk.face >= T.MIRA_ARTI_STORPIATURA_FACCIA


_MIRA_STACKS = frozenset({"Stordimento", "Storpiatura Debilitante", "Storpiatura Articolare"})


def _undue_rule(atk: Incoming | None, name: str) -> str:
    """The paragraph that decides whether `name` is due: the Fattore Mira for its Stacks on an aimed attack, else the
    Stack's own Type."""
    if atk is not None and atk.mira and name in _MIRA_STACKS:
        return P_MIRA
    return S.rule_of(name)


def _due_reasons(p: _Post, atk: Incoming | None, name: str, brief: bool = False) -> str:
    """Why the rules give (or do not give) `name` to this hit: the Fattore Mira of its die face, the registry."""
    if atk is None:
        return "nessun colpo noto."
    parts: list[str] = []
    if atk.face is not None and not atk.generic:
        part = atk.mira or "corpo"
        mira, arti = D._MIRA_PARTS.get(part) or ("arti" if part in ("arti",) else part, None)
        eff = D._mira_effects(mira, atk.face, arti)
        if eff is not None and eff.stacks:
            parts.append("Fattore Mira: " + "; ".join(st for st in eff.steps if "Stack" in st))
        elif atk.mira:
            parts.append(f"Fattore Mira: Mira {atk.mira.capitalize()} con dado {atk.face}, nessuna Stack"
                         + (" (Stordimento solo con 12)" if mira == "testa" else
                            " (Storpiatura solo con 10 o più)" if mira == "arti" else ""))
    own = TC._tech_stacks(p.state.registry, atk)
    if own is not None:
        tech = _technique(p.state.registry, atk.techniques, atk.attacker)
        parts.append(f"{tech.name if tech else 'la Tecnica'} (registro): "
                     + (", ".join(f"{n} Stack di {s}" for s, n in own) if own else "nessuna Stack"))
    if not parts:
        return "nessuna regola le applica." if not brief else "dovute"
    return "; ".join(parts) + ("" if brief else ".")


_NOTHING_DECLARED: tuple[tuple[Any, ...], tuple[str, ...]] = ((), ())


@lru_cache(maxsize=2048)
def _declared_text(raw: str) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    """What a calculation's text declares, read once per distinct text: the Stacks [(name, count)] and the
    Costrizione effects it names."""
    wanted: list[tuple[str, int]] = []
    for n, name in _STACK_DECL.findall(raw):
        canon = " ".join(w.capitalize() for w in name.split())
        try:
            S.tipo_of(canon)
        except S.UnknownStack:
            continue
        wanted.append((canon, int(n)))
    if _ACCECATO.search(raw) and not any(n == "Accecamento" for n, _ in wanted):
        wanted.append(("Accecamento", 1))
    low = raw.lower()
    return tuple(wanted), tuple(c for c in _COSTRIZIONI if c.lower() in low)


def _apply_stacks(p: _Post, target: Fighter, wanted: list[tuple[str, int]], *, damage: int | None = None,
                  aggiuntivo: bool = False, protezione: bool = False, source: str | None = None,
                  condition: str | None = None, applied: list[tuple[str, int]] | None = None,
                  assumption: str | None = None, why: str = "") -> Fighter:
    """Stacks that reach `target` (their limits, Protezione, Danno Aggiuntivo, Type-2 without damage); `applied`
    collects what stuck; `why`/`assumption` word the outcome verdict."""
    try:
        res = S.apply(target.stacks, wanted, turn=target.turn, damage_taken=damage, aggiuntivo=aggiuntivo,
                      protezione=protezione, source=source, condition=condition)
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", p.post.id, f"Stack non applicabili: {exc}", P_STACK1))
        return target
    for o in res.overflow:
        p.verdicts.append(verdict("stacks.over_limit", p.post.id, f"{target.name}: {o.message()}.", o.rule, expected=o.limit,
            found=o.existing + o.requested, details={"stack": o.name, "applied": o.applied}))
    for r in res.rejected:
        p.verdicts.append(verdict("outcome.stacks", p.post.id, f"{target.name}: {r.message}.", r.rule, found=r.count,
            details={"stack": r.name, "reason": r.reason}))
    if res.applied:
        if applied is not None:
            applied.extend(res.applied)
        p.verdicts.append(verdict("outcome.stacks", p.post.id,
            f"{target.name} riceve " + ", ".join(f"{n} Stack di {s}" for s, n in res.applied)
            + " (attive dal suo prossimo turno)" + why + ".",
            S.rule_of(res.applied[0][0]), found=dict(res.applied),  # the paragraph of the (first) Stack's Type
            assumption=assumption))
    return evolve(target, stacks=res.stacks)


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
        stated = c.result if c.result is not None else _evaluate(c)
        tech = _technique(reg, (c.technique,), user) if c.technique else None
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
