"""Userscript benchmark: the overlay's own time on a 30-post fight page in Chromium, next to the page's load
without the script measured in the same run (the ratios matter, never the absolute timings).

    python bench/bench_userscript.py [--posts 30] [--rounds 10]

Measured per round, in fresh browser contexts on loopback (forum page server + canned service):
  baseline  the page's own load (navigation start → load event end) without the script;
  first     the script's whole run on a first view: settings, detection, one request to the service, drawing;
  cached    the same on a reload (audit from sessionStorage, no request);
  draw      the drawing alone (User Timing marks arbitro:draw-start/end set by the script).
GM storage and GM.xmlHttpRequest go through Playwright bindings here (a manager has its own IPC instead).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.plugins.browser import (  # noqa: E402
    CHROMIUM_ARGS, CannedService, Fight, FightPost, ForumServer, GMHarness, _ForumHandler, _ServiceHandler, _start,
    chromium_path, fight_page,
)

TIMING = """
window.__bench = {};
document.addEventListener("arbitro:done", () => { window.__bench.t1 = performance.now(); });
"""


def big_fight(n: int) -> Fight:
    posts = []
    for i in range(n):
        who, char = ("Marco", "Quincy") if i % 2 == 0 else ("Luca", "Hollow")
        rolls = (("1d12+6", 1 + i % 12, 7 + i % 12), ("1d15+2", 1 + i % 15, 3 + i % 15))[: 1 + i % 2]
        posts.append(FightPost(str(9000 + i), who, char, rolls, f"Turno {i + 1}: {char} attacca."))
    return Fight("bench", "phpbb", "prosilver", "/viewtopic.php?t=900", "/viewtopic.php?t=900", tuple(posts))


def big_audit(fight: Fight, origin: str) -> dict[str, Any]:
    posts = []
    for i, p in enumerate(fight.posts):
        verdicts = []
        if i % 3 == 1:
            verdicts.append({"code": "dice.missing_modifier", "severity": "error", "message": "Manca un malus.",
                             "rule": "Stack", "post": p.id, "roll": 0, "expected": 10, "found": 12})
        if i % 4 == 2:
            verdicts.append({"code": "registro.mismatch", "severity": "warning", "message": "Registro da rivedere.",
                             "rule": "Registro", "post": p.id, "roll": None, "expected": 40, "found": 41})
        state = {"Quincy": {"pv": 52 - i, "pv_max": 52, "pe": 45, "pe_max": 45, "stacks": {}},
                 "Hollow": {"pv": 60 - i, "pv_max": 60, "pe": 40, "pe_max": 40, "stacks": {"Sbilanciamento": 1}}}
        posts.append({"id": p.id, "author": p.author, "character": p.character, "url": origin, "verdicts": verdicts,
                      "state": state})
    return {"format": "arbitro.audit/1", "ruleset": "guida",
            "thread": {"url": origin + fight.canonical_path, "platform": "phpbb", "host": "127.0.0.1",
                       "thread_id": "900", "title": "Bench", "pages": 1, "fetched_at": None, "skin": "prosilver"},
            "settings": {}, "posts": posts, "characters": posts[-1]["state"],
            "next": {"character": "Quincy", "incoming": [{"from": "Hollow", "action": "Attacco", "total": 15}],
                     "dice_tags": [{"label": "Difesa", "tag": "[dice=1d12+6]Difesa[/dice]"}]}}


def measure(posts: int, rounds: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    fight = big_fight(posts)
    forum = ForumServer(pages={fight.path: fight_page(fight)}, fixtures=ROOT / "fixtures")
    fsrv = _start(_ForumHandler, "forum", forum)
    svc = CannedService()
    svc.stored[forum.url + fight.canonical_path] = big_audit(fight, forum.url)
    ssrv = _start(_ServiceHandler, "service", svc)
    url = forum.url + fight.path
    rows: dict[str, list[float]] = {"baseline": [], "first": [], "cached": [], "draw": []}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
            for _ in range(rounds):
                ctx = browser.new_context()
                pg = ctx.new_page()
                pg.goto(url, wait_until="load")
                rows["baseline"].append(pg.evaluate(
                    "(() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime; })()"))
                ctx.close()

                ctx = browser.new_context()
                gm = GMHarness(ctx, svc.url)
                ctx.add_init_script(TIMING)
                gm.install()
                ctx.add_init_script("window.__bench.t0 = performance.now();")  # not used: t0 is set below
                pg = ctx.new_page()
                for view in ("first", "cached"):
                    if view == "first":
                        pg.goto(url, wait_until="load")
                    else:
                        pg.reload(wait_until="load")
                    pg.wait_for_function("window.__arbitroDone && window.__arbitroDone.length >= 1")
                    assert pg.evaluate("window.__arbitroDone[0]") == "drawn"
                    assert pg.locator("arbitro-badge").count() == posts
                    start = pg.evaluate("(() => { const n = performance.getEntriesByType('navigation')[0]; "
                                        "return n.domContentLoadedEventStart; })()")
                    rows[view].append(pg.evaluate("window.__bench.t1") - start)
                    if view == "first":
                        rows["draw"].append(pg.evaluate(
                            "performance.measure('d', 'arbitro:draw-start', 'arbitro:draw-end').duration"))
                ctx.close()
            browser.close()
    finally:
        fsrv.close()
        ssrv.close()
    med = {k: statistics.median(v) for k, v in rows.items()}
    base = med["baseline"] or 1e-9
    return {"posts": posts, "rounds": rounds, "median_ms": {k: round(v, 2) for k, v in med.items()},
            "ratio_to_baseline": {k: round(med[k] / base, 3) for k in ("first", "cached", "draw")}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--posts", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--json", action="store_true", help="print the result as JSON only")
    args = ap.parse_args(argv)
    res = measure(args.posts, args.rounds)
    if args.json:
        print(json.dumps(res))
        return 0
    m, r = res["median_ms"], res["ratio_to_baseline"]
    print(f"userscript on a {res['posts']}-post page, median of {res['rounds']} rounds (Chromium, loopback)")
    print(f"  page load without the script (baseline): {m['baseline']:8.2f} ms")
    print(f"  script, first view (1 request):          {m['first']:8.2f} ms   ×{r['first']} of baseline")
    print(f"  script, cached view (no request):        {m['cached']:8.2f} ms   ×{r['cached']} of baseline")
    print(f"  drawing alone:                           {m['draw']:8.2f} ms   ×{r['draw']} of baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
