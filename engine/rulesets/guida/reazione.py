"""Sbalzo e Reazione in the flow: the Reazione to a declared Sbalzo and the Distanza Massima di Sbalzo."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from . import liberazione as LI
from . import sbalzo as SB
from . import tables as T
from . import tecniche as TC
from ...history import Registry
from .checks import RollCheck, live_stat
from .messages import cifra
from .messages import verdict
from .state import GuidaState, Incoming, evolve
from .turno import _DIFESA_NULLA, _Defence, _Post


def _reazione(p: _Post, i: int, chk: RollCheck, dfn: _Defence, mine: list[Incoming]) -> None:
    """Reazione (1d12 + Destrezza) against the Valore di Sbalzo of a declared Sbalzo that lands: only after Difesa
    Nulla or a Protezione riuscita; equal or higher → no Danni Ambientali and half the distance; lower → no Fase
    Offensiva."""
    post = p.post
    rule = "Sbalzo e Reazione › Reazione"
    if not (dfn.protezione_ok or _DIFESA_NULLA.search(post.body or "")):
        p.verdicts.append(verdict("ruling.needed", post.id, "Reazione: si può tentare solo con Difesa Nulla o Protezione riuscita.", rule, roll=i))
        return
    atk = next((a for a in mine if a.sbalzo and not a.annulled), None)
    if atk is None:
        p.verdicts.append(verdict("ruling.needed", post.id, "Reazione senza uno Sbalzo dichiarato in arrivo: il master valuta.", rule, roll=i))
        return
    reg = p.state.registry
    tech = TC._technique(reg, atk.techniques, atk.attacker)
    bonus = TC._bonus_statistica(reg, atk.attacker, tech)
    if tech is None or not tech.category or bonus is None or atk.face is None or chk.total is None:
        p.verdicts.append(verdict("ruling.needed", post.id,
            f"Reazione {chk.total if chk.total is not None else '?'} contro lo Sbalzo di {atk.attacker}: Valore di Sbalzo "
            "non calcolabile (categoria o Bonus Statistica assenti dal registro).", rule, roll=i, found=chk.total))
        return
    try:
        vs = SB.valore_sbalzo(atk.face, bonus, tech.category, da_difesa=atk.counter)  # a Defence's die is halved
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", post.id, f"Valore di Sbalzo non calcolabile: {exc}", rule, roll=i))
        return
    numbers = {"valore_sbalzo": str(vs.value), "steps": list(vs.steps), "attack_post": atk.post}
    if chk.total >= vs.value:
        if p.reazioni is None:
            p.reazioni = set()
        p.reazioni.add(atk.id)
        dms, missing = sbalzo_dms(evolve(p.state, fighters=p.fighters), atk)
        if dms is not None:
            half = SB.reazione(chk.total, vs.value, dms.value).distanza
            numbers.update(dms=_num(dms.value), distanza=_num(half))
            distance = f"distanza di Sbalzo dimezzata: DMS {_metri(dms.value)} m → {_metri(half)} m"
        else:
            distance = "distanza di Sbalzo dimezzata (DMS non calcolabile: " + "; ".join(missing) + ")"
        p.verdicts.append(verdict("outcome.defended", post.id,
            f"Reazione riuscita ({chk.total} ≥ {vs.floor if vs.value == vs.floor else float(vs.value)}): niente Danni "
            f"Ambientali e {distance}.", rule, roll=i, expected=str(vs.value), found=chk.total,
            details=numbers))
    else:
        dfn.no_offense = i
        p.verdicts.append(verdict("outcome.hit", post.id,
            f"Reazione fallita ({chk.total} < {float(vs.value):g}): lo Sbalzo va a segno e non si potrà procedere alla "
            "Fase Offensiva.", rule, roll=i, expected=str(vs.value), found=chk.total, details=numbers))


def _num(x: Fraction) -> int | float:
    """A distance for JSON: an int when whole."""
    return int(x) if x.denominator == 1 else float(x)


def _metri(x: Fraction) -> str:
    """A distance for a message, Italian style ("13,5")."""
    return cifra(x)


def sbalzo_dms(state: GuidaState, atk: Incoming) -> tuple[SB.Calc | None, list[str]]:
    """The Distanza Massima di Sbalzo of a declared Sbalzo: (Dado + Bonus Pot. + Bonus Stat. − Forza Avv.) × Mod of
    the technique's category, the die halved when the Sbalzo comes from a Defence (a Contrattacco). Returns the
    Calc, or None with the names of the missing numbers (registry: category, `extra.bonus_potenziale`, Bonus
    Statistica; the target's Forza; the die)."""
    reg = state.registry
    tech = TC._technique(reg, atk.techniques, atk.attacker)
    missing: list[str] = []
    if atk.face is None:
        missing.append("Fattore di Casualità dell'Attacco")
    if tech is None:
        missing.append("Tecnica nel registro (categoria, Bonus Potenziale, Bonus Statistica)")
    else:
        if not tech.category:
            missing.append(f"categoria del Potenziale di {tech.name} (registro `category`)")
        # the same lookup as the Valore di Costrizione: the technique's, else the character's table by category
        bp = LI._bonus_potenziale(reg, atk.attacker, tech)
        if bp is None:
            missing.append(f"Bonus Potenziale di {tech.name} (registro `extra.bonus_potenziale`)")
    bonus = TC._bonus_statistica(reg, atk.attacker, tech)
    if bonus is None and tech is not None:
        missing.append(f"Bonus Statistica di {atk.attacker} (registro `extra.bonus_statistica`)")
    target = state.fighters.get(atk.target)
    forza = live_stat(target, "Forza") if target is not None else None
    if forza is None:
        missing.append(f"Forza di {atk.target} (Livello Totale)")
    if missing:
        return None, missing
    try:
        return SB.dms(atk.face, bp, bonus, forza, tech.category,  # type: ignore[union-attr,arg-type]
                      da_difesa=atk.counter), []
    except T.MechanicsError as exc:
        return None, [str(exc)]


_SBALZO_MEMO: list[tuple[Any, frozenset[str]]] = [(None, frozenset())]


def _sbalzo_techniques(reg: Registry) -> frozenset[str]:
    """Lower-cased names of the techniques whose Sbalzo is an effect (registry `extra.sbalzo = true`), one registry
    at a time."""
    memo = _SBALZO_MEMO[0]
    if memo[0] is not reg:
        # by name too: a second owner's technique is keyed `Nome [Owner]` (Registry)
        memo = _SBALZO_MEMO[0] = (reg, frozenset(x.lower() for n, t in reg.techniques.items()
                                                 if t.extra.get("sbalzo") is True for x in (n, t.name)))
    return memo[1]


def _sbalzo_landed(p: _Post, atk: Incoming, roll: int | None) -> None:
    """A declared Sbalzo that lands: its Distanza Massima di Sbalzo (outcome.sbalzo), else the master rules
    naming the missing numbers."""
    calc, missing = sbalzo_dms(evolve(p.state, fighters=p.fighters), atk)  # the fighters as this post left them
    if calc is None:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Sbalzo di {atk.attacker} su {atk.target}: Distanza Massima di Sbalzo non calcolabile, mancano "
            + "; ".join(missing) + ".", T.RULE_SBALZO, roll=roll, details={"attack_post": atk.post, "missing": missing}))
        return
    dms = _num(calc.value)
    p.verdicts.append(verdict("outcome.sbalzo", p.post.id,
        f"Sbalzo di {atk.attacker} su {atk.target}: Distanza Massima di Sbalzo {_metri(calc.value)} m (" + "; ".join(calc.steps)
        + "). Si può sbalzare a distanze inferiori; se non la si specifica vale la Massima.", T.RULE_SBALZO, roll=roll,
        found=dms, details={"attack_post": atk.post, "dms": dms, "steps": list(calc.steps),
                            "da_difesa": atk.counter}))
