"""Forumotion: every field read on each version's template (exact values), and the Game-Master dice message known by
its content: posted by the founder, by a renamed account, faces from alt/title/file name/the forum's face map, or
unknown (kept, and said)."""
from __future__ import annotations

import sys
from datetime import datetime

import pytest
from lxml import html as lxml_html

from scraper.parse import parse_page, parse_pages
from scraper.platforms.config import ForumConfig, ForumConfigError, load_config
from scraper.platforms.forumotion import dice_lines, gm_rolls
from tests.plugins.common import FIXTURES

sys.path.insert(0, str(FIXTURES))
import gen_forumotion  # noqa: E402
from gen_common import Site, load_story  # noqa: E402

FETCHED = "2026-03-20T12:00:00+01:00"
DUEL = {
    "phpbb2": Site("forumotion", "phpbb2", "tempio-kenshi.forumattivo.com", "Tempio di Kenshi", 5),
    "phpbb3": Site("forumotion", "phpbb3", "arena-shinigami.forumattivo.com", "Arena Shinigami", 5),
    "invision": Site("forumotion", "invision", "ninja-gdr.forumattivo.it", "Ninja GdR", 5),
    "modernbb": Site("forumotion", "modernbb", "gilda-arcana.forumattivo.com", "Gilda Arcana", 5),
}


def _duel_edited() -> dict:
    story = load_story("duel_short")
    post = story["posts"][1]
    post["edited_by"], post["edited_at"] = "Hana_K", datetime(2026, 3, 15, 10, 5)
    return story


def _fields(p):
    return (p.id, p.author, p.author_id, p.timestamp, p.role, p.answers, p.edited_by, p.edited_at)


@pytest.mark.parametrize("skin", sorted(DUEL))
def test_every_field_on_each_template(skin):
    pages = [(data, url) for _, url, data, _ in gen_forumotion.render_forumotion(_duel_edited(), DUEL[skin])]
    first = parse_page(*pages[0], fetched_at=FETCHED)
    host = DUEL[skin].host
    assert (first.platform, first.skin, first.thread_id, first.title, first.section) == (
        "forumotion", skin, "42", "Duello al tempio — Kenshi vs Mizuki", "4411")
    assert (first.page, first.page_count, first.page_size, first.last_offset) == (1, 2, 5, 5)
    assert first.page_urls == (f"https://{host}/t42-duello-al-tempio-kenshi-vs-mizuki",
                               f"https://{host}/t42p5-duello-al-tempio-kenshi-vs-mizuki")
    gm = {"modernbb": ("Sensei_Akira", "1")}.get(skin, ("Game Master", None))
    assert [_fields(p) for p in first.posts[:3]] == [
        ("700110", "Ronin_88", "305", "2026-03-14T20:00:00+01:00", "player", None, None, None),
        ("700111", *gm, "2026-03-14T20:00:00+01:00", "gm_bot", "700110", None, None),
        ("700120", "Hana_K", "412", "2026-03-15T09:30:00+01:00", "player", None, "Hana_K",
         "2026-03-15T10:05:00+01:00"),
    ]
    player = first.posts[2]
    assert "Ultima modifica" not in player.body and "Messaggi" not in player.body
    assert player.body.startswith("Personaggio: Mizuki") and player.schema.character == "Mizuki"
    assert [(r.expression, r.faces, r.total, r.source, r.authentic) for r in player.rolls] == [
        ("1d18", (14,), 14, "forumotion_gm", True), ("1d12", (6,), 6, "forumotion_gm", True)]
    second = parse_page(*pages[1], fetched_at=FETCHED)
    assert (second.page, second.page_count, [p.id for p in second.posts][:2]) == (2, 2, ["700131", "700140"])
    assert second.posts[1].url == f"https://{host}/t42p5-duello-al-tempio-kenshi-vs-mizuki#700140"


def test_dice_posted_by_the_founder_then_by_a_renamed_account(fixture_page):
    """gilda-arcana: the founder (user 1, Forumotion's default Game Master) posts the first results, an account of
    the admin's ("Oracolo") the later ones, with the forum's own wording: neither is named "Game Master"."""
    history = parse_pages([fixture_page(f"forumotion/modernbb/t42p{o}.html") for o in (0, 5)], fetched_at=FETCHED)
    by_id = {p.id: p for p in history.posts}
    assert [(p.id, p.author, p.author_id, p.role, p.answers, p.rolls) for p in history.posts if p.role == "gm_bot"] == [
        ("700111", "Sensei_Akira", "1", "gm_bot", "700110", ()), ("700121", "Sensei_Akira", "1", "gm_bot", "700120", ()),
        ("700131", "Oracolo", "9", "gm_bot", "700130", ()), ("700141", "Oracolo", "9", "gm_bot", "700140", ())]
    assert "Responso del Fato" in by_id["700131"].body
    assert [(r.expression, r.faces, r.total, r.label.split(" (")[0], r.authentic) for r in by_id["700130"].rolls] == [
        ("1d12", (8,), 8, "Schivata", True), ("1d12", (11,), 11, "Attacco [Katana]", True)]


def _body(markup: str):
    return lxml_html.fragment_fromstring(f"<div>{markup}</div>")


FRAME = "Il membro 'Rukia' ha effettuato la seguente azione : Tiro del destino<br /><br />"


@pytest.mark.parametrize("img,face", [
    ('<img src="https://i.servimg.com/u/f11/x/k9a.png" alt="7" />', 7),            # alt
    ('<img src="https://i.servimg.com/u/f11/x/k9a.png" alt="" title="7" />', 7),   # title
    ('<img src="https://i.servimg.com/u/f11/x/d12_7.png" alt="" />', 7),           # file name d<sides>_<face>
    ('<img src="https://i.servimg.com/u/f11/x/faccia-7.gif" />', 7),               # file name ending in the face
])
def test_faces_from_alt_title_or_file_name(img, face):
    (roll,) = gm_rolls(_body(f"{FRAME}#1 'Schivata (d12)' : {img}"))
    assert (roll.expression, roll.faces, roll.total, roll.label, roll.authentic) == ("1d12", (face,), face, "Schivata", True)


def test_faces_from_the_forum_config_face_map():
    body = _body(f"{FRAME}'Attacco (d8)' : <img src='https://i.servimg.com/u/f11/x/k9a.png' alt='' /> "
                 f"<img src='https://i.servimg.com/u/f11/x/zz3.png?v=2' alt='' />")
    config = ForumConfig(dice_faces={"https://i.servimg.com/u/f11/x/k9a.png": 5, "zz3.png": 2})
    (roll,) = gm_rolls(body, config)
    assert (roll.expression, roll.faces, roll.total, roll.label, roll.problems) == ("2d8", (5, 2), 7, "Attacco", ())


def test_unknown_faces_are_kept_and_said():
    body = _body(f"{FRAME}#1 'Attacco (d12)' : <img src='https://i.servimg.com/u/f11/x/k9a.png' alt='' /><br />"
                 f"#2 'Danni' : <img src='/x/unknown.png' />")
    rolls = gm_rolls(body)
    assert [(r.expression, r.faces, r.total, r.label, r.authentic, r.problems) for r in rolls] == [
        ("1d12", None, None, "Attacco", False, ("unreadable_faces",)),
        ("1d?", None, None, "Danni", False, ("unparsable_expression", "unreadable_faces"))]


def test_unknown_faces_stay_unknown_once_paired():
    doc = f"""<html><body><div id="p11" class="post row1 post--11"><div class="postbody"><p class="author">da
<a href="/u4"><strong>Rukia</strong></a> Lun 2 Mar 2026 - 20:00</p><div class="content clearfix"><div>Lancio: Schivata
(Rukia vs Renji): (+5 [Destrezza])</div></div></div><div class="postprofile" id="profile11"><dl><dt><br />
<strong><a href="/u4"><strong>Rukia</strong></a></strong></dt><dd>Giocatori</dd></dl></div></div>
<div id="p12" class="post row2 post--12"><div class="postbody"><p class="author">da <a href="/u1"><strong>Admin</strong></a>
Lun 2 Mar 2026 - 20:00</p><div class="content clearfix"><div>{FRAME}'Schivata (d12)' : <img src="/x/k9a.png" alt="" />
</div></div></div><div class="postprofile" id="profile12"><dl><dt><strong><a href="/u1"><strong>Admin</strong></a></strong>
</dt><dd>Amministratore</dd></dl></div></div></body></html>"""
    history = parse_pages([(doc.encode(), "https://shinigami.forumattivo.com/t5-prova")], fetched_at=FETCHED)
    rukia, admin = history.posts
    assert (admin.author, admin.author_id, admin.role, admin.answers, admin.rolls) == ("Admin", "1", "gm_bot", "11", ())
    assert [(r.expression, r.faces, r.total, r.label, r.problems) for r in rukia.rolls] == [
        ("1d12", None, None, "Schivata (Rukia vs Renji): (+5 [Destrezza])", ("unreadable_faces",))]


@pytest.mark.parametrize("markup", [
    "Ecco la mappa della zona:<br />'Mappa' : <img src='/x/3.png' /><br />Ci vediamo al tempio.",  # a line after
    "Kenshi avanza.<br />Poi si ferma.<br />'Mappa' : <img src='/x/3.png' />",   # two lines before the die line
    "Guardate: <img src='/x/3.png' />",                                            # no die line at all
    "<img src='/x/3.png' /> bella vero?",
])
def test_a_player_post_with_images_is_no_dice_message(markup):
    assert dice_lines(_body(markup), ForumConfig()) is None


def test_a_configured_game_master_account_reads_any_die_line():
    body = _body("Risultati del turno:<br />Nota del master<br />'Dado (d6)' : <img src='/x/d6_4.png' />")
    assert dice_lines(body, ForumConfig()) is None
    (die,) = dice_lines(body, ForumConfig(), strict=False)
    assert (die.name, die.sides, die.faces) == ("Dado (d6)", 6, (4,))


def test_die_named_by_its_own_image():
    (die,) = dice_lines(_body(f"{FRAME}<img src='/x/d20.png' alt='' /> : <img src='/x/d20_13.png' alt='' />"),
                        ForumConfig())
    assert (die.name, die.sides, die.faces) == ("d20", 20, (13,))


def test_face_map_in_the_config_file():
    cfg = load_config('[forums."gilda.forumattivo.com".dice_faces]\n"k9a.png" = 3\n'
                      '"https://i.servimg.com/u/f11/x/zz.png" = 6\n').for_host("gilda.forumattivo.com")
    assert (cfg.dice_face("https://i.servimg.com/u/f11/x/k9a.png"), cfg.dice_face("https://i.servimg.com/u/f11/x/zz.png"),
            cfg.dice_face("/other.png")) == (3, 6, None)
    for bad in ('"a.png" = "tre"', '"a.png" = 0', '"a.png" = true'):
        with pytest.raises(ForumConfigError, match="dice_faces"):
            load_config(f"[default.dice_faces]\n{bad}\n")
