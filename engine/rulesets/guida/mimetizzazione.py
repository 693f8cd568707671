"""Percezione e Mimetizzazione in the flow: Mimetizzazione, Mascheramento and Percezione rolls."""
from __future__ import annotations

from typing import Any

from . import liberazione as LI
from . import percezione as PZ
from . import tables as T
from . import tecniche as TC
from ...history import Technique
from .actions import ActionSpec
from .checks import RollCheck
from .messages import verdict
from .state import Fighter, evolve, frozen_map
from .turno import _Post, _resolve_name


# --- Percezione e Mimetizzazione: the values (percezione.py) ----------------------------------------

def _scoperto_now(t: Fighter) -> int:
    """The target's own turns spent not Mimetizzato since its first Mimetizzazione ended, up to now."""
    n, since = t.scoperto
    return n + (t.turn - since if t.mimetizzazione is None and since is not None else 0)


def _stat_bonus(p: _Post, roll: Any, actor: str) -> tuple[int | None, Technique | None, str | None]:
    """Bonus Statistica of a Percezione / Mimetizzazione roll (Regolamento Tecniche): the registry's (technique in the
    label, else the character), else the label's own «Bonus Statistica» modifier (RULINGS #7)."""
    reg = p.state.registry
    tag = roll.tag
    tech = TC._technique(reg, tuple(tag.techniques), actor) if tag is not None and tag.techniques else None
    bs = TC._bonus_statistica(reg, actor, tech)
    if bs is not None:
        return bs, tech, None
    bs = LI._label_amount(roll, "bonus statistica")
    return bs, tech, ("calcolo_dichiarato" if bs is not None else None)


def _die_and_bonus_missing(chk: RollCheck, bs: int | None, actor: str, what: str) -> list[str]:
    """The numbers a Valore (Dado + Bonus Statistica …) lacks, named for the master."""
    missing = [] if chk.face is not None else ["Dado (faccia non mostrata)"]
    if bs is None:
        missing.append(f"Bonus Statistica di {actor} per {what} nel registro")
    return missing


def _mimetizzazione(p: _Post, i: int, spec: ActionSpec, chk: RollCheck, actor: str, rule: str) -> None:
    """A Mimetizzazione / Mascheramento roll: its Valore (Dado + Bonus Statistica) becomes the actor's current one."""
    f = p.fighters.get(actor)
    if f is None:
        return
    what = "Mimetizzazione" if spec.key == "mimetizzazione" else "Mascheramento"
    bs, _, assumption = _stat_bonus(p, p.post.rolls[i], actor)
    missing = _die_and_bonus_missing(chk, bs, actor, f"la {what}")
    valore = None
    if not missing:
        try:
            c = PZ.valore_mimetizzazione(chk.face, bs)  # type: ignore[arg-type]
            valore, steps = c.value, [s.replace("Mimetizzazione:", f"{what}:") for s in c.steps]
        except T.MechanicsError as exc:
            missing.append(str(exc))
    changes: dict[str, Any] = {spec.key: (valore, f.turn)}
    if spec.key == "mimetizzazione" and f.mimetizzazione is None and f.scoperto[1] is not None:
        # hidden again: the turns it spent found are counted once and for all
        changes["scoperto"] = (f.scoperto[0] + max(0, f.turn - 1 - f.scoperto[1]), None)
    p.fighters[actor] = evolve(f, **changes)
    if missing:
        known = {"Dado": chk.face} if chk.face is not None else {}
        LI._missing_numbers(p, i, f"Valore di {what} di {actor}", missing, known, rule, found=chk.total)
        return
    p.verdicts.append(verdict("outcome.hidden", p.post.id,
        f"{actor}: Valore di {what} {valore} ({'; '.join(steps)}), valido finché una Percezione non lo individua.",
        rule, roll=i, found=valore, details={"steps": steps, "what": what}, assumption=assumption))


def _percezione(p: _Post, i: int, chk: RollCheck, actor: str, rule: str) -> None:
    """A Percezione roll: Valore di Percezione (Dado + Bonus Statistica + Concentrazione) against each target's current
    Valore di Mimetizzazione (0 without one) and Mascheramento; found targets lose their Mimetizzazione."""
    f = p.fighters.get(actor)
    if f is None:
        return
    roll = p.post.rolls[i]
    tag = roll.tag
    if tag is not None and tag.targets:
        targets = [(_resolve_name(p.state, t) or t) for t in tag.targets]
    else:
        targets = [n for n, x in p.fighters.items() if n != actor and (x.mimetizzazione or x.mascheramento)]
    if not targets:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Percezione di {actor} senza Bersaglio nell'etichetta e nessun Personaggio Mimetizzato noto al motore: "
            "il master stabilisce chi viene individuato.", rule, roll=i, found=chk.total))
        return
    bs, _, assumption = _stat_bonus(p, roll, actor)
    conc = dict(f.concentrazione)
    for name in targets:
        t = p.fighters.get(name)
        if t is None or name == actor:
            continue
        count = _scoperto_now(t)
        bonus, recorded = conc.get(name, (0, count))
        c = PZ.Concentrazione(bonus)
        for _ in range(max(0, count - recorded)):
            c = PZ.turno_senza_mimetizzazione(c)  # −2 for each turn the target was not Mimetizzato
        hidden = t.mimetizzazione is not None or t.mascheramento is not None
        used, after = PZ.tentativo_percezione(c, mimetizzato=hidden)
        conc[name] = (after.bonus, count)
        checks = [(w, v) for w, v in (("Mimetizzazione", t.mimetizzazione), ("Mascheramento", t.mascheramento))
                  if v is not None] or [("Mimetizzazione", None)]
        perc = None
        missing = _die_and_bonus_missing(chk, bs, actor, "la Percezione")
        if not missing:
            try:
                perc = PZ.valore_percezione(chk.face, bs, used)  # type: ignore[arg-type]
            except T.MechanicsError as exc:
                missing.append(str(exc))
        changes: dict[str, Any] = {}
        for what, value in checks:
            mim = 0 if value is None else value[0]
            if mim is None:
                missing_here = missing + [f"Valore di {what} di {name} (non calcolato)"]
            else:
                missing_here = missing
            if missing_here and not (value is None and perc is None and chk.face is not None):
                known = {"Dado": chk.face} if chk.face is not None else {}
                if bs is not None:
                    known["Bonus Stat."] = bs
                known["Concentrazione"] = used
                LI._missing_numbers(p, i, f"Percezione di {actor} su {name} ({what})", missing_here, known, rule,
                                 found=chk.total)
                continue
            steps = list(perc.steps) if perc is not None else []
            found_it = perc is None or PZ.individua(perc.value, mim)  # not Mimetizzato: found whatever the number
            pv = perc.value if perc is not None else None
            details = {"steps": steps, "what": what, "concentrazione": used, "target": name}
            if found_it:
                why = (f"Valore di Percezione {pv} ≥ Valore di {what} {mim}" if value is not None
                       else f"{name} non è Mimetizzato (Valore 0)")
                p.verdicts.append(verdict("outcome.detected", p.post.id,
                    f"{actor} individua {name}: {why}." + (f" {steps[0]}." if steps else ""), rule, roll=i,
                    expected=mim, found=pv, details=details, assumption=assumption))
                if value is not None:
                    changes["mimetizzazione" if what == "Mimetizzazione" else "mascheramento"] = None
                    if what == "Mimetizzazione":
                        changes["scoperto"] = (count, t.turn)
            else:
                p.verdicts.append(verdict("outcome.not_detected", p.post.id,
                    f"{actor} non individua {name}: Valore di Percezione {pv} < Valore di {what} {mim}; il prossimo "
                    f"Tentativo ha Concentrazione +{after.bonus}. {steps[0]}.", rule, roll=i, expected=mim, found=pv,
                    details=details, assumption=assumption))
        if changes:
            p.fighters[name] = evolve(t, **changes)
    if conc != dict(f.concentrazione):
        p.fighters[actor] = evolve(p.fighters[actor], concentrazione=frozen_map(conc))
