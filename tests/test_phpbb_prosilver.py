"""phpBB 3.3 prosilver fixtures against phpBB's own template, every post field read exactly, fancydice's boxes."""
from __future__ import annotations

import re
import sys
from datetime import datetime

import pytest
from lxml import etree, html as lhtml

from scraper.parse import parse_page
from scraper.platforms.config import ForumConfig
from scraper.platforms.phpbb import FIDDLED_PROBLEM, read_fancydice
from tests.skeleton import skeleton as _skeleton

FETCHED = "2026-11-09T12:00:00+01:00"
T312 = ("phpbb/viewtopic_t312_start0.html", "phpbb/viewtopic_t312_start15.html")


# --- the template, rendered for the branches a guest sees ---------------------------------------------------
# A small reading of phpBB's template syntax, enough for the postrow block: <!-- IF/ELSEIF/ELSE/ENDIF -->,
# {% if %}/{% endif %}, <!-- BEGIN/END --> loops (kept once or dropped), variables. A condition is true when every
# name it tests is in TRUE (`not X` when X is not; `or`/`and` as written; `is odd` from the row count).

TRUE = {
    "postrow.U_POST_AUTHOR", "postrow.POSTER_AVATAR", "postrow.RANK_TITLE", "postrow.RANK_IMG", "postrow.POSTER_POSTS",
    "postrow.U_SEARCH", "postrow.POSTER_JOINED", "custom_fields", "postrow.contact", ".postrow.contact", "contact",
    "$S_LAST_CELL", "REMAINDER eq 0", "REMAINDER eq 3 or postrow.contact.S_LAST_ROW", "$SHOW_POST_BUTTONS",
    "postrow.U_REPORT", "postrow.U_QUOTE", "postrow.SIGNATURE",
}


def _cond(expr: str, true: set[str]) -> bool:
    expr = " ".join(expr.split())
    if expr in true:
        return True
    if " or " in expr:
        return any(_cond(e, true) for e in expr.split(" or "))
    if " and " in expr:
        return all(_cond(e, true) for e in expr.split(" and "))
    if expr.startswith("not "):
        return not _cond(expr[4:], true)
    if expr.endswith(" is odd"):
        return expr[:-7] in true
    m = re.fullmatch(r"(\S+) !?== ''|(\S+) != ''", expr)
    if m:
        return (m.group(1) or m.group(2)) in true
    return expr.startswith("(") and _cond(expr.strip("()"), true)


_TOKENS = re.compile(r"<!-- (IF|ELSEIF|ELSE|ENDIF|BEGIN|END)\b ?(.*?) ?-->|\{% (if|endif) ?(.*?) %\}")


def render_template(text: str, true: set[str], values: dict[str, str]) -> str:
    out: list[str] = []
    stack: list[list[bool]] = []  # per open block: [showing, a branch was taken]
    pos = 0
    for m in _TOKENS.finditer(text):
        if all(s[0] for s in stack):
            out.append(text[pos:m.start()])
        pos = m.end()
        kind = (m.group(1) or m.group(3)).upper()
        arg = m.group(2) if m.group(1) else m.group(4)
        if kind in ("IF", "BEGIN"):
            ok = _cond(arg, true)
            stack.append([ok, ok])
        elif kind == "ELSEIF":
            ok = not stack[-1][1] and _cond(arg, true)
            stack[-1] = [ok, stack[-1][1] or ok]
        elif kind == "ELSE":
            stack[-1] = [not stack[-1][1], True]
        else:
            stack.pop()
    out.append(text[pos:])
    rendered = "".join(out)
    rendered = re.sub(r"<!--.*?-->|\{%.*?%\}", "", rendered, flags=re.S)
    return re.sub(r"\{\{ ?(.*?) ?\}\}|\{([A-Za-z_.$]+)\}", lambda v: values.get(v.group(1) or v.group(2), "x"), rendered)


def skeleton(el: etree._Element) -> tuple:
    """The structure, not the text; the post's own content, signature and edit note are the post's, their insides
    left out."""
    return _skeleton(el, ((None, "content"), (None, "signature"), (None, "notice")))


def _postrow(real_dir, values: dict[str, str], true: set[str]) -> etree._Element:
    text = (real_dir / "templates" / "phpbb-prosilver" / "viewtopic_body.html").read_text(encoding="utf-8")
    block = text[text.index("<!-- BEGIN postrow -->") + len("<!-- BEGIN postrow -->"):text.index("<!-- END postrow -->")]
    return lhtml.fragment_fromstring(render_template(block, true, values), create_parent="div").find("div")


def _ours(path: str, pid: str, fixtures_dir) -> etree._Element:
    doc = lhtml.fromstring((fixtures_dir / path).read_bytes())
    return doc.get_element_by_id(f"p{pid}")


AUTHOR = '<a href="./memberlist.php?mode=viewprofile&amp;u=1" class="username">N</a>'
VALUES = {"postrow.POST_ID": "1", "postrow.POST_AUTHOR_FULL": AUTHOR,
          "postrow.POSTER_AVATAR": '<img class="avatar" src="a.png" alt="Avatar utente" />',
          "postrow.RANK_IMG": '<img src="r.png" alt="r" />', "postrow.custom_fields.PROFILE_FIELD_IDENT": "phpbb_location",
          "postrow.contact.ID": "pm"}
MASTER = '<a href="./memberlist.php?mode=viewprofile&amp;u=2" style="color: #AA0000;" class="username-coloured">N</a>'


@pytest.mark.parametrize("pid, row, edited", [("600120", 1, False), ("600130", 2, False), ("600230", 12, True)])
def test_post_skeleton_is_the_templates(real_dir, fixtures_dir, pid, row, edited):
    true = TRUE | ({"postrow.S_ROW_COUNT"} if row % 2 else set()) | ({"postrow.EDITED_MESSAGE"} if edited else set())
    want = skeleton(_postrow(real_dir, VALUES, true))
    got = skeleton(_ours(T312[0], pid, fixtures_dir))
    assert got == want


def test_the_first_post_has_the_first_h3(real_dir, fixtures_dir):
    want = skeleton(_postrow(real_dir, {**VALUES, "postrow.POST_AUTHOR_FULL": MASTER}, TRUE | {"postrow.S_FIRST_ROW"}))
    assert skeleton(_ours(T312[0], "600110", fixtures_dir)) == want
    h3 = _ours(T312[0], "600110", fixtures_dir).find(".//h3")
    assert h3.get("class") == "first" and h3.findtext("a") == "Arena di Karakura — Hollow vs Quincy"


def _chain(el: etree._Element) -> list[tuple[str, str, str]]:
    return [(a.tag, a.get("id") or "", a.get("class") or "") for a in reversed(list(el.iterancestors()))]


def test_page_chrome_is_the_templates(real_dir, fixtures_dir):
    tpl = real_dir / "templates" / "phpbb-prosilver"
    header = (tpl / "overall_header.html").read_text(encoding="utf-8")
    body = (tpl / "viewtopic_body.html").read_text(encoding="utf-8")
    # the ancestors of a post: <body id="phpbb"> > div#wrap.wrap > div#page-body.page-body (overall_header)
    assert '<body id="phpbb" class="nojs notouch section-{SCRIPT_NAME}' in header
    assert '<div id="wrap" class="wrap">' in header and '<div id="page-body" class="page-body" role="main">' in header
    doc = lhtml.fromstring((fixtures_dir / T312[0]).read_bytes())
    post = doc.get_element_by_id("p600110")
    assert _chain(post) == [("html", "", ""), ("body", "phpbb", "nojs notouch section-viewtopic ltr "),
                            ("div", "wrap", "wrap"), ("div", "page-body", "page-body")]
    # viewtopic_body: h2.topic-title > a, the action bars with their .pagination before and after the posts
    assert '<h2 class="topic-title"><!-- EVENT viewtopic_topic_title_prepend --><a href="{U_VIEW_TOPIC}">' in body
    (title,) = doc.xpath("//h2[@class='topic-title']/a")
    assert (title.get("href"), title.text) == ("./viewtopic.php?t=312", "Arena di Karakura — Hollow vs Quincy")
    assert '<div class="action-bar bar-top">' in body and '<div class="action-bar bar-bottom">' in body
    bars = doc.xpath("//div[@id='page-body']/div[starts-with(@class, 'action-bar bar-')]")
    assert [b.get("class") for b in bars] == ["action-bar bar-top", "action-bar bar-bottom"]
    for bar in bars:
        (box,) = bar.xpath("div[@class='pagination']")
        assert box.text.strip() == "18 messaggi"  # {TOTAL_POSTS}, then pagination.html's list
        assert [(li.get("class"), li.xpath("string()")) for li in box.xpath("ul/li")] == [
            ("active", "1"), (None, "2"), ("arrow next", "Prossimo")]
    posts = doc.xpath("//div[@id='page-body']/div[contains(@class, 'post has-profile')]")
    assert [p.get("class") for p in posts[:3]] == ["post has-profile bg2", "post has-profile bg1", "post has-profile bg2"]


# --- every field of the fixture thread, read exactly ------------------------------------------------------

def _rome(text: str) -> str:
    return datetime.fromisoformat(text).isoformat()


T312_POSTS = [  # id, author, user id, local time, role
    ("600110", "Niccolò", "2", "2026-10-24T21:00:00+02:00", "master"),
    ("600120", "Kurogane", "1021", "2026-10-24T22:10:00+02:00", "player"),
    ("600130", "Seireitei_Ryo", "1187", "2026-10-25T10:30:00+01:00", "player"),
    ("600140", "Kurogane", "1021", "2026-10-25T18:45:00+01:00", "player"),
    ("600150", "Seireitei_Ryo", "1187", "2026-10-26T09:05:00+01:00", "player"),
    ("600160", "Kurogane", "1021", "2026-10-26T21:20:00+01:00", "player"),
    ("600170", "Seireitei_Ryo", "1187", "2026-10-27T08:40:00+01:00", "player"),
    ("600180", "Kurogane", "1021", "2026-10-27T22:15:00+01:00", "player"),
    ("600190", "Seireitei_Ryo", "1187", "2026-10-28T19:00:00+01:00", "player"),
    ("600200", "Niccolò", "2", "2026-10-28T20:30:00+01:00", "master"),
    ("600210", "Kurogane", "1021", "2026-10-29T13:10:00+01:00", "player"),
    ("600220", "Seireitei_Ryo", "1187", "2026-10-30T09:50:00+01:00", "player"),
    ("600230", "Kurogane", "1021", "2026-10-31T17:25:00+01:00", "player"),
    ("600240", "Seireitei_Ryo", "1187", "2026-11-01T11:15:00+01:00", "player"),
    ("600250", "Kurogane", "1021", "2026-11-01T20:40:00+01:00", "player"),
    ("600260", "Seireitei_Ryo", "1187", "2026-11-02T08:30:00+01:00", "player"),
    ("600270", "Kurogane", "1021", "2026-11-08T21:40:00+01:00", "player"),
    ("600280", "Niccolò", "2", "2026-11-09T10:05:00+01:00", "master"),
]


def test_every_post_field_of_the_fixture_thread(fixture_page):
    pages = [parse_page(*fixture_page(p), fetched_at=FETCHED) for p in T312]
    assert [(p.page, p.page_count, p.page_size, p.last_offset, p.thread_id, p.title, p.section) for p in pages] == [
        (1, 2, 15, 15, "312", "Arena di Karakura — Hollow vs Quincy", "9988"),
        (2, 2, 15, 15, "312", "Arena di Karakura — Hollow vs Quincy", "9988")]
    posts = [post for page in pages for post in page.posts]
    assert [(p.id, p.author, p.author_id, p.timestamp, p.role) for p in posts] == T312_POSTS
    assert [p.page for p in posts] == [1] * 15 + [2] * 3
    assert [p.url for p in posts[:2]] == ["https://forum.karakura-gdr.it/viewtopic.php?p=600110#p600110",
                                          "https://forum.karakura-gdr.it/viewtopic.php?p=600120#p600120"]
    edited = [(p.id, p.edited_by, p.edited_at) for p in posts if p.edited_by]
    assert edited == [("600230", "Kurogane", "2026-10-31T18:02:00+01:00")]
    quotes = [(p.id, [(q.author, q.text.splitlines()[0]) for q in p.quotes]) for p in posts if p.quotes]
    assert quotes == [("600200", [("Kurogane", "Personaggio: Hollow")])]
    (quote,) = posts[9].quotes
    assert "ott 2026" not in quote.text and "↑" not in quote.text  # the cite's link and date are not the quote
    assert all("GdR Karakura" not in p.body and "Torna in cima" not in p.body for p in posts)  # signature, chrome


def test_fixture_rolls_are_fancydice_boxes_labelled_by_the_line_before(fixture_page):
    page = parse_page(*fixture_page(T312[0]), fetched_at=FETCHED)
    post = next(p for p in page.posts if p.id == "600130")
    assert [(r.expression, r.faces, r.total, r.source, r.authentic, r.problems, r.label) for r in post.rolls] == [
        ("1d24+8", (9,), 17, "phpbb_dice", True, (),
         "Protezione [Blut Vene] (Quincy vs Hollow): (+2 [Bonus Protezione] +6 [Destrezza])"),
        ("1d12+8", (10,), 18, "phpbb_dice", True, (),
         "Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +6 [Destrezza])")]
    assert "1d24+8 => 9, 8 => 17" in post.body.splitlines()
    # the story's tampered roll: fancydice computes every total, so a wrong one comes with its "invalid" flag
    fiddled = next(p for p in page.posts if p.id == "600240").rolls[1]
    assert (fiddled.expression, fiddled.faces, fiddled.total, fiddled.authentic) == ("1d12+8", (6,), 17, False)
    assert fiddled.problems == ("total_mismatch", FIDDLED_PROBLEM)
    assert fiddled.label == "Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +6 [Destrezza])"


# --- fancydice's rendered forms, through the generator's own box --------------------------------------------

@pytest.fixture(scope="module")
def gen(fixtures_dir):
    sys.path.insert(0, str(fixtures_dir))
    import gen_phpbb

    return gen_phpbb


def _post_with(gen, content: str) -> str:
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Duello - GdR</title></head>
<body id="phpbb" class="nojs notouch section-viewtopic ltr "><div id="wrap" class="wrap"><div id="page-body" class="page-body">
<h2 class="topic-title"><a href="./viewtopic.php?t=9">Duello</a></h2>
<div id="p501" class="post has-profile bg2"><div class="inner">
<dl class="postprofile" id="profile501"><dt class="has-profile-rank no-avatar"><div class="avatar-container"></div>
<a href="./memberlist.php?mode=viewprofile&amp;u=5" class="username">Renji</a></dt><dd class="profile-rank">Giocatori</dd></dl>
<div class="postbody"><div id="post_content501"><h3 class="first"><a href="./viewtopic.php?p=501#p501">Duello</a></h3>
<p class="author"><a class="unread" href="./viewtopic.php?p=501#p501" title="Messaggio"><span class="sr-only">Messaggio</span></a>
<span class="responsive-hide">da <strong><a href="./memberlist.php?mode=viewprofile&amp;u=5" class="username">Renji</a></strong> &raquo; </span><time datetime="2026-07-01T18:30:00+00:00">mer 01 lug 2026, 20:30</time></p>
<div class="content">{content}</div>
</div></div></div></div></div></div></body></html>"""


def _rolls(gen, content: str, config: ForumConfig | None = None) -> list[tuple]:
    page = parse_page(_post_with(gen, content).encode(), "https://gdr.example.it/viewtopic.php?t=9", config=config,
                      fetched_at=FETCHED)
    return [(r.expression, r.faces, r.total, r.authentic, r.problems, r.label) for r in page.posts[0].rolls]


ATK = "Attacco [Zabimaru] (Renji vs Rukia): (+2 [Raggio Corto] +4 [Destrezza])"


def test_plain_box(gen):
    box = gen.dicebox("1d12+6", gen.fancydice_values("1d12+6", [7]), 13)
    assert box == '<div class="dicebox">1d12+6 => 7, 6 => 13 </div>'
    assert _rolls(gen, f"{ATK}<br>\n{box}<br>\nPV: 30/40") == [("1d12+6", (7,), 13, True, (), ATK)]


def test_box_flagged_invalid_is_not_authentic(gen):
    box = gen.dicebox("2d6-1", gen.fancydice_values("2d6-1", [3, 5]), 7, valid="invalid")
    assert box == '<div class="dicebox">2d6-1 => 3, 5, -1 => 7 invalid</div>'
    assert _rolls(gen, f"{ATK}<br>\n{box}") == [("2d6-1", (3, 5), 7, False, (FIDDLED_PROBLEM,), ATK)]


def test_macro_spec_keeps_its_name_faces_and_total(gen):
    # an admin's die `fuoco` = 1d4+1 rolls as its values; its name is no NdS+K: count and sides 0, flagged
    box = gen.dicebox("fuoco", [3, 1], 4)
    page = parse_page(_post_with(gen, f"Danni [Fuoco] (Renji vs Rukia)<br>\n{box}").encode(),
                      "https://gdr.example.it/viewtopic.php?t=9", fetched_at=FETCHED)
    (roll,) = page.posts[0].rolls
    assert (roll.expression, roll.count, roll.sides, roll.constant, roll.faces, roll.total) == ("fuoco", 0, 0, 0, (3, 1), 4)
    assert (roll.authentic, roll.problems, roll.label) == (False, ("unparsable_expression",), "Danni [Fuoco] (Renji vs Rukia)")


def test_several_specs_in_one_tag_are_one_roll_each(gen):
    box = gen.dicebox("1d20+6 2d6", [14, 6, 2, 5], 27)
    assert _rolls(gen, f"{ATK}<br>\n{box}") == [("1d20+6", (14,), 20, True, (), ATK), ("2d6", (2, 5), 7, True, (), ATK)]
    # one macro among them takes what the others leave; two macros cannot be split: one roll of the whole spec
    box = gen.dicebox("1d20 fuoco", [11, 3, 1], 15)
    assert _rolls(gen, box) == [("1d20", (11,), 11, True, (), ""),
                                ("fuoco", (3, 1), 4, False, ("unparsable_expression",), "")]
    box = gen.dicebox("fuoco gelo", [3, 1, 2], 6)
    assert _rolls(gen, box) == [("fuoco gelo", (3, 1, 2), 6, False, ("unparsable_expression",), "")]
    # a box total that is not the sum of its values
    box = gen.dicebox("1d20 1d6", [11, 3], 20)
    assert _rolls(gen, box) == [("1d20", (11,), 11, False, ("total_mismatch",), ""),
                                ("1d6", (3,), 3, False, ("total_mismatch",), "")]


def test_count_variant(gen):
    box = gen.dicebox("1d12+6", [9, 6], 15, count=0, presentation=gen.FANCYDICE_COUNTED)
    assert box == '<div class="dicebox">0: 1d12+6 => 9, 6 => 15 </div>'
    assert _rolls(gen, f"{ATK}<br>{box}") == [("1d12+6", (9,), 15, True, (), ATK)]


def test_label_is_the_text_before_the_box(gen):
    box = gen.dicebox("1d20", [12], 12)
    # on the same line; on the line above (blank lines skipped), through inline BBCode; none after a quote or box
    assert _rolls(gen, f'Difesa [Scudo] (Renji vs Rukia): {box}')[0][-1] == "Difesa [Scudo] (Renji vs Rukia):"
    assert _rolls(gen, f"Prima riga<br>\n<strong class=\"text-strong\">Difesa</strong> [Scudo]<br>\n<br>\n{box}")[0][-1] \
        == "Difesa [Scudo]"
    assert _rolls(gen, f'<span style="color: #c00">Parata {box}</span>')[0][-1] == "Parata"
    assert _rolls(gen, f"<blockquote><div><cite>Rukia ha scritto:</cite>Attacco</div></blockquote>{box}")[0][-1] == ""
    assert [r[-1] for r in _rolls(gen, f"Attacco<br>{box}{box}")] == ["Attacco", ""]


def test_a_box_in_a_quote_is_not_this_posts_roll(gen):
    box = gen.dicebox("1d20", [12], 12)
    assert _rolls(gen, f"<blockquote><div><cite>Rukia ha scritto:</cite>Attacco<br>{box}</div></blockquote>") == []


def test_an_admins_presentation_is_read_by_the_configured_pattern(gen):
    mine = '<div class="dicebox">Tiro {SPEC}: risultati {DICE}, totale {TOTAL} {VALID}</div>'
    box = gen.dicebox("2d6", [3, 4], 7, presentation=mine)
    cfg = ForumConfig(dice_patterns=(r"Tiro (?P<expr>\S+): risultati (?P<faces>[\d, ]+?), totale (?P<total>\d+)",))
    assert _rolls(gen, f"{ATK}<br>{box}", cfg) == [("2d6", (3, 4), 7, True, (), ATK)]
    fiddled = gen.dicebox("2d6", [3, 4], 7, valid="invalid", presentation=mine)
    assert _rolls(gen, f"{ATK}<br>{fiddled}", cfg) == [("2d6", (3, 4), 7, False, (FIDDLED_PROBLEM,), ATK)]


@pytest.mark.parametrize("text, expected", [
    ("1d12+6 => 7, 6 => 13", ([("1d12+6", (7,), 13, True)], False)),
    ("d20 => 4 => 4 invalid", ([("d20", (4,), 4, True)], True)),       # the Spanish pack's word too
    ("3d6 => 1, 2, 3 => 6 invalido", ([("3d6", (1, 2, 3), 6, True)], True)),
    ("1d12+6 => 7 => 13", ([("1d12+6", (7,), 13, True)], False)),        # a presentation without the constant
    ('tesoro => 12, ** => 12 **', ([("tesoro", (12, "**"), 12, True)], False)),  # text dice, then the sum
    ("Attacco senza dadi", None),
])
def test_read_fancydice(text, expected):
    assert read_fancydice(text) == expected
