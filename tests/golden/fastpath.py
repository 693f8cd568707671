"""Reading the frozen reference outputs of tests/golden/{dicetag,schema,parse}.json.gz (made by
make_fastpath_golden.py beside this file) and checking a production function against them."""
from __future__ import annotations

import functools
import gzip
import json
import pathlib
from typing import Any, Callable

from engine.history import _to_jsonable

GOLDEN = pathlib.Path(__file__).resolve().parent
SHOWN = 5  # mismatches shown when a function no longer gives its stored outputs


@functools.lru_cache(maxsize=None)
def load(module: str) -> dict[str, Any]:
    """The golden document of `module` ("dicetag", "schema", "parse"): {"metadata": …, "functions": {name: …}}."""
    with gzip.open(GOLDEN / f"{module}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def canon(value: Any) -> str:
    """A value as the golden file holds it (engine.history's serialisation: dataclasses as dicts, tuples as lists),
    as JSON text with sorted keys: True, 1 and 1.0 stay three different values."""
    return json.dumps(_to_jsonable(value), sort_keys=True, ensure_ascii=False)


def decode_faces(enc: dict[str, Any] | None) -> Any:
    """make_roll's `faces` argument from its stored form: {"tuple"|"list"|"iter"|"value": items or value}."""
    if enc is None:
        return None
    ((kind, v),) = enc.items()
    return {"tuple": tuple, "list": list, "iter": iter, "value": lambda x: x}[kind](v)


def mismatches(module: str, function: str, run: Callable[[Any], Any],
               check: Callable[[Any], object] | None = None) -> tuple[int, list[str]]:
    """(cases, descriptions of the first SHOWN cases where `run(input)` is not the stored output, or where
    `check(output)` fails: a type the serialisation cannot tell apart, such as a list for a tuple)."""
    cases = load(module)["functions"][function]["cases"]
    bad: list[str] = []
    n = 0
    for given, want in cases:
        got = run(given)
        ok = canon(got) == json.dumps(want, sort_keys=True, ensure_ascii=False)
        if ok and check is not None:
            try:
                ok = bool(check(got))
            except TypeError:
                ok = False
        if not ok:
            n += 1
            if len(bad) < SHOWN:
                stored = json.dumps(want, ensure_ascii=False)
                bad.append(f"input {given!r}\n    stored {stored}\n    got    {canon(got)}")
    return len(cases), ([f"{n} of {len(cases)} differ"] + bad if n else [])


def assert_reproduces(module: str, function: str, run: Callable[[Any], Any],
                      check: Callable[[Any], object] | None = None) -> None:
    total, bad = mismatches(module, function, run, check)
    assert total > 100, f"{module}.json.gz holds only {total} cases of {function}"
    assert not bad, f"{function} no longer gives the stored reference outputs:\n  " + "\n  ".join(bad)
