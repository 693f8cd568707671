"""Aree di Controllo in the flow: Areas created, decaying, removed and destroyed, who is inside."""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from . import aree as AR
from . import calcolo_danni as CD
from . import tables as T
from . import tecniche as TC
from ...history import Post, Registry, Technique
from ...verdicts import Verdict
from .actions import ActionSpec
from .checks import _multi
from .messages import verdict
from .state import GuidaState, Incoming, evolve
from .turno import _Defence, _Post, _resolve_name


# --- Aree di Controllo Espansive in the state -------------------------------------------------------

# "Area: Cortina Velenosa (Espansiva), Saturazione 6, di Hollow; dentro: Quincy, Hollow" (a master's line; in a
# player's post only "dentro" counts), "Area: Cortina Velenosa distrutta"
_AREA_LINE = re.compile(r"^[ \t]*area(?:[ \t]+di[ \t]+controllo)?[ \t]*:[ \t]*(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_AREA_NOME = re.compile(r"^([^(,;]+?)\s*(?=\(|,|;|$)")
_AREA_TIPO = re.compile(r"\((espansiva|statica)\)", re.IGNORECASE)
_AREA_SAT = re.compile(r"\bsaturazione\s*:?\s*(\d{1,3})\b", re.IGNORECASE)
_AREA_OWNER = re.compile(r"[,;]\s*(?:di|creata\s+da|proprietario:?)\s+([^,;]+)", re.IGNORECASE)
_AREA_DENTRO = re.compile(r"\bdentro\s*:?\s*([^;]*)", re.IGNORECASE)
_AREA_FINE = re.compile(r"\s+(distrutt[ao]|scompars[ao]|rimoss[ao]|dissolt[ao])\s*\.?$", re.IGNORECASE)
_NAMES_SPLIT = re.compile(r"\s*,\s*|\s+e\s+", re.IGNORECASE)
_COLPI = re.compile(r"(\d{1,4})\s*colpi\b", re.IGNORECASE)
_AREA_MEMO: list[tuple[Any, dict[str, Technique]]] = [(None, {})]


def _area_techniques(reg: Registry) -> dict[str, Technique]:
    """Techniques whose registry entry creates an Area di Controllo (`extra.area`), by lower-cased name (one
    registry at a time, held with its map)."""
    memo = _AREA_MEMO[0]
    if memo[0] is not reg:
        areas = {n.lower(): t for n, t in reg.techniques.items() if isinstance(t.extra.get("area"), str)}
        for t in list(areas.values()):
            areas.setdefault(t.name.lower(), t)  # a second owner's `Nome [Owner]` is found by its name too
        memo = _AREA_MEMO[0] = (reg, areas)
    return memo[1]


def _area_verdict(p_verdicts: list[Verdict], post: str, message: str, area: AR.Area | None, event: str,
                  rule: str = T.RULE_AREE, *, roll: int | None = None, expected: Any = None, found: Any = None,
                  nome: str | None = None, steps: tuple[str, ...] | list[str] = ()) -> None:
    details: dict[str, Any] = {"area": nome or (area.nome if area else None), "event": event, "steps": list(steps)}
    if area is not None:
        details.update(saturazione=area.saturazione, potenziale=area.potenziale_area, raggio_m=area.raggio,
                       owner=area.owner, dentro=list(area.dentro) if area.dentro is not None else None)
    p_verdicts.append(verdict("outcome.area", post, message, rule, roll=roll, expected=expected, found=found,
                              details=details))


def _describe_area(area: AR.Area) -> str:
    return (f"Saturazione {area.saturazione}, raggio {area.raggio} m, Potenziale {area.potenziale_area}")


def _aree_fase_iniziale(p: _Post) -> None:
    """At a player's Fase Iniziale: the Saturazione its own Aree lose (absolute turns, aree.decadimento); the
    Stack Veleno a Cortina Velenosa gives to the poster when it is inside; who is inside not said → ruling."""
    name = p.name
    if any(a.fughe for a in p.aree):
        _fughe(p)
    me = p.fighters[name]
    turn = me.turn
    out: list[AR.Area] = []
    changed = False
    for area in p.aree:
        if not area.owner:
            # an Area the master declared before anyone posted: its clock is the first poster's turns
            area = evolve(area, owner=name, decay_anchor=turn - 1)
            changed = True
        if area.owner == name:
            step_ = AR.decadimento(area, turn)
            if step_.removed:
                changed = True
                left = step_.area
                _area_verdict(p.verdicts, p.post.id,
                    f"Fase Iniziale di {name}: " + "; ".join(step_.steps)
                    + ("." if left is None else f" ({_describe_area(left)})."), left, "decadimento" if left else "scomparsa",
                    expected=area.saturazione, found=area.saturazione - step_.removed, nome=area.nome, steps=step_.steps)
                if left is None:
                    continue
                area = left
        out.append(area)
        if AR.is_cortina_velenosa(area):
            _cortina_velenosa(p, area)
    if changed:
        p.aree = tuple(out)


def _cortina_velenosa(p: _Post, area: AR.Area) -> None:
    """Cortina Velenosa: Stack Veleno per Turno by Saturazione to whoever is inside, at its Fase Iniziale."""
    name = p.name
    n = AR.cortina_velenosa(area.saturazione)
    if area.dentro is None:
        if area.owner == name:
            p.verdicts.append(verdict("ruling.needed", p.post.id,
                f"{area.nome} (Saturazione {area.saturazione}): {n} Stack di Avvelenamento per Turno a chi è dentro; "
                "chi sia dentro lo dice il post o il master (riga «Area: " + area.nome + "; dentro: Nome, Nome»).",
                T.RULE_AREE_NOTE, details={"area": area.nome, "veleno_per_turno": n}))
        return
    if name not in area.dentro or not n:
        return
    _area_verdict(p.verdicts, p.post.id,
        f"{name} è dentro {area.nome} (Saturazione {area.saturazione}): {n} Stack di Avvelenamento per questo Turno.",
        area, "veleno", T.RULE_AREE_NOTE, found=n)
    p.fighters[name] = CD._apply_stacks(p, p.fighters[name], [("Avvelenamento", n)], source=area.tecnica or area.nome)


def _aree_azione(p: _Post, i: int, roll: Any, spec: ActionSpec, actor: str, techniques: tuple[str, ...],
                 targets: list[str]) -> None:
    """An Azione Principale that happens: it creates the Area its technique declares (registry `extra.area`), and,
    as an attack inside a live Area (the label names it, or its author or a target is inside), removes Saturazione."""
    post_id = p.post.id
    made: list[AR.Area] = []
    area_techs = _area_techniques(p.state.registry)
    if area_techs:
        for n in techniques:
            tech = area_techs.get(n.lower())
            if tech is not None:
                made.extend(_crea_area(p, i, tech, actor))
    if spec.key == "spostamento" and p.aree:
        _fuga_dichiarata(p, i, roll, actor)
        return
    attack = spec.role == "offensiva" or spec.counter
    live = [a for a in p.aree if not any(a is m for m in made)]
    if not attack or not live:
        return
    label = (roll.label or "").lower()
    inside = {actor, *targets}
    out: list[AR.Area] = []
    changed = False
    for area in p.aree:
        if any(area is m for m in made) or not (area.nome.lower() in label
                                                or area.dentro and not inside.isdisjoint(area.dentro)):
            out.append(area)
            continue
        if _DISTRUGGE.search(label) and area.nome.lower() in label:
            _distruzione(p, i, area, techniques, actor)
        removal = _rimozione(p, i, roll, area, techniques, actor)
        if not removal:
            out.append(area)
            continue
        st = AR.colpita(area, removal.value)
        changed = True
        left = st.area
        _area_verdict(p.verdicts, post_id,
            f"Attacco di {actor} dentro {area.nome}: " + "; ".join(removal.steps) + f" ({area.saturazione} → "
            f"{area.saturazione - st.removed})" + ("; l'Area di Controllo scompare." if left is None else
                                                   f"; {_describe_area(left)}."),
            left, "rimozione" if left else "scomparsa", roll=i, expected=area.saturazione,
            found=area.saturazione - st.removed, nome=area.nome, steps=removal.steps + st.steps)
        if left is not None:
            out.append(left)
    if changed:
        p.aree = tuple(out)


_DISTRUGGE = re.compile(r"distrugg|distruzion", re.IGNORECASE)


def _distruzione(p: _Post, i: int, area: AR.Area, techniques: tuple[str, ...], actor: str) -> None:
    """An attack that names a formed Area to destroy it: its Potenza must exceed the Area's (ours: the Area's Potenza
    is its Potenziale, the Saturazione) and it must cover at least half the Area (narrative: the master)."""
    reg = p.state.registry
    tech = TC._technique(reg, techniques, actor)
    bonus = TC._bonus_statistica(reg, actor, tech)
    area_pot = area.potenziale_area
    if tech is None or tech.potenziale is None or bonus is None or area_pot is None:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"{actor} tenta di distruggere {area.nome}: Potenza della Tecnica sconosciuta (registro `potenziale`, "
            "Bonus Statistica); la distrugge se ne ingloba almeno metà con Potenza superiore a quella dell'Area "
            f"({area_pot}).", T.RULE_AREE_DISTRUZIONE, roll=i, details={"area": area.nome}))
        return
    potenza = tech.potenziale + bonus
    r = AR.distrugge(area_pot, potenza, Fraction(1, 2))
    if not r.value:
        _area_verdict(p.verdicts, p.post.id,
            f"{actor} tenta di distruggere {area.nome} con {tech.name}: Potenza {potenza} ≤ Potenza dell'Area "
            f"{area_pot}, l'Area resiste.", area, "non_distrutta", T.RULE_AREE_DISTRUZIONE, roll=i, expected=area_pot,
            found=potenza, steps=r.steps[1:])
        return
    p.verdicts.append(verdict("ruling.needed", p.post.id,
        f"{actor} tenta di distruggere {area.nome} con {tech.name}: Potenza {potenza} > Potenza dell'Area {area_pot}; "
        "è distrutta se la Tecnica ne ingloba almeno metà: lo stabilisce il master (riga «Area: " + area.nome
        + " distrutta»).", T.RULE_AREE_DISTRUZIONE, roll=i, expected=area_pot, found=potenza,
        details={"area": area.nome}))


def _rimozione(p: _Post, i: int, roll: Any, area: AR.Area, techniques: tuple[str, ...],
               actor: str | None = None) -> AR.Calc | None:
    """Stack di Saturazione an attack inside `area` removes (category A/S, Area, Area Totale, Multipli)."""
    tag = roll.tag
    kind = {"multipli": "multiplo"}.get(_multi(tag), _multi(tag)) if tag is not None else "mirato"
    tech = TC._technique(p.state.registry, techniques, actor)
    m = _COLPI.search(roll.label or "")
    try:
        r = AR.rimozione_da_attacco(categoria=tech.category if tech is not None and tech.category else None,
                                    tipo=kind, colpi=int(m.group(1)) if m else None,
                                    cumulativa=bool(p.state.settings.get("rimozione_saturazione_cumulativa", True)))
    except T.MechanicsError as exc:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Attacco dentro {area.nome}: Stack di Saturazione rimosse non calcolabili ({exc}).", T.RULE_AREE,
            roll=i, details={"area": area.nome}))
        return None
    if (tech is None or not tech.category) and not r.value:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"Attacco dentro {area.nome}: categoria del Potenziale sconosciuta (registro `category`); se è A toglie 1 "
            "Stack di Saturazione, se è S 2: lo stabilisce il master.", T.RULE_AREE, roll=i, details={"area": area.nome}))
        return None
    return r if r.value else None


def _crea_area(p: _Post, i: int, tech: Technique, actor: str) -> list[AR.Area]:
    """The Area di Controllo a technique creates (registry `extra.area`, `extra.saturazione`, `extra.area_nome`)."""
    tipo = str(tech.extra.get("area")).strip().lower()
    if tipo != "espansiva":
        return []  # an Area Statica keeps its size: only its malus on the Potenziale counts (_area_statica)
    nome = str(tech.extra.get("area_nome") or tech.name)
    sat = tech.extra.get("saturazione")
    if not isinstance(sat, int) or isinstance(sat, bool) or sat < 1:
        p.verdicts.append(verdict("ruling.needed", p.post.id,
            f"{tech.name} crea l'Area di Controllo Espansiva {nome}, ma il registro non dà le sue Stack di Saturazione "
            "iniziali (`extra.saturazione`): le stabilisce il master (riga «Area: " + nome
            + " (Espansiva), Saturazione N»).", T.RULE_AREE_CREAZIONE, roll=i, details={"area": nome}))
        return []
    owner = actor if actor in p.fighters else p.name
    area = AR.crea(nome, "espansiva", owner, turn=p.fighters[owner].turn, saturazione=sat, post=p.post.id,
                   tecnica=tech.name)
    replaced = [a for a in p.aree if a.nome.lower() == nome.lower()]
    p.aree = tuple(a for a in p.aree if a.nome.lower() != nome.lower()) + (area,)
    nxt = AR.prossima_perdita(area)
    _area_verdict(p.verdicts, p.post.id,
        f"{owner} crea l'Area di Controllo Espansiva {nome} con {tech.name}: {_describe_area(area)}"
        + (f"; perde {nxt[1]} Stack di Saturazione al turno {nxt[0]} di {owner}" if nxt else "")
        + ("; sostituisce quella già presente" if replaced else "") + ".",
        area, "creata", T.RULE_AREE_CREAZIONE, roll=i, found=sat)
    return [area]


def _fuga_dichiarata(p: _Post, i: int, roll: Any, actor: str) -> None:
    """An Azione Principale di Spostamento of someone inside an Area whose label names the Area or says «Fuga»: a Fuga,
    resolved at the author's next turn unless a Contrattacco su Azione Generica stops it first."""
    label = (roll.label or "").lower()
    fuga = "fuga" in label
    out = list(p.aree)
    for k, area in enumerate(out):
        named = area.nome.lower() in label
        if not (named or fuga) or (actor not in area.dentro if area.dentro is not None else not named):
            continue
        out[k] = evolve(area, fughe=area.fughe + ((actor, p.post.id),))
        _area_verdict(p.verdicts, p.post.id,
            f"{actor} tenta la Fuga da {area.nome} con uno Spostamento (Azione Principale): riesce se nessuno lo "
            "Contrattacca con successo prima del suo prossimo turno.", out[k], "fuga_tentata", T.RULE_AREE_FUGA, roll=i)
    p.aree = tuple(out)


def _fughe(p: _Post) -> None:
    """At the author's next Fase Iniziale its Fuga not stopped by a Contrattacco has succeeded: out of the Area."""
    name = p.name
    out = []
    for area in p.aree:
        if any(who == name for who, _ in area.fughe):
            calc = AR.fuga(False, "spostamento")
            dentro = tuple(n for n in area.dentro if n != name) if area.dentro is not None else None
            area = evolve(area, fughe=tuple(f for f in area.fughe if f[0] != name), dentro=dentro)
            _area_verdict(p.verdicts, p.post.id, f"{name} è fuori da {area.nome}: " + "; ".join(calc.steps) + ".",
                          area, "fuga", T.RULE_AREE_FUGA, steps=calc.steps)
        out.append(area)
    p.aree = tuple(out)


def _area_contrattaccata(p: _Post, i: int, spec: ActionSpec, atk: Incoming, dfn: _Defence) -> None:
    """A Contrattacco in Fase Difensiva against the action that creates an Area: if it succeeds, the Area is destroyed
    while it forms; a Contrattacco su Azione Generica only suspends the action (its author decides: master). One
    that stops a Spostamento di Fuga makes the Fuga fail."""
    res = dfn.counter.get(spec.key)
    if spec.key == "contrattacco_generica" and res == "riuscito":
        out = list(p.aree)
        for k, area in enumerate(out):
            if (atk.attacker, atk.post) in area.fughe:
                out[k] = evolve(area, fughe=tuple(f for f in area.fughe if f != (atk.attacker, atk.post)))
                calc = AR.fuga(False, "spostamento", contrattaccata=True)
                _area_verdict(p.verdicts, p.post.id, f"Fuga di {atk.attacker} da {area.nome} fallita: "
                              + "; ".join(calc.steps) + ".", out[k], "fuga_fallita", T.RULE_AREE_FUGA, roll=i,
                              steps=calc.steps)
        p.aree = tuple(out)
    made = [a for a in p.aree if a.post == atk.post and a.owner == atk.attacker]
    if not made:
        return
    for area in made:
        if spec.key == "contrattacco_generica":
            if res == "riuscito":
                p.verdicts.append(verdict("ruling.needed", p.post.id,
                    f"{area.nome}: l'azione che la crea è Sospesa dal Contrattacco; se {atk.attacker} la conferma "
                    "l'Area si forma, se la annulla no (riga «Area: " + area.nome + " distrutta»).",
                    T.RULE_AREE_DISTRUZIONE, roll=i, details={"area": area.nome}))
            continue
        if res in ("riuscito", "annullato"):
            p.aree = tuple(a for a in p.aree if a is not area)
            _area_verdict(p.verdicts, p.post.id,
                f"{spec.name} riuscito contro l'azione che crea {area.nome}: l'Area di Controllo è distrutta in fase "
                "di creazione.", None, "distrutta", T.RULE_AREE_DISTRUZIONE, roll=i, nome=area.nome)


def _area_names(state: GuidaState, text: str) -> tuple[str, ...]:
    text = text.strip().rstrip(".")
    if not text or text.lower() in ("nessuno", "nessuna", "-"):
        return ()
    return tuple(dict.fromkeys(_resolve_name(state, n) or n for n in _NAMES_SPLIT.split(text) if n.strip()))


def _parse_area(state: GuidaState, content: str) -> dict[str, Any] | None:
    """One "Area:" line → its parts (nome, fine, tipo, saturazione, owner, dentro; absent parts left out)."""
    fine = _AREA_FINE.search(content)
    if fine:
        return {"nome": content[:fine.start()].strip(" ,;"), "fine": fine.group(1).lower()}
    m = _AREA_NOME.match(content)
    if m is None:
        return None
    out: dict[str, Any] = {"nome": m.group(1).strip()}
    rest = content[m.end():]
    if (t := _AREA_TIPO.search(rest)) is not None:
        out["tipo"] = t.group(1).lower()
    if (sat := _AREA_SAT.search(rest)) is not None:
        out["saturazione"] = int(sat.group(1))
    if (o := _AREA_OWNER.search(rest)) is not None:
        out["owner"] = _resolve_name(state, o.group(1).strip().rstrip(".")) or ""
    if (d := _AREA_DENTRO.search(rest)) is not None:
        out["dentro"] = _area_names(state, d.group(1))
    return out if out["nome"] else None


def _aree_dentro(p: _Post) -> None:
    """A player's post says who is inside a live Area ("Area: Cortina Velenosa; dentro: Quincy")."""
    for m in _AREA_LINE.finditer(p.post.body or ""):
        parts = _parse_area(p.state, m.group(1))
        if not parts or "dentro" not in parts:
            continue
        key = parts["nome"].lower()
        for k, area in enumerate(p.aree):
            if area.nome.lower() == key and area.dentro != parts["dentro"]:
                new = evolve(area, dentro=parts["dentro"])
                p.aree = p.aree[:k] + (new,) + p.aree[k + 1:]
                _area_verdict(p.verdicts, p.post.id, f"Dentro {area.nome}: " + (", ".join(new.dentro) or "nessuno")
                              + ".", new, "dentro", T.RULE_AREE)


def _master_aree(state: GuidaState, post: Post, verdicts: list[Verdict]) -> tuple[AR.Area, ...]:
    """A master's "Area:" lines: declare an Area Espansiva of the environment, set its Saturazione, owner (whose turns
    drive the decay; default: the first character of the turn order) and who is inside, or end it."""
    aree = state.aree
    for m in _AREA_LINE.finditer(post.body or ""):
        parts = _parse_area(state, m.group(1))
        if not parts:
            continue
        nome = parts["nome"]
        key = nome.lower()
        old = next((a for a in aree if a.nome.lower() == key), None)
        rest = tuple(a for a in aree if a is not old)
        if "fine" in parts or parts.get("saturazione") == 0:
            if old is not None:
                aree = rest
                _area_verdict(verdicts, post.id, f"Il master: {old.nome} {parts.get('fine', 'scompare')}, l'Area di "
                              "Controllo non c'è più.", None, "scomparsa", T.RULE_AREE_DISTRUZIONE, nome=old.nome)
            continue
        if parts.get("tipo") == "statica":
            continue  # an Area Statica keeps its size and has no Saturazione to follow
        if old is None:
            sat = parts.get("saturazione")
            if sat is None:
                verdicts.append(verdict("ruling.needed", post.id,
                    f"Area {nome} senza Stack di Saturazione (es. «Area: {nome} (Espansiva), Saturazione 6»): non "
                    "viene seguita.", T.RULE_AREE, details={"area": nome}))
                continue
            owner = parts.get("owner") or (state.order[0] if state.order else "")
            f = state.fighters.get(owner)
            area = AR.crea(nome, "espansiva", owner, turn=f.turn if f is not None else 0, saturazione=sat,
                           dentro=parts.get("dentro"), post=post.id)
            aree = rest + (area,)
            nxt = AR.prossima_perdita(area)
            _area_verdict(verdicts, post.id,
                f"Il master dichiara l'Area di Controllo Espansiva {nome}: {_describe_area(area)}"
                + (f"; perde {nxt[1]} Stack di Saturazione al turno {nxt[0]} di {owner}" if nxt and owner else "")
                + (f"; dentro: {', '.join(area.dentro) or 'nessuno'}" if area.dentro is not None else "") + ".",
                area, "creata", T.RULE_AREE, found=sat)
            continue
        changes: dict[str, Any] = {}
        if "saturazione" in parts and parts["saturazione"] != old.saturazione:
            changes["saturazione"] = parts["saturazione"]
        if parts.get("owner") and parts["owner"] != old.owner:
            f = state.fighters.get(parts["owner"])
            changes.update(owner=parts["owner"], decay_anchor=f.turn if f is not None else 0)
        if "dentro" in parts and parts["dentro"] != old.dentro:
            changes["dentro"] = parts["dentro"]
        if not changes:
            continue
        new = evolve(old, **changes)
        aree = rest + (new,)
        _area_verdict(verdicts, post.id, f"Il master aggiorna {old.nome}: {_describe_area(new)}"
                      + (f"; dentro: {', '.join(new.dentro) or 'nessuno'}" if new.dentro is not None else "") + ".",
                      new, "aggiornata", T.RULE_AREE, expected=old.saturazione, found=new.saturazione)
    return aree
