"""`arbitro serve` and `arbitro demo` as real processes, the demo page in Chromium, and the config layers."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent


def _start(args: list[str], env: dict[str, str] | None = None, timeout: float = 60) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "server", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    deadline = time.monotonic() + timeout
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                raise AssertionError(f"exited {proc.returncode}: {''.join(lines)} {proc.stderr.read()}")
            continue
        lines.append(line)
        m = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise AssertionError("no URL printed: " + "".join(lines))


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_serve_with_config_file(tmp_path):
    cfg = tmp_path / "arbitro.toml"
    cfg.write_text('[arbitro]\ndatabase = "dati/a.sqlite3"\nrate_limit_audits = 7\nsecret_key = "non-dirlo"\n',
                   encoding="utf-8")
    proc, url = _start(["serve", "--port", "0", "--config", str(cfg)], env={"ARBITRO_REFRESH_AFTER": "12"})
    try:
        r = requests.get(f"{url}/healthz", timeout=10)
        assert r.status_code == 200 and r.json() == {"status": "ok"}
        assert r.headers["Server"] == "Arbitro"  # waitress, not the Flask dev server
        assert (tmp_path / "dati" / "a.sqlite3").exists()  # relative to the config file
        assert "non-dirlo" not in requests.get(f"{url}/api/v1/rulesets", timeout=10).text
    finally:
        _stop(proc)
    assert "non-dirlo" not in proc.stderr.read()


def test_serve_bad_config_is_a_named_error(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("colore = 'rosso'\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "server", "serve", "--config", str(cfg)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "colore" in r.stderr and "Traceback" not in r.stderr


def test_config_layers(tmp_path):
    from server.config import ConfigError, load_config

    f = tmp_path / "c.toml"
    f.write_text('refresh_after = 30\nallowed_hosts = ["a.it"]\ncors_origins = ["https://a.it"]\n', encoding="utf-8")
    cfg = load_config({"rate_limit_audits": 3}, environ={"ARBITRO_CONFIG": str(f), "ARBITRO_REFRESH_AFTER": "45",
                                                         "ARBITRO_ALLOWED_HOSTS": "b.it, *.c.it",
                                                         "ARBITRO_PRIVATE_ALLOWLIST": "127.0.0.1:8123",
                                                         "OTHER": "x"})
    assert cfg["refresh_after"] == 45.0  # env beats file
    assert cfg["allowed_hosts"] == ["b.it", "*.c.it"] and cfg["private_allowlist"] == ["127.0.0.1:8123"]
    assert cfg["cors_origins"] == ["https://a.it"]  # from the file
    assert cfg["rate_limit_audits"] == 3  # explicit beats all
    with pytest.raises(ConfigError, match="refresh_after"):
        load_config(environ={"ARBITRO_REFRESH_AFTER": "presto"})
    with pytest.raises(ConfigError, match="nope"):
        load_config({"nope": 1}, environ={})


def test_demo_command_prints_url_and_serves_the_demo():
    proc, url = _start(["demo", "--port", "0"])
    try:
        r = requests.get(f"{url}/demo", timeout=10)
        assert r.status_code == 200 and r.url.startswith(f"{url}/demo?t=")
        assert "/userscript/arbitro.user.js" in r.text and "/demo/gm-shim.js" in r.text
        tid = re.search(r"/audit/(\d+)", r.text).group(1)
        doc = requests.get(f"{url}/api/v1/threads/{tid}", timeout=10).json()
        assert doc["audit"]["format"] == "arbitro.audit/1" and len(doc["audit"]["posts"]) > 10
        assert requests.get(f"{url}/audit/{tid}", timeout=10).status_code == 200
    finally:
        _stop(proc)


@pytest.mark.browser
def test_demo_page_shows_the_overlay(page, build_dir, tmp_path):
    if not (ROOT / "userscript" / "dist" / "arbitro.user.js").exists():
        pytest.fail("userscript/dist/arbitro.user.js missing: run python3 userscript/build.py")
    from server.app import create_app
    from server.demo import seed_demo
    from tests.plugins.server import LiveServer

    app = create_app({"database": str(tmp_path / "d.sqlite3"), "cache_dir": str(tmp_path / "c"),
                      "refresh_after": 1e9, "demo": True})
    info = seed_demo(app)
    live = LiveServer(app).start()
    try:
        page.goto(f"{live.url}/demo")
        # a locator wait (Playwright's own world): the demo page's CSP allows no string evaluation in the page
        page.locator("[data-arbitro]").first.wait_for(state="attached", timeout=15_000)
        audit = requests.get(f"{live.url}/api/v1/threads/{info['thread_id']}", timeout=10).json()["audit"]
        assert page.locator("[data-arbitro]").count() >= 1
        assert "Tocca a" in page.locator("body").evaluate("b => { const hosts = [...document.querySelectorAll('[data-arbitro]')];"
                                                         " return hosts.map(h => (h.shadowRoot ? h.shadowRoot.textContent : h.textContent)).join(' '); }")
        assert audit["next"]["character"]
        # it looks like a forum: every image drawn (none broken by the page's CSP), the forum stylesheet applied
        assert page.evaluate("[...document.images].filter(i => !i.complete || i.naturalWidth === 0).length") == 0
        assert page.evaluate("getComputedStyle(document.querySelector('li.post')).backgroundColor") == "rgb(255, 255, 255)"
        (build_dir / "screenshots").mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(build_dir / "screenshots" / "demo.png"))
    finally:
        live.stop()
        app.extensions["arbitro"].close()
