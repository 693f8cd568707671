"""The "your turn" hint of `guida`: who posts next, what to defend against, live stats and Stacks, Registro, dice tags."""
from __future__ import annotations

from typing import Any

from . import aree as AR
from . import stacks as S
from .actions import ACTIONS
from .checks import dice_tag, live_stat, stat_maluses
from .messages import EFFECTS, cifra, signed
from .state import SUMMARY, Fighter, GuidaState
from .calcolo_danni import compute_damage
from .reazione import sbalzo_dms

STATS = ("Forza", "Destrezza", "Costituzione", "Intelligenza")
DEFENCES = ("protezione", "parata", "schivata", "contrattacco", "contrattacco_diretto", "sbilanciamento")


def next_character(state: GuidaState) -> str | None:
    """The character after the last poster in the order of first appearance; with attacks pending and no
    order yet, their target."""
    if state.last and state.last in state.order and len(state.order) > 1:
        return state.order[(state.order.index(state.last) + 1) % len(state.order)]
    pending = [a.target for a in state.incoming if not a.annulled and a.target != state.last]
    if pending:
        return pending[0]
    return state.order[0] if state.order else None


def characters(state: GuidaState) -> dict[str, dict[str, Any]]:
    """JSON summary of every fighter after the last post."""
    out: dict[str, dict[str, Any]] = {}
    order = state.order
    for name, f in state.fighters.items():
        if not f.turn and name not in order:
            continue
        # the replay asks after every post and most posts change one fighter: an unchanged Fighter (the same
        # immutable object, or one evolved in fields not shown here) keeps the summary built the first time.
        # Summaries are shared between posts: read-only. The fields shown must be state._SUMMARY_FIELDS.
        summary = f.__dict__.get(SUMMARY)
        if summary is None:
            summary = f.__dict__[SUMMARY] = {
                "pv": f.pv, "pv_max": f.pv_max, "pe": f.pe, "pe_max": f.pe_max,
                "stacks": f.stacks.counts() if f.stacks.entries else {},
                # when each category ends ("fine del turno N di X"): the overlay's strip shows it beside the count
                "stacks_expiry": {e.name: e.expires.describe() for e in f.stacks.entries if e.expires}
                if f.stacks.entries else {},
                "conditions": list(f.conditions + f.costrizioni),
                "turn": f.turn,
                "costrizione": f.costrizione,
            }
        out[name] = summary
    return out


def _stack_rows(f: Fighter, turn: int) -> list[dict[str, Any]]:
    rows = []
    for e in f.stacks.entries:
        if e.expires is not None and e.expires.turn < turn:
            continue
        rows.append({
            "name": e.name, "count": e.count, "type": e.tipo, "effect": EFFECTS.get(e.name, ""),
            "active_from_turn": e.active_from,
            "expires": e.expires.describe() if e.expires else None,
            "active_next_turn": e.active_at(turn),
        })
    return rows


def next_hint(state: GuidaState, character: str | None = None) -> dict[str, Any]:
    who = state.aliases.get(character.lower(), character) if character else next_character(state)
    if who is None:
        return {"character": None, "incoming": [], "hints": ["Nessun turno giocato finora."], "dice_tags": []}
    f = state.fighters.get(who) or Fighter(name=who, stacks=S.StackSet(who))
    turn = f.turn + 1
    counts = f.stacks.counts(turn)
    sb, st = counts.get("Sbilanciamento", 0), counts.get("Stordimento", 0)
    dex = live_stat(f, "Destrezza", turn)
    hints: list[str] = []
    incoming_rows = []
    attacks = [a for a in state.incoming if a.target == who and not a.generic and not a.annulled]
    for a in attacks:
        incoming_rows.append({
            "attacker": a.attacker, "post": a.post, "roll": a.roll, "action": ACTIONS[a.action].name,
            "techniques": list(a.techniques), "total": a.total, "rendered": a.rendered, "to_beat": a.total,
            "mira": a.mira, "multi": a.multi,
        })
        techs = f" [{', '.join(a.techniques)}]" if a.techniques else ""
        if a.total is not None:
            hints.append(f"Difenditi dall'Attacco{techs} di {a.attacker} (post {a.post}): totale {a.total}; "
                         f"serve almeno {a.total} (il pareggio va al Difensore).")
        else:
            hints.append(f"Difenditi dall'Attacco{techs} di {a.attacker} (post {a.post}): totale non noto.")
    stats: dict[str, Any] = {}
    for stat in STATS:
        total = live_stat(f, stat, turn)
        if total is None:
            continue
        mal = stat_maluses(f, stat, turn)
        stats[stat] = {"base": f.stats[stat][0], "bonus": f.stats[stat][1] + sum(d for _, d in mal), "total": total,
                       "maluses": [{"label": lab, "amount": d} for lab, d in mal]}
        if mal:
            hints.append(f"{stat} {total}: " + ", ".join(f"{signed(d)} [{lab}]" for lab, d in mal) + ".")
    stack_rows = _stack_rows(f, turn)
    for r in stack_rows:
        if r["active_next_turn"]:
            hints.append(f"{r['count']} Stack di {r['name']}: {r['effect']}" + (f" (fino alla {r['expires']})" if r["expires"] else "") + ".")
    registro = []
    for d in f.due:
        label = f"{d.technique} di {d.attacker}" if d.technique else d.attacker
        if d.amount is None:
            registro.append({"amount": None, "resource": d.resource, "label": label, "post": d.attack_post,
                             "line": f"? {d.resource} [{label}] (da stabilire)"})
        else:
            registro.append({"amount": -d.amount, "resource": d.resource, "label": label, "post": d.attack_post,
                             "line": f"{signed(-d.amount)} {d.resource} [{label}]"})
    for e in f.spese:
        registro.append({"amount": -e.amount, "resource": e.resource, "label": e.technique, "post": e.post,
                         "line": f"{signed(-e.amount)} {e.resource} [{e.technique}]"})
    if registro:
        hints.append("Da scrivere nel Registro: " + "; ".join(r["line"] for r in registro) + ".")
    calcs = [h for h in state.hits if h.attack.attacker == who]
    calc_rows = []
    for h in calcs:
        amount, steps, _basis = compute_damage(state, h, None)
        if h.ruled is not None:
            amount = h.ruled
        calc_rows.append({"target": h.attack.target, "post": h.attack.post, "multiplier": str(h.multiplier),
                          "reasons": list(h.reasons), "expected": amount, "steps": steps})
        hints.append(f"Nella Fase Iniziale scrivi il Calcolo dei Danni del colpo su {h.attack.target} (post {h.attack.post})"
                     + (f", moltiplicatore ×{h.multiplier}" if h.multiplier != 1 else "")
                     + (f": il motore calcola {amount} ({'; '.join(steps)})" if amount is not None else "") + ".")
        if h.attack.sbalzo:
            _sbalzo_hint(state, h, calc_rows[-1], hints)
    for h in state.hits:
        if h.attack.target == who:
            hints.append(f"Il colpo di {h.attack.attacker} (post {h.attack.post}) è a segno: il danno andrà nel tuo "
                         f"Registro dopo il Calcolo dei Danni di {h.attack.attacker}.")
    if f.preparazione:
        hints.append("Preparazione: +2 alla Probabilità di Difendere in questa Fase Difensiva (+1 a Colpire se non ti difendi).")

    dice: list[dict[str, Any]] = []

    def mods_for(kind: str, extra: list[tuple[int, str]]) -> list[tuple[int, str]]:
        mods = list(extra)
        if f.preparazione:
            mods.append((2, "Preparazione") if kind == "difendere" else (1, "Preparazione"))
        if dex is not None:
            mods.append((dex, "Destrezza"))
        if sb and kind == "difendere":
            mods.append((-sb, "Sbilanciamento"))
        if st:
            mods.append((-st, "Stordimento"))
        return mods

    for a in attacks:
        for key in DEFENCES:
            spec = ACTIONS[key]
            extra = [(spec.bonus, spec.bonus_label)] if spec.bonus and spec.bonus_label == "Bonus Protezione" else []
            if spec.counter:
                # in Fase Difensiva a Contrattacco uses Probabilità di Colpire: no Difendere bonuses or maluses
                # (Preparazione: Probabilità di Successo +2 in the next Fase Difensiva, counters included)
                mods = [(2, lab) if lab == "Preparazione" else (n, lab) for n, lab in mods_for("colpire", extra)]
                dice.append({"label": f"{spec.name} contro l'Attacco di {a.attacker} (post {a.post})",
                             "phase": "difensiva", "action": spec.name, "against": a.post,
                             "tag": dice_tag(spec.name, spec.die_difensiva or 0, who, a.attacker, mods)})
                continue
            uses = state.fighters[a.attacker].uses_attack if a.attacker in state.fighters else {}
            n = max((uses.get(t, 0) for t in a.techniques), default=0)
            lvl = 3 if n >= 10 else 2 if n >= 7 else 1 if n >= 4 else 0
            if lvl:
                extra.append((lvl, "Attacco Prevedibile"))
            mods = mods_for("difendere", extra)
            dice.append({"label": f"{spec.name} contro l'Attacco di {a.attacker} (post {a.post})",
                         "phase": "difensiva", "action": spec.name, "against": a.post,
                         "tag": dice_tag(spec.name, spec.die_difensiva or 0, who, a.attacker, mods)})
    for g in (a for a in state.incoming if a.target == who and a.generic and not a.annulled):
        spec = ACTIONS["contrattacco_generica"]
        hints.append(f"{g.attacker} ha compiuto un'Azione Generica ({ACTIONS[g.action].name}, totale {g.total}): "
                     "puoi contrattaccarla con un Contrattacco su Azione Generica.")
        dice.append({"label": f"{spec.name} contro {ACTIONS[g.action].name} di {g.attacker} (post {g.post})",
                     "phase": "difensiva", "action": spec.name, "against": g.post,
                     "tag": dice_tag(spec.name, 18, who, g.attacker, mods_for("colpire", []))})
    opponents = [n for n in state.order if n != who]
    for o in opponents:
        mods = mods_for("colpire", [])
        if attacks and f.preparazione:
            mods = [m for m in mods if m[1] != "Preparazione"]
        dice.append({"label": f"Attacco a {o}", "phase": "offensiva", "action": "Attacco",
                     "tag": dice_tag("Attacco", 12, who, o, [(2, "Raggio Ottimale")] + mods)})
    if opponents:
        dice.append({"label": "Spostamento", "phase": "offensiva", "action": "Spostamento",
                     "tag": dice_tag("Spostamento", 15, who, None, [(2, "Spostamento")] + mods_for("colpire", []))})
    if f.costrizioni:
        # one Tentativo di Liberazione per turn: 1d12 + Bonus Potenziale + Bonus Statistica + Allentamento
        allent = [(f.allentamento, "Allentamento")] if f.allentamento else []
        hints.append(f"Sei sotto Costrizione ({', '.join(f.costrizioni)}): un Tentativo di Liberazione per Turno, 1d12 "
                     f"+ Bonus Potenziale + Bonus Statistica + Allentamento {f.allentamento}.")
        dice.append({"label": "Tentativo di Liberazione", "phase": "offensiva", "action": "Tentativo di Liberazione",
                     "tag": dice_tag("Liberazione", 12, who, None, allent)})
    if not attacks:
        hints.append("Nessun Attacco in arrivo: la Fase Difensiva si salta.")
    aree = _aree(state, who, hints) if state.aree else None
    out = {
        "character": who,
        "next_to_post": next_character(state),
        "turn": turn,
        "incoming": incoming_rows,
        "stats": stats,
        "stacks": stack_rows,
        "registro": registro,
        "pending_calcs": calc_rows,
        "hints": hints,
        "dice_tags": dice,
    }
    if aree is not None:
        out["aree"] = aree
    return out


def _sbalzo_hint(state: GuidaState, h: Any, row: dict[str, Any], hints: list[str]) -> None:
    """The Sbalzo the attacker reports with its Calcolo: the DMS, halved after a Reazione riuscita (no Danni
    Ambientali then)."""
    calc, missing = sbalzo_dms(state, h.attack)
    if calc is None:
        row["sbalzo"] = {"dms": None, "missing": missing}
        hints.append(f"Sbalzo su {h.attack.target}: DMS non calcolabile (mancano " + "; ".join(missing) + ").")
        return
    dms = calc.value
    dist = dms / 2 if h.reazione else dms
    row["sbalzo"] = {"dms": int(dms) if dms.denominator == 1 else float(dms),
                     "distanza": int(dist) if dist.denominator == 1 else float(dist), "reazione": h.reazione,
                     "steps": list(calc.steps)}
    hints.append(f"Sbalzo su {h.attack.target}: Distanza Massima di Sbalzo {cifra(dms)} m"
                 + (f", dimezzata a {cifra(dist)} m dalla Reazione riuscita (niente Danni Ambientali)" if h.reazione
                    else "") + ".")


def _aree(state: GuidaState, who: str, hints: list[str]) -> list[dict[str, Any]]:
    """The live Aree di Controllo Espansive: Saturazione, radius, Potenziale, next decay, who is inside."""
    rows = []
    for area in state.aree:
        nxt = AR.prossima_perdita(area)
        poison = AR.cortina_velenosa(area.saturazione) if AR.is_cortina_velenosa(area) else None
        rows.append({"nome": area.nome, "tipo": area.tipo, "owner": area.owner, "saturazione": area.saturazione,
                     "potenziale": area.potenziale_area, "raggio_m": area.raggio,
                     "dentro": list(area.dentro) if area.dentro is not None else None,
                     "prossima_perdita": {"turn": nxt[0], "character": area.owner, "stacks": nxt[1]} if nxt else None,
                     "veleno_per_turno": poison, "post": area.post})
        line = (f"Area di Controllo {area.nome}" + (f" di {area.owner}" if area.owner else "")
                + f": Saturazione {area.saturazione}, raggio {area.raggio} m, Potenziale {area.potenziale_area}")
        if nxt and area.owner:
            line += f"; perde {nxt[1]} Stack di Saturazione al turno {nxt[0]} di {area.owner}"
        if area.dentro is not None:
            line += "; dentro: " + (", ".join(area.dentro) or "nessuno")
        if poison and area.dentro is not None and who in area.dentro:
            line += f"; sei dentro: {poison} Stack di Avvelenamento nella tua Fase Iniziale"
        elif "cortina fumogena" in area.nome.lower() and area.dentro is not None and who in area.dentro:
            line += (f"; sei dentro: Accecato contro i Personaggi più lontani di {AR.CORTINA_FUMOGENA_OLTRE_M} m "
                     "(e chi è fuori lo è contro di te)")
        hints.append(line + ".")
    return rows
