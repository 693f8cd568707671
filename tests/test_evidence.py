"""Tamper evidence from the history, whatever the ruleset: a post edited after the next post (issue #16)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from engine.core import available_rulesets, replay
from tests.plugins.engine import Fight, R, find

T = "2026-10-31T17:{:02d}:00+01:00"


def thread(edit_minute, *, rolls=True, bot_reply=False):
    """Ichigo (100, 17:00) is answered by Rukia (101, 17:10); Ichigo edits 100 at 17:`edit_minute`."""
    f = Fight()
    f.post("Ichigo", pv=50, stats={"Destrezza": 5}, body="Ichigo attacca.",
           rolls=[R("1d12+5", 7, "Attacco (Ichigo vs Rukia): (+5 [Destrezza])")] if rolls else [],
           schema=rolls)
    if bot_reply:
        f.post("Game Master", role="gm_bot", schema=False, answers="100")
    f.post("Rukia", pv=50, stats={"Destrezza": 5}, body="Difesa Nulla")
    f.post("Ichigo", pv=50, stats={"Destrezza": 5})
    stamps = [T.format(0), T.format(5), T.format(10)] if bot_reply else [T.format(0), T.format(10), T.format(20)]
    f.posts = [replace(p, timestamp=stamps[i] if i < len(stamps) else T.format(30)) for i, p in enumerate(f.posts)]
    f.posts[0] = replace(f.posts[0], edited_by="Ichigo", edited_at=T.format(edit_minute))
    return f.history()


@pytest.mark.parametrize("ruleset", sorted(available_rulesets()))
def test_a_post_with_rolls_edited_after_the_reply_is_a_warning_in_every_ruleset(ruleset):
    a = replay(thread(25), ruleset)
    [v] = find(a, "post.edited_after_reply", "100")
    assert v.severity == "warning" and v.rule == "Arbitro › Prove di modifica"
    assert v.message == ("Post modificato da Ichigo il 31/10/2026 17:25, dopo la risposta di Rukia (post 101, "
                         "31/10/2026 17:10): contiene 1 tiro e lo schema; chi ha risposto potrebbe averli letti prima "
                         "della modifica. Il master confronti con una citazione o una copia salvata del post.")
    assert v.details == {"edited_at": T.format(25), "edited_by": "Ichigo", "reply_post": "101",
                         "reply_at": T.format(10), "contents": ["1 tiro", "lo schema"]}


def test_an_edit_before_the_reply_and_a_narrative_edit():
    assert find(replay(thread(5)), "post.edited_after_reply") == []  # fixed before anyone answered
    a = replay(thread(25, rolls=False))
    assert find(a, "post.edited_after_reply") == []
    [v] = find(a, "post.narrative_edited_after_reply", "100")
    assert v.severity == "info" and "solo testo narrativo" in v.message


def test_the_game_master_dice_post_is_part_of_the_post_not_a_reply():
    # the bot answered at 17:05, Rukia at 17:10: an edit at 17:07 came before any reply
    assert find(replay(thread(7, bot_reply=True)), "post.edited_after_reply") == []
    [v] = find(replay(thread(12, bot_reply=True)), "post.edited_after_reply", "100")
    assert v.details["reply_post"] == "102"


def test_an_incremental_replay_learns_of_the_reply_that_came_later():
    h = thread(25)
    first = replay(replace(h, posts=h.posts[:1]), "guida")
    assert find(first, "post.edited_after_reply") == []
    later = replay(h, "guida", previous=first)
    assert later.replayed == 2 and len(find(later, "post.edited_after_reply", "100")) == 1
