"""The demo shows the numbers the README's examples print: the same fight, audited under the same registry."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections import Counter

from tests.plugins.common import ROOT


def _readme_examples() -> list[list[str]]:
    """The `arbitro …` lines of the README's examples block, as argument lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("Examples, on the bundled fixture pages:"):]
    block = block[block.index("```") + 3:]
    block = block[:block.index("```")]
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("arbitro ")]


def _run(args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "server.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def _summary(audit: dict) -> tuple:
    severities = Counter(v["severity"] for p in audit["posts"] for v in p["verdicts"])
    codes = sorted((p["id"], v["code"]) for p in audit["posts"] for v in p["verdicts"] if v["severity"] != "info")
    state = {name: (c["pv"], c["pv_max"], c["pe"], c["pe_max"]) for name, c in audit["characters"].items()}
    return dict(severities), codes, state, audit["next"]["character"]


def test_the_demo_shows_the_readmes_numbers(tmp_path):
    from server.app import create_app
    from server.demo import seed_demo

    examples = _readme_examples()
    assert [e[0] for e in examples] == ["scrape", "audit", "audit"]
    # the examples run from the repository's root; the history goes to a scratch folder
    scrape = [a.replace("history.json", str(tmp_path / "history.json")) for a in examples[0]]
    assert _run(scrape, ROOT).returncode == 0
    audit_args = [a.replace("history.json", str(tmp_path / "history.json")) for a in examples[1]]
    run = _run([*audit_args, "--format", "json"], ROOT)
    assert run.returncode == 0, run.stderr
    cli = json.loads(run.stdout)
    # the third example names the same registry: the same audit, shown for one character
    assert examples[2][examples[2].index("--registry") + 1] == examples[1][examples[1].index("--registry") + 1]
    md = _run([a.replace("history.json", str(tmp_path / "history.json")) for a in examples[2]], ROOT)
    assert md.returncode == 0, md.stderr

    app = create_app({"database": str(tmp_path / "d.sqlite3"), "cache_dir": str(tmp_path / "c"),
                      "refresh_after": 1e9, "demo": True})
    try:
        info = seed_demo(app)
        # what the demo page, the report and the overlay show: the service's answer for the demo thread
        got = app.test_client().get(f"/api/v1/threads/{info['thread_id']}")
        assert got.status_code == 200
        demo = got.get_json()["audit"]
    finally:
        app.extensions["arbitro"].close()
    assert _summary(demo) == _summary(cli)
    severities, _, state, _ = _summary(demo)
    assert (severities.get("error"), state["Quincy"]) == (10, (8, 48, 22, 46))  # the README's fight, with its registry
    quincy_pe = re.search(r"PE\D{0,6}22/46", md.stdout)
    assert quincy_pe, md.stdout[:500]


def test_the_demo_page_needs_nothing_from_outside(tmp_path):
    """The fixture page's CDN stylesheets, images and scripts are the demo's own: nothing broken by its CSP."""
    from server.app import create_app
    from server.demo import seed_demo

    app = create_app({"database": str(tmp_path / "d.sqlite3"), "cache_dir": str(tmp_path / "c"),
                      "refresh_after": 1e9, "demo": True})
    try:
        info = seed_demo(app)
        client = app.test_client()
        page = client.get(f"/demo?t={info['tid']}&page=1")
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        external = [tag for tag in re.findall(r"<(?:img|script|link)\b[^>]*>", html, re.I)
                    if re.search(r"""\b(?:src|href)=["']?(?:https?:)?//""", tag)
                    and not re.search(r"rel=[\"']?(?:canonical|alternate)", tag)]  # names, never fetched
        assert external == [], external[:3]
        assert '<link rel="stylesheet" href="/demo/forum.css">' in html
        css, img = client.get("/demo/forum.css"), client.get("/demo/blank.svg")
        assert (css.status_code, css.mimetype, img.status_code, img.mimetype) == (200, "text/css", 200, "image/svg+xml")
        assert "details.dice-roll" in css.get_data(as_text=True)
    finally:
        app.extensions["arbitro"].close()
