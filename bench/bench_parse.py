"""Parse benchmark: pages/s of our full parse (bytes → posts with schema and rolls) vs bare lxml.html.

Both are timed in the same run on the same bytes (every committed HTML fixture page), as CPU time of
this process; the ratio full / bare is what matters (target ≤ 2.0), never the absolute timings.
Each page is parsed both ways in turn, `--rounds` times, and the best time of each counts: a pass of
a few milliseconds is rarely disturbed by other jobs on a shared machine, a whole 100 ms pass often is.
The pages carry their platforms' real chrome and weight (fixtures/README.md, "Page weights"); the
per-platform lines sum the same per-page timings by platform/skin.

    python bench/bench_parse.py [--rounds N] [--per-platform] [--stages] [--profile] [--collector-on] [--json]
        [--fixtures DIR]

`--stages` splits the full parse into its steps, each in units of one bare lxml parse of the same pages
(timers around the step functions; a step called inside another counts in the outer one only).
`--collector-on` leaves CPython's cyclic collector running during the parse, as it did before
`engine.gcpause.collector_paused` (to measure what the pause saves). `--json` prints one JSON line instead (what
`bench/against.py` reads); `--fixtures DIR` reads the pages from another tree's fixtures (the same bytes for both).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import lxml.html  # noqa: E402

from scraper import dicetag, schema  # noqa: E402
from scraper.parse import parse_page  # noqa: E402

TARGET = 2.0
FETCHED_AT = "2026-11-09T12:00:00+01:00"
FIXTURES = ROOT / "fixtures"  # --fixtures replaces it


def fixture_entries() -> list[dict]:
    manifest = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
    return [e for e in manifest if e["kind"] == "html"]


def fixture_pages() -> list[tuple[bytes, str]]:
    return [((FIXTURES / e["path"]).read_bytes(), e["url"]) for e in fixture_entries()]


def cold() -> None:
    """Forget what earlier passes remembered (label, expression and schema-line readings): every timed
    parse starts cold, as the first fetch of a page does; only repeats within the page itself are reused."""
    dicetag.clear_caches()
    schema.clear_caches()


def bare(pages: list[tuple[bytes, str]]) -> None:
    for data, _url in pages:
        lxml.html.fromstring(data)


def full(pages: list[tuple[bytes, str]]) -> None:
    for data, url in pages:
        cold()
        page = parse_page(data, url, fetched_at=FETCHED_AT)
        assert page.posts


def time_page(data: bytes, url: str, rounds: int) -> tuple[float, float]:
    """Best CPU time of bare and of full parsing of one page over `rounds` interleaved tries (process
    time, not wall time, so other processes do not count; the best try is the least disturbed one)."""
    clock = time.process_time
    t_bare = t_full = float("inf")
    for _ in range(rounds):
        t0 = clock()
        lxml.html.fromstring(data)
        cold()
        t1 = clock()
        page = parse_page(data, url, fetched_at=FETCHED_AT)
        t2 = clock()
        assert page.posts
        t_bare = min(t_bare, t1 - t0)
        t_full = min(t_full, t2 - t1)
    return t_bare, t_full


def run(rounds: int = 30) -> dict:
    entries = fixture_entries()
    pages = [((FIXTURES / e["path"]).read_bytes(), e["url"]) for e in entries]
    full(pages)  # warm caches (compiled XPath, regexes, imports) outside the timing
    bare(pages)
    t_bare = t_full = 0.0
    groups: dict[str, list[float]] = {}
    for e, (data, url) in zip(entries, pages):
        b, f = time_page(data, url, rounds)
        t_bare += b
        t_full += f
        g = groups.setdefault(f"{e['platform']}/{e['skin']}", [0, 0.0, 0.0, 0.0])
        g[0] += 1
        g[1] += len(data) / 1024
        g[2] += b
        g[3] += f
    n = len(pages)
    return {"pages": n, "kb": sum(len(d) for d, _ in pages) / 1024, "bare_s": t_bare, "full_s": t_full,
            "bare_pages_s": n / t_bare,
            "full_pages_s": n / t_full, "ratio": t_full / t_bare,
            "platforms": [(name, int(g[0]), g[1] / g[0], g[3] / g[2]) for name, g in groups.items()]}


# (label, module, attribute): the steps `--stages` times, outermost first where they nest.
STAGES = (
    ("lxml parse (ours)", "scraper.parse", "parse_document"),
    ("platform detection", "scraper.parse", "detect_platform"),
    ("Game-Master pairing", "scraper.parse", "pair_gm_posts"),
    ("post text walk", "scraper.platforms.base", "split_post"),
    ("post schema", "scraper.platforms.base", "post_schema"),
    ("dice blocks", "scraper.platforms.base", "read_dice_block"),
    ("text rolls", "scraper.platforms.base", "find_text_rolls"),
    ("roll building", "scraper.platforms.base", "make_roll"),
    ("Game-Master rolls", "scraper.platforms.forumotion", "gm_rolls"),
    ("post digest", "scraper.platforms.base", "post_digest"),
    ("dates", "scraper.platforms.base", "parse_forum_date"),
)


def stages(rounds: int) -> tuple[float, float, dict[str, float]]:
    """(bare, full, {step: seconds}) of the least disturbed of `rounds` passes over every page."""
    import importlib

    spent: dict[str, float] = {}
    inside = [False]
    clock = time.perf_counter
    saved = []

    def timed(label: str, fn):
        def step(*a, **k):
            if inside[0]:
                return fn(*a, **k)
            inside[0] = True
            t0 = clock()
            try:
                return fn(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + clock() - t0
                inside[0] = False
        return step

    for label, mod_name, attr in STAGES:
        mod = importlib.import_module(mod_name)
        saved.append((mod, attr, getattr(mod, attr)))
        setattr(mod, attr, timed(label, getattr(mod, attr)))
    from scraper import damage
    from scraper.platforms import base

    base._DAMAGE_FN = timed("damage calculations", damage.parse_damage_calcs)
    pages = fixture_pages()
    try:
        full(pages)
        best: tuple[float, float, dict[str, float]] | None = None
        for _ in range(rounds):
            t0 = clock()
            bare(pages)
            t1 = clock()
            spent.clear()
            full(pages)
            t2 = clock()
            if best is None or t2 - t1 < best[1]:
                best = (t1 - t0, t2 - t1, dict(spent))
    finally:
        for mod, attr, fn in saved:
            setattr(mod, attr, fn)
        base._DAMAGE_FN = None
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30, help="tries per page (the best one counts)")
    ap.add_argument("--per-platform", action="store_true", help="also print the ratio of each platform/skin")
    ap.add_argument("--profile", action="store_true", help="profile the full parse and print the top entries")
    ap.add_argument("--stages", action="store_true", help="split the full parse into its steps (units of bare lxml)")
    ap.add_argument("--collector-on", action="store_true",
                    help="leave the cyclic collector running during the parse (what its pause saves)")
    ap.add_argument("--json", action="store_true", help="print one JSON line of the key figures")
    ap.add_argument("--fixtures", type=Path, help="the fixtures directory to read (default: this tree's)")
    args = ap.parse_args(argv)
    if args.fixtures:
        global FIXTURES
        FIXTURES = args.fixtures.resolve()
    if args.collector_on:
        import contextlib

        import scraper.parse

        scraper.parse.collector_paused = contextlib.nullcontext
    if args.stages:
        t_bare, t_full, spent = stages(max(3, args.rounds // 3))
        print("steps of the full parse, in units of one bare lxml.html parse of the same pages")
        print(f"  {'full parse':34s} {t_full / t_bare:6.2f}")
        for label, sec in sorted(spent.items(), key=lambda kv: -kv[1]):
            print(f"  {label:34s} {sec / t_bare:6.2f}")
        rest = t_full - sum(spent.values())
        print(f"  {'adapters (pages, post headers)':34s} {rest / t_bare:6.2f}   (the rest: selectors, pagination, glue)")
        return 0
    if args.profile:
        pages = fixture_pages()
        full(pages)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.rounds):
            full(pages)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return 0
    r = run(args.rounds)
    if args.json:
        import scraper

        print(json.dumps({"bench": "parse", "pages": r["pages"], "kb": r["kb"], "ratio": r["ratio"],
                          "full_s": r["full_s"], "bare_s": r["bare_s"], "scraper": scraper.__file__,
                          "fixtures": str(FIXTURES)}))
        return 0
    print(f"pages per pass        {r['pages']}   ({r['kb']:.0f} KB, {r['kb'] / r['pages']:.0f} KB a page)")
    print(f"bare lxml.html        {r['bare_pages_s']:10.1f} pages/s")
    print(f"full parse (Arbitro)  {r['full_pages_s']:10.1f} pages/s")
    print(f"ratio full/bare       {r['ratio']:10.2f}   (target ≤ {TARGET})")
    if args.per_platform:
        for name, n, kb, ratio in r["platforms"]:
            print(f"  {name:22s} {n:2d} pages, {kb:5.0f} KB a page   ratio {ratio:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
