"""Dice and factor checks of one `guida` roll: die, listed modifiers, factor ranges, Destrezza, imposed maluses."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter
from typing import Any

from ...history import DiceLabel, Roll, describe_problems
from ...verdicts import Verdict
from . import tables as T
from .actions import MIRA_RANGE, MIRA_VALUES, DISTANZA_RANGE, ActionSpec, Phase, factor_of, mira_target, normalise
from .messages import (
    P_BERSAGLI, P_CASUALITA, P_COSTR_IMPROPRIA, P_DESCRIZIONE, P_DISTANZA, P_LANCIO, P_LIBERAZIONE, P_MIRA, P_SBALZO,
    P_STACK1, P_STATISTICA, dice_expr, signed, verdict,
)
from .state import Fighter, maker


# --- live statistics ------------------------------------------------------------------------------

def stat_maluses(f: Fighter, stat: str, turn: int | None = None) -> list[tuple[str, int]]:
    """The Punti Bonus the engine knows `stat` loses in turn `turn` (stacks, conditions, Costrizioni)."""
    if not f.stacks.entries and not f.conditions and not f.costrizioni:
        return []  # the common case, kept cheap: nothing to subtract
    turn = f.turn if turn is None else turn
    out: list[tuple[str, int]] = []
    for e in f.stacks.active(turn):
        if e.name in T.STORPIATURE and T.STORPIATURE[e.name][0] == stat:
            out.append((e.name, T.STORPIATURE[e.name][1] * e.count))
    counts = f.stacks.counts(turn)
    if stat == "Costituzione" and counts.get("Ustione"):
        out.append(("Ustione", T.band_value(T.USTIONE_COSTITUZIONE, counts["Ustione"], 0)))
    if stat == "Destrezza":
        if counts.get("Congelamento"):
            out.append(("Congelamento", T.band_value(T.CONGELAMENTO_DESTREZZA, counts["Congelamento"], 0)))
        if counts.get("Accecamento") or "Accecamento" in f.conditions:
            out.append(("Accecamento", T.ACCECAMENTO_DESTREZZA))
        if f.costrizioni:
            # a Blocco Totale absorbs the others; the same effect never counts twice (tables.SETTINGS)
            total = T.COSTRIZIONE_DESTREZZA["Blocco Totale"] if "Blocco Totale" in f.costrizioni else sum(
                T.COSTRIZIONE_DESTREZZA.get(c, 0) for c in set(f.costrizioni))
            out.append(("Costrizione", total))
    return [(k, v) for k, v in out if v]


def live_stat(f: Fighter, stat: str, turn: int | None = None) -> int | None:
    """Livello Totale of `stat` in turn `turn`: reference Base + Bonus plus the maluses the engine tracks."""
    ref = f.stats.get(stat)
    if ref is None:
        return None
    maluses = stat_maluses(f, stat, turn)
    return ref[0] + ref[1] + sum([d for _, d in maluses]) if maluses else ref[0] + ref[1]


# --- one roll -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Requirement:
    """A modifier the rules impose (malus) or grant (bonus) on this roll."""

    factor: str  # as actions.factor_of names it
    amount: int
    label: str  # label to write in the dice tag
    rule: str
    bonus: bool  # True = the player may leave it out (RULINGS #5); False = a malus that must be there
    details: tuple[tuple[str, Any], ...] = ()  # what the verdict adds (Prevedibile: technique, uses)

    def why(self) -> str:
        """The case in words, for the message ("Hirenkyaku usata 4 volte")."""
        det = self.details
        if len(det) == 2 and det[0][0] == "technique" and det[1][0] == "uses":
            # the only shape the step builds (_prevedibile_req): the same words as below, no dict
            return f" ({det[0][1]} usata {det[1][1]} volte)"
        d = dict(det)
        if "technique" in d and "uses" in d:
            return f" ({d['technique']} usata {d['uses']} volte)"
        return ""


@dataclass(frozen=True)
class RollContext:
    spec: ActionSpec
    phase: Phase
    destrezza: int | None  # the live Livello Totale the engine expects
    destrezza_schema: int | None  # the total written in this post's schema
    requirements: tuple[Requirement, ...] = ()
    allowed_bonuses: frozenset[str] = frozenset()  # factors of bonuses that are due now
    attack: bool = False  # Distanza / Mira apply (attacks and offensive counters)
    destrezza_malus: int = 0  # the live maluses (Stack, conditions) inside `destrezza`, <= 0


@dataclass(frozen=True)
class RollCheck:
    verdicts: tuple[Verdict, ...]
    face: int | None
    rendered: int | None
    total: int | None  # the total the engine trusts (RULINGS #6)
    corrections: tuple[tuple[str, int], ...] = ()
    mira: str | None = None
    mira_value: int = 0
    listed: dict[str, int] = field(default_factory=dict)


_make_check = maker(RollCheck)


def face_and_total(roll: Roll) -> tuple[int | None, int | None]:
    face = sum(roll.faces) if roll.faces else None
    total = roll.total
    if total is None and face is not None:
        total = face + roll.constant
    if face is None and total is not None:
        face = total - roll.constant
    return face, total


def _stamp(v: Verdict, post: str, index: int) -> Verdict:
    """A cached verdict for this post and roll (its own details dict: verdicts are never shared)."""
    d = v.__dict__.copy()
    d["post"] = post
    d["roll"] = index if v.roll is not None else None
    d["details"] = dict(v.details) if v.details else {}
    new = _new(Verdict)
    _setattr(new, "__dict__", d)
    return new


_new = object.__new__
_setattr = object.__setattr__


def check_roll(post: str, index: int, roll: Roll, ctx: RollContext) -> RollCheck:
    """Every dice check of one roll, and the total the engine trusts (RULINGS #6)."""
    return check(post, index, roll, ctx.spec, ctx.phase, ctx.destrezza, ctx.destrezza_schema, ctx.requirements,
                 ctx.allowed_bonuses, ctx.attack, destrezza_malus=ctx.destrezza_malus)


# What a roll's checks say regardless of its faces and post, by everything they depend on. A plain dict (cleared
# when full) keyed by plain values: the step builds no RollContext per roll and compares actions by key, as
# ActionSpec's own equality does.
_STATIC: dict[tuple[Any, ...], _Static] = {}
_STATIC_MAX = 8192
_NO_BONUSES: frozenset[str] = frozenset()


_AMOUNT_LABEL = attrgetter("amount", "label")  # Modifier → (amount, label), in C
_REQ_KEY = attrgetter("factor", "amount", "label", "rule", "bonus")  # Requirement without its details, in C


def label_key(tag: DiceLabel | None) -> tuple[Any, ...] | None:
    """What the checks read of a parsed label (action, techniques, modifiers), as plain values: a cache key
    cheaper to hash and compare than the DiceLabel and its Modifiers (generated, Python-level __hash__/__eq__)."""
    if tag is None:
        return None
    return tag.action, tag.techniques, tuple(map(_AMOUNT_LABEL, tag.modifiers))


def check(post: str, index: int, roll: Roll, spec: ActionSpec, phase: Phase, destrezza: int | None,
          destrezza_schema: int | None, requirements: tuple[Requirement, ...] = (),
          allowed_bonuses: frozenset[str] = _NO_BONUSES, attack: bool = False,
          tag_key: tuple[Any, ...] | None = None, destrezza_malus: int = 0) -> RollCheck:
    """`check_roll` without building a RollContext (the step's hot path); `tag_key` = label_key(roll.tag) when
    the caller has it already."""
    if tag_key is None and roll.tag is not None:
        tag_key = label_key(roll.tag)
    # a requirement's details (Prevedibile: technique and the growing use count) only word its verdicts: the key
    # leaves them out, so a long fight does not miss the cache once per use; the verdicts get them back below.
    # Requirements enter the key as plain tuples (_REQ_KEY, in C): no generated __hash__/__eq__ per lookup.
    bare = tuple(map(_REQ_KEY, requirements)) if requirements else ()
    key = (roll.expression, roll.count, roll.sides, roll.constant, roll.source, roll.authentic, roll.problems,
           tag_key, spec.key, phase, destrezza, destrezza_schema, bare, allowed_bonuses, attack, destrezza_malus)
    st = _STATIC.get(key)
    if st is None:
        if len(_STATIC) >= _STATIC_MAX:
            _STATIC.clear()
        st = _STATIC[key] = _static_checks(
            roll.expression, roll.count, roll.sides, roll.constant, roll.source, roll.authentic, roll.problems,
            roll.tag, RollContext(spec, phase, destrezza, destrezza_schema, requirements, allowed_bonuses, attack,
                                    destrezza_malus))
    faces = roll.faces
    if not st.verdicts:
        # a clean roll's check is a value of its faces and total alone: one shared (immutable) RollCheck each
        clean = st.clean
        done = clean.get((faces, roll.total))
        if done is not None:
            return done
    face = sum(faces) if faces else None
    rendered = roll.total
    if rendered is None and face is not None:
        rendered = face + roll.constant
    if face is None and rendered is not None:
        face = rendered - roll.constant
    if st.forum_constant is not None and face is not None:
        rendered = face + st.forum_constant
    if st.verdicts:
        stamped = []
        dicts = []
        for v in st.verdicts:
            new = _stamp(v, post, index)
            stamped.append(new)
            dicts.append(new.__dict__)  # its own dict: the rewording below lands in it
        for vi, ri, why in st.detailed:
            # this call's details (the cached verdict may carry another use count): message and details dict
            req = requirements[ri]
            d = dicts[vi]
            now = req.why()
            if why and now != why:
                d["message"] = d["message"].replace(why, now, 1)
            d["details"] = dict(req.details)
        verdicts = tuple(stamped)
    else:
        verdicts = ()
    if rendered is None or st.void:
        total = None
    else:
        total = rendered
        for _, d in st.corrections:
            total += d
    # the listed modifiers as a dict, one per cached entry and shared (read-only), as clean checks share theirs
    done = _make_check(verdicts, face, rendered, total, st.corrections, st.mira, st.mira_value, st.listed_map)
    if not verdicts and len(clean) < 256:
        clean[(faces, roll.total)] = done
    return done


@dataclass(frozen=True)
class _Static:
    """What a roll's checks say regardless of its die faces and of the post it is in (cached)."""

    verdicts: tuple[Verdict, ...]
    corrections: tuple[tuple[str, int], ...]
    mira: str | None
    mira_value: int
    listed: tuple[tuple[str, int], ...]
    forum_constant: int | None  # Forumotion: the constant the label's modifiers make
    void: bool = False  # a roll for an action without a die: no total
    # verdicts worded from a requirement's details: (verdict index, requirement index, the why() they were worded
    # with); check() rewords them with the details of the call (the cache key leaves details out)
    detailed: tuple[tuple[int, int, str], ...] = ()
    # check()'s own caches of this entry, as fields: reaching them through the instance's __dict__ would turn its
    # attributes into a split dict that CPython 3.11 reads on the slow, unspecialised path
    clean: dict[tuple[Any, Any], RollCheck] = field(default_factory=dict, compare=False, repr=False)  # by faces, total
    listed_map: dict[str, int] = field(default_factory=dict, compare=False, repr=False)  # `listed` as a dict, shared


_ROLL = 0  # placeholder index in cached verdicts; check_roll stamps the real one


def _static_checks(expression: str, count: int, sides: int, constant: int, source: str, authentic: bool,
                   problems: tuple[str, ...], tag: DiceLabel | None, ctx: RollContext) -> _Static:
    out: list[Verdict] = []
    spec = ctx.spec
    post = ""
    index = _ROLL
    forum_constant: int | None = None
    if not authentic:
        out.append(verdict(
            "dice.not_authentic", post,
            f"Il lancio «{expression}» non è un lancio autentico del forum ({describe_problems(problems) or 'sconosciuto'}).",
            P_LANCIO, roll=index, found=list(problems)))
    want = spec.die(ctx.phase)
    if want == 0:
        out.append(verdict(
            "dice.unexpected_roll", post,
            f"{spec.name} non richiede alcun lancio di dado, ma è stato lanciato {expression}.",
            spec.paragraph, roll=index, expected=None, found=expression))
        return _Static(tuple(out), (), None, 0, (), None, void=True)
    if want is not None and (sides != want or count != 1):
        out.append(verdict(
            "dice.wrong_die", post,
            f"{spec.name} in Fase {ctx.phase.capitalize()} si lancia con 1d{want}, non con {count}d{sides}.",
            spec.paragraph, roll=index, expected=f"1d{want}", found=f"{count}d{sides}"))

    mods = tag.modifiers if tag else ()
    listed: dict[str, int] = {}
    for m in mods:
        fac = factor_of(m.label)
        listed[fac] = listed.get(fac, 0) + m.amount
    listed_sum = sum(m.amount for m in mods)
    corrections: list[tuple[str, int]] = []
    if source == "forumotion_gm" and constant == 0 and mods:
        # Forumotion's Game Master rolls the bare dice: the label's modifiers are the whole constant
        constant = listed_sum
        forum_constant = listed_sum
    if mods and listed_sum != constant:
        out.append(verdict(
            "dice.modifier_mismatch", post,
            f"I modificatori elencati sommano a {signed(listed_sum)}, ma il dado è stato lanciato con "
            f"{signed(constant)} ({expression}).",
            P_LANCIO, roll=index, expected=listed_sum, found=constant,
            details={"modifiers": [[m.amount, m.label] for m in mods]}))
        # RULINGS #6 (ours: the lower of the two readings decides; a mismatch never helps its author)
        if listed_sum < constant:
            corrections.append(("modificatori elencati", listed_sum - constant))
    elif not mods and constant:
        out.append(verdict(
            "dice.modifiers_unlisted", post,
            f"Il lancio ha {signed(constant)} ma non elenca i Fattori e i Bonus che lo compongono.",
            P_LANCIO, roll=index, expected="modificatori elencati", found=constant))

    # Fattore Distanza and Fattore Mira: attacks only; never in the defensive phase of a Contrattacco.
    for fac, rng, rule, name in (("distanza", DISTANZA_RANGE, P_DISTANZA, "Distanza"),
                                 ("mira", MIRA_RANGE, P_MIRA, "Mira")):
        if fac not in listed:
            continue
        val = listed[fac]
        if not ctx.attack:
            out.append(verdict(
                "dice.factor_out_of_range", post,
                f"Il Fattore {name} si applica solo agli Attacchi (non a {spec.name} in Fase {ctx.phase.capitalize()}).",
                rule, roll=index, expected=0, found=val))
            corrections.append((f"Fattore {name}", -val))
        elif not rng[0] <= val <= rng[1]:
            clamped = min(max(val, rng[0]), rng[1])
            out.append(verdict(
                "dice.factor_out_of_range", post,
                f"Il Fattore {name} vale {signed(val)}, fuori dal suo intervallo [{rng[0]}, {signed(rng[1])}].",
                rule, roll=index, expected=list(rng), found=val))
            corrections.append((f"Fattore {name}", clamped - val))
    mira = None
    mira_value = 0
    if ctx.attack:
        for m in mods:
            if factor_of(m.label) == "mira":
                part = mira_target(m.label)
                if part:
                    mira = part
                    mira_value = MIRA_VALUES[part]
                    if m.amount != mira_value and MIRA_RANGE[0] <= listed.get("mira", 0) <= MIRA_RANGE[1]:
                        out.append(verdict(
                            "dice.factor_out_of_range", post,
                            f"Mira {part.capitalize()}: Probabilità di Colpire {signed(mira_value)}, non {signed(m.amount)}.",
                            P_MIRA, roll=index, expected=mira_value, found=m.amount))
                        corrections.append(("Fattore Mira", mira_value - m.amount))
        if mira is None and tag is not None:
            # "Attacco Mirato Testa" / a technique list naming the target part without its malus
            words = normalise(" ".join((tag.action or "",) + tuple(tag.techniques))).split()
            if "mirato" in words or "mira" in words:
                part = next((w for w in words if w in MIRA_VALUES), None)
                if part and MIRA_VALUES[part]:
                    mira = part
                    mira_value = MIRA_VALUES[part]
                    out.append(verdict(
                        "dice.missing_modifier", post,
                        f"Attacco mirato {part.capitalize()}: manca il malus {signed(mira_value)} [Mirato {part.capitalize()}].",
                        P_MIRA, roll=index, expected=mira_value, found=0))
                    corrections.append(("Fattore Mira", mira_value))

    # Fattore Statistica: Livello Totale Destrezza, live.
    if "destrezza" in listed:
        found = listed["destrezza"]
        as_schema = ctx.destrezza_schema is not None and found == ctx.destrezza_schema
        if ctx.destrezza is not None and as_schema and ctx.destrezza_malus and found != ctx.destrezza:
            # the schema's total may hold a buff the engine does not know, but the Stack / condition maluses it
            # does know still apply on top of it: not updating the schema does not dodge them
            expected = found + ctx.destrezza_malus
            out.append(verdict(
                "dice.stat_mismatch", post,
                f"Destrezza {signed(found)} come nello schema, ma lo schema non toglie i malus noti "
                f"({signed(ctx.destrezza_malus)} da Stack e condizioni): Destrezza {signed(expected)}.",
                P_STATISTICA, roll=index, expected=expected, found=found,
                details={"schema": ctx.destrezza_schema, "malus": ctx.destrezza_malus}))
            corrections.append(("Destrezza", ctx.destrezza_malus))
        elif ctx.destrezza is not None and found != ctx.destrezza:
            unverifiable = as_schema and found > ctx.destrezza
            out.append(verdict(
                "dice.stat_unverifiable" if unverifiable else "dice.stat_mismatch", post,
                (f"Destrezza {signed(found)} come nello schema, ma il Livello Totale noto al motore è "
                 f"{ctx.destrezza}: bonus non verificabile." if unverifiable else
                 f"Destrezza {signed(found)} nel lancio, ma il Livello Totale di Destrezza ora è {ctx.destrezza} "
                 "(Stack e condizioni comprese)."),
                P_STATISTICA, roll=index, expected=ctx.destrezza, found=found))
            if not unverifiable:
                corrections.append(("Destrezza", ctx.destrezza - found))
    elif ctx.destrezza is not None and ctx.destrezza < 0:
        out.append(verdict(
            "dice.missing_modifier", post,
            f"Manca il Fattore Statistica: Destrezza {signed(ctx.destrezza)}.",
            P_STATISTICA, roll=index, expected=ctx.destrezza, found=None))
        corrections.append(("Destrezza", ctx.destrezza))
    elif ctx.destrezza:
        out.append(verdict(
            "dice.bonus_not_taken", post,
            f"Il lancio non elenca la Destrezza ({signed(ctx.destrezza)}): è un bonus perso dal giocatore.",
            P_STATISTICA, roll=index, expected=ctx.destrezza, found=None))

    # Maluses imposed by the rules (RULINGS #5: error) and bonuses due (info when not taken).
    detailed: list[tuple[int, int, str]] = []
    for ri, req in enumerate(ctx.requirements):
        have = listed.get(req.factor, 0)
        if req.details:
            n_before = len(out)
        if req.bonus:
            if have < req.amount:
                out.append(verdict(
                    "dice.bonus_not_taken", post,
                    f"{req.label} {signed(req.amount)}{req.why()} spettava ma non è stato usato.",
                    req.rule, roll=index, expected=req.amount, found=have, details=dict(req.details)))
            elif have > req.amount:
                # claimed above what the rules give: the excess does not count (RULINGS #6)
                out.append(verdict(
                    "dice.undue_bonus", post,
                    f"{req.label}{req.why()}: il bonus spettante è {signed(req.amount)}, ne è stato elencato {signed(have)}.",
                    req.rule, roll=index, expected=req.amount, found=have, details=dict(req.details)))
                corrections.append((req.label, req.amount - have))
        elif have > req.amount:
            out.append(verdict(
                "dice.missing_modifier", post,
                f"Manca il malus {signed(req.amount)} [{req.label}]{req.why()}" + (f" (elencato {signed(have)})" if have else "") + ".",
                req.rule, roll=index, expected=req.amount, found=have, details=dict(req.details)))
            corrections.append((req.label, req.amount - have))
        if req.details and len(out) > n_before:
            detailed.append((len(out) - 1, ri, req.why()))
    due = {r.factor for r in ctx.requirements if r.bonus} | ctx.allowed_bonuses
    for fac, rule, name in (("preparazione", P_CASUALITA, "Preparazione"), ("contrattacco", P_CASUALITA, "Contrattacco"),
                            ("prevedibile_attacco", P_DESCRIZIONE, "Attacco Prevedibile"),
                            ("allentamento", P_LIBERAZIONE, "Allentamento")):
        if listed.get(fac, 0) > 0 and fac not in due:
            out.append(verdict(
                "dice.undue_bonus", post,
                f"Bonus {name} {signed(listed[fac])} non spettante in questo momento.",
                rule, roll=index, expected=0, found=listed[fac]))
            corrections.append((name, -listed[fac]))
    for fac, name in (("sorpresa", "Attacco a Sorpresa"), ("spalle", "Attacco alle Spalle")):
        if fac in listed:
            out.append(verdict(
                "ruling.needed", post,
                f"Bonus {name} {signed(listed[fac])}: la situazione va confermata dal master.",
                P_DESCRIZIONE, roll=index, found=listed[fac]))

    return _Static(tuple(out), tuple(corrections), mira, mira_value, tuple(listed.items()), forum_constant,
                   listed_map=dict(listed),
                   detailed=tuple(detailed))


def requirement_stacks(f: Fighter, spec: ActionSpec, phase: Phase) -> list[Requirement]:
    """Type-1 maluses on this roll: Sbilanciamento on Probabilità di Difendere, Stordimento on every roll."""
    out: list[Requirement] = []
    if not f.stacks.entries:
        return out
    sb = f.stack_count("Sbilanciamento")
    st = f.stack_count("Stordimento")  # the text's "per ogni Stack di Sbilanciamento" under Stordimento: a typo
    # a Contrattacco in Fase Difensiva "considera le Probabilità di Colpire e non quelle di Difendere"
    defending = phase == "difensiva" and spec.role == "difensiva" and not spec.counter
    if sb and defending:
        out.append(Requirement("sbilanciamento", T.SBILANCIAMENTO_DIFENDERE * sb, "Sbilanciamento", P_STACK1, False))
    if st:
        out.append(Requirement("stordimento", T.STORDIMENTO_SUCCESSO * st, "Stordimento", P_STACK1, False))
    return out


def requirement_declared(roll: Roll, spec: ActionSpec, phase: Phase, multi: str | None) -> list[Requirement]:
    """Maluses the label itself declares: Sbalzo −2, Costrizione Impropria −2, Bersagli Multipli mirati −2."""
    return list(declared(label_key(roll.tag), roll.label, spec, phase, multi))


def declared(tag_key: tuple[Any, ...] | None, label: str, spec: ActionSpec, phase: Phase,
             multi: str | None) -> tuple[Requirement, ...]:
    """`requirement_declared` from the label's key (label_key), as a tuple."""
    if phase != "offensiva" or spec.role == "difensiva" and not spec.counter:
        return ()
    return _declared(tag_key[0] if tag_key else None, tag_key[1] if tag_key else None, label, multi)


@lru_cache(maxsize=4096)
def _declared(action: str | None, techniques: tuple[str, ...] | None, label: str,
              multi: str | None) -> tuple[Requirement, ...]:
    """The maluses an offensive roll's label declares (techniques None: the roll has no parsed label)."""
    out: list[Requirement] = []
    head = normalise(" ".join(((action or "") if techniques is not None else label,) + tuple(techniques or ())))
    words = head.split()
    if "sbalzo" in words or "sbalzare" in words:
        out.append(Requirement("sbalzo", T.SBALZO_DICHIARATO_COLPIRE, "Sbalzo", P_SBALZO, False))
    if "costrizione impropria" in head:
        out.append(Requirement("costrizione", T.COSTRIZIONE_IMPROPRIA_COLPIRE, "Costrizione Impropria",
                               P_COSTR_IMPROPRIA, False))
    if multi == "mirato":
        out.append(Requirement("bersagli", T.MIRATI_MULTIPLI_COLPIRE, "Bersagli Multipli", P_BERSAGLI, False))
    return tuple(out)


def multi_kind(roll: Roll) -> str | None:
    """Bersagli Multipli: None for one target; "area", "area_totale", "multipli" when the label says so; else
    "mirato" (a wide or piercing blow: −2)."""
    tag = roll.tag
    if tag is None or len(tag.targets) < 2:
        return None
    return _multi(tag)


@lru_cache(maxsize=4096)
def _multi(tag: DiceLabel) -> str:
    head = normalise(" ".join((tag.action or "",) + tuple(tag.techniques) + tuple(m.label for m in tag.modifiers)))
    if "area totale" in head:
        return "area_totale"
    if "area" in head.split():
        return "area"
    if "multipl" in head and "bersagli multipli" not in head:
        return "multipli"
    return "mirato"


def dice_tag(spec_name: str, sides: int, actor: str, target: str | None, mods: list[tuple[int, str]],
             techniques: tuple[str, ...] = ()) -> str:
    """A ready-to-paste dice tag in the rule text's form."""
    const = sum(a for a, _ in mods)
    techs = f" [{', '.join(techniques)}]" if techniques else ""
    who = f"{actor} vs {target}" if target else actor
    listed = " ".join(f"{signed(a)} [{label}]" for a, label in mods)
    tail = f": ({listed})" if listed else ""
    return f"[dice={dice_expr(sides, const)}]{spec_name}{techs} ({who}){tail}[/dice]"


def describe(value: Any) -> str:
    return "?" if value is None else str(value)
