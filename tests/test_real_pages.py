"""The real ForumFree pages of ../shared/real/forumfree-classic/: every post's id, author, date, quotes and edit
note, read exactly; two saved pages of one thread are one history that names its missing page."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from lxml import html as lxml_html

from scraper import parse_page, scrape
from scraper.crawl import missing_pages
from scraper.platforms.base import content_post_id

# The page URLs of SOURCES.md; s06 (a skin editor's page, no real URL) is given one of our own.
URLS = {
    "s00": "https://youtubepoopita.forumfree.it/?t=36772963",
    "s01": "https://youtubepoopita.forumfree.it/?t=41935930",
    "s02": "https://youtubepoopita.forumfree.it/?t=41935930&st=30",
    "s03": "https://youtubepoopita.forumfree.it/?t=59366178",
    "s04": "https://youtubepoopita.forumfree.it/?t=47381008",
    "s05": "https://youtubepoopita.forumfree.it/?t=57526963",
    "s06": "https://skinner.forumfree.it/?t=1",
}

# (thread id, title, page, pages, [(post id, author, date in the forum's zone (Europe/Rome, the default),
#  ((quote author, authors of the quotes nested in it), …), edited by, edited at)])
EXPECTED = {
    's00': ('36772963', 'Gwonam il mago', 1, 1, [
        ('303073210', '-Lucario93-', '2009-02-11T18:01:44+01:00', (), '-Lucario93-', '2009-02-12T18:40:00+01:00'),
        ('303118158', 'Pennaz91', '2009-02-11T20:27:00+01:00', (), None, None),
        ('303118610', '-Lucario93-', '2009-02-11T20:28:16+01:00', (), None, None),
        ('303165041', 'Felix96', '2009-02-11T22:53:08+01:00', (), None, None),
        ('303243084', '-Lucario93-', '2009-02-12T13:57:46+01:00', (), None, None),
        ('303255384', 'BB64', '2009-02-12T14:38:48+01:00', (('-Lucario93-', ()),), None, None),
        ('303315066', 'BB64', '2009-02-12T18:05:40+01:00', (('-Lucario93-', ()),), None, None),
        ('303389109', 'Morshu The Shopkeeper', '2009-02-12T22:00:51+01:00', (), None, None),
        ('303393560', 'Zebrick', '2009-02-12T22:15:25+01:00', (('-Lucario93-', ()),), None, None),
        ('303414918', 'Felix96', '2009-02-12T23:49:25+01:00', (('Zebrick', ('-Lucario93-',)),), None, None),
        ('306401743', 'geogeobananarap', '2009-02-25T22:46:20+01:00', (('-Lucario93-', ()),), None, None),
        ('404035284', 'Squadala Voyager', '2010-06-28T14:30:25+02:00', (), None, None),
    ]),
    's01': ('41935930', 'MA CHE DIAMINE BEVE KING HARKINIAN?', 1, 3, [
        ('342921374', 'Zannabluke', '2009-08-18T13:09:38+02:00', (), 'Zannabluke', '2009-08-20T15:31:00+02:00'),
        ('343116932', '·†°•.Mello-Kun.•°†·', '2009-08-19T16:04:51+02:00', (), None, None),
        ('343197714', 'SilverRathalos', '2009-08-20T03:01:18+02:00', (), None, None),
        ('343258476', 'Furio The Shopkeeper', '2009-08-20T14:12:22+02:00', (), None, None),
        ('343260467', 'Zebrick', '2009-08-20T14:22:00+02:00', (), None, None),
        ('343260630', 'Zannabluke', '2009-08-20T14:22:50+02:00', (('Furio The Shopkeeper', ()),), None, None),
        ('343261064', 'Furio The Shopkeeper', '2009-08-20T14:25:08+02:00', (('Zannabluke', ('Furio The Shopkeeper',)),), None, None),
        ('343262339', 'bassman85', '2009-08-20T14:31:55+02:00', (), None, None),
        ('343262776', 'Zannabluke', '2009-08-20T14:34:14+02:00', (('Furio The Shopkeeper', ('Zannabluke',)),), None, None),
        ('343263139', 'Furio The Shopkeeper', '2009-08-20T14:36:04+02:00', (('Zannabluke', ('Furio The Shopkeeper',)),), None, None),
        ('343263697', 'Zannabluke', '2009-08-20T14:38:47+02:00', (('Furio The Shopkeeper', ('Zannabluke',)),), None, None),
        ('343264341', 'Furio The Shopkeeper', '2009-08-20T14:42:14+02:00', (('Zannabluke', ('Furio The Shopkeeper',)),), None, None),
        ('343265284', 'Zannabluke', '2009-08-20T14:46:57+02:00', (('Furio The Shopkeeper', ('Zannabluke',)),), None, None),
        ('343265289', 'Zebrick', '2009-08-20T14:46:59+02:00', (('Furio The Shopkeeper', ('Zannabluke',)),), None, None),
        ('343266046', 'Furio The Shopkeeper', '2009-08-20T14:50:42+02:00', (('Zebrick', ('Furio The Shopkeeper',)),), None, None),
    ]),
    's02': ('41935930', 'MA CHE DIAMINE BEVE KING HARKINIAN?', 3, 3, [
        ('343345904', 'Wario_The King', '2009-08-20T22:59:41+02:00', (('Furio The Shopkeeper', ()),), None, None),
        ('343347916', 'Zebrick', '2009-08-20T23:15:10+02:00', (('Wario_The King', ('Furio The Shopkeeper',)),), None, None),
        ('343348685', '-Lucario93-', '2009-08-20T23:21:15+02:00', (), None, None),
        ('343726903', 'Pennaz91', '2009-08-23T12:25:53+02:00', (), None, None),
        ('343727671', 'Duke_Nume', '2009-08-23T12:30:46+02:00', (), None, None),
        ('343900997', 'The Man-Erg', '2009-08-24T12:29:54+02:00', (), 'The Man-Erg', '2009-08-25T14:36:00+02:00'),
        ('344135720', 'Zebrick', '2009-08-25T14:55:17+02:00', (('The Man-Erg', ()),), None, None),
        ('358258971', '~Zah Keeng!', '2009-11-02T01:57:39+01:00', (), None, None),
        ('358396901', 'Zebrick', '2009-11-02T18:39:20+01:00', (('~Zah Keeng!', ()),), None, None),
        ('358434363', 'PillsEater', '2009-11-02T20:56:31+01:00', (), None, None),
        ('358437695', 'Weegee64', '2009-11-02T21:07:30+01:00', (), None, None),
    ]),
    's03': ('59366178', 'Troll verde mangia umani', 1, 1, [
        ('483163023', 'karl90', '2011-12-18T23:50:12+01:00', (), None, None),
        ('483379257', 'ShadowChuppolo', '2011-12-20T20:50:08+01:00', (), None, None),
        ('483409729', 'karl90', '2011-12-21T03:56:16+01:00', (('Zoro the Gallade', ()),), None, None),
    ]),
    's04': ('47381008', 'La roba buona', 1, 1, [
        ('389567512', 'nocoldin', '2010-04-09T15:52:51+02:00', (), None, None),
        ('389573605', '°°the piton°°', '2010-04-09T16:20:34+02:00', (), None, None),
        ('389598060', 'Felix96', '2010-04-09T18:23:33+02:00', (), None, None),
        ('389603519', 'turbofa', '2010-04-09T18:48:53+02:00', (), None, None),
        ('389603547', 'The Scout', '2010-04-09T18:49:02+02:00', (), None, None),
    ]),
    's05': ('57526963', 'se non vuoi perdere tempo', 1, 1, [
        ('469026617', 'pokemoncolor32', '2011-08-31T19:46:14+02:00', (), None, None),
        ('469704086', 'Vikkio', '2011-09-05T17:07:56+02:00', (), None, None),
        ('470314366', 'romoloakastone', '2011-09-09T15:38:26+02:00', (), None, None),
        ('470423773', 'Vikkio', '2011-09-10T12:39:43+02:00', (), None, None),
    ]),
    's06': ('1', 'Nome Topic', 1, 1, [
        ('h4691a8aa', 'Nome Utente', '2009-08-31T06:00:00+02:00', ((None, ()),), '[...]', None),
    ]),
}


@pytest.fixture(scope="module")
def ff_real(real_dir):
    return real_dir / "forumfree-classic"


def _page(ff_real, name: str, url: str | None = None):
    return parse_page((ff_real / f"{name}.html").read_bytes(), url or URLS[name])


@pytest.mark.parametrize("name", sorted(URLS))
def test_every_post_read_exactly(ff_real, name):
    page = _page(ff_real, name)
    tid, title, number, count, posts = EXPECTED[name]
    assert (page.platform, page.skin) == ("forumfree", "ff-classic")
    assert (page.thread_id, page.title, page.page, page.page_count) == (tid, title, number, count)
    got = [(p.id, p.author, p.timestamp, tuple((q.author, q.inner) for q in p.quotes), p.edited_by, p.edited_at)
           for p in page.posts]
    assert got == posts
    assert all(p.page == number for p in page.posts)


def _sources_table(ff_real) -> dict[str, tuple[int, int, int]]:
    """posts, quote heads, edit notes per file, as SOURCES.md counts them (independent of the scraper)."""
    out = {}
    for line in (ff_real / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and re.fullmatch(r"`s\d\d\.html`", cells[0]):
            out[cells[0].strip("`")[:3]] = tuple(int(c) for c in cells[-3:])
    return out


def test_counts_agree_with_the_sources_table(ff_real):
    table = _sources_table(ff_real)
    assert sorted(table) == sorted(URLS)
    for name in URLS:
        page = _page(ff_real, name)
        heads = sum(1 + len(q.inner) for p in page.posts for q in p.quotes)
        edits = sum(1 for p in page.posts if p.edited_by)
        # the table counts the quote heads in signatures too (s02: a signature quotes a comment); a signature
        # is not the post, so neither are its quotes
        doc = lxml_html.fromstring((ff_real / f"{name}.html").read_bytes())
        in_signatures = len(doc.xpath("//*[contains(@class, 'signature')]//div[contains(@class, 'quote_top')]"))
        posts, table_heads, table_edits = table[name]
        assert (len(page.posts), heads + in_signatures, edits) == (posts, table_heads, table_edits), name


@pytest.mark.parametrize("name", sorted(URLS))
def test_nothing_of_the_page_chrome_is_a_post(ff_real, name):
    data = (ff_real / f"{name}.html").read_bytes()
    page = parse_page(data, URLS[name])
    doc = lxml_html.fromstring(data)
    # the page's own post tables, by the markup the issue documents: table#ee<id>, else td.post (the 2009 skin)
    ids = [t.get("id")[2:] for t in doc.xpath("//table[starts-with(@id, 'ee')]")]
    if ids:
        assert [p.id for p in page.posts] == ids
    else:
        assert len(page.posts) == len(doc.xpath("//td[contains(concat(' ', @class, ' '), ' post ')]"))
    for p in page.posts:
        assert p.author and not p.body.startswith(("|", "Inviato il")), (p.id, p.body[:40])
        assert "Inviato il" not in p.body and "Modificato da" not in p.body


@pytest.mark.parametrize("name", sorted(URLS))
def test_detected_without_being_told(ff_real, name):
    """`--platform auto` on a saved file (no forum host in its URL) picks the ForumFree adapter, not the generic one."""
    page = parse_page((ff_real / f"{name}.html").read_bytes(), f"file:///salvate/{name}.html")
    assert (page.platform, len(page.posts)) == ("forumfree", len(EXPECTED[name][4]))


def test_edit_note_keeps_the_names_dashes(ff_real):
    post = _page(ff_real, "s00").posts[0]
    assert (post.edited_by, post.edited_at) == ("-Lucario93-", "2009-02-12T18:40:00+01:00")
    assert "Modificato da" not in post.body


def test_quotes_are_not_the_posts_own_text(ff_real):
    post = next(p for p in _page(ff_real, "s01").posts if p.id == "343260630")
    assert post.body == "Please your omnipotence HAVE MERCY!"
    assert post.quotes[0].text.startswith("AAAAAAAAAAAAH, per festeggiare i miei 6666 messaggi")


def test_pages_one_and_three_are_one_history_that_names_page_two(ff_real):
    history = scrape([str(ff_real / "s02.html"), str(ff_real / "s01.html")])  # order given does not matter
    t = history.thread
    assert (t.thread_id, t.url, t.pages, t.pages_read) == (
        "41935930", "https://youtubepoopita.forumfree.it/?t=41935930", 3, (1, 3))
    assert missing_pages(history) == (2,)
    expected = [p[0] for p in EXPECTED["s01"][4]] + [p[0] for p in EXPECTED["s02"][4]]
    assert [p.id for p in history.posts] == expected
    assert [p.page for p in history.posts] == [1] * 15 + [3] * 11


def test_cli_warns_that_page_two_is_missing(ff_real, tmp_path):
    out = tmp_path / "h.json"
    run = subprocess.run([sys.executable, "-m", "server.cli", "scrape", str(ff_real / "s01.html"),
                          str(ff_real / "s02.html"), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "la pagina 2 manca" in run.stderr
    assert out.stat().st_size > 0


def test_english_interface_date_from_the_header_text(ff_real):
    """An English ForumFree writes "Posted on 3/4/2015, 18:58"; without the link's title the text gives the date."""
    data = (ff_real / "s00.html").read_bytes()
    data = re.sub(rb' title="11/2/2009, 18:01:44"><b>Inviato il:</b> 11/2/2009, 18:01',
                  b'><b>Posted on</b> 3/4/2015, 18:58', data, count=1)
    post = parse_page(data, URLS["s00"]).posts[0]
    assert (post.id, post.timestamp) == ("303073210", "2015-04-03T18:58:00+02:00")


def test_a_post_without_id_gets_a_stable_content_id(ff_real):
    post = _page(ff_real, "s06").posts[0]
    assert post.id == content_post_id("Nome Utente", "31/8/2009, 06:00", set()) == "h4691a8aa"
    assert [q.text for q in post.quotes] == ["Quotazione"]  # <!--QuoteBegin--> … div#quote
    assert "FIRMA UTENTE" not in post.body  # the signature is not the post


def test_the_rollers_stylesheet_fixes_the_structure_we_read(ff_real):
    """Every real page carries ForumFree's dice-roller CSS: the selectors the reader relies on are in it."""
    for name in ("s00", "s01", "s02", "s03", "s04", "s05"):
        css = (ff_real / f"{name}.html").read_text(encoding="utf-8")
        for rule in (".dice-roll summary", ".dice-roll dt em", ".dice-roll dd:not(:last-child):after {content: ' -'}",
                     ".dice-roll dt:after {content:':'}", ".dice-time", ".dice-roll .dice-low", ".dice-roll .dice-medium",
                     ".dice-roll .dice-high", ".dice-roll .dice-highest", "#dice-roll-popup", 'input[name="addition[]"]'):
            assert rule in css, (name, rule)


def test_the_classic_fixture_has_the_real_pages_skeleton_around_each_post(ff_real, fixtures_dir):
    """The classic-skin fixture is built element for element as the real page: the same tags, classes and id
    shapes around every post (the body, the profile details, the name and the buttons are content)."""
    from tests.skeleton import skeleton

    stop = {("div", "color"), ("div", "details"), ("div", "nick"), ("td", "right_bottom")}
    real = {skeleton(t, stop) for name in ("s00", "s01", "s02", "s03", "s04", "s05")
            for t in lxml_html.fromstring((ff_real / f"{name}.html").read_bytes()).xpath("//table[starts-with(@id, 'ee')]")}
    fixture = lxml_html.fromstring((fixtures_dir / "forumfree-classic/topic_61110022_st0.html").read_bytes())
    ours = [skeleton(t, stop) for t in fixture.xpath("//table[starts-with(@id, 'ee')]")]
    assert ours and all(s in real for s in ours)
    # and the page around them: the anchor before each post, the title, the pagination
    for path in ("//div[@class='anchor']/a[starts-with(@id, 'entry')]", "//h1[@class='mtitle']/b",
                 "//td[@class='navsub']/ul[@class='pages']/li/b"):
        assert fixture.xpath(path) and lxml_html.fromstring((ff_real / "s01.html").read_bytes()).xpath(path), path
