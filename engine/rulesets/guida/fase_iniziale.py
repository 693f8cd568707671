"""Struttura dei Turni › Fase Iniziale: Stacks at the start of the turn, the post schema, the Registro and the expenses."""
from __future__ import annotations

from typing import Any

from . import stacks as S
from . import tables as T
from ...history import Registry
from .messages import P_DANNI, P_INIZIALE, P_SCHEMA, signed, verdict
from .state import Expense, Fighter, evolve, frozen_map
from .state import evolve_with
from .turno import _DueDamage, _Post, _name_keys, canon_stats


# --- Fase Iniziale --------------------------------------------------------------------------------

def _fase_iniziale_stacks(p: _Post) -> None:
    """Type-4 damage and decay at the start of the turn (stacks.fase_iniziale); the damage goes to the Registro."""
    f = p.fighters[p.name]
    if not any(e.tipo in (3, 4) for e in f.stacks.entries):
        return
    fi = S.fase_iniziale(f.stacks, f.turn, _veleni(p.state.registry))
    due = list(f.due)
    for d in fi.damages:
        due.append(_DueDamage(d.amount, "PV", f.name, d.steps[0] if d.steps else d.kind, p.post.id, "motore"))
    costr = tuple(c for c in f.costrizioni if c not in fi.broken)
    p.fighters[p.name] = evolve(f, stacks=fi.stacks, due=tuple(due), costrizioni=costr,
                   costrizione=f.costrizione if costr else None, allentamento=f.allentamento if costr else 0)
    for name, cond, lost in fi.decayed:
        p.verdicts.append(verdict("outcome.stacks", p.post.id, f"Fase Iniziale: {f.name} perde {lost} Stack di {name}.",
            "Condizioni Fisiche › Stack Tipo-4: Stack Condizionate", found=lost, details={"stack": name}))


def _veleni(registry: Registry) -> dict[str, S.Veleno]:
    out: dict[str, S.Veleno] = {}
    for name, t in registry.techniques.items():
        try:
            v = S.veleno_from_extra(name, t.extra)
        except T.MechanicsError:
            v = None
        if v:
            out[name] = v
    return out


def _schema(p: _Post, changes: dict[str, Any] | None = None) -> None:
    """The post's schema and Registro. `changes`: other fields of the poster's Fighter to set with them (only with a
    schema)."""
    post, f = p.post, p.fighters[p.name]
    schema = post.schema
    if schema is None:
        p.verdicts.append(verdict("schema.missing_part", post.id, "Il post non ha lo schema: mancano link alla scheda, PV/PE, "
            "Statistiche e Registro.", P_SCHEMA, expected=["sheet_url", "PV", "PE", "stats", "registro"], found=None))
        _apply_due_without_registro(p)
        return
    if schema.missing:
        names = {"sheet_url": "link alla Scheda", "PV": "Punti Vita", "PE": "Punti Energia",
                 "stats": "Statistiche", "registro": "Registro"}
        if "registro" in schema.missing and schema.registro is not None:
            # a Registro was written, but a change in it could not be read (docs/history-format.md)
            names["registro"] = "una variazione leggibile nel Registro (una riga non è stata capita)"
        p.verdicts.append(verdict("schema.missing_part", post.id,
            "Nello schema manca: " + ", ".join(names.get(m, m) for m in schema.missing) + ".",
            P_SCHEMA, expected=list(schema.missing), found=None))
    if changes is None:
        changes = {}  # applied with the Registro's own, in one new Fighter
    if schema.stats:
        written = {}  # a loop: no comprehension frame for a handful of stats
        for k, s in schema.stats.items():
            written[k] = (s.base, s.bonus)
        if "Resistenza" in written:
            written = canon_stats(written)
        stats = f.stats
        if not stats:
            # the first schema is the reference; the engine adds the maluses it tracks from then on
            stats = frozen_map({k: (b, bonus - sum(d for lab, d in _maluses(f, k))) for k, (b, bonus) in written.items()})
            changes["stats"] = stats
        if written != f.schema_stats:  # most schemas repeat the last one: keep the same mapping
            changes["schema_stats"] = frozen_map(written)
    pv = schema.resources.get("PV")
    pe = schema.resources.get("PE")
    if pv and pv.max:
        changes["pv_max"] = pv.max
    if pe and pe.max:
        changes["pe_max"] = pe.max
    _registro(p, pv.current if pv else None, pe.current if pe else None, changes)


def _maluses(f: Fighter, stat: str) -> list[tuple[str, int]]:
    from .checks import stat_maluses
    return stat_maluses(f, stat)


def _expenses_used(p: _Post) -> tuple[Expense, ...]:
    """The registry costs of the techniques the poster uses in this post (each technique once: the two rolls of
    one Contrattacco are one action)."""
    reg = p.state.registry
    aliases = p.state.aliases
    out: list[Expense] = []
    seen: set[str] = set()
    for roll in p.post.rolls:
        tag = roll.tag
        if tag is None or not tag.techniques:
            continue
        if tag.actor and (aliases.get(*_name_keys(tag.actor)) or tag.actor) != p.name:
            continue  # a summon's or an ally's action: not this character's energy
        for n in tag.techniques:
            t = reg.technique(n, p.name, str.lower)  # the poster's own when two characters have one so called
            if t is None or t.name in seen:
                continue
            # a technique with only an upkeep ("5 PE a turno") costs it in the turn it is used (docs/registry.md)
            cost = t.cost or t.extra.get("mantenimento")
            if not cost or not isinstance(cost, dict):
                continue
            seen.add(t.name)
            for res, amount in cost.items():
                res = str(res).upper()
                if res in ("PE", "PV") and isinstance(amount, int) and amount > 0:
                    out.append(Expense(t.name, res, amount, p.post.id))
    return tuple(out)


def _settle_expenses(p: _Post, entries: tuple[Any, ...], used: set[int]) -> tuple[tuple[Expense, ...], dict[str, int]]:
    """Match the costs due (those of the last post, then this post's) against the Registro's entries. A cost of an
    earlier post not listed now is registro.missing_expense; this post's may still go in the next Registro.
    Returns the costs still pending and, per resource, what the missing ones take (negative)."""
    post, f = p.post, p.fighters[p.name]
    pending: list[Expense] = []
    missing: dict[str, int] = {}
    for e in f.spese + p.spese_now:
        want = -e.amount
        name = e.technique.lower()
        idx = next((i for i, x in enumerate(entries) if i not in used and x.resource == e.resource
                    and x.amount == want and (name in x.label.lower() or name in x.raw.lower())), None)
        if idx is None:
            idx = next((i for i, x in enumerate(entries) if i not in used and x.resource == e.resource
                        and x.amount == want and not x.label), None)
        if idx is not None:
            used.add(idx)
        elif e.post == post.id:
            pending.append(e)
        else:
            missing[e.resource] = missing.get(e.resource, 0) + want
            p.verdicts.append(verdict("registro.missing_expense", post.id,
                f"Il Registro non riporta la spesa di {e.technique} (usata nel post {e.post}): {want} {e.resource}.",
                P_INIZIALE, expected=want, found=None,
                details={"technique": e.technique, "resource": e.resource, "used_in": e.post}))
    return tuple(pending), missing


def _apply_due_without_registro(p: _Post) -> None:
    f = p.fighters[p.name]
    spese, missing = _settle_expenses(p, (), set()) if f.spese or p.spese_now else ((), {})
    for d in f.due:
        if d.amount is not None:
            p.verdicts.append(verdict("registro.missing_damage", p.post.id,
                f"Il Registro non riporta i {d.amount} {d.resource} subiti da {d.attacker}"
                + (f" [{d.technique}]" if d.technique else "") + ".",
                P_INIZIALE, expected=-d.amount, found=None, details={"attack_post": d.attack_post}))
    pv = f.pv
    if pv is not None:
        pv -= sum(d.amount for d in f.due if d.amount is not None and d.resource == "PV")
        pv += missing.get("PV", 0)
    pe = f.pe + missing.get("PE", 0) if f.pe is not None else None
    p.fighters[p.name] = evolve(f, pv=pv, pe=pe, due=(), spese=spese)


def _registro(p: _Post, pv_now: int | None, pe_now: int | None, changes: dict[str, Any] | None = None) -> None:
    """The sum rule of "Struttura dei Turni" and every damage the character took (RULINGS #2). `changes` are
    other fields of the poster's Fighter (from the schema) to set with the Registro's."""
    post, f = p.post, p.fighters[p.name]
    reg = post.schema.registro if post.schema else None
    entries = reg or ()
    missing_known = 0
    used: set[int] = set()
    if f.due:
        for d in f.due:
            if d.amount is None:
                p.verdicts.append(verdict("ruling.needed", post.id,
                    f"Danno di {d.attacker}" + (f" [{d.technique}]" if d.technique else "")
                    + " sconosciuto: nessun numero dal registro né dal calcolo dell'attaccante.",
                    P_DANNI, details={"attack_post": d.attack_post}))
                continue
            want = -d.amount if d.amount else 0
            res = d.resource
            idx = None
            for i, e in enumerate(entries):
                if e.resource == res and e.amount == want and i not in used:
                    idx = i
                    break
            if idx is not None:
                used.add(idx)
                continue
            if d.amount == 0:
                continue
            keys = (d.technique.lower(), d.attacker.lower()) if d.technique and d.attacker else tuple(
                [k.lower() for k in (d.technique, d.attacker) if k])
            near = None
            for i, e in enumerate(entries):
                if i not in used and e.resource == res:
                    label, raw = e.label.lower(), e.raw.lower()
                    for k in keys:
                        if k in label or k in raw:
                            near = i
                            break
                    if near is not None:
                        break
            if near is not None:
                used.add(near)
                missing_known += want - entries[near].amount  # the engine keeps its own number
                p.verdicts.append(verdict("registro.missing_damage", post.id,
                    f"Il Registro riporta {entries[near].amount} {res} per "
                    + (f"la cura di {d.attacker}, ma la cura da registrare è +{want}." if want > 0 else
                       f"il colpo di {d.attacker}, ma il danno da registrare è {want}."),
                    P_INIZIALE, expected=want, found=entries[near].amount,
                    details={"attack_post": d.attack_post, "basis": d.basis}))
            else:
                missing_known += want
                p.verdicts.append(verdict("registro.missing_damage", post.id,
                    "Il Registro non riporta " + ("la cura" if want > 0 else "il danno") + f" di {d.attacker}"
                    + (f" [{d.technique}]" if d.technique else "")
                    + f": {signed(want)} {res}.", P_INIZIALE, expected=want, found=None,
                    details={"attack_post": d.attack_post, "basis": d.basis}))
    missing_pe = 0
    spese: tuple[Expense, ...] = ()
    if f.spese or p.spese_now:
        spese, missing_spese = _settle_expenses(p, entries, used)
        missing_known += missing_spese.get("PV", 0)
        missing_pe = missing_spese.get("PE", 0)
    # sum rule: PV/PE now − changes listed = PV/PE written in the previous turn
    sums: dict[str, int] = {}
    for e in entries:
        sums[e.resource] = sums.get(e.resource, 0) + e.amount
    sum_pv, sum_pe = sums.get("PV", 0), sums.get("PE", 0)
    if reg is not None:
        prev = f.pv_written
        if pv_now is not None and prev is not None:
            expected = prev + sum_pv
            # a value that is right but whose Registro only lacks the damage (or the expense) is
            # registro.missing_damage (registro.missing_expense) alone
            if expected != pv_now and not (missing_known and pv_now == expected + missing_known):
                _sum_mismatch(p, "PV", pv_now, prev, sums, "registro.pv_mismatch")
        prev = f.pe_written
        if pe_now is not None and prev is not None:
            expected = prev + sum_pe
            if expected != pe_now and not (missing_pe and pe_now == expected + missing_pe):
                _sum_mismatch(p, "PE", pe_now, prev, sums, "registro.pe_mismatch")
    # the engine's own view: its previous value + the Registro as written + what the Registro left out
    if f.pv is None or reg is None:
        new_pv = pv_now if pv_now is not None else (
            f.pv - sum(d.amount for d in f.due if d.amount) if f.pv is not None else None)
    else:
        new_pv = f.pv + sum_pv + missing_known
        pv_max = changes.get("pv_max", f.pv_max) if changes else f.pv_max
        if pv_max is not None and new_pv > max(pv_max, f.pv) and p.state.settings.get("cure_entro_il_massimo", True):
            new_pv = max(pv_max, f.pv)  # cures never lift PV above the maximum (ours: `cure_entro_il_massimo`)
    if f.pe is None or reg is None:
        new_pe = pe_now if pe_now is not None else f.pe
    else:
        new_pe = f.pe + sum_pe + missing_pe
    pv_written = pv_now if pv_now is not None else f.pv_written
    pe_written = pe_now if pe_now is not None else f.pe_written
    # every change in one dict (the caller's own, made for this call): evolve_with takes it as it is, no keyword
    # arguments packed and merged again
    if changes is None:
        changes = {}
    changes["pv"] = new_pv
    changes["pe"] = new_pe
    changes["due"] = ()
    changes["spese"] = spese
    changes["pv_written"] = pv_written
    changes["pe_written"] = pe_written
    p.fighters[p.name] = p.own = evolve_with(f, changes)


def _sum_mismatch(p: _Post, res: str, now: int, prev: int, sums: dict[str, int], code: str) -> None:
    expected = prev + sums.get(res, 0)
    p.verdicts.append(verdict(code, p.post.id,
        f"{res} {now}, ma {res} del turno precedente {prev} con le voci del Registro "
        f"({signed(sums.get(res, 0))}) danno {expected}.", P_INIZIALE, expected=expected, found=now))
