"""Tamper evidence the history itself shows, whatever the ruleset: a post edited after someone had answered it."""
from __future__ import annotations

from datetime import datetime
from typing import Sequence

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


__all__ = ["edited_after_reply", "RULE"]
