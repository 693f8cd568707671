"""Forumotion fixture pages against Forumotion's own templates: the element/class/id skeleton of each post is the
template's post loop (Etana/template viewtopic_body.tpl, copied in ../shared/real/templates/) filled with the same
values; the text is not compared."""
from __future__ import annotations

import sys

import pytest
from lxml import html as lxml_html

from tests.plugins.common import FIXTURES
from tests.skeleton import skeleton

sys.path.insert(0, str(FIXTURES))
import gen_forumotion  # noqa: E402
from gen_common import Site, load_story  # noqa: E402

# skin → (story, site) as fixtures/make_fixtures.py renders them
SITES = {
    "phpbb2": ("duel_short", Site("forumotion", "phpbb2", "tempio-kenshi.forumattivo.com", "Tempio di Kenshi", 5)),
    "phpbb3": ("hollow_vs_quincy", Site("forumotion", "phpbb3", "arena-shinigami.forumattivo.com", "Arena Shinigami", 20)),
    "invision": ("duel_short", Site("forumotion", "invision", "ninja-gdr.forumattivo.it", "Ninja GdR", 5)),
    "modernbb": ("duel_short", Site("forumotion", "modernbb", "gilda-arcana.forumattivo.com", "Gilda Arcana", 5)),
}


def real_loop(real_dir, skin: str) -> str:
    path = real_dir / "templates" / f"forumotion-{gen_forumotion.TEMPLATE_DIR[skin]}" / "viewtopic_body.tpl"
    text = path.read_text(encoding="utf-8")
    start = text.index("<!-- BEGIN postrow -->")
    end = text.index("<!-- END postrow -->") + len("<!-- END postrow -->")
    return text[start:end]


def fragment(markup: str, skin: str) -> list[tuple]:
    # table rows parse only inside a table
    wrap = ("<table>", "</table>") if skin == "phpbb2" else ("<div>", "</div>")
    root = lxml_html.fragment_fromstring(wrap[0] + markup + wrap[1])
    return [skeleton(c) for c in root if isinstance(c.tag, str)]


def page_posts(data: bytes, first_id: str, count: int) -> list[tuple]:
    """The skeletons of the page's elements from the post `p<first_id>` on, `count` of them (siblings)."""
    doc = lxml_html.fromstring(data)
    el = doc.get_element_by_id(f"p{first_id}")
    out = []
    while el is not None and len(out) < count:
        if isinstance(el.tag, str):
            out.append(skeleton(el))
        el = el.getnext()
    return out


@pytest.mark.parametrize("skin", sorted(SITES))
def test_each_post_follows_the_template_loop(real_dir, skin):
    story_name, site = SITES[skin]
    story = load_story(story_name)
    real = real_loop(real_dir, skin)
    pages = gen_forumotion.page_post_values(story, site)
    files = {path: data for path, _, data, _ in gen_forumotion.render_forumotion(story, site)}
    committed = sorted(p for p in (FIXTURES / "forumotion" / skin).iterdir()
                       if p.name.startswith(f"t{story['thread']['forumotion_tid']}p"))
    assert [f"forumotion/{skin}/{p.name}" for p in committed] == sorted(files)
    checked = 0
    for (path, data), rows in zip(sorted(files.items(), key=lambda kv: int(kv[0].rsplit("p", 1)[1][:-5])), pages):
        assert (FIXTURES / path).read_bytes() == data
        for values, blocks in rows:
            want = fragment(gen_forumotion.fill(real, values, blocks), skin)
            assert want and want[0][0][2] == "p#"  # the loop starts at the post's own element
            assert page_posts(data, values["U_POST_ID"], len(want)) == want, (path, values["U_POST_ID"])
            checked += 1
    assert checked == sum(len(r) for r in pages) > 4


@pytest.mark.parametrize("skin,ancestors", [
    ("phpbb2", ["table.forumline", "td", "tr", "tbody.", "table.three-col", "div#content-container", "div#page-body",
                "td.bodyline", "tr", "table.bodylinewidth", "body"]),
    ("phpbb3", ["div#main-content", "div#main", "div#content", "div#container", "div#wrapper", "div#outer-wrapper",
                "div#content-container", "div#page-body", "div#wrap", "div.conteneur_container_IE",
                "div.conteneur_layout_IE", "div.conteneur_minwidth_IE", "body#phpbb"]),
    ("invision", ["div.borderwrap", "div#main-content", "div#main", "div#content", "div#container", "div#wrapper",
                  "div#outer-wrapper", "div#content-container", "div#ipbwrapper", "div.container_IE", "div.layout_IE",
                  "div.minwidth_IE", "body"]),
    ("modernbb", ["div#main-content", "div#main", "div#content-main", "div#container", "div#wrapper",
                  "div#outer-wrapper", "div#content-container", "div#page-body", "div#wrap",
                  "div.conteneur_container_IE", "div.conteneur_layout_IE", "div.conteneur_minwidth_IE", "body#modernbb"]),
])
def test_the_loop_sits_where_the_templates_put_it(real_dir, skin, ancestors):
    """The post's ancestors are the header's containers (overall_header.tpl) and the topic's (viewtopic_body.tpl),
    each named in those templates in the same order."""
    story_name, site = SITES[skin]
    path, _, data, _ = gen_forumotion.render_forumotion(load_story(story_name), site)[0]
    doc = lxml_html.fromstring(data)
    post = doc.xpath("//*[starts-with(@id, 'p')][contains(@class, 'post--')]")[0]
    chain = []
    for a in post.iterancestors():
        if a.tag == "html":
            break
        chain.append(a.tag + (f"#{a.get('id')}" if a.get("id") else f".{(a.get('class') or '').split(' ')[0]}"
                                if a.get("class") or a.tag == "tbody" else ""))
    assert chain == ancestors
    folder = real_dir / "templates" / f"forumotion-{gen_forumotion.TEMPLATE_DIR[skin]}"
    text = (folder / "overall_header.tpl").read_text(encoding="utf-8") + (folder / "viewtopic_body.tpl").read_text(
        encoding="utf-8").split("<!-- BEGIN postrow -->")[0]
    at = 0
    for step in reversed(ancestors):
        tag, _, name = step.replace("#", " ").replace(".", " ").partition(" ")
        if not name:
            continue
        # the header names the two containers by variable: {ID_CONTENT_CONTAINER} and {ID_LEFT}
        needle = {"content-container": "{ID_CONTENT_CONTAINER}"}.get(name, name)
        found = text.find(needle, at)
        assert found >= 0, (skin, step)
        at = found
