"""The docs name every ruleset setting and every verdict code the code can emit."""
from __future__ import annotations

import pathlib

import engine

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def test_every_setting_is_in_rulings_page():
    text = (DOCS / "rulings.md").read_text(encoding="utf-8")
    for rid, rs in engine.available_rulesets().items():
        for s in rs.settings:
            assert f"| `{rid}` | `{s.name}` |" in text, f"{rid}.{s.name} missing from docs/rulings.md"


def test_every_ruleset_has_its_page():
    for rid in engine.available_rulesets():
        pages = list((DOCS / "rulesets").glob(f"{rid}*.md"))
        assert pages, f"docs/rulesets/{rid}.md missing"
