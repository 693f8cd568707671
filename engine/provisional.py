"""A page-local audit: one page's posts replayed on their own, keeping only the verdicts whose inputs are on the page."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from .core import Audit, get_ruleset, replay
from .history import CombatHistory, Registry

# Verdicts about a post that read nothing but the post itself and the registry: any ruleset, any post of the page.
POST_LOCAL = frozenset({"schema.missing_part", "dice.not_authentic", "dice.no_total", "dice.unknown_action",
                        "dice.modifiers_unlisted"})
# Verdicts that also need to know what the post answers (its phase, the actions it is allowed): right once the
# poster's own previous post is on the page too, since every attack it answers came after that post.
AFTER_OWN_POST = frozenset({"dice.wrong_die", "dice.factor_out_of_range", "turn.extra_main_action"})


def replay_page(history: CombatHistory, ruleset: str, registry: Registry | None = None, *, page: int,
                pages: int | None = None, settings: dict[str, Any] | None = None) -> Audit:
    """The provisional audit of one page: `history` holds that page's posts only. Every verdict kept is also in
    the full audit of the thread (tests/test_provisional.py checks it on every fixture and real page); state,
    characters and the next hint are left out, since they depend on the pages before."""
    rs = get_ruleset(ruleset)
    local = POST_LOCAL | getattr(rs, "local_codes", frozenset())
    after_own = AFTER_OWN_POST | getattr(rs, "local_codes_after_own_post", frozenset())
    audit = replay(history, ruleset, registry, settings=settings)
    seen: set[str] = set()
    posts = []
    for pa in audit.posts:
        who = (pa.character or pa.author).casefold()
        keep = local | after_own if who in seen else local
        seen.add(who)
        posts.append(replace(pa, verdicts=tuple(v for v in pa.verdicts if v.code in keep), state={}))
    left_out = sum(len(a.verdicts) for a in audit.posts) - sum(len(p.verdicts) for p in posts)
    return replace(audit, posts=tuple(posts), characters={}, next={}, snapshots=(),
                   provisional={"page": page, "pages": pages, "left_out": left_out,
                                "why": "provvisorio: solo i controlli che la pagina basta a fare; l'analisi "
                                       "completa della discussione li comprende tutti"})


__all__ = ["AFTER_OWN_POST", "POST_LOCAL", "replay_page"]
