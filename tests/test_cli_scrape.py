"""`arbitro scrape` run as a real subprocess: same history as scrape(), clean errors, progress only on a TTY."""
from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

import pytest

from scraper.crawl import scrape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FF = "bleach-gdr.forumfree.it"


def run_cli(*args, cwd=None, timeout=60, stderr=subprocess.PIPE):
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONIOENCODING": "utf-8"}
    env.pop("ARBITRO_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "server", "scrape", *args], cwd=cwd or ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=stderr, timeout=timeout)


def _without_fetch_time(doc):
    doc = json.loads(json.dumps(doc))
    doc["thread"]["fetched_at"] = None
    return doc


def test_saved_files_print_the_same_history_as_scrape(fixtures_dir):
    files = [str(fixtures_dir / "forumotion" / "phpbb3" / n) for n in ("t87p0.html", "t87p20.html")]
    proc = run_cli(*files)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    printed = json.loads(proc.stdout.decode("utf-8"))
    assert printed["format"] == "arbitro.history/1"
    assert _without_fetch_time(printed) == _without_fetch_time(scrape(files).to_dict())
    assert "Quincy" in proc.stdout.decode("utf-8")  # ensure_ascii off: accents and names as they are
    assert proc.stdout.startswith(b'{\n  "thread"')  # indent 2


def test_local_url_prints_the_same_history_as_scrape(local_forum, local_fetcher, tmp_path):
    local_forum.load_forum(FF)
    url = local_forum.url("/?t=62345678")
    proc = run_cli(url, "--allow-host", "127.0.0.1", "--allow-private", "127.0.0.1:*", "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""  # not a terminal: no progress bar
    expected = scrape([url], fetcher=local_fetcher).to_dict()
    printed = json.loads(proc.stdout)
    assert _without_fetch_time(printed) == _without_fetch_time(expected)
    assert set(printed["registry"]["characters"]) == {"Hollow", "Quincy"}
    assert len(printed["posts"]) == 18


def test_output_file_and_registry(local_forum, fixtures_dir, tmp_path):
    local_forum.load_forum(FF)
    out = tmp_path / "storia.json"
    registry = fixtures_dir / "registry" / "hollow_vs_quincy.toml"
    proc = run_cli(local_forum.url("/?t=62345678"), "--allow-host", "127.0.0.1", "--allow-private", "127.0.0.1:*", "--no-cache",
                   "--no-sheets", "--registry", str(registry), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert str(registry) in doc["registry"]["sources"]
    sheet_requests = [r.path for r in local_forum.requests_log if "7000010" in r.path]
    assert sheet_requests == []  # --no-sheets


def test_progress_bar_drawn_on_a_terminal(local_forum, tmp_path):
    local_forum.load_forum(FF)
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "server", "scrape", local_forum.url("/?t=62345678"), "--allow-host", "127.0.0.1",
             "--allow-private", "127.0.0.1:*", "--no-cache", "-o", str(tmp_path / "h.json")],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        slave = None
        seen = b""
        while True:
            ready, _, _ = select.select([master], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(timeout=30) == 0
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)
    text = seen.decode("utf-8", "replace")
    assert "] 1/2 " in text and "] 2/2 " in text and "#" in text
    assert (tmp_path / "h.json").exists()


@pytest.mark.parametrize("args,status,code", [
    (["https://gdr.example.org/viewtopic.php?t=1"], 2, "host_not_allowed"),
    (["/non/esiste/pagina.html"], 2, "not_found"),
    (["ftp://bleach-gdr.forumfree.it/x"], 2, "host_not_allowed"),
])
def test_bad_input_is_one_line_and_exit_2(args, status, code):
    proc = run_cli(*args)
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == status
    assert err.count("\n") == 1 and f"[{code}]" in err and "Traceback" not in err
    assert proc.stdout == b""


def test_not_a_thread_is_bad_input(tmp_path):
    page = tmp_path / "vuota.html"
    page.write_text("<html><body><p>Nessun messaggio qui.</p></body></html>", encoding="utf-8")
    proc = run_cli(str(page))
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and "Traceback" not in err and err.startswith("arbitro scrape: errore [")


def test_fetch_failure_is_exit_3(local_forum, tmp_path):
    proc = run_cli(local_forum.url("/?t=404404"), "--allow-host", "127.0.0.1", "--allow-private", "127.0.0.1:*", "--no-cache")
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 3
    assert "[fetch_failed]" in err and "404" in err and err.count("\n") == 1
    assert proc.stdout == b""


def test_robots_block_is_exit_3(local_forum):
    local_forum.load_forum(FF)
    local_forum.set_robots("User-agent: *\nDisallow: /\n")
    proc = run_cli(local_forum.url("/?t=62345678"), "--allow-host", "127.0.0.1", "--allow-private", "127.0.0.1:*", "--no-cache")
    assert proc.returncode == 3 and b"[blocked_by_robots]" in proc.stderr


def test_private_address_refused_without_allow_private(local_forum):
    local_forum.load_forum(FF)
    proc = run_cli(local_forum.url("/?t=62345678"), "--allow-host", "127.0.0.1", "--no-cache")
    assert proc.returncode == 2 and b"[host_not_allowed]" in proc.stderr
    assert local_forum.requests_log == []


def test_refusal_hint_names_the_right_option(local_forum):
    local_forum.load_forum(FF)
    url = local_forum.url("/?t=62345678")
    not_listed = run_cli(url, "--no-cache").stderr.decode("utf-8")
    private = run_cli(url, "--allow-host", "127.0.0.1", "--no-cache").stderr.decode("utf-8")
    assert "--allow-host" in not_listed and "--allow-private" not in not_listed
    assert "--allow-private" in private and "127.0.0.1" in private


def test_forum_config_file_is_applied(fixtures_dir, tmp_path):
    config = tmp_path / "forum.toml"
    config.write_text('[forums."arena-shinigami.forumattivo.com"]\nmasters = ["Kurogane"]\n', encoding="utf-8")
    page = str(fixtures_dir / "forumotion" / "phpbb3" / "t87p0.html")
    plain = json.loads(run_cli(page).stdout)
    configured = json.loads(run_cli(page, "--config", str(config)).stdout)
    roles = lambda doc: {p["author"]: p["role"] for p in doc["posts"]}  # noqa: E731
    assert roles(plain)["Kurogane"] == "player" and roles(configured)["Kurogane"] == "master"


def test_bad_forum_config_is_exit_2(fixtures_dir, tmp_path):
    config = tmp_path / "forum.toml"
    config.write_text('[forums."x"]\nplatfrom = "phpbb"\n', encoding="utf-8")
    proc = run_cli(str(fixtures_dir / "forumotion" / "phpbb3" / "t87p0.html"), "--config", str(config))
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and "[forum_config]" in err and "platfrom" in err and "Traceback" not in err


# --- saved pages: --saved-at and missing pages --------------------------------------------------------

def test_saved_at_gives_html_and_api_json_the_same_dates(fixtures_dir):
    times = {}
    for name in ("topic_62345678_st15.html", "api_62345678_st15.json"):
        proc = run_cli(str(fixtures_dir / "forumfree" / name), "--saved-at", "2026-11-09T12:00+01:00")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        times[name] = {p["id"]: p["timestamp"] for p in doc["posts"]}
        assert doc["thread"]["fetched_at"] in ("2026-11-09T11:00:00Z", "2026-11-09T11:00:00+00:00")
    assert times["topic_62345678_st15.html"] == times["api_62345678_st15.json"]
    assert times["topic_62345678_st15.html"]["600270"] == "2026-11-08T21:40:00+01:00"  # "Ieri, 21:40"


def test_only_page_two_saved_warns_on_stderr(fixtures_dir, tmp_path):
    out = tmp_path / "storia.json"
    proc = run_cli(str(fixtures_dir / "forumfree" / "topic_62345678_st15.html"), "--saved-at", "2026-11-09",
                   "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode("utf-8")
    assert err.count("\n") == 1 and err.startswith("arbitro scrape: attenzione: cronologia incompleta")
    assert "la pagina 1 manca" in err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["thread"]["pages"] == 2 and doc["thread"]["pages_read"] == [2] and len(doc["posts"]) == 3


@pytest.mark.parametrize("value", ["ieri", "2026-11-31", "9/11/2026"])
def test_bad_saved_at_is_one_line_and_exit_2(fixtures_dir, value):
    proc = run_cli(str(fixtures_dir / "forumfree" / "topic_62345678_st15.html"), "--saved-at", value)
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and proc.stdout == b""
    assert err.count("\n") == 1 and "[bad_saved_at]" in err and "Traceback" not in err


def test_saved_at_with_a_url_is_refused(local_forum):
    local_forum.load_forum(FF)
    proc = run_cli(local_forum.url("/?t=62345678"), "--allow-host", "127.0.0.1", "--allow-private", "127.0.0.1:*", "--no-cache",
                   "--saved-at", "2026-11-09")
    assert proc.returncode == 2 and proc.stdout == b""
    assert "[bad_saved_at]" in proc.stderr.decode("utf-8")
    assert [r for r in local_forum.requests_log if r.path != "/robots.txt"] == []
