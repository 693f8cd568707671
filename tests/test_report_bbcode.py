"""`arbitro audit --format bbcode` and the report page's "Copia come BBCode": forum BBCode that every bundled fight
renders valid (allowed tags only, balanced and nested, no HTML/Markdown escapes, post text inert), one exact output."""
from __future__ import annotations

import html as htmlmod
import re
from dataclasses import replace

import pytest

from engine.report import render_bbcode
from server.cli import main
from tests.plugins.engine import THREAD, Fight, R
from tests.plugins.server import LiveServer
from tests.test_report_resources import _stored, bundled_audits

BREAK = "[b][/b]"  # what the renderer puts after a post-derived "[" (or "<" opening an HTML tag)
_TAG = re.compile(r"\[(/?)(b|color|list|\*|quote|url|code)(?:=([^\]]*))?\]", re.I)
_INLINE = {"b", "color", "url"}


def check_bbcode(text: str) -> None:
    """Fails unless `text` is BBCode ForumFree, Forumotion and phpBB all read alike: only [b] [color=#hex] [list] [*]
    [quote] [url=http(s)…] [code], balanced and properly nested ([*] right inside a [list], no block inside an inline
    tag), every other "[" and every "<" opening an HTML tag defused with [b][/b], no HTML entity, no Markdown escape."""
    assert not re.search(r"&(lt|gt|amp|quot|#\d+);", text), "an HTML escape leaked"
    assert not re.search(r"\\[\\`*_{}\[\]()#+!|~]", text), "a Markdown escape leaked"
    stack: list[str] = []  # open tags; "*" is an open list item
    i = 0
    while i < len(text):
        if stack and stack[-1] == "code":  # literal up to its end
            end = text.lower().find("[/code]", i)
            assert end >= 0, "[code] never closed"
            stack.pop()
            i = end + len("[/code]")
            continue
        m = _TAG.match(text, i) if text[i] == "[" else None
        if m is None:
            if text[i] == "[":
                assert text.startswith(BREAK, i + 1), f"stray [ at {text[i:i + 40]!r}"
            if text[i] == "<" and re.match(r"<[A-Za-z/!?]", text[i:i + 2]):
                assert text.startswith(BREAK, i + 1), f"HTML tag not defused at {text[i:i + 30]!r}"
            assert not (stack and stack[-1] == "list" and not text[i].isspace()), "text in a [list] before its [*]"
            i += 1
            continue
        closing, name, attr = m.group(1), m.group(2).lower(), m.group(3)
        if name == "*":
            assert not closing and stack and stack[-1] in ("list", "*"), f"[*] outside a [list] at {i}"
            if stack[-1] == "*":
                stack.pop()
            stack.append("*")
        elif closing:
            if name == "list" and stack and stack[-1] == "*":
                stack.pop()
            assert stack and stack[-1] == name, f"[/{name}] closes {stack[-1:] or 'nothing'} at {i}"
            stack.pop()
        else:
            assert not (stack and stack[-1] == "list"), f"[{name}] in a [list] before its first [*]"
            if name == "url":
                assert attr and re.fullmatch(r"https?://[^\s\[\]<>\"']+", attr), attr
            elif name == "color":
                assert attr and re.fullmatch(r"#[0-9a-fA-F]{6}", attr), attr
            else:
                assert attr is None, f"[{name}={attr}]"
            if name in ("list", "quote", "code"):
                assert not set(stack) & _INLINE, f"[{name}] inside an inline tag at {i}"
            stack.append(name)
        i = m.end()
    assert not stack, f"unclosed {stack}"


def test_the_checker_refuses_what_forums_would_misread():
    check_bbcode("[b]ok[/b] [list]\n[*]a [[b][/b]x]\n[*][url=https://a.example/?t=1]b[/url]\n[/list]\n"
                 "[code][dice=1d12]x[/dice][/code]")
    for bad in ("[b]x", "[b][color=#c0392b]x[/b][/color]", "[i]x[/i]", "[list]x[*]y[/list]", "[*]x",
                "a [x] b", "&lt;b&gt;", "\\[x\\]", "[url=javascript:alert(1)]x[/url]", "[color=red]x[/color]",
                "[b][list][*]x[/list][/b]", "<script>", "[code]x"):
        with pytest.raises(AssertionError):
            check_bbcode(bad)


@pytest.mark.parametrize("key", sorted(bundled_audits()))
@pytest.mark.parametrize("level", ["warning", "info"])
def test_every_bundled_fight_renders_valid_bbcode(key, level):
    audit = bundled_audits()[key]
    text = render_bbcode(audit, min_severity=level, report_url="https://arbitro.example/audit/1")
    check_bbcode(text)
    assert "[b]Stato finale[/b]" in text
    listed = text.count("[*][url=") if level == "info" else None
    if listed is not None:  # every post has its line at "info", linked to the post
        assert listed >= len(audit.posts)


def test_hostile_post_text_stays_text():
    """Names, messages and hints come from posts: none of them can open a tag, close the list or smuggle HTML."""
    audit = _small_fight().replay()
    name = "[url=https://evil.example]Kira[/url]<img src=x onerror=alert(1)>"
    post = replace(audit.posts[0], character=name, url="javascript:alert(1)",
                   verdicts=tuple(replace(v, message="[/list][quote]falso[/quote] [color=#000000]x") for v in
                                  audit.posts[0].verdicts))
    audit = replace(audit, posts=(post, *audit.posts[1:]), characters={name: {"pv": 1, "pv_max": 2}},
                    next={**audit.next, "character": name, "hints": ["[/b][/list]<script>alert(1)</script>"]})
    text = render_bbcode(audit)
    check_bbcode(text)
    assert ("[*]#1 [[b][/b]url=https://evil.example]Kira[[b][/b]/url]<[b][/b]img src=x onerror=alert(1)> · "
            "[color=#c0392b][b]errore[/b][/color] [[b][/b]/list][[b][/b]quote]falso[[b][/b]/quote] "
            "[[b][/b]color=#000000]x") in text  # and no link to a javascript: address
    assert "[*][[b][/b]/b][[b][/b]/list]<[b][/b]script>alert(1)<[b][/b]/script>" in text


def _small_fight() -> Fight:
    f = Fight(thread=replace(THREAD, title="Arena [url=https://evil.example]vinci[/url] <script>"))
    f.post("Hollow", pv=(52, 52), pe=(40, 40), stats={"Destrezza": 6, "Costituzione": 4},
           rolls=[R("1d12+6", 7, "Attacco [Artigli Affilati] (Hollow vs Quincy): (+2 [Raggio Corto], +2 [Bonus Arma] "
                                 "-1 [Mirato Arti] +6 [Destrezza])")])
    f.post("Quincy", pv=(48, 48), pe=(46, 46), stats={"Destrezza": 4, "Costituzione": 5},
           rolls=[R("1d24+6", 2, "Protezione (Quincy vs Hollow): (+2 [Bonus Protezione] +4 [Destrezza])")])
    return f


EXPECTED = """\
[b]Arbitro — Arena [[b][/b]url=https://evil.example]vinci[[b][/b]/url] <[b][/b]script>[/b]
[url=https://gdr.example.forumfree.it/?t=1]Discussione[/url] · regolamento guida · 2 post · \
[color=#c0392b][b]1 errore[/b][/color] · [color=#b9770e][b]0 avvisi[/b][/color] · 1 info
1 info non riportata qui ([url=https://arbitro.example/audit/7]rapporto completo[/url]).

[b]Errori e avvisi[/b]
[list]
[*][url=https://gdr.example.forumfree.it/?t=1#entry100]#1 Hollow[/url] · [color=#c0392b][b]errore[/b][/color] \
I modificatori elencati sommano a +9, ma il dado è stato lanciato con +6 (1d12+6). (atteso 9, trovato 6)
[/list]

[b]Stato finale[/b]
[list]
[*]Hollow: PV 52/52, PE 40/40
[*]Quincy: PV 48/48, PE 46/46
[/list]

[b]Prossimo turno: Hollow[/b]
[list]
[*]Nella Fase Iniziale scrivi il Calcolo dei Danni del colpo su Quincy (post 100).
[*]Nessun Attacco in arrivo: la Fase Difensiva si salta.
[/list]
Dadi pronti da incollare:
[code][dice=1d12+8]Attacco (Hollow vs Quincy): (+2 [Raggio Ottimale] +6 [Destrezza])[/dice]
[dice=1d15+8]Spostamento (Hollow): (+2 [Spostamento] +6 [Destrezza])[/dice][/code]
"""


def test_exact_bbcode_of_a_small_fight():
    text = render_bbcode(_small_fight().replay(), report_url="https://arbitro.example/audit/7")
    assert text == EXPECTED
    check_bbcode(text)


def test_a_code_box_cannot_be_closed_by_post_text():
    audit = _small_fight().replay()
    audit = replace(audit, next={**audit.next, "dice_tags": [{"label": "x", "tag": "[dice=1d12]A [/CODE][b]x[/b][/dice]"}]})
    text = render_bbcode(audit)
    assert "[code][dice=1d12]A ［/CODE][b]x[/b][/dice][/code]" in text
    check_bbcode(text)


def test_cli_bbcode_format(tmp_path, capsys):
    path = tmp_path / "history.json"
    import json

    path.write_text(json.dumps(_small_fight().history().to_dict()), encoding="utf-8")
    assert main(["audit", str(path), "--format", "bbcode"]) == 0
    out = capsys.readouterr().out
    check_bbcode(out)
    assert out == EXPECTED.replace(" ([url=https://arbitro.example/audit/7]rapporto completo[/url])", "")
    assert main(["audit", str(path), "--format", "bbcode", "--min-severity", "info"]) == 0
    out = capsys.readouterr().out
    assert "[b]Verdetti[/b]" in out and "non riportat" not in out
    # an info line says what happened, without atteso/trovato
    assert "[color=#2471a3][b]info[/b][/color] L'Attacco di Hollow [[b][/b]Artigli Affilati] colpisce Quincy" in out
    assert not re.search(r"\[b\]info\[/b\]\[/color\][^\n]*atteso", out)


def test_report_page_offers_the_bbcode(app, client):
    audit = bundled_audits()["hollow_vs_quincy/forumfree/ff-current"]
    rec = _stored(app, audit)
    page = client.get(f"/audit/{rec.id}").get_data(as_text=True)
    assert '<button type="button" id="copy-bbcode" class="copy" hidden>Copia come BBCode</button>' in page
    box = re.search(r'<textarea id="bbcode"[^>]*>(.*?)</textarea>', page, re.S)
    resp = client.get(f"/audit/{rec.id}.bbcode")
    assert resp.status_code == 200 and resp.mimetype == "text/plain" and "attachment" in resp.headers["Content-Disposition"]
    text = resp.get_data(as_text=True)
    assert box and htmlmod.unescape(box.group(1)) == text
    check_bbcode(text)
    assert f"[url=http://localhost/audit/{rec.id}]rapporto completo[/url]" in text
    assert f'href="/audit/{rec.id}.bbcode"' in page


def test_report_page_words_are_italian(app, client):
    rec = _stored(app, bundled_audits()["hollow_vs_quincy/forumfree/ff-current"])
    page = client.get(f"/audit/{rec.id}").get_data(as_text=True)
    codes = page[page.index('id="codici"'):page.index('id="combattenti"')]
    assert re.findall(r"<td>[✗⚠ℹ] (\w+)</td>", codes) and set(re.findall(r"<td>[✗⚠ℹ] (\w+)</td>", codes)) == {
        "errore", "avviso", "info"}
    assert set(re.findall(r'<span class="icon" title="(\w+)">', page)) == {"errore", "avviso", "info"}
    assert re.search(r'<span class="n">19</span> info</div>', page)
    visible = re.sub(r"<[^>]+>", " ", re.sub(r'class="[^"]*"|data-[a-z]+="[^"]*"', "", page))
    assert not re.search(r"\b(error|warning|nota|note)\b", visible)
    # an info verdict on the page shows no atteso/trovato either
    info = re.findall(r'<li class="verdict sev-info">(.*?)</li>', page, re.S)
    assert info and not any("atteso" in li for li in info)


@pytest.mark.browser
def test_copy_button_copies_the_bbcode(app, browser):
    rec = _stored(app, bundled_audits()["poteri_torre/forumfree/ff-current"])
    live = LiveServer(app).start()
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"], locale="it-IT")
    try:
        page = context.new_page()
        errors: list[str] = []  # a CSP refusal is a console error; the browser's own favicon request is not ours
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "404" not in m.text else None)
        missing: list[str] = []
        page.on("response", lambda r: missing.append(r.url) if r.status == 404 and "favicon" not in r.url else None)
        page.goto(f"{live.url}/audit/{rec.id}")
        button = page.locator("#copy-bbcode")
        assert button.is_visible() and button.inner_text() == "Copia come BBCode"
        button.click()
        page.wait_for_function("document.getElementById('copy-bbcode-status').textContent !== ''")
        assert page.locator("#copy-bbcode-status").inner_text() == "BBCode copiato: incollalo nel post."
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == page.locator("#bbcode").input_value() and copied.startswith("[b]Arbitro — ")
        assert "PF 0/5, PD 12/12, Slot 0/2" in copied
        assert not errors and not missing  # the CSP lets our script run
    finally:
        context.close()
        live.stop()
