"""The forum config picks the ruleset (per forum, per section) for the API and `arbitro audit` when nobody names one."""
from __future__ import annotations

import json

import pytest
import requests


TID = 62345678
HOST = "bleach-gdr.forumfree.it"
PAGES = ["forumfree/topic_62345678_st0.html", "forumfree/topic_62345678_st15.html"]
SECTION = "9988"  # the section id printed on the fixture thread's pages (its breadcrumb link ?f=9988)


@pytest.fixture()
def ff(fixtures_dir):
    from tests.forumserver import ForumServer

    srv = ForumServer(fixtures_dir, rewrite_hosts=[HOST])
    srv.start()
    srv.add_thread("forumfree", TID, [fixtures_dir / p for p in PAGES])
    srv.thread_url = srv.url(f"/?t={TID}")
    yield srv
    srv.stop()


def _app(server_config, tmp_path, toml: str):
    from server.app import create_app

    path = tmp_path / "forums.toml"
    path.write_text(toml, encoding="utf-8")
    return create_app({**server_config, "forum_config": str(path)})


@pytest.fixture()
def make_app(server_config, tmp_path):
    apps = []

    def make(toml: str):
        app = _app(server_config, tmp_path, toml)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["arbitro"].close()


def test_url_mode_forum_ruleset(make_app, ff):
    client = make_app('[forums."127.0.0.1"]\nruleset = "cosmo"\n').test_client()
    r = client.post("/api/v1/audits", json={"url": ff.thread_url})
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    assert r.get_json()["ruleset"] == "cosmo"
    assert r.headers["X-Arbitro-Ruleset"] == "cosmo"
    # readers asking by URL get that audit, and a named ruleset still wins
    assert client.get("/api/v1/threads", query_string={"url": ff.thread_url}).get_json()["ruleset"] == "cosmo"
    r = client.post("/api/v1/audits", json={"url": ff.thread_url, "ruleset": "guida"})
    assert r.get_json()["ruleset"] == "guida"
    # readers keep getting the forum's ruleset, not whichever audit of the URL was made last
    assert client.get("/api/v1/threads", query_string={"url": ff.thread_url}).get_json()["ruleset"] == "cosmo"
    assert client.get("/api/v1/threads", query_string={"url": ff.thread_url, "ruleset": "guida"}
                      ).get_json()["ruleset"] == "guida"


def test_url_mode_section_read_from_the_page(make_app, ff):
    app = make_app(f'[forums."127.0.0.1"]\nruleset = "guida"\n[forums."127.0.0.1".sections]\n"{SECTION}" = "cosmo"\n'
                   '"4411" = "poteri"\n')
    r = app.test_client().post("/api/v1/audits", json={"url": ff.thread_url})
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    assert r.get_json()["ruleset"] == "cosmo"
    # the section is read once: asking again does not fetch page 1 an extra time
    before = len(ff.log_for(f"/?t={TID}"))
    app.extensions["arbitro"].refresher.ruleset_for_url(ff.thread_url, probe=True)
    assert len(ff.log_for(f"/?t={TID}")) == before


def test_section_in_the_url_wins_over_the_forum(make_app, ff):
    # phpBB-style `f=` in the thread URL names the section without reading the page
    app = make_app('[forums."127.0.0.1"]\nruleset = "guida"\n[forums."127.0.0.1".sections]\n"7" = "cosmo"\n')
    url = ff.url(f"/?f=7&t={TID}")
    r = app.test_client().post("/api/v1/audits", json={"url": url})
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    assert r.get_json()["ruleset"] == "cosmo"


def test_other_forums_fall_back_to_the_default(make_app, ff, server_config):
    app = make_app('[forums."gdr.example.net"]\nruleset = "cosmo"\n')
    r = app.test_client().post("/api/v1/audits", json={"url": ff.thread_url})
    assert r.status_code == 200
    assert r.get_json()["ruleset"] == server_config["default_ruleset"]


def test_pages_mode_uses_host_and_section(make_app, fixtures_dir):
    pages = [(fixtures_dir / p).read_bytes().decode("utf-8", "replace") for p in PAGES[:1]]
    client = make_app(f'[forums."{HOST}"]\nruleset = "guida"\n[forums."{HOST}".sections]\n"{SECTION}" = "cosmo"\n').test_client()
    r = client.post("/api/v1/audits", json={"pages": pages})
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    assert r.get_json()["ruleset"] == "cosmo"
    r = client.post("/api/v1/audits", json={"pages": pages, "ruleset": "guida"})
    assert r.get_json()["ruleset"] == "guida"


def test_history_mode_uses_the_thread_host(make_app, history_factory):
    client = make_app('[forums."gdr.forumfree.it"]\nruleset = "cosmo"\n').test_client()
    r = client.post("/api/v1/audits", json={"history": history_factory(4).to_dict()})
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    assert r.get_json()["ruleset"] == "cosmo"


def test_threads_create_uses_the_forum_config_over_real_http(make_app, ff):
    from tests.plugins.server import LiveServer

    live = LiveServer(make_app('[forums."127.0.0.1"]\nruleset = "cosmo"\n')).start()
    try:
        r = requests.get(f"{live.url}/api/v1/threads", params={"url": ff.thread_url, "create": "1"}, timeout=30)
    finally:
        live.stop()
    assert r.status_code == 200, r.text[:300]
    assert r.json()["ruleset"] == "cosmo" and r.json()["audit"]["ruleset"] == "cosmo"


@pytest.mark.parametrize("toml,needle", [
    ('[forums."127.0.0.1"]\nruleset = "nessuno"\n', "regolamento sconosciuto"),
    ('[forums."127.0.0.1"]\ncolore = "rosso"\n', "chiave sconosciuta"),
])
def test_bad_forum_config_fails_at_start(server_config, tmp_path, toml, needle):
    from server.config import ConfigError

    with pytest.raises(ConfigError, match=needle):
        _app(server_config, tmp_path, toml)


def test_forum_config_path_relative_to_the_config_file(tmp_path):
    from server.config import load_config

    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "arbitro.toml").write_text('forum_config = "forums.toml"\n')
    cfg = load_config(config_file=tmp_path / "conf" / "arbitro.toml", environ={})
    assert cfg["forum_config"] == str(tmp_path / "conf" / "forums.toml")
    cfg = load_config(environ={"ARBITRO_FORUM_CONFIG": "/etc/arbitro/forums.toml"})
    assert cfg["forum_config"] == "/etc/arbitro/forums.toml"
    assert load_config(environ={})["forum_config"] == ""


# --- arbitro audit ---------------------------------------------------------------------------------------

def _cli_json(capsys, argv) -> dict:
    from server.cli import main

    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_cli_saved_pages_pick_the_section_ruleset(tmp_path, fixtures_dir, capsys):
    cfg = tmp_path / "forums.toml"
    cfg.write_text(f'[forums."{HOST}"]\nruleset = "guida"\n[forums."{HOST}".sections]\n"{SECTION}" = "cosmo"\n')
    pages = [str(fixtures_dir / p) for p in PAGES]
    assert _cli_json(capsys, ["audit", *pages, "--format", "json", "--forum-config", str(cfg)])["ruleset"] == "cosmo"
    # --ruleset wins; without a forum config the default is guida
    assert _cli_json(capsys, ["audit", *pages, "--format", "json", "--forum-config", str(cfg),
                              "--ruleset", "guida"])["ruleset"] == "guida"
    assert _cli_json(capsys, ["audit", *pages, "--format", "json"])["ruleset"] == "guida"


def test_cli_url_picks_the_forum_ruleset(tmp_path, ff, capsys):
    cfg = tmp_path / "forums.toml"
    cfg.write_text('[forums."127.0.0.1"]\n[forums."127.0.0.1".sections]\n"9988" = "cosmo"\n')
    doc = _cli_json(capsys, ["audit", ff.thread_url, "--format", "json", "--forum-config", str(cfg),
                             "--allow-host", "127.0.0.1", "--allow-private", "127.0.0.1:*", "--no-sheets"])
    assert doc["ruleset"] == "cosmo"


def test_cli_bad_forum_config_is_a_named_error(tmp_path, fixtures_dir, capsys):
    from server.cli import main

    cfg = tmp_path / "forums.toml"
    cfg.write_text('[forums."x"]\nplatform = "nessuna"\n')
    assert main(["audit", str(fixtures_dir / PAGES[0]), "--forum-config", str(cfg)]) == 2
    assert "forum_config" in capsys.readouterr().err
