"""`arbitro inspect` run as a real subprocess: what each page shows, the config stanza of an unknown skin, errors."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from scraper.parse import parse_page
from scraper.platforms.config import load_config
from tests.test_platforms_generic import S01, real_ids, unknown_skin

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(command, *args, timeout=60):
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONIOENCODING": "utf-8"}
    env.pop("ARBITRO_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "server", command, *args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def test_fixture_page_text(fixtures_dir):
    proc = run_cli("inspect", str(fixtures_dir / "phpbb" / "viewtopic_t606_start10.html"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert "Riconoscimento: forumfree 0.00, forumotion 0.00, phpbb 0.95, generic 0.25" in out
    assert "Piattaforma: phpbb (stile prosilver)" in out
    assert "Discussione: 606 «Santuario — Elettra vs Orione», pagina 3 di 3, 5 messaggi per pagina" in out
    assert re.findall(r"^  \d+\. id (\d+)", out, re.M) == ["910210", "910220", "910230", "910240"]
    assert "  3. id 910230 · autore Custode (utente 5) · ruolo master" in out
    assert "Configurazione del forum suggerita" not in out  # a known skin needs none


def test_fixture_page_json_has_the_dice_as_read(fixtures_dir):
    proc = run_cli("inspect", "--format", "json", str(fixtures_dir / "phpbb" / "viewtopic_t312_start0.html"))
    assert proc.returncode == 0, proc.stderr
    [report] = json.loads(proc.stdout)
    page = parse_page((fixtures_dir / "phpbb" / "viewtopic_t312_start0.html").read_bytes(), report["url"])
    assert [p["id"] for p in report["posts"]] == [p.id for p in page.posts]
    rolled = next(p for p in report["posts"] if p["rolls"])
    roll = next(p for p in page.posts if p.rolls).rolls[0]
    assert rolled["rolls"][0] == {"expression": roll.expression, "faces": list(roll.faces), "total": roll.total,
                                  "label": roll.label, "source": roll.source, "authentic": roll.authentic,
                                  "problems": list(roll.problems)}
    assert report["config_stanza"] is None and report["error"] is None


def test_real_page(real_dir):
    proc = run_cli("inspect", "--format", "json", str(real_dir / "forumfree-classic" / "s01.html"))
    assert proc.returncode == 0, proc.stderr
    [report] = json.loads(proc.stdout)
    assert report["url"] == "https://youtubepoopita.forumfree.it/?t=41935930"
    assert [p["id"] for p in report["posts"]] == real_ids(real_dir, "s01")
    assert report["posts"][0]["author"] == "Zannabluke"


def test_unknown_skin_prints_a_stanza_that_reads_the_page_back(real_dir, tmp_path):
    page_file = tmp_path / "pagina.html"
    page_file.write_bytes(unknown_skin(real_dir, "s01"))
    proc = run_cli("inspect", str(page_file))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert "Piattaforma: generic" in out
    assert "     data: «18/8/2009, 13:09:38» → 2009-08-18T13:09:38+02:00" in out
    stanza = out[out.index("# configurazione suggerita"):]
    assert stanza.splitlines()[1:3] == ['[forums."gdr.example.net"]', 'platform = "generic"']
    forums = load_config(stanza)  # it loads
    cfg = forums.for_host("gdr.example.net")
    assert cfg.platform == "generic" and set(cfg.selectors) == {"post", "author", "date", "body"}
    # and with it `arbitro scrape` reads the page with the adapter it names, the same posts
    (tmp_path / "forums.toml").write_text(stanza, encoding="utf-8")
    scraped = run_cli("scrape", "--config", str(tmp_path / "forums.toml"), str(page_file))
    assert scraped.returncode == 0, scraped.stderr
    history = json.loads(scraped.stdout)
    assert history["thread"]["platform"] == "generic"
    assert [(p["id"], p["author"], p["timestamp"]) for p in history["posts"]] == [
        (p.id, p.author, p.timestamp) for p in parse_page(page_file.read_bytes(), S01).posts]
    # read through the config in-process too: the page's own ids
    configured = parse_page(page_file.read_bytes(), S01, config=forums)
    assert [p.id for p in configured.posts] == real_ids(real_dir, "s01")


def test_nothing_read_is_said_and_exits_2(tmp_path):
    chrome = tmp_path / "menu.html"
    chrome.write_bytes(b"<html><body><h1>Forum</h1><p>Benvenuto</p></body></html>")
    proc = run_cli("inspect", str(chrome))
    assert proc.returncode == 2
    out = proc.stdout.decode("utf-8")
    assert "Nessun messaggio letto [not_a_thread]" in out
    assert '# post = "…"  # non trovato nella pagina' in out
    assert load_config(out[out.index("# configurazione suggerita"):]).default.platform == "generic"
    assert b"[not_a_thread]" in proc.stderr


def test_url_through_the_local_forum(local_forum):
    local_forum.load_forum("bleach-gdr.forumfree.it")
    proc = run_cli("inspect", local_forum.url("/?t=62345678"), "--allow-host", "127.0.0.1", "--allow-private", "127.0.0.1:*")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert "Piattaforma: forumfree" in out
    assert "Messaggi: 15" in out and "  1. id 600110 · autore Niccolò" in out


def test_host_not_allowed():
    proc = run_cli("inspect", "https://gdr.example.org/viewtopic.php?t=1")
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode("utf-8").startswith("arbitro inspect: errore [host_not_allowed]:")
    assert "--allow-host" in proc.stderr.decode("utf-8")


def test_missing_file_is_not_found_as_in_scrape_and_audit(tmp_path):
    proc = run_cli("inspect", str(tmp_path / "manca.html"))
    assert proc.returncode == 2 and b"[not_found]" in proc.stderr


def test_a_huge_saved_file_is_refused_not_read(tmp_path):
    """A saved page beyond the fetcher's size cap is a named error, as a fetched one is: never loaded whole."""
    import subprocess
    import sys

    big = tmp_path / "enorme.html"
    with big.open("wb") as fh:
        fh.truncate(64 * 1024 * 1024)  # sparse: 64 MB of nothing
    run = subprocess.run([sys.executable, "-m", "server.cli", "inspect", str(big)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "supera il limite" in run.stderr and "enorme.html" in run.stderr
