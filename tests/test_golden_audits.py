"""Golden audits: every bundled fight (each story on each platform, under its registry and ruleset) and the bench fight
replay to exactly the stored per-post fingerprints — the check that a restructuring of the engine changes no verdict
and no state (issue #17). After a change that is meant to alter audits, regenerate with
`ARBITRO_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_audits.py` and list the changes in the note."""
from __future__ import annotations

import collections
import hashlib
import json
import os
import sys

import pytest

from engine.core import replay
from engine.recognise import recognise
from scraper.parse import parse_pages
from scraper.registry_file import load_registry
from tests.plugins.common import FIXTURES, ROOT

GOLDEN = ROOT / "tests" / "golden" / "audits.json"
FETCHED_AT = "2026-11-20T12:00:00+00:00"  # pages read at a fixed time: "Oggi"/"Ieri" dates stay put
BENCH_POSTS = 600


def _fingerprint(doc: dict) -> list[list[str]]:
    """[post id, sha256 of its verdicts and state] for each post, then the final characters and the next hint."""
    rows = []
    for p in doc["posts"]:
        blob = json.dumps([p["verdicts"], p["state"]], sort_keys=True, ensure_ascii=False)
        rows.append([p["id"], hashlib.sha256(blob.encode()).hexdigest()[:16]])
    tail = json.dumps([doc["characters"], doc.get("next")], sort_keys=True, ensure_ascii=False)
    rows.append(["finale", hashlib.sha256(tail.encode()).hexdigest()[:16]])
    return rows


def _fixture_fights() -> dict[str, tuple]:
    entries = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
    threads = collections.defaultdict(list)
    for e in entries:
        if e["kind"] == "html" and e["story"]:
            threads[(e["story"], e["platform"], e["skin"])].append(e)
    out = {}
    for (story, platform, skin), pages in sorted(threads.items()):
        out[f"{story}/{platform}/{skin}"] = (story, sorted(pages, key=lambda e: e["page"]))
    return out


def _bench_history():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_replay
    finally:
        sys.path.pop(0)
    return bench_replay.generate(BENCH_POSTS)


def _current() -> dict[str, list[list[str]]]:
    from engine.core import available_rulesets

    conventions = {rid: rs.conventions for rid, rs in available_rulesets().items()}
    out = {}
    for key, (story, pages) in _fixture_fights().items():
        history = parse_pages([((FIXTURES / e["path"]).read_bytes(), e["url"]) for e in pages], fetched_at=FETCHED_AT)
        file = FIXTURES / "registry" / f"{story}.toml"
        registry = load_registry(file) if file.exists() else None  # duel_short plays on its schemas alone
        ruleset = recognise(history, conventions).ruleset  # each story's own (tests/test_recognise.py)
        out[key] = _fingerprint(replay(history, ruleset, registry).to_dict())
    out[f"bench/{BENCH_POSTS}"] = _fingerprint(replay(_bench_history(), "guida", None).to_dict())
    return out


def test_every_golden_audit_is_unchanged():
    current = _current()
    if os.environ.get("ARBITRO_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"golden audits rewritten: {GOLDEN}")
    stored = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(current) == sorted(stored), "fights added or gone: regenerate and say why"
    changed = {}
    for key, rows in current.items():
        diff = [(a[0], a[1], b[1]) for a, b in zip(stored[key], rows) if a != b]
        if diff or len(rows) != len(stored[key]):
            changed[key] = diff[:5] or f"{len(stored[key])} → {len(rows)} posts"
    assert not changed, f"audits changed (post, stored, now): {changed}"


def test_the_golden_set_covers_every_story_and_ruleset():
    stored = json.loads(GOLDEN.read_text(encoding="utf-8"))
    stories = {key.split("/")[0] for key in stored}
    assert stories == {"hollow_vs_quincy", "duel_short", "cosmo_santuario", "poteri_torre", "starfinder_stazione",
                       "bench"}
    assert all(len(rows) > 5 for rows in stored.values())
