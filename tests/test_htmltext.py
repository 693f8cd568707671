"""htmltext: block-aware text, quotes/code/spoilers split, dice blocks located, scripts never kept."""
from __future__ import annotations

from lxml import html as lxml_html

from scraper.htmltext import DICE_MARK, element_text, inline_text, split_post
from scraper.platforms.base import dice_class_test


def frag(markup: str):
    return lxml_html.fragment_fromstring(markup, create_parent="div")


def test_blocks_and_cells():
    el = frag("<p>Uno <b>due</b></p><div>tre<br>quattro</div><ul><li>a</li><li>b</li></ul>"
              "<table><tr><td>PV: 44/52</td><td>PE: 30/40</td></tr><tr><th>Forza</th><td>5 (+1)</td></tr></table>")
    assert element_text(el) == "Uno due\ntre\nquattro\na\nb\nPV: 44/52 | PE: 30/40\nForza | 5 (+1)"


def test_paragraph_breaks_survive_but_nested_blocks_do_not_add_blank_lines():
    el = frag("<div><div><p>Registro:</p></div></div><div>-8 PV [Cero]</div>Testo<br><br>Altro")
    assert element_text(el) == "Registro:\n-8 PV [Cero]\nTesto\n\nAltro"


def test_scripts_styles_and_handlers_dropped():
    el = frag("Ciao<script>alert(1)</script><style>p{}</style><img src=x onerror='alert(2)'>"
              "<a href='javascript:alert(3)'>link</a><iframe src='//evil'>x</iframe> fine")
    pt = split_post(el)
    assert pt.text == "Ciaolink fine"
    assert pt.links == []


def test_forumfree_quote_code_spoiler():
    el = frag("<div class='quote_top'><b>CITAZIONE</b> (Kurogane @ 2/11/2026, 21:14)</div>"
              "<div class='quote'>PV: 40/52<br>Lancio dadi 1d12+6: 7 + 6 = 13</div>"
              "Rispondo.<div class='code_top'><b>CODICE</b></div><div class='code'>[dice=1d12]x[/dice]</div>"
              "<div class='code_top'>SPOILER (clicca)</div><div class='code'>PE: 10/20</div>")
    pt = split_post(el)
    assert [(q.author, q.text) for q in pt.quotes] == [("Kurogane", "PV: 40/52\nLancio dadi 1d12+6: 7 + 6 = 13")]
    assert pt.codes == ["[dice=1d12]x[/dice]"]
    assert pt.spoilers == ["PE: 10/20"]
    assert pt.text == "Rispondo.\n[dice=1d12]x[/dice]\nPE: 10/20"
    assert pt.scan == "Rispondo.\nPE: 10/20"  # code is not searched for rolls; spoilers are the post's own


def test_phpbb_blockquote_with_cite_and_nested_quote():
    el = frag("<blockquote><div><cite><a href='#'>Rukia</a> ha scritto: <span>ieri</span></cite>"
              "<blockquote><div><cite>Renji ha scritto:</cite>prima</div></blockquote>poi</div></blockquote>mio")
    pt = split_post(el)
    assert [(q.author, q.text) for q in pt.quotes] == [("Rukia", "prima\npoi")]
    assert pt.text == "mio"


def test_forumotion_codebox_quote_and_code():
    el = frag("<dl class='codebox'><dt>Ichigo ha scritto:</dt><dd>ciao</dd></dl>"
              "<dl class='codebox'><dt>Codice:</dt><dd><code>1d12 => 3 => 3</code></dd></dl>"
              "<dl class='codebox spoiler'><dt>Spoiler:</dt><dd>segreto</dd></dl>")
    pt = split_post(el)
    assert [(q.author, q.text) for q in pt.quotes] == [("Ichigo", "ciao")]
    assert pt.codes == ["1d12 => 3 => 3"]
    assert pt.spoilers == ["segreto"]


def test_dice_blocks_are_located_in_own_text_only():
    el = frag("<blockquote><div class='dice_roll'>1d8: 3 = 3</div></blockquote>prima"
              "<div class='dice_roll'><div class='dice_top'>1d12+6: 7 + 6 = 13</div></div>dopo"
              "<div class='code'><div class='dice_roll'>1d6: 1 = 1</div></div>")
    pt = split_post(el, dice_test=dice_class_test())
    assert len(pt.dice) == 1 and pt.dice[0].get("class") == "dice_roll"
    assert pt.marked == f"prima\n{DICE_MARK}\ndopo"
    assert pt.scan == "prima\ndopo"
    assert "1d12+6: 7 + 6 = 13" in pt.text


def test_signature_and_edit_note_are_not_content():
    el = frag("testo<div class='edit'>Edited by X - 1/1/2026, 10:00</div><div class='signature'>firma</div>")
    assert element_text(el) == "testo"


def test_links_are_collected():
    el = frag("<a href='/?t=70000101'>Scheda</a> <a href='https://x.it/a'>b</a> <a href='mailto:a@b'>m</a>")
    assert split_post(el).links == [("/?t=70000101", "Scheda"), ("https://x.it/a", "b")]


def test_inline_text_skips_scripts():
    el = frag("<span>Nick<script>evil()</script> <b>Name</b></span>")
    assert inline_text(el) == "Nick Name"


def test_deep_nesting_does_not_crash():
    # libxml2 keeps ~255 levels; past our own cap the text is kept flat instead of recursing
    el = frag("<span>" * 240 + "fondo" + "</span>" * 240)
    assert element_text(el) == "fondo"


def test_forumfree_quote_head_names_with_brackets_or_at():
    # "Ryo (Lupo)" gave no author, "Ryo@Home" gave "Ryo"
    for nick in ("Ryo (Lupo)", "Ryo@Home", "Kurogane"):
        el = lxml_html.fromstring(f'<div><div class="quote_top"><b>CITAZIONE</b> ({nick} @ 2/11/2026, 10:00)</div>'
                                  '<div class="quote">ciao</div>mio</div>')
        pt = split_post(el)
        assert (pt.text, [(q.author, q.text) for q in pt.quotes]) == ("mio", [(nick, "ciao")])


def test_subsilver2_quote_and_code_boxes():
    # phpBB subsilver2: the quoted roll was read as the quoting post's own text (and so as its roll)
    el = lxml_html.fromstring('<div><div class="quotetitle"><b>Kurogane ha scritto:</b></div>'
                              '<div class="quotecontent">Attacco 1d20: 5 = 5</div>'
                              '<div class="codetitle"><b>Codice:</b></div><div class="codecontent">1d20: 7 = 7</div>'
                              'mio</div>')
    pt = split_post(el)
    assert (pt.text, pt.scan, [(q.author, q.text) for q in pt.quotes], pt.codes) == (
        "1d20: 7 = 7\nmio", "mio", [("Kurogane", "Attacco 1d20: 5 = 5")], ["1d20: 7 = 7"])
