"""Tamper evidence, whatever the ruleset: a post edited after its reply, rolls or schema changed, a post deleted."""
from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, Sequence

from .history import Post
from .verdicts import Verdict, make_verdict

RULE = "Arbitro › Prove di modifica"  # not a rule of the text: what a referee who reads the thread twice can see


def _when(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def _later(a: datetime, b: datetime) -> bool | None:
    """a > b, or None when one carries a zone and the other does not (the forum's clock is unknown)."""
    if (a.tzinfo is None) != (b.tzinfo is None):
        return None
    return a > b


def _relevant(post: Post) -> list[str]:
    """What of the post a rule reads: its rolls, its damage calculations, its schema."""
    out = []
    if post.rolls:
        out.append(f"{len(post.rolls)} tir" + ("o" if len(post.rolls) == 1 else "i"))
    if post.damage:
        out.append("il calcolo dei danni" if len(post.damage) == 1 else f"{len(post.damage)} calcoli dei danni")
    if post.schema is not None:
        out.append("lo schema")
    return out


def _clock(at: datetime) -> str:
    return at.strftime("%d/%m/%Y %H:%M")


def edited_after_reply(posts: Sequence[Post]) -> dict[str, Verdict]:
    """post id → its verdict, for each post whose edit time (the edit note) is later than the next post's time:
    a warning when the post holds what the rules read (rolls, damage, schema), else an info (narrative only)."""
    out: dict[str, Verdict] = {}
    # a Game-Master dice post (Forumotion) is part of the post it answers, not a reply to it
    replies = [p for p in posts if p.role != "gm_bot"]
    for post, reply in zip(replies, replies[1:]):
        edited, answered = _when(post.edited_at), _when(reply.timestamp)
        if edited is None or answered is None or not _later(edited, answered):
            continue
        parts = _relevant(post)
        who = f" da {post.edited_by}" if post.edited_by else ""
        head = (f"Post modificato{who} il {_clock(edited)}, dopo la risposta di {reply.author} "
                f"(post {reply.id}, {_clock(answered)})")
        details = {"edited_at": post.edited_at, "edited_by": post.edited_by, "reply_post": reply.id,
                   "reply_at": reply.timestamp, "contents": parts}
        if parts:
            out[post.id] = make_verdict(
                "post.edited_after_reply",
                head + f": contiene {' e '.join(parts)}; chi ha risposto potrebbe averli letti prima della modifica. "
                "Il master confronti con una citazione o una copia salvata del post.", RULE, post.id, details=details)
        else:
            out[post.id] = make_verdict("post.narrative_edited_after_reply",
                                        head + ": solo testo narrativo, nessun tiro, calcolo o schema.",
                                        RULE, post.id, details=details)
    return out




# --- what a second reading of the thread shows (the service keeps the earlier one; the engine only compares) ------

COPY_BODY = 2000  # characters of a deleted post's narrative kept in its verdict (docs/service.md)


def published(post: Post) -> dict[str, Any]:
    """The parts of a post the rules read, as the forum showed them: rolls (expression, faces, total, label), damage
    calculations (as written), schema (pools, stats, sheet, Registro lines). Two readings compare by this."""
    schema = post.schema
    return {
        "rolls": [{"expression": r.expression, "faces": list(r.faces) if r.faces is not None else None,
                   "total": r.total, "label": r.label} for r in post.rolls],
        "damage": [d.raw for d in post.damage],
        "schema": None if schema is None else {
            "sheet_url": schema.sheet_url,
            "resources": {k: [v.current, v.max] for k, v in schema.resources.items()},
            "stats": {k: [v.base, v.bonus] for k, v in schema.stats.items()},
            "registro": None if schema.registro is None else [e.raw for e in schema.registro],
        },
    }


def roll_text(r: dict[str, Any]) -> str:
    """One roll of `published()` as a reader compares it: expression, total, faces, label."""
    faces = f" (facce {', '.join(map(str, r['faces']))})" if r.get("faces") else ""
    total = "?" if r.get("total") is None else r["total"]
    label = f" «{r['label']}»" if r.get("label") else ""
    return f"{r['expression']} = {total}{faces}{label}"


def _roll_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[str]:
    out = []
    for i in range(max(len(before), len(after))):
        b = before[i] if i < len(before) else None
        a = after[i] if i < len(after) else None
        if b == a:
            continue
        if b is None:
            out.append(f"tiro {i + 1} aggiunto: {roll_text(a)}")  # type: ignore[arg-type]
        elif a is None:
            out.append(f"tiro {i + 1} tolto: era {roll_text(b)}")
        else:
            out.append(f"tiro {i + 1}: era {roll_text(b)}, ora {roll_text(a)}")
    return out


def described(parts: dict[str, Any]) -> list[tuple[str, str]]:
    """`published()` parts (or the part of them a verdict keeps) as (what, text) lines, in reading order: what the
    report shows of each version side by side."""
    out = [(f"tiro {i}", roll_text(r)) for i, r in enumerate(parts.get("rolls") or [], 1)]
    schema = parts.get("schema") or {}
    for key, (cur, mx) in (schema.get("resources") or {}).items():
        out.append((key, f"{cur}" + (f"/{mx}" if mx is not None else "")))
    for key, (base, bonus) in (schema.get("stats") or {}).items():
        out.append((key, f"{base} ({bonus:+d})"))
    if schema.get("sheet_url"):
        out.append(("scheda", str(schema["sheet_url"])))
    for i, line in enumerate(schema.get("registro") or [], 1):
        out.append((f"Registro {i}", line))
    for i, raw in enumerate(parts.get("damage") or [], 1):
        out.append((f"calcolo {i}", raw))
    return out


def _when_text(at: str | None) -> str:
    moment = _when(at)
    return _clock(moment) if moment else "in una lettura precedente"


def changed_after_publication(before: Post, before_at: str | None, after: Post,
                              after_at: str | None) -> list[Verdict]:
    """The verdicts of a post whose rule-relevant parts differ between two readings: its rolls
    (`dice.changed_after_publication`), its schema, Registro or damage calculations
    (`schema.changed_after_publication`). Each carries both versions and both reading times."""
    old, new = published(before), published(after)
    out: list[Verdict] = []
    times = f"letto il {_when_text(before_at)} e di nuovo il {_when_text(after_at)}"
    if old["rolls"] != new["rolls"]:
        changes = _roll_changes(old["rolls"], new["rolls"])
        out.append(make_verdict(
            "dice.changed_after_publication",
            f"I tiri del post sono cambiati dopo la pubblicazione ({times}): " + "; ".join(changes) + ". "
            "Un tiro del forum non si ripete: il master decida quale vale.",
            RULE, after.id,
            details={"before": {"fetched_at": before_at, "rolls": old["rolls"]},
                     "after": {"fetched_at": after_at, "rolls": new["rolls"]}, "changes": changes}))
    parts = [name for key, name in (("schema", "lo schema"), ("damage", "il calcolo dei danni"))
             if old[key] != new[key]]
    if parts:
        if old["schema"] and new["schema"] and old["schema"]["registro"] != new["schema"]["registro"]:
            parts.insert(1 if parts[0] == "lo schema" else 0, "il Registro")
        out.append(make_verdict(
            "schema.changed_after_publication",
            f"Del post sono cambiati {', '.join(parts)} dopo la pubblicazione ({times}): chi ha risposto può aver "
            "letto altri numeri.",
            RULE, after.id,
            details={"before": {"fetched_at": before_at, "schema": old["schema"], "damage": old["damage"]},
                     "after": {"fetched_at": after_at, "schema": new["schema"], "damage": new["damage"]},
                     "contents": parts}))
    return out


def post_copy(post: Post) -> dict[str, Any]:
    """What is kept of a post that may vanish: who, when, where, its narrative (bounded) and what the rules read."""
    body = post.body if len(post.body) <= COPY_BODY else post.body[:COPY_BODY] + "…"
    return {"id": post.id, "author": post.author, "character": post.character, "timestamp": post.timestamp,
            "url": post.url, "page": post.page, "edited_at": post.edited_at, "body": body, **published(post)}


def deleted(post: Post, last_seen_at: str | None, detected_at: str | None,
            moved: Sequence[dict[str, Any]] = ()) -> Verdict:
    """`post.deleted`: a post read earlier is no longer in the thread. The replay goes on without it; `moved` names
    the later posts whose verdicts changed because of it."""
    when = f" del {_when_text(post.timestamp)}" if post.timestamp else ""
    tail = (f"; senza di esso cambiano i verdetti di {len(moved)} post successiv{'o' if len(moved) == 1 else 'i'}"
            if moved else "; nessun altro verdetto cambia senza di esso")
    parts = _relevant(post)
    holds = f" Conteneva {' e '.join(parts)}." if parts else ""
    return make_verdict(
        "post.deleted",
        f"Il post {post.id} di {post.author}{when} non è più nella discussione (letto l'ultima volta il "
        f"{_when_text(last_seen_at)}): Arbitro ne conserva una copia e rigioca il combattimento senza"
        f"{tail}.{holds}",
        RULE, post.id,
        details={"copy": post_copy(post), "last_seen_at": last_seen_at, "detected_at": detected_at,
                 "moved": list(moved)})


def moved_verdicts(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]],
                   gone: set[str]) -> list[dict[str, Any]]:
    """The posts after the first deleted one whose verdicts differ between two audits (audit documents' `posts`):
    the codes each gained and lost."""
    ids = [str(p.get("id")) for p in before]
    first = next((i for i, pid in enumerate(ids) if pid in gone), None)
    if first is None:
        return []
    earlier = {str(p.get("id")): Counter(v.get("code") for v in p.get("verdicts") or []) for p in before[first:]}
    out = []
    for p in after:
        pid = str(p.get("id"))
        if pid not in earlier:
            continue
        now = Counter(v.get("code") for v in p.get("verdicts") or [])
        added, removed = sorted((now - earlier[pid]).elements()), sorted((earlier[pid] - now).elements())
        if added or removed:
            out.append({"post": pid, "added": added, "removed": removed})
    return out


__all__ = ["edited_after_reply", "published", "described", "roll_text", "changed_after_publication", "post_copy", "deleted",
           "moved_verdicts", "RULE", "COPY_BODY"]
