"""Replay benchmark: posts/s of a long generated `guida` fight, and the cost of appending a page vs a full replay.

Run: `python bench/bench_replay.py [--posts 2400] [--page 15] [--repeat 9] [--json]`. Prints ratios measured in the same run
(targets: ≥ 10,000 posts/s; appending one page ≤ 5% of a full replay). Times are CPU time, best of `--repeat` runs,
each from cold caches (the ruleset's `clear_caches`: no run is warmed by the one before); freeing a run's audit is not
counted (callers keep it). `--json` prints one JSON line instead (what `bench/against.py` reads). Profile: `python -m cProfile -s tottime bench/bench_replay.py`.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.core import replay  # noqa: E402
from engine.history import (  # noqa: E402
    CombatHistory, DamageCalc, DamageTerm, DiceLabel, Modifier, Post, PostSchema, RegistroEntry, Resource, Roll,
    Stat, Thread,
)

THREAD = Thread(url="https://bench.forumfree.it/?t=1", platform="forumfree", host="bench.forumfree.it",
                thread_id="1", title="bench", pages=1, fetched_at=None)


def _roll(action: str, techs: tuple[str, ...], actor: str, target: str, sides: int, face: int,
          mods: tuple[tuple[int, str], ...]) -> Roll:
    const = sum(a for a, _ in mods)
    label = DiceLabel(raw=f"{action} ({actor} vs {target})", action=action, techniques=techs, actor=actor,
                      targets=(target,), modifiers=tuple(Modifier(a, l) for a, l in mods))
    return Roll(expression=f"1d{sides}{const:+d}", count=1, sides=sides, constant=const, faces=(face,),
                total=face + const, label=label.raw, tag=label, source="forum_roller", authentic=True)


def _protezione(i: int) -> int:
    """Post i's Protezione total without Destrezza (d24 face + Bonus Protezione 2)."""
    return 1 + (i * 7) % 24 + 2


def _attacco(i: int) -> int:
    """Post i's Attacco total without Destrezza (d12 face + Raggio Ottimale 2)."""
    return 1 + (i * 5) % 12 + 2


def generate(n_posts: int) -> CombatHistory:
    """Two fighters trading blows: Protezione + Attacco and a Registro line every post, a Calcolo after each hit."""
    names = ("Hollow", "Quincy")
    stats = {"Hollow": {"Destrezza": Stat(6), "Costituzione": Stat(4)},
             "Quincy": {"Destrezza": Stat(4), "Costituzione": Stat(5)}}
    posts = []
    pv = {"Hollow": 10_000, "Quincy": 10_000}
    landed: list[bool] = []  # post i's Attacco was not annulled (its author's Protezione held)
    for i in range(n_posts):
        me, other = names[i % 2], names[(i + 1) % 2]
        dex = stats[me]["Destrezza"].base
        rolls = []
        if i:
            rolls.append(_roll("Protezione", (), me, other, 24, _protezione(i) - 2, ((2, "Bonus Protezione"), (dex, "Destrezza"))))
        rolls.append(_roll("Attacco", ("Artigli",), me, other, 12, _attacco(i) - 2, ((2, "Raggio Ottimale"), (dex, "Destrezza"))))
        # my Protezione against the other's last Attacco (if it was not annulled itself): beaten (lower total) =
        # my Fase Offensiva is annulled
        landed.append(i == 0 or not landed[i - 1]
                      or _protezione(i) + dex >= _attacco(i - 1) + stats[other]["Destrezza"].base)
        # the Calcolo comes after a hit, as players write it: my Attacco of two posts ago, if it was not annulled
        # (a Protezione that holds halves the damage: still a hit)
        damage = ((DamageCalc(raw="Calcolo", technique="Artigli", actor=me, target=other, kind="normale",
                              terms=(DamageTerm("+", "Potenza", 14.0), DamageTerm("-", "Resistenza", 5.0)), result=9),)
                  if i >= 2 and landed[i - 2] else ())
        reg = (RegistroEntry(-3, "PV", "Artigli", "-3 PV [Artigli]"),)
        pv[me] -= 3
        schema = PostSchema(sheet_url="https://bench.forumfree.it/?t=9", resources={"PV": Resource(pv[me], 10_000),
                            "PE": Resource(50, 50)}, stats=stats[me], registro=reg)
        posts.append(Post(id=str(1000 + i), page=1 + i // 15, url=f"{THREAD.url}#entry{1000 + i}", author=me,
                          author_id=None, timestamp=None, schema=schema, rolls=tuple(rolls), damage=damage,
                          character=me, digest=f"d{i}"))
    return CombatHistory(thread=THREAD, posts=tuple(posts))


def _cold() -> None:
    """Empty the ruleset's caches of pure functions: a timed run starts as a fresh process's first replay would."""
    from engine.rulesets import guida

    clear = getattr(guida, "clear_caches", None)
    if callable(clear):
        clear()


def _times(fn, repeat: int) -> list[float]:
    """CPU times of `repeat` runs (CPU time: the machine may be shared; wall time would count the others), each
    from cold caches, sorted: the best is the least disturbed run (as timeit advises), the median says how noisy."""
    times = []
    for _ in range(repeat):
        _cold()
        t0 = time.process_time()
        result = fn()
        times.append(time.process_time() - t0)
        del result  # freeing the audit is not the replay's work: a caller keeps it (the service caches it)
    return sorted(times)


def _best(fn, repeat: int) -> float:
    return _times(fn, repeat)[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--posts", type=int, default=2400)
    ap.add_argument("--page", type=int, default=15, help="posts in the appended page")
    ap.add_argument("--repeat", type=int, default=9, help="best of N runs (the machine may be shared)")
    ap.add_argument("--json", action="store_true", help="print one JSON line of the key figures")
    args = ap.parse_args(argv)

    history = generate(args.posts)
    head = CombatHistory(thread=history.thread, posts=history.posts[:-args.page], registry=history.registry)
    full = _times(lambda: replay(history, "guida"), args.repeat)
    full_t, full_median = full[0], full[len(full) // 2]
    previous = replay(head, "guida")
    append_t = _best(lambda: replay(history, "guida", previous=previous), args.repeat)
    check = replay(history, "guida", previous=previous)
    assert check.replayed == args.page, check.replayed

    # baseline in the same run: a bare fold over the same posts doing no rule work (the loop's own floor)
    def bare() -> None:
        n = 0
        for p in history.posts:
            n += len(p.rolls)
    base_t = max(_best(bare, args.repeat), 1e-9)

    rate = args.posts / full_t
    if args.json:
        import engine

        print(json.dumps({"bench": "replay", "posts": args.posts, "posts_s": rate,
                          "posts_s_median": args.posts / full_median, "append_fraction": append_t / full_t,
                          "bare_ratio": full_t / base_t, "engine": engine.__file__}))
        return 0
    print(f"posts: {args.posts}, appended page: {args.page}")
    print(f"full replay: {rate:,.0f} posts/s (target ≥ 10,000) — {full_t / base_t:,.0f}× a bare loop over the posts; "
          f"median of the {args.repeat} runs {args.posts / full_median:,.0f} posts/s")
    print(f"append one page: {append_t / full_t:.2%} of a full replay (target ≤ 5%)")
    ok = rate >= 10_000 and append_t / full_t <= 0.05
    print("targets met" if ok else "targets NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
