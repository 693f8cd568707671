"""The docs name every ruleset setting and every verdict code the code can emit."""
from __future__ import annotations

import ast
import functools
import pathlib
import re

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


# ---------------------------------------------------------------------------------------------- verdict codes

RULESET_SOURCES = pathlib.Path(engine.__file__).resolve().parent / "rulesets"
# Functions the rulesets build verdicts with; their first argument (or `code=`) is the code.
_EMITTERS = {"add", "v", "verdict", "make_verdict", "Verdict", "_end"}


def _namespace(code: str) -> str | None:
    """The ruleset a namespaced code belongs to (`cosmo.attack` → cosmo), None for a generic code."""
    head = code.split(".", 1)[0]
    return head if head in engine.available_rulesets() else None


def _sections(text: str) -> dict[str, str]:
    """docs/verdicts.md: each `### ` heading line → the text up to the next heading."""
    out: dict[str, str] = {}
    parts = re.split(r"(?m)^(#{2,3} .*)$", text)
    for head, body in zip(parts[1::2], parts[2::2]):
        out[head] = body
    return out


def test_every_generic_code_is_documented_with_its_severity_and_an_example():
    from engine.verdicts import CODE_SEVERITY

    sections = _sections((DOCS / "verdicts.md").read_text(encoding="utf-8"))
    for code, severity in CODE_SEVERITY.items():
        if _namespace(code):
            continue
        heads = [h for h in sections if h.startswith("### ") and f"`{code}`" in h]
        assert heads, f"{code} has no section in docs/verdicts.md"
        [head] = heads
        assert head.rstrip().endswith(f"— {severity}"), f"docs/verdicts.md: {head!r} is not «— {severity}»"
        assert "```json" in sections[head], f"docs/verdicts.md: {code} has no example"


def test_every_namespaced_code_is_in_its_ruleset_page_with_its_severity_and_an_example():
    from engine.verdicts import CODE_SEVERITY

    for code, severity in CODE_SEVERITY.items():
        rid = _namespace(code)
        if not rid:
            continue
        text = (DOCS / "rulesets" / f"{rid}.md").read_text(encoding="utf-8")
        rows = [line for line in text.splitlines() if line.startswith(f"| `{code}` |")]
        assert rows, f"{code} missing from the verdict codes table of docs/rulesets/{rid}.md"
        cells = [c.strip() for c in rows[0].strip("|").split(" | ")]
        assert cells[1] == severity, f"docs/rulesets/{rid}.md: {code} is «{cells[1]}», the table says {severity}"
        assert len(cells) >= 4 and "«" in cells[3], f"docs/rulesets/{rid}.md: {code} has no example"


@functools.lru_cache(maxsize=None)
def _emitted_codes() -> dict[str, list[str]]:
    """Every literal code the rulesets' source passes to a verdict, or spells as a code → where (file:line)."""
    from engine.verdicts import CODE_SEVERITY

    families = {c.split(".", 1)[0] for c in CODE_SEVERITY} | set(engine.available_rulesets())
    shaped = re.compile(r"^(%s)\.[a-z0-9_]+$" % "|".join(sorted(families)))
    found: dict[str, set[str]] = {}
    # the rulesets, and the replay itself for every ruleset (its crash guard, the evidence across posts)
    for path in sorted(RULESET_SOURCES.rglob("*.py")) + [RULESET_SOURCES.parent / n for n in ("core.py", "evidence.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = f"{path.relative_to(RULESET_SOURCES.parent.parent)}"
        for node in ast.walk(tree):
            # any string spelled like a code of a known family (dict values, conditional codes, code=…)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and shaped.match(node.value):
                found.setdefault(node.value, set()).add(f"{where}:{node.lineno}")
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in _EMITTERS:
                continue
            args = [k.value for k in node.keywords if k.arg == "code"]
            if name != "_end" and node.args:
                args.append(node.args[0])
            for arg in args:
                # a code built at run time could not be checked here: spell codes out whole
                assert not isinstance(arg, (ast.JoinedStr, ast.BinOp)), \
                    f"{where}:{node.lineno}: a verdict code built at run time ({ast.unparse(arg)})"
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and "." in arg.value \
                        and " " not in arg.value:
                    # a literal code of a new family would escape the pattern above
                    found.setdefault(arg.value, set()).add(f"{where}:{node.lineno}")
    return {code: sorted(places) for code, places in found.items()}


def test_rulesets_emit_only_codes_of_the_table():
    from engine.verdicts import CODE_SEVERITY

    found = _emitted_codes()
    assert len(found) > 50, "the scan found almost nothing: is it still reading the rulesets?"
    unknown = {code: places for code, places in found.items() if code not in CODE_SEVERITY}
    assert unknown == {}, f"codes without a severity in engine/verdicts.py (and so without docs): {unknown}"


def test_every_code_of_the_table_is_emitted_somewhere():
    from engine.verdicts import CODE_SEVERITY

    found = _emitted_codes()
    # the two codes guida has not adopted yet (it reports those cases under the older code: see docs/verdicts.md)
    pending: set[str] = set()  # codes in the table that no ruleset emits yet
    never = sorted(c for c in CODE_SEVERITY if c not in found and c not in pending)
    assert never == [], f"codes in the table that no ruleset emits: {never}"


def test_each_ruleset_page_names_the_generic_codes_it_reuses():
    found = _emitted_codes()
    for rid in engine.available_rulesets():
        if rid == "guida":  # guida's generic codes are the subject of docs/verdicts.md itself
            continue
        text = (DOCS / "rulesets" / f"{rid}.md").read_text(encoding="utf-8")
        mine = sorted(c for c, places in found.items()
                      if not _namespace(c) and any(f"/rulesets/{rid}/" in p for p in places))
        assert mine, rid
        missing = [c for c in mine if f"`{c}`" not in text]
        assert missing == [], f"docs/rulesets/{rid}.md does not name the generic codes it emits: {missing}"
