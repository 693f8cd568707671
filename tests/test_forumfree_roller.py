"""ForumFree's roller, `details.dice-roll`: the structure its stylesheet fixes, its contents read tolerantly."""
from __future__ import annotations

import pytest

from scraper import parse_page

PAGE = """<html><head><title>Prova - Arena</title></head><body><div class="topic" id="t5">
<div class="anchor"><a id="entry9001"></a></div><table id="ee9001"><tr><td class="post">
<table class="main6"><tr><td class="left_top"><div class="nick"><a href="/?act=Profile&amp;MID=7">Kira</a></div></td>
<td class="right_top"><a href="/?t=5#entry9001" title="2/3/2026, 21:00:05"><b>Inviato il:</b> 2/3/2026, 21:00</a></td></tr>
<tr><td class="left"><div class="details"><b>Gruppo: Giocatori</b></div></td><td class="right"><div class="color">
Il colpo parte.<br>{body}</div></td></tr></table></td></tr></table></div></body></html>"""


def rolls(body: str):
    page = parse_page(PAGE.format(body=body).encode(), "https://arena.forumfree.it/?t=5")
    post = page.posts[0]
    return [(r.expression, r.faces, r.total, r.label, r.source, r.authentic, r.problems) for r in post.rolls], post


@pytest.mark.parametrize("block,expected", [
    # the fixtures' form: the bare die in the dt, each die's result with its colour class, the additions, the total
    ('<details class="dice-roll"><summary><span></span> Lancio dadi</summary><dl><dt><em>1d12</em></dt>'
     '<dd class="dice-medium">7</dd><dd>+6</dd><dd>= 13</dd></dl><span class="dice-time">2/3/2026, 21:00</span></details>',
     ("1d12+6", (7,), 13)),
    # the whole expression in the dt: a signed result repeating its constant is not added twice
    ('<details class="dice-roll"><summary><span></span></summary><dl><dt><em>1d12+6</em></dt>'
     '<dd class="dice-low">2</dd><dd>+6</dd><dd>= 8</dd></dl></details>', ("1d12+6", (2,), 8)),
    # several dice of one kind, "d6" counted by its results, no total shown
    ('<details class="dice-roll"><summary><span></span></summary><dl><dt><em>d6</em></dt>'
     '<dd class="dice-high">5</dd><dd class="dice-highest">6</dd></dl></details>', ("2d6", (5, 6), None)),
    # no result classes: the plain numbers are the faces
    ('<details class="dice-roll"><summary><span></span></summary><dl><dt><em>2d8</em></dt>'
     '<dd>3</dd><dd>4</dd><dd>Totale 7</dd></dl></details>', ("2d8", (3, 4), 7)),
])
def test_roller_forms(block, expected):
    got, post = rolls("Attacco [Zangetsu] (Kira vs Rukia): (+1 [Destrezza])<br>" + block)
    assert got == [(*expected, "Attacco [Zangetsu] (Kira vs Rukia): (+1 [Destrezza])", "forum_roller", True, ())]
    assert "dice-time" not in post.body and "Lancio dadi" not in post.body  # the roller's text is not the player's


def test_summary_is_the_label_when_it_says_more_than_dadi():
    got, _ = rolls('<details class="dice-roll"><summary><span></span> Schivata (Kira vs Rukia)</summary><dl>'
                   '<dt><em>1d20</em></dt><dd class="dice-high">17</dd><dd>= 17</dd></dl></details>')
    assert got == [("1d20", (17,), 17, "Schivata (Kira vs Rukia)", "forum_roller", True, ())]


def test_two_rolls_in_one_block_and_a_wrong_total_is_flagged():
    got, _ = rolls('Doppio colpo<br><details class="dice-roll"><summary><span></span></summary><dl>'
                   '<dt><em>1d12</em></dt><dd class="dice-low">1</dd><dd>= 1</dd>'
                   '<dt><em>1d6</em></dt><dd class="dice-high">5</dd><dd>= 9</dd></dl></details>')
    assert [g[:3] for g in got] == [("1d12", (1,), 1), ("1d6", (5,), 9)]
    assert got[1][5] is False and "total_mismatch" in got[1][6]


def test_unknown_contents_fall_back_to_what_the_block_shows():
    """A dt without a die expression: the block's drawn text (`dt: dd - dd`) is read as a rendered roll."""
    got, _ = rolls('Parata<br><details class="dice-roll"><summary><span></span></summary><dl><dt><em>Risultato</em></dt>'
                   '<dd>1d20+2 = 11 + 2 = 13</dd></dl></details>')
    assert [g[:3] for g in got] == [("1d20+2", (11,), 13)]


def test_a_roll_in_a_quote_is_not_the_posts():
    got, post = rolls('<div align="center"><div align="left" class="quote_top"><b>CITAZIONE</b> (Rukia @ 2/3/2026, 20:00)'
                      '</div><div align="left" class="quote"><details class="dice-roll"><summary><span></span></summary>'
                      '<dl><dt><em>1d20</em></dt><dd class="dice-low">3</dd><dd>= 3</dd></dl></details></div></div>')
    assert got == [] and [q.author for q in post.quotes] == ["Rukia"]
