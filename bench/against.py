"""The replay and parse benchmarks on the working tree and on commit REV, alternated in one run (issue #17).

Run: `python bench/against.py REV [--rounds N] [--only replay|parse]`. REV is checked out with
`git worktree add --detach` into a temporary directory (removed at the end, also on Ctrl-C or an error). Each round
runs every benchmark once on the working tree, then once on REV (A/B/A/B…), each in a subprocess whose cwd and
`PYTHONPATH` are its tree and whose interpreter runs with `-P`, so it imports that tree's `engine` and `scraper`
(the venv's editable install points at the working tree; each run's JSON line says which files it imported and
they are checked). Both trees run this tree's benchmark scripts (copied into REV's checkout: the same measurement
of different code) and parse the same fixture pages (this tree's). Printed: per benchmark, each tree's median and
min–max over the rounds, and the ratio current/REV per round (median, min–max): paired rounds cancel most of the
machine's drift.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPTS = {"replay": "bench_replay.py", "parse": "bench_parse.py"}


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def run_bench(tree: pathlib.Path, name: str, extra: list[str]) -> dict:
    """One run of benchmark `name` in a fresh interpreter that imports `tree`'s packages; its JSON line."""
    args = [sys.executable, "-P", str(tree / "bench" / SCRIPTS[name]), "--json", *extra]
    if name == "parse":
        args += ["--fixtures", str(ROOT / "fixtures")]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(args, cwd=tree, env=env, check=True, capture_output=True, text=True).stdout
    line = next(ln for ln in reversed(out.splitlines()) if ln.startswith("{"))
    doc = json.loads(line)
    imported = pathlib.Path(doc["engine" if name == "replay" else "scraper"]).resolve()
    if tree.resolve() not in imported.parents:
        raise SystemExit(f"{name} on {tree} imported {imported}, not its tree's code")
    return doc


def spread(values: list[float], fmt: str) -> str:
    return (f"median {format(statistics.median(values), fmt)}, min {format(min(values), fmt)}, "
            f"max {format(max(values), fmt)}")


def report(name: str, rev: str, runs: list[tuple[dict, dict]]) -> None:
    cur = [a for a, _ in runs]
    old = [b for _, b in runs]
    print(f"{name} ({len(runs)} rounds, current then {rev} each round)")
    if name == "replay":
        print(f"  posts: {cur[0]['posts']}; throughput = best of the run's repeats, posts/s")
        print(f"  current   {spread([r['posts_s'] for r in cur], ',.0f')}")
        print(f"  {rev:<9} {spread([r['posts_s'] for r in old], ',.0f')}")
        print(f"  current/{rev} throughput: {spread([a['posts_s'] / b['posts_s'] for a, b in runs], '.3f')}"
              f"  (> 1: current is faster)")
        print(f"  append one page, fraction of a full replay: current "
              f"{statistics.median(r['append_fraction'] for r in cur):.2%}, {rev} "
              f"{statistics.median(r['append_fraction'] for r in old):.2%} (medians)")
    else:
        print(f"  {cur[0]['pages']} fixture pages, {cur[0]['kb']:.0f} KB; full = our parse of all pages (best per "
              f"page), ms; ratio = full / bare lxml in the same run")
        for label, rs in (("current", cur), (rev, old)):
            print(f"  {label:<9} ratio {spread([r['ratio'] for r in rs], '.2f')}; "
                  f"full {spread([r['full_s'] * 1000 for r in rs], '.1f')} ms")
        print(f"  ratio current/{rev} of the two full/bare ratios: "
              f"{spread([a['ratio'] / b['ratio'] for a, b in runs], '.3f')}  (< 1: current parses faster)")
        print(f"  full time current/{rev}: {spread([a['full_s'] / b['full_s'] for a, b in runs], '.3f')}")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the commit to compare the working tree with")
    ap.add_argument("--rounds", type=int, default=7, help="A/B pairs per benchmark")
    ap.add_argument("--only", choices=sorted(SCRIPTS), help="one benchmark only")
    ap.add_argument("--replay-args", default="", help="extra arguments for bench_replay.py (quoted)")
    ap.add_argument("--parse-args", default="", help="extra arguments for bench_parse.py (quoted), e.g. '--rounds 15'")
    args = ap.parse_args(argv)
    names = [args.only] if args.only else ["replay", "parse"]
    extra = {"replay": args.replay_args.split(), "parse": args.parse_args.split()}
    commit = git("rev-parse", "--verify", f"{args.rev}^{{commit}}")
    short = git("rev-parse", "--short", commit)

    signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C: the worktree is removed either way
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="arbitro-against-"))
    rev_tree = tmp / short
    added = False
    try:
        git("worktree", "add", "--detach", str(rev_tree), commit)
        added = True
        for name in names:  # this tree's harness measures both trees
            shutil.copy2(ROOT / "bench" / SCRIPTS[name], rev_tree / "bench" / SCRIPTS[name])
        trees = (("current", ROOT), (short, rev_tree))
        print(f"current = {ROOT} (working tree, uncommitted changes included), {short} = {rev_tree}")
        runs: dict[str, list[tuple[dict, dict]]] = {n: [] for n in names}
        for i in range(args.rounds):
            for name in names:
                a, b = (run_bench(tree, name, extra[name]) for _, tree in trees)
                if i == 0:
                    print(f"  {name}: current imports {a.get('engine') or a.get('scraper')}, "
                          f"{short} imports {b.get('engine') or b.get('scraper')}")
                runs[name].append((a, b))
            print(f"  round {i + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        for name in names:
            report(name, short, runs[name])
    except subprocess.CalledProcessError as e:
        sys.stderr.write(f"failed: {' '.join(map(str, e.cmd))}\n{e.stderr or ''}")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if added:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(rev_tree)],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
