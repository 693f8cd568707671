"""Tamper evidence across readings of a live thread (issue #16): a roll changed, a post edited after its reply, a
post deleted — found by a refresh, with both versions, and kept by every later refresh and after a restart."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest
import requests

from tests.plugins.server import LiveServer

TID = 62345678
HOST = "bleach-gdr.forumfree.it"
PAGES = ("forumfree/topic_62345678_st0.html", "forumfree/topic_62345678_st15.html")
ROLL_BEFORE = b'<dd class="dice-high">11</dd><dd>+8</dd><dd>= 19</dd>'
ROLL_AFTER = b'<dd class="dice-high">12</dd><dd>+8</dd><dd>= 20</dd>'
SIGNATURE_600260 = b'    <div class="signature"><span style="font-size:9px">Seireitei_Ryo'
EDIT_NOTE = b'    <div class="edit">Edited by Seireitei_Ryo - Oggi, 10:30</div>\n'


@pytest.fixture()
def forum(fixtures_dir):
    from tests.forumserver import ForumServer

    srv = ForumServer(fixtures_dir, rewrite_hosts=[HOST])
    srv.start()
    paths = srv.add_thread("forumfree", TID, [fixtures_dir / p for p in PAGES])
    srv.paths = [f"/?t={TID}", paths[1]]  # page 1 as the crawler asks for it (the thread URL itself)
    srv.thread_url = srv.url(f"/?t={TID}")
    yield srv
    srv.stop()


def _audit(live: LiveServer, forum) -> dict:
    r = requests.post(f"{live.url}/api/v1/audits", json={"url": forum.thread_url, "ruleset": "guida"}, timeout=60)
    assert r.status_code == 200, r.text[:500]
    return r.json()


def _verdicts(doc: dict, code: str) -> list[dict]:
    return [v for p in doc["posts"] for v in p["verdicts"] if v["code"] == code] + \
        [v for v in doc.get("deleted_posts") or [] if v["code"] == code]


def _delete_post(page: bytes, post_id: str) -> bytes:
    m = re.search(rb'<li class="post[^"]*" id="ee' + post_id.encode() + rb'">.*?</li>\n', page, re.S)
    assert m, post_id
    return page[:m.start()] + page[m.end():]


def test_changed_roll_edit_and_deleted_post_are_kept_as_evidence(app, server_config, live_server, forum):
    app.config["ARBITRO"]["refresh_after"] = 0
    first = _audit(live_server, forum)
    assert not _verdicts(first, "dice.changed_after_publication") and "deleted_posts" not in first
    read_at = first["thread"]["fetched_at"]

    # (a) + (b): Quincy edits post 600260 after Hollow's reply (600270) and the roll reads 12 instead of 11
    page2 = forum.page(forum.paths[1])
    assert page2.count(ROLL_BEFORE) == 1 and page2.count(SIGNATURE_600260) == 1
    forum.set_page(forum.paths[1], page2.replace(ROLL_BEFORE, ROLL_AFTER).replace(
        SIGNATURE_600260, EDIT_NOTE + SIGNATURE_600260))
    second = _audit(live_server, forum)
    [dice] = _verdicts(second, "dice.changed_after_publication")
    assert dice["severity"] == "error" and dice["post"] == "600260" and dice["rule"] == "Arbitro › Prove di modifica"
    before, after = dice["details"]["before"], dice["details"]["after"]
    assert before["fetched_at"] == read_at and after["fetched_at"] == second["thread"]["fetched_at"]
    changed = [(b, a) for b, a in zip(before["rolls"], after["rolls"]) if b != a]
    assert [(b["faces"], b["total"], a["faces"], a["total"]) for b, a in changed] == [([11], 19, [12], 20)]
    assert dice["details"]["changes"] == [
        "tiro 2: era 1d12+8 = 19 (facce 11) «Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio Ottimale] +6 "
        "[Destrezza])», ora 1d12+8 = 20 (facce 12) «Attacco [Freccia Sacra] (Quincy vs Hollow): (+2 [Raggio "
        "Ottimale] +6 [Destrezza])»"]
    assert "I tiri del post sono cambiati dopo la pubblicazione" in dice["message"]
    [edit] = [v for v in _verdicts(second, "post.edited_after_reply") if v["post"] == "600260"]
    assert edit["severity"] == "warning" and edit["details"]["reply_post"] == "600270"
    assert not _verdicts(second, "schema.changed_after_publication")  # the schema did not change

    # (c): Hollow's post 600250 (the last of page 1) vanishes; the replay goes on without it and says which later
    # verdicts moved (Quincy's Registro no longer owes its damage)
    forum.set_page(forum.paths[0], _delete_post(forum.page(forum.paths[0]), "600250"))
    third = _audit(live_server, forum)
    assert "600250" not in [p["id"] for p in third["posts"]]
    [gone] = _verdicts(third, "post.deleted")
    assert gone["severity"] == "warning" and gone["post"] == "600250"
    copy = gone["details"]["copy"]
    was = next(p for p in second["posts"] if p["id"] == "600250")
    assert copy["author"] == was["author"] and copy["schema"] and copy["body"]
    assert gone["details"]["last_seen_at"] == second["thread"]["fetched_at"]
    moved = {m["post"]: m for m in gone["details"]["moved"]}
    assert "registro.missing_damage" in moved["600260"]["removed"]
    assert f"cambiano i verdetti di {len(moved)} post successiv" in gone["message"]
    assert len(_verdicts(third, "dice.changed_after_publication")) == 1  # evidence stays

    # a further refresh with a new reply: every piece of evidence is still there, once
    page = forum.page(forum.paths[1])
    m = re.search(rb'<li class="post last" id="ee600280">.*?</li>\n', page, re.S)
    reply = m.group(0).replace(b"600280", b"600290").replace(b'class="post last"', b'class="post"')
    forum.add_post(forum.paths[1], reply, before=b"</ul>\n</div>")
    fourth = _audit(live_server, forum)
    assert fourth["posts"][-1]["id"] == "600290"
    for code in ("dice.changed_after_publication", "post.deleted"):
        assert len(_verdicts(fourth, code)) == 1, code

    # a restart: a new service on the same database serves the same evidence, and its own replays keep it
    from server.app import create_app

    restarted = create_app(server_config)
    restarted.config["ARBITRO"]["refresh_after"] = 3600
    live2 = LiveServer(restarted).start()
    try:
        doc = requests.get(f"{live2.url}/api/v1/threads", params={"url": forum.thread_url}, timeout=30).json()
        assert doc["audit"] == fourth
        md = requests.get(f"{live2.url}/audit/{doc['thread_id']}.md", timeout=30).text  # replayed from the store
        assert "dice.changed\\_after\\_publication" in md and "## Post eliminati" in md and "post.deleted" in md
    finally:
        live2.stop()
        restarted.extensions["arbitro"].close()


def test_the_report_page_shows_both_versions_and_the_deleted_post(app, client):
    """The report page from a stored audit with the three kinds of evidence (the document the refresh stores)."""
    from engine import evidence as EV
    from tests.plugins.engine import Fight, R
    from tests.plugins.server import make_history
    from server.refresh import history_hash

    f = Fight()
    f.post("Ichigo", pv=50, stats={"Destrezza": 5}, rolls=[R("1d12+5", 7, "Attacco (Ichigo vs Rukia)")])
    f.post("Rukia", pv=50, stats={"Destrezza": 5}, rolls=[R("1d12+5", 4, "Schivata (Rukia vs Ichigo)")])
    h = f.history()
    before, gone = h.posts
    after = replace(before, rolls=(R("1d12+5", 11, "Attacco (Ichigo vs Rukia)"),))
    evidence = EV.changed_after_publication(before, "2026-12-01T10:00:00+00:00", after, "2026-12-02T10:00:00+00:00")
    evidence.append(EV.deleted(gone, "2026-12-01T10:00:00+00:00", "2026-12-02T10:00:00+00:00",
                               [{"post": "102", "added": ["outcome.hit"], "removed": []}]))
    from engine.core import replay

    audit = replay(replace(h, posts=(after,)), "guida", evidence=evidence)
    doc = audit.to_dict()
    assert [v["code"] for v in doc["deleted_posts"]] == ["post.deleted"]
    svc = app.extensions["arbitro"]
    rec = svc.storage.get_or_create_thread(h.thread.url, "guida")
    hist = make_history(1).to_dict()
    svc.storage.save_refresh(rec.id, history=hist, content_hash=history_hash(hist), audit=doc, replayed=1, pages=[],
                             log=[], evidence=[v.to_dict() for v in evidence])
    page = client.get(f"/audit/{rec.id}").get_data(as_text=True)
    assert "modificato dopo la pubblicazione" in page and 'class="changed"' in page
    assert "1d12+5 = 12 (facce 7)" in page and "1d12+5 = 16 (facce 11)" in page  # before | after
    assert "Post eliminati" in page and "Copia del post 101" in page and "Schivata (Rukia vs Ichigo)" in page
    assert "post 102: ora outcome.hit" in page
    assert svc.storage.evidence(rec.id) == [v.to_dict() for v in evidence]
