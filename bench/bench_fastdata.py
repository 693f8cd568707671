"""Replay bench with the fast constructors replaced by the plain dataclass way: what each one saves, in one run.

Run: `python bench/bench_fastdata.py [--rounds 4]`. Each round replays the bench fight (bench_replay.py) in a fresh
process per variant, alternating: `current`; `plain-maker` (engine.fastdata.maker returns the class: the generated
__init__ builds every PostAudit, Snapshot, Verdict, Hit…); `plain-evolve` (guida's evolve/evolve_with are
dataclasses.replace); `plain-all`. Prints each variant's best posts/s and its ratio to `current`.
"""
import dataclasses
import pathlib
import runpy
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
VARIANTS = ("current", "plain-maker", "plain-evolve", "plain-all")


def _main() -> int:
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 4
    best = {v: 0.0 for v in VARIANTS}
    for _ in range(rounds):
        for v in VARIANTS:
            out = subprocess.run([sys.executable, __file__, "--variant", v], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout
            line = next(ln for ln in out.splitlines() if ln.startswith("full replay"))
            best[v] = max(best[v], float(line.split(":")[1].split("posts/s")[0].replace(",", "")))
    for v in VARIANTS:
        print(f"{v:13} {best[v]:>9,.0f} posts/s  {best[v] / best['current']:.2f}× current")
    return 0


if "--variant" not in sys.argv:
    sys.exit(_main())
variant = sys.argv[sys.argv.index("--variant") + 1]
sys.path.insert(0, str(ROOT))
import engine.fastdata as F
if variant in ("plain-maker", "plain-all"):
    F.maker = lambda cls: cls
if variant in ("plain-evolve", "plain-all"):
    import engine.rulesets.guida.state as GS  # noqa: imports maker, so patch after the maker patch
    SUMMARY, FIELDS = GS.SUMMARY, GS._SUMMARY_FIELDS
    def evolve(obj, **changes):
        new = dataclasses.replace(obj, **changes)
        if SUMMARY in obj.__dict__ and FIELDS.isdisjoint(changes):
            object.__setattr__(new, SUMMARY, obj.__dict__[SUMMARY])
        return new
    GS.evolve = evolve
    GS.evolve_with = lambda obj, changes: evolve(obj, **changes)
    F.evolve = lambda obj, **c: dataclasses.replace(obj, **c)
sys.argv = ["bench_replay.py", "--repeat", "5"]
runpy.run_path(str(ROOT / "bench" / "bench_replay.py"), run_name="__main__")
